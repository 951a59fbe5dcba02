// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-hostile-target: the verbs server that tools/siwx-wire-peer attacks.
 *
 * For each of -n connections: take the rdma_cm connect request, read what
 * the peer's case expects from its private data (receives to post, the
 * one target word it may change and to what; tools/siwx-wire-peer/
 * hostile_proto.h), register a target region between two unregistered
 * guard areas (REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC, and again with
 * REMOTE_READ only), fill it with the agreed pattern, post the receives
 * and accept with {address, length, rkey, ro_rkey} as private data (on
 * iWARP it travels in the MPA Reply). Then, once the connection is gone:
 *   - DISCONNECTED arrived and the QP is in ERR;
 *   - every posted receive completed, none successfully (flushed, or the
 *     error the responder reports);
 *   - the guards and every target word hold the pattern, except the word
 *     the case changes, which holds exactly the value it names;
 * and go on with the next connection: the device must still take them.
 *
 * A request with SIWX_HP_FLAG_FUZZ comes from siwx-wire-fuzz, whose
 * frames change the target as they like: the target is then one page
 * between two unregistered canary pages (mmap: canary | target |
 * canary), and afterwards the canaries must be intact, DISCONNECTED must
 * have arrived, the QP must be in ERR and every posted receive must have
 * completed (successfully or not: the fuzzer's Sends are valid). The
 * fuzzer never sends more QN 0 messages than receives were posted, so
 * none is reposted: a Send beyond them is its way to draw RFC 5041's
 * "No Buffer Available". The server stops after the request that also
 * carries SIWX_HP_FLAG_LAST, or after -n connections.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hostile_proto.h"
#include "tp_common.h"

#define HT_MAX_RECVS 8
#define HT_RECV_LEN 64
#define HT_RD_ATOMIC 4

struct ht_case {
	uint64_t recvs;
	uint64_t flags;
	uint64_t word;
	uint64_t value;
};

struct ht_mem {
	bool fuzz;		/* mmap'ed: canary page | target | canary page */
	size_t len;		/* of the target */
	size_t map_len;		/* fuzz: of the mapping */
	uint8_t *base;		/* guard | target | guard */
	uint8_t *target;
	struct ibv_mr *mr;
	struct ibv_mr *ro;
	uint8_t *rbuf;
	struct ibv_mr *rmr;
};

static int timeout_ms = 30000;

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-hostile-target [-p PORT] [-n CONNECTIONS] [-t SEC] [-v]\n"
"Serves siwx-wire-peer's cases, one per connection (default port %u),\n"
"and siwx-wire-fuzz's connections until its last one (at most -n).\n",
		SIWX_HP_PORT);
}

/* Fuzz mode: canary page | target page | canary page. */
static bool mem_map_fuzz(struct ht_mem *m)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	m->len = SIWX_HP_FUZZ_TARGET_LEN;
	m->map_len = 2 * page + m->len;
	p = mmap(NULL, m->map_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		tp_fail("mmap: %s", strerror(errno));
		return false;
	}
	m->base = p;
	memset(m->base, SIWX_HP_CANARY_BYTE, m->map_len);
	m->target = m->base + page;
	return true;
}

static bool mem_setup(struct ht_mem *m, struct ibv_pd *pd, bool fuzz)
{
	size_t len = 2 * SIWX_HP_GUARD_LEN + SIWX_HP_TARGET_LEN;
	size_t rlen = fuzz ? SIWX_HP_FUZZ_MAX_RECVS * SIWX_HP_FUZZ_RECV_LEN :
		      4096;
	uint32_t i;

	memset(m, 0, sizeof(*m));
	m->fuzz = fuzz;
	m->len = SIWX_HP_TARGET_LEN;
	if (posix_memalign((void **)&m->rbuf, 4096, rlen)) {
		tp_fail("out of memory");
		return false;
	}
	memset(m->rbuf, 0, rlen);
	if (fuzz) {
		if (!mem_map_fuzz(m))
			return false;
	} else {
		if (posix_memalign((void **)&m->base, 4096, len)) {
			tp_fail("out of memory");
			return false;
		}
		memset(m->base, SIWX_HP_GUARD_BYTE, len);
		m->target = m->base + SIWX_HP_GUARD_LEN;
	}
	for (i = 0; i < m->len / 8; i++) {
		uint64_t v = siwx_hp_pattern(i);

		memcpy(m->target + 8 * i, &v, 8);
	}
	m->mr = ibv_reg_mr(pd, m->target, m->len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	m->ro = ibv_reg_mr(pd, m->target, m->len, IBV_ACCESS_REMOTE_READ);
	m->rmr = ibv_reg_mr(pd, m->rbuf, rlen, IBV_ACCESS_LOCAL_WRITE);
	if (!m->mr || !m->ro || !m->rmr) {
		tp_fail("ibv_reg_mr: %s", strerror(errno));
		return false;
	}
	return true;
}

static void mem_free(struct ht_mem *m)
{
	if (m->mr)
		ibv_dereg_mr(m->mr);
	if (m->ro)
		ibv_dereg_mr(m->ro);
	if (m->rmr)
		ibv_dereg_mr(m->rmr);
	if (m->fuzz && m->base)
		munmap(m->base, m->map_len);
	else
		free(m->base);
	free(m->rbuf);
	memset(m, 0, sizeof(*m));
}

/* Fuzz mode: both canary pages as they were filled. */
static void canary_check(const struct ht_mem *m, unsigned int n)
{
	const uint8_t *after = m->target + m->len;
	size_t page = (size_t)(m->target - m->base), i;

	for (i = 0; i < page; i++) {
		if (m->base[i] != SIWX_HP_CANARY_BYTE) {
			tp_fail("conn %u: canary page before the target: octet %zu is 0x%02x",
				n, i, m->base[i]);
			return;
		}
		if (after[i] != SIWX_HP_CANARY_BYTE) {
			tp_fail("conn %u: canary page after the target: octet %zu is 0x%02x",
				n, i, after[i]);
			return;
		}
	}
}

/* Guards and pattern intact, but for the one word the case changes. */
static void mem_check(const struct ht_mem *m, const struct ht_case *hc,
		      unsigned int n)
{
	uint32_t i;

	for (i = 0; i < SIWX_HP_GUARD_LEN; i++) {
		if (m->base[i] != SIWX_HP_GUARD_BYTE)
			tp_fail("conn %u: leading guard octet %u is 0x%02x", n,
				i, m->base[i]);
		if (m->target[SIWX_HP_TARGET_LEN + i] != SIWX_HP_GUARD_BYTE)
			tp_fail("conn %u: trailing guard octet %u is 0x%02x",
				n, i, m->target[SIWX_HP_TARGET_LEN + i]);
	}
	for (i = 0; i < SIWX_HP_TARGET_LEN / 8; i++) {
		uint64_t want = siwx_hp_pattern(i), got;

		if ((hc->flags & SIWX_HP_FLAG_CHANGE) && i == hc->word)
			want = hc->value;
		memcpy(&got, m->target + 8 * i, 8);
		if (got != want)
			tp_fail("conn %u: target word %u is 0x%016" PRIx64
				", want 0x%016" PRIx64, n, i, got, want);
	}
}

/* Every posted receive completes, none successfully. */
static void recv_check(struct tp_conn *c, uint64_t recvs, bool fuzz,
		       unsigned int n)
{
	struct ibv_wc wc;
	uint64_t i;
	int r;

	for (i = 0; i < recvs; i++) {
		r = tp_poll(c->rcq, &wc, 5000);
		if (r <= 0) {
			tp_fail("conn %u: receive %" PRIu64 " of %" PRIu64
				" never completed", n, i + 1, recvs);
			return;
		}
		if (fuzz)
			tp_vlog("conn %u: receive %" PRIu64 ": %s", n,
				wc.wr_id, tp_wc_status_name(wc.status));
		else
			tp_log("conn %u: receive %" PRIu64 ": %s", n,
			       wc.wr_id, tp_wc_status_name(wc.status));
		if (wc.status == IBV_WC_SUCCESS && !fuzz)
			tp_fail("conn %u: receive %" PRIu64 " completed successfully",
				n, wc.wr_id);
	}
	if (tp_poll(c->rcq, &wc, 0) > 0)
		tp_fail("conn %u: a receive completion nobody posted", n);
}

static void qp_check(struct tp_conn *c, unsigned int n)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(c->qp, &a, IBV_QP_STATE, &init)) {
		tp_fail("conn %u: ibv_query_qp: %s", n, strerror(errno));
		return;
	}
	tp_log("conn %u: QP state %s", n, tp_qp_state_name(a.qp_state));
	if (a.qp_state != IBV_QPS_ERR)
		tp_fail("conn %u: QP in %s after the peer's case, want ERR", n,
			tp_qp_state_name(a.qp_state));
}

/* Serves one connection; true when the peer said it was the last. */
static bool serve_one(struct rdma_event_channel *ec, struct rdma_cm_id *listen,
		      unsigned int n)
{
	struct tp_qp_opts o = { .max_send_wr = 4, .max_recv_wr = HT_MAX_RECVS,
				.rd_atomic = HT_RD_ATOMIC };
	struct rdma_cm_event *ev;
	uint64_t w[SIWX_HP_REQ_WORDS], acc[SIWX_HP_ACC_WORDS];
	uint8_t pd[SIWX_HP_ACC_WORDS * 8];
	struct ht_case hc;
	struct ht_mem m = { 0 };
	struct tp_conn c;
	uint32_t rlen;
	uint64_t i;
	bool fuzz;

	if (!tp_get_request(ec, listen, &c, timeout_ms))
		tp_die("conn %u: no connect request", n);
	if (!tp_pdata_get(c.peer_pdata, c.peer_pdata_len, w, SIWX_HP_REQ_WORDS) ||
	    w[0] != SIWX_HP_REQ_MAGIC)
		tp_die("conn %u: the request's private data is not siwx-wire-peer's",
		       n);
	hc = (struct ht_case){ w[1], w[2], w[3], w[4] };
	fuzz = hc.flags & SIWX_HP_FLAG_FUZZ;
	if (hc.recvs > (fuzz ? SIWX_HP_FUZZ_MAX_RECVS : HT_MAX_RECVS) ||
	    (!fuzz && hc.word >= SIWX_HP_TARGET_LEN / 8))
		tp_die("conn %u: the request's private data asks too much", n);
	if (fuzz)
		o.max_recv_wr = SIWX_HP_FUZZ_MAX_RECVS;
	rlen = fuzz ? SIWX_HP_FUZZ_RECV_LEN : HT_RECV_LEN;
	tp_own_channel(&c);
	c.pd = ibv_alloc_pd(c.id->verbs);
	if (!c.pd || !mem_setup(&m, c.pd, fuzz) || !tp_setup_qp(&c, &o))
		tp_die("conn %u: setup failed", n);
	for (i = 0; i < hc.recvs; i++)
		if (tp_post_recv(&c, i, m.rbuf + i * rlen, rlen, m.rmr->lkey))
			tp_die("conn %u: ibv_post_recv failed", n);
	acc[0] = SIWX_HP_ACC_MAGIC;
	acc[1] = (uintptr_t)m.target;
	acc[2] = m.len;
	acc[3] = m.mr->rkey;
	acc[4] = m.ro->rkey;
	tp_pdata_put(pd, acc, SIWX_HP_ACC_WORDS);
	if (fuzz)
		tp_vlog("conn %u: fuzz, %" PRIu64 " receives", n, hc.recvs);
	else
		tp_log("conn %u: %" PRIu64 " receives, %s word %" PRIu64, n,
		       hc.recvs,
		       (hc.flags & SIWX_HP_FLAG_CHANGE) ? "changes" : "no change to",
		       hc.word);
	if (!tp_accept(&c, pd, sizeof(pd), HT_RD_ATOMIC, timeout_ms)) {
		tp_fail("conn %u: accept failed", n);
	} else {
		ev = tp_expect_event(c.ec, c.id, RDMA_CM_EVENT_DISCONNECTED,
				     timeout_ms);
		if (ev)
			rdma_ack_cm_event(ev);
		else
			tp_fail("conn %u: no DISCONNECTED", n);
		qp_check(&c, n);
		recv_check(&c, hc.recvs, fuzz, n);
	}
	if (fuzz)
		canary_check(&m, n);
	else
		mem_check(&m, &hc, n);
	tp_destroy(&c);
	mem_free(&m);
	ibv_dealloc_pd(c.pd);
	return fuzz && (hc.flags & SIWX_HP_FLAG_LAST);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "connections", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen;
	unsigned int n, conns = 1;
	uint16_t port = SIWX_HP_PORT;
	int ch;

	tp_prog = "siwx-hostile-target";
	while ((ch = getopt_long(argc, argv, "p:n:t:vh", lo, NULL)) != -1) {
		switch (ch) {
		case 'p': port = (uint16_t)tp_parse_u64(optarg, "port", 1, 65535); break;
		case 'n': conns = (unsigned int)tp_parse_u64(optarg, "connections", 1, 1000000); break;
		case 't': timeout_ms = (int)tp_parse_u64(optarg, "timeout", 1, 3600) * 1000; break;
		case 'v': tp_verbose = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	ec = tp_channel();
	listen = tp_listen(ec, port);
	for (n = 1; n <= conns; n++) {
		unsigned long before = tp_failures;
		bool last = serve_one(ec, listen, n);

		tp_log("conn %u: %s", n, tp_failures == before ? "ok" : "FAILED");
		if (last) {
			conns = n;
			break;
		}
	}
	rdma_destroy_id(listen);
	rdma_destroy_event_channel(ec);
	tp_log("%u connections, %lu failures", conns, tp_failures);
	return tp_failures ? 1 : 0;
}
