// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-scale's client: connects, writes, reads, adds and sends on every
 * connection at once, then overflows a CQ on purpose (see scale.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scale.h"

#define SEND_WR 32u		/* each connection's SQ: phases 2 and 3 fit */
#define OVF_CQE 4u		/* the overflowing send CQ, asked for */
#define OVF_WRITES 64u		/* signaled Writes posted on it, unpolled */
#define OVF_LEN 64u

/* wr_id: what a WR is (upper 32 bits) and its number */
enum op { OP_WRITE = 1, OP_READ, OP_FADD, OP_SEND };

#define WR_ID(op, k) ((uint64_t)(op) << 32 | (k))

struct client {
	const struct scale_opts *o;
	struct rdma_event_channel *ec;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct addrinfo *dst;
	unsigned int n;
	struct tp_conn *c;		/* n + 1: the last one is phase 4's */
	struct scale_remote rem;
	struct tp_buf src;		/* n + 1 slots: patterns to write */
	struct tp_buf back;		/* n + 1 slots: what reads brought */
	struct tp_buf res;		/* FetchAdd results, the final counter */
	struct tp_buf msg;		/* the Sends */
	struct scale_memtab mem;
};

static unsigned int idx(const struct client *cl, const struct tp_conn *c)
{
	return (unsigned int)(c - cl->c);
}

/* Phase 1. */

static bool start_conn(struct client *cl, unsigned int i)
{
	if (tp_resolve_start(&cl->c[i], cl->ec, cl->dst->ai_addr))
		return true;
	tp_fail("connection %u: not started", i);
	return false;
}

static bool route_resolved(struct client *cl, struct tp_conn *c)
{
	struct tp_qp_opts q = { .max_send_wr = SEND_WR, .max_recv_wr = 1,
				.max_sge = 1, .rd_atomic = SCALE_RD_ATOMIC };
	uint64_t w[2] = { SCALE_MAGIC, idx(cl, c) };
	uint8_t pdata[16];

	if (c->id->verbs != cl->ctx) {
		tp_fail("connection %u resolved to another device", idx(cl, c));
		return false;
	}
	c->pd = cl->pd;
	tp_pdata_put(pdata, w, 2);
	return tp_setup_qp(c, &q) &&
	       tp_connect_start(c, pdata, sizeof(pdata));
}

/* The accept's private data: the server's MR, the same for all. */
static bool established(struct client *cl, struct tp_conn *c)
{
	struct scale_remote r;

	if (!tp_pdata_get(c->peer_pdata, c->peer_pdata_len, &r.addr, 3)) {
		tp_fail("connection %u: no MR in the accept", idx(cl, c));
		return false;
	}
	if (!cl->rem.len)
		cl->rem = r;
	if (memcmp(&r, &cl->rem, sizeof(r))) {
		tp_fail("connection %u: another MR in the accept", idx(cl, c));
		return false;
	}
	return true;
}

/* One event of phase 1; *@done counts the connections established. */
static bool connect_event(struct client *cl, struct rdma_cm_event *ev,
			  unsigned int *done)
{
	struct tp_conn *c = ev->id->context;
	bool ok = false;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ok = !rdma_resolve_route(c->id, 5000);
		if (!ok)
			tp_fail("rdma_resolve_route: %s", strerror(errno));
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ok = route_resolved(cl, c);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		tp_save_pdata(c, &ev->param.conn);
		ok = established(cl, c);
		(*done)++;
		scale_mem_mark(&cl->mem, *done, cl->n);
		break;
	default:
		tp_bad_event(ev, "connecting");
		break;
	}
	rdma_ack_cm_event(ev);
	return ok;
}

static bool connect_all(struct client *cl)
{
	unsigned int win = cl->o->window ? cl->o->window : cl->n;
	unsigned int started = 0, done = 0;
	uint64_t t0 = tp_now_ms(), ms;
	struct rdma_cm_event *ev;

	while (done < cl->n) {
		while (started < cl->n && started - done < win)
			if (!start_conn(cl, started++))
				return false;
		ev = tp_next_event(cl->ec, cl->o->r.timeout_ms,
				      "connecting");
		if (!ev || !connect_event(cl, ev, &done)) {
			tp_fail("%u of %u connections established", done,
				cl->n);
			return false;
		}
	}
	ms = tp_now_ms() - t0;
	tp_log("connect rate: %u connections in %" PRIu64 " ms = %.1f conn/s"
	       " (at most %u under way)", cl->n, ms,
	       ms ? cl->n * 1000.0 / (double)ms : 0.0, win);
	return true;
}

/* Phase 2. */

static uint8_t *slot(const struct tp_buf *b, unsigned int i)
{
	return (uint8_t *)b->addr + (size_t)i * SCALE_SLOT;
}

static uint64_t *result(const struct client *cl, unsigned int i,
			unsigned int k)
{
	return (uint64_t *)cl->res.addr + (size_t)i * SCALE_FADDS + k;
}

static bool buffers(struct client *cl)
{
	size_t slots = (size_t)(cl->n + 1) * SCALE_SLOT;
	size_t res = ((size_t)cl->n * SCALE_FADDS + 1) * 8;
	size_t msg = (size_t)cl->n * SCALE_SENDS * SCALE_MSG;
	unsigned int i;

	if (!tp_buf_alloc(&cl->src, cl->pd, slots, slots, 0) ||
	    !tp_buf_alloc(&cl->back, cl->pd, slots, slots,
			  IBV_ACCESS_LOCAL_WRITE) ||
	    !tp_buf_alloc(&cl->res, cl->pd, res, res, IBV_ACCESS_LOCAL_WRITE) ||
	    !tp_buf_alloc(&cl->msg, cl->pd, msg, msg, 0))
		return false;
	for (i = 0; i <= cl->n; i++)
		scale_pattern(slot(&cl->src, i), i);
	memset(cl->res.addr, 0xff, res);	/* no FetchAdd returns that */
	return true;
}

/* Write, Read back, FetchAdds; connection 0 also the last page. */
static int post_data(struct client *cl, unsigned int i)
{
	const struct scale_remote *r = &cl->rem;
	struct tp_conn *c = &cl->c[i];
	uint64_t to = r->addr + scale_slot(r, cl->n, i);
	unsigned int k, f = IBV_SEND_SIGNALED;
	int e;

	e = tp_post_write(c, WR_ID(OP_WRITE, 0), slot(&cl->src, i), SCALE_SLOT,
			  cl->src.mr->lkey, to, (uint32_t)r->rkey, f) ?:
	    tp_post_read(c, WR_ID(OP_READ, 0), slot(&cl->back, i), SCALE_SLOT,
			 cl->back.mr->lkey, to, (uint32_t)r->rkey, f);
	for (k = 0; !e && k < SCALE_FADDS; k++)
		e = tp_post_fadd(c, WR_ID(OP_FADD, k), result(cl, i, k),
				 cl->res.mr->lkey, r->addr + scale_counter(r),
				 (uint32_t)r->rkey, 1, f);
	if (!e && !i)
		e = tp_post_write(c, WR_ID(OP_WRITE, 1), slot(&cl->src, cl->n),
				  SCALE_SLOT, cl->src.mr->lkey,
				  r->addr + scale_last(r), (uint32_t)r->rkey,
				  f) ?:
		    tp_post_read(c, WR_ID(OP_READ, 1), slot(&cl->back, cl->n),
				 SCALE_SLOT, cl->back.mr->lkey,
				 r->addr + scale_last(r), (uint32_t)r->rkey, f);
	if (e)
		tp_fail("connection %u: posting: %s", i, strerror(e));
	return e;
}

static bool wc_ok(const struct ibv_wc *wc, unsigned int i, const char *what)
{
	static const enum ibv_wc_opcode want[] = {
		[OP_WRITE] = IBV_WC_RDMA_WRITE, [OP_READ] = IBV_WC_RDMA_READ,
		[OP_FADD] = IBV_WC_FETCH_ADD, [OP_SEND] = IBV_WC_SEND,
	};
	unsigned int op = (unsigned int)(wc->wr_id >> 32);

	if (wc->status != IBV_WC_SUCCESS) {
		tp_fail("%s: connection %u: WR %#" PRIx64 " completed with %s",
			what, i, (uint64_t)wc->wr_id,
			tp_wc_status_name(wc->status));
		return false;
	}
	if (op < OP_WRITE || op > OP_SEND || wc->opcode != want[op]) {
		tp_fail("%s: connection %u: WR %#" PRIx64 " completed as %s",
			what, i, (uint64_t)wc->wr_id,
			tp_wc_opcode_name(wc->opcode));
		return false;
	}
	return true;
}

/*
 * Poll the n send CQs round robin until each gave @per (+ @extra0 for
 * connection 0); -t without any completion fails.
 */
static bool reap_all(struct client *cl, unsigned int per, unsigned int extra0,
		     const char *what)
{
	uint64_t want = (uint64_t)cl->n * per + extra0, got = 0;
	uint64_t last = tp_now_ms();
	struct ibv_wc wc[16];
	unsigned int i;
	int k, m;

	while (got < want) {
		for (i = 0; i < cl->n; i++) {
			m = ibv_poll_cq(cl->c[i].scq, 16, wc);
			if (m < 0)
				tp_die("ibv_poll_cq: %d", m);
			for (k = 0; k < m; k++)
				if (!wc_ok(&wc[k], i, what))
					return false;
			got += (uint64_t)m;
			if (m)
				last = tp_now_ms();
		}
		if (tp_now_ms() - last > (uint64_t)cl->o->r.timeout_ms) {
			tp_fail("%s: %" PRIu64 " of %" PRIu64 " completions",
				what, got, want);
			return false;
		}
	}
	return true;
}

static void check_reads(struct client *cl)
{
	unsigned int i, bad = 0;

	for (i = 0; i <= cl->n; i++)
		if (memcmp(slot(&cl->src, i), slot(&cl->back, i), SCALE_SLOT) &&
		    bad++ < 5)
			tp_fail("%s %u: read back other octets than written",
				i < cl->n ? "connection" : "the last page of",
				i < cl->n ? i : 0);
	if (bad)
		tp_fail("%u of %u read-backs differ", bad, cl->n + 1);
}

/* The counter's final value, and the FetchAdds' results as a set. */
static void check_fadds(struct client *cl)
{
	uint64_t total = (uint64_t)cl->n * SCALE_FADDS, i, v, bad = 0;
	uint64_t *fin = result(cl, cl->n, 0);
	uint8_t *seen = calloc(total, 1);
	struct tp_conn *c = &cl->c[0];

	if (!seen)
		tp_die("out of memory");
	for (i = 0; i < total; i++) {
		v = ((uint64_t *)cl->res.addr)[i];
		if ((v >= total || seen[v]++) && bad++ < 5)
			tp_fail("FetchAdd %" PRIu64 " of connection %" PRIu64
				" returned %" PRIu64 ": %s", i % SCALE_FADDS,
				i / SCALE_FADDS, v, v >= total ? "too large" :
				"twice");
	}
	free(seen);
	if (tp_post_read(c, WR_ID(OP_READ, 2), fin, 8, cl->res.mr->lkey,
			 cl->rem.addr + scale_counter(&cl->rem),
			 (uint32_t)cl->rem.rkey, IBV_SEND_SIGNALED) ||
	    !tp_wait_ok(c->scq, IBV_WC_RDMA_READ, WR_ID(OP_READ, 2),
			"reading the counter", cl->o->r.timeout_ms, NULL))
		return;
	if (*fin != total || bad)
		tp_fail("the counter reads %" PRIu64 ", expected %" PRIu64
			"; %" PRIu64 " FetchAdd results wrong", *fin, total,
			bad);
	else
		tp_log("atomics: %" PRIu64 " FetchAdds from %u QPs: the counter "
		       "reads %" PRIu64 ", the results are 0..%" PRIu64
		       " each once", total, cl->n, *fin, total - 1);
}

static bool data_all(struct client *cl)
{
	uint64_t t0 = tp_now_ms();
	unsigned int i, per = 2 + SCALE_FADDS;

	for (i = 0; i < cl->n; i++)
		if (post_data(cl, i))
			return false;
	if (!reap_all(cl, per, 2, "data and atomics"))
		return false;
	tp_log("data: %u QPs at once: %u WRs each completed in %" PRIu64
	       " ms", cl->n, per, tp_now_ms() - t0);
	check_reads(cl);
	check_fadds(cl);
	return !tp_failures;
}

/* Phase 3. */

static bool send_all(struct client *cl)
{
	unsigned int i, k;
	uint8_t *p;
	int e;

	for (i = 0; i < cl->n; i++)
		for (k = 0; k < SCALE_SENDS; k++) {
			p = (uint8_t *)cl->msg.addr +
			    ((size_t)i * SCALE_SENDS + k) * SCALE_MSG;
			scale_msg(p, i, k);
			e = tp_post_send(&cl->c[i], WR_ID(OP_SEND, k), p,
					 SCALE_MSG, cl->msg.mr->lkey,
					 IBV_SEND_SIGNALED);
			if (e) {
				tp_fail("connection %u: posting Send %u: %s",
					i, k, strerror(e));
				return false;
			}
		}
	if (!reap_all(cl, SCALE_SENDS, 0, "Sends"))
		return false;
	tp_log("srq: %u Sends from %u QPs completed (the server counts them)",
	       cl->n * SCALE_SENDS, cl->n);
	return true;
}

/*
 * Phase 4: a connection whose send CQ holds C (ibv_create_cq rounds
 * OVF_CQE up to a power of two: cq->cqe) gets OVF_WRITES > C signaled
 * Writes posted and is not polled. siwx (kernel/siwx_comp.c,
 * siwx_cq_post) releases each SQ slot before it posts the completion, so
 * all Writes go out; a completion that finds the ring full is dropped and
 * raises IB_EVENT_CQ_ERR, once per dropped completion, and nothing else
 * happens: the QP stays in RTS. So: exactly OVF_WRITES - C events, then
 * exactly C completions (the oldest, all successful), and once drained the
 * CQ takes completions again. Nothing may hang.
 */
static bool overflow(struct client *cl)
{
	struct tp_qp_opts q = { .max_send_wr = OVF_WRITES + 1, .max_recv_wr = 1,
				.max_sge = 1, .send_cqe = OVF_CQE };
	uint64_t w[2] = { SCALE_MAGIC, cl->n }, to;
	struct tp_conn *c = &cl->c[cl->n];
	unsigned int k, cap, polled = 0;
	unsigned long events;
	uint8_t pdata[16];
	struct ibv_wc wc;

	tp_pdata_put(pdata, w, 2);
	if (!tp_connect(c, cl->ec, cl->o->r.host, cl->o->r.port, &cl->pd, &q,
			pdata, sizeof(pdata), cl->o->r.timeout_ms))
		return false;
	cap = (unsigned int)c->scq->cqe;
	if (cap >= OVF_WRITES) {
		tp_fail("cq overflow: a CQ of %u asked holds %u, not fewer than "
			"the %u Writes", OVF_CQE, cap, OVF_WRITES);
		return false;
	}
	to = cl->rem.addr + scale_slot(&cl->rem, cl->n, 0);
	for (k = 0; k < OVF_WRITES; k++)
		if (tp_post_write(c, k, cl->src.addr, OVF_LEN, cl->src.mr->lkey,
				  to, (uint32_t)cl->rem.rkey,
				  IBV_SEND_SIGNALED)) {
			tp_fail("cq overflow: posting Write %u", k);
			return false;
		}
	events = tp_count_async_events(cl->ctx, c->scq, "overflowing CQ",
				       IBV_EVENT_CQ_ERR, OVF_WRITES - cap,
				       cl->o->r.timeout_ms, "client");
	while (tp_poll(c->scq, &wc, 500) == 1) {
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != polled)
			tp_fail("cq overflow: completion %u: WR %" PRIu64
				", %s", polled, (uint64_t)wc.wr_id,
				tp_wc_status_name(wc.status));
		polled++;
	}
	tp_log("cq overflow: posted %u, CQ holds %u, polled %u, "
	       "IBV_EVENT_CQ_ERR received %lu times (dropped %u)", OVF_WRITES,
	       cap, polled, events, OVF_WRITES - cap);
	if (!events || events != OVF_WRITES - cap || polled != cap ||
	    polled + events != OVF_WRITES)
		tp_fail("cq overflow: expected %u events and %u completions",
			OVF_WRITES - cap, cap);
	/* Drained, it works again */
	if (tp_post_write(c, OVF_WRITES, cl->src.addr, OVF_LEN,
			  cl->src.mr->lkey, to, (uint32_t)cl->rem.rkey,
			  IBV_SEND_SIGNALED) ||
	    !tp_wait_ok(c->scq, IBV_WC_RDMA_WRITE, OVF_WRITES,
			"a Write after the overflow", cl->o->r.timeout_ms, NULL))
		return false;
	return !tp_failures;
}

/* Phase 5: the client closes the extra connection, the server the rest. */
static bool teardown(struct client *cl)
{
	bool ok;

	tp_close(&cl->c[cl->n], cl->o->r.timeout_ms);
	ok = tp_close_after_peer(cl->c, cl->n, cl->o->r.timeout_ms);
	tp_buf_free(&cl->src);
	tp_buf_free(&cl->back);
	tp_buf_free(&cl->res);
	tp_buf_free(&cl->msg);
	if (ibv_dealloc_pd(cl->pd))
		tp_fail("ibv_dealloc_pd: %s", strerror(errno));
	rdma_destroy_event_channel(cl->ec);
	freeaddrinfo(cl->dst);
	free(cl->c);
	return ok;
}

static void client_init(struct client *cl, const struct scale_opts *o)
{
	memset(cl, 0, sizeof(*cl));
	cl->o = o;
	cl->ec = tp_channel();
	cl->ctx = scale_device(o->conns, &cl->n);
	cl->dst = tp_dest(o->r.host, o->r.port);
	cl->c = calloc(cl->n + 1, sizeof(*cl->c));
	cl->pd = ibv_alloc_pd(cl->ctx);
	if (!cl->c || !cl->pd)
		tp_die("connections' memory or PD: %s", strerror(errno));
}

int scale_client(const struct scale_opts *o)
{
	struct client cl;
	bool ok;

	client_init(&cl, o);
	scale_mem_start(&cl.mem);
	ok = connect_all(&cl);
	scale_mem_report(&cl.mem, "client");
	ok = ok && buffers(&cl) && data_all(&cl) && send_all(&cl) &&
	     overflow(&cl);
	if (!ok) {
		tp_log("FAILED: client: %lu failed check(s)", tp_failures);
		return 1;
	}
	ok = teardown(&cl);
	if (!ok || tp_failures) {
		tp_log("FAILED: client: teardown");
		return 1;
	}
	tp_log("PASS: client: %u connections, data, atomics, SRQ Sends, CQ "
	       "overflow; done", cl.n);
	return 0;
}
