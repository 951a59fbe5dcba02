// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx direct verbs (siwxdv.h): thin entry points onto the shared SQE
 * builder and the CQ consumer.
 */
#include <errno.h>

#include "siwx.h"
#include "siwxdv.h"

#define SIWXDV_EXPORT __attribute__((visibility("default")))

_Static_assert(SIWXDV_IMM_LEN == SIWX_IMM_LEN, "one immediate length");

SIWXDV_EXPORT bool siwxdv_is_supported(struct ibv_device *device)
{
	struct ibvp_device *dev =
		siwx_container_of(device, struct ibvp_device, device);

	return dev->ops == &siwx_dev_ops;
}

SIWXDV_EXPORT void siwxdv_wr_masked_fetch_add(struct ibv_qp_ex *qpx,
					      uint32_t rkey,
					      uint64_t remote_addr,
					      uint64_t add, uint64_t add_mask)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	if (siwx_wr_begin(qp, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD))
		siwx_sqe_op_masked_fetch_add(&qp->batch.sqe, rkey, remote_addr,
					     add, add_mask);
}

SIWXDV_EXPORT void siwxdv_wr_masked_cmp_swp(struct ibv_qp_ex *qpx,
					    uint32_t rkey,
					    uint64_t remote_addr,
					    uint64_t compare,
					    uint64_t compare_mask,
					    uint64_t swap, uint64_t swap_mask)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	if (siwx_wr_begin(qp, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP))
		siwx_sqe_op_masked_cmp_swp(&qp->batch.sqe, rkey, remote_addr,
					   compare, compare_mask, swap,
					   swap_mask);
}

SIWXDV_EXPORT void siwxdv_wr_rdma_write_imm8(struct ibv_qp_ex *qpx,
					     uint32_t rkey,
					     uint64_t remote_addr,
					     const uint8_t imm[SIWXDV_IMM_LEN])
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	if (siwx_wr_begin(qp, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM))
		siwx_sqe_op_write_imm8(&qp->batch.sqe, rkey, remote_addr, imm);
}

SIWXDV_EXPORT int siwxdv_poll_cq_imm8(struct ibv_cq *cq, int num_entries,
				      struct ibv_wc *wc,
				      uint8_t (*imm)[SIWXDV_IMM_LEN])
{
	if (!siwxdv_is_supported(cq->context->device))
		return -EOPNOTSUPP;
	return siwx_poll_cq_imm8(cq, num_entries, wc, imm);
}

SIWXDV_EXPORT void siwxdv_wc_read_imm8(struct ibv_cq_ex *cq,
				       uint8_t imm[SIWXDV_IMM_LEN])
{
	siwx_cq_ex_read_imm8(cq, imm);
}
