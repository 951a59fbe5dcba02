// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * A segment's end, where a message that is complete takes effect: a Send
 * completes its receive (RFC 5040 5.3, with Invalidate first), Immediate
 * Data completes one (RFC 7306 6), a Read Response or Atomic Response
 * completes our WR (RFC 5040 5.2.2, RFC 7306 5.2.2), a Read or Atomic
 * Request is queued for TX to answer (the atomic executed here), and a
 * Terminate ends the stream (RFC 5040 5.4).
 */
#include "siwx_atomic.h"
#include "siwx_comp.h"
#include "siwx_rdq.h"
#include "siwx_rx_msg.h"
#include "siwx_rx_rqe.h"
#include "siwx_rx_term.h"
#include "siwx_stag.h"

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

		/* RFC 5040 5.3: invalidate before the Send is delivered */
		if (siwx_mr_invalidate(conn->qp, seg->ddp.inval_stag,
				       &fault)) {
			siwx_rx_drop_rqe(conn, SIWX_WC_LOC_PROT_ERR);
			siwx_rx_fault(conn, SIWX_ACCESS_INVALIDATE, fault,
				      false);
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

	if (!siwx_rx_need_rqe(conn, false))
		return;
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
	int idx;

	idx = siwx_irq_accept(conn, &seg->ddp, read ? &seg->u.read : NULL,
			      read ? NULL : &seg->u.atomic, &err);
	if (idx < 0)
		siwx_rx_terminate(conn, err, true, read);
	return idx;
}

/* Its source is checked now, so that a bad one ends the stream at once */
static void siwx_rx_read_req(struct siwx_conn *conn)
{
	const struct siwx_read_req *r = &conn->rx.seg.u.read;
	enum siwx_access_fault fault;
	struct siwx_mr *mr;
	int idx = siwx_rx_accept_request(conn);

	if (idx < 0)
		return;
	if (r->size) {
		mr = siwx_mr_get_checked(conn->qp, r->src_stag,
					 IB_ACCESS_REMOTE_READ, r->src_to,
					 r->size, &fault);
		if (!mr) {
			siwx_rx_fault(conn, SIWX_ACCESS_READ_SOURCE, fault,
				      true);
			return;
		}
		siwx_mr_put(mr);
	}
	siwx_irq_set_ready(conn, idx, 0);
	siwx_conn_kick_tx(conn);
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
		siwx_rx_terminate(conn, err, true, false);
		return;
	}
	siwx_irq_set_ready(conn, idx, orig);
	siwx_conn_kick_tx(conn);
}

static void siwx_rx_atomic_resp(struct siwx_conn *conn)
{
	const struct siwx_atomic_resp *r = &conn->rx.seg.u.atomic_resp;
	struct siwx_term err;
	struct siwx_sge sink;
	u64 cookie;
	u8 status;

	if (!siwx_orq_atomic_response(conn, r, &cookie, &sink, &err)) {
		siwx_rx_terminate(conn, err, true, false);
		return;
	}
	status = siwx_atomic_result(conn->qp, &sink, r->orig) ?
		 SIWX_WC_LOC_PROT_ERR : SIWX_WC_SUCCESS;
	siwx_sq_done(conn->qp, cookie, status, sizeof(u64));
	siwx_conn_sq_progress(conn);
}

/* The last segment of a Read Response completes its Read */
static void siwx_rx_read_resp_end(struct siwx_conn *conn)
{
	if (!conn->rx_resp_done)
		return;
	conn->rx_resp_done = false;
	siwx_orq_pop(conn);
	siwx_sq_done(conn->qp, conn->rx_resp_cookie, SIWX_WC_SUCCESS,
		     conn->rx_resp_len);
	siwx_conn_sq_progress(conn);
}

/*
 * The peer ended the stream. The oldest outstanding Read or Atomic is
 * what it refused (responses come in request order), so that WR
 * completes with the remote error the Terminate names; the flush that
 * follows completes the rest.
 */
static void siwx_rx_terminated(struct siwx_conn *conn)
{
	static const u8 status[] = {
		[SIWX_TERM_REMOTE_ACCESS] = SIWX_WC_REM_ACCESS_ERR,
		[SIWX_TERM_REMOTE_INVALID] = SIWX_WC_REM_INV_REQ_ERR,
		[SIWX_TERM_REMOTE_OP] = SIWX_WC_REM_OP_ERR,
	};
	struct siwx_term cause = conn->rx.seg.u.term.cause;
	u64 cookie;

	pr_info_ratelimited("siwx: QP %u: Terminate received (layer %u type %u code %u)\n",
			    conn->qp->ibqp.qp_num, cause.layer, cause.etype,
			    cause.ecode);
	conn->rx_dead = true;
	/* QP in ERROR first, then the WR's error completion. */
	siwx_conn_close(conn, true);
	if (siwx_orq_pop_oldest(conn, &cookie))
		siwx_sq_done(conn->qp, cookie,
			     status[siwx_term_classify(cause)], 0);
	/* A Send, Write or Immediate Data has no WR to carry the refusal */
	siwx_term_event(conn->qp, cause);
}

/* An RDMA Write's length, for the Immediate Data that may follow it */
static void siwx_rx_write_end(struct siwx_conn *conn)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;

	conn->rx_write_len += seg->payload_len;
	if (seg->ddp.last) {
		siwx_imm_len_track(&conn->imm, SIWX_OP_WRITE,
				   conn->rx_write_len);
		conn->rx_write_len = 0;
	}
}

void siwx_rx_segment_end(struct siwx_conn *conn)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	u8 op = seg->ddp.opcode;

	if (unlikely(conn->rx_rtr)) {
		/* The RTR is in: the data path may send now */
		conn->rx_rtr = false;
		WRITE_ONCE(conn->rtr_wait, false);
		siwx_conn_kick_tx(conn);
		return;
	}
	/* A tagged message's MR serves its next segment too */
	if (conn->rx_mr && (seg->ddp.last || !seg->ddp.tagged)) {
		siwx_mr_put(conn->rx_mr);
		conn->rx_mr = NULL;
	}
	switch (op) {
	case SIWX_OP_WRITE:
		siwx_rx_write_end(conn);
		return;
	case SIWX_OP_READ_RESP:
		siwx_rx_read_resp_end(conn);
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
		siwx_rx_terminated(conn);
		return;
	}
}
