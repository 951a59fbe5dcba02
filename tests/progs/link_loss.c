// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-link-loss: when the connection under a QP is lost for good (the
 * link stays down longer than TCP retransmits), every posted WR still
 * completes, the QP is in ERROR and rdma_cm reports DISCONNECTED.
 *
 * Both sides stream signaled RDMA Writes into each other's buffer (so
 * that both TCP ends have data to retransmit, and both give up) until
 * the connection ends. Meanwhile somebody takes the link away (the
 * scenario: ip link set down, with tcp_retries2 shortened). Each side then
 * requires: some Writes succeeded before, every posted Write completed
 * with success or a flush error (nothing else, nothing missing),
 * DISCONNECTED arrived, the QP is in ERROR, and a Write posted after that
 * is refused or completes with a flush error.
 *
 * With -R the side's own device goes away instead (the scenario: rdma
 * link delete while the Writes stream). That side requires
 * RDMA_CM_EVENT_DEVICE_REMOVAL and IBV_EVENT_DEVICE_FATAL, and that
 * tearing down its objects returns; its outstanding WRs are gone with
 * the device (no verbs device completes WRs after DEVICE_FATAL). The
 * other side runs without -R and requires what a lost connection gives.
 *
 *   siwx-link-loss -s [-R] [-w N] [-p PORT] [-t SEC] [-v]
 *   siwx-link-loss -c HOST [-R] [-w N] [-p PORT] [-t SEC] [-v]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp_common.h"

#define MAGIC UINT64_C(0x5349575846414c4c)	/* "SIWXFALL" */
#define CHUNK 16384u		/* octets per Write */
#define SLOTS 16u		/* CHUNKs in each side's sink */

struct opts {
	struct tp_role r;
	uint32_t window;	/* Writes in flight */
	bool removal;		/* -R: our device is removed */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-link-loss -s [-R] [-w N] [-p PORT] [-t SEC] [-v]\n"
"       siwx-link-loss -c HOST [-R] [-w N] [-p PORT] [-t SEC] [-v]\n"
"  -s | -c HOST  server or client; both stream RDMA Writes to the other\n"
"  -R            this side's device is removed (rdma link delete): expect\n"
"                DEVICE_REMOVAL and DEVICE_FATAL instead of a lost link\n"
"  -w N          Writes in flight (default 8)\n"
"  -p PORT       rdma_cm port (default 18524)\n"
"  -t SEC        how long the connection may take to end (default 120)\n"
"Exit 0 when the connection ended with every Write completed (success\n"
"or flush), DISCONNECTED reported and the QP in ERROR; with -R, when\n"
"both removal events came and the teardown returned.\n");
}

struct stream {
	uint64_t posted;
	struct tp_tally w;	/* the Writes' completions */
	bool refused;		/* a post was refused: the QP is in ERROR */
	bool disconnected;
	bool removed;		/* RDMA_CM_EVENT_DEVICE_REMOVAL */
	bool fatal;		/* IBV_EVENT_DEVICE_FATAL */
};

static void nonblocking(int fd)
{
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK))
		tp_die("fcntl: %s", strerror(errno));
}

/* DISCONNECTED, and any other rdma_cm event, reported. */
static void cm_events(struct tp_conn *c, struct stream *s, const char *who)
{
	struct rdma_cm_event *ev;

	while (!rdma_get_cm_event(c->ec, &ev)) {
		tp_log("%s: rdma_cm event %s (status %d) after %llu Writes",
		       who, rdma_event_str(ev->event), ev->status,
		       (unsigned long long)s->w.ok);
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED)
			s->disconnected = true;
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			s->removed = true;
		rdma_ack_cm_event(ev);
	}
}

/*
 * Asynchronous events are reported; a lost connection raises none in
 * siwx, a removed device DEVICE_FATAL (ib_uverbs sends it).
 */
static void async_events(struct tp_conn *c, struct stream *s, const char *who)
{
	struct ibv_async_event ev;

	while (!ibv_get_async_event(c->id->verbs, &ev)) {
		tp_log("%s: asynchronous event %s", who,
		       ibv_event_type_str(ev.event_type));
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
			s->fatal = true;
		ibv_ack_async_event(&ev);
	}
}

static int post_write(struct tp_conn *c, struct tp_buf *src, uint64_t n,
		      uint64_t raddr, uint32_t rkey)
{
	return tp_post_write(c, n, src->addr, CHUNK, src->mr->lkey,
			     raddr + (n % SLOTS) * CHUNK, rkey,
			     IBV_SEND_SIGNALED);
}

/* Our device went away: the Writes that had completed before it. */
static bool device_gone(const struct stream *s, uint64_t ms, const char *who)
{
	tp_log("%s: device removed after %llu ms: %llu Writes posted, %llu "
	       "succeeded, %llu flushed before DEVICE_FATAL", who,
	       (unsigned long long)ms, (unsigned long long)s->posted,
	       (unsigned long long)s->w.ok, (unsigned long long)s->w.flushed);
	if (!s->w.ok)
		tp_fail("%s: no Write succeeded before the device went", who);
	return !tp_failures;
}

/*
 * Stream until the connection has ended and every Write has completed
 * (with -R: until the device has gone).
 */
static bool stream_until_lost(struct tp_conn *c, const struct opts *o,
			      struct tp_buf *src, uint64_t raddr,
			      uint32_t rkey, const char *who)
{
	struct stream s = {};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	uint64_t t0 = tp_now_ms(), tend = 0, done;
	int err;

	nonblocking(c->ec->fd);
	nonblocking(c->id->verbs->async_fd);
	tp_log("%s: streaming RDMA Writes of %u octets, %u in flight", who,
	       CHUNK, o->window);
	for (;;) {
		if (!tp_reap(c->scq, &s.w, who))
			return false;
		done = s.w.ok + s.w.flushed + s.w.failed;
		while (!s.refused && !s.disconnected && !s.w.flushed &&
		       !s.removed && !s.fatal && s.posted - done < o->window) {
			err = post_write(c, src, s.posted, raddr, rkey);
			if (err) {
				tp_log("%s: post refused (%s) after %llu Writes",
				       who, strerror(err),
				       (unsigned long long)s.posted);
				s.refused = true;
				break;
			}
			s.posted++;
		}
		cm_events(c, &s, who);
		async_events(c, &s, who);
		if (s.removed && !o->removal) {
			tp_fail("%s: DEVICE_REMOVAL, but no device was to go",
				who);
			return false;
		}
		if (o->removal ? s.removed && s.fatal :
				 s.disconnected && done == s.posted)
			break;
		if (tp_now_ms() - t0 > (uint64_t)o->r.timeout_ms) {
			tp_fail("%s: after %d s: %llu Writes posted, %llu "
				"completed, %s", who, o->r.timeout_ms / 1000,
				(unsigned long long)s.posted,
				(unsigned long long)done,
				o->removal ? (s.removed ? "no DEVICE_FATAL" :
					      "no DEVICE_REMOVAL") :
				s.disconnected ? "disconnected" :
				"the connection never ended (was the link "
				"down long enough?)");
			return false;
		}
		usleep(s.w.flushed || s.refused ? 10000 : 200);
	}
	tend = tp_now_ms();
	if (o->removal)
		return device_gone(&s, tend - t0, who);
	tp_log("%s: connection lost after %llu ms: %llu Writes posted, %llu "
	       "succeeded, %llu flushed", who,
	       (unsigned long long)(tend - t0), (unsigned long long)s.posted,
	       (unsigned long long)s.w.ok, (unsigned long long)s.w.flushed);
	if (!s.w.ok)
		tp_fail("%s: no Write succeeded before the link went", who);

	if (ibv_query_qp(c->qp, &a, IBV_QP_STATE, &init))
		tp_fail("%s: ibv_query_qp: %s", who, strerror(errno));
	else if (a.qp_state != IBV_QPS_ERR)
		tp_fail("%s: QP in %s after the connection was lost, want ERR",
			who, tp_qp_state_name(a.qp_state));

	/* A Write posted now is refused, or flushed: never lost. */
	err = post_write(c, src, s.posted, raddr, rkey);
	if (err) {
		tp_log("%s: a Write posted afterwards is refused (%s)", who,
		       strerror(err));
	} else {
		struct ibv_wc wc;
		int r = tp_poll(c->scq, &wc, 5000);

		if (r != 1 || wc.status != IBV_WC_WR_FLUSH_ERR)
			tp_fail("%s: a Write posted afterwards %s", who,
				r == 1 ? tp_wc_status_name(wc.status) :
				"never completed");
		else
			tp_log("%s: a Write posted afterwards is flushed", who);
	}
	return !tp_failures;
}

static int run_server(const struct opts *o)
{
	struct rdma_event_channel *ec = tp_channel();
	struct rdma_cm_id *listen = tp_listen(ec, o->r.port);
	struct tp_qp_opts q = { .max_send_wr = o->window + 1,
				.max_recv_wr = 1, .max_sge = 1 };
	struct tp_buf sink = {}, src = {}, info = {};
	struct tp_conn c = {};
	uint64_t w[3];
	uint8_t pdata[24];
	bool ok;

	if (!tp_take_request(ec, listen, &c, MAGIC, w, 1, o->r.timeout_ms))
		return 1;
	tp_print_device(c.id->verbs, "server");
	if (!tp_buf_alloc(&sink, c.pd, SLOTS * CHUNK, SLOTS * CHUNK,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) ||
	    !tp_buf_alloc(&src, c.pd, CHUNK, CHUNK, 0) ||
	    !tp_buf_alloc(&info, c.pd, 16, 16, IBV_ACCESS_LOCAL_WRITE))
		tp_die("buffers");
	w[1] = (uintptr_t)sink.addr;
	w[2] = sink.mr->rkey;
	tp_pdata_put(pdata, w, 3);
	/* The client's sink comes in its first (and only) Send. */
	if (!tp_setup_qp(&c, &q) ||
	    tp_post_recv(&c, 1, info.addr, 16, info.mr->lkey) ||
	    !tp_accept(&c, pdata, sizeof(pdata), 0, o->r.timeout_ms) ||
	    !tp_wait_ok(c.rcq, IBV_WC_RECV, 1, "the client's sink",
			o->r.timeout_ms, NULL))
		return 1;
	ok = stream_until_lost(&c, o, &src, ((uint64_t *)info.addr)[0],
			       (uint32_t)((uint64_t *)info.addr)[1],
			       "server");
	tp_destroy(&c);
	if (o->removal)
		tp_log("server: torn down after the removal");
	tp_buf_free(&sink);
	tp_buf_free(&src);
	tp_buf_free(&info);
	if (!ok)
		return 1;
	tp_log("PASS: server");
	return 0;
}

static int run_client(const struct opts *o)
{
	struct rdma_event_channel *ec = tp_channel();
	struct tp_qp_opts q = { .max_send_wr = o->window + 1,
				.max_recv_wr = 1, .max_sge = 1 };
	struct tp_buf sink = {}, src = {}, info = {};
	struct ibv_pd *pd = NULL;
	struct tp_conn c = {};
	uint64_t w[3] = { MAGIC };
	uint8_t pdata[8];
	bool ok;

	tp_pdata_put(pdata, w, 1);
	if (!tp_connect(&c, ec, o->r.host, o->r.port, &pd, &q, pdata,
			sizeof(pdata), o->r.timeout_ms))
		return 1;
	tp_print_device(c.id->verbs, "client");
	if (!tp_pdata_get(c.peer_pdata, c.peer_pdata_len, w, 3) ||
	    w[0] != MAGIC)
		tp_die("accept without the server's sink");
	if (!tp_buf_alloc(&sink, pd, SLOTS * CHUNK, SLOTS * CHUNK,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) ||
	    !tp_buf_alloc(&src, pd, CHUNK, CHUNK, 0) ||
	    !tp_buf_alloc(&info, pd, 16, 16, 0))
		tp_die("buffers");
	((uint64_t *)info.addr)[0] = (uintptr_t)sink.addr;
	((uint64_t *)info.addr)[1] = sink.mr->rkey;
	if (tp_post_send(&c, 1, info.addr, 16, info.mr->lkey,
			 IBV_SEND_SIGNALED) ||
	    !tp_wait_ok(c.scq, IBV_WC_SEND, 1, "sending the sink",
			o->r.timeout_ms, NULL))
		return 1;
	ok = stream_until_lost(&c, o, &src, w[1], (uint32_t)w[2], "client");
	tp_destroy(&c);
	if (o->removal)
		tp_log("client: torn down after the removal");
	tp_buf_free(&sink);
	tp_buf_free(&src);
	tp_buf_free(&info);
	ibv_dealloc_pd(pd);
	if (!ok)
		return 1;
	tp_log("PASS: client");
	return 0;
}

static bool opt(int ch, const char *arg, void *ctx)
{
	struct opts *o = ctx;

	switch (ch) {
	case 'R':
		o->removal = true;
		return true;
	case 'w':
		o->window = (uint32_t)tp_parse_u64(arg, "-w", 1, SLOTS);
		return true;
	default:
		return false;
	}
}

int main(int argc, char **argv)
{
	struct opts o = { .r = { .port = 18524, .timeout_ms = 120000 },
			  .window = 8 };

	tp_prog = "siwx-link-loss";
	tp_role_parse_opts(argc, argv, &o.r, "Rw:", opt, &o, usage);
	return o.r.server ? run_server(&o) : run_client(&o);
}
