// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-cq-ex: extended CQs (ibv_create_cq_ex), every field they report.
 *
 * Each side first checks the device (phase "device", "clock"):
 *   - ibv_create_cq_ex accepts IBV_WC_STANDARD_FLAGS with both completion
 *     timestamps (and IBV_CREATE_CQ_ATTR_SINGLE_THREADED), and refuses with
 *     EOPNOTSUPP: IBV_WC_EX_WITH_CVLAN, _FLOW_TAG, _TM_INFO,
 *     IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN and IBV_CQ_INIT_ATTR_MASK_PD (no
 *     parent domains). A refusal must leave no CQ behind: the kernel's
 *     resource tracking (`rdma resource show cq`) lists this process's CQs
 *     on the device, before, with the accepted CQ alive (which proves the
 *     listing sees them) and after the refusals.
 *   - ibv_query_device_ex: completion_timestamp_mask all ones and
 *     hca_core_clock 1000000 kHz (the clock ticks in ns);
 *     ibv_query_rt_values_ex's raw clock (tv_sec 0, tv_nsec the count, as
 *     mlx5) lies between two CLOCK_MONOTONIC readings around the call.
 *
 * Then the client streams N messages in windows of W (phase "receive" on
 * the server): Sends of 0..4096 bytes, RDMA Writes with Immediate Data
 * posted with ibv_post_send (4 octets, verbs imm_data) and with
 * siwxdv_wr_rdma_write_imm8 (all 8 octets RFC 7306 carries, ibv_wr_* API
 * on the same QP), of 0..8192 bytes into W slots of the server's buffer.
 * The server's receive CQ is an extended CQ with every accepted wc_flag on
 * a completion channel; the server sleeps on it (ibv_get_cq_event,
 * ibv_ack_cq_events, ibv_req_notify_cq, then ibv_start_poll/next_poll/
 * end_poll until ENOENT) and checks every completion: status, wr_id (the
 * RQ's next receive), opcode, byte_len, wc_flags, imm_data and the 8
 * octets of siwxdv_wc_read_imm8, qp_num, src_qp/slid/sl/dlid_path_bits 0,
 * the payload and what lies around it; the completion timestamp
 * (CLOCK_MONOTONIC) and the wall-clock one (CLOCK_REALTIME) non-decreasing
 * in poll order, not before the receive was posted and not after it was
 * polled. It acknowledges each window with a Send once it reposted the
 * receives (iWARP has no RNR retry: a Send must find a receive).
 *
 * The client's send CQ is an extended CQ with the two timestamps, polled
 * busy with start/next/end_poll (phase "send"): status, wr_id in posting
 * order, opcode, timestamps as above. Its last windows it polls with
 * ibv_poll_cq() on the same extended CQ instead (phase "legacy").
 *
 * Phase "errors": an RDMA Read from an rkey the server never handed out,
 * WRs behind it (the first one fenced), then more posted once its error
 * was polled. The Read must complete with IBV_WC_REM_ACCESS_ERR and every
 * other WR with IBV_WC_WR_FLUSH_ERR, each exactly once, in posting order,
 * read through start/next/end_poll. A Read, not a Write: an RDMA Write
 * completes once sent, and the responder's refusal (a Terminate) has no
 * response WR to complete, so a Write to a bad rkey completes successfully
 * and the error reaches the requester only as IBV_EVENT_QP_ACCESS_ERR
 * (docs/protocol-decisions.md, "A Terminate from the peer"); the Terminate
 * completes the oldest outstanding Read. The server's Terminate puts its
 * QP in ERROR too: its W posted receives must come back flushed, each
 * once, in RQ order, through the event-driven extended CQ (phase "flush").
 *
 * With -r (the client asks, the server follows; a server given -r insists)
 * come the ibv_resize_cq phases, each side printing "ok: ..." per check:
 *   - "resize-receive" (server): the receive phase as above, its extended
 *     receive CQ resized between polls, growing and shrinking through sizes
 *     of 1 to 8 times the window (the most completions it can hold): right
 *     after each CQ event (armed, completions unpolled), after each batch
 *     (armed, Sends in flight), and at each window's end, before its
 *     acknowledgement, twice while armed with nothing held or pending, so
 *     that only an arm that survived the resizes raises the next event (a
 *     lost one ends the wait with a failure after -t, not a hang). Every
 *     completion is checked as in the receive phase (wr_id order: none
 *     lost, duplicated or reordered; data, imm, timestamps in order), and
 *     cq->cqe after each resize is the size rounded up to a power of two.
 *   - "resize-send" (client): its extended, SINGLE_THREADED send CQ resized
 *     after posting each window and again with half of it reaped.
 *   - On a second connection, both sides (phases "resize-below" and
 *     "resize-load"): a plain CQ (ibv_create_cq) of 32 entries, the send CQ
 *     of RDMA Writes into the peer's buffer. "resize-below": 8 completions
 *     held unpolled (each Write posted with the CQ armed, its event
 *     awaited), then ibv_resize_cq to 4, 0, -1 and max_cqe + 1 must fail with
 *     EINVAL and leave cq->cqe; all 8 are then polled in order, with a
 *     resize to exactly the 4 held (must succeed) half way. "resize-load":
 *     a second thread polls the CQ with ibv_poll_cq while this one streams
 *     Writes (at most 16 in flight) and resizes the CQ in a loop between
 *     16 and 128 entries; every completion once, in posting order, nothing
 *     after; the peer's last Writes intact.
 *
 * Both sides print "ok: ..." per phase and exit 0 only when every check
 * passed (77: the device is not a siwx device).
 *
 * This file: main, the options, each side's connection setup and the
 * order of the phases; the phases themselves are in the cq_ex_*.c files
 * (cq_ex.h lists them).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq_ex.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-cq-ex -s [-6] [-r] [-p PORT] [-t SEC] [-v]\n"
"       siwx-cq-ex -c ADDR [-r] [-p PORT] [-n N] [-w W] [-S SEED]\n"
"                  [-t SEC] [-v]\n"
"Extended CQs (ibv_create_cq_ex) checked field by field (see the source).\n"
"  -s          server (one client, then exit)\n"
"  -c ADDR     client, connecting to ADDR\n"
"  -p PORT     rdma_cm port (default 18528)\n"
"  -n N        messages (default 2000; more than W)\n"
"  -w W        window: messages per acknowledgement (default 32, 2..64)\n"
"  -S SEED     seed of kinds, sizes and immediates (default 1)\n"
"  -r          the ibv_resize_cq phases too (client: asks for them;\n"
"              server: fails when the client does not)\n"
"  -t SEC      time limit of each wait (default 60)\n"
"  -6          server: listen on [::], IPv6 only\n"
"  -v          verbose\n"
"The client chooses N, W, the seed and -r; the server follows. Exit 0\n"
"only when every check passed, 77 when the device is not a siwx device.\n");
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	*o = (struct opts){ .r = { .port = 18528, .timeout_ms = 60000 },
			    .n = 2000, .window = 32, .seed = 1 };
	while ((ch = getopt_long(argc, argv, TP_ROLE_OPTS "n:w:S:rh", lo,
				 NULL)) != -1) {
		if (tp_role_opt(&o->r, ch, optarg))
			continue;
		switch (ch) {
		case 'n': o->n = tp_parse_u64(optarg, "-n", 3, 1u << 24); break;
		case 'w':
			o->window = tp_parse_u64(optarg, "-w", 2, MAX_W);
			break;
		case 'S':
			o->seed = tp_parse_u64(optarg, "-S", 0, UINT64_MAX);
			break;
		case 'r': o->resize = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (!tp_role_ok(&o->r, optind, argc) || o->n <= o->window) {
		usage(stderr);
		exit(2);
	}
}

/* Server. */

static bool server_params(struct ctx *x)
{
	uint64_t w[5], w5[5];

	if (!tp_pdata_get(x->c.peer_pdata, x->c.peer_pdata_len, w, 4) ||
	    w[0] != CQX_MAGIC) {
		tp_fail("connect request without siwx-cq-ex private data "
			"(%zu bytes)", x->c.peer_pdata_len);
		return false;
	}
	/*
	 * The flags word only with -r: without, the request is as before
	 * (a failed read of five words zeroes all five: read them apart)
	 */
	if (!tp_pdata_get(x->c.peer_pdata, x->c.peer_pdata_len, w5, 5))
		w5[4] = 0;
	w[4] = w5[4];
	x->p = (struct params){ w[1], w[2], w[3], w[4] };
	if (x->p.window < 2 || x->p.window > MAX_W || x->p.n <= x->p.window ||
	    (x->p.flags & ~(uint64_t)P_RESIZE)) {
		tp_fail("unusable parameters from the client");
		return false;
	}
	if (x->o.resize && !(x->p.flags & P_RESIZE)) {
		tp_fail("-r: the client did not ask for the resize phases "
			"(give it -r too)");
		return false;
	}
	return true;
}

static bool server_setup(struct ctx *x)
{
	uint8_t pd[TP_ACCEPT_PDATA_MAX];
	uint64_t w[5];
	uint32_t i;

	x->stride = ((uint64_t)WRITE_MAX + GUARD + 4095) & ~4095ULL;
	x->nrecv = (uint32_t)x->p.window;
	if (!tp_buf_alloc(&x->data, x->pd, x->stride * x->p.window,
			  x->stride * x->p.window,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) ||
	    !tp_buf_alloc(&x->rbuf, x->pd, (size_t)x->nrecv * RECV_BUF,
			  (size_t)x->nrecv * RECV_BUF,
			  IBV_ACCESS_LOCAL_WRITE) ||
	    !tp_buf_alloc(&x->msg, x->pd, 4096, 4096, IBV_ACCESS_LOCAL_WRITE))
		return false;
	memset(x->data.addr, CANARY, x->data.len);
	if (!server_qp(x))
		return false;
	for (i = 0; i < x->nrecv; i++)
		if (!post_recv_slot(x, i))
			return false;
	w[0] = CQX_MAGIC;
	w[1] = (uintptr_t)x->data.addr;
	w[2] = x->data.mr->rkey;
	w[3] = x->stride;
	w[4] = x->p.window;
	tp_pdata_put(pd, w, 5);
	return tp_accept(&x->c, pd, 40, 0, x->o.r.timeout_ms);
}

static int run_server(struct ctx *x)
{
	struct rdma_cm_id *listen = tp_listen(x->ec, x->o.r.port);
	bool ok;

	x->listen = listen;
	if (!tp_get_request(x->ec, listen, &x->c, 600000) || !server_params(x))
		return 1;
	x->pd = ibv_alloc_pd(x->c.id->verbs);
	if (!x->pd)
		tp_die("ibv_alloc_pd: %s", strerror(errno));
	x->c.pd = x->pd;
	tp_print_device(x->c.id->verbs, "server");
	if (!dv_open(x))
		return TP_EXIT_SKIP;
	/* Before any memory is registered: count_cqs() runs a program. */
	phase_device(x, "server");
	phase_clock(x, "server");
	if (!server_setup(x))
		return 1;
	tp_log("client connected: n=%" PRIu64 ", window %" PRIu64 ", seed %"
	       PRIu64, x->p.n, x->p.window, x->p.seed);
	ok = server_data(x) &&
	     (!(x->p.flags & P_RESIZE) || server_resize(x)) && server_flush(x);
	/* Part of the verdict: the CQs and their channel must go cleanly */
	tp_destroy(&x->c);
	rdma_destroy_id(listen);
	ok = ok && !tp_failures;
	if (ok)
		tp_log("PASS: server: extended receive CQ verified (%" PRIu64
		       " messages, %" PRIu64 " CQ events)", x->p.n, x->events);
	else
		tp_log("FAILED: server: %lu failed check(s)", tp_failures);
	return ok ? 0 : 1;
}

/* Client. */

static bool client_setup(struct ctx *x)
{
	uint8_t pd[TP_CONNECT_PDATA_MAX];
	uint64_t w[5] = { CQX_MAGIC, x->p.n, x->p.window, x->p.seed,
			  x->p.flags };

	if (!tp_buf_alloc(&x->data, x->pd, (size_t)x->p.window * SRC_STRIDE,
			  (size_t)x->p.window * SRC_STRIDE,
			  IBV_ACCESS_LOCAL_WRITE) ||
	    !tp_buf_alloc(&x->rbuf, x->pd, 4096, 4096,
			  IBV_ACCESS_LOCAL_WRITE) ||
	    !client_qp(x) || !post_ack_recv(x, 0) || !post_ack_recv(x, 1))
		return false;
	tp_pdata_put(pd, w, x->p.flags ? 5 : 4);
	if (!tp_connect_qp(&x->c, pd, x->p.flags ? 40 : 32, x->o.r.timeout_ms))
		return false;
	if (!tp_pdata_get(x->c.peer_pdata, x->c.peer_pdata_len, w, 5) ||
	    w[0] != CQX_MAGIC || w[4] != x->p.window) {
		tp_fail("the server's accept carries no usable private data");
		return false;
	}
	x->raddr = w[1];
	x->rkey = (uint32_t)w[2];
	x->stride = w[3];
	return true;
}

static int run_client(struct ctx *x)
{
	uint64_t t0;
	bool ok;

	x->p = (struct params){ x->o.n, x->o.window, x->o.seed,
				x->o.resize ? P_RESIZE : 0 };
	if (!tp_resolve(&x->c, x->ec, x->o.r.host, x->o.r.port,
			x->o.r.timeout_ms))
		return 1;
	x->pd = ibv_alloc_pd(x->c.id->verbs);
	if (!x->pd)
		tp_die("ibv_alloc_pd: %s", strerror(errno));
	x->c.pd = x->pd;
	tp_print_device(x->c.id->verbs, "client");
	if (!dv_open(x))
		return TP_EXIT_SKIP;
	/* Before any memory is registered: count_cqs() runs a program. */
	phase_device(x, "client");
	phase_clock(x, "client");
	if (!client_setup(x))
		return 1;
	t0 = tp_now_ms();
	ok = client_data(x) &&
	     (!(x->p.flags & P_RESIZE) || client_resize(x)) &&
	     client_errors(x);
	ok = ok && !tp_failures;
	if (ok)
		tp_log("PASS: client: %" PRIu64 " messages, window %" PRIu64
		       ", seed %" PRIu64 ", %.1f s", x->p.n, x->p.window,
		       x->p.seed, (tp_now_ms() - t0) / 1000.0);
	else
		tp_log("FAILED: client: %lu failed check(s)", tp_failures);
	tp_close(&x->c, 5000);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	static struct ctx x;

	tp_prog = "siwx-cq-ex";
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv, &x.o);
	x.ec = tp_channel();
	return x.o.r.server ? run_server(&x) : run_client(&x);
}
