/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The TX engine (siwx_tx.c and the siwx_tx_*.c it runs) */
#ifndef SIWX_TX_H
#define SIWX_TX_H

#include "siwx_conn.h"

void siwx_tx_init(struct siwx_conn *conn);
void siwx_tx_doorbell(struct siwx_qp *qp, struct siwx_conn *conn);
void siwx_tx_end(struct siwx_conn *conn);

#endif /* SIWX_TX_H */
