/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Building and checking work queue elements (abi.h siwx_sqe/siwx_rqe).
 *
 * There is one SQE builder: ibv_post_send() and the ibv_qp_ex wr_* API both
 * start an element with siwx_sqe_begin(), set the operation with one of
 * the siwx_sqe_op_*() setters, attach data with siwx_sqe_set_sgl() or
 * siwx_sqe_set_inline(), and pass siwx_sqe_check() before the element is
 * published. The direct-verbs calls (siwxdv.h) use the same setters with
 * masks and full immediates.
 *
 * Pure code: no syscalls, no libibverbs calls, no private ABI.
 */
#ifndef SIWX_WQE_H
#define SIWX_WQE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <siwx/abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Per-QP limits the builder enforces (from the create_qp response). */
struct siwx_sq_limits {
	uint32_t max_sge;
	uint32_t max_inline;
};

/* The ibv_send_flags siwx understands; anything else is refused. */
#define SIWX_SEND_FLAGS_SUPPORTED                                              \
	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |             \
	 IBV_SEND_INLINE)

/* The ibv_qp_ex send_ops_flags a siwx QP accepts. */
#define SIWX_QP_EX_SEND_OPS                                                    \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |      \
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |                  \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |        \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV |      \
	 IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_BIND_MW)

/* Zero the element and set id and flags; EINVAL on unknown send flags. */
int siwx_sqe_begin(struct siwx_sqe *sqe, uint64_t wr_id,
		   unsigned int send_flags, bool sig_all);

void siwx_sqe_op_send(struct siwx_sqe *sqe);
void siwx_sqe_op_send_inv(struct siwx_sqe *sqe, uint32_t inv_stag);
/* imm is the verbs __be32 as stored: it becomes imm[0..3], imm[4..7] = 0. */
void siwx_sqe_op_send_imm(struct siwx_sqe *sqe, __be32 imm);
void siwx_sqe_op_write(struct siwx_sqe *sqe, uint32_t rkey, uint64_t raddr);
void siwx_sqe_op_write_imm(struct siwx_sqe *sqe, uint32_t rkey,
			   uint64_t raddr, __be32 imm);
/* All eight octets of RFC 7306 Immediate Data, wire order. */
void siwx_sqe_op_write_imm8(struct siwx_sqe *sqe, uint32_t rkey,
			    uint64_t raddr, const uint8_t imm[SIWX_IMM_LEN]);
void siwx_sqe_op_read(struct siwx_sqe *sqe, uint32_t rkey, uint64_t raddr);
/* Plain FetchAdd: Add Mask 0 (RFC 7306 5.1.1: carries everywhere). */
void siwx_sqe_op_fetch_add(struct siwx_sqe *sqe, uint32_t rkey,
			   uint64_t raddr, uint64_t add);
void siwx_sqe_op_masked_fetch_add(struct siwx_sqe *sqe, uint32_t rkey,
				  uint64_t raddr, uint64_t add,
				  uint64_t add_mask);
/* Plain CmpSwap: both masks all ones (compare and swap every bit). */
void siwx_sqe_op_cmp_swp(struct siwx_sqe *sqe, uint32_t rkey, uint64_t raddr,
			 uint64_t compare, uint64_t swap);
void siwx_sqe_op_masked_cmp_swp(struct siwx_sqe *sqe, uint32_t rkey,
				uint64_t raddr, uint64_t compare,
				uint64_t compare_mask, uint64_t swap,
				uint64_t swap_mask);
void siwx_sqe_op_local_inv(struct siwx_sqe *sqe, uint32_t inv_stag);
int siwx_sqe_op_bind_mw(struct siwx_sqe *sqe, const struct ibv_mw *mw,
			uint32_t rkey, const struct ibv_mw_bind_info *info);

/* Gather list; EINVAL if it exceeds the QP's max_sge. */
int siwx_sqe_set_sgl(struct siwx_sqe *sqe, const struct ibv_sge *sgl,
		     size_t num_sge, const struct siwx_sq_limits *lim);
/* Copy the payload in; EINVAL beyond the QP's max_inline. */
int siwx_sqe_set_inline(struct siwx_sqe *sqe, const struct ibv_data_buf *buf,
			size_t num_buf, const struct siwx_sq_limits *lim);

/*
 * Post-time rules that depend on opcode and data together: atomics need
 * exactly one 8-byte SGE and an 8-byte aligned remote address; Read,
 * atomics and Local Invalidate cannot be inline; Local Invalidate carries
 * no data; Send with Immediate must be zero-length (RFC 7306 has no Send
 * with Immediate message; a zero-length one is a lone Immediate Data
 * message). Returns 0 or EINVAL.
 */
int siwx_sqe_check(const struct siwx_sqe *sqe);

/* ibv_post_send()'s per-WR work: all of the above from an ibv_send_wr. */
int siwx_sqe_from_send_wr(struct siwx_sqe *sqe, const struct ibv_send_wr *wr,
			  bool sig_all, const struct siwx_sq_limits *lim);

/* Receive element from an ibv_recv_wr; EINVAL beyond max_sge. */
int siwx_rqe_from_recv_wr(struct siwx_rqe *rqe, const struct ibv_recv_wr *wr,
			  uint32_t max_sge);

/* Total bytes an SQE moves from local memory (inline or gathered). */
uint64_t siwx_sqe_length(const struct siwx_sqe *sqe);

#ifdef __cplusplus
}
#endif

#endif /* SIWX_WQE_H */
