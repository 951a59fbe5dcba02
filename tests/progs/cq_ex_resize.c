// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-cq-ex's ibv_resize_cq (with -r): the cycle of sizes every resize
 * phase steps through, and the second connection with its phases
 * "resize-below" (resizes below the completions held refused) and
 * "resize-load" (resizes while another thread polls), set up by both
 * sides after the receive phase.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cq_ex.h"

/* The resize phases' second connection (see cq_ex.c's top comment). */
#define RL_MAGIC 0x5349575843515852ULL	/* "SIWXCQXR" */
#define RL_DEPTH 16u			/* Writes in flight at most */
#define RL_WRITES 512u			/* a multiple of RL_DEPTH */
#define RL_SLOT 1024u			/* bytes per Write slot, at most */
#define RL_CQE 32			/* the send CQ's entries */
#define RL_HELD 8u			/* completions held for "below" */
#define RL_MAX_RESIZES 2000u		/* per side, in "resize-load" */
#define RL_ID_BELOW UINT64_C(0xb0000000)
#define RL_ID_LOAD UINT64_C(0xc0000000)
#define RL_ID_DONE UINT64_C(0xd0000000)

/*
 * The sizes a CQ cycles through, in eighths of its floor (the most
 * completions it can hold then): 1 to 8 times it, growing and shrinking
 * in turn, some not powers of two.
 */
static const uint8_t rz_eighths[] = { 8, 32, 17, 64, 24, 9, 48, 12, 40, 8,
				      26, 64, 10 };

#define RZ_CYCLE (sizeof(rz_eighths) / sizeof(rz_eighths[0]))

static int pow2_up(int n)
{
	int p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* ibv_resize_cq's error: the errno value it returns (or sets). */
static int resize_err(int r)
{
	return r < 0 ? (errno ? errno : -r) : r;
}

/*
 * Resize @cq to the next size of @z's cycle over @floor, while it holds
 * at most @floor completions: it must succeed and report the size rounded
 * up to a power of two. False after tp_fail().
 */
bool rz_resize(struct rz *z, struct ibv_cq *cq, uint32_t floor,
	       const char *what)
{
	int n = (int)((floor * rz_eighths[z->next++ % RZ_CYCLE] + 7) / 8);
	int old = cq->cqe, r;

	errno = 0;
	r = ibv_resize_cq(cq, n);
	if (r) {
		tp_fail("%s: ibv_resize_cq(%d) of a CQ of %d entries holding "
			"at most %u completions: %s", what, n, old, floor,
			strerror(resize_err(r)));
		return false;
	}
	if (cq->cqe != pow2_up(n)) {
		tp_fail("%s: after ibv_resize_cq(%d) cq->cqe is %d, expected "
			"%d (the size rounded up to a power of two)", what, n,
			cq->cqe, pow2_up(n));
		return false;
	}
	if (!z->count || cq->cqe < z->min)
		z->min = cq->cqe;
	if (!z->count || cq->cqe > z->max)
		z->max = cq->cqe;
	z->count++;
	z->grew += cq->cqe > old;
	z->shrank += cq->cqe < old;
	return true;
}

/* The resize phases' second connection: "resize-below", "resize-load". */

struct rl {
	struct tp_conn c;
	struct tp_buf src;		/* our Writes' sources */
	struct tp_buf dst;		/* where the peer's Writes land */
	struct tp_buf msg;		/* [0]: our end message, [1]: peer's */
	uint64_t raddr;			/* the peer's dst */
	uint32_t rkey;
	struct rz rz;
	/* Shared with the poller thread (__atomic) */
	uint64_t done;			/* completions it polled */
	int stop;			/* we give up */
	int bad;			/* it found a wrong completion */
	/* The poller's finding, read after pthread_join */
	int poll_ret;
	uint64_t bad_at;
	struct ibv_wc bad_wc;
};

static uint32_t rl_len(uint64_t seq)
{
	return 1 + (uint32_t)(tp_mix(RL_MAGIC, seq) % RL_SLOT);
}

/* A signaled RDMA Write of @len bytes of pattern @id into the peer's @slot */
static int rl_write(struct rl *l, uint64_t id, uint32_t slot, uint32_t len)
{
	uint8_t *src = (uint8_t *)l->src.addr + (size_t)slot * RL_SLOT;

	tp_pat_fill(src, len, id);
	return tp_post_write(&l->c, id, src, len, l->src.mr->lkey,
			     l->raddr + (uint64_t)slot * RL_SLOT, l->rkey,
			     IBV_SEND_SIGNALED);
}

/*
 * Buffers, CQs and the QP of the second connection (its id is resolved or
 * requested): Writes complete on a plain CQ of RL_CQE entries with a
 * completion channel, the end messages on a plain CQ of their own.
 */
static bool rl_setup(struct ctx *x, struct rl *l)
{
	struct ibv_context *ctx = l->c.id->verbs;
	struct ibv_qp_init_attr_ex qa;
	size_t len = (size_t)RL_DEPTH * RL_SLOT;
	int r;

	if (ctx != x->c.id->verbs) {
		tp_fail("resize: the second connection is on another device");
		return false;
	}
	l->c.pd = x->pd;
	if (!tp_buf_alloc(&l->src, x->pd, len, len, IBV_ACCESS_LOCAL_WRITE) ||
	    !tp_buf_alloc(&l->dst, x->pd, len, len, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE) ||
	    !tp_buf_alloc(&l->msg, x->pd, 2 * MSG_LEN, 2 * MSG_LEN,
			  IBV_ACCESS_LOCAL_WRITE))
		return false;
	l->c.rch = ibv_create_comp_channel(ctx);
	if (!l->c.rch) {
		tp_fail("ibv_create_comp_channel: %s", strerror(errno));
		return false;
	}
	l->c.scq = ibv_create_cq(ctx, RL_CQE, l, l->c.rch, 0);
	l->c.rcq = ibv_create_cq(ctx, 2, NULL, NULL, 0);
	if (!l->c.scq || !l->c.rcq) {
		tp_fail("ibv_create_cq: %s", strerror(errno));
		return false;
	}
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RC;
	qa.send_cq = l->c.scq;
	qa.recv_cq = l->c.rcq;
	qa.cap.max_send_wr = RL_DEPTH + 1;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.pd = x->pd;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (rdma_create_qp_ex(l->c.id, &qa)) {
		tp_fail("rdma_create_qp_ex: %s", strerror(errno));
		return false;
	}
	l->c.qp = l->c.id->qp;
	/* The peer's end message: a Send must find its receive */
	r = tp_post_recv(&l->c, RL_ID_DONE,
			 (uint8_t *)l->msg.addr + MSG_LEN, MSG_LEN,
			 l->msg.mr->lkey);
	if (r)
		tp_fail("ibv_post_recv: %s", strerror(r));
	return !r;
}

/* Our private data on the second connection: where the peer writes. */
static void rl_pdata(struct rl *l, uint8_t *pd)
{
	uint64_t w[3] = { RL_MAGIC, (uintptr_t)l->dst.addr, l->dst.mr->rkey };

	tp_pdata_put(pd, w, 3);
}

static bool rl_peer_pdata(struct rl *l)
{
	uint64_t w[3];

	if (!tp_pdata_get(l->c.peer_pdata, l->c.peer_pdata_len, w, 3) ||
	    w[0] != RL_MAGIC) {
		tp_fail("resize: the second connection's peer sent no usable "
			"private data (%zu bytes)", l->c.peer_pdata_len);
		return false;
	}
	l->raddr = w[1];
	l->rkey = (uint32_t)w[2];
	return true;
}

/* One completion event of the send CQ within -t, acknowledged. */
static bool rl_event(struct ctx *x, struct rl *l, const char *what)
{
	struct pollfd p = { .fd = l->c.rch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;

	if (poll(&p, 1, x->o.r.timeout_ms) != 1) {
		tp_fail("%s: no completion event within %d ms", what,
			x->o.r.timeout_ms);
		return false;
	}
	if (ibv_get_cq_event(l->c.rch, &cq, &cq_ctx)) {
		tp_fail("%s: ibv_get_cq_event: %s", what, strerror(errno));
		return false;
	}
	ibv_ack_cq_events(cq, 1);
	if (cq != l->c.scq || cq_ctx != l) {
		tp_fail("%s: an event of CQ %p (context %p), expected %p (%p)",
			what, (void *)cq, cq_ctx, (void *)l->c.scq, (void *)l);
		return false;
	}
	return true;
}

/* ibv_resize_cq(@n) must fail with EINVAL and leave cq->cqe at @cqe. */
static void rl_refused(struct rl *l, int n, int cqe, const char *why,
		       const char *who)
{
	struct ibv_cq *cq = l->c.scq;
	int r, e;

	errno = 0;
	r = ibv_resize_cq(cq, n);
	e = r ? resize_err(r) : 0;
	if (!r)
		tp_fail("%s: resize-below: ibv_resize_cq(%d) %s succeeded, "
			"expected EINVAL", who, n, why);
	else if (e != EINVAL)
		tp_fail("%s: resize-below: ibv_resize_cq(%d) %s failed with %s,"
			" expected EINVAL", who, n, why, strerror(e));
	if (cq->cqe != cqe)
		tp_fail("%s: resize-below: after ibv_resize_cq(%d) %s cq->cqe "
			"is %d, was %d", who, n, why, cq->cqe, cqe);
}

/* Completions @first.. of "below", there to poll now, in order. */
static bool rl_poll_held(struct rl *l, uint32_t first, uint32_t cnt,
			 const char *who)
{
	struct ibv_wc wc;
	uint32_t i;
	int r;

	for (i = first; i < first + cnt; i++) {
		r = ibv_poll_cq(l->c.scq, 1, &wc);
		if (r != 1) {
			tp_fail("%s: resize-below: completion %u of the %u "
				"held: ibv_poll_cq returned %d (%s)", who, i,
				RL_HELD, r, r ? "an error" : "none: lost");
			return false;
		}
		if (wc.wr_id != RL_ID_BELOW + i ||
		    wc.status != IBV_WC_SUCCESS ||
		    wc.opcode != IBV_WC_RDMA_WRITE) {
			tp_fail("%s: resize-below: completion %u of the %u "
				"held: wr_id 0x%" PRIx64 ", status %s, opcode "
				"%s; expected 0x%" PRIx64 ", IBV_WC_SUCCESS, "
				"IBV_WC_RDMA_WRITE", who, i, RL_HELD,
				(uint64_t)wc.wr_id,
				tp_wc_status_name(wc.status),
				tp_wc_opcode_name(wc.opcode),
				RL_ID_BELOW + i);
			return false;
		}
	}
	return true;
}

/*
 * Phase "resize-below": RL_HELD completions held unpolled (each Write
 * posted with the CQ armed and its event awaited: the CQ then holds it),
 * resizes below them or out of range refused, none lost.
 */
static bool rl_below(struct ctx *x, struct rl *l, const char *who)
{
	struct ibv_cq *cq = l->c.scq;
	unsigned long before = tp_failures;
	struct ibv_device_attr da;
	int cqe = cq->cqe, r;
	char what[96];
	struct ibv_wc wc;
	uint32_t i;

	if (ibv_query_device(l->c.id->verbs, &da)) {
		tp_fail("ibv_query_device: %s", strerror(errno));
		return false;
	}
	if (cqe < RL_CQE)
		tp_fail("%s: resize-below: ibv_create_cq(%d) made a CQ of %d "
			"entries", who, RL_CQE, cqe);
	for (i = 0; i < RL_HELD; i++) {
		if (ibv_req_notify_cq(cq, 0)) {
			tp_fail("%s: ibv_req_notify_cq failed", who);
			return false;
		}
		r = rl_write(l, RL_ID_BELOW + i, i, 64);
		if (r) {
			tp_fail("%s: resize-below: posting RDMA Write %u: %s",
				who, i, strerror(r));
			return false;
		}
		snprintf(what, sizeof(what), "%s: resize-below: RDMA Write %u "
			 "of %u, posted with the CQ armed", who, i, RL_HELD);
		if (!rl_event(x, l, what))
			return false;
	}
	rl_refused(l, (int)RL_HELD / 2, cqe, "below the completions held",
		   who);
	rl_refused(l, 0, cqe, "(a size below 1)", who);
	rl_refused(l, -1, cqe, "(a size below 1)", who);
	if (da.max_cqe < INT_MAX)
		rl_refused(l, da.max_cqe + 1, cqe, "(max_cqe + 1)", who);
	else
		tp_fail("%s: ibv_query_device: max_cqe %d", who, da.max_cqe);
	/* All still there: the first half, then exactly as many entries */
	if (!rl_poll_held(l, 0, RL_HELD / 2, who))
		return false;
	errno = 0;
	r = ibv_resize_cq(cq, (int)RL_HELD / 2);
	if (r)
		tp_fail("%s: resize-below: ibv_resize_cq(%u) holding %u "
			"completions (not below them): %s", who, RL_HELD / 2,
			RL_HELD / 2, strerror(resize_err(r)));
	else if (cq->cqe != (int)RL_HELD / 2)
		tp_fail("%s: resize-below: after ibv_resize_cq(%u) cq->cqe is "
			"%d", who, RL_HELD / 2, cq->cqe);
	if (!rl_poll_held(l, RL_HELD / 2, RL_HELD / 2, who))
		return false;
	r = ibv_poll_cq(cq, 1, &wc);
	if (r)
		tp_fail("%s: resize-below: ibv_poll_cq after the %u held "
			"returned %d (wr_id 0x%" PRIx64 ")", who, RL_HELD, r,
			r > 0 ? (uint64_t)wc.wr_id : 0);
	/* Room again for "resize-load"'s first Writes */
	errno = 0;
	r = ibv_resize_cq(cq, RL_CQE);
	if (r || cq->cqe != RL_CQE) {
		tp_fail("%s: resize-below: ibv_resize_cq(%d) of the empty CQ: "
			"%s, cq->cqe %d", who, RL_CQE,
			r ? strerror(resize_err(r)) : "success", cq->cqe);
		return false;
	}
	if (tp_failures == before)
		tp_log("ok: %s: resize-below: with %u completions held "
		       "unpolled on a plain CQ of %d entries, ibv_resize_cq to "
		       "%u, 0, -1 and max_cqe + 1 (%d) failed with EINVAL, "
		       "cq->cqe unchanged; all %u then polled in order, a "
		       "resize to exactly the %u held succeeding half way",
		       who, RL_HELD, cqe, RL_HELD / 2, da.max_cqe + 1, RL_HELD,
		       RL_HELD / 2);
	return tp_failures == before;
}

/*
 * The poller of "resize-load": ibv_poll_cq until every Write completed,
 * each checked against posting order; what it finds for the main thread.
 */
static void *rl_poller(void *arg)
{
	struct rl *l = arg;
	struct ibv_wc wc[4];
	unsigned int spins = 0;
	uint64_t got = 0;
	int i, n;

	while (got < RL_WRITES &&
	       !__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE)) {
		n = ibv_poll_cq(l->c.scq, 4, wc);
		if (n < 0) {
			l->poll_ret = n;
			break;
		}
		for (i = 0; i < n; i++) {
			if (got >= RL_WRITES ||
			    wc[i].wr_id != RL_ID_LOAD + got ||
			    wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].opcode != IBV_WC_RDMA_WRITE) {
				l->bad_at = got;
				l->bad_wc = wc[i];
				__atomic_store_n(&l->bad, 1, __ATOMIC_RELEASE);
				return NULL;
			}
			got++;
		}
		__atomic_store_n(&l->done, got, __ATOMIC_RELEASE);
		/* One vCPU under TCG: leave the CPU to the resizer too. */
		if (n)
			spins = 0;
		else if (++spins > 32)
			usleep(50);
	}
	return NULL;
}

/*
 * Phase "resize-load": a second thread polls the send CQ with ibv_poll_cq
 * while this one streams Writes (at most RL_DEPTH in flight, so at most
 * that many held) and resizes the CQ between RL_DEPTH and 8 times it.
 */
static bool rl_load(struct ctx *x, struct rl *l, const char *who)
{
	uint64_t deadline = tp_now_ms() + (uint64_t)x->o.r.timeout_ms;
	uint64_t posted = 0, done = 0, prev = 0;
	unsigned long before = tp_failures;
	struct ibv_cq *cq = l->c.scq;
	struct ibv_wc wc;
	char what[64];
	pthread_t t;
	int r;

	snprintf(what, sizeof(what), "%s: resize-load", who);
	r = pthread_create(&t, NULL, rl_poller, l);
	if (r) {
		tp_fail("pthread_create: %s", strerror(r));
		return false;
	}
	while (done < RL_WRITES &&
	       !__atomic_load_n(&l->bad, __ATOMIC_ACQUIRE)) {
		while (posted < RL_WRITES && posted - done < RL_DEPTH) {
			r = rl_write(l, RL_ID_LOAD + posted,
				     (uint32_t)(posted % RL_DEPTH),
				     rl_len(posted));
			if (r) {
				tp_fail("%s: posting RDMA Write %" PRIu64
					": %s", what, posted, strerror(r));
				break;
			}
			posted++;
		}
		if (r)
			break;
		if (l->rz.count < RL_MAX_RESIZES &&
		    !rz_resize(&l->rz, cq, RL_DEPTH, what))
			break;
		if (tp_now_ms() > deadline) {
			tp_fail("%s: %" PRIu64 " of %u RDMA Write completions "
				"polled within %d ms (%" PRIu64 " posted)",
				what, done, RL_WRITES, x->o.r.timeout_ms,
				posted);
			break;
		}
		done = __atomic_load_n(&l->done, __ATOMIC_ACQUIRE);
		if (done == prev)
			usleep(100);
		prev = done;
	}
	__atomic_store_n(&l->stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	done = __atomic_load_n(&l->done, __ATOMIC_ACQUIRE);
	if (l->bad)
		tp_fail("%s: the polling thread's completion %" PRIu64 ": "
			"wr_id 0x%" PRIx64 ", status %s, opcode %s; expected "
			"0x%" PRIx64 " (posting order), IBV_WC_SUCCESS, "
			"IBV_WC_RDMA_WRITE", what, l->bad_at,
			(uint64_t)l->bad_wc.wr_id,
			tp_wc_status_name(l->bad_wc.status),
			tp_wc_opcode_name(l->bad_wc.opcode),
			RL_ID_LOAD + l->bad_at);
	if (l->poll_ret)
		tp_fail("%s: the polling thread's ibv_poll_cq returned %d",
			what, l->poll_ret);
	if (tp_failures != before)
		return false;
	/* Each once: nothing may follow. */
	usleep(QUIET_MS * 1000);
	r = ibv_poll_cq(cq, 1, &wc);
	if (r)
		tp_fail("%s: ibv_poll_cq after all %u completions returned %d "
			"(wr_id 0x%" PRIx64 ")", what, RL_WRITES, r,
			r > 0 ? (uint64_t)wc.wr_id : 0);
	if (tp_failures == before)
		tp_log("ok: %s: %u RDMA Writes (at most %u in flight) "
		       "completed on a plain CQ (ibv_create_cq) that a second "
		       "thread polled with ibv_poll_cq while this one resized "
		       "it %u times (cqe %d..%d, %u grew, %u shrank, cq->cqe "
		       "the size rounded up to a power of two): each completion"
		       " once, in posting order, none after", what, RL_WRITES,
		       RL_DEPTH, l->rz.count, l->rz.min, l->rz.max, l->rz.grew,
		       l->rz.shrank);
	return tp_failures == before;
}

/*
 * The end of the phases: our end message (how many checks failed here),
 * the peer's, then the peer's last Write to each slot must be there (its
 * Send follows its Writes on the connection).
 */
static bool rl_end(struct ctx *x, struct rl *l, unsigned long fails,
		   const char *who)
{
	uint8_t *dst = l->dst.addr;
	uint64_t w[4] = { RL_MAGIC, RL_WRITES, fails }, seq;
	unsigned long before = tp_failures;
	struct ibv_wc wc;
	int64_t bad;
	uint32_t j;
	int r;

	/* After a failure: whatever is still to complete, first */
	if (fails)
		while (tp_poll(l->c.scq, &wc, QUIET_MS) > 0)
			;
	tp_pdata_put(l->msg.addr, w, 4);
	r = tp_post_send(&l->c, RL_ID_DONE, l->msg.addr, MSG_LEN,
			 l->msg.mr->lkey, IBV_SEND_SIGNALED);
	if (r) {
		tp_fail("%s: resize: posting the end message: %s", who,
			strerror(r));
		return false;
	}
	if (!tp_wait_ok(l->c.scq, IBV_WC_SEND, RL_ID_DONE,
			"resize: the end message", x->o.r.timeout_ms, NULL) ||
	    !tp_wait_ok(l->c.rcq, IBV_WC_RECV, RL_ID_DONE,
			"resize: the peer's end message", x->o.r.timeout_ms,
			&wc))
		return false;
	tp_pdata_get((uint8_t *)l->msg.addr + MSG_LEN, MSG_LEN, w, 4);
	if (wc.byte_len != MSG_LEN || w[0] != RL_MAGIC || w[1] != RL_WRITES) {
		tp_fail("%s: resize: the peer's end message is not one "
			"(%u bytes)", who, wc.byte_len);
		return false;
	}
	if (w[2])
		tp_fail("%s: resize: the peer reported %" PRIu64 " failed "
			"check(s) (see its output)", who, w[2]);
	if (fails)
		return false;
	for (j = 0; j < RL_DEPTH; j++) {
		seq = RL_WRITES - RL_DEPTH + j;
		bad = tp_pat_check(dst + (size_t)j * RL_SLOT, rl_len(seq),
				RL_ID_LOAD + seq);
		if (bad >= 0)
			tp_fail("%s: resize-load: byte %" PRId64 " of the "
				"peer's RDMA Write %" PRIu64 " is 0x%02x, "
				"expected 0x%02x", who, bad, seq,
				dst[(size_t)j * RL_SLOT + (size_t)bad],
				tp_pat_byte(RL_ID_LOAD + seq, (uint32_t)bad));
	}
	return tp_failures == before;
}

/* Both phases and the end, on a connected @l. */
static bool rl_run(struct ctx *x, struct rl *l, const char *who)
{
	unsigned long before = tp_failures;

	if (rl_below(x, l, who))
		rl_load(x, l, who);
	return rl_end(x, l, tp_failures - before, who) &&
	       tp_failures == before;
}

static void rl_free(struct rl *l)
{
	tp_buf_free(&l->src);
	tp_buf_free(&l->dst);
	tp_buf_free(&l->msg);
}

/*
 * -r: the client's second connection (after the receive phase), phases
 * "resize-below" and "resize-load"; the client disconnects it.
 */
bool server_resize(struct ctx *x)
{
	uint8_t pd[TP_ACCEPT_PDATA_MAX];
	struct rl *l = calloc(1, sizeof(*l));
	bool ok = false;

	if (!l)
		tp_die("out of memory");
	if (!tp_get_request(x->ec, x->listen, &l->c, x->o.r.timeout_ms))
		goto out;
	tp_own_channel(&l->c);
	if (!rl_peer_pdata(l) || !rl_setup(x, l))
		goto out;
	rl_pdata(l, pd);
	if (!tp_accept(&l->c, pd, 24, 0, x->o.r.timeout_ms))
		goto out;
	ok = rl_run(x, l, "server");
	ok = tp_close_after_peer(&l->c, 1, x->o.r.timeout_ms) && ok;
out:
	tp_destroy(&l->c);
	rl_free(l);
	free(l);
	return ok;
}

/*
 * -r: a second connection to the server, phases "resize-below" and
 * "resize-load", then we disconnect it.
 */
bool client_resize(struct ctx *x)
{
	uint8_t pd[TP_CONNECT_PDATA_MAX];
	struct rl *l = calloc(1, sizeof(*l));
	bool ok = false;

	if (!l)
		tp_die("out of memory");
	if (!tp_resolve(&l->c, tp_channel(), x->o.r.host, x->o.r.port,
			x->o.r.timeout_ms)) {
		l->c.own_ec = true;
		goto out;
	}
	l->c.own_ec = true;
	if (!rl_setup(x, l))
		goto out;
	rl_pdata(l, pd);
	if (!tp_connect_qp(&l->c, pd, 24, x->o.r.timeout_ms) ||
	    !rl_peer_pdata(l))
		goto out;
	ok = rl_run(x, l, "client");
	tp_close(&l->c, 5000);
out:
	tp_destroy(&l->c);
	rl_free(l);
	free(l);
	return ok;
}
