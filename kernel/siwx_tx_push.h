/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The TX engine's pushes to the socket (siwx_tx_push.c) */
#ifndef SIWX_TX_PUSH_H
#define SIWX_TX_PUSH_H

#include "siwx_conn.h"

/* The bvecs of a batch not yet pushed, and how TCP is to take them */
struct siwx_tx_vec {
	u32 nb;
	size_t len;
	bool by_ref;
	bool stage;	/* the payload too goes into the stage */
};

void siwx_tx_add_kbuf(struct siwx_conn *conn, struct siwx_tx_vec *v,
		      const u8 *buf, u32 len);
int siwx_tx_flush(struct siwx_conn *conn, struct siwx_tx_vec *v, int flags);
int siwx_tx_push_if_full(struct siwx_conn *conn, struct siwx_tx_vec *v);
void siwx_tx_drop(struct siwx_conn *conn, struct siwx_tx_vec *v);

static inline void siwx_tx_add_page(struct siwx_conn *conn,
				    struct siwx_tx_vec *v, struct page *page,
				    u32 off, u32 len)
{
	bvec_set_page(&conn->bvec[v->nb++], page, len, off);
	v->len += len;
}

#endif /* SIWX_TX_PUSH_H */
