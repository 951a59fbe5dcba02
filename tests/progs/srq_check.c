// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-srq-check: a shared receive queue as an application uses it.
 *
 * The server puts the QPs of two connections on one SRQ, posts NPOST
 * receives (each with a buffer of its own) with ibv_post_srq_recv and arms
 * the SRQ limit at LIMIT; the client sends NSEND Sends, alternating between
 * its two connections, each carrying its sequence number. The server
 * checks that
 * - every Send completed one receive of the SRQ, whichever QP it came on:
 *   each receive once, its buffer holding that Send's bytes, byte_len and
 *   qp_num right, and each QP's Sends in the order they were sent;
 * - exactly one IBV_EVENT_SRQ_LIMIT_REACHED came once fewer than LIMIT
 *   receives were left, and the limit reads 0 (disarmed) after it;
 * - the SRQ takes receives up to its max_wr and refuses the next (ENOMEM).
 * The verdict goes back to the client in a Send on the first connection.
 * Then the server disconnects, and the client's own disconnect after that
 * must succeed (on iWARP librdmacm asks the QP, in ERROR by then, for SQD).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_common.h"

#define NPOST 16u		/* receives posted before the Sends */
#define LIMIT 4u		/* SRQ limit: the event once fewer are left */
#define NSEND 13u		/* Sends: leaves NPOST - NSEND < LIMIT */
#define MSG 64u			/* bytes per Send */
#define SRQ_WR 32u		/* max_wr asked for */
#define MAGIC UINT64_C(0x5349575853525131)	/* "SIWXSRQ1" */

struct opts {
	struct tp_role r;	/* -s/-c, -p, -t */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-srq-check -s [-p PORT] [-t SEC] [-v]\n"
"       siwx-srq-check -c HOST [-p PORT] [-t SEC] [-v]\n"
"  -s | -c HOST  server (owns the SRQ) or client (sends)\n"
"  -p PORT       rdma_cm port (default 18520)\n"
"  -t SEC        time limit of each wait (default 60)\n"
"  -6            server: listen on [::], IPv6 only\n"
"Exit 0 only when every check passed (the client: the server's verdict).\n");
}


/* The bytes of Send @seq: its number, then a pattern of it. */
static void fill_msg(uint8_t *p, uint64_t seq)
{
	unsigned int i;

	memcpy(p, &seq, sizeof(seq));
	for (i = sizeof(seq); i < MSG; i++)
		p[i] = (uint8_t)(seq * 29 + i);
}

static int post_srq(struct ibv_srq *srq, const struct tp_buf *b,
		    uint64_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)b->addr + slot * MSG,
		.length = MSG,
		.lkey = b->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* One completion from either receive CQ. */
static bool poll_either(struct tp_conn *c, struct ibv_wc *wc, int timeout_ms)
{
	uint64_t end = tp_now_ms() + (uint64_t)timeout_ms;
	int i;

	do {
		for (i = 0; i < 2; i++) {
			int n = ibv_poll_cq(c[i].rcq, 1, wc);

			if (n < 0)
				tp_die("ibv_poll_cq: %d", n);
			if (n)
				return true;
		}
	} while (tp_now_ms() < end);
	return false;
}

/* Checks one receive completion; @used/@last track slots and order. */
static void check_recv(struct tp_conn *c, const struct tp_buf *b,
		       const struct ibv_wc *wc, bool *used, int64_t *last)
{
	uint8_t want[MSG];
	const uint8_t *got;
	uint64_t seq;
	int q;

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV) {
		tp_fail("receive %" PRIu64 ": %s, opcode %s", wc->wr_id,
			tp_wc_status_name(wc->status),
			tp_wc_opcode_name(wc->opcode));
		return;
	}
	if (wc->wr_id >= NPOST || used[wc->wr_id]) {
		tp_fail("receive wr_id %" PRIu64 ": not a posted receive, or "
			"completed twice", wc->wr_id);
		return;
	}
	used[wc->wr_id] = true;
	got = (const uint8_t *)b->addr + wc->wr_id * MSG;
	memcpy(&seq, got, sizeof(seq));
	q = wc->qp_num == c[0].qp->qp_num ? 0 :
	    wc->qp_num == c[1].qp->qp_num ? 1 : -1;
	if (q < 0 || seq >= NSEND || (int)(seq % 2) != q) {
		tp_fail("receive %" PRIu64 ": Send %" PRIu64 " on QP %u: not "
			"one the client sent that way", wc->wr_id, seq,
			wc->qp_num);
		return;
	}
	fill_msg(want, seq);
	if (wc->byte_len != MSG || memcmp(got, want, MSG))
		tp_fail("receive %" PRIu64 " (Send %" PRIu64 "): %u bytes, "
			"%s", wc->wr_id, seq, wc->byte_len,
			memcmp(got, want, MSG) ? "not the bytes sent" : "");
	if ((int64_t)seq <= last[q])
		tp_fail("QP %d: Send %" PRIu64 " completed after Send %" PRId64,
			q, seq, last[q]);
	last[q] = (int64_t)seq;
	tp_vlog("receive %" PRIu64 ": Send %" PRIu64 " on QP %d", wc->wr_id,
		seq, q);
}

/* Fill the SRQ to max_wr; one more must be refused. */
static void check_full(struct ibv_srq *srq, const struct tp_buf *b,
		       unsigned int outstanding)
{
	struct ibv_srq_attr a;
	unsigned int n = outstanding;
	int r;

	if (ibv_query_srq(srq, &a))
		tp_die("ibv_query_srq: %s", strerror(errno));
	while (n < a.max_wr) {
		r = post_srq(srq, b, n % NPOST);	/* never used */
		if (r) {
			tp_fail("ibv_post_srq_recv refused receive %u of "
				"max_wr %u: %s", n + 1, a.max_wr, strerror(r));
			return;
		}
		n++;
	}
	r = post_srq(srq, b, 0);
	if (r != ENOMEM)
		tp_fail("receive %u past max_wr %u: %s, expected ENOMEM",
			n + 1, a.max_wr, r ? strerror(r) : "accepted");
	else
		tp_log("the SRQ took receives up to max_wr %u and refused one "
		       "more (ENOMEM)", a.max_wr);
}

static int run_server(const struct opts *o)
{
	struct rdma_event_channel *ec = tp_channel();
	struct rdma_cm_id *listen = tp_listen(ec, o->r.port);
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = SRQ_WR,
						   .max_sge = 1 } };
	struct ibv_srq_attr sa = { .srq_limit = LIMIT };
	struct tp_conn c[2] = {};
	struct ibv_srq *srq = NULL;
	struct ibv_pd *pd = NULL;
	bool used[NPOST] = {};
	int64_t last[2] = { -1, -1 };
	struct tp_buf b = {}, v = {};
	struct ibv_wc wc;
	uint64_t w[1], ok;
	unsigned int i, slot;
	size_t blen = (size_t)MSG * NPOST;

	for (i = 0; i < 2; i++) {
		/* max_recv_wr sizes the receive CQ; receives are the SRQ's */
		struct tp_qp_opts q = { .max_send_wr = 2, .max_recv_wr = NPOST,
					.max_sge = 1 };

		if (!tp_get_request(ec, listen, &c[i], o->r.timeout_ms))
			return 1;
		if (!tp_pdata_get(c[i].peer_pdata, c[i].peer_pdata_len, w, 1) ||
		    w[0] != MAGIC)
			tp_die("connect request without siwx-srq-check data");
		tp_own_channel(&c[i]);
		if (!pd) {
			pd = ibv_alloc_pd(c[i].id->verbs);
			if (!pd)
				tp_die("ibv_alloc_pd: %s", strerror(errno));
			tp_print_device(c[i].id->verbs, "server");
			srq = ibv_create_srq(pd, &sia);
			if (!srq)
				tp_die("ibv_create_srq: %s", strerror(errno));
			if (!tp_buf_alloc(&b, pd, blen, blen,
					  IBV_ACCESS_LOCAL_WRITE) ||
			    !tp_buf_alloc(&v, pd, 8, 8, 0))
				tp_die("buffers");
			for (slot = 0; slot < NPOST; slot++)
				if (post_srq(srq, &b, slot))
					tp_die("ibv_post_srq_recv %u", slot);
			if (ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT))
				tp_die("ibv_modify_srq(limit %u): %s", LIMIT,
				       strerror(errno));
			if (ibv_query_srq(srq, &sa) || sa.srq_limit != LIMIT)
				tp_fail("the SRQ limit reads %u, set %u",
					sa.srq_limit, LIMIT);
		}
		c[i].pd = pd;
		q.srq = srq;
		if (!tp_setup_qp(&c[i], &q) ||
		    !tp_accept(&c[i], NULL, 0, 0, o->r.timeout_ms))
			return 1;
	}
	for (i = 0; i < NSEND; i++) {
		if (!poll_either(c, &wc, o->r.timeout_ms)) {
			tp_fail("%u of %u Sends received within %d ms", i,
				NSEND, o->r.timeout_ms);
			break;
		}
		check_recv(c, &b, &wc, used, last);
	}
	tp_expect_async_event(pd->context, srq, "SRQ",
			      IBV_EVENT_SRQ_LIMIT_REACHED, o->r.timeout_ms,
			      "server");
	if (ibv_query_srq(srq, &sa) || sa.srq_limit != 0)
		tp_fail("the SRQ limit reads %u after its event, expected 0 "
			"(disarmed)", sa.srq_limit);
	check_full(srq, &b, NPOST - NSEND);

	ok = tp_failures ? 0 : 1;
	memcpy(v.addr, &ok, sizeof(ok));
	if (tp_post_send(&c[0], 1, v.addr, 8, v.mr->lkey, IBV_SEND_SIGNALED) ||
	    !tp_wait_ok(c[0].scq, IBV_WC_SEND, 1, "verdict", o->r.timeout_ms,
			NULL))
		tp_fail("could not send the verdict");
	for (i = 0; i < 2; i++)
		tp_close(&c[i], 5000);
	ibv_destroy_srq(srq);
	tp_buf_free(&b);
	tp_buf_free(&v);
	ibv_dealloc_pd(pd);
	if (tp_failures) {
		tp_log("FAILED: server: %lu failed check(s)", tp_failures);
		return 1;
	}
	tp_log("PASS: server: %u Sends on two QPs through one SRQ, the limit "
	       "event, max_wr", NSEND);
	return 0;
}

static int run_client(const struct opts *o)
{
	struct rdma_event_channel *ec = tp_channel();
	struct tp_qp_opts q = { .max_send_wr = NSEND, .max_recv_wr = 1,
				.max_sge = 1 };
	struct ibv_pd *pd = NULL;
	struct tp_conn c[2] = {};
	uint8_t pdata[8];
	uint64_t w[1] = { MAGIC }, verdict = 0;
	struct tp_buf b = {}, v = {};
	unsigned int i;
	bool closed;
	int r;

	tp_pdata_put(pdata, w, 1);
	for (i = 0; i < 2; i++)
		if (!tp_connect(&c[i], ec, o->r.host, o->r.port, &pd, &q, pdata,
				sizeof(pdata), o->r.timeout_ms))
			return 1;
	if (!tp_buf_alloc(&b, pd, MSG * NSEND, MSG * NSEND, 0) ||
	    !tp_buf_alloc(&v, pd, 8, 8, IBV_ACCESS_LOCAL_WRITE))
		tp_die("buffers");
	/* The server answers only after all Sends: in time for it. */
	if (tp_post_recv(&c[0], NSEND, v.addr, 8, v.mr->lkey))
		tp_die("posting the verdict's receive");
	for (i = 0; i < NSEND; i++) {
		uint8_t *p = (uint8_t *)b.addr + i * MSG;

		fill_msg(p, i);
		r = tp_post_send(&c[i % 2], i, p, MSG, b.mr->lkey,
				 IBV_SEND_SIGNALED);
		if (r)
			tp_die("posting Send %u: %s", i, strerror(r));
	}
	for (i = 0; i < NSEND; i++)
		if (!tp_wait_ok(c[i % 2].scq, IBV_WC_SEND, i, "Send",
				o->r.timeout_ms, NULL))
			return 1;
	if (!tp_wait_ok(c[0].rcq, IBV_WC_RECV, NSEND, "the server's verdict",
			o->r.timeout_ms, NULL))
		return 1;
	memcpy(&verdict, v.addr, sizeof(verdict));
	/* The server disconnects after its verdict */
	closed = tp_close_after_peer(c, 2, 5000);
	tp_buf_free(&b);
	tp_buf_free(&v);
	if (!closed) {
		tp_log("FAILED: client: closing after the server's disconnect");
		return 1;
	}
	if (verdict != 1) {
		tp_log("FAILED: client: the server's checks failed");
		return 1;
	}
	tp_log("PASS: client: %u Sends on two QPs; the server's SRQ checks "
	       "passed", NSEND);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;

	tp_prog = "siwx-srq-check";
	setvbuf(stdout, NULL, _IOLBF, 0);
	o = (struct opts){ .r = { .port = 18520, .timeout_ms = 60000 } };
	tp_role_parse(argc, argv, &o.r, usage);
	return o.r.server ? run_server(&o) : run_client(&o);
}
