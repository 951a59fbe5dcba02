/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What a received segment's end does (siwx_rx_msg.c) */
#ifndef SIWX_RX_MSG_H
#define SIWX_RX_MSG_H

#include "siwx_conn.h"

void siwx_rx_segment_end(struct siwx_conn *conn);

#endif /* SIWX_RX_MSG_H */
