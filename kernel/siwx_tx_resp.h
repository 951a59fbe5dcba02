/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What the TX engine sends as Responder (siwx_tx_resp.c) */
#ifndef SIWX_TX_RESP_H
#define SIWX_TX_RESP_H

#include "siwx_conn.h"

int siwx_tx_responses(struct siwx_conn *conn);
void siwx_tx_terminate(struct siwx_conn *conn);
int siwx_tx_rtr(struct siwx_conn *conn);

#endif /* SIWX_TX_RESP_H */
