/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The RX engine (siwx_rx.c and the siwx_rx_*.c it runs) */
#ifndef SIWX_RX_H
#define SIWX_RX_H

#include "siwx_conn.h"

void siwx_rx_data_ready(struct sock *sk);
void siwx_rx_work(struct work_struct *work);
void siwx_rx_wait_work(struct work_struct *work);
void siwx_rx_kick(struct siwx_conn *conn);
void siwx_rx_drain(struct siwx_conn *conn);
void siwx_rx_end(struct siwx_conn *conn);

#endif /* SIWX_RX_H */
