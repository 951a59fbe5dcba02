// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-cq-ex's client side of the data connection: posting the messages
 * (ibv_post_send and the ibv_wr_* API), the server's acknowledgements,
 * its extended send CQ polled busy (phase "send") and through
 * ibv_poll_cq() (phase "legacy"), with -r resized (phase "resize-send"),
 * and phase "errors" (a Read from a bad rkey and the WRs it flushes).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "cq_ex.h"

#define BAD_RKEY_XOR 0x5a5a0000u	/* an rkey never handed out */
#define ERR_ID 0xe0000000ULL		/* wr_id base of the error phase */

/* The client's send CQ: the timestamps only. */
#define WC_SEND (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
		 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

bool post_ack_recv(struct ctx *x, uint32_t i)
{
	int r = tp_post_recv(&x->c, i, (uint8_t *)x->rbuf.addr + i * MSG_LEN,
			     MSG_LEN, x->rbuf.mr->lkey);

	if (r)
		tp_fail("ibv_post_recv: %s", strerror(r));
	return !r;
}

/* The next server message must be (kind, val) with no failures. */
static bool recv_msg(struct ctx *x, uint64_t kind, uint64_t val)
{
	struct ibv_wc wc;
	uint64_t w[4];
	int r = tp_poll(x->c.rcq, &wc, x->o.r.timeout_ms);

	if (r <= 0) {
		tp_fail("no acknowledgement of message %" PRIu64 " from the "
			"server within %d ms", val - 1, x->o.r.timeout_ms);
		return false;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
	    wc.byte_len != MSG_LEN || wc.wr_id >= 2) {
		tp_fail("server message: status %s, opcode %s, byte_len %u, "
			"wr_id %" PRIu64, tp_wc_status_name(wc.status),
			tp_wc_opcode_name(wc.opcode), wc.byte_len,
			(uint64_t)wc.wr_id);
		return false;
	}
	tp_pdata_get((uint8_t *)x->rbuf.addr + wc.wr_id * MSG_LEN, MSG_LEN, w,
		     4);
	if (w[3]) {
		tp_fail("the server reported %" PRIu64 " failed check(s) by "
			"message %" PRIu64 " (see its output)", w[3], w[2]);
		return false;
	}
	if (w[0] != CQX_MAGIC || w[1] != kind || w[2] != val) {
		tp_fail("server message (kind %" PRIu64 ", value %" PRIu64
			"), expected (kind %" PRIu64 ", value %" PRIu64 ")",
			w[1], w[2], kind, val);
		return false;
	}
	return post_ack_recv(x, (uint32_t)wc.wr_id);
}

/* A WR through ibv_post_send (the classic API), signaled. */
static int post_verbs(struct ctx *x, uint64_t wr_id, enum ibv_wr_opcode op,
		      void *addr, uint32_t len, uint64_t raddr, uint32_t rkey,
		      uint32_t imm_host, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, x->data.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = len ? 1 : 0, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED | flags,
				  .imm_data = htonl(imm_host) };
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(x->c.qp, &wr, &bad);
}

/* A write-with-imm of all 8 octets, through the ibv_wr_* API. */
static int post_imm8(struct ctx *x, uint64_t wr_id, void *addr, uint32_t len,
		     uint64_t raddr, const uint8_t imm[IMM8_LEN])
{
	struct ibv_qp_ex *q = x->c.qpx;

	ibv_wr_start(q);
	q->wr_id = wr_id;
	q->wr_flags = IBV_SEND_SIGNALED;
	x->dv.write_imm8(q, x->rkey, raddr, imm);
	if (len)
		ibv_wr_set_sge(q, x->data.mr->lkey, (uintptr_t)addr, len);
	else
		ibv_wr_set_sge_list(q, 0, NULL);
	return ibv_wr_complete(q);
}

static bool post_msg(struct ctx *x, uint64_t seq)
{
	enum kind k = msg_kind(x->p.seed, seq);
	uint32_t len = msg_len(x->p.seed, seq);
	uint32_t slot = (uint32_t)(seq % x->p.window);
	uint8_t *src = (uint8_t *)x->data.addr + (size_t)slot * SRC_STRIDE;
	uint64_t raddr = x->raddr + slot * x->stride;
	uint8_t imm[IMM8_LEN];
	int r;

	tp_pat_fill(src, len, seq);
	stamp_now(&x->sposted[slot]);
	switch (k) {
	case K_SEND:
		r = post_verbs(x, seq, IBV_WR_SEND, src, len, 0, 0, 0, 0);
		break;
	case K_WIMM:
		r = post_verbs(x, seq, IBV_WR_RDMA_WRITE_WITH_IMM, src, len,
			       raddr, x->rkey, msg_imm(x->p.seed, seq), 0);
		break;
	default:
		msg_imm8(x->p.seed, seq, imm);
		r = post_imm8(x, seq, src, len, raddr, imm);
		break;
	}
	if (r) {
		tp_fail("posting message %" PRIu64 " (%s, %u bytes): %s", seq,
			kind_name[k], len, strerror(r));
		return false;
	}
	x->nsend += k == K_SEND;
	x->nimm4 += k == K_WIMM;
	x->nimm8 += k == K_WIMM8;
	x->bytes += len;
	return true;
}

/* A send completion: what every one must be. */
static void check_sq(struct ctx *x, const struct xwc *w, uint64_t want_id,
		     enum ibv_wc_status want_st, int want_op,
		     const struct stamp *posted, const char *what)
{
	if (w->wr_id != want_id)
		tp_fail("%s: completion for wr_id %" PRIu64 ", expected %"
			PRIu64 " (posting order)", what, w->wr_id, want_id);
	if (w->status != want_st)
		tp_fail("%s: status %s (%d), vendor_err 0x%x; expected %s",
			what, tp_wc_status_name(w->status), w->status,
			w->vendor_err, tp_wc_status_name(want_st));
	/* verbs define the opcode of successful completions only */
	else if (want_op >= 0 && w->opcode != (enum ibv_wc_opcode)want_op)
		tp_fail("%s: opcode %s (%d), expected %s", what,
			tp_wc_opcode_name(w->opcode), w->opcode,
			tp_wc_opcode_name((enum ibv_wc_opcode)want_op));
	check_ts(x, w, posted, what);
}

static enum ibv_wc_opcode send_opcode(const struct ctx *x, uint64_t seq)
{
	return msg_kind(x->p.seed, seq) == K_SEND ? IBV_WC_SEND :
						    IBV_WC_RDMA_WRITE;
}

/*
 * @cnt completions of the extended send CQ, polled busy: start_poll
 * until it finds one, then next_poll until ENOENT. @check gets each with
 * its index, counted from @base; false on timeout or a poll error.
 */
static bool reap_ex(struct ctx *x, uint64_t base, uint64_t cnt,
		    const char *what,
		    void (*check)(struct ctx *, const struct xwc *, uint64_t))
{
	uint64_t got = 0, deadline = tp_now_ms() + (uint64_t)x->o.r.timeout_ms;
	unsigned int spins = 0;
	struct xwc w[MAX_W + 8];
	int i, n;

	while (got < cnt) {
		n = xcq_drain(x, w, (int)(cnt - got));
		if (n < 0)
			return false;
		for (i = 0; i < n; i++)
			check(x, &w[i], base + got++);
		if (n)
			continue;
		if (tp_now_ms() > deadline) {
			tp_fail("%s: %" PRIu64 " of %" PRIu64 " completions "
				"within %d ms", what, got, cnt,
				x->o.r.timeout_ms);
			return false;
		}
		/* One vCPU under TCG: leave the CPU to the soft device. */
		if (++spins > 32)
			usleep(100);
	}
	return true;
}

static void check_data_ex(struct ctx *x, const struct xwc *w, uint64_t seq)
{
	char what[80];

	snprintf(what, sizeof(what), "send completion %" PRIu64 " (%s)", seq,
		 kind_name[msg_kind(x->p.seed, seq)]);
	check_sq(x, w, seq, IBV_WC_SUCCESS, send_opcode(x, seq),
		 &x->sposted[seq % x->p.window], what);
}

/* The same completions through ibv_poll_cq() on the extended CQ. */
static bool reap_legacy(struct ctx *x, uint64_t first, uint64_t cnt)
{
	struct ibv_cq *cq = ibv_cq_ex_to_cq(x->cqx);
	uint64_t seq;
	struct ibv_wc wc;
	int r;

	for (seq = first; seq < first + cnt; seq++) {
		r = tp_poll(cq, &wc, x->o.r.timeout_ms);
		if (r <= 0) {
			tp_fail("send completion %" PRIu64 ": %s", seq,
				r ? "ibv_poll_cq on the extended CQ failed" :
				"none within the time limit (ibv_poll_cq on "
				"the extended CQ)");
			return false;
		}
		if (wc.wr_id != seq || wc.status != IBV_WC_SUCCESS ||
		    wc.opcode != send_opcode(x, seq) ||
		    wc.qp_num != x->c.qp->qp_num)
			tp_fail("send completion %" PRIu64 " (ibv_poll_cq on "
				"the extended CQ): wr_id %" PRIu64 ", status "
				"%s, opcode %s, qp_num %u; expected %" PRIu64
				", IBV_WC_SUCCESS, %s, %u", seq,
				(uint64_t)wc.wr_id,
				tp_wc_status_name(wc.status),
				tp_wc_opcode_name(wc.opcode), wc.qp_num, seq,
				tp_wc_opcode_name(send_opcode(x, seq)),
				x->c.qp->qp_num);
	}
	return true;
}

/*
 * -r: a window's completions in two halves, the send CQ resized after
 * posting (WRs in flight) and between the halves (half the window
 * unpolled, the rest coming); at most the SQ's depth is held.
 */
static bool reap_resizing(struct ctx *x, uint64_t s, uint64_t cnt,
			  bool legacy)
{
	uint64_t h = cnt / 2;
	const char *what = legacy ? "resize-send (legacy windows)" :
				    "resize-send";

	if (!rz_resize(&x->rz, x->c.scq, x->sq_depth, what))
		return false;
	if (legacy ? !reap_legacy(x, s, h) :
		     !reap_ex(x, s, h, "send", check_data_ex))
		return false;
	if (!rz_resize(&x->rz, x->c.scq, x->sq_depth, what))
		return false;
	return legacy ? reap_legacy(x, s + h, cnt - h) :
			reap_ex(x, s + h, cnt - h, "send", check_data_ex);
}

/*
 * Phases "send" and "legacy": the windows, the last ones legacy (with -r
 * "resize-send" too).
 */
bool client_data(struct ctx *x)
{
	uint64_t W = x->p.window, nwin = (x->p.n + W - 1) / W;
	uint64_t nleg = nwin / 4 ? nwin / 4 : 1, s, cnt, first_leg, i;
	unsigned long before = tp_failures;
	bool legacy, last, resize = x->p.flags & P_RESIZE;

	first_leg = (nwin - nleg) * W;
	for (s = 0; s < x->p.n; s += cnt) {
		cnt = x->p.n - s < W ? x->p.n - s : W;
		legacy = s >= first_leg;
		last = s + cnt == x->p.n;
		if (s == first_leg && tp_failures == before)
			tp_log("ok: client: send: %" PRIu64 " completions "
			       "through start/next/end_poll (%" PRIu64
			       " batches): status, wr_id in posting order, "
			       "opcode, both timestamps as expected", s,
			       x->batches);
		for (i = s; i < s + cnt; i++)
			if (!post_msg(x, i))
				return false;
		if (resize) {
			if (!reap_resizing(x, s, cnt, legacy))
				return false;
		} else if (legacy ? !reap_legacy(x, s, cnt) :
				    !reap_ex(x, s, cnt, "send",
					     check_data_ex)) {
			return false;
		}
		if (tp_failures != before)
			return false;
		if (!recv_msg(x, last ? MSG_FINAL : MSG_WINDOW, s + cnt))
			return false;
	}
	if (tp_failures == before)
		tp_log("ok: client: legacy: %" PRIu64 " completions through "
		       "ibv_poll_cq() on the extended send CQ as expected; "
		       "the server verified all %" PRIu64 " messages (%" PRIu64
		       " Sends, %" PRIu64 " 4-octet and %" PRIu64 " 8-octet "
		       "write-with-imm, %" PRIu64 " bytes)", x->p.n - first_leg,
		       x->p.n, x->nsend, x->nimm4, x->nimm8, x->bytes);
	if (resize && tp_failures == before)
		tp_log("ok: client: resize-send: %u ibv_resize_cq of the "
		       "extended SINGLE_THREADED send CQ, after posting each "
		       "window and with half of it reaped (cqe %d..%d, %u "
		       "grew, %u shrank, cq->cqe the size rounded up to a "
		       "power of two); every completion as the send and legacy"
		       " checks expect (none lost, duplicated or reordered)",
		       x->rz.count, x->rz.min, x->rz.max, x->rz.grew,
		       x->rz.shrank);
	return tp_failures == before;
}

/* The error phase's WRs: what each is and must complete with. */
static const struct {
	const char *what;
	enum ibv_wc_status st;
} errs[] = {
	{ "RDMA Read from an invalid rkey", IBV_WC_REM_ACCESS_ERR },
	{ "fenced RDMA Write behind it", IBV_WC_WR_FLUSH_ERR },
	{ "Send behind it", IBV_WC_WR_FLUSH_ERR },
	{ "8-octet write-with-imm behind it", IBV_WC_WR_FLUSH_ERR },
	{ "4-octet write-with-imm behind it", IBV_WC_WR_FLUSH_ERR },
	/* posted once the error was polled: the QP is in ERROR then */
	{ "Send after the error", IBV_WC_WR_FLUSH_ERR },
	{ "8-octet write-with-imm after the error", IBV_WC_WR_FLUSH_ERR },
};

#define NERRS (sizeof(errs) / sizeof(errs[0]))
#define NERRS_BEHIND 5u			/* posted before the first reap */

static struct stamp err_posted[NERRS];

static void check_err(struct ctx *x, const struct xwc *w, uint64_t k)
{
	char what[80];

	snprintf(what, sizeof(what), "errors: %s", errs[k].what);
	tp_vlog("%s: wr_id 0x%" PRIx64 " status %s", what, w->wr_id,
		tp_wc_status_name(w->status));
	check_sq(x, w, ERR_ID + k, errs[k].st, -1, &err_posted[k], what);
}

static bool post_err(struct ctx *x, uint32_t k)
{
	uint8_t *src = x->data.addr;
	uint8_t imm[IMM8_LEN] = { 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7,
				  0xe8 };
	uint64_t id = ERR_ID + k;
	int r;

	stamp_now(&err_posted[k]);
	switch (k) {
	case 0:
		r = post_verbs(x, id, IBV_WR_RDMA_READ, src, 64, x->raddr,
			       x->rkey ^ BAD_RKEY_XOR, 0, 0);
		break;
	case 1:
		/*
		 * An RDMA Write completes once sent (a refused one has no
		 * response to carry the error), so the error goes on the
		 * Read; the fence holds everything behind it until the
		 * Read's answer, which is the Terminate.
		 */
		r = post_verbs(x, id, IBV_WR_RDMA_WRITE, src, 64, x->raddr,
			       x->rkey, 0, IBV_SEND_FENCE);
		break;
	case 2:
	case 5:
		r = post_verbs(x, id, IBV_WR_SEND, src, 16, 0, 0, 0, 0);
		break;
	case 4:
		r = post_verbs(x, id, IBV_WR_RDMA_WRITE_WITH_IMM, src, 0,
			       x->raddr, x->rkey, 0xe4e4, 0);
		break;
	default:
		r = post_imm8(x, id, src, 32, x->raddr, imm);
		break;
	}
	if (r)
		tp_fail("errors: posting the %s: %s", errs[k].what,
			strerror(r));
	return !r;
}

/*
 * Phase "errors". Verbs complete a failed WR with its error and flush
 * everything behind it, also what is posted to the QP in ERROR later.
 */
bool client_errors(struct ctx *x)
{
	unsigned long before = tp_failures;
	struct xwc w;
	uint32_t k;

	for (k = 0; k < NERRS_BEHIND; k++)
		if (!post_err(x, k))
			return false;
	if (!reap_ex(x, 0, NERRS_BEHIND, "errors", check_err))
		return false;
	for (k = NERRS_BEHIND; k < NERRS; k++)
		if (!post_err(x, k))
			return false;
	if (!reap_ex(x, NERRS_BEHIND, NERRS - NERRS_BEHIND,
		     "errors (posted in ERROR)", check_err))
		return false;
	/* Exactly once: nothing may follow. */
	usleep(QUIET_MS * 1000);
	if (xcq_drain(x, &w, 1) > 0)
		tp_fail("errors: a completion after all %zu WRs completed "
			"(wr_id 0x%" PRIx64 ", status %s)", NERRS, w.wr_id,
			tp_wc_status_name(w.status));
	if (tp_failures == before)
		tp_log("ok: client: errors: RDMA Read from an invalid rkey -> "
		       "IBV_WC_REM_ACCESS_ERR; the %u WRs behind it and %zu "
		       "posted after it -> IBV_WC_WR_FLUSH_ERR, each once, in "
		       "order, through start/next/end_poll, timestamps in "
		       "order", NERRS_BEHIND - 1, NERRS - NERRS_BEHIND);
	return tp_failures == before;
}

/*
 * The QP (ibv_create_qp_ex through rdma_create_qp_ex, with the ibv_wr_*
 * operations siwxdv_wr_rdma_write_imm8 needs): sends complete on an
 * extended CQ with the timestamps, the acknowledgements on a plain CQ.
 */
bool client_qp(struct ctx *x)
{
	struct ibv_context *ctx = x->c.id->verbs;
	uint32_t sq = x->p.window + NERRS + 1;
	struct ibv_qp_init_attr_ex qa;

	x->sq_depth = sq;
	/* One thread polls it: no lock needed */
	x->cqx = create_cq_ex(ctx, sq, WC_SEND, IBV_CQ_INIT_ATTR_MASK_FLAGS,
			      IBV_CREATE_CQ_ATTR_SINGLE_THREADED, NULL);
	if (!x->cqx) {
		tp_fail("ibv_create_cq_ex(completion timestamps, "
			"SINGLE_THREADED): %s", strerror(errno));
		return false;
	}
	x->cqx_flags = WC_SEND;
	x->c.scq = ibv_cq_ex_to_cq(x->cqx);
	x->c.rcq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!x->c.rcq) {
		tp_fail("ibv_create_cq: %s", strerror(errno));
		return false;
	}
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RC;
	qa.send_cq = x->c.scq;
	qa.recv_cq = x->c.rcq;
	qa.cap.max_send_wr = sq;
	qa.cap.max_recv_wr = 2;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.pd = x->pd;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND |
			    IBV_QP_EX_WITH_RDMA_READ;
	if (rdma_create_qp_ex(x->c.id, &qa)) {
		tp_fail("rdma_create_qp_ex (send_ops_flags): %s",
			strerror(errno));
		return false;
	}
	x->c.qp = x->c.id->qp;
	x->c.qpx = ibv_qp_to_qp_ex(x->c.qp);
	if (!x->c.qpx) {
		tp_fail("ibv_qp_to_qp_ex returned NULL");
		return false;
	}
	return true;
}
