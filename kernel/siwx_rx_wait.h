/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A message that found no receive waits for one (siwx_rx_wait.c) */
#ifndef SIWX_RX_WAIT_H
#define SIWX_RX_WAIT_H

#include "siwx_conn.h"

/* Where RX stopped, and what it runs again once a receive is posted */
enum siwx_rx_wait_at {
	SIWX_RX_WAIT_NONE,
	SIWX_RX_WAIT_SEGMENT,	/* a Send's first segment: siwx_rx_segment */
	SIWX_RX_WAIT_END,	/* Immediate Data: siwx_rx_segment_end */
};

bool siwx_rx_wait_begin(struct siwx_conn *conn, enum siwx_rx_wait_at at);
bool siwx_rx_wait_on(struct siwx_conn *conn);
void siwx_rx_wait_end(struct siwx_conn *conn);
void siwx_rx_wait_wake(struct siwx_conn *conn);

#endif /* SIWX_RX_WAIT_H */
