// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-recv-wait: a message that finds no receive waits for one
 * (siwx's recv_wait_ms; InfiniBand's RNR retry, which rxe passes with
 * rdma_cm's rnr_retry_count 7) instead of ending the connection, and
 * ends it with a Terminate once the wait is over.
 *
 * The client sends four untagged messages as soon as it is connected: a
 * Send of 64 bytes, a Send of 20000 bytes (many FPDUs: the rest of it
 * stays behind the first), an RDMA Write of 256 bytes with Immediate
 * Data (its receive is taken at its end), and an empty Send. The server
 * posts no receive before it accepts; then:
 *   default  after -d MS (1500) it posts one receive at a time, each
 *            once the last completed and MS / 4 later: every message
 *            waits, each arrives whole and in order, and the Write's
 *            bytes with its Immediate Data;
 *   -S       the same through a shared receive queue;
 *   -n MS    it posts none: the connection ends (the server's QP gets
 *            its asynchronous error, both ends DISCONNECTED), not before
 *            MS milliseconds (siwx's recv_wait_ms in its guest).
 * Every WR completes on both ends (success, or a flush with -n).
 *
 *   siwx-recv-wait -s [-d MS | -n MS] [-S] [-p PORT] [-t SEC] [-v]
 *   siwx-recv-wait -c HOST [-e] [-p PORT] [-t SEC] [-v]
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tp_common.h"

#define MAGIC UINT64_C(0x5349575852575431)	/* "SIWXRWT1" */
#define RECV_LEN 32768u
#define WRITE_LEN 256u
#define IMM 0x5157a17eu
#define N_MSG 4

enum { M_SMALL, M_LONG, M_WRITE_IMM, M_EMPTY };
static const uint32_t msg_len[N_MSG] = { 64, 20000, WRITE_LEN, 0 };

struct opts {
	struct tp_role r;
	unsigned int delay_ms;	/* before each receive is posted */
	long never_ms;		/* -n: no receive; the wait (-1: not -n) */
	bool srq;
	bool expect_end;	/* client -e */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-recv-wait -s [-d MS | -n MS] [-S] [-p PORT] [-t SEC] [-v]\n"
"       siwx-recv-wait -c HOST [-e] [-p PORT] [-t SEC] [-v]\n"
"  -s | -c HOST  server (posts its receives late) or client (sends at once)\n"
"  -d MS         server: first receive after MS ms, each next MS/4 after\n"
"                the last completed (default 1500)\n"
"  -n MS         server: post no receive; the connection must end, not\n"
"                before MS ms\n"
"  -e            client: the server posts no receive (-n): expect the end\n"
"  -S            server: receive through a shared receive queue\n"
"  -p PORT       rdma_cm port (default 18533)\n"
"  -t SEC        time limit of each wait (default 60)\n"
"  -6            server: listen on [::], IPv6 only\n"
"Exit 0 when every message waited for its receive and arrived whole\n"
"(with -n: when the connection ended after the wait), every WR completed.\n");
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

static int post_one(struct tp_conn *c, struct ibv_srq *srq, uint64_t id,
		    const struct tp_buf *b)
{
	struct ibv_sge sge = { (uintptr_t)b->addr + id * RECV_LEN, RECV_LEN,
			       b->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return srq ? ibv_post_srq_recv(srq, &wr, &bad) :
		     ibv_post_recv(c->qp, &wr, &bad);
}

/* Message @m arrived in receive @m: its bytes, its opcode, its Immediate */
static bool check_msg(const struct ibv_wc *wc, unsigned int m,
		      const struct tp_buf *rb, const struct tp_buf *wb)
{
	const uint8_t *got = (const uint8_t *)rb->addr + m * RECV_LEN;
	bool imm = m == M_WRITE_IMM;

	if (wc->wr_id != m || wc->status != IBV_WC_SUCCESS) {
		tp_fail("message %u: receive %llu completed with %s", m + 1,
			(unsigned long long)wc->wr_id,
			tp_wc_status_name(wc->status));
		return false;
	}
	if (wc->opcode != (imm ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV) ||
	    wc->byte_len != msg_len[m]) {
		tp_fail("message %u: %s of %u bytes, expected %s of %u", m + 1,
			tp_wc_opcode_name(wc->opcode), wc->byte_len,
			imm ? "RECV_RDMA_WITH_IMM" : "RECV", msg_len[m]);
		return false;
	}
	if (imm && (!(wc->wc_flags & IBV_WC_WITH_IMM) ||
		    ntohl(wc->imm_data) != IMM)) {
		tp_fail("message %u: Immediate Data 0x%08x, expected 0x%08x",
			m + 1, ntohl(wc->imm_data), IMM);
		return false;
	}
	if (tp_pat_check(imm ? wb->addr : got, msg_len[m], m + 1) >= 0) {
		tp_fail("message %u: its %u bytes differ", m + 1, msg_len[m]);
		return false;
	}
	tp_vlog("message %u: %s, %u bytes", m + 1,
		tp_wc_opcode_name(wc->opcode), wc->byte_len);
	return true;
}

/* Post each receive late, and take each message as it comes */
static void serve_late(struct tp_conn *c, struct ibv_srq *srq,
		       const struct opts *op, const struct tp_buf *rb,
		       const struct tp_buf *wb)
{
	uint64_t t0 = tp_now_ms();
	struct ibv_wc wc;
	unsigned int m;

	sleep_ms(op->delay_ms);
	for (m = 0; m < N_MSG; m++) {
		if (m)
			sleep_ms(op->delay_ms / 4);
		if (post_one(c, srq, m, rb))
			tp_die("posting receive %u", m);
		if (tp_poll(c->rcq, &wc, op->r.timeout_ms) != 1) {
			tp_fail("message %u: no completion within %d ms of "
				"its receive", m + 1, op->r.timeout_ms);
			return;
		}
		if (!check_msg(&wc, m, rb, wb))
			return;
	}
	tp_log("server: %u messages waited for their receives (%llu ms in "
	       "all) and arrived whole", N_MSG,
	       (unsigned long long)(tp_now_ms() - t0));
}

/* No receive: the connection ends, not before @op->never_ms */
static void serve_none(struct tp_conn *c, const struct opts *op,
		       uint64_t t0)
{
	struct rdma_cm_event *ev;
	uint64_t took;

	ev = tp_expect_event(c->id->channel, c->id,
			     RDMA_CM_EVENT_DISCONNECTED,
			     op->r.timeout_ms + (int)op->never_ms);
	if (!ev)
		return;
	rdma_ack_cm_event(ev);
	took = tp_now_ms() - t0;
	if (took < (uint64_t)op->never_ms)
		tp_fail("the connection ended %llu ms after it began, before "
			"the %ld ms wait for a receive was over",
			(unsigned long long)took, op->never_ms);
	else
		tp_log("server: no receive: the connection ended after %llu "
		       "ms (wait %ld ms)", (unsigned long long)took,
		       op->never_ms);
	if (rdma_disconnect(c->id))
		tp_fail("rdma_disconnect after the peer's: %s",
			strerror(errno));
}

static int run_server(const struct opts *op)
{
	const struct tp_role *o = &op->r;
	struct rdma_event_channel *ec = tp_channel();
	struct rdma_cm_id *listen = tp_listen(ec, o->port);
	struct tp_qp_opts q = { .max_send_wr = 1, .max_recv_wr = N_MSG,
				.max_sge = 1 };
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = N_MSG,
						   .max_sge = 1 } };
	struct ibv_srq *srq = NULL;
	struct tp_buf rb = {}, wb = {};
	struct tp_conn c = {};
	uint8_t pdata[24];
	uint64_t w[3], t0;

	if (!tp_take_request(ec, listen, &c, MAGIC, w, 1, o->timeout_ms))
		return 1;
	tp_print_device(c.id->verbs, "server");
	if (!tp_buf_alloc(&rb, c.pd, N_MSG * RECV_LEN, N_MSG * RECV_LEN,
			  IBV_ACCESS_LOCAL_WRITE) ||
	    !tp_buf_alloc(&wb, c.pd, WRITE_LEN, WRITE_LEN,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE))
		tp_die("buffers");
	if (op->srq) {
		srq = ibv_create_srq(c.pd, &sia);
		if (!srq)
			tp_die("ibv_create_srq: %s", strerror(errno));
		q.srq = srq;
	}
	if (!tp_setup_qp(&c, &q))
		return 1;
	w[0] = MAGIC;
	w[1] = (uintptr_t)wb.addr;
	w[2] = wb.mr->rkey;
	tp_pdata_put(pdata, w, 3);
	if (!tp_accept(&c, pdata, sizeof(pdata), 0, o->timeout_ms))
		return 1;
	t0 = tp_now_ms();
	if (op->never_ms >= 0) {
		serve_none(&c, op, t0);
		tp_destroy(&c);
	} else {
		serve_late(&c, srq, op, &rb, &wb);
		tp_close(&c, o->timeout_ms);
	}
	if (srq && ibv_destroy_srq(srq))
		tp_fail("ibv_destroy_srq: %s", strerror(errno));
	tp_buf_free(&rb);
	tp_buf_free(&wb);
	if (tp_failures)
		return 1;
	tp_log("PASS: server: %s", op->never_ms >= 0 ?
	       "with no receive the connection ended once the wait was over" :
	       "every message waited for its receive");
	return 0;
}

static int post_msg(struct tp_conn *c, unsigned int m, const struct tp_buf *b,
		    uint64_t raddr, uint32_t rkey)
{
	void *a = (uint8_t *)b->addr + m * RECV_LEN;

	tp_pat_fill(a, msg_len[m], m + 1);
	if (m == M_WRITE_IMM)
		return tp_post_write_imm(c, m, a, msg_len[m], b->mr->lkey,
					 raddr, rkey, IMM, IBV_SEND_SIGNALED);
	return tp_post_send(c, m, a, msg_len[m], b->mr->lkey,
			    IBV_SEND_SIGNALED);
}

static int run_client(const struct tp_role *o, bool never)
{
	struct rdma_event_channel *ec = tp_channel();
	struct tp_qp_opts q = { .max_send_wr = N_MSG, .max_recv_wr = 1,
				.max_sge = 1 };
	struct ibv_pd *pd = NULL;
	struct tp_conn c = {};
	struct tp_buf src = {};
	struct tp_tally t = {};
	struct ibv_wc wc;
	uint8_t pdata[8];
	uint64_t w[3] = { MAGIC };
	unsigned int m, done = 0;
	bool closed;

	tp_pdata_put(pdata, w, 1);
	if (!tp_connect(&c, ec, o->host, o->port, &pd, &q, pdata,
			sizeof(pdata), o->timeout_ms))
		return 1;
	if (!tp_pdata_get(c.peer_pdata, c.peer_pdata_len, w, 3) ||
	    w[0] != MAGIC)
		tp_die("the accept carries no siwx-recv-wait data");
	if (!tp_buf_alloc(&src, pd, N_MSG * RECV_LEN, N_MSG * RECV_LEN, 0))
		tp_die("buffers");
	for (m = 0; m < N_MSG; m++)
		if (post_msg(&c, m, &src, w[1], (uint32_t)w[2]))
			tp_die("posting message %u", m + 1);
	/* In order; with -n the Terminate may flush those not yet done */
	while (done < N_MSG && tp_poll(c.scq, &wc, o->timeout_ms) == 1) {
		if (wc.wr_id != done)
			tp_fail("message %u completed as WR %llu", done + 1,
				(unsigned long long)wc.wr_id);
		else if (wc.status == IBV_WC_WR_FLUSH_ERR && never)
			t.flushed++;
		else if (wc.status != IBV_WC_SUCCESS)
			tp_fail("message %u: %s", done + 1,
				tp_wc_status_name(wc.status));
		else
			t.ok++;
		done++;
	}
	if (done < N_MSG)
		tp_fail("%u of %u messages never completed", N_MSG - done,
			N_MSG);
	closed = tp_close_after_peer(&c, 1, o->timeout_ms);
	tp_buf_free(&src);
	ibv_dealloc_pd(pd);
	if (tp_failures || !closed)
		return 1;
	tp_log("PASS: client: %llu messages sent, %llu flushed, the close "
	       "was clean", (unsigned long long)t.ok,
	       (unsigned long long)t.flushed);
	return 0;
}

static bool take_opt(int ch, const char *arg, void *ctx)
{
	struct opts *o = ctx;

	switch (ch) {
	case 'd':
		o->delay_ms = tp_parse_u64(arg, "-d", 0, 60000);
		return true;
	case 'n':
		o->never_ms = (long)tp_parse_u64(arg, "-n", 0, 600000);
		return true;
	case 'S':
		o->srq = true;
		return true;
	case 'e':
		o->expect_end = true;
		return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	struct opts o = { .r = { .port = 18533, .timeout_ms = 60000 },
			  .delay_ms = 1500, .never_ms = -1 };

	tp_prog = "siwx-recv-wait";
	setvbuf(stdout, NULL, _IOLBF, 0);
	tp_role_parse_opts(argc, argv, &o.r, "d:n:Se", take_opt, &o, usage);
	if (o.r.server)
		return run_server(&o);
	return run_client(&o.r, o.expect_end);
}
