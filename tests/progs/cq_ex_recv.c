// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-cq-ex's server side of the data connection: its event-driven
 * extended receive CQ with every accepted wc_flag, phase "receive" (every
 * field and byte of each completion), with -r "resize-receive" (the same
 * CQ resized between polls), and phase "flush" (the receives the client's
 * error flushes).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "cq_ex.h"

/*
 * The QP: receives complete on an extended CQ with every accepted flag on
 * a completion channel, the acknowledgements on a plain CQ.
 */
bool server_qp(struct ctx *x)
{
	struct ibv_context *ctx = x->c.id->verbs;
	struct ibv_cq_init_attr_ex ca = {
		.cqe = x->nrecv + 1,
		.cq_context = x,
		.wc_flags = WC_ACCEPTED,
	};
	struct ibv_qp_init_attr_ex qa;

	x->c.rch = ibv_create_comp_channel(ctx);
	if (!x->c.rch) {
		tp_fail("ibv_create_comp_channel: %s", strerror(errno));
		return false;
	}
	ca.channel = x->c.rch;
	x->cqx = ibv_create_cq_ex(ctx, &ca);
	if (!x->cqx) {
		tp_fail("ibv_create_cq_ex(every accepted wc_flag, completion "
			"channel): %s", strerror(errno));
		return false;
	}
	x->cqx_flags = WC_ACCEPTED;
	x->c.rcq = ibv_cq_ex_to_cq(x->cqx);
	x->c.scq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!x->c.scq) {
		tp_fail("ibv_create_cq: %s", strerror(errno));
		return false;
	}
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RC;
	qa.send_cq = x->c.scq;
	qa.recv_cq = x->c.rcq;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = x->nrecv;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.pd = x->pd;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (rdma_create_qp_ex(x->c.id, &qa)) {
		tp_fail("rdma_create_qp_ex: %s", strerror(errno));
		return false;
	}
	x->c.qp = x->c.id->qp;
	/* Armed before the first completion can come */
	if (ibv_req_notify_cq(x->c.rcq, 0)) {
		tp_fail("ibv_req_notify_cq on the extended CQ failed");
		return false;
	}
	return true;
}

bool post_recv_slot(struct ctx *x, uint32_t slot)
{
	uint8_t *b = (uint8_t *)x->rbuf.addr + (size_t)slot * RECV_BUF;
	int r;

	memset(b, CANARY, RECV_BUF);
	stamp_now(&x->rposted[slot]);
	r = tp_post_recv(&x->c, slot, b, RECV_BUF, x->rbuf.mr->lkey);
	if (r) {
		tp_fail("ibv_post_recv: %s", strerror(r));
		return false;
	}
	x->rq[(x->rq_head + x->rq_len++) % MAX_W] = slot;
	return true;
}

/* The RQ's oldest receive, which the next completion must consume. */
static bool rq_pop(struct ctx *x, uint64_t wr_id, const char *what)
{
	uint32_t want = x->rq[x->rq_head];

	if (!x->rq_len) {
		tp_fail("%s: a receive completion (wr_id %" PRIu64 ") with no"
			" receive posted", what, wr_id);
		return false;
	}
	if (wr_id != want) {
		tp_fail("%s: completion for receive %" PRIu64 ", expected %u"
			" (the RQ's oldest)", what, wr_id, want);
		return false;
	}
	x->rq_head = (x->rq_head + 1) % MAX_W;
	x->rq_len--;
	return true;
}

/* To the client: (kind, val) and how many checks of its data failed. */
static bool send_msg(struct ctx *x, uint64_t kind, uint64_t val)
{
	uint64_t w[4] = { CQX_MAGIC, kind, val, tp_failures - x->fail_base };
	int r;

	tp_pdata_put(x->msg.addr, w, 4);
	r = tp_post_send(&x->c, kind, x->msg.addr, MSG_LEN, x->msg.mr->lkey,
			 IBV_SEND_SIGNALED);
	if (r) {
		tp_fail("posting the Send to the client: %s", strerror(r));
		return false;
	}
	return tp_wait_ok(x->c.scq, IBV_WC_SEND, kind, "Send to the client",
			  x->o.r.timeout_ms, NULL);
}

/*
 * Server: one data completion, message @seq, every field and byte. False
 * when it cannot be the receive expected (its buffer is not to be reused).
 */
static bool check_recv(struct ctx *x, const struct xwc *w, uint64_t seq)
{
	enum kind k = msg_kind(x->p.seed, seq);
	uint32_t len = msg_len(x->p.seed, seq);
	unsigned int want_flags = k == K_SEND ? 0 : IBV_WC_WITH_IMM;
	enum ibv_wc_opcode want_op = k == K_SEND ? IBV_WC_RECV :
				     IBV_WC_RECV_RDMA_WITH_IMM;
	uint8_t *slot = (uint8_t *)x->data.addr +
			(seq % x->p.window) * x->stride;
	uint8_t *rb, imm8[IMM8_LEN];
	uint32_t imm4;
	char what[96];
	int64_t bad;

	snprintf(what, sizeof(what), "message %" PRIu64 " (%s, %u bytes)",
		 seq, kind_name[k], len);
	tp_vlog("%s: status %s, opcode %s, byte_len %u, wc_flags 0x%x, "
		"imm 0x%08x, ts %" PRIu64, what, tp_wc_status_name(w->status),
		tp_wc_opcode_name(w->opcode), w->byte_len, w->wc_flags,
		ntohl(w->imm_data), w->ts);
	if (w->status != IBV_WC_SUCCESS) {
		tp_fail("%s: status %s (%d), vendor_err 0x%x", what,
			tp_wc_status_name(w->status), w->status,
			w->vendor_err);
		return false;
	}
	if (!rq_pop(x, w->wr_id, what))
		return false;
	check_ts(x, w, &x->rposted[w->wr_id], what);
	if (w->opcode != want_op)
		tp_fail("%s: opcode %s (%d), expected %s", what,
			tp_wc_opcode_name(w->opcode), w->opcode,
			tp_wc_opcode_name(want_op));
	if (w->byte_len != len)
		tp_fail("%s: byte_len %u, expected %u", what, w->byte_len,
			len);
	if (w->wc_flags != want_flags)
		tp_fail("%s: wc_flags 0x%x, expected 0x%x (IBV_WC_WITH_IMM "
			"exactly when Immediate Data came)", what, w->wc_flags,
			want_flags);
	want_imm8(x->p.seed, seq, imm8);
	/* imm_data means something only with IBV_WC_WITH_IMM */
	memcpy(&imm4, imm8, 4);
	if (want_flags && w->imm_data != imm4)
		tp_fail("%s: imm_data 0x%08x, expected 0x%08x (host order)",
			what, ntohl(w->imm_data), ntohl(imm4));
	if (memcmp(w->imm8, imm8, IMM8_LEN))
		tp_fail("%s: siwxdv_wc_read_imm8 %02x%02x%02x%02x %02x%02x%02x"
			"%02x, expected %02x%02x%02x%02x %02x%02x%02x%02x",
			what, w->imm8[0], w->imm8[1], w->imm8[2], w->imm8[3],
			w->imm8[4], w->imm8[5], w->imm8[6], w->imm8[7],
			imm8[0], imm8[1], imm8[2], imm8[3], imm8[4], imm8[5],
			imm8[6], imm8[7]);
	if (w->qp_num != x->c.qp->qp_num)
		tp_fail("%s: qp_num %u, expected %u", what, w->qp_num,
			x->c.qp->qp_num);
	if (w->src_qp || w->slid || w->sl || w->dlid_path_bits)
		tp_fail("%s: src_qp %u, slid %u, sl %u, dlid_path_bits %u; "
			"expected all 0 on iWARP", what, w->src_qp, w->slid,
			w->sl, w->dlid_path_bits);
	rb = (uint8_t *)x->rbuf.addr + w->wr_id * RECV_BUF;
	if (k == K_SEND) {
		bad = tp_pat_check(rb, len, seq);
		if (bad >= 0)
			tp_fail("%s: payload byte %" PRId64 " is 0x%02x, "
				"expected 0x%02x", what, bad, rb[bad],
				tp_pat_byte(seq, (uint32_t)bad));
		bad = canary_check(rb + len, RECV_BUF - len);
		if (bad >= 0)
			tp_fail("%s: receive buffer written at offset %" PRId64
				" past the payload", what, len + bad);
		x->nsend++;
		x->bytes += len;
		return true;
	}
	bad = canary_check(rb, RECV_BUF);
	if (bad >= 0)
		tp_fail("%s: the receive it consumed was written at offset %"
			PRId64, what, bad);
	bad = tp_pat_check(slot, len, seq);
	if (bad >= 0)
		tp_fail("%s: written byte %" PRId64 " is 0x%02x, expected "
			"0x%02x%s", what, bad, slot[bad],
			tp_pat_byte(seq, (uint32_t)bad),
			slot[bad] == CANARY ? " (never written)" : "");
	bad = canary_check(slot + len, GUARD);
	if (bad >= 0)
		tp_fail("%s: byte %" PRId64 " after the write's end was "
			"written (0x%02x)", what, bad, slot[len + bad]);
	memset(slot, CANARY, (size_t)len + GUARD);
	if (k == K_WIMM)
		x->nimm4++;
	else
		x->nimm8++;
	x->bytes += len;
	return true;
}

/* What the receive CQ holds when no event came: for the message. */
static const char *rcq_diagnosis(struct ctx *x)
{
	struct xwc w;
	int n = xcq_drain(x, &w, 1);

	return n > 0 ? "a completion is in the CQ but no event came" :
	       n == 0 ? "no completion arrived either" : "polling failed";
}

/*
 * One completion event of the receive CQ within @ms, acknowledged, the CQ
 * armed again before it is polled (so that no completion goes without an
 * event): 1, 0 (none in time) or -1.
 */
static int rcq_event(struct ctx *x, int ms)
{
	struct pollfd p = { .fd = x->c.rch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;
	int r = poll(&p, 1, ms);

	if (r <= 0)
		return r < 0 && errno != EINTR ? -1 : 0;
	if (ibv_get_cq_event(x->c.rch, &cq, &cq_ctx)) {
		tp_fail("ibv_get_cq_event: %s", strerror(errno));
		return -1;
	}
	/* Acknowledged whatever it is: ibv_destroy_cq waits for that. */
	ibv_ack_cq_events(cq, 1);
	x->events++;
	if (cq != x->c.rcq || cq_ctx != x) {
		tp_fail("ibv_get_cq_event: CQ %p with context %p, expected "
			"the extended receive CQ %p with context %p",
			(void *)cq, cq_ctx, (void *)x->c.rcq, (void *)x);
		return -1;
	}
	if (ibv_req_notify_cq(cq, 0)) {
		tp_fail("ibv_req_notify_cq on the extended CQ failed");
		return -1;
	}
	return 1;
}

/* -r: what the receive CQ's resizes since the last event were, if any. */
static const char *rz_note(struct ctx *x)
{
	static char note[224];

	if (x->rz_idle_pending)
		snprintf(note, sizeof(note), "; before this wait the receive "
			 "CQ was armed with nothing held or pending, then "
			 "resized twice: with a completion in the CQ, the arm "
			 "did not survive ibv_resize_cq");
	else if (x->rz_since_event)
		snprintf(note, sizeof(note), "; the receive CQ was resized %u "
			 "time(s) while armed since the last event: the arm "
			 "did not survive ibv_resize_cq?", x->rz_since_event);
	else
		note[0] = 0;
	return note;
}

/* -r: the next resize of the receive CQ (at most a window held). */
static bool rcq_resize(struct ctx *x, const char *when)
{
	char what[96];

	snprintf(what, sizeof(what), "resize-receive (%s)", when);
	if (!rz_resize(&x->rz, x->c.rcq, (uint32_t)x->p.window, what))
		return false;
	x->rz_since_event++;
	return true;
}

/*
 * -r, at a window's end before its acknowledgement, when nothing can
 * complete on the receive CQ: take the events of completions polled
 * already, arm the CQ, make sure it holds nothing, resize it twice. The
 * client's next Send must then raise an event through the arm made
 * before the resizes.
 */
static bool rcq_resize_idle(struct ctx *x)
{
	struct pollfd p = { .fd = x->c.rch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	struct xwc w;
	void *cq_ctx;
	int n;

	while (poll(&p, 1, 0) > 0) {
		if (ibv_get_cq_event(x->c.rch, &cq, &cq_ctx)) {
			tp_fail("ibv_get_cq_event: %s", strerror(errno));
			return false;
		}
		ibv_ack_cq_events(cq, 1);
		x->events++;
	}
	if (ibv_req_notify_cq(x->c.rcq, 0)) {
		tp_fail("ibv_req_notify_cq on the extended CQ failed");
		return false;
	}
	n = xcq_drain(x, &w, 1);
	if (n > 0)
		tp_fail("resize-receive: a receive completion (wr_id %" PRIu64
			", status %s) before the window was acknowledged",
			w.wr_id, tp_wc_status_name(w.status));
	if (n)
		return false;
	if (!rcq_resize(x, "armed, nothing held, before the acknowledgement")
	    || !rcq_resize(x, "armed, nothing held, before the "
			   "acknowledgement"))
		return false;
	x->rz_idle_rounds++;
	x->rz_idle_pending = true;
	return true;
}

/* Phase "receive" (with -r "resize-receive" too). */
bool server_data(struct ctx *x)
{
	bool resize = x->p.flags & P_RESIZE;
	uint64_t seq = 0, next_ack = x->p.window;
	struct xwc w[MAX_W];
	int i, n, r;

	x->fail_base = tp_failures;
	while (seq < x->p.n) {
		r = rcq_event(x, x->o.r.timeout_ms);
		if (r == 0)
			tp_fail("message %" PRIu64 ": no CQ event within %d ms "
				"(%s)%s", seq, x->o.r.timeout_ms,
				rcq_diagnosis(x), rz_note(x));
		if (r <= 0)
			return false;
		x->rz_idle_proven += x->rz_idle_pending;
		x->rz_idle_pending = false;
		x->rz_since_event = 0;
		/* Armed again, the event's completion(s) not yet polled */
		if (resize && rcq_resize(x, "after a CQ event, armed, "
					 "before polling"))
			x->rz_after_event++;
		n = xcq_drain(x, w, MAX_W);
		if (n < 0)
			return false;
		/* An event may find its completion taken by the last batch */
		for (i = 0; i < n; i++) {
			if (seq >= x->p.n) {
				tp_fail("a receive completion after the last "
					"message (status %s, opcode %s)",
					tp_wc_status_name(w[i].status),
					tp_wc_opcode_name(w[i].opcode));
				break;
			}
			if (!check_recv(x, &w[i], seq++))
				break;
		}
		/*
		 * The client stops at the first acknowledgement that reports
		 * failures: so do we, after telling it.
		 */
		if (tp_failures != x->fail_base) {
			send_msg(x, MSG_FINAL, seq);
			return false;
		}
		/* The receives back before the client may send again */
		for (i = 0; i < n; i++)
			if (!post_recv_slot(x, (uint32_t)w[i].wr_id))
				return false;
		/* Between polls: armed, the client's Sends in flight */
		if (resize && rcq_resize(x, "between polls, armed"))
			x->rz_between++;
		if (resize && seq >= next_ack && seq < x->p.n)
			rcq_resize_idle(x);
		if (resize && tp_failures != x->fail_base) {
			send_msg(x, MSG_FINAL, seq);
			return false;
		}
		if (seq >= next_ack && seq < x->p.n) {
			if (!send_msg(x, MSG_WINDOW, seq))
				return false;
			next_ack = seq + x->p.window;
		}
	}
	/* Nothing more, and nothing written anywhere else. */
	n = xcq_drain(x, w, MAX_W);
	if (n > 0)
		tp_fail("%d receive completion(s) after the last message "
			"(the first: status %s, wr_id %" PRIu64 ")", n,
			tp_wc_status_name(w[0].status), w[0].wr_id);
	if (canary_check(x->data.addr, x->data.len) >= 0)
		tp_fail("stray write: the buffer changed outside the writes");
	if (tp_failures == x->fail_base)
		tp_log("ok: server: receive: %" PRIu64 " completions through %"
		       PRIu64 " CQ events in %" PRIu64 " start/next/end_poll "
		       "batches: %" PRIu64 " Sends, %" PRIu64 " 4-octet and %"
		       PRIu64 " 8-octet write-with-imm, %" PRIu64 " bytes; "
		       "status, wr_id, opcode, byte_len, wc_flags, imm_data, "
		       "imm8, qp_num, src_qp/slid/sl/dlid_path_bits, both "
		       "timestamps and the data as expected", x->p.n,
		       x->events, x->batches, x->nsend, x->nimm4, x->nimm8,
		       x->bytes);
	if (resize && tp_failures == x->fail_base)
		tp_log("ok: server: resize-receive: %u ibv_resize_cq of the "
		       "event-driven extended receive CQ amid those messages "
		       "(cqe %d..%d, %u grew, %u shrank, cq->cqe the size "
		       "rounded up to a power of two): %u right after a CQ "
		       "event, armed, completions unpolled; %u between polls, "
		       "armed, Sends in flight; %u rounds of two while armed "
		       "with nothing held before a window's acknowledgement, "
		       "the arm raising the next event %u times; every "
		       "completion as in the receive phase (none lost, "
		       "duplicated or reordered)", x->rz.count, x->rz.min,
		       x->rz.max, x->rz.grew, x->rz.shrank, x->rz_after_event,
		       x->rz_between, x->rz_idle_rounds, x->rz_idle_proven);
	return send_msg(x, MSG_FINAL, x->p.n);
}

/*
 * Phase "flush": the client's Read with a bad rkey makes this side send a
 * Terminate, which puts the QP in ERROR: every receive still posted comes
 * back flushed, once, in RQ order, through the event-driven extended CQ;
 * and the connection ends.
 */
bool server_flush(struct ctx *x)
{
	struct pollfd p[2] = { { .fd = x->c.rch->fd, .events = POLLIN },
			       { .fd = x->ec->fd, .events = POLLIN } };
	uint64_t deadline = tp_now_ms() + (uint64_t)x->o.r.timeout_ms;
	unsigned long before = tp_failures;
	uint32_t flushed = 0, posted = x->rq_len;
	struct rdma_cm_event *ev;
	bool ended = false;
	struct xwc w[MAX_W];
	char what[64];
	int i, n;

	while (flushed < posted || !ended) {
		uint64_t now = tp_now_ms();

		if (now >= deadline) {
			tp_fail("flush: after the client's error %u of %u "
				"receives flushed (%s), the connection %s "
				"within %d ms", flushed, posted,
				rcq_diagnosis(x), ended ? "ended" :
				"did not end", x->o.r.timeout_ms);
			return false;
		}
		if (poll(p, 2, (int)(deadline - now)) <= 0)
			continue;
		if (p[0].revents) {
			if (rcq_event(x, 0) < 0)
				return false;
			n = xcq_drain(x, w, MAX_W);
			if (n < 0)
				return false;
			for (i = 0; i < n; i++) {
				snprintf(what, sizeof(what), "flush: receive %"
					 PRIu64, w[i].wr_id);
				if (w[i].status != IBV_WC_WR_FLUSH_ERR)
					tp_fail("%s: status %s, expected "
						"IBV_WC_WR_FLUSH_ERR", what,
						tp_wc_status_name(w[i].status));
				if (!rq_pop(x, w[i].wr_id, what))
					return false;
				if (w[i].qp_num != x->c.qp->qp_num)
					tp_fail("%s: qp_num %u, expected %u",
						what, w[i].qp_num,
						x->c.qp->qp_num);
				check_ts(x, &w[i], &x->rposted[w[i].wr_id],
					 what);
				flushed++;
			}
		}
		if (p[1].revents && !rdma_get_cm_event(x->ec, &ev)) {
			tp_vlog("rdma_cm event %s",
				rdma_event_str(ev->event));
			if (ev->id == x->c.id &&
			    (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
			     ev->event == RDMA_CM_EVENT_CONNECT_ERROR))
				ended = true;
			rdma_ack_cm_event(ev);
		}
	}
	/* Once each: nothing may follow. */
	usleep(QUIET_MS * 1000);
	n = xcq_drain(x, w, MAX_W);
	if (n > 0)
		tp_fail("flush: %d completion(s) after every receive was "
			"flushed (the first: wr_id %" PRIu64 ", status %s)", n,
			w[0].wr_id, tp_wc_status_name(w[0].status));
	if (tp_failures == before)
		tp_log("ok: server: flush: the %u posted receives came back "
		       "IBV_WC_WR_FLUSH_ERR once each, in RQ order, through "
		       "CQ events and start/next/end_poll, timestamps in "
		       "order", posted);
	return true;
}
