// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-close-race: a graceful disconnect loses nothing the closing side
 * sent, even while its peer is still sending to it.
 *
 * The client streams RDMA Writes into a buffer of the server's. Once the
 * server sees them land, it sends one FINAL-byte Send and disconnects as
 * soon as that Send has completed, which on iWARP only means that TCP
 * holds it, not that it has left. The client must receive the whole Send,
 * intact, before the connection ends; then its own disconnect must
 * succeed, and every Write it posted must complete (successfully, or
 * flushed once the QP is in ERROR).
 *
 * This is the case that a close releasing its socket with unread data
 * (the peer's Writes) got wrong: TCP then resets the connection, and the
 * reset discards the unsent rest of the Send.
 *
 *   siwx-close-race -s [-p PORT] [-t SEC] [-v]
 *   siwx-close-race -c HOST [-p PORT] [-t SEC] [-v]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp_common.h"

#define FINAL (1024u * 1024u)	/* bytes of the server's last Send */
#define WRITE (16u * 1024u)	/* bytes per client Write */
#define WINDOW 16u		/* Writes in flight */
#define SEEN 32u		/* Writes the server waits to see land */
#define MAGIC UINT64_C(0x53495758434c5331)	/* "SIWXCLS1" */

struct opts {
	struct tp_role r;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-close-race -s [-p PORT] [-t SEC] [-v]\n"
"       siwx-close-race -c HOST [-p PORT] [-t SEC] [-v]\n"
"  -s | -c HOST  server (sends last, disconnects) or client (streams Writes)\n"
"  -p PORT       rdma_cm port (default 18521)\n"
"  -t SEC        time limit of each wait (default 60)\n"
"  -6            server: listen on [::], IPv6 only\n"
"Exit 0 when the client got the server's last Send whole and both ends\n"
"closed cleanly.\n");
}


/* The Send's contents: a function of the offset nobody could fake. */
static uint8_t final_byte(size_t i)
{
	return (uint8_t)(tp_mix(MAGIC, i / 8) >> (8 * (i % 8)));
}

static uint64_t load_seq(const void *p)
{
	return __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE);
}

static int run_server(const struct opts *o)
{
	struct rdma_event_channel *ec = tp_channel();
	struct rdma_cm_id *listen = tp_listen(ec, o->r.port);
	struct tp_qp_opts q = { .max_send_wr = 2, .max_recv_wr = 1,
				.max_sge = 1 };
	struct tp_buf sink = {}, fin = {};
	struct tp_conn c = {};
	uint8_t pdata[16];
	uint64_t w[2], start;
	size_t i;

	if (!tp_take_request(ec, listen, &c, MAGIC, w, 1, o->r.timeout_ms))
		return 1;
	tp_print_device(c.id->verbs, "server");
	if (!tp_buf_alloc(&sink, c.pd, WRITE, WRITE,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) ||
	    !tp_buf_alloc(&fin, c.pd, FINAL, FINAL, 0))
		tp_die("buffers");
	for (i = 0; i < FINAL; i++)
		((uint8_t *)fin.addr)[i] = final_byte(i);
	w[0] = (uintptr_t)sink.addr;
	w[1] = sink.mr->rkey;
	tp_pdata_put(pdata, w, 2);
	if (!tp_setup_qp(&c, &q) ||
	    !tp_accept(&c, pdata, sizeof(pdata), 0, o->r.timeout_ms))
		return 1;

	/* Each Write carries its sequence number in its first 8 bytes. */
	start = tp_now_ms();
	while (load_seq(sink.addr) < SEEN) {
		if (tp_now_ms() - start > (uint64_t)o->r.timeout_ms) {
			tp_fail("the client's Writes did not arrive (%llu "
				"seen)", (unsigned long long)load_seq(sink.addr));
			return 1;
		}
		usleep(1000);
	}
	if (tp_post_send(&c, 1, fin.addr, FINAL, fin.mr->lkey,
			 IBV_SEND_SIGNALED) ||
	    !tp_wait_ok(c.scq, IBV_WC_SEND, 1, "the last Send",
			o->r.timeout_ms, NULL))
		return 1;
	/* At once: the Send may still sit in TCP's send queue. */
	tp_log("server: last Send (%u bytes) completed after Write %llu "
	       "landed; disconnecting while the client still writes", FINAL,
	       (unsigned long long)load_seq(sink.addr));
	tp_close(&c, o->r.timeout_ms);
	tp_buf_free(&sink);
	tp_buf_free(&fin);
	if (tp_failures)
		return 1;
	tp_log("PASS: server");
	return 0;
}

struct stream {
	uint64_t posted;
	struct tp_tally w;	/* the Writes' completions */
	bool stop;
};

static uint64_t completed(const struct stream *s)
{
	return s->w.ok + s->w.flushed + s->w.failed;
}

static bool check_final(const struct tp_buf *b, const struct ibv_wc *wc)
{
	const uint8_t *p = b->addr;
	size_t i;

	if (wc->status != IBV_WC_SUCCESS) {
		tp_fail("the server's last Send was lost: its receive "
			"completed with %s", tp_wc_status_name(wc->status));
		return false;
	}
	if (wc->byte_len != FINAL) {
		tp_fail("the last Send brought %u bytes, expected %u",
			wc->byte_len, FINAL);
		return false;
	}
	for (i = 0; i < FINAL; i++)
		if (p[i] != final_byte(i)) {
			tp_fail("the last Send differs at byte %zu", i);
			return false;
		}
	return true;
}

static int run_client(const struct opts *o)
{
	struct rdma_event_channel *ec = tp_channel();
	struct tp_qp_opts q = { .max_send_wr = WINDOW, .max_recv_wr = 1,
				.max_sge = 1 };
	struct tp_buf src = {}, fin = {};
	struct stream s = {};
	struct ibv_pd *pd = NULL;
	struct tp_conn c = {};
	struct ibv_wc wc;
	uint8_t pdata[8];
	uint64_t w[2], start;
	bool got = false, closed;

	w[0] = MAGIC;
	tp_pdata_put(pdata, w, 1);
	if (!tp_connect(&c, ec, o->r.host, o->r.port, &pd, &q, pdata,
			sizeof(pdata), o->r.timeout_ms))
		return 1;
	if (!tp_pdata_get(c.peer_pdata, c.peer_pdata_len, w, 2))
		tp_die("accept without the server's buffer");
	if (!tp_buf_alloc(&src, pd, WRITE * WINDOW, WRITE * WINDOW, 0) ||
	    !tp_buf_alloc(&fin, pd, FINAL, FINAL, IBV_ACCESS_LOCAL_WRITE))
		tp_die("buffers");
	/* Before any Write: the server sends only once Writes landed. */
	if (tp_post_recv(&c, 7, fin.addr, FINAL, fin.mr->lkey))
		tp_die("posting the receive of the last Send");

	start = tp_now_ms();
	while (!got) {
		if (tp_now_ms() - start > (uint64_t)o->r.timeout_ms) {
			tp_fail("no last Send within %d ms (%llu Writes "
				"done)", o->r.timeout_ms,
				(unsigned long long)s.w.ok);
			break;
		}
		if (!tp_reap(c.scq, &s.w, "client"))
			return 1;
		while (!s.stop && s.posted - completed(&s) < WINDOW) {
			uint8_t *p = (uint8_t *)src.addr +
				     (s.posted % WINDOW) * WRITE;
			uint64_t seq = s.posted + 1;

			memcpy(p, &seq, sizeof(seq));
			if (tp_post_write(&c, seq, p, WRITE, src.mr->lkey,
					  w[0], (uint32_t)w[1],
					  IBV_SEND_SIGNALED)) {
				s.stop = true;	/* the QP is gone: no more */
				break;
			}
			s.posted++;
		}
		if (ibv_poll_cq(c.rcq, 1, &wc) == 1) {
			got = true;
			if (check_final(&fin, &wc))
				tp_log("client: the last Send arrived whole "
				       "after %llu Writes", (unsigned long long)s.w.ok);
		}
	}
	/*
	 * Every Write posted completes: done, or flushed once the QP is in
	 * ERROR, by the peer's close (iWARP) or by our own disconnect after
	 * it (InfiniBand, where it would otherwise wait for retries).
	 */
	closed = tp_disconnect_after_peer(&c, 1, o->r.timeout_ms);
	start = tp_now_ms();
	while (completed(&s) < s.posted &&
	       tp_now_ms() - start < (uint64_t)o->r.timeout_ms) {
		if (!tp_reap(c.scq, &s.w, "client"))
			return 1;
		usleep(1000);
	}
	if (completed(&s) < s.posted)
		tp_fail("%llu of %llu Writes never completed",
			(unsigned long long)(s.posted - completed(&s)),
			(unsigned long long)s.posted);
	tp_destroy(&c);
	tp_buf_free(&src);
	tp_buf_free(&fin);
	ibv_dealloc_pd(pd);
	if (tp_failures || !closed) {
		tp_log("FAILED: client (%llu Writes done, %llu flushed)",
		       (unsigned long long)s.w.ok, (unsigned long long)s.w.flushed);
		return 1;
	}
	tp_log("PASS: client: the last Send arrived whole while %llu Writes "
	       "streamed (%llu flushed by the close)",
	       (unsigned long long)s.w.ok, (unsigned long long)s.w.flushed);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;

	tp_prog = "siwx-close-race";
	setvbuf(stdout, NULL, _IOLBF, 0);
	o = (struct opts){ .r = { .port = 18521, .timeout_ms = 60000 } };
	tp_role_parse(argc, argv, &o.r, usage);
	return o.r.server ? run_server(&o) : run_client(&o);
}
