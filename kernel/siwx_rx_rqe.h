/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The receive buffer of the Send being received (siwx_rx_rqe.c) */
#ifndef SIWX_RX_RQE_H
#define SIWX_RX_RQE_H

#include "siwx_conn.h"

/* No receive buffer for an untagged message: a DDP untagged buffer error */
static inline struct siwx_term siwx_rx_no_buffer(void)
{
	return siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED,
			      SIWX_DDP_UT_NO_BUFFER);
}

/* A receive buffer the local consumer got wrong: the peer did nothing */
static inline struct siwx_term siwx_rx_local_fault(void)
{
	return siwx_term_make(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA,
			      SIWX_LLP_LOCAL_CATASTROPHIC);
}

bool siwx_rx_need_rqe(struct siwx_conn *conn, bool send);
void siwx_rx_drop_rqe(struct siwx_conn *conn, u8 status);
void siwx_rx_rqe_overrun(struct siwx_conn *conn, struct siwx_term *err);

#endif /* SIWX_RX_RQE_H */
