// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-bulk-verify: large RDMA Writes and Reads arrive exactly, every
 * octet checked at the other end.
 *
 * The client fills a buffer of -n MiB with a pattern of the seed and
 * RDMA Writes it into the server's buffer in -m octet Writes, -w in
 * flight, every one signaled and required to succeed. A Send tells the
 * server, which checks every octet, fills its buffer with a second
 * pattern and answers with a Send; the client then RDMA Reads the whole
 * buffer back (as many in flight as the negotiated ORD allows) and checks
 * every octet. A last Send carries the client's verdict. Made for links
 * that lose, reorder, duplicate and corrupt segments: whatever TCP did
 * underneath, the data must be exact and no WR may fail.
 *
 * With -K each side checks siwx's payload counters afterwards against
 * what it moved: each side sends and receives the buffer once plus the
 * control Sends (tp_copies.h); and the client, before it disconnects,
 * that its machine's idle connections gave their stage pages back.
 *
 *   siwx-bulk-verify -s [-K] [-p PORT] [-t SEC] [-v]
 *   siwx-bulk-verify -c HOST [-n MIB] [-m OCTETS] [-w N] [-S SEED] [-K]
 *                    [-p PORT] [-t SEC] [-v]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_common.h"
#include "tp_copies.h"

#define MAGIC UINT64_C(0x5349575842554c4b)	/* "SIWXBULK" */
#define RD_ATOMIC 16		/* Reads in flight we ask for */

/* The control messages, each one 8-octet Send: phase and verdict. */
enum ctrl {
	CTRL_WRITTEN = 1,	/* client: my Writes have all completed */
	CTRL_READABLE = 2,	/* server: checked, second pattern in place */
	CTRL_DONE = 3,		/* client: my Reads have all been checked */
};
#define CTRL(phase, bad) (((uint64_t)(bad) << 8) | (phase))
#define CTRL_PHASE(m) ((m) & 0xff)
#define CTRL_BAD(m) ((m) >> 8)

struct opts {
	struct tp_role r;
	uint64_t len;		/* octets moved each way */
	uint32_t chunk;		/* octets per Write and per Read */
	uint32_t window;	/* Writes in flight */
	uint64_t seed;
	bool copies;		/* -K: check siwx's payload counters */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-bulk-verify -s [-K] [-p PORT] [-t SEC] [-v]\n"
"       siwx-bulk-verify -c HOST [-n MIB] [-m OCTETS] [-w N] [-S SEED] [-K]\n"
"                        [-p PORT] [-t SEC] [-v]\n"
"  -s | -c HOST  server (holds the buffer) or client (writes, then reads)\n"
"  -n MIB        size of the buffer moved each way (default 64)\n"
"  -m OCTETS     octets per RDMA Write and Read (default 1048576)\n"
"  -w N          Writes in flight (default 8); Reads: at most the ORD\n"
"  -S SEED       seed of the patterns (default 1)\n"
"  -K            check siwx's payload counters (debugfs siwx/copies) against\n"
"                what this side moved; nothing else may use siwx meanwhile\n"
"  -p PORT       rdma_cm port (default 18523)\n"
"  -t SEC        time limit of each wait (default 120)\n"
"  -6            server: listen on [::], IPv6 only\n"
"Exit 0 when every Write and Read completed successfully and every octet\n"
"arrived as sent, in both directions.\n");
}

/* Word i of pattern @phase: a function of the seed nobody could fake. */
static uint64_t pattern(uint64_t seed, unsigned int phase, uint64_t i)
{
	return tp_mix(seed ^ ((uint64_t)phase << 56) ^ MAGIC, i);
}

static void fill(void *buf, uint64_t len, uint64_t seed, unsigned int phase)
{
	uint64_t *w = buf, i;

	for (i = 0; i < len / 8; i++)
		w[i] = pattern(seed, phase, i);
}

/* Words that differ from the pattern; the first few are reported. */
static uint64_t check(const void *buf, uint64_t len, uint64_t seed,
		      unsigned int phase, const char *who)
{
	const uint64_t *w = buf;
	uint64_t i, bad = 0;

	for (i = 0; i < len / 8; i++) {
		if (w[i] == pattern(seed, phase, i))
			continue;
		if (bad++ < 4)
			tp_fail("%s: octet %llu: %016llx, expected %016llx",
				who, (unsigned long long)i * 8,
				(unsigned long long)w[i],
				(unsigned long long)pattern(seed, phase, i));
	}
	if (bad)
		tp_fail("%s: %llu of %llu words wrong", who,
			(unsigned long long)bad, (unsigned long long)len / 8);
	return bad;
}

/*
 * The control buffer: a receive slot (its first 8 octets) and a send slot
 * (the next 8), so that a Send never reuses a posted receive's memory.
 */
#define CTL_LEN 16
static uint64_t *send_slot(struct tp_buf *b)
{
	return (uint64_t *)b->addr + 1;
}

static int post_ctrl_recv(struct tp_conn *c, struct tp_buf *b,
			  unsigned int phase)
{
	return tp_post_recv(c, phase, b->addr, 8, b->mr->lkey);
}

/* One control Send, and its completion. */
static bool send_ctrl(struct tp_conn *c, struct tp_buf *b, uint64_t msg,
		      int timeout_ms)
{
	*send_slot(b) = msg;
	return !tp_post_send(c, msg, send_slot(b), 8, b->mr->lkey,
			     IBV_SEND_SIGNALED) &&
	       tp_wait_ok(c->scq, IBV_WC_SEND, msg, "a control Send",
			  timeout_ms, NULL);
}

/* The next control message, which must be of @phase. */
static bool recv_ctrl(struct tp_conn *c, struct tp_buf *b, unsigned int phase,
		      uint64_t *msg, int timeout_ms)
{
	struct ibv_wc wc;

	if (!tp_wait_ok(c->rcq, IBV_WC_RECV, phase, "a control receive",
			timeout_ms, &wc))
		return false;
	*msg = *(uint64_t *)b->addr;
	if (wc.byte_len != 8 || CTRL_PHASE(*msg) != phase) {
		tp_fail("control message %#llx (%u octets), expected phase %u",
			(unsigned long long)*msg, wc.byte_len, phase);
		return false;
	}
	return true;
}

static int run_server(const struct opts *o)
{
	struct rdma_event_channel *ec = tp_channel();
	struct rdma_cm_id *listen = tp_listen(ec, o->r.port);
	struct tp_qp_opts q = { .max_send_wr = 2, .max_recv_wr = 2,
				.max_sge = 1, .rd_atomic = RD_ATOMIC };
	struct tp_buf data = {}, ctl = {};
	struct tp_conn c = {};
	uint64_t w[3], msg, bad;
	uint8_t pdata[24];
	int tmo = o->r.timeout_ms;
	struct tp_copies before;

	if (o->copies && !tp_copies_read(&before))
		return 1;
	if (!tp_take_request(ec, listen, &c, MAGIC, w, 3, tmo))
		return 1;
	if (!w[1] || w[1] % 8)
		tp_die("a request for %llu octets", (unsigned long long)w[1]);
	tp_print_device(c.id->verbs, "server");
	if (!tp_buf_alloc(&data, c.pd, w[1], w[1],
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ) ||
	    !tp_buf_alloc(&ctl, c.pd, CTL_LEN, CTL_LEN, IBV_ACCESS_LOCAL_WRITE))
		tp_die("buffers of %llu octets", (unsigned long long)w[1]);
	if (!tp_setup_qp(&c, &q) ||
	    post_ctrl_recv(&c, &ctl, CTRL_WRITTEN))
		return 1;
	{
		uint64_t a[3] = { (uintptr_t)data.addr, data.mr->rkey, w[2] };

		tp_pdata_put(pdata, a, 3);
	}
	if (!tp_accept(&c, pdata, sizeof(pdata), RD_ATOMIC, tmo))
		return 1;

	if (!recv_ctrl(&c, &ctl, CTRL_WRITTEN, &msg, tmo))
		return 1;
	bad = check(data.addr, data.len, w[2], 0, "server: written data");
	tp_log("server: %llu octets written by the client checked, %llu "
	       "words wrong", (unsigned long long)data.len,
	       (unsigned long long)bad);
	fill(data.addr, data.len, w[2], 1);
	if (post_ctrl_recv(&c, &ctl, CTRL_DONE) ||
	    !send_ctrl(&c, &ctl, CTRL(CTRL_READABLE, bad), tmo) ||
	    !recv_ctrl(&c, &ctl, CTRL_DONE, &msg, tmo))
		return 1;
	if (CTRL_BAD(msg))
		tp_fail("server: the client read %llu wrong words",
			(unsigned long long)CTRL_BAD(msg));
	if (!tp_close_after_peer(&c, 1, tmo))
		return 1;
	/* Sent: the Read Responses (the client's reads are as large as
	 * ours would be) and one control Send; received: the Writes and
	 * two */
	if (o->copies)
		tp_copies_check(&before, data.len + 8, data.len + 16,
				tp_sent_by_ref(o->chunk) ? data.len : 0,
				"server");
	tp_buf_free(&data);
	tp_buf_free(&ctl);
	if (tp_failures)
		return 1;
	tp_log("PASS: server");
	return 0;
}

/*
 * @n RDMA Writes or Reads of o->chunk octets covering @local and the
 * server's buffer, at most @window in flight, each signaled and required
 * to succeed.
 */
static bool move_all(struct tp_conn *c, const struct opts *o,
		     struct tp_buf *local, uint64_t raddr, uint32_t rkey,
		     bool read, uint32_t window)
{
	enum ibv_wc_opcode op = read ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE;
	const char *what = read ? "RDMA Read" : "RDMA Write";
	uint64_t n = (local->len + o->chunk - 1) / o->chunk;
	uint64_t posted = 0, done = 0;

	while (done < n) {
		while (posted < n && posted - done < window) {
			uint64_t off = posted * o->chunk;
			uint32_t len = (uint32_t)(local->len - off < o->chunk ?
						  local->len - off : o->chunk);
			char *a = (char *)local->addr + off;
			int err = read ?
				tp_post_read(c, posted, a, len,
					     local->mr->lkey, raddr + off,
					     rkey, IBV_SEND_SIGNALED) :
				tp_post_write(c, posted, a, len,
					      local->mr->lkey, raddr + off,
					      rkey, IBV_SEND_SIGNALED);

			if (err) {
				tp_fail("posting %s %llu: %s", what,
					(unsigned long long)posted,
					strerror(err));
				return false;
			}
			posted++;
		}
		/* Completions come in order: the oldest is the next. */
		if (!tp_wait_ok(c->scq, op, done, what, o->r.timeout_ms,
				NULL))
			return false;
		done++;
	}
	return true;
}

static int run_client(const struct opts *o)
{
	struct rdma_event_channel *ec = tp_channel();
	struct tp_qp_opts q = { .max_sge = 1, .rd_atomic = RD_ATOMIC,
				.max_recv_wr = 2 };
	struct tp_buf data = {}, ctl = {};
	struct ibv_pd *pd = NULL;
	struct tp_conn c = {};
	uint64_t w[3] = { MAGIC, o->len, o->seed }, msg, bad, t0;
	uint8_t pdata[24];
	uint32_t rwin;
	int tmo = o->r.timeout_ms;
	struct tp_copies before;

	if (o->copies && !tp_copies_read(&before))
		return 1;
	q.max_send_wr = o->window + 1;
	tp_pdata_put(pdata, w, 3);
	/* The buffers need the PD, which comes with the route: connect
	 * first, with the control receive posted right after. */
	if (!tp_connect(&c, ec, o->r.host, o->r.port, &pd, &q, pdata,
			sizeof(pdata), tmo))
		return 1;
	tp_print_device(c.id->verbs, "client");
	if (!tp_buf_alloc(&data, pd, o->len, o->len, IBV_ACCESS_LOCAL_WRITE) ||
	    !tp_buf_alloc(&ctl, pd, CTL_LEN, CTL_LEN, IBV_ACCESS_LOCAL_WRITE))
		tp_die("buffers of %llu octets", (unsigned long long)o->len);
	if (!tp_pdata_get(c.peer_pdata, c.peer_pdata_len, w, 3) ||
	    w[2] != o->seed)
		tp_die("accept without the server's buffer");
	rwin = c.rd_atomic < o->window ? c.rd_atomic : o->window;
	if (!rwin)
		tp_die("no RDMA Read can be outstanding (ORD 0)");

	fill(data.addr, data.len, o->seed, 0);
	t0 = tp_now_ms();
	if (!move_all(&c, o, &data, w[0], (uint32_t)w[1], false, o->window))
		return 1;
	tp_log("client: %llu octets written in %llu ms",
	       (unsigned long long)data.len,
	       (unsigned long long)(tp_now_ms() - t0));
	if (post_ctrl_recv(&c, &ctl, CTRL_READABLE) ||
	    !send_ctrl(&c, &ctl, CTRL(CTRL_WRITTEN, 0), tmo) ||
	    !recv_ctrl(&c, &ctl, CTRL_READABLE, &msg, tmo))
		return 1;
	if (CTRL_BAD(msg))
		tp_fail("client: the server found %llu wrong words",
			(unsigned long long)CTRL_BAD(msg));

	memset(data.addr, 0, data.len);
	t0 = tp_now_ms();
	if (!move_all(&c, o, &data, w[0], (uint32_t)w[1], true, rwin))
		return 1;
	tp_log("client: %llu octets read in %llu ms, %u in flight",
	       (unsigned long long)data.len,
	       (unsigned long long)(tp_now_ms() - t0), rwin);
	bad = check(data.addr, data.len, o->seed, 1, "client: read data");
	if (!send_ctrl(&c, &ctl, CTRL(CTRL_DONE, bad), tmo))
		return 1;
	/* Both sides idle now, the connection still open */
	if (o->copies)
		tp_pool_idle_check("client");
	tp_close(&c, tmo);
	if (o->copies)
		tp_copies_check(&before, o->len + 16, o->len + 8,
				tp_sent_by_ref(o->chunk) ? o->len : 0,
				"client");
	tp_buf_free(&data);
	tp_buf_free(&ctl);
	ibv_dealloc_pd(pd);
	if (tp_failures)
		return 1;
	tp_log("PASS: client: %llu octets written and read back exactly",
	       (unsigned long long)o->len);
	return 0;
}

static bool opt(int ch, const char *arg, void *ctx)
{
	struct opts *o = ctx;

	switch (ch) {
	case 'n':
		o->len = tp_parse_u64(arg, "-n", 1, 512) << 20;
		return true;
	case 'm':
		o->chunk = (uint32_t)tp_parse_u64(arg, "-m", 8, 1u << 30);
		return o->chunk % 8 == 0;
	case 'w':
		o->window = (uint32_t)tp_parse_u64(arg, "-w", 1, 256);
		return true;
	case 'S':
		o->seed = tp_parse_u64(arg, "-S", 0, UINT64_MAX);
		return true;
	case 'K':
		o->copies = true;
		return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	struct opts o = { .r = { .port = 18523, .timeout_ms = 120000 },
			  .len = 64ull << 20, .chunk = 1u << 20, .window = 8,
			  .seed = 1 };

	tp_prog = "siwx-bulk-verify";
	tp_role_parse_opts(argc, argv, &o.r, "n:m:w:S:K", opt, &o, usage);
	return o.r.server ? run_server(&o) : run_client(&o);
}
