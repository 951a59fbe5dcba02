// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-sq-doorbell: a send queue kept as full as it goes never loses a
 * work request, and a slot is free again once its completion is polled.
 *
 * The provider rings the send doorbell only while the kernel's TX engine
 * looks idle (include/siwx/abi.h), so a WR posted at the wrong moment,
 * just as the engine stops, or into the slot a Read or Atomic Response has
 * just freed, would sit in the ring for good. The client therefore posts
 * Writes, Reads, Fetch-and-Adds and Compare-and-Swaps, in turn, whenever
 * its queue takes one, polling between attempts, over one connection per
 * shape:
 *
 *   a one-slot SQ (perftest's latency tests): each WR goes into the slot
 *     its predecessor's Response frees, the engine waiting on a full ring;
 *   eight slots with ORD 1: Reads and Atomics wait for each other's
 *     Responses with WRs queued behind them;
 *   eight slots with ORD 8: the fenced Writes wait for the Responses.
 *
 * Every WR must complete, in order, within the time limit; a post may
 * fail with ENOMEM only while every slot holds a WR not yet completed;
 * each Read returns the preceding Write's value and each Atomic the
 * original the WRs before it leave, as on one QP they run in order.
 *
 *   siwx-sq-doorbell -s [-p PORT] [-t SEC] [-v]
 *   siwx-sq-doorbell -c HOST [-n OPS] [-p PORT] [-t SEC] [-v]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_common.h"

#define MAGIC UINT64_C(0x5349575844424c31)	/* "SIWXDBL1" */
#define SLOTS 64u	/* local result/source slots, > any SQ + 1 */
/* The server's region: the Fetch-and-Add counter, the CAS word, the Write
 * target (which the Reads read back).
 */
#define OFF_FADD 0
#define OFF_CAS 8
#define OFF_WRITE 16

struct opts {
	struct tp_role r;
	uint64_t ops;
};

struct shape {
	uint32_t sq;
	uint8_t ord;
};

static const struct shape shapes[] = { { 1, 1 }, { 8, 1 }, { 8, 8 } };

enum op { OP_WRITE, OP_READ, OP_FADD, OP_CAS, OP_COUNT };

static const enum ibv_wc_opcode wc_op[OP_COUNT] = {
	[OP_WRITE] = IBV_WC_RDMA_WRITE,
	[OP_READ] = IBV_WC_RDMA_READ,
	[OP_FADD] = IBV_WC_FETCH_ADD,
	[OP_CAS] = IBV_WC_COMP_SWAP,
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-sq-doorbell -s [-p PORT] [-t SEC] [-v]\n"
"       siwx-sq-doorbell -c HOST [-n OPS] [-p PORT] [-t SEC] [-v]\n"
"  -s | -c HOST  server (offers a region) or client (posts into it)\n"
"  -n OPS        WRs per connection (default 3000)\n"
"  -p PORT       rdma_cm port (default 18522)\n"
"  -t SEC        time limit of each wait (default 60)\n"
"  -6            server: listen on [::], IPv6 only\n"
"Exit 0 when every WR completed, in order, with the expected results.\n");
}

static int run_server(const struct opts *o)
{
	struct rdma_event_channel *ec = tp_channel();
	struct rdma_cm_id *listen = tp_listen(ec, o->r.port);
	struct tp_qp_opts q = { .max_send_wr = 1, .max_recv_wr = 1,
				.max_sge = 1 };
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_pd *pd = NULL;
	struct tp_buf region = {};
	uint8_t pdata[16];
	unsigned int n = 0;
	bool last = false;
	uint64_t w[2];

	while (!last) {
		struct tp_conn c;

		if (!tp_get_request(ec, listen, &c,
				    n ? o->r.timeout_ms : 600000))
			return 1;
		if (!tp_pdata_get(c.peer_pdata, c.peer_pdata_len, w, 2) ||
		    w[0] != MAGIC)
			tp_die("connect request without siwx-sq-doorbell data");
		last = w[1];
		tp_own_channel(&c);
		if (!pd) {
			pd = ibv_alloc_pd(c.id->verbs);
			if (!pd)
				tp_die("ibv_alloc_pd: %s", strerror(errno));
			tp_print_device(c.id->verbs, "server");
			if (!tp_buf_alloc(&region, pd, 4096, 4096, acc))
				return 1;
		}
		memset(region.addr, 0, region.len);
		c.pd = pd;
		w[0] = (uintptr_t)region.addr;
		w[1] = region.mr->rkey;
		tp_pdata_put(pdata, w, 2);
		if (!tp_setup_qp(&c, &q) ||
		    !tp_accept(&c, pdata, sizeof(pdata), 16, o->r.timeout_ms))
			return 1;
		/*
		 * The client's WRs need nothing of us; it disconnects once
		 * all of a shape completed. That takes as long as the shape
		 * (a minute and more on the debug kernel), so the bound is the
		 * first request's: the client's own stall check (-t without
		 * progress) is what catches a WR that never completes.
		 */
		if (!tp_close_after_peer(&c, 1, 600000))
			return 1;
		n++;
	}
	rdma_destroy_id(listen);
	tp_buf_free(&region);
	ibv_dealloc_pd(pd);
	if (tp_failures)
		return 1;
	tp_log("PASS: server: %u connection(s)", n);
	return 0;
}

/* The client's side of one connection. */
struct run {
	struct tp_conn c;
	struct tp_buf local;	/* SLOTS sources, then SLOTS results */
	uint64_t raddr;
	uint32_t rkey;
	uint64_t posted, done;
	uint64_t written, fadds, cas;	/* the region as the WRs leave it */
	uint64_t expect[SLOTS];		/* Read/Atomic results by slot */
};

static uint64_t *src_slot(struct run *r, uint64_t k)
{
	return (uint64_t *)r->local.addr + k % SLOTS;
}

static uint64_t *res_slot(struct run *r, uint64_t k)
{
	return (uint64_t *)r->local.addr + SLOTS + k % SLOTS;
}

/* WR k; returns 0 or the post's errno (the expectations move on 0 only). */
static int post_op(struct run *r, uint64_t k)
{
	uint32_t lkey = r->local.mr->lkey;
	uint64_t *res = res_slot(r, k);
	int rv;

	*res = UINT64_C(0xdeadbeefdeadbeef);
	switch (k % OP_COUNT) {
	case OP_WRITE:
		*src_slot(r, k) = k + 1;
		/*
		 * Fenced: a Read Response may carry a later Write's data
		 * (RFC 5040 5.5 rule 12), and the fence is what makes the
		 * engine wait for the Responses with the Write at its head.
		 */
		rv = tp_post_write(&r->c, k, src_slot(r, k), 8, lkey,
				   r->raddr + OFF_WRITE, r->rkey,
				   IBV_SEND_SIGNALED | IBV_SEND_FENCE);
		if (!rv)
			r->written = k + 1;
		return rv;
	case OP_READ:
		rv = tp_post_read(&r->c, k, res, 8, lkey, r->raddr + OFF_WRITE,
				  r->rkey, IBV_SEND_SIGNALED);
		if (!rv)
			r->expect[k % SLOTS] = r->written;
		return rv;
	case OP_FADD:
		rv = tp_post_fadd(&r->c, k, res, lkey, r->raddr + OFF_FADD,
				  r->rkey, 1, IBV_SEND_SIGNALED);
		if (!rv)
			r->expect[k % SLOTS] = r->fadds++;
		return rv;
	default:
		rv = tp_post_cas(&r->c, k, res, lkey, r->raddr + OFF_CAS,
				 r->rkey, r->cas, r->cas + 1,
				 IBV_SEND_SIGNALED);
		if (!rv)
			r->expect[k % SLOTS] = r->cas++;
		return rv;
	}
}

static bool check_wc(struct run *r, const struct ibv_wc *wc)
{
	uint64_t k = r->done;
	enum op op = (enum op)(k % OP_COUNT);

	if (wc->status != IBV_WC_SUCCESS || wc->wr_id != k ||
	    wc->opcode != wc_op[op]) {
		tp_fail("completion %" PRIu64 ": WR %" PRIu64 " %s %s, "
			"expected WR %" PRIu64 " %s", k, wc->wr_id,
			tp_wc_opcode_name(wc->opcode),
			tp_wc_status_name(wc->status), k,
			tp_wc_opcode_name(wc_op[op]));
		return false;
	}
	if (op != OP_WRITE && *res_slot(r, k) != r->expect[k % SLOTS]) {
		tp_fail("WR %" PRIu64 " (%s) returned 0x%" PRIx64 ", expected "
			"0x%" PRIx64, k, tp_wc_opcode_name(wc->opcode),
			*res_slot(r, k), r->expect[k % SLOTS]);
		return false;
	}
	return true;
}

/*
 * Post whenever the SQ takes a WR, poll in between; yield now and then,
 * as the guests have one vCPU and the soft device needs it.
 */
static bool run_ops(struct run *r, const struct shape *s, uint64_t ops,
		    int timeout_ms)
{
	uint64_t last_progress = tp_now_ms();
	unsigned int idle = 0;
	struct ibv_wc wc;
	int rv;

	while (r->done < ops) {
		bool progress = false;

		if (r->posted < ops) {
			rv = post_op(r, r->posted);
			if (!rv) {
				r->posted++;
				progress = true;
			} else if (rv != ENOMEM ||
				   r->posted - r->done < s->sq) {
				tp_fail("posting WR %" PRIu64 " failed: %s, "
					"with %" PRIu64 " of %u slots holding "
					"WRs not completed yet", r->posted,
					strerror(rv), r->posted - r->done,
					s->sq);
				return false;
			}
		}
		rv = ibv_poll_cq(r->c.scq, 1, &wc);
		if (rv < 0) {
			tp_fail("ibv_poll_cq failed");
			return false;
		}
		if (rv) {
			if (!check_wc(r, &wc))
				return false;
			r->done++;
			progress = true;
		}
		if (progress) {
			last_progress = tp_now_ms();
			idle = 0;
			continue;
		}
		if (tp_now_ms() - last_progress > (uint64_t)timeout_ms) {
			tp_fail("WR %" PRIu64 " (%s) never completed: %" PRIu64
				" posted, %" PRIu64 " completed (a WR left in "
				"the ring without a doorbell?)", r->done,
				tp_wc_opcode_name(wc_op[r->done % OP_COUNT]),
				r->posted, r->done);
			return false;
		}
		if (++idle > 32)
			sched_yield();
	}
	return true;
}

static bool run_shape(const struct opts *o, struct rdma_event_channel *ec,
		      struct ibv_pd **pd, const struct shape *s, bool last)
{
	struct tp_qp_opts q = { .max_send_wr = s->sq, .max_recv_wr = 1,
				.max_sge = 1, .rd_atomic = s->ord };
	uint8_t pdata[16];
	uint64_t w[2] = { MAGIC, last }, t0;
	struct run *r = calloc(1, sizeof(*r));
	bool ok;

	if (!r)
		tp_die("out of memory");
	tp_pdata_put(pdata, w, 2);
	if (!tp_connect(&r->c, ec, o->r.host, o->r.port, pd, &q, pdata,
			sizeof(pdata), o->r.timeout_ms))
		return false;
	if (!tp_pdata_get(r->c.peer_pdata, r->c.peer_pdata_len, w, 2))
		tp_die("accept without the server's region");
	r->raddr = w[0];
	r->rkey = (uint32_t)w[1];
	if (!tp_buf_alloc(&r->local, *pd, 16 * SLOTS, 16 * SLOTS,
			  IBV_ACCESS_LOCAL_WRITE))
		return false;
	t0 = tp_now_ms();
	ok = run_ops(r, s, o->ops, o->r.timeout_ms);
	if (ok)
		tp_log("SQ %u, ORD %u (%u negotiated): %" PRIu64 " WRs "
		       "completed in order with the expected results, %.1f s",
		       s->sq, s->ord, r->c.rd_atomic, r->done,
		       (tp_now_ms() - t0) / 1000.0);
	tp_close(&r->c, o->r.timeout_ms);
	tp_buf_free(&r->local);
	free(r);
	return ok;
}

static int run_client(const struct opts *o)
{
	struct rdma_event_channel *ec = tp_channel();
	size_t n = sizeof(shapes) / sizeof(shapes[0]), i;
	struct ibv_pd *pd = NULL;

	for (i = 0; i < n; i++)
		if (!run_shape(o, ec, &pd, &shapes[i], i == n - 1))
			return 1;
	ibv_dealloc_pd(pd);
	if (tp_failures)
		return 1;
	tp_log("PASS: client: %zu connections x %" PRIu64 " WRs", n, o->ops);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = { { "help", no_argument, NULL, 'h' },
					    { NULL, 0, NULL, 0 } };
	struct opts o = { .r = { .port = 18522, .timeout_ms = 60000 },
			  .ops = 3000 };
	int ch;

	tp_prog = "siwx-sq-doorbell";
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((ch = getopt_long(argc, argv, TP_ROLE_OPTS "n:h", lo,
				 NULL)) != -1) {
		if (tp_role_opt(&o.r, ch, optarg))
			continue;
		if (ch == 'n') {
			o.ops = tp_parse_u64(optarg, "-n", 1, UINT64_C(1) << 32);
		} else if (ch == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!tp_role_ok(&o.r, optind, argc)) {
		usage(stderr);
		return 2;
	}
	return o.r.server ? run_server(&o) : run_client(&o);
}
