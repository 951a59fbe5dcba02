// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-send-reuse: a send buffer is the application's again from its
 * WR's completion on. The client sends -n messages of -m octets, Sends
 * and RDMA Writes with Immediate in turn, from only -k buffers: each is
 * filled with its message's pattern when posted and overwritten with
 * another the moment its completion arrives, then used for a later
 * message while TCP may still hold (and on a lossy link retransmit) what
 * went before. The server checks every message octet by octet against
 * the pattern of its sequence number: it must see what the buffer held
 * when the WR was posted, never what it held later. Whatever siwx hands
 * TCP, by copy or by reference, must not let a reused buffer reach the
 * wire (issue 36: zero-copy sends complete only when TCP lets go).
 *
 * iWARP has no RNR retry, so the client sends in batches of -b that the
 * server's posted receives cover, and waits for the server's 8-octet
 * acknowledgement (its receives reposted) between them.
 *
 * With -x a thread of the client also rewrites the send buffers all the
 * time, while their WRs are being sent: what arrives is then undefined,
 * so the server checks only that every message arrives whole (opcode,
 * length, immediate data). The connection must survive it: with MPA CRCs
 * the CRC covers exactly the octets TCP sends (siwx's stage), so the peer
 * never sees a CRC error; without, TCP sends whatever the pages hold.
 *
 *   siwx-send-reuse -s [-p PORT] [-t SEC] [-v]
 *   siwx-send-reuse -c HOST [-n MSGS] [-m OCTETS] [-b BATCH] [-k BUFS] [-x]
 *                   [-p PORT] [-t SEC] [-v]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_common.h"

#define MAGIC UINT64_C(0x5349575852455553)	/* "SIWXREUS" */
#define BATCH_MAX 64u
#define ACK_LEN 8u

struct opts {
	struct tp_role r;
	uint32_t msgs;
	uint32_t len;
	uint32_t batch;
	uint32_t bufs;
	bool racing;		/* -x: a thread rewrites the buffers */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-send-reuse -s [-p PORT] [-t SEC] [-v]\n"
"       siwx-send-reuse -c HOST [-n MSGS] [-m OCTETS] [-b BATCH] [-k BUFS]\n"
"                       [-x] [-p PORT] [-t SEC] [-v]\n"
"  -n MSGS    messages, Sends and Writes with Immediate in turn (default 2000)\n"
"  -m OCTETS  octets a message (default 16384)\n"
"  -b BATCH   messages between the server's acknowledgements (default 16,\n"
"             at most 64)\n"
"  -k BUFS    client send buffers, reused from each completion on (default 4)\n"
"  -x         a thread rewrites the send buffers while they are sent; the\n"
"             server then checks only that every message arrives whole\n"
"  -p PORT    rdma_cm port (default 18541)\n"
"  -t SEC     time limit of each wait (default 120)\n"
"Exit 0 when every message arrived as its buffer held it when posted\n"
"(with -x: arrived at all).\n");
}

/* The server's side of a message: a receive, or a Write's slot */
static bool check_msg(const struct ibv_wc *wc, uint64_t seq,
		      const uint8_t *recv, const uint8_t *slot, uint32_t len,
		      bool racing)
{
	const uint8_t *p = recv;
	int64_t at;

	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		if (!(wc->wc_flags & IBV_WC_WITH_IMM) ||
		    ntohl(wc->imm_data) != (uint32_t)seq) {
			tp_fail("message %llu: immediate data %u",
				(unsigned long long)seq, ntohl(wc->imm_data));
			return false;
		}
		p = slot;
	} else if (wc->opcode != IBV_WC_RECV || wc->byte_len != len) {
		tp_fail("message %llu: %s of %u octets",
			(unsigned long long)seq,
			tp_wc_opcode_name(wc->opcode), wc->byte_len);
		return false;
	}
	if (racing)
		return true;
	at = tp_pat_check(p, len, seq);
	if (at >= 0) {
		tp_fail("message %llu (%s): octet %lld is not what the buffer "
			"held when the WR was posted",
			(unsigned long long)seq,
			wc->opcode == IBV_WC_RECV ? "Send" : "Write", (long long)at);
		return false;
	}
	return true;
}

static int run_server(const struct opts *o)
{
	struct rdma_event_channel *ec = tp_channel();
	struct rdma_cm_id *listen = tp_listen(ec, o->r.port);
	struct tp_qp_opts q = { .max_send_wr = 2, .max_recv_wr = BATCH_MAX,
				.max_sge = 1 };
	struct tp_buf recv = {}, win = {}, ack = {};
	struct tp_conn c = {};
	uint64_t w[5], seq = 0, msgs;
	uint32_t len, batch, i;
	uint8_t pdata[16];
	int tmo = o->r.timeout_ms;
	struct ibv_wc wc;

	if (!tp_take_request(ec, listen, &c, MAGIC, w, 5, tmo))
		return 1;
	msgs = w[1];
	len = (uint32_t)w[2];
	batch = (uint32_t)w[3];
	if (!len || len > (1u << 20) || !batch || batch > BATCH_MAX)
		tp_die("a request for messages of %u octets in batches of %u",
		       len, batch);
	if (!tp_buf_alloc(&recv, c.pd, (size_t)len * batch,
			  (size_t)len * batch, IBV_ACCESS_LOCAL_WRITE) ||
	    !tp_buf_alloc(&win, c.pd, (size_t)len * batch, (size_t)len * batch,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) ||
	    !tp_buf_alloc(&ack, c.pd, ACK_LEN, ACK_LEN, IBV_ACCESS_LOCAL_WRITE))
		tp_die("buffers for batches of %u messages", batch);
	if (!tp_setup_qp(&c, &q))
		return 1;
	for (i = 0; i < batch; i++)
		if (tp_post_recv(&c, i, (uint8_t *)recv.addr + (size_t)i * len,
				 len, recv.mr->lkey))
			return 1;
	{
		uint64_t a[2] = { (uintptr_t)win.addr, win.mr->rkey };

		tp_pdata_put(pdata, a, 2);
	}
	if (!tp_accept(&c, pdata, sizeof(pdata), 0, tmo))
		return 1;

	while (seq < msgs) {
		uint32_t n = msgs - seq < batch ? (uint32_t)(msgs - seq) : batch;

		for (i = 0; i < n; i++, seq++) {
			if (tp_poll(c.rcq, &wc, tmo) <= 0) {
				tp_fail("message %llu never came",
					(unsigned long long)seq);
				return 1;
			}
			if (wc.status != IBV_WC_SUCCESS) {
				tp_fail("message %llu: %s",
					(unsigned long long)seq,
					tp_wc_status_name(wc.status));
				return 1;
			}
			if (!check_msg(&wc, seq, (uint8_t *)recv.addr +
					   wc.wr_id * len,
				       (uint8_t *)win.addr + (size_t)i * len,
				       len, w[4]))
				return 1;
			if (tp_post_recv(&c, wc.wr_id, (uint8_t *)recv.addr +
						 wc.wr_id * len, len,
					 recv.mr->lkey))
				return 1;
		}
		/* Checked, receives back: the next batch may come */
		*(uint64_t *)ack.addr = seq;
		if (tp_post_send(&c, seq, ack.addr, ACK_LEN, ack.mr->lkey,
				 IBV_SEND_SIGNALED) ||
		    !tp_wait_ok(c.scq, IBV_WC_SEND, seq, "an acknowledgement",
				tmo, NULL))
			return 1;
	}
	if (!tp_close_after_peer(&c, 1, tmo))
		return 1;
	tp_buf_free(&recv);
	tp_buf_free(&win);
	tp_buf_free(&ack);
	if (tp_failures)
		return 1;
	tp_log("PASS: server: %llu messages of %u octets %s",
	       (unsigned long long)msgs, len,
	       w[4] ? "whole (their buffers rewritten while sent)" :
		      "as posted");
	return 0;
}

/* Post message @seq from buffer @buf; its Write goes to slot @slot */
static int post_msg(struct tp_conn *c, const struct opts *o, uint8_t *buf,
		    uint32_t lkey, uint64_t seq, uint32_t slot,
		    const uint64_t *raddr_rkey)
{
	tp_pat_fill(buf, o->len, seq);
	if (seq % 2 == 0)
		return tp_post_send(c, seq, buf, o->len, lkey,
				    IBV_SEND_SIGNALED);
	return tp_post_write_imm(c, seq, buf, o->len, lkey,
				 raddr_rkey[0] + (uint64_t)slot * o->len,
				 (uint32_t)raddr_rkey[1], (uint32_t)seq,
				 IBV_SEND_SIGNALED);
}

struct racer {
	uint8_t *buf;
	size_t len;
	volatile bool stop;
	uint64_t rounds;
};

/* -x: rewrite every send buffer, over and over, until told to stop */
static void *race(void *arg)
{
	struct racer *r = arg;

	while (!r->stop)
		memset(r->buf, (int)(r->rounds++ & 0xff), r->len);
	return NULL;
}

static int run_client(const struct opts *o)
{
	struct rdma_event_channel *ec = tp_channel();
	struct tp_qp_opts q = { .max_send_wr = o->bufs, .max_recv_wr = 1,
				.max_sge = 1 };
	uint64_t w[5] = { MAGIC, o->msgs, o->len, o->batch, o->racing };
	struct tp_buf bufs = {}, ack = {};
	struct racer racer = {};
	pthread_t racer_th;
	uint64_t seq = 0;
	struct ibv_pd *pd = NULL;
	struct tp_conn c = {};
	uint8_t pdata[40];
	int tmo = o->r.timeout_ms;
	struct ibv_wc wc;

	tp_pdata_put(pdata, w, 5);
	if (!tp_connect(&c, ec, o->r.host, o->r.port, &pd, &q, pdata,
			sizeof(pdata), tmo))
		return 1;
	if (!tp_pdata_get(c.peer_pdata, c.peer_pdata_len, w, 2))
		tp_die("accept without the server's window");
	if (!tp_buf_alloc(&bufs, pd, (size_t)o->len * o->bufs,
			  (size_t)o->len * o->bufs, IBV_ACCESS_LOCAL_WRITE) ||
	    !tp_buf_alloc(&ack, pd, ACK_LEN, ACK_LEN, IBV_ACCESS_LOCAL_WRITE))
		tp_die("%u buffers of %u octets", o->bufs, o->len);
	if (o->racing) {
		racer.buf = bufs.addr;
		racer.len = (size_t)o->len * o->bufs;
		if (pthread_create(&racer_th, NULL, race, &racer))
			tp_die("pthread_create failed");
	}

	while (seq < o->msgs) {
		uint64_t first = seq, done;
		uint32_t n = o->msgs - seq < o->batch ?
				     (uint32_t)(o->msgs - seq) : o->batch;

		if (tp_post_recv(&c, 0, ack.addr, ACK_LEN, ack.mr->lkey))
			return 1;
		/* Buffer k carries messages k, k + bufs, ... of the batch */
		for (done = first; done < first + n;) {
			while (seq < first + n && seq - done < o->bufs) {
				uint32_t k = (uint32_t)((seq - first) % o->bufs);

				if (post_msg(&c, o, (uint8_t *)bufs.addr +
						     (size_t)k * o->len,
					     bufs.mr->lkey, seq,
					     (uint32_t)(seq - first), w)) {
					tp_fail("posting message %llu",
						(unsigned long long)seq);
					return 1;
				}
				seq++;
			}
			if (!tp_wait_ok(c.scq, done % 2 ? IBV_WC_RDMA_WRITE :
					IBV_WC_SEND, done, "a message", tmo,
					NULL))
				return 1;
			/* The application's again: scribble over it at once */
			memset((uint8_t *)bufs.addr +
			       (size_t)((done - first) % o->bufs) * o->len,
			       0xee, o->len);
			done++;
		}
		if (tp_poll(c.rcq, &wc, tmo) <= 0 ||
		    wc.status != IBV_WC_SUCCESS ||
		    *(uint64_t *)ack.addr != seq) {
			tp_fail("no acknowledgement of message %llu",
				(unsigned long long)seq - 1);
			return 1;
		}
	}
	if (o->racing) {
		racer.stop = true;
		pthread_join(racer_th, NULL);
		tp_log("client: the buffers rewritten %llu times while sent",
		       (unsigned long long)racer.rounds);
	}
	tp_close(&c, tmo);
	tp_buf_free(&bufs);
	tp_buf_free(&ack);
	ibv_dealloc_pd(pd);
	if (tp_failures)
		return 1;
	tp_log("PASS: client: %u messages of %u octets from %u buffers, %s",
	       o->msgs, o->len, o->bufs,
	       o->racing ? "rewritten all the time by another thread" :
			   "each rewritten at its completion");
	return 0;
}

static bool opt(int ch, const char *arg, void *ctx)
{
	struct opts *o = ctx;

	switch (ch) {
	case 'n':
		o->msgs = (uint32_t)tp_parse_u64(arg, "-n", 1, 10000000);
		return true;
	case 'm':
		o->len = (uint32_t)tp_parse_u64(arg, "-m", 4, 1u << 20);
		return true;
	case 'b':
		o->batch = (uint32_t)tp_parse_u64(arg, "-b", 1, BATCH_MAX);
		return true;
	case 'k':
		o->bufs = (uint32_t)tp_parse_u64(arg, "-k", 1, 256);
		return true;
	case 'x':
		o->racing = true;
		return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	struct opts o = { .r = { .port = 18541, .timeout_ms = 120000 },
			  .msgs = 2000, .len = 16384, .batch = 16, .bufs = 4 };

	tp_prog = "siwx-send-reuse";
	tp_role_parse_opts(argc, argv, &o.r, "n:m:b:k:x", opt, &o, usage);
	return o.r.server ? run_server(&o) : run_client(&o);
}
