/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Where a received segment's payload goes (siwx_rx_place.c) */
#ifndef SIWX_RX_PLACE_H
#define SIWX_RX_PLACE_H

#include "siwx_conn.h"

void siwx_rx_segment(struct siwx_conn *conn);
void siwx_rx_payload(struct siwx_conn *conn, const struct siwx_rx_event *ev);

#endif /* SIWX_RX_PLACE_H */
