// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The single SQE/RQE builder shared by ibv_post_send(), the ibv_qp_ex
 * wr_* API and siwxdv (see wqe.h).
 */
#include <errno.h>
#include <string.h>

#include <siwx/sqe_op.h>

#include "wqe.h"

/* The kernel sees ib_uverbs_wr_opcode values; verbs' names are the same. */
#define SAME_OP(name) ((int)IB_UVERBS_WR_##name == (int)IBV_WR_##name)
_Static_assert(SAME_OP(RDMA_WRITE) && SAME_OP(RDMA_WRITE_WITH_IMM) &&
		       SAME_OP(SEND) && SAME_OP(SEND_WITH_IMM) &&
		       SAME_OP(RDMA_READ) && SAME_OP(ATOMIC_CMP_AND_SWP) &&
		       SAME_OP(ATOMIC_FETCH_AND_ADD) && SAME_OP(LOCAL_INV) &&
		       SAME_OP(SEND_WITH_INV),
	       "uverbs and verbs WR opcodes differ");
#undef SAME_OP

/* The inline length lives in the __u8 num_sge (abi.h). */
_Static_assert(SIWX_MAX_INLINE <= 255, "inline length must fit num_sge");

int siwx_sqe_begin(struct siwx_sqe *sqe, uint64_t wr_id,
		   unsigned int send_flags, bool sig_all)
{
	uint16_t flags = 0;

	memset(sqe, 0, sizeof(*sqe));
	sqe->id = wr_id;
	if (send_flags & ~SIWX_SEND_FLAGS_SUPPORTED)
		return EINVAL;
	if ((send_flags & IBV_SEND_SIGNALED) || sig_all)
		flags |= SIWX_WQE_SIGNALLED;
	if (send_flags & IBV_SEND_SOLICITED)
		flags |= SIWX_WQE_SOLICITED;
	if (send_flags & IBV_SEND_FENCE)
		flags |= SIWX_WQE_FENCE;
	/* The INLINE bit is set by siwx_sqe_set_inline() with the data. */
	sqe->flags = flags;
	return 0;
}

static void sqe_remote(struct siwx_sqe *sqe, uint8_t opcode, uint32_t rkey,
		       uint64_t raddr)
{
	sqe->opcode = opcode;
	sqe->rkey = rkey;
	sqe->raddr = raddr;
}

void siwx_sqe_op_send(struct siwx_sqe *sqe)
{
	sqe->opcode = IB_UVERBS_WR_SEND;
}

void siwx_sqe_op_send_inv(struct siwx_sqe *sqe, uint32_t inv_stag)
{
	sqe->opcode = IB_UVERBS_WR_SEND_WITH_INV;
	sqe->rkey = inv_stag;
}

/* Verbs immediates are 4 octets; they lead the 8 and the rest is zero. */
static void sqe_imm32(struct siwx_sqe *sqe, __be32 imm)
{
	memcpy(sqe->imm, &imm, sizeof(imm));
	memset(sqe->imm + sizeof(imm), 0, SIWX_IMM_LEN - sizeof(imm));
}

void siwx_sqe_op_send_imm(struct siwx_sqe *sqe, __be32 imm)
{
	sqe->opcode = IB_UVERBS_WR_SEND_WITH_IMM;
	sqe_imm32(sqe, imm);
}

void siwx_sqe_op_write(struct siwx_sqe *sqe, uint32_t rkey, uint64_t raddr)
{
	sqe_remote(sqe, IB_UVERBS_WR_RDMA_WRITE, rkey, raddr);
}

void siwx_sqe_op_write_imm(struct siwx_sqe *sqe, uint32_t rkey,
			   uint64_t raddr, __be32 imm)
{
	sqe_remote(sqe, IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, rkey, raddr);
	sqe_imm32(sqe, imm);
}

void siwx_sqe_op_write_imm8(struct siwx_sqe *sqe, uint32_t rkey,
			    uint64_t raddr, const uint8_t imm[SIWX_IMM_LEN])
{
	sqe_remote(sqe, IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, rkey, raddr);
	memcpy(sqe->imm, imm, SIWX_IMM_LEN);
	sqe->flags |= SIWX_WQE_IMM_FULL;
}

void siwx_sqe_op_read(struct siwx_sqe *sqe, uint32_t rkey, uint64_t raddr)
{
	sqe_remote(sqe, IB_UVERBS_WR_RDMA_READ, rkey, raddr);
}

void siwx_sqe_op_fetch_add(struct siwx_sqe *sqe, uint32_t rkey,
			   uint64_t raddr, uint64_t add)
{
	sqe_remote(sqe, IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, rkey, raddr);
	sqe->add_swap = add;
	sqe->add_swap_mask = 0;
}

void siwx_sqe_op_masked_fetch_add(struct siwx_sqe *sqe, uint32_t rkey,
				  uint64_t raddr, uint64_t add,
				  uint64_t add_mask)
{
	sqe_remote(sqe, IB_UVERBS_WR_MASKED_ATOMIC_FETCH_AND_ADD, rkey, raddr);
	sqe->add_swap = add;
	sqe->add_swap_mask = add_mask;
}

void siwx_sqe_op_cmp_swp(struct siwx_sqe *sqe, uint32_t rkey, uint64_t raddr,
			 uint64_t compare, uint64_t swap)
{
	sqe_remote(sqe, IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, rkey, raddr);
	sqe->compare = compare;
	sqe->compare_mask = ~0ULL;
	sqe->add_swap = swap;
	sqe->add_swap_mask = ~0ULL;
}

void siwx_sqe_op_masked_cmp_swp(struct siwx_sqe *sqe, uint32_t rkey,
				uint64_t raddr, uint64_t compare,
				uint64_t compare_mask, uint64_t swap,
				uint64_t swap_mask)
{
	sqe_remote(sqe, IB_UVERBS_WR_MASKED_ATOMIC_CMP_AND_SWP, rkey, raddr);
	sqe->compare = compare;
	sqe->compare_mask = compare_mask;
	sqe->add_swap = swap;
	sqe->add_swap_mask = swap_mask;
}

void siwx_sqe_op_local_inv(struct siwx_sqe *sqe, uint32_t inv_stag)
{
	sqe->opcode = IB_UVERBS_WR_LOCAL_INV;
	sqe->rkey = inv_stag;
}

/*
 * A Bind Memory Window (abi.h has its fields). The kernel checks the
 * bind against its tables; only what it cannot see is checked here: an
 * MR to take the lkey from, and a new STag that names the same window.
 */
int siwx_sqe_op_bind_mw(struct siwx_sqe *sqe, const struct ibv_mw *mw,
			uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	if (!mw || (info->length && !info->mr))
		return EINVAL;
	if ((rkey ^ mw->rkey) & ~(uint32_t)0xff)
		return EINVAL;
	sqe->opcode = IB_UVERBS_WR_BIND_MW;
	sqe->rkey = rkey;
	sqe->raddr = info->addr;
	sqe->bind.length = info->length;
	sqe->bind.mr_lkey = info->length ? info->mr->lkey : 0;
	sqe->bind.access = info->mw_access_flags;
	return 0;
}

int siwx_sqe_set_sgl(struct siwx_sqe *sqe, const struct ibv_sge *sgl,
		     size_t num_sge, const struct siwx_sq_limits *lim)
{
	size_t i;

	if (num_sge > lim->max_sge || num_sge > SIWX_MAX_SGE)
		return EINVAL;
	sqe->flags &= ~SIWX_WQE_INLINE;
	for (i = 0; i < num_sge; i++) {
		sqe->sge[i].addr = sgl[i].addr;
		sqe->sge[i].length = sgl[i].length;
		sqe->sge[i].lkey = sgl[i].lkey;
	}
	sqe->num_sge = (uint8_t)num_sge;
	return 0;
}

int siwx_sqe_set_inline(struct siwx_sqe *sqe, const struct ibv_data_buf *buf,
			size_t num_buf, const struct siwx_sq_limits *lim)
{
	size_t max = lim->max_inline < SIWX_MAX_INLINE ? lim->max_inline :
							 SIWX_MAX_INLINE;
	size_t i, len = 0;

	for (i = 0; i < num_buf; i++) {
		if (buf[i].length > max - len)
			return EINVAL;
		memcpy(sqe->inline_data + len, buf[i].addr, buf[i].length);
		len += buf[i].length;
	}
	sqe->flags |= SIWX_WQE_INLINE;
	sqe->num_sge = (uint8_t)len;
	return 0;
}

uint64_t siwx_sqe_length(const struct siwx_sqe *sqe)
{
	uint64_t len = 0;
	unsigned int i;

	if (sqe->flags & SIWX_WQE_INLINE)
		return sqe->num_sge;
	for (i = 0; i < sqe->num_sge && i < SIWX_MAX_SGE; i++)
		len += sqe->sge[i].length;
	return len;
}

/* Operations that send local data, which may therefore be inline. */
static bool op_takes_inline(uint8_t opcode)
{
	switch (opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_INV:
	case IB_UVERBS_WR_SEND_WITH_IMM:
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return true;
	default:
		return false;
	}
}

int siwx_sqe_check(const struct siwx_sqe *sqe)
{
	bool is_inline = sqe->flags & SIWX_WQE_INLINE;

	if (is_inline && !op_takes_inline(sqe->opcode))
		return EINVAL;	/* Read, atomics, Local Invalidate */
	if (siwx_sqe_atomic_op(sqe->opcode) != SIWX_SQE_NOT_ATOMIC) {
		/* RFC 7306 atomics operate on one aligned 64-bit word; the
		 * single SGE receives the original remote value.
		 */
		if (sqe->num_sge != 1 || sqe->sge[0].length != 8 ||
		    (sqe->raddr & 7))
			return EINVAL;
		return 0;
	}
	switch (sqe->opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_INV:
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return 0;
	case IB_UVERBS_WR_SEND_WITH_IMM:
		return siwx_sqe_length(sqe) ? EINVAL : 0;
	case IB_UVERBS_WR_RDMA_READ:
		return 0;
	case IB_UVERBS_WR_LOCAL_INV:
	case IB_UVERBS_WR_BIND_MW:
		return sqe->num_sge ? EINVAL : 0;
	default:
		return EINVAL;
	}
}

/* Set the operation of an ibv_send_wr; EINVAL for opcodes siwx lacks. */
static int sqe_op_from_wr(struct siwx_sqe *sqe, const struct ibv_send_wr *wr)
{
	switch (wr->opcode) {
	case IBV_WR_SEND:
		siwx_sqe_op_send(sqe);
		return 0;
	case IBV_WR_SEND_WITH_INV:
		siwx_sqe_op_send_inv(sqe, wr->invalidate_rkey);
		return 0;
	case IBV_WR_SEND_WITH_IMM:
		siwx_sqe_op_send_imm(sqe, wr->imm_data);
		return 0;
	case IBV_WR_RDMA_WRITE:
		siwx_sqe_op_write(sqe, wr->wr.rdma.rkey,
				  wr->wr.rdma.remote_addr);
		return 0;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		siwx_sqe_op_write_imm(sqe, wr->wr.rdma.rkey,
				      wr->wr.rdma.remote_addr, wr->imm_data);
		return 0;
	case IBV_WR_RDMA_READ:
		siwx_sqe_op_read(sqe, wr->wr.rdma.rkey,
				 wr->wr.rdma.remote_addr);
		return 0;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		siwx_sqe_op_fetch_add(sqe, wr->wr.atomic.rkey,
				      wr->wr.atomic.remote_addr,
				      wr->wr.atomic.compare_add);
		return 0;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		siwx_sqe_op_cmp_swp(sqe, wr->wr.atomic.rkey,
				    wr->wr.atomic.remote_addr,
				    wr->wr.atomic.compare_add,
				    wr->wr.atomic.swap);
		return 0;
	case IBV_WR_LOCAL_INV:
		siwx_sqe_op_local_inv(sqe, wr->invalidate_rkey);
		return 0;
	case IBV_WR_BIND_MW:
		return siwx_sqe_op_bind_mw(sqe, wr->bind_mw.mw, wr->bind_mw.rkey,
					   &wr->bind_mw.bind_info);
	default:
		/* TSO, DRIVER1, ATOMIC_WRITE, ... */
		return EINVAL;
	}
}

int siwx_sqe_from_send_wr(struct siwx_sqe *sqe, const struct ibv_send_wr *wr,
			  bool sig_all, const struct siwx_sq_limits *lim)
{
	int rv;

	if (wr->num_sge < 0)
		return EINVAL;
	rv = siwx_sqe_begin(sqe, wr->wr_id, wr->send_flags, sig_all);
	if (rv)
		return rv;
	rv = sqe_op_from_wr(sqe, wr);
	if (rv)
		return rv;

	if (wr->send_flags & IBV_SEND_INLINE) {
		struct ibv_data_buf buf[SIWX_MAX_INLINE];
		int i;

		/* refuse before reading application memory for an op whose
		 * SGEs are not a source (the atomic result buffer, say)
		 */
		if (!op_takes_inline(sqe->opcode))
			return EINVAL;
		/* every inline byte needs an SGE byte: more SGEs than
		 * SIWX_MAX_INLINE cannot fit anyway
		 */
		if (wr->num_sge > SIWX_MAX_INLINE)
			return EINVAL;
		for (i = 0; i < wr->num_sge; i++) {
			buf[i].addr = (void *)(uintptr_t)wr->sg_list[i].addr;
			buf[i].length = wr->sg_list[i].length;
		}
		rv = siwx_sqe_set_inline(sqe, buf, wr->num_sge, lim);
	} else {
		rv = siwx_sqe_set_sgl(sqe, wr->sg_list, wr->num_sge, lim);
	}
	if (rv)
		return rv;
	return siwx_sqe_check(sqe);
}

int siwx_rqe_from_recv_wr(struct siwx_rqe *rqe, const struct ibv_recv_wr *wr,
			  uint32_t max_sge)
{
	int i;

	memset(rqe, 0, sizeof(*rqe));
	rqe->id = wr->wr_id;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
	    wr->num_sge > SIWX_MAX_SGE)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		rqe->sge[i].addr = wr->sg_list[i].addr;
		rqe->sge[i].length = wr->sg_list[i].length;
		rqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	rqe->num_sge = (uint8_t)wr->num_sge;
	return 0;
}
