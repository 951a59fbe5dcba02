// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-local-fuzz's peer: what the fuzzer's siwx lets reach the wire.
 * Its 64 KiB buffer has a registered window between two canaries; every
 * connection gets the window's STag and receives of 4 KiB. Every octet
 * that arrives (each receive, the window after each connection) is
 * scanned for a run of the marker, which only the fuzzer's unregistered
 * memory and its other PD's MR hold; the canaries must never change.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "local_fuzz.h"

struct peer {
	const struct lf_opts *o;
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen;
	struct ibv_pd *pd;
	uint8_t *mem, *initial;
	struct ibv_mr *win;
	struct tp_buf rbuf;
	unsigned long conns, recvs, bytes;
};

static bool peer_init(struct peer *p, struct ibv_context *ctx)
{
	p->pd = ibv_alloc_pd(ctx);
	p->mem = aligned_alloc(4096, PEER_LEN);
	p->initial = malloc(PEER_LEN);
	if (!p->pd || !p->mem || !p->initial) {
		tp_fail("peer setup: %s", strerror(errno));
		return false;
	}
	lf_pattern(p->mem, PEER_LEN, 7);
	memcpy(p->initial, p->mem, PEER_LEN);
	p->win = ibv_reg_mr(p->pd, p->mem + PEER_WIN_OFF, PEER_WIN_LEN,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!p->win) {
		tp_fail("ibv_reg_mr: %s", strerror(errno));
		return false;
	}
	return tp_buf_alloc(&p->rbuf, p->pd, PEER_NRECV * PEER_RECV,
			    PEER_NRECV * PEER_RECV, IBV_ACCESS_LOCAL_WRITE);
}

static int peer_post(struct tp_conn *c, struct peer *p, uint32_t i)
{
	return tp_post_recv(c, i, (uint8_t *)p->rbuf.addr + i * PEER_RECV,
			    PEER_RECV, p->rbuf.mr->lkey);
}

static void peer_scan(const uint8_t *d, size_t len, const char *where)
{
	long at = lf_find_marker(d, len);

	if (at >= 0)
		tp_fail("%s: the fuzzer's unregistered or foreign memory "
			"reached the wire (marker at octet %ld)", where, at);
}

/*
 * Receives until the connection ends, and those that completed before it
 * did (scanned too); false on a poll error.
 */
static bool peer_serve(struct peer *p, struct tp_conn *c)
{
	struct pollfd pfd = { .fd = c->ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	struct ibv_wc wc;
	bool live = true, ended = false;
	int n;

	for (;;) {
		while ((n = ibv_poll_cq(c->rcq, 1, &wc)) > 0) {
			if (wc.status != IBV_WC_SUCCESS) {
				live = false;	/* flushed: the QP ended */
				continue;
			}
			p->recvs++;
			p->bytes += wc.byte_len;
			peer_scan((uint8_t *)p->rbuf.addr +
				  wc.wr_id * PEER_RECV,
				  wc.byte_len < PEER_RECV ? wc.byte_len :
							    PEER_RECV,
				  "a receive");
			if (live)
				peer_post(c, p, (uint32_t)wc.wr_id);
		}
		if (n < 0) {
			tp_fail("ibv_poll_cq failed");
			return false;
		}
		if (ended)
			return true;
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		if (rdma_get_cm_event(c->ec, &ev))
			continue;
		n = ev->event;
		rdma_ack_cm_event(ev);
		ended = n == RDMA_CM_EVENT_DISCONNECTED;
	}
}

static void peer_check(struct peer *p)
{
	if (memcmp(p->mem, p->initial, PEER_WIN_OFF) ||
	    memcmp(p->mem + PEER_WIN_OFF + PEER_WIN_LEN,
		   p->initial + PEER_WIN_OFF + PEER_WIN_LEN,
		   PEER_LEN - PEER_WIN_OFF - PEER_WIN_LEN))
		tp_fail("connection %lu: a canary beside the window changed",
			p->conns);
	peer_scan(p->mem + PEER_WIN_OFF, PEER_WIN_LEN, "the window");
}

static bool peer_one(struct peer *p, bool *end)
{
	struct tp_qp_opts q = {
		.max_send_wr = 4, .max_recv_wr = PEER_NRECV, .max_sge = 1,
		.rd_atomic = 16,
	};
	uint8_t pd[TP_ACCEPT_PDATA_MAX];
	struct tp_conn c;
	uint64_t w[4];
	uint32_t i;

	if (!tp_get_request(p->ec, p->listen, &c, p->conns ?
			    p->o->r.timeout_ms : 600000))
		return false;
	if (!tp_pdata_get(c.peer_pdata, c.peer_pdata_len, w, 2) ||
	    w[0] != LF_MAGIC) {
		tp_fail("a connect request of another program");
		return false;
	}
	*end = w[1];
	tp_own_channel(&c);
	if (!p->pd && !peer_init(p, c.id->verbs))
		return false;
	c.pd = p->pd;
	if (!tp_setup_qp(&c, &q))
		return false;
	for (i = 0; i < PEER_NRECV; i++)
		if (peer_post(&c, p, i)) {
			tp_fail("posting a receive");
			return false;
		}
	w[1] = (uintptr_t)p->mem + PEER_WIN_OFF;
	w[2] = p->win->rkey;
	w[3] = PEER_WIN_LEN;
	tp_pdata_put(pd, w, 4);
	if (!tp_accept(&c, pd, 32, 16, p->o->r.timeout_ms) ||
	    !peer_serve(p, &c))
		return false;
	p->conns++;
	peer_check(p);
	tp_destroy(&c);
	return true;
}

int lf_server(const struct lf_opts *o, struct rdma_event_channel *ec)
{
	struct peer p = { .o = o, .ec = ec };
	bool end = false;

	p.listen = tp_listen(ec, o->r.port);
	while (!end)
		if (!peer_one(&p, &end))
			break;
	if (end && !tp_failures)
		tp_log("PASS: peer: %lu connections, %lu receives (%lu "
		       "octets), canaries intact, no marker", p.conns, p.recvs,
		       p.bytes);
	else
		tp_log("FAILED: peer: %lu failed check(s)", tp_failures);
	return end && !tp_failures ? 0 : 1;
}
