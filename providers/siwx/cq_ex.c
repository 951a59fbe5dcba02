// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The extended CQ (ibv_create_cq_ex): the ring and VALID-flag protocol of
 * ibv_poll_cq (cq.c), read one completion at a time through
 * ibv_start_poll/ibv_next_poll/ibv_end_poll, no system call. start_poll
 * takes the CQ's lock and end_poll drops it, so a batch is one consumer's
 * (unless the CQ was created IBV_CREATE_CQ_ATTR_SINGLE_THREADED). A CQE
 * goes back to the kernel when the next one is asked for or the batch
 * ends, so the read functions always read the current one in the ring.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "cqe.h"
#include "siwx.h"

/*
 * What an iWARP RC completion can report. SLID, SL and DLID_PATH_BITS have
 * no meaning on iWARP and read as 0, as SRC_QP does (no remote QP number
 * on the wire); they are accepted because IBV_WC_STANDARD_FLAGS, which
 * applications and rdma-core's tests ask for as a set, holds them (rxe
 * and irdma accept them too). CVLAN, FLOW_TAG and TM_INFO are refused.
 */
#define SIWX_CQ_EX_WC_FLAGS                                                    \
	(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |        \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

static inline struct siwx_cq *cqx_to_scq(struct ibv_cq_ex *cqx)
{
	return siwx_container_of(cqx, struct siwx_cq, vcq.cq_ex);
}

static inline void siwx_cq_lock(struct siwx_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
}

static inline void siwx_cq_unlock(struct siwx_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
}

static uint64_t siwx_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void siwx_cq_ex_load(struct siwx_cq *cq, struct siwx_cqe *cqe)
{
	cq->cur = cqe;
	cq->vcq.cq_ex.wr_id = cqe->id;
	cq->vcq.cq_ex.status = (enum ibv_wc_status)cqe->status;
}

static int siwx_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	struct siwx_cq *cq = cqx_to_scq(cqx);
	struct siwx_cqe *cqe;

	if (attr->comp_mask)
		return EINVAL;
	/* Busy pollers mostly find nothing: say so without the lock. */
	if (!siwx_ring_ready(&cq->ring))
		return ENOENT;
	siwx_cq_lock(cq);
	cqe = siwx_ring_peek(&cq->ring);
	if (!cqe) {
		siwx_cq_unlock(cq);
		return ENOENT;
	}
	siwx_cq_ex_load(cq, cqe);
	return 0;
}

static int siwx_next_poll(struct ibv_cq_ex *cqx)
{
	struct siwx_cq *cq = cqx_to_scq(cqx);
	struct siwx_cqe *cqe;

	siwx_ring_consume(&cq->ring);
	cqe = siwx_ring_peek(&cq->ring);
	if (!cqe) {
		cq->cur = NULL;
		return ENOENT;
	}
	siwx_cq_ex_load(cq, cqe);
	return 0;
}

static void siwx_end_poll(struct ibv_cq_ex *cqx)
{
	struct siwx_cq *cq = cqx_to_scq(cqx);

	if (cq->cur)
		siwx_ring_consume(&cq->ring);
	cq->cur = NULL;
	siwx_cq_unlock(cq);
}

static enum ibv_wc_opcode siwx_wc_read_opcode(struct ibv_cq_ex *cqx)
{
	return (enum ibv_wc_opcode)cqx_to_scq(cqx)->cur->opcode;
}

static uint32_t siwx_wc_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return 0;
}

static uint32_t siwx_wc_read_byte_len(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->bytes;
}

/*
 * As ibv_wc's union: the first 4 Immediate Data octets as they arrived,
 * or (IBV_WC_WITH_INV) the invalidated STag in host order, which
 * ibv_wc_read_invalidated_rkey() reads through this call.
 */
static __be32 siwx_wc_read_imm_data(struct ibv_cq_ex *cqx)
{
	const struct siwx_cqe *cqe = cqx_to_scq(cqx)->cur;
	__be32 imm = 0;

	if (cqe->flags & SIWX_CQE_WITH_IMM)
		memcpy(&imm, cqe->imm, sizeof(imm));
	else if (cqe->flags & SIWX_CQE_WITH_INV)
		imm = (__be32)cqe->inval_stag;
	return imm;
}

static uint32_t siwx_wc_read_qp_num(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->qp_num;
}

static uint32_t siwx_wc_read_zero32(struct ibv_cq_ex *cqx)
{
	return 0;
}

static uint8_t siwx_wc_read_zero8(struct ibv_cq_ex *cqx)
{
	return 0;
}

static unsigned int siwx_wc_read_wc_flags(struct ibv_cq_ex *cqx)
{
	const struct siwx_cqe *cqe = cqx_to_scq(cqx)->cur;

	if (cqe->flags & SIWX_CQE_WITH_IMM)
		return IBV_WC_WITH_IMM;
	if (cqe->flags & SIWX_CQE_WITH_INV)
		return IBV_WC_WITH_INV;
	return 0;
}

static uint64_t siwx_wc_read_completion_ts(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->ts_ns;
}

/* The kernel's own offset of the two clocks, from the control block */
static uint64_t siwx_wc_read_completion_wallclock_ns(struct ibv_cq_ex *cqx)
{
	struct siwx_cq *cq = cqx_to_scq(cqx);

	return cq->cur->ts_ns +
	       (uint64_t)__atomic_load_n(&cq->ctrl->wall_offset_ns,
					 __ATOMIC_RELAXED);
}

static int siwx_cq_ex_check(const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->comp_mask & ~(IBV_CQ_INIT_ATTR_MASK_FLAGS |
				IBV_CQ_INIT_ATTR_MASK_PD))
		return EINVAL;
	/* No parent domains (their allocators and thread domains) */
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD)
		return EOPNOTSUPP;
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) {
		if (attr->flags & ~(IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
				    IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN))
			return EINVAL;
		/* An overrun is reported (IBV_EVENT_CQ_ERR), never ignored */
		if (attr->flags & IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)
			return EOPNOTSUPP;
	}
	if (attr->wc_flags & ~(uint64_t)SIWX_CQ_EX_WC_FLAGS)
		return EOPNOTSUPP;
	return 0;
}

struct ibv_cq_ex *siwx_create_cq_ex(struct ibv_context *ctx,
				    struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq_ex *cqx;
	struct siwx_cq *cq;
	int rv;

	rv = siwx_cq_ex_check(attr);
	if (rv) {
		errno = rv;
		return NULL;
	}
	/*
	 * The kernel object is a plain CQ (every CQE carries its time), made
	 * by the one command whose signature all supported libibverbs share.
	 */
	cq = siwx_cq_new(ctx, attr->cqe, attr->channel, attr->comp_vector);
	if (!cq)
		return NULL;
	/*
	 * The library's ibv_create_cq_ex() runs verbs_init_cq() once we
	 * return; a second run here counted the CQ twice on its completion
	 * channel, which then could never be destroyed (EBUSY).
	 */
	cq->wc_flags = attr->wc_flags;
	cq->single_threaded =
		(attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
		(attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED);

	cqx = &cq->vcq.cq_ex;
	cqx->start_poll = siwx_start_poll;
	cqx->next_poll = siwx_next_poll;
	cqx->end_poll = siwx_end_poll;
	cqx->read_opcode = siwx_wc_read_opcode;
	cqx->read_vendor_err = siwx_wc_read_vendor_err;
	cqx->read_wc_flags = siwx_wc_read_wc_flags;
	cqx->read_byte_len = siwx_wc_read_byte_len;
	cqx->read_imm_data = siwx_wc_read_imm_data;
	cqx->read_qp_num = siwx_wc_read_qp_num;
	cqx->read_src_qp = siwx_wc_read_zero32;
	cqx->read_slid = siwx_wc_read_zero32;
	cqx->read_sl = siwx_wc_read_zero8;
	cqx->read_dlid_path_bits = siwx_wc_read_zero8;
	cqx->read_completion_ts = siwx_wc_read_completion_ts;
	cqx->read_completion_wallclock_ns =
		siwx_wc_read_completion_wallclock_ns;
	return cqx;
}

void siwx_cq_ex_read_imm8(struct ibv_cq_ex *cqx, uint8_t imm[SIWX_IMM_LEN])
{
	siwx_cqe_imm8(cqx_to_scq(cqx)->cur, imm);
}

/*
 * The device clock of the completion timestamps: CLOCK_MONOTONIC in ns,
 * handed out as mlx5 does, the raw count in tv_nsec and tv_sec 0.
 */
int siwx_query_rt_values(struct ibv_context *ctx, struct ibv_values_ex *values)
{
	uint32_t comp_mask = 0;

	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec =
			(long)siwx_clock_ns(CLOCK_MONOTONIC);
		comp_mask |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	values->comp_mask = comp_mask;
	return 0;
}
