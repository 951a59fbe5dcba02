// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * CQE -> ibv_wc. abi.h defines the CQE opcode and status as the values of
 * the verbs enums, so they pass through; the asserts keep that promise
 * honest against the installed verbs.h.
 */
#include <string.h>

#include "cqe.h"

#define SAME_WC(name) ((int)SIWX_WC_##name == (int)IBV_WC_##name)
_Static_assert(SAME_WC(SEND) && SAME_WC(RDMA_WRITE) && SAME_WC(RDMA_READ) &&
		       SAME_WC(COMP_SWAP) && SAME_WC(FETCH_ADD) &&
		       SAME_WC(BIND_MW) && SAME_WC(LOCAL_INV) && SAME_WC(RECV) &&
		       SAME_WC(RECV_RDMA_WITH_IMM),
	       "CQE opcodes must be ibv_wc_opcode values");
_Static_assert(SAME_WC(SUCCESS) && SAME_WC(LOC_LEN_ERR) &&
		       SAME_WC(LOC_QP_OP_ERR) && SAME_WC(LOC_PROT_ERR) &&
		       SAME_WC(WR_FLUSH_ERR) && SAME_WC(MW_BIND_ERR) &&
		       SAME_WC(BAD_RESP_ERR) &&
		       SAME_WC(LOC_ACCESS_ERR) && SAME_WC(REM_INV_REQ_ERR) &&
		       SAME_WC(REM_ACCESS_ERR) && SAME_WC(REM_OP_ERR) &&
		       SAME_WC(FATAL_ERR) && SAME_WC(GENERAL_ERR),
	       "CQE status must be ibv_wc_status values");
#undef SAME_WC

void siwx_cqe_to_wc(const struct siwx_cqe *cqe, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->id;
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->opcode = (enum ibv_wc_opcode)cqe->opcode;
	wc->byte_len = cqe->bytes;
	wc->qp_num = cqe->qp_num;

	/* imm_data and invalidated_rkey share storage in ibv_wc; a CQE never
	 * carries both (an iWARP Send with Invalidate has no immediate).
	 */
	if (cqe->flags & SIWX_CQE_WITH_IMM) {
		memcpy(&wc->imm_data, cqe->imm, sizeof(wc->imm_data));
		wc->wc_flags |= IBV_WC_WITH_IMM;
	} else if (cqe->flags & SIWX_CQE_WITH_INV) {
		wc->invalidated_rkey = cqe->inval_stag;
		wc->wc_flags |= IBV_WC_WITH_INV;
	}
}

void siwx_cqe_imm8(const struct siwx_cqe *cqe, uint8_t imm[SIWX_IMM_LEN])
{
	if (cqe->flags & SIWX_CQE_WITH_IMM)
		memcpy(imm, cqe->imm, SIWX_IMM_LEN);
	else
		memset(imm, 0, SIWX_IMM_LEN);
}
