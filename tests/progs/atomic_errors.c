// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-atomic-errors: remote atomics that must fail, and fail cleanly.
 *
 * Cases (each on its own connection, since the QP goes to error):
 *   misaligned  target address % 8 == 4, in a region with remote atomic right
 *   oob         the aligned word just past the end of the registered region
 *               (the server's buffer goes on there, unregistered: a device
 *               that ignores the bound changes bytes the server checks)
 *   noatomic    an aligned word of a region registered WITHOUT
 *               IBV_ACCESS_REMOTE_ATOMIC (but with remote read and write)
 *   bad-rkey    an rkey the server never handed out
 * each with FetchAdd (add 1) and with CmpSwap (compare = the word's current
 * value, so that wrongly executing it would change memory).
 *
 * For each: the requester's completion must be an error with an expected
 * status (printed in any case); the QP must then be in error (a Send posted
 * after it must not succeed, nor arrive at the server); the server's memory,
 * including the unregistered bytes after the region, must be unchanged
 * (checked by the server after every connection, and by the client with
 * RDMA Reads on a fresh connection); that fresh connection also proves the
 * device still works (a FetchAdd of 0 and a failing CmpSwap return the
 * right original values).
 *
 * Expected requester statuses. The defaults are the RFC 7306 (siwx) ones:
 * the responder sends a Terminate (RFC 7306 section 8; see core/term.c),
 *   misaligned  RDMAP Remote Operation error  -> IBV_WC_REM_OP_ERR
 *   oob         RDMAP Remote Protection error (base/bounds)
 *                                             -> IBV_WC_REM_ACCESS_ERR
 *   noatomic    RDMAP Remote Protection error (access rights)
 *                                             -> IBV_WC_REM_ACCESS_ERR
 *   bad-rkey    RDMAP Remote Protection error (invalid STag)
 *                                             -> IBV_WC_REM_ACCESS_ERR
 * Other devices differ; give their statuses with --expect CASE=STATUS.
 *
 * --qp-event CASE=EVENT (either side): after the case, exactly one
 * affiliated asynchronous event of that type on this side's QP. siwx
 * raises one for the Terminate it sends (responder) and for the one it
 * receives (requester): Remote Protection -> IBV_EVENT_QP_ACCESS_ERR,
 * Remote Operation -> IBV_EVENT_QP_FATAL (docs/protocol-decisions.md,
 * "A Terminate from the peer").
 * POST_REFUSED accepts a requester that refuses the work request itself
 * (ibv_post_send fails): the request then never reaches the responder.
 * rxe (Debian 12, kernel 6.1, rdma-core 44), as observed:
 *   misaligned  ibv_post_send fails with EINVAL (the provider checks the
 *               alignment)                    -> --expect misaligned=POST_REFUSED
 *   oob, noatomic, bad-rkey: NAK remote access error -> IBV_WC_REM_ACCESS_ERR
 *   the requester QP is then in ERR, a later Send is flushed
 *   (IBV_WC_WR_FLUSH_ERR), the responder's memory is unchanged.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_common.h"

#define AER_MAGIC 0x5349575841455231ULL	/* "SIWXAER1" */
#define REG_LEN 4096u			/* registered part of each region */
#define A_ALLOC 8192u			/* region A: registered + checked tail */
#define CASE_VERIFY 100
#define CASE_END 101
#define OP_FA 1
#define OP_CAS 2
#define SENTINEL UINT64_C(0x5e5e5e5e5e5e5e5e)
#define MAX_EXPECT 4
#define POST_REFUSED (-2)		/* the requester refuses to post it */

enum { C_MISALIGNED = 1, C_OOB, C_NOATOMIC, C_BADRKEY, NCASES };

static const char *const case_names[NCASES] = {
	[C_MISALIGNED] = "misaligned",
	[C_OOB] = "oob",
	[C_NOATOMIC] = "noatomic",
	[C_BADRKEY] = "bad-rkey",
};

struct expect {
	int n;			/* 0: any error status */
	int st[MAX_EXPECT];
};

struct opts {
	struct tp_role r;		/* -s/-c, -p, -t */
	bool cases[NCASES];
	bool fa, cas;
	struct expect exp[NCASES];
	int qp_event[NCASES];		/* 0: not checked */
	bool ex;
};

struct regions {
	uint64_t a_addr, a_rkey, a_len, n_addr, n_rkey, n_len;
};

struct ctx {
	struct opts o;
	struct rdma_event_channel *ec;
	struct ibv_pd *pd;
	struct tp_buf a, n, local, msg;
	struct regions r;
	unsigned int ncases;
};

static uint64_t pattern(int region, uint64_t i)
{
	return tp_mix(0xae00 + region, i);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-atomic-errors -s [-p PORT] [-t SEC] [-v]\n"
"       siwx-atomic-errors -c ADDR [-p PORT] [--case LIST] [--op fa|cas|both]\n"
"                          [--expect CASE=STATUS[,STATUS...]]... [-t SEC]\n"
"                          [--qp-event CASE=EVENT]... [--ex] [-v]\n"
"Remote atomics that must fail cleanly (see the source for the details).\n"
"  -s               server (serves until the client's last connection)\n"
"  -c ADDR          client, connecting to ADDR\n"
"  -p PORT          rdma_cm port (default 18517)\n"
"  --case LIST      comma-separated: misaligned,oob,noatomic,bad-rkey\n"
"                   (default: all)\n"
"  --op OP          fa, cas or both (default both)\n"
"  --expect C=S     accepted requester status(es) for case C, e.g.\n"
"                   misaligned=REM_INV_REQ_ERR; S 'any' = any error status,\n"
"                   POST_REFUSED = ibv_post_send itself fails\n"
"                   Defaults (RFC 7306, siwx): misaligned=REM_OP_ERR, the\n"
"                   others REM_ACCESS_ERR\n"
"  --qp-event C=E   after case C, one asynchronous event E (QP_FATAL,\n"
"                   QP_REQ_ERR, QP_ACCESS_ERR) on this side's QP\n"
"  -t SEC           time limit of each wait (default 30)\n"
"  -6               server: listen on [::], IPv6 only\n"
"  --ex             post with the extended API\n"
"  -v               verbose\n"
"Exit 0 only when every check passed.\n");
}

static int case_parse(const char *s, size_t len)
{
	int i;

	for (i = 1; i < NCASES; i++)
		if (strlen(case_names[i]) == len &&
		    !strncmp(case_names[i], s, len))
			return i;
	tp_die("unknown case '%.*s' (misaligned, oob, noatomic, bad-rkey)",
	       (int)len, s);
}

static void parse_cases(struct opts *o, const char *s)
{
	const char *e;

	memset(o->cases, 0, sizeof(o->cases));
	for (; *s; s = *e ? e + 1 : e) {
		e = strchrnul(s, ',');
		o->cases[case_parse(s, (size_t)(e - s))] = true;
	}
}

static void parse_expect(struct opts *o, const char *s)
{
	const char *eq = strchr(s, '='), *p, *e;
	struct expect *x;
	char name[40];
	int st;

	if (!eq)
		tp_die("--expect %s: want CASE=STATUS[,STATUS...]", s);
	x = &o->exp[case_parse(s, (size_t)(eq - s))];
	x->n = 0;
	if (!strcmp(eq + 1, "any"))
		return;
	for (p = eq + 1; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, ',');
		snprintf(name, sizeof(name), "%.*s", (int)(e - p), p);
		st = strcasecmp(name, "POST_REFUSED") ? tp_wc_status_parse(name) :
							 POST_REFUSED;
		if (!st || st == -1 || x->n == MAX_EXPECT)
			tp_die("--expect %s: '%s' is not an error status "
			       "(IBV_WC_* name) or too many", s, name);
		x->st[x->n++] = st;
	}
}

static void parse_qp_event(struct opts *o, const char *s)
{
	const char *eq = strchr(s, '=');
	int ev = eq ? tp_qp_event_parse(eq + 1) : -1;

	if (ev < 0)
		tp_die("--qp-event %s: want CASE=QP_FATAL|QP_REQ_ERR|"
		       "QP_ACCESS_ERR", s);
	o->qp_event[case_parse(s, (size_t)(eq - s))] = ev;
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "case", required_argument, NULL, 'C' },
		{ "op", required_argument, NULL, 'O' },
		{ "expect", required_argument, NULL, 'E' },
		{ "qp-event", required_argument, NULL, 'Q' },
		{ "ex", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch, i;

	*o = (struct opts){ .r = { .port = 18517, .timeout_ms = 30000 },
			    .fa = true, .cas = true };
	for (i = 1; i < NCASES; i++) {
		o->cases[i] = true;
		o->exp[i] = (struct expect){ 1, { i == C_MISALIGNED ?
						  IBV_WC_REM_OP_ERR :
						  IBV_WC_REM_ACCESS_ERR } };
	}
	while ((ch = getopt_long(argc, argv, TP_ROLE_OPTS "h", lo, NULL)) != -1) {
		if (tp_role_opt(&o->r, ch, optarg))
			continue;
		switch (ch) {
		case 'C': parse_cases(o, optarg); break;
		case 'O':
			o->fa = !strcmp(optarg, "fa") || !strcmp(optarg, "both");
			o->cas = !strcmp(optarg, "cas") ||
				 !strcmp(optarg, "both");
			if (!o->fa && !o->cas)
				tp_die("--op: fa, cas or both");
			break;
		case 'E': parse_expect(o, optarg); break;
		case 'Q': parse_qp_event(o, optarg); break;
		case 'x': o->ex = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (!tp_role_ok(&o->r, optind, argc)) {
		usage(stderr);
		exit(2);
	}
}

static struct tp_qp_opts qp_opts(const struct ctx *x)
{
	struct tp_qp_opts q = {
		.max_send_wr = 8,
		.max_recv_wr = 4,
		.max_sge = 1,
		.rd_atomic = 4,
	};

	if (x->o.ex)
		q.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
				   IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				   IBV_QP_EX_WITH_RDMA_READ |
				   IBV_QP_EX_WITH_SEND;
	return q;
}

/* Server. */

static void fill(struct tp_buf *b, int region)
{
	uint64_t i, v;

	for (i = 0; i < b->len / 8; i++) {
		v = pattern(region, i);
		memcpy((uint8_t *)b->addr + 8 * i, &v, 8);
	}
}

static bool unchanged(const void *p, size_t len, int region, const char *who,
		      const char *when)
{
	uint64_t i, v, want;

	for (i = 0; i < len / 8; i++) {
		memcpy(&v, (const uint8_t *)p + 8 * i, 8);
		want = pattern(region, i);
		if (v != want) {
			tp_fail("%s: region %c changed %s: offset %" PRIu64
				"%s holds 0x%016" PRIx64 ", expected 0x%016"
				PRIx64, who, region ? 'N' : 'A', when, 8 * i,
				8 * i >= REG_LEN ? " (past the registered end)"
				: "", v, want);
			return false;
		}
	}
	return true;
}

static bool server_buffers(struct ctx *x, struct ibv_context *ctx)
{
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
		 IBV_ACCESS_REMOTE_WRITE;

	x->pd = ibv_alloc_pd(ctx);
	if (!x->pd)
		tp_die("ibv_alloc_pd: %s", strerror(errno));
	tp_print_device(ctx, "server");
	if (!tp_buf_alloc(&x->a, x->pd, A_ALLOC, REG_LEN,
			  rw | IBV_ACCESS_REMOTE_ATOMIC) ||
	    !tp_buf_alloc(&x->n, x->pd, REG_LEN, REG_LEN, rw) ||
	    !tp_buf_alloc(&x->msg, x->pd, 4096, 4096, IBV_ACCESS_LOCAL_WRITE))
		return false;
	fill(&x->a, 0);
	fill(&x->n, 1);
	x->r = (struct regions){ (uintptr_t)x->a.addr, x->a.mr->rkey, REG_LEN,
				 (uintptr_t)x->n.addr, x->n.mr->rkey,
				 REG_LEN };
	return true;
}

static const char *case_name(uint64_t c)
{
	if (c > 0 && c < NCASES)
		return case_names[c];
	return c == CASE_VERIFY ? "verify" : c == CASE_END ? "end" : "?";
}

static bool wait_disconnect(struct ctx *x, struct tp_conn *c)
{
	struct rdma_cm_event *ev = tp_expect_event(c->ec, c->id,
						   RDMA_CM_EVENT_DISCONNECTED,
						   x->o.r.timeout_ms);

	if (!ev)
		return false;
	rdma_ack_cm_event(ev);
	return true;
}

/* After a connection: nothing may have arrived, memory untouched. */
static void server_after(struct ctx *x, struct tp_conn *c, uint64_t cs,
			 uint64_t op)
{
	char who[48];
	struct ibv_wc wc;

	snprintf(who, sizeof(who), "case %s%s", case_name(cs),
		 cs >= NCASES ? "" : op == OP_CAS ? "/cas" : "/fa");
	while (ibv_poll_cq(c->rcq, 1, &wc) > 0) {
		if (wc.status == IBV_WC_SUCCESS && cs < NCASES)
			tp_fail("%s: a Send the client posted after the failed"
				" atomic arrived: the requester QP was not in"
				" error", who);
		else
			tp_vlog("%s: receive completion %s", who,
				tp_wc_status_name(wc.status));
	}
	if (unchanged(x->a.addr, A_ALLOC, 0, who, "(server's check)") &&
	    unchanged(x->n.addr, REG_LEN, 1, who, "(server's check)"))
		tp_log("%s: server memory unchanged (region A incl. %u bytes "
		       "past its end, region N)", who, A_ALLOC - REG_LEN);
}

static bool server_end(struct ctx *x, struct tp_conn *c)
{
	uint64_t w[3] = { AER_MAGIC, tp_failures, x->ncases };
	int r;

	tp_pdata_put(x->msg.addr, w, 3);
	r = tp_post_send(c, 9, x->msg.addr, 24, x->msg.mr->lkey,
			 IBV_SEND_SIGNALED);
	if (r) {
		tp_fail("posting the summary: %s", strerror(r));
		return false;
	}
	return tp_wait_ok(c->scq, IBV_WC_SEND, 9, "summary Send",
			  x->o.r.timeout_ms, NULL);
}

static bool server_one(struct ctx *x, struct rdma_cm_id *listen, bool *end)
{
	struct tp_qp_opts q = qp_opts(x);
	uint8_t pd[TP_ACCEPT_PDATA_MAX];
	struct tp_conn c;
	uint64_t w[3], r[7];

	if (!tp_get_request(x->ec, listen, &c, x->pd ? x->o.r.timeout_ms :
			    600000))
		return false;
	if (!tp_pdata_get(c.peer_pdata, c.peer_pdata_len, w, 3) ||
	    w[0] != AER_MAGIC) {
		tp_fail("connect request without siwx-atomic-errors data");
		return false;
	}
	tp_own_channel(&c);
	if (!x->pd && !server_buffers(x, c.id->verbs))
		return false;
	c.pd = x->pd;
	if (!tp_setup_qp(&c, &q) ||
	    tp_post_recv(&c, 1, (uint8_t *)x->msg.addr + 64, 64,
			 x->msg.mr->lkey))
		return false;
	r[0] = AER_MAGIC;
	memcpy(&r[1], &x->r, sizeof(x->r));
	tp_pdata_put(pd, r, 7);
	if (!tp_accept(&c, pd, 56, 4, x->o.r.timeout_ms))
		return false;
	tp_vlog("connection for case %s", case_name(w[1]));
	*end = w[1] == CASE_END;
	if (*end && !server_end(x, &c))
		return false;
	if (!wait_disconnect(x, &c))
		return false;
	if (!*end)
		server_after(x, &c, w[1], w[2]);
	if (w[1] > 0 && w[1] < NCASES && x->o.qp_event[w[1]]) {
		char who[48];

		snprintf(who, sizeof(who), "case %s/%s (responder)",
			 case_name(w[1]), w[2] == OP_CAS ? "cas" : "fa");
		tp_expect_qp_event(c.qp, x->o.qp_event[w[1]], 5000, who);
	}
	x->ncases += w[1] < NCASES;
	tp_destroy(&c);
	return true;
}

static int run_server(struct ctx *x)
{
	struct rdma_cm_id *listen = tp_listen(x->ec, x->o.r.port);
	bool end = false;

	while (!end)
		if (!server_one(x, listen, &end))
			break;
	if (end && !tp_failures)
		tp_log("PASS: server: %u error case(s), memory never changed",
		       x->ncases);
	else
		tp_log("FAILED: server: %lu failed check(s)", tp_failures);
	rdma_destroy_id(listen);
	return end && !tp_failures ? 0 : 1;
}

/* Client. */

static bool client_conn(struct ctx *x, struct tp_conn *c, uint64_t cs,
			uint64_t op)
{
	struct tp_qp_opts q = qp_opts(x);
	uint8_t pd[TP_CONNECT_PDATA_MAX];
	uint64_t w[7] = { AER_MAGIC, cs, op };

	/* The server sends its summary as soon as CASE_END connects. */
	if (cs == CASE_END && x->msg.mr) {
		q.pre_recv_addr = x->msg.addr;
		q.pre_recv_len = 64;
		q.pre_recv_lkey = x->msg.mr->lkey;
		q.pre_recv_id = 5;
	}

	tp_pdata_put(pd, w, 3);
	if (!tp_connect(c, x->ec, x->o.r.host, x->o.r.port, &x->pd, &q, pd, 24,
			x->o.r.timeout_ms))
		return false;
	if (!tp_pdata_get(c->peer_pdata, c->peer_pdata_len, w, 7) ||
	    w[0] != AER_MAGIC || w[3] != REG_LEN || w[6] != REG_LEN) {
		tp_fail("the server's accept carries no usable private data");
		return false;
	}
	x->r = (struct regions){ w[1], w[2], w[3], w[4], w[5], w[6] };
	if (!x->local.mr &&
	    (!tp_buf_alloc(&x->local, x->pd, 2 * REG_LEN, 2 * REG_LEN,
			   IBV_ACCESS_LOCAL_WRITE) ||
	     !tp_buf_alloc(&x->msg, x->pd, 4096, 4096,
			   IBV_ACCESS_LOCAL_WRITE)))
		return false;
	return true;
}

static bool expected(const struct expect *e, int st)
{
	int i;

	if (!e->n)
		return st != IBV_WC_SUCCESS && st != POST_REFUSED;
	for (i = 0; i < e->n; i++)
		if (e->st[i] == st)
			return true;
	return false;
}

static void expect_str(const struct expect *e, char *buf, size_t len)
{
	int i;

	if (!e->n) {
		snprintf(buf, len, "any error status");
		return;
	}
	buf[0] = 0;
	for (i = 0; i < e->n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
			 i ? " or " : "", e->st[i] == POST_REFUSED ?
			 "POST_REFUSED" : tp_wc_status_name(e->st[i]));
}

static void target(const struct ctx *x, int cs, uint64_t *addr, uint32_t *rkey,
		   uint64_t *cur)
{
	*addr = x->r.a_addr;
	*rkey = (uint32_t)x->r.a_rkey;
	*cur = pattern(0, 0);
	switch (cs) {
	case C_MISALIGNED:
		*addr += 4;
		break;
	case C_OOB:
		*addr += x->r.a_len;
		*cur = pattern(0, x->r.a_len / 8);
		break;
	case C_NOATOMIC:
		*addr = x->r.n_addr;
		*rkey = (uint32_t)x->r.n_rkey;
		*cur = pattern(1, 0);
		break;
	case C_BADRKEY:
		*rkey ^= 0x5a5a0000u;
		break;
	}
}

/* After the error, the QP must not carry new work. */
static void check_qp_dead(struct ctx *x, struct tp_conn *c, const char *who)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct ibv_wc wc;
	int r;

	if (!ibv_query_qp(c->qp, &a, IBV_QP_STATE, &ia))
		tp_log("%s: requester QP state after the error: %s", who,
		       tp_qp_state_name(a.qp_state));
	r = tp_post_send(c, 7, x->msg.addr, 8, x->msg.mr->lkey,
			 IBV_SEND_SIGNALED);
	if (r) {
		tp_log("%s: a Send after the error: post refused (%s): QP in "
		       "error", who, strerror(r));
		return;
	}
	r = tp_poll(c->scq, &wc, x->o.r.timeout_ms);
	if (r <= 0)
		tp_fail("%s: a Send after the error never completed", who);
	else if (wc.status == IBV_WC_SUCCESS)
		tp_fail("%s: a Send after the error completed successfully: "
			"the QP did not go to error", who);
	else
		tp_log("%s: a Send after the error completed with %s: QP in "
		       "error", who, tp_wc_status_name(wc.status));
}

static bool client_case(struct ctx *x, int cs, uint64_t op)
{
	const char *opn = op == OP_CAS ? "cas" : "fa";
	uint64_t *res, raddr, cur;
	char who[48], exp[128];
	struct tp_conn c;
	struct ibv_wc wc;
	uint32_t rkey;
	int r;

	snprintf(who, sizeof(who), "case %s/%s", case_names[cs], opn);
	if (!client_conn(x, &c, cs, op))
		return false;
	res = x->local.addr;	/* allocated by the first connection */
	target(x, cs, &raddr, &rkey, &cur);
	*res = SENTINEL;
	r = op == OP_CAS ?
		tp_post_cas(&c, 1, res, x->local.mr->lkey, raddr, rkey, cur,
			    ~cur, IBV_SEND_SIGNALED) :
		tp_post_fadd(&c, 1, res, x->local.mr->lkey, raddr, rkey, 1,
			     IBV_SEND_SIGNALED);
	expect_str(&x->o.exp[cs], exp, sizeof(exp));
	if (r) {
		if (expected(&x->o.exp[cs], POST_REFUSED))
			tp_log("%s: ibv_post_send refused the atomic (%s), "
			       "accepted (POST_REFUSED): nothing was sent", who,
			       strerror(r));
		else
			tp_fail("%s: ibv_post_send refused the atomic (%s); "
				"expected %s (a device that checks locally "
				"needs --expect %s=POST_REFUSED)", who,
				strerror(r), exp, case_names[cs]);
		tp_close(&c, 2000);
		return true;
	}
	r = tp_poll(c.scq, &wc, x->o.r.timeout_ms);
	if (r <= 0) {
		tp_fail("%s: no completion for the atomic within %d ms", who,
			x->o.r.timeout_ms);
	} else if (wc.status == IBV_WC_SUCCESS) {
		tp_fail("%s: the atomic SUCCEEDED (original 0x%" PRIx64
			"); expected %s", who, *res, exp);
	} else {
		tp_log("%s: requester completion %s (%d, \"%s\"), vendor_err "
		       "0x%x%s", who, tp_wc_status_name(wc.status), wc.status,
		       ibv_wc_status_str(wc.status), wc.vendor_err,
		       *res == SENTINEL ? "" : ", result buffer written");
		if (!expected(&x->o.exp[cs], wc.status))
			tp_fail("%s: status %s, expected %s", who,
				tp_wc_status_name(wc.status), exp);
		check_qp_dead(x, &c, who);
		if (x->o.qp_event[cs])
			tp_expect_qp_event(c.qp, x->o.qp_event[cs], 5000, who);
	}
	tp_close(&c, 5000);
	return true;
}

static bool read_region(struct ctx *x, struct tp_conn *c, uint64_t raddr,
			uint32_t rkey, int region, const char *when)
{
	uint8_t *dst = (uint8_t *)x->local.addr + REG_LEN;
	int r;

	memset(dst, 0, REG_LEN);
	r = tp_post_read(c, 2, dst, REG_LEN, x->local.mr->lkey, raddr, rkey,
			 IBV_SEND_SIGNALED);
	if (r) {
		tp_fail("posting an RDMA Read: %s", strerror(r));
		return false;
	}
	return tp_wait_ok(c->scq, IBV_WC_RDMA_READ, 2, "RDMA Read of region",
			  x->o.r.timeout_ms, NULL) &&
	       unchanged(dst, REG_LEN, region, "client's RDMA Read", when);
}

/* A fresh connection: memory as before, and atomics still work. */
static bool client_verify(struct ctx *x, const char *after)
{
	struct tp_conn c;
	char when[64];
	uint64_t *res;
	bool ok;

	snprintf(when, sizeof(when), "after case %s", after);
	if (!client_conn(x, &c, CASE_VERIFY, 0))
		return false;
	res = x->local.addr;
	ok = read_region(x, &c, x->r.a_addr, (uint32_t)x->r.a_rkey, 0, when) &&
	     read_region(x, &c, x->r.n_addr, (uint32_t)x->r.n_rkey, 1, when);
	*res = SENTINEL;
	ok = ok && !tp_post_fadd(&c, 3, res, x->local.mr->lkey,
				 x->r.a_addr + 40, (uint32_t)x->r.a_rkey, 0,
				 IBV_SEND_SIGNALED) &&
	     tp_wait_ok(c.scq, IBV_WC_FETCH_ADD, 3, "fresh QP: FetchAdd 0",
			x->o.r.timeout_ms, NULL);
	if (ok && *res != pattern(0, 5))
		tp_fail("fresh QP: FetchAdd 0 returned 0x%" PRIx64 ", expected"
			" 0x%" PRIx64, *res, pattern(0, 5));
	ok = ok && !tp_post_cas(&c, 4, res, x->local.mr->lkey,
				x->r.a_addr + 48, (uint32_t)x->r.a_rkey,
				~pattern(0, 6), 0, IBV_SEND_SIGNALED) &&
	     tp_wait_ok(c.scq, IBV_WC_COMP_SWAP, 4,
			"fresh QP: CmpSwap (no match)", x->o.r.timeout_ms, NULL);
	if (ok && *res != pattern(0, 6))
		tp_fail("fresh QP: CmpSwap returned 0x%" PRIx64 ", expected "
			"0x%" PRIx64, *res, pattern(0, 6));
	if (!ok)
		tp_fail("fresh connection %s: the device is not usable", when);
	else
		tp_vlog("fresh connection %s: memory unchanged, atomics work",
			when);
	tp_close(&c, 5000);
	return ok;
}

static bool client_end(struct ctx *x)
{
	struct tp_conn c;
	struct ibv_wc wc;
	uint64_t w[3];
	bool ok = false;

	if (!client_conn(x, &c, CASE_END, 0))
		return false;
	if (!x->msg.mr)
		tp_fail("no message buffer: no case ran");
	else if (tp_poll(c.rcq, &wc, x->o.r.timeout_ms) <= 0 ||
		 wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV)
		tp_fail("no summary from the server");
	else if (tp_pdata_get(x->msg.addr, wc.byte_len, w, 3) && w[1])
		tp_fail("the server reported %" PRIu64 " failed check(s) "
			"(see its output)", w[1]);
	else
		ok = true;
	tp_close(&c, 5000);
	return ok;
}

static int run_client(struct ctx *x)
{
	unsigned int n = 0;
	char after[48];
	int cs, op;

	for (cs = 1; cs < NCASES; cs++) {
		for (op = OP_FA; op <= OP_CAS; op++) {
			if (!x->o.cases[cs] || (op == OP_FA && !x->o.fa) ||
			    (op == OP_CAS && !x->o.cas))
				continue;
			n++;
			if (!client_case(x, cs, op))
				goto end;	/* cannot connect */
			snprintf(after, sizeof(after), "%s/%s", case_names[cs],
				 op == OP_CAS ? "cas" : "fa");
			if (!client_verify(x, after))
				goto end;	/* device unusable */
		}
	}
end:
	if (x->pd)
		tp_print_device(x->pd->context, "client");
	client_end(x);
	if (!tp_failures)
		tp_log("PASS: client: %u error case(s): expected error "
		       "statuses, QPs in error, memory unchanged, fresh "
		       "connections work (%s API)", n,
		       x->o.ex ? "extended" : "classic");
	else
		tp_log("FAILED: client: %lu failed check(s)", tp_failures);
	return tp_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct ctx x;

	tp_prog = "siwx-atomic-errors";
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv, &x.o);
	x.ec = tp_channel();
	return x.o.r.server ? run_server(&x) : run_client(&x);
}
