/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* RDMAP messages as FPDUs, staged and checksummed (siwx_tx_fpdu.c) */
#ifndef SIWX_TX_FPDU_H
#define SIWX_TX_FPDU_H

#include "siwx_conn.h"

int siwx_tx_message(struct siwx_conn *conn, const struct siwx_ddp_hdr *hdr,
		    const u8 *rdmap, u32 rdmap_len, struct siwx_tx_src *src,
		    u32 len);
void siwx_tx_src_put(struct siwx_tx_src *src);
bool siwx_tx_more(struct siwx_conn *conn);
void siwx_tx_done_due(struct siwx_conn *conn, u32 pos, u32 len);
int siwx_tx_done_end(struct siwx_conn *conn, int rv);

#endif /* SIWX_TX_FPDU_H */
