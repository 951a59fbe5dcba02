/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * What an SQE's opcode (an enum ib_uverbs_wr_opcode value, abi.h) asks of
 * the wire, written once for the provider, which checks work requests,
 * and for siwx.ko, which sends and completes them.
 */
#ifndef SIWX_SQE_OP_H
#define SIWX_SQE_OP_H

#include <linux/types.h>
#include <rdma/ib_user_verbs.h>

/*
 * The RFC 7306 Atomic Operation of an SQE (section 5.1). The plain verbs
 * atomics are the masked ones with fixed masks (abi.h), so both map to
 * the same operation.
 */
enum siwx_sqe_atomic {
	SIWX_SQE_NOT_ATOMIC,
	SIWX_SQE_FETCH_ADD,	/* RFC 7306 5.1.1 */
	SIWX_SQE_CMP_SWAP,	/* RFC 7306 5.1.2 */
};

static inline enum siwx_sqe_atomic siwx_sqe_atomic_op(__u8 opcode)
{
	switch (opcode) {
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
	case IB_UVERBS_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		return SIWX_SQE_FETCH_ADD;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_MASKED_ATOMIC_CMP_AND_SWP:
		return SIWX_SQE_CMP_SWAP;
	default:
		return SIWX_SQE_NOT_ATOMIC;
	}
}

/*
 * Reads and atomics are answered by a response the Initiator matches in
 * order: each takes an outbound queue (ORQ) entry, as atomics reuse the
 * ORD/IRD flow control of RDMA Read Requests (RFC 7306 5.2).
 */
static inline int siwx_sqe_op_awaits_response(__u8 opcode)
{
	return opcode == IB_UVERBS_WR_RDMA_READ ||
	       opcode == IB_UVERBS_WR_RDMA_READ_WITH_INV ||
	       siwx_sqe_atomic_op(opcode) != SIWX_SQE_NOT_ATOMIC;
}

#endif /* SIWX_SQE_OP_H */
