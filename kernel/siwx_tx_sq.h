/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The TX engine's work on the SQ (siwx_tx_sq.c) */
#ifndef SIWX_TX_SQ_H
#define SIWX_TX_SQ_H

#include "siwx_conn.h"

enum {
	SIWX_TX_IDLE,		/* no WR at the engine's position */
	SIWX_TX_FULL,		/* every slot holds a WR in flight */
	SIWX_TX_DID,
	SIWX_TX_STALL,		/* a WR waits (ORD, a fence, stopped) */
};

int siwx_tx_sq(struct siwx_conn *conn);

#endif /* SIWX_TX_SQ_H */
