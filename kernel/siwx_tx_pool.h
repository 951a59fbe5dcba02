/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The stage's page pool (siwx_tx_pool.c) */
#ifndef SIWX_TX_POOL_H
#define SIWX_TX_POOL_H

#include "siwx_conn.h"

/*
 * Stage pages a connection keeps at most: 4 MiB, TCP's largest send
 * buffer by default (tcp_wmem)
 */
#define SIWX_TX_POOL 1024

void siwx_tx_pool_init(struct siwx_conn *conn);
bool siwx_tx_pool_on(void);
struct page *siwx_tx_pool_get(struct siwx_conn *conn);
void siwx_tx_pool_put(struct siwx_conn *conn, struct page *page);
void siwx_tx_pool_stop(struct siwx_conn *conn);
void siwx_tx_pool_release(struct siwx_conn *conn);

#endif /* SIWX_TX_POOL_H */
