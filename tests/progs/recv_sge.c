// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-recv-sge: a receive's scatter list is checked as a message reaches
 * each of its elements, as rxe, siw and RDMA NICs do; a message that
 * ends before a bad element does not fail on it.
 *
 * The server posts four receives before it accepts:
 *   1. one element of 1024 bytes at address 0 with lkey 0, naming no
 *      memory region (what libfabric's fi_shared_ctx posts);
 *   2. 64 bytes of a writable buffer, then 64 of a region registered
 *      without IBV_ACCESS_LOCAL_WRITE (a receive must not write there);
 *   3. the same, 64 bytes further into the writable buffer;
 *   4. 64 writable bytes.
 * The client sends 0, 64 and 65 bytes. The server expects: the empty
 * Send completes receive 1 (IBV_WC_SUCCESS, byte_len 0), the 64 bytes
 * complete receive 2 with their contents, the 65 bytes fail receive 3
 * with IBV_WC_LOC_PROT_ERR (their last byte needs the read-only region:
 * the verbs status for a data segment that names no memory valid for the
 * operation; rxe reports IBV_WC_LOC_QP_OP_ERR, hence -e),
 * receive 4 is flushed, and the read-only region is untouched. Every Send
 * of the client's must complete, whatever its status. Then the server
 * disconnects, and the client's own disconnect after that must succeed.
 *
 *   siwx-recv-sge -s [-e STATUS] [-p PORT] [-t SEC] [-v]
 *   siwx-recv-sge -c HOST [-p PORT] [-t SEC] [-v]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_common.h"

#define PART 64u		/* bytes of each receive element */
#define RO_FILL 0xeeu		/* the read-only region's bytes */
#define MAGIC UINT64_C(0x5349575852534731)	/* "SIWXRSG1" */

enum { R_EMPTY = 1, R_FITS, R_OVERRUNS, R_FLUSHED, N_RECV = R_FLUSHED };

/* Bytes of the client's Sends, in order: one per receive but the last */
static const uint32_t send_len[] = { 0, PART, PART + 1 };

struct opts {
	struct tp_role r;
	enum ibv_wc_status overrun;	/* receive 3's status */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-recv-sge -s [-e STATUS] [-p PORT] [-t SEC] [-v]\n"
"       siwx-recv-sge -c HOST [-p PORT] [-t SEC] [-v]\n"
"  -s | -c HOST  server (posts receives with bad elements) or client\n"
"  -e STATUS     server: the status of the receive the message overruns\n"
"                into a bad element (default IBV_WC_LOC_PROT_ERR)\n"
"  -p PORT       rdma_cm port (default 18531)\n"
"  -t SEC        time limit of each wait (default 60)\n"
"  -6            server: listen on [::], IPv6 only\n"
"Exit 0 when each receive failed only where its message reached a bad\n"
"element, and both ends closed cleanly.\n");
}

static void post_recv(struct tp_conn *c, uint64_t id, struct ibv_sge *sg,
		      int n)
{
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = sg, .num_sge = n };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(c->qp, &wr, &bad))
		tp_die("posting receive %llu", (unsigned long long)id);
}

static void post_receives(struct tp_conn *c, const struct tp_buf *rw,
			  const struct tp_buf *ro)
{
	uint8_t *w = rw->addr;
	struct ibv_sge none = { .addr = 0, .length = 1024, .lkey = 0 };
	struct ibv_sge fits[2] = {
		{ (uintptr_t)w, PART, rw->mr->lkey },
		{ (uintptr_t)ro->addr, PART, ro->mr->lkey },
	};
	struct ibv_sge over[2] = {
		{ (uintptr_t)(w + PART), PART, rw->mr->lkey },
		{ (uintptr_t)ro->addr, PART, ro->mr->lkey },
	};
	struct ibv_sge last = { (uintptr_t)(w + 2 * PART), PART,
				rw->mr->lkey };

	post_recv(c, R_EMPTY, &none, 1);
	post_recv(c, R_FITS, fits, 2);
	post_recv(c, R_OVERRUNS, over, 2);
	post_recv(c, R_FLUSHED, &last, 1);
}

/* The next receive completion: @id with @status (and @len if success) */
static bool expect_recv(struct tp_conn *c, uint64_t id,
			enum ibv_wc_status status, uint32_t len,
			int timeout_ms)
{
	struct ibv_wc wc;
	int r = tp_poll(c->rcq, &wc, timeout_ms);

	if (r != 1) {
		tp_fail("receive %llu: no completion within %d ms",
			(unsigned long long)id, timeout_ms);
		return false;
	}
	if (wc.wr_id != id || wc.status != status) {
		tp_fail("receive %llu: got receive %llu with %s, expected %s",
			(unsigned long long)id, (unsigned long long)wc.wr_id,
			tp_wc_status_name(wc.status),
			tp_wc_status_name(status));
		return false;
	}
	if (status == IBV_WC_SUCCESS &&
	    (wc.opcode != IBV_WC_RECV || wc.byte_len != len)) {
		tp_fail("receive %llu: %s of %u bytes, expected a receive of "
			"%u", (unsigned long long)id,
			tp_wc_opcode_name(wc.opcode), wc.byte_len, len);
		return false;
	}
	tp_vlog("receive %llu: %s, %u bytes", (unsigned long long)id,
		tp_wc_status_name(wc.status), wc.byte_len);
	return true;
}

static void check_untouched(const struct tp_buf *ro)
{
	const uint8_t *p = ro->addr;
	uint32_t i;

	for (i = 0; i < PART; i++)
		if (p[i] != RO_FILL) {
			tp_fail("byte %u of the region registered without "
				"local write changed to 0x%02x", i, p[i]);
			return;
		}
}

static int run_server(const struct opts *op)
{
	const struct tp_role *o = &op->r;
	struct rdma_event_channel *ec = tp_channel();
	struct rdma_cm_id *listen = tp_listen(ec, o->port);
	struct tp_qp_opts q = { .max_send_wr = 1, .max_recv_wr = N_RECV,
				.max_sge = 2 };
	struct tp_buf rw = {}, ro = {};
	struct tp_conn c = {};
	uint64_t w[1];

	if (!tp_take_request(ec, listen, &c, MAGIC, w, 1, o->timeout_ms))
		return 1;
	tp_print_device(c.id->verbs, "server");
	if (!tp_buf_alloc(&rw, c.pd, 3 * PART, 3 * PART,
			  IBV_ACCESS_LOCAL_WRITE) ||
	    !tp_buf_alloc(&ro, c.pd, PART, PART, 0))
		tp_die("buffers");
	memset(ro.addr, RO_FILL, PART);
	if (!tp_setup_qp(&c, &q))
		return 1;
	post_receives(&c, &rw, &ro);
	if (!tp_accept(&c, NULL, 0, 0, o->timeout_ms))
		return 1;

	if (expect_recv(&c, R_EMPTY, IBV_WC_SUCCESS, 0, o->timeout_ms) &&
	    expect_recv(&c, R_FITS, IBV_WC_SUCCESS, PART, o->timeout_ms)) {
		if (tp_pat_check(rw.addr, PART, R_FITS) >= 0)
			tp_fail("receive %d: the 64 bytes differ", R_FITS);
		if (expect_recv(&c, R_OVERRUNS, op->overrun, 0,
				o->timeout_ms))
			expect_recv(&c, R_FLUSHED, IBV_WC_WR_FLUSH_ERR, 0,
				    o->timeout_ms);
	}
	check_untouched(&ro);
	tp_close(&c, o->timeout_ms);
	tp_buf_free(&rw);
	tp_buf_free(&ro);
	if (tp_failures)
		return 1;
	tp_log("PASS: server: an empty Send and one that ended before the bad "
	       "element succeeded; the one that reached it failed with %s",
	       tp_wc_status_name(op->overrun));
	return 0;
}

static int run_client(const struct tp_role *o)
{
	struct rdma_event_channel *ec = tp_channel();
	struct tp_qp_opts q = { .max_send_wr = 1, .max_recv_wr = 1,
				.max_sge = 1 };
	struct ibv_pd *pd = NULL;
	struct tp_conn c = {};
	struct tp_buf src = {};
	struct ibv_wc wc;
	uint8_t pdata[8];
	uint64_t w[1] = { MAGIC };
	unsigned int i;
	bool closed;

	tp_pdata_put(pdata, w, 1);
	if (!tp_connect(&c, ec, o->host, o->port, &pd, &q, pdata,
			sizeof(pdata), o->timeout_ms))
		return 1;
	if (!tp_buf_alloc(&src, pd, PART + 1, PART + 1, 0))
		tp_die("buffers");
	for (i = 0; i < sizeof(send_len) / sizeof(send_len[0]); i++) {
		tp_pat_fill(src.addr, PART + 1, i + 1);
		if (tp_post_send(&c, i + 1, src.addr, send_len[i],
				 src.mr->lkey, IBV_SEND_SIGNALED)) {
			tp_fail("posting Send %u", i + 1);
			break;
		}
		/* The last may fail: its receive does on the server */
		if (tp_poll(c.scq, &wc, o->timeout_ms) != 1) {
			tp_fail("Send %u of %u bytes never completed", i + 1,
				send_len[i]);
			break;
		}
		if (wc.wr_id != i + 1 ||
		    (wc.status != IBV_WC_SUCCESS && i + 1 < R_OVERRUNS))
			tp_fail("Send %u: completion %llu with %s", i + 1,
				(unsigned long long)wc.wr_id,
				tp_wc_status_name(wc.status));
		tp_vlog("Send %u (%u bytes): %s", i + 1, send_len[i],
			tp_wc_status_name(wc.status));
	}
	closed = tp_close_after_peer(&c, 1, o->timeout_ms);
	tp_buf_free(&src);
	ibv_dealloc_pd(pd);
	if (tp_failures || !closed)
		return 1;
	tp_log("PASS: client: every Send completed and the close was clean");
	return 0;
}

static bool take_opt(int ch, const char *arg, void *ctx)
{
	struct opts *o = ctx;
	int st;

	if (ch != 'e')
		return false;
	st = tp_wc_status_parse(arg);
	if (st < 0)
		return false;
	o->overrun = st;
	return true;
}

int main(int argc, char **argv)
{
	struct opts o = { .r = { .port = 18531, .timeout_ms = 60000 },
			  .overrun = IBV_WC_LOC_PROT_ERR };

	tp_prog = "siwx-recv-sge";
	setvbuf(stdout, NULL, _IOLBF, 0);
	tp_role_parse_opts(argc, argv, &o.r, "e:", take_opt, &o, usage);
	return o.r.server ? run_server(&o) : run_client(&o.r);
}
