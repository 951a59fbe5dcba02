/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A connection's data path: made, started and torn down (siwx_dp.c) */
#ifndef SIWX_DP_H
#define SIWX_DP_H

#include "siwx_conn.h"

struct siwx_conn *siwx_conn_new(struct siwx_dev *dev);
void siwx_conn_start(struct siwx_conn *conn);

#endif /* SIWX_DP_H */
