// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The RX engine. sk_data_ready runs tcp_read_sock (socket lock held, in
 * softirq or process context), or for the rest of a long message queues
 * rx_work, which does (rx_batch, below); the actor walks each skb with
 * skb_seq_read and feeds the chunks to the core's stream parser, then
 * acts on its events: targets are validated at SEGMENT, payload is
 * copied straight into the target pages, header-only messages act at
 * SEGMENT_END. Any error becomes the core's Terminate, sent by TX.
 */
#include <linux/highmem.h>
#include <linux/skbuff.h>
#include <net/tcp.h>

#include "siwx_conn.h"

static struct siwx_term siwx_rx_no_buffer(void)
{
	return siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED,
			      SIWX_DDP_UT_NO_BUFFER);
}

/*
 * Either end of a Terminate learns of it through the QP's affiliated
 * asynchronous error, named after what the Terminate says went wrong.
 */
static void siwx_term_event(struct siwx_qp *qp, struct siwx_term cause)
{
	static const enum ib_event_type type[] = {
		[SIWX_TERM_REMOTE_ACCESS] = IB_EVENT_QP_ACCESS_ERR,
		[SIWX_TERM_REMOTE_INVALID] = IB_EVENT_QP_REQ_ERR,
		[SIWX_TERM_REMOTE_OP] = IB_EVENT_QP_FATAL,
	};

	siwx_qp_event(qp, type[siwx_term_classify(cause)]);
}

/* Stop receiving and have TX send a Terminate for @cause. */
void siwx_conn_terminate(struct siwx_conn *conn, struct siwx_term cause,
			 bool echo, bool read_req)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	u8 rh[SIWX_READ_REQ_LEN];

	if (conn->rx_dead)
		return;
	conn->rx_dead = true;
	if (read_req)
		siwx_read_req_encode(&seg->u.read, rh);
	siwx_term_hdr_build(&conn->term, cause, seg->ulpdu_len,
			    echo ? seg->raw : NULL, seg->ddp_hdr_len,
			    read_req ? rh : NULL);
	siwx_set_term_pending(conn);
	siwx_tx_kick(conn);
	siwx_term_event(conn->qp, cause);
}

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

static void siwx_srq_event(struct siwx_srq *srq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.event = type,
		.element.srq = &srq->ibsrq,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

static bool siwx_rx_pop_rqe(struct siwx_qp *qp, struct siwx_rqe *out)
{
	struct siwx_rqe *slot;
	unsigned long flags;
	bool got = false;

	if (qp->srq) {
		struct siwx_srq *srq = qp->srq;
		bool low = false;

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

/* Take the next receive buffer and validate its SGEs. */
static bool siwx_rx_take_rqe(struct siwx_conn *conn, bool sges,
			     struct siwx_term *err)
{
	struct siwx_rx_rqe *rq = &conn->rqe;
	enum siwx_access_fault fault;
	struct siwx_rqe r;
	u32 i;

	if (!siwx_rx_pop_rqe(conn->qp, &r)) {
		*err = siwx_rx_no_buffer();
		return false;
	}
	rq->held = true;
	rq->id = r.id;
	rq->n = 0;
	if (!sges)
		return true;
	if (r.num_sge > SIWX_MAX_SGE)
		goto bad;
	for (i = 0; i < r.num_sge; i++) {
		struct siwx_mr *mr = NULL;

		if (r.sge[i].length) {
			mr = siwx_mr_get(conn->dev, r.sge[i].lkey);
			if (!mr)
				goto bad;
			rq->mr[rq->n] = mr;
			if (siwx_mr_check(conn->qp, mr, IB_ACCESS_LOCAL_WRITE,
					  r.sge[i].addr, r.sge[i].length,
					  &fault))
				goto bad_n;
		}
		rq->mr[rq->n] = mr;
		rq->lens[rq->n] = r.sge[i].length;
		rq->addr[rq->n] = r.sge[i].addr;
		rq->n++;
	}
	return true;
bad_n:
	rq->n++;
bad:
	siwx_rx_drop_rqe(conn, SIWX_WC_LOC_PROT_ERR);
	*err = siwx_term_make(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA,
			      SIWX_LLP_LOCAL_CATASTROPHIC);
	return false;
}

static void siwx_rx_fault(struct siwx_conn *conn, enum siwx_access_kind kind,
			  enum siwx_access_fault fault, bool read_req)
{
	siwx_conn_terminate(conn, siwx_term_for_access(kind, fault), true,
			    read_req);
}

/*
 * A tagged segment (RDMA Write, or Read Response into our sink) places
 * into the MR its STag names: PD, rights and bounds checked first, the MR
 * held until the segment ends.
 */
static void siwx_rx_tagged_target(struct siwx_conn *conn, int access)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	enum siwx_access_fault fault = SIWX_FAULT_INVALID_STAG;
	struct siwx_mr *mr;

	/* A segment that places nothing names no STag to check */
	if (!siwx_ddp_tagged_needs_stag(seg->payload_len))
		return;
	mr = siwx_mr_get(conn->dev, seg->ddp.stag);
	if (mr && siwx_mr_check(conn->qp, mr, access, seg->ddp.to,
				seg->payload_len, &fault)) {
		siwx_mr_put(mr);
		mr = NULL;
	}
	if (!mr) {
		siwx_rx_fault(conn, SIWX_ACCESS_WRITE, fault, false);
		return;
	}
	conn->rx_mr = mr;
}

/*
 * Responder, the Initiator's first message (siwx_mpa_rtr_check): a
 * peer-to-peer RTR is taken without delivering anything; a Read RTR, or
 * any FPDU when no RTR was agreed, is processed as usual and lets TX go.
 * Returns whether the segment goes on to the usual processing.
 */
static bool siwx_rx_rtr(struct siwx_conn *conn)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	struct siwx_term err;

	switch (siwx_mpa_rtr_check(conn->mpa.rtr, &seg->ddp, seg->payload_len,
				   &err)) {
	case SIWX_RTR_DISCARD:
		conn->rx_rtr = true;
		return false;
	case SIWX_RTR_SERVE:
		WRITE_ONCE(conn->rtr_wait, false);
		siwx_tx_kick(conn);
		return true;
	default:
		siwx_conn_terminate(conn, err, true, false);
		return false;
	}
}

static void siwx_rx_segment(struct siwx_conn *conn)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	struct siwx_rdq_entry *e;
	struct siwx_sgl_pos pos;
	struct siwx_term err;
	bool complete;

	if (unlikely(READ_ONCE(conn->rtr_wait)) && !siwx_rx_rtr(conn))
		return;
	switch (seg->ddp.opcode) {
	case SIWX_OP_WRITE:
		siwx_rx_tagged_target(conn, IB_ACCESS_REMOTE_WRITE);
		return;
	case SIWX_OP_READ_RESP:
		spin_lock_bh(&conn->rdq_lock);
		e = siwx_rdq_read_response(&conn->orq, &seg->ddp,
					   seg->payload_len, &complete, &err);
		if (e) {
			conn->rx_resp_cookie = e->cookie;
			conn->rx_resp_len = e->u.read.size;
		}
		spin_unlock_bh(&conn->rdq_lock);
		if (!e) {
			siwx_conn_terminate(conn, err, true, false);
			return;
		}
		conn->rx_resp_done = complete;
		siwx_rx_tagged_target(conn, IB_ACCESS_LOCAL_WRITE);
		return;
	case SIWX_OP_SEND:
	case SIWX_OP_SEND_INVAL:
	case SIWX_OP_SEND_SE:
	case SIWX_OP_SEND_SE_INVAL:
		if (!seg->ddp.mo && !conn->rqe.held &&
		    !siwx_rx_take_rqe(conn, true, &err)) {
			siwx_conn_terminate(conn, err, true, false);
			return;
		}
		if (!conn->rqe.held) {
			siwx_conn_terminate(conn, siwx_rx_no_buffer(), true,
					    false);
			return;
		}
		if (!siwx_sgl_seek(conn->rqe.lens, conn->rqe.n, seg->ddp.mo,
				   seg->payload_len, &pos, &err)) {
			siwx_rx_drop_rqe(conn, SIWX_WC_LOC_LEN_ERR);
			siwx_conn_terminate(conn, err, true, false);
		}
		return;
	default:
		return;
	}
}

static void siwx_rx_count_placed(struct siwx_conn *conn, u32 n)
{
	siwx_copies_add(rx_copied_siwx, n);
	if (conn->rx.crc_on)
		siwx_copies_add(rx_crc_fused, n);
}

/*
 * A slice of payload, placed where its segment's target says. Each
 * octet also goes into the MPA CRC (the parser left that to us,
 * siwx_rx_defer_crc()) in the same pass that places it; octets with no
 * place to go are only checksummed.
 */
static void siwx_rx_payload(struct siwx_conn *conn,
			    const struct siwx_rx_event *ev)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	struct siwx_rx_rqe *rq = &conn->rqe;
	const u8 *data = ev->data;
	struct siwx_sgl_pos pos;
	struct siwx_term err;
	u32 len = ev->len;

	siwx_copies_add(rx_payload, len);
	if (conn->rx.crc_on)
		siwx_copies_add(rx_crc, len);
	if (seg->ddp.tagged) {
		if (conn->rx_mr) {
			siwx_mr_copy_to(conn->rx_mr, seg->ddp.to + ev->offset,
					data, len, &conn->rx);
			siwx_rx_count_placed(conn, len);
		} else {
			siwx_rx_skip(&conn->rx, data, len);
		}
		return;
	}
	if (!rq->held) {
		siwx_rx_skip(&conn->rx, data, len);
		return;
	}
	if (!siwx_sgl_seek(rq->lens, rq->n, seg->ddp.mo + ev->offset, len,
			   &pos, &err)) {
		siwx_rx_drop_rqe(conn, SIWX_WC_LOC_LEN_ERR);
		siwx_conn_terminate(conn, err, true, false);
		return;
	}
	while (len && pos.idx < rq->n) {
		u32 n = min(len, rq->lens[pos.idx] - pos.off);

		if (n && rq->mr[pos.idx]) {
			siwx_mr_copy_to(rq->mr[pos.idx],
					rq->addr[pos.idx] + pos.off, data, n,
					&conn->rx);
			siwx_rx_count_placed(conn, n);
		} else {
			siwx_rx_skip(&conn->rx, data, n);
		}
		data += n;
		len -= n;
		pos.idx++;
		pos.off = 0;
	}
	siwx_rx_skip(&conn->rx, data, len);
}

static void siwx_rx_send_done(struct siwx_conn *conn)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	struct siwx_cqe_info ci = {
		.id = conn->rqe.id,
		.opcode = SIWX_WC_RECV,
		.bytes = seg->ddp.mo + seg->payload_len,
	};

	if (seg->op->solicited)
		ci.flags |= SIWX_CQE_SOLICITED;
	if (seg->op->invalidate) {
		enum siwx_access_fault fault;
		struct siwx_term cause;

		/* RFC 5040 5.3: invalidate before the Send is delivered */
		if (siwx_mr_invalidate(conn->qp, seg->ddp.inval_stag,
				       &fault)) {
			cause = siwx_term_for_access(SIWX_ACCESS_INVALIDATE,
						     fault);
			siwx_rx_drop_rqe(conn, SIWX_WC_LOC_PROT_ERR);
			siwx_conn_terminate(conn, cause, true, false);
			return;
		}
		ci.flags |= SIWX_CQE_WITH_INV;
		ci.inval_stag = seg->ddp.inval_stag;
	}
	siwx_imm_len_track(&conn->imm, seg->ddp.opcode, ci.bytes);
	siwx_rx_drop_rqe(conn, 0xff);
	siwx_cq_post(conn->qp->rcq, conn->qp, &ci);
}

static void siwx_rx_imm(struct siwx_conn *conn)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	struct siwx_cqe_info ci = {
		.opcode = SIWX_WC_RECV_RDMA_WITH_IMM,
		.flags = SIWX_CQE_WITH_IMM,
		.imm = seg->u.imm,
	};
	struct siwx_term err;

	if (!siwx_rx_take_rqe(conn, false, &err)) {
		siwx_conn_terminate(conn, err, true, false);
		return;
	}
	ci.id = conn->rqe.id;
	ci.bytes = siwx_imm_len_take(&conn->imm);
	if (seg->ddp.opcode == SIWX_OP_IMM_SE)
		ci.flags |= SIWX_CQE_SOLICITED;
	siwx_rx_drop_rqe(conn, 0xff);
	siwx_cq_post(conn->qp->rcq, conn->qp, &ci);
}

/* Queue an inbound Read or Atomic Request; returns its IRQ index. */
static int siwx_rx_accept_request(struct siwx_conn *conn)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	bool read = seg->ddp.opcode == SIWX_OP_READ_REQ;
	struct siwx_term err;
	bool ok;
	int idx;

	spin_lock_bh(&conn->rdq_lock);
	ok = siwx_rdq_accept_request(&conn->irq, &seg->ddp,
				     read ? &seg->u.read : NULL,
				     read ? NULL : &seg->u.atomic, &err);
	idx = (conn->irq.head + conn->irq.count - 1) % SIWX_RDQ_MAX;
	spin_unlock_bh(&conn->rdq_lock);
	if (!ok) {
		siwx_conn_terminate(conn, err, true, read);
		return -1;
	}
	return idx;
}

static void siwx_rx_request_ready(struct siwx_conn *conn, int idx, u64 orig)
{
	spin_lock_bh(&conn->rdq_lock);
	conn->irq_orig[idx] = orig;
	conn->irq_ready[idx] = true;
	spin_unlock_bh(&conn->rdq_lock);
	siwx_tx_kick(conn);
}

static void siwx_rx_read_req(struct siwx_conn *conn)
{
	const struct siwx_read_req *r = &conn->rx.seg.u.read;
	enum siwx_access_fault fault = SIWX_FAULT_INVALID_STAG;
	struct siwx_mr *mr;
	int idx = siwx_rx_accept_request(conn);

	if (idx < 0)
		return;
	if (r->size) {
		mr = siwx_mr_get(conn->dev, r->src_stag);
		if (!mr || siwx_mr_check(conn->qp, mr, IB_ACCESS_REMOTE_READ,
					 r->src_to, r->size, &fault)) {
			if (mr)
				siwx_mr_put(mr);
			siwx_rx_fault(conn, SIWX_ACCESS_READ_SOURCE, fault,
				      true);
			return;
		}
		siwx_mr_put(mr);
	}
	siwx_rx_request_ready(conn, idx, 0);
}

static void siwx_rx_atomic_req(struct siwx_conn *conn)
{
	struct siwx_term err;
	u64 orig;
	int idx = siwx_rx_accept_request(conn);

	if (idx < 0)
		return;
	if (siwx_atomic_execute(conn->qp, &conn->rx.seg.u.atomic, &orig,
				&err)) {
		siwx_conn_terminate(conn, err, true, false);
		return;
	}
	siwx_rx_request_ready(conn, idx, orig);
}

static void siwx_rx_atomic_resp(struct siwx_conn *conn)
{
	const struct siwx_atomic_resp *r = &conn->rx.seg.u.atomic_resp;
	struct siwx_rdq_entry *e;
	struct siwx_term err;
	struct siwx_sge sink;
	u64 cookie = 0;
	u8 status;

	spin_lock_bh(&conn->rdq_lock);
	e = siwx_rdq_atomic_response(&conn->orq, r, &err);
	if (e) {
		cookie = e->cookie;
		sink = conn->orq_sink[e - conn->orq.ent];
		siwx_rdq_pop(&conn->orq);
	}
	spin_unlock_bh(&conn->rdq_lock);
	if (!e) {
		siwx_conn_terminate(conn, err, true, false);
		return;
	}
	status = siwx_atomic_result(conn->qp, &sink, r->orig) ?
		 SIWX_WC_LOC_PROT_ERR : SIWX_WC_SUCCESS;
	siwx_sq_mark_done(conn->qp, cookie, status, sizeof(u64));
	siwx_tx_sq_progress(conn);
}

/*
 * The peer ended the stream. The oldest outstanding Read or Atomic is
 * what it refused (responses come in request order), so that WR
 * completes with the remote error the Terminate names; the flush that
 * follows completes the rest.
 */
static void siwx_rx_terminated(struct siwx_conn *conn, struct siwx_term cause)
{
	static const u8 status[] = {
		[SIWX_TERM_REMOTE_ACCESS] = SIWX_WC_REM_ACCESS_ERR,
		[SIWX_TERM_REMOTE_INVALID] = SIWX_WC_REM_INV_REQ_ERR,
		[SIWX_TERM_REMOTE_OP] = SIWX_WC_REM_OP_ERR,
	};
	struct siwx_rdq_entry *e;
	u64 cookie = 0;

	spin_lock_bh(&conn->rdq_lock);
	e = siwx_rdq_head(&conn->orq);
	if (e) {
		cookie = e->cookie;
		siwx_rdq_pop(&conn->orq);
	}
	spin_unlock_bh(&conn->rdq_lock);
	if (e)
		siwx_sq_mark_done(conn->qp, cookie,
				  status[siwx_term_classify(cause)], 0);
	/* A Send, Write or Immediate Data has no WR to carry the refusal */
	siwx_term_event(conn->qp, cause);
}

static void siwx_rx_segment_end(struct siwx_conn *conn)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	u8 op = seg->ddp.opcode;

	if (unlikely(conn->rx_rtr)) {
		/* The RTR is in: the data path may send now */
		conn->rx_rtr = false;
		WRITE_ONCE(conn->rtr_wait, false);
		siwx_tx_kick(conn);
		return;
	}

	if (conn->rx_mr) {
		siwx_mr_put(conn->rx_mr);
		conn->rx_mr = NULL;
	}
	switch (op) {
	case SIWX_OP_WRITE:
		conn->rx_write_len += seg->payload_len;
		if (seg->ddp.last) {
			siwx_imm_len_track(&conn->imm, op, conn->rx_write_len);
			conn->rx_write_len = 0;
		}
		return;
	case SIWX_OP_READ_RESP:
		if (!conn->rx_resp_done)
			return;
		conn->rx_resp_done = false;
		spin_lock_bh(&conn->rdq_lock);
		siwx_rdq_pop(&conn->orq);
		spin_unlock_bh(&conn->rdq_lock);
		siwx_sq_mark_done(conn->qp, conn->rx_resp_cookie,
				  SIWX_WC_SUCCESS, conn->rx_resp_len);
		siwx_tx_sq_progress(conn);
		return;
	case SIWX_OP_SEND:
	case SIWX_OP_SEND_INVAL:
	case SIWX_OP_SEND_SE:
	case SIWX_OP_SEND_SE_INVAL:
		if (seg->ddp.last && conn->rqe.held)
			siwx_rx_send_done(conn);
		return;
	case SIWX_OP_READ_REQ:
		siwx_imm_len_track(&conn->imm, op, 0);
		siwx_rx_read_req(conn);
		return;
	case SIWX_OP_ATOMIC_REQ:
		siwx_imm_len_track(&conn->imm, op, 0);
		siwx_rx_atomic_req(conn);
		return;
	case SIWX_OP_ATOMIC_RESP:
		siwx_rx_atomic_resp(conn);
		return;
	case SIWX_OP_IMM:
	case SIWX_OP_IMM_SE:
		siwx_rx_imm(conn);
		return;
	case SIWX_OP_TERMINATE:
		pr_info_ratelimited("siwx: QP %u: Terminate received (layer %u type %u code %u)\n",
				    conn->qp->ibqp.qp_num,
				    seg->u.term.cause.layer,
				    seg->u.term.cause.etype,
				    seg->u.term.cause.ecode);
		conn->rx_dead = true;
		/* QP in ERROR first, then the WR's error completion. */
		siwx_conn_close(conn, true);
		siwx_rx_terminated(conn, seg->u.term.cause);
		return;
	default:
		return;
	}
}

static void siwx_rx_chunk(struct siwx_conn *conn, const u8 *p, size_t n)
{
	struct siwx_rx_event ev;
	size_t used;

	while (n && !conn->rx_dead) {
		used = siwx_rx_feed(&conn->rx, p, n, &ev);
		p += used;
		n -= used;
		switch (ev.type) {
		case SIWX_RX_NEED_MORE:
			return;
		case SIWX_RX_SEGMENT:
			siwx_rx_segment(conn);
			break;
		case SIWX_RX_PAYLOAD:
			siwx_rx_payload(conn, &ev);
			break;
		case SIWX_RX_SEGMENT_END:
			siwx_rx_segment_end(conn);
			break;
		case SIWX_RX_ERROR:
			/*
			 * seg.op is set only once the header passed its
			 * checks (else it is the last segment's); the opcode
			 * is the refused segment's own.
			 */
			siwx_conn_terminate(conn, conn->rx.term, true,
					    !conn->rx.seg.ddp.tagged &&
					    conn->rx.seg.ddp.opcode ==
					    SIWX_OP_READ_REQ);
			return;
		}
	}
}

static int siwx_rx_actor(read_descriptor_t *desc, struct sk_buff *skb,
			 unsigned int off, size_t len)
{
	struct siwx_conn *conn = desc->arg.data;
	struct skb_seq_state st;
	unsigned int done = 0, n;
	const u8 *data;

	if (conn->rx_dead)
		return len;
	skb_prepare_seq_read(skb, off, off + len, &st);
	while ((n = skb_seq_read(done, &data, &st)) != 0) {
		siwx_rx_chunk(conn, data, n);
		done += n;
		if (conn->rx_dead) {
			skb_abort_seq_read(&st);
			break;
		}
	}
	return len;
}

/*
 * The rest of a long message is read in work-item batches (rx_batch):
 * once SIWX_RX_BATCH_AFTER octets of a message have arrived, data_ready
 * queues rx_work instead of reading. Each read that moves TCP's window
 * by more than a segment sends an ACK (tcp_cleanup_rbuf()), so reading
 * every burst as it lands costs the sender, whose CPU is often the
 * limit, an ACK per two segments; the work item reads what gathered
 * meanwhile at once. Messages up to that size, and the start of every
 * message, are read in data_ready, with the softirq's latency; a long
 * message completes once the batch with its last FPDU is read.
 */
#define SIWX_RX_BATCH_AFTER 8192

static bool siwx_rx_batch = true;
module_param_named(rx_batch, siwx_rx_batch, bool, 0644);
MODULE_PARM_DESC(rx_batch, "Read long messages from a work item, in batches (default: on)");

/* Socket lock held, softirqs off (as in data_ready) */
static void siwx_rx_read_conn(struct sock *sk, struct siwx_conn *conn)
{
	read_descriptor_t desc = { .count = 1 };

	desc.arg.data = conn;
	tcp_read_sock(sk, &desc, siwx_rx_actor);
}

/*
 * Runs with the socket's lock (softirq, or process context in
 * release_sock()), so no read is in progress and conn->rx holds still.
 */
void siwx_rx_data_ready(struct sock *sk)
{
	struct siwx_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = sk->sk_user_data;
	if (conn) {
		if (READ_ONCE(siwx_rx_batch) && !conn->rx_dead &&
		    siwx_rx_message_octets(&conn->rx) >= SIWX_RX_BATCH_AFTER)
			queue_work(siwx_tx_wq, &conn->rx_work);
		else
			siwx_rx_read_conn(sk, conn);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Process context: read what TCP holds while the data path is ours; at
 * its start (what arrived before it), and as rx_work.
 */
void siwx_rx_kick(struct siwx_conn *conn)
{
	struct sock *sk = conn->sock->sk;

	lock_sock(sk);
	read_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_user_data == conn)
		siwx_rx_read_conn(sk, conn);
	read_unlock_bh(&sk->sk_callback_lock);
	release_sock(sk);
}

/* siwx_conn_stop() cancels it, and reads what it left, if graceful */
void siwx_rx_work(struct work_struct *work)
{
	siwx_rx_kick(container_of(work, struct siwx_conn, rx_work));
}

/*
 * A graceful close, the socket's callbacks no longer ours and rx_work
 * cancelled (siwx_conn_stop()): what data_ready left to rx_work came
 * before the peer's FIN, and its messages are owed to the application
 * as much as those read at once.
 */
void siwx_rx_drain(struct siwx_conn *conn)
{
	struct sock *sk = conn->sock->sk;

	lock_sock(sk);
	local_bh_disable();
	siwx_rx_read_conn(sk, conn);
	local_bh_enable();
	release_sock(sk);
}
