/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Zero-copy sends (siwx_zc.c) */
#ifndef SIWX_ZC_H
#define SIWX_ZC_H

#include "siwx_conn.h"

struct siwx_zc;

void siwx_zc_conn_init(struct siwx_conn *conn);
bool siwx_zc_wanted(struct siwx_conn *conn, const struct siwx_tx_src *src,
		    u32 len);
struct siwx_zc *siwx_zc_start(struct siwx_conn *conn, u32 pos, u32 bytes);
void siwx_zc_end(struct siwx_zc *zc, int rv);
int siwx_zc_sendmsg(struct socket *sock, struct msghdr *msg,
		    struct siwx_zc *zc);
void siwx_zc_detach(struct siwx_conn *conn, unsigned long grace);
void siwx_zc_exit(void);

#endif /* SIWX_ZC_H */
