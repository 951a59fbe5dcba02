/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * How work and events reach the consumer: the one interface through which
 * the TX and RX engines complete work requests and report events.
 */
#ifndef SIWX_COMP_H
#define SIWX_COMP_H

#include "siwx.h"

struct siwx_cqe_info {
	u64 id;
	u32 bytes;
	u32 inval_stag;
	u16 flags;		/* SIWX_CQE_* without VALID */
	u8 opcode;
	u8 status;
	const u8 *imm;		/* SIWX_IMM_LEN octets, or NULL */
};

void siwx_cq_post(struct siwx_cq *cq, struct siwx_qp *qp,
		  const struct siwx_cqe_info *ci);
u8 siwx_wr_to_wc_opcode(u8 wr_opcode);
void siwx_sq_done(struct siwx_qp *qp, u32 pos, u8 status, u32 bytes);
void siwx_qp_flush(struct siwx_qp *qp);
void siwx_qp_flush_final(struct siwx_qp *qp);
void siwx_qp_event(struct siwx_qp *qp, enum ib_event_type type);
void siwx_srq_event(struct siwx_srq *srq, enum ib_event_type type);

#endif /* SIWX_COMP_H */
