// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-scale's server: one large MR, one SRQ and one receive CQ for all
 * its QPs; accepts every connection from one event channel and counts
 * the Sends (see scale.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "scale.h"

struct server {
	const struct scale_opts *o;
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	void *big;			/* the large MR's memory */
	size_t big_len;
	struct ibv_mr *mr;
	struct ibv_srq *srq;
	struct ibv_cq *rcq;		/* every QP's receive CQ */
	struct tp_buf rbuf;		/* the SRQ's receive buffers */
	unsigned int n, nrecv;
	struct tp_conn *c;		/* n + 1: the last is the client's extra */
	struct scale_memtab mem;
};

/* The MR, SRQ and receive CQ, before any connection. */
static void server_init(struct server *sv, const struct scale_opts *o)
{
	struct ibv_srq_init_attr sia = { .attr = { .max_sge = 1 } };
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	memset(sv, 0, sizeof(*sv));
	sv->o = o;
	sv->ec = tp_channel();
	sv->ctx = scale_device(o->conns, &sv->n);
	sv->big_len = (size_t)o->mr_mib << 20;
	if (sv->big_len / sv->n < 3 * SCALE_SLOT)
		tp_die("-m %" PRIu64 ": too small for %u slots of %u octets "
		       "and the last two pages", o->mr_mib, sv->n, SCALE_SLOT);
	sv->nrecv = sv->n * SCALE_SENDS + SCALE_SRQ_SLACK;
	sia.attr.max_wr = sv->nrecv;
	sv->c = calloc(sv->n + 1, sizeof(*sv->c));
	sv->pd = ibv_alloc_pd(sv->ctx);
	if (!sv->c || !sv->pd)
		tp_die("connections' memory or PD: %s", strerror(errno));
	sv->big = mmap(NULL, sv->big_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (sv->big == MAP_FAILED)
		tp_die("mmap %zu octets: %s", sv->big_len, strerror(errno));
	sv->mr = ibv_reg_mr(sv->pd, sv->big, sv->big_len, acc);
	if (!sv->mr)
		tp_die("ibv_reg_mr of %" PRIu64 " MiB: %s", o->mr_mib,
		       strerror(errno));
	tp_log("large MR: %" PRIu64 " MiB registered at %p, rkey %#x",
	       o->mr_mib, sv->big, sv->mr->rkey);
	sv->srq = ibv_create_srq(sv->pd, &sia);
	sv->rcq = ibv_create_cq(sv->ctx, (int)sv->nrecv + 1, NULL, NULL, 0);
	if (!sv->srq || !sv->rcq)
		tp_die("ibv_create_srq (max_wr %u) or its CQ: %s", sv->nrecv,
		       strerror(errno));
	if (!tp_buf_alloc(&sv->rbuf, sv->pd, (size_t)sv->nrecv * SCALE_MSG,
			  (size_t)sv->nrecv * SCALE_MSG,
			  IBV_ACCESS_LOCAL_WRITE))
		tp_die("receive buffers");
}

/* Every receive before the first connection: iWARP has no RNR retry. */
static void post_receives(struct server *sv)
{
	struct ibv_recv_wr *bad;
	unsigned int k;

	for (k = 0; k < sv->nrecv; k++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)sv->rbuf.addr + (size_t)k * SCALE_MSG,
			.length = SCALE_MSG,
			.lkey = sv->rbuf.mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = k, .sg_list = &sge,
					  .num_sge = 1 };

		if (ibv_post_srq_recv(sv->srq, &wr, &bad))
			tp_die("ibv_post_srq_recv %u of %u", k, sv->nrecv);
	}
}

/* A connect request for connection lo..hi-1: QP on the SRQ, accept. */
static bool take_request(struct server *sv, struct rdma_cm_event *ev,
			 unsigned int lo, unsigned int hi)
{
	struct tp_qp_opts q = { .max_send_wr = 1, .max_recv_wr = 1,
				.max_sge = 1, .rd_atomic = SCALE_RD_ATOMIC,
				.srq = sv->srq, .rcq = sv->rcq };
	uint64_t w[3];
	uint8_t pdata[24];
	struct tp_conn *c;

	if (!tp_pdata_get(ev->param.conn.private_data,
			  ev->param.conn.private_data_len, w, 2) ||
	    w[0] != SCALE_MAGIC || w[1] < lo || w[1] >= hi ||
	    sv->c[w[1]].id) {
		tp_fail("a connect request not for connection %u..%u, or "
			"twice", lo, hi - 1);
		rdma_reject(ev->id, NULL, 0);
		return false;
	}
	c = &sv->c[w[1]];
	tp_request_conn(c, sv->ec, ev);
	c->id->context = c;
	c->pd = sv->pd;
	if (c->id->verbs != sv->ctx) {
		tp_fail("connection %" PRIu64 " on another device", w[1]);
		return false;
	}
	w[0] = (uintptr_t)sv->big;
	w[1] = sv->mr->rkey;
	w[2] = sv->big_len;
	tp_pdata_put(pdata, w, 3);
	return tp_setup_qp(c, &q) &&
	       tp_accept_start(c, pdata, sizeof(pdata), SCALE_RD_ATOMIC);
}

/* Accept connections lo..hi-1, whatever order their events come in. */
static bool accept_range(struct server *sv, unsigned int lo, unsigned int hi)
{
	unsigned int done = 0;
	struct rdma_cm_event *ev;
	bool ok;

	while (done < hi - lo) {
		ev = tp_next_event(sv->ec, sv->o->r.timeout_ms, "accepting");
		if (!ev)
			break;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			ok = take_request(sv, ev, lo, hi);
		} else if (ev->event == RDMA_CM_EVENT_ESTABLISHED &&
			   ev->id->context) {
			ok = true;
			done++;
			if (hi - lo > 1)
				scale_mem_mark(&sv->mem, done, hi - lo);
		} else {
			tp_bad_event(ev, "accepting");
			ok = false;
		}
		rdma_ack_cm_event(ev);
		if (!ok)
			break;
	}
	if (done < hi - lo)
		tp_fail("%u of %u connections established", done, hi - lo);
	return done == hi - lo;
}

/* Phase 3: one receive completion, checked; @got: sequences by connection. */
static void check_recv(struct server *sv, const struct ibv_wc *wc,
		       uint8_t *got, bool *used)
{
	uint64_t m[2];
	unsigned int i;

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV ||
	    wc->byte_len != SCALE_MSG || wc->wr_id >= sv->nrecv ||
	    used[wc->wr_id]) {
		tp_fail("receive %" PRIu64 ": %s, %s, %u octets (or used "
			"twice)", (uint64_t)wc->wr_id,
			tp_wc_status_name(wc->status),
			tp_wc_opcode_name(wc->opcode), wc->byte_len);
		return;
	}
	used[wc->wr_id] = true;
	memcpy(m, (uint8_t *)sv->rbuf.addr + wc->wr_id * SCALE_MSG, sizeof(m));
	for (i = 0; i < sv->n; i++)
		if (sv->c[i].qp->qp_num == wc->qp_num)
			break;
	if (i == sv->n || m[0] != i || m[1] >= SCALE_SENDS ||
	    (got[i] & 1u << m[1]))
		tp_fail("receive on QP %u (connection %d): Send %" PRIu64
			" of connection %" PRIu64 ": not one due there", wc->qp_num,
			i == sv->n ? -1 : (int)i, m[1], m[0]);
	else
		got[i] |= (uint8_t)(1u << m[1]);
}

static bool count_sends(struct server *sv)
{
	uint64_t want = (uint64_t)sv->n * SCALE_SENDS, n = 0, last;
	uint8_t *got = calloc(sv->n, 1);
	bool *used = calloc(sv->nrecv, sizeof(bool));
	unsigned int i, short_ = 0;
	struct ibv_wc wc;
	int r;

	if (!got || !used)
		tp_die("out of memory");
	/* Until all came (-t without one fails), then 1 s for any extra */
	for (last = tp_now_ms(); (r = tp_poll(sv->rcq, &wc, n < want ?
				 sv->o->r.timeout_ms : 1000)) == 1; n++)
		check_recv(sv, &wc, got, used);
	if (r < 0)
		tp_fail("ibv_poll_cq on the receive CQ failed");
	for (i = 0; i < sv->n; i++)
		short_ += got[i] != (1u << SCALE_SENDS) - 1;
	if (n != want || short_)
		tp_fail("srq: %" PRIu64 " receives, expected %" PRIu64 "; %u "
			"connections without exactly their %u Sends", n, want,
			short_, SCALE_SENDS);
	else
		tp_log("srq: %" PRIu64 " Sends from %u QPs through one SRQ "
		       "(max_wr %u): exactly %u from each, in %" PRIu64 " ms",
		       n, sv->n, sv->nrecv, SCALE_SENDS, tp_now_ms() - last);
	free(got);
	free(used);
	return n == want && !short_;
}

/* Phase 5: the client closes the extra connection, we the others. */
static bool teardown(struct server *sv)
{
	bool ok = tp_close_after_peer(&sv->c[sv->n], 1, sv->o->r.timeout_ms);

	ok = tp_close_leading(sv->c, sv->n, sv->o->r.timeout_ms) && ok;
	if (ibv_destroy_srq(sv->srq) || ibv_destroy_cq(sv->rcq) ||
	    ibv_dereg_mr(sv->mr)) {
		tp_fail("destroying the SRQ, its CQ or the large MR: %s",
			strerror(errno));
		ok = false;
	}
	tp_buf_free(&sv->rbuf);
	munmap(sv->big, sv->big_len);
	if (ibv_dealloc_pd(sv->pd)) {
		tp_fail("ibv_dealloc_pd: %s", strerror(errno));
		ok = false;
	}
	rdma_destroy_id(sv->listen);
	rdma_destroy_event_channel(sv->ec);
	free(sv->c);
	return ok;
}

int scale_server(const struct scale_opts *o)
{
	struct server sv;
	uint64_t t0;
	bool ok;

	server_init(&sv, o);
	post_receives(&sv);
	scale_mem_start(&sv.mem);
	sv.listen = tp_listen_backlog(sv.ec, o->r.port,
				      sv.n + 1 < 1024 ? (int)sv.n + 1 : 1024);
	t0 = tp_now_ms();
	ok = accept_range(&sv, 0, sv.n);
	if (ok)
		tp_log("server: %u connections accepted in %" PRIu64 " ms",
		       sv.n, tp_now_ms() - t0);
	scale_mem_report(&sv.mem, "server");
	ok = ok && count_sends(&sv) && accept_range(&sv, sv.n, sv.n + 1);
	if (!ok) {
		tp_log("FAILED: server: %lu failed check(s)", tp_failures);
		return 1;
	}
	if (!teardown(&sv) || tp_failures) {
		tp_log("FAILED: server: teardown");
		return 1;
	}
	tp_log("PASS: server: %u connections on one SRQ and one %" PRIu64
	       " MiB MR; done", sv.n, o->mr_mib);
	return 0;
}
