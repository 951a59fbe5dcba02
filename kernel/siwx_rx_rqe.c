// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Receive buffers: RX takes the next RQE from the QP's RQ or its SRQ (the
 * consumer's side of the ring, siwx_ring.h) for each untagged message that
 * needs one (RFC 5040 5.3; RFC 7306 6: an Immediate Data message
 * takes one too), checks its SGEs once, and holds them until the message
 * completes. An SRQ falling below its limit raises SRQ_LIMIT_REACHED.
 *
 * A message that finds no receive waits for one (siwx_rx_wait.c).
 *
 * An SGE that fails its check fails only a message that reaches it, as
 * on rxe, siw and RDMA NICs, which check each SGE as data arrives for
 * it: a zero-length Send into a receive whose SGE names no MR succeeds
 * (libfabric's fi_shared_ctx posts such receives).
 */
#include "siwx_comp.h"
#include "siwx_ring.h"
#include "siwx_rx_rqe.h"
#include "siwx_rx_term.h"
#include "siwx_rx_wait.h"
#include "siwx_stag.h"

/* Give up the receive buffer held for a Send; a CQE unless @status 0xff */
void siwx_rx_drop_rqe(struct siwx_conn *conn, u8 status)
{
	struct siwx_rx_rqe *rq = &conn->rqe;
	struct siwx_cqe_info ci = {
		.id = rq->id,
		.opcode = SIWX_WC_RECV,
		.status = status,
	};
	u32 i;

	if (!rq->held)
		return;
	for (i = 0; i < rq->n; i++) {
		if (rq->mr[i])
			siwx_mr_put(rq->mr[i]);
		rq->mr[i] = NULL;
	}
	rq->held = false;
	if (status != 0xff)
		siwx_cq_post(conn->qp->rcq, conn->qp, &ci);
}

/*
 * Fewer than limit receives left? Producers fill the ring in order, so
 * the limit-th element from the consumer is valid only if all before it
 * are.
 */
static bool siwx_srq_below_limit(struct siwx_srq *srq)
{
	struct siwx_rqe *e;

	e = siwx_srq_slot(srq, srq->cons + srq->limit - 1);
	return !siwx_elem_valid(&e->flags, SIWX_WQE_VALID);
}

static bool siwx_srq_pop_rqe(struct siwx_srq *srq, struct siwx_rqe *out)
{
	struct siwx_rqe *slot;
	unsigned long flags;
	bool got = false, low = false;

	spin_lock_irqsave(&srq->lock, flags);
	slot = siwx_srq_slot(srq, srq->cons);
	if (siwx_elem_valid(&slot->flags, SIWX_WQE_VALID)) {
		memcpy(out, slot, sizeof(*out));
		siwx_elem_release(&slot->flags);
		srq->cons++;
		got = true;
		low = srq->armed && siwx_srq_below_limit(srq);
		if (low)
			srq->armed = false;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (low)
		siwx_srq_event(srq, IB_EVENT_SRQ_LIMIT_REACHED);
	return got;
}

/* The next RQE of @qp's RQ or SRQ, copied to @out (the ring is the user's) */
static bool siwx_rx_pop_rqe(struct siwx_qp *qp, struct siwx_rqe *out)
{
	struct siwx_rqe *slot;
	bool got = false;

	if (qp->srq)
		return siwx_srq_pop_rqe(qp->srq, out);
	spin_lock_bh(&qp->rq_lock);
	slot = siwx_rq_slot(qp, qp->rq_pos);
	if (siwx_elem_valid(&slot->flags, SIWX_WQE_VALID)) {
		memcpy(out, slot, sizeof(*out));
		siwx_elem_release(&slot->flags);
		qp->rq_pos++;
		got = true;
	}
	spin_unlock_bh(&qp->rq_lock);
	return got;
}

enum siwx_rqe_take {
	SIWX_RQE_TAKEN,
	SIWX_RQE_WAIT,		/* RX waits for a receive */
	SIWX_RQE_FAILED,
};

/*
 * Take the next receive buffer for a Send's first segment (@send: its
 * SGEs validated) or for Immediate Data. None there: the message waits
 * for one (SIWX_RQE_WAIT), or, when it must not or waited long enough,
 * fails with @err.
 */
static enum siwx_rqe_take siwx_rx_take_rqe(struct siwx_conn *conn, bool send,
					   struct siwx_term *err)
{
	struct siwx_rx_rqe *rq = &conn->rqe;
	enum siwx_access_fault fault;
	struct siwx_rqe r;
	u32 i;

	if (!siwx_rx_pop_rqe(conn->qp, &r)) {
		if (conn->rx_wait ? siwx_rx_wait_on(conn) :
		    siwx_rx_wait_begin(conn, send ? SIWX_RX_WAIT_SEGMENT :
						    SIWX_RX_WAIT_END))
			return SIWX_RQE_WAIT;
		*err = siwx_rx_no_buffer();
		return SIWX_RQE_FAILED;
	}
	if (unlikely(conn->rx_wait))
		siwx_rx_wait_end(conn);
	rq->held = true;
	rq->bad_sge = false;
	rq->id = r.id;
	rq->n = 0;
	if (!send)
		return SIWX_RQE_TAKEN;
	/* Not what the provider posts: the ring was written around it */
	if (r.num_sge > SIWX_MAX_SGE) {
		siwx_rx_drop_rqe(conn, SIWX_WC_LOC_PROT_ERR);
		*err = siwx_rx_local_fault();
		return SIWX_RQE_FAILED;
	}
	for (i = 0; i < r.num_sge; i++) {
		struct siwx_mr *mr = NULL;

		if (r.sge[i].length) {
			mr = siwx_mr_get_checked(conn->qp, r.sge[i].lkey,
						 IB_ACCESS_LOCAL_WRITE,
						 r.sge[i].addr,
						 r.sge[i].length, &fault);
			if (!mr) {
				rq->bad_sge = true;
				break;
			}
		}
		rq->mr[rq->n] = mr;
		rq->lens[rq->n] = r.sge[i].length;
		rq->addr[rq->n] = r.sge[i].addr;
		rq->n++;
	}
	return SIWX_RQE_TAKEN;
}

/*
 * The receive a Send's first segment (@send) or Immediate Data needs:
 * true once taken; false while the message waits for one, or once RX
 * ended the stream for want of it (or for its bad SGE list).
 */
bool siwx_rx_need_rqe(struct siwx_conn *conn, bool send)
{
	struct siwx_term err;

	switch (siwx_rx_take_rqe(conn, send, &err)) {
	case SIWX_RQE_TAKEN:
		return true;
	case SIWX_RQE_FAILED:
		siwx_rx_terminate(conn, err, true, false);
		break;
	case SIWX_RQE_WAIT:
		break;
	}
	return false;
}

/*
 * A message overran the receive buffer's checked SGEs: into an SGE that
 * failed its check (a local protection error, the local consumer's
 * fault), or past the last one (RFC 5040 7.2: message too long). The
 * receive completes with that error; @err is the Terminate to send.
 */
void siwx_rx_rqe_overrun(struct siwx_conn *conn, struct siwx_term *err)
{
	if (conn->rqe.bad_sge) {
		siwx_rx_drop_rqe(conn, SIWX_WC_LOC_PROT_ERR);
		*err = siwx_rx_local_fault();
	} else {
		siwx_rx_drop_rqe(conn, SIWX_WC_LOC_LEN_ERR);
	}
}
