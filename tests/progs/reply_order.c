// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-reply-order: a Send's completion comes before the completion of
 * the receive of the peer's reply to it. Both ends ask and answer at once,
 * as libfabric's ofi_rxm does in its atomic protocol: each sends -n
 * requests, one at a time, and answers each of the peer's requests the
 * moment its receive completes; sends and receives complete on one CQ,
 * polled without sleeping. A reply can exist only once the request left,
 * so a reply whose receive completes before the request's Send has
 * completed means the device reported the two out of causal order.
 * Verbs does not order a send queue's completions against a receive
 * queue's, but software relies on this one: ofi_rxm frees a request's
 * buffer when the reply arrives and then takes the Send's late
 * completion for that of whatever reused the buffer (fi_rdm_atomic hung,
 * 2026-11-30). The program counts such replies and fails on any.
 *
 *   siwx-reply-order -s [-p PORT] [-t SEC] [-v]
 *   siwx-reply-order -c HOST [-n REQUESTS] [-p PORT] [-t SEC] [-v]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_common.h"

#define MAGIC UINT64_C(0x5349575852504c59)	/* "SIWXRPLY" */
#define NRECV 16u		/* receives posted; at most 2 in flight */
#define NREPLY 4u		/* reply buffers; at most 1 reply owed */
#define MSG_LEN 64u		/* as a small protocol message would be */
#define MAX_LATE 10		/* late completions named one by one */

enum { MSG_REQUEST = 1, MSG_REPLY = 2 };

/* wr_id of a Send: kind in the top 32 bits, sequence or slot below */
#define WR_REQUEST (UINT64_C(1) << 32)
#define WR_REPLY (UINT64_C(2) << 32)

struct side {
	struct tp_conn c;
	struct tp_buf recv, send;	/* NRECV and 1 + NREPLY messages */
	uint64_t n;			/* requests each side sends */
	uint64_t asked;			/* our requests posted */
	uint64_t answered;		/* the peer's requests replied to */
	bool sent, replied;		/* the request in flight */
	uint32_t free_replies;		/* bit mask of free reply slots */
	uint64_t late;			/* replies before their Send's CQE */
	const char *who;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-reply-order -s [-p PORT] [-t SEC] [-v]\n"
"       siwx-reply-order -c HOST [-n REQUESTS] [-p PORT] [-t SEC] [-v]\n"
"  -n REQUESTS  requests each side sends, one at a time (default 20000)\n"
"  -p PORT      rdma_cm port (default 18551)\n"
"  -t SEC       time limit of each wait (default 120)\n"
"Exit 0 when every reply's receive completed after its request's Send.\n");
}

static uint8_t *msg_at(struct tp_buf *b, uint32_t i)
{
	return (uint8_t *)b->addr + (size_t)i * MSG_LEN;
}

static bool post_recv(struct side *s, uint32_t i)
{
	return !tp_post_recv(&s->c, i, msg_at(&s->recv, i), MSG_LEN,
			     s->recv.mr->lkey);
}

/* A message: its kind, then its sequence number */
static bool send_msg(struct side *s, uint32_t slot, uint8_t kind,
		     uint64_t seq, uint64_t wr_id)
{
	uint8_t *m = msg_at(&s->send, slot);

	memset(m, 0, MSG_LEN);
	m[0] = kind;
	memcpy(m + 8, &seq, sizeof(seq));
	return !tp_post_send(&s->c, wr_id, m, MSG_LEN, s->send.mr->lkey,
			     IBV_SEND_SIGNALED);
}

static bool ask(struct side *s)
{
	uint64_t seq = s->asked++;

	s->sent = false;
	s->replied = false;
	return send_msg(s, 0, MSG_REQUEST, seq, WR_REQUEST | seq);
}

static bool answer(struct side *s, uint64_t seq)
{
	uint32_t slot;

	if (!s->free_replies) {
		tp_fail("%s: request %llu while %u replies are unsent",
			s->who, (unsigned long long)seq, NREPLY);
		return false;
	}
	slot = (uint32_t)__builtin_ctz(s->free_replies);
	s->free_replies &= ~(1u << slot);
	s->answered++;
	return send_msg(s, 1 + slot, MSG_REPLY, seq, WR_REPLY | slot);
}

static bool on_recv(struct side *s, const struct ibv_wc *wc)
{
	const uint8_t *m = msg_at(&s->recv, (uint32_t)wc->wr_id);
	uint64_t seq;

	memcpy(&seq, m + 8, sizeof(seq));
	if (m[0] == MSG_REQUEST) {
		if (!answer(s, seq))
			return false;
	} else if (m[0] == MSG_REPLY && seq + 1 == s->asked && !s->replied) {
		if (!s->sent && ++s->late <= MAX_LATE)
			tp_log("%s: the reply to request %llu completed before its Send",
			       s->who, (unsigned long long)seq);
		s->replied = true;
	} else {
		tp_fail("%s: message of kind %u, sequence %llu, unexpected",
			s->who, m[0], (unsigned long long)seq);
		return false;
	}
	return post_recv(s, (uint32_t)wc->wr_id);
}

static bool on_send(struct side *s, const struct ibv_wc *wc)
{
	if ((wc->wr_id & ~UINT64_C(0xffffffff)) == WR_REPLY) {
		s->free_replies |= 1u << (wc->wr_id & 0xffffffff);
		return true;
	}
	if (wc->wr_id != (WR_REQUEST | (s->asked - 1)) || s->sent) {
		tp_fail("%s: Send completion of wr_id %#llx unexpected",
			s->who, (unsigned long long)wc->wr_id);
		return false;
	}
	s->sent = true;
	return true;
}

static bool done(const struct side *s)
{
	return s->asked == s->n && s->sent && s->replied &&
	       s->answered == s->n && s->free_replies == (1u << NREPLY) - 1;
}

/* Ask, answer and poll until both ends' requests are all replied to */
static bool run(struct side *s, int tmo)
{
	struct ibv_wc wc[16];
	uint64_t last = tp_now_ms();
	int i, got;

	s->free_replies = (1u << NREPLY) - 1;
	if (!ask(s))
		return false;
	while (!done(s)) {
		got = ibv_poll_cq(s->c.scq, 16, wc);
		if (got < 0) {
			tp_fail("%s: ibv_poll_cq failed", s->who);
			return false;
		}
		if (!got) {
			if (tp_now_ms() - last > (uint64_t)tmo) {
				tp_fail("%s: stuck at request %llu (sent %d, replied %d), %llu answered",
					s->who, (unsigned long long)s->asked,
					s->sent, s->replied,
					(unsigned long long)s->answered);
				return false;
			}
			continue;
		}
		last = tp_now_ms();
		/*
		 * Not past the end: the peer, done too, may close at once,
		 * and its flush errors may follow in the same batch.
		 */
		for (i = 0; i < got && !done(s); i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				tp_fail("%s: wr_id %#llx: %s at request %llu (sent %d, replied %d), %llu answered, replies free %#x",
					s->who,
					(unsigned long long)wc[i].wr_id,
					tp_wc_status_name(wc[i].status),
					(unsigned long long)s->asked, s->sent,
					s->replied,
					(unsigned long long)s->answered,
					s->free_replies);
				return false;
			}
			if (!(wc[i].opcode & IBV_WC_RECV ? on_recv(s, &wc[i]) :
							   on_send(s, &wc[i])))
				return false;
		}
		if (s->sent && s->replied && s->asked < s->n && !ask(s))
			return false;
	}
	return true;
}

static bool buffers(struct side *s, struct ibv_pd *pd)
{
	return tp_buf_alloc(&s->recv, pd, NRECV * MSG_LEN, NRECV * MSG_LEN,
			    IBV_ACCESS_LOCAL_WRITE) &&
	       tp_buf_alloc(&s->send, pd, (1 + NREPLY) * MSG_LEN,
			    (1 + NREPLY) * MSG_LEN, IBV_ACCESS_LOCAL_WRITE);
}

static bool post_recvs(struct side *s)
{
	uint32_t i;

	for (i = 0; i < NRECV; i++)
		if (!post_recv(s, i))
			return false;
	return true;
}

static int finish(struct side *s, int tmo)
{
	bool ok = run(s, tmo);

	tp_close(&s->c, tmo);
	tp_buf_free(&s->recv);
	tp_buf_free(&s->send);
	if (!ok || tp_failures)
		return 1;
	if (s->late) {
		tp_fail("%s: %llu of %llu replies completed before their request's Send",
			s->who, (unsigned long long)s->late,
			(unsigned long long)s->n);
		return 1;
	}
	tp_log("PASS: %s: %llu requests each way, every reply after its Send",
	       s->who, (unsigned long long)s->n);
	return 0;
}

/* One CQ for both queues: the order between them is what is checked */
static const struct tp_qp_opts qp_opts = {
	.max_send_wr = 1 + NREPLY, .max_recv_wr = NRECV, .max_sge = 1,
	.one_cq = true,
};

static int run_server(const struct tp_role *r)
{
	struct rdma_event_channel *ec = tp_channel();
	struct rdma_cm_id *listen = tp_listen(ec, r->port);
	struct side s = { .who = "server" };
	uint64_t w[2];

	if (!tp_take_request(ec, listen, &s.c, MAGIC, w, 2, r->timeout_ms))
		return 1;
	s.n = w[1];
	if (!s.n || s.n > 100000000)
		tp_die("a request for %llu requests", (unsigned long long)s.n);
	if (!buffers(&s, s.c.pd) || !tp_setup_qp(&s.c, &qp_opts) ||
	    !post_recvs(&s) || !tp_accept(&s.c, NULL, 0, 0, r->timeout_ms))
		return 1;
	return finish(&s, r->timeout_ms);
}

static int run_client(const struct tp_role *r, uint64_t n)
{
	struct rdma_event_channel *ec = tp_channel();
	struct side s = { .who = "client", .n = n };
	uint64_t w[2] = { MAGIC, n };
	uint8_t pdata[16];

	tp_pdata_put(pdata, w, 2);
	/* The server may ask at once: receives first (no RNR on iWARP) */
	if (!tp_resolve(&s.c, ec, r->host, r->port, r->timeout_ms))
		return 1;
	s.c.pd = ibv_alloc_pd(s.c.id->verbs);
	if (!s.c.pd)
		tp_die("ibv_alloc_pd failed");
	if (!buffers(&s, s.c.pd) || !tp_setup_qp(&s.c, &qp_opts) ||
	    !post_recvs(&s) ||
	    !tp_connect_qp(&s.c, pdata, sizeof(pdata), r->timeout_ms))
		return 1;
	return finish(&s, r->timeout_ms);
}

static uint64_t requests = 20000;

static bool opt(int ch, const char *arg, void *ctx)
{
	(void)ctx;
	if (ch != 'n')
		return false;
	requests = tp_parse_u64(arg, "-n", 1, 100000000);
	return true;
}

int main(int argc, char **argv)
{
	struct tp_role r = { .port = 18551, .timeout_ms = 120000 };

	tp_prog = "siwx-reply-order";
	tp_role_parse_opts(argc, argv, &r, "n:", opt, NULL, usage);
	return r.server ? run_server(&r) : run_client(&r, requests);
}
