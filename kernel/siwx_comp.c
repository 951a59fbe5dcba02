// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Completions and events: CQEs into the CQ ring (and the completion
 * event), SQ completions in posting order (RFC 5040 5.5), the flush of
 * everything a QP in ERROR still holds, and the asynchronous events of
 * QPs, SRQs and CQs.
 */
#include <linux/ktime.h>
#include <rdma/ib_user_verbs.h>

#include <siwx/sqe_op.h>

#include "siwx_comp.h"
#include "siwx_ring.h"
#include "siwx_stag.h"

static void siwx_cq_overflow(struct siwx_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.event = IB_EVENT_CQ_ERR,
		.element.cq = &cq->ibcq,
	};

	pr_warn_ratelimited("siwx: CQ %u overflow\n", cq->id);
	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/* Any context; the CQE is dropped (and reported) when the ring is full. */
void siwx_cq_post(struct siwx_cq *cq, struct siwx_qp *qp,
		  const struct siwx_cqe_info *ci)
{
	struct siwx_cqe *cqe;
	unsigned long flags;
	bool event = false;
	u32 notify;
	s64 wall;

	spin_lock_irqsave(&cq->lock, flags);
	if (!cq->cqe) {
		spin_unlock_irqrestore(&cq->lock, flags);
		return;
	}
	cqe = siwx_cq_slot(cq, cq->prod);
	if (siwx_elem_valid(&cqe->flags, SIWX_CQE_VALID)) {
		spin_unlock_irqrestore(&cq->lock, flags);
		siwx_cq_overflow(cq);
		return;
	}
	cqe->id = ci->id;
	cqe->opcode = ci->opcode;
	cqe->status = ci->status;
	cqe->bytes = ci->bytes;
	cqe->qp_num = qp->ibqp.qp_num;
	cqe->inval_stag = ci->inval_stag;
	if (ci->imm)
		memcpy(cqe->imm, ci->imm, SIWX_IMM_LEN);
	else
		memset(cqe->imm, 0, SIWX_IMM_LEN);
	cqe->ts_ns = ktime_get_ns();
	/*
	 * The wall clock's offset, for the provider's wall-clock reads; it
	 * changes only when the wall clock is set, so the shared line is
	 * written only then.
	 */
	wall = ktime_to_ns(ktime_mono_to_real(0));
	if (READ_ONCE(cq->ctrl->wall_offset_ns) != wall)
		WRITE_ONCE(cq->ctrl->wall_offset_ns, wall);
	siwx_elem_publish(&cqe->flags, ci->flags | SIWX_CQE_VALID);
	cq->prod++;
	/* The CQE before reading the armed state: no missed event */
	smp_mb();
	notify = READ_ONCE(cq->ctrl->notify);
	/*
	 * Disarm only the state we saw: user space may arm again at any
	 * time, and a blind store would lose that.
	 */
	if ((notify == SIWX_NOTIFY_NEXT ||
	     (notify == SIWX_NOTIFY_SOLICITED &&
	      ((ci->flags & SIWX_CQE_SOLICITED) || ci->status))) &&
	    cmpxchg(&cq->ctrl->notify, notify, SIWX_NOTIFY_NONE) == notify)
		event = true;
	spin_unlock_irqrestore(&cq->lock, flags);
	if (event && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

u8 siwx_wr_to_wc_opcode(u8 wr_opcode)
{
	switch (siwx_sqe_atomic_op(wr_opcode)) {
	case SIWX_SQE_FETCH_ADD:
		return SIWX_WC_FETCH_ADD;
	case SIWX_SQE_CMP_SWAP:
		return SIWX_WC_COMP_SWAP;
	case SIWX_SQE_NOT_ATOMIC:
		break;
	}
	switch (wr_opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return SIWX_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
	case IB_UVERBS_WR_RDMA_READ_WITH_INV:
		return SIWX_WC_RDMA_READ;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_UVERBS_WR_LOCAL_INV:
		return SIWX_WC_LOCAL_INV;
	case IB_UVERBS_WR_BIND_MW:
		return SIWX_WC_BIND_MW;
	default:
		return SIWX_WC_SEND;
	}
}

static void siwx_sq_post_shadow(struct siwx_qp *qp,
				const struct siwx_sq_shadow *sh)
{
	struct siwx_cqe_info ci = {
		.id = sh->id,
		.bytes = sh->bytes,
		.opcode = sh->opcode,
		.status = sh->status,
	};
	enum siwx_access_fault fault;

	/* Read with Invalidate: the sink goes once its data is placed */
	if (sh->inval && !sh->status &&
	    siwx_mr_invalidate(qp, sh->inval_stag, &fault))
		ci.status = SIWX_WC_LOC_PROT_ERR;

	if (sh->signalled || sh->status)
		siwx_cq_post(qp->scq, qp, &ci);
}

/*
 * Complete the SQEs whose work is done, oldest first, stopping at the
 * first one still in progress (RFC 5040 5.5 rule 15: a Send or Write
 * does not complete before an earlier Read or Atomic). The slot goes
 * back to the provider before the completion is posted, so that a WR
 * posted as soon as the completion is polled finds its slot free (the
 * CQE is built from the shadow, not from the slot).
 */
static void siwx_sq_complete_locked(struct siwx_qp *qp)
{
	while (qp->sq_done != qp->sq_tx) {
		struct siwx_sq_shadow *sh = siwx_sq_shadow_at(qp, qp->sq_done);

		if (!sh->done)
			break;
		sh->done = false;
		siwx_elem_release(&siwx_sq_slot(qp, qp->sq_done)->flags);
		qp->sq_done++;
		siwx_sq_post_shadow(qp, sh);
	}
}

/*
 * The work of the SQE at @pos is done: it completes with @status and
 * @bytes once every SQE before it has completed.
 */
void siwx_sq_done(struct siwx_qp *qp, u32 pos, u8 status, u32 bytes)
{
	struct siwx_sq_shadow *sh;

	spin_lock_bh(&qp->sq_lock);
	sh = siwx_sq_shadow_at(qp, pos);
	sh->status = status;
	sh->bytes = bytes;
	sh->done = true;
	siwx_sq_complete_locked(qp);
	spin_unlock_bh(&qp->sq_lock);
}

/*
 * Complete everything the QP holds with a flush error: SQEs in flight
 * (those already done complete normally), SQEs and RQEs still in the
 * rings. Only while no data path runs on the QP.
 */
void siwx_qp_flush(struct siwx_qp *qp)
{
	struct siwx_cqe_info ci = { .status = SIWX_WC_WR_FLUSH_ERR };

	spin_lock_bh(&qp->sq_lock);
	while (qp->sq_done != qp->sq_tx) {
		struct siwx_sq_shadow *sh = siwx_sq_shadow_at(qp, qp->sq_done);

		if (!sh->done)
			sh->status = SIWX_WC_WR_FLUSH_ERR;
		sh->done = false;
		siwx_elem_release(&siwx_sq_slot(qp, qp->sq_done)->flags);
		qp->sq_done++;
		siwx_sq_post_shadow(qp, sh);
	}
	/* As in siwx_sq_complete_locked(): the slot is free before its CQE */
	for (;;) {
		struct siwx_sqe *sqe = siwx_sq_slot(qp, qp->sq_tx);

		if (!(siwx_elem_valid(&sqe->flags, SIWX_WQE_VALID)))
			break;
		ci.id = READ_ONCE(sqe->id);
		ci.opcode = siwx_wr_to_wc_opcode(READ_ONCE(sqe->opcode));
		siwx_elem_release(&sqe->flags);
		qp->sq_tx++;
		qp->sq_done = qp->sq_tx;
		siwx_cq_post(qp->scq, qp, &ci);
	}
	spin_unlock_bh(&qp->sq_lock);

	if (qp->srq)
		return;
	ci.opcode = SIWX_WC_RECV;
	spin_lock_bh(&qp->rq_lock);
	for (;;) {
		struct siwx_rqe *rqe = siwx_rq_slot(qp, qp->rq_pos);

		if (!(siwx_elem_valid(&rqe->flags, SIWX_WQE_VALID)))
			break;
		ci.id = READ_ONCE(rqe->id);
		siwx_elem_release(&rqe->flags);
		qp->rq_pos++;
		siwx_cq_post(qp->rcq, qp, &ci);
	}
	spin_unlock_bh(&qp->rq_lock);
}

/*
 * The QP is in ERROR for good (no connection left): from now on the
 * provider rings the receive doorbell after posting (abi.h), so the
 * flush that follows this, or that doorbell, completes every receive.
 */
void siwx_qp_flush_final(struct siwx_qp *qp)
{
	WRITE_ONCE(qp->sq_ctrl->rq_doorbell, SIWX_RQ_DB_FLUSH);
	/* rq_doorbell before reading the rings (pairs with the provider's) */
	smp_mb();
	siwx_qp_flush(qp);
}

/* An affiliated asynchronous event of @qp (any context). */
void siwx_qp_event(struct siwx_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.event = type,
		.element.qp = &qp->ibqp,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

void siwx_srq_event(struct siwx_srq *srq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.event = type,
		.element.srq = &srq->ibsrq,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}
