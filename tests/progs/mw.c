// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-mw: memory windows (ibv_alloc_mw, ibv_bind_mw, ibv_wr_bind_mw,
 * IBV_WR_LOCAL_INV, a peer's Send with Invalidate), used by a peer.
 *
 * The server registers 64 KiB with local write and IBV_ACCESS_MW_BIND
 * only: no remote right of its own, so every access the client makes
 * goes through a window. For each case (enum mw_case, mw.h) the client
 * connects, the server binds or retires windows on that connection's QP
 * (each bind a signalled WR: it must complete with IBV_WC_BIND_MW), and
 * sends the client a plan: RDMA Writes, Reads, FetchAdds, CmpSwaps and
 * Sends with Invalidate through the windows' STags, each with the
 * completion status it must get. The client posts the plan at once, each
 * WR fenced on those before it (a responder reads a Read's data only when
 * it sends the response and may execute later requests first), and
 * checks every completion in order: the status, Read data, the atomics'
 * original values.
 *
 * What must work: windows of both types reach exactly their bounds with
 * their rights (to the last octet), also when the MR grants none; a type
 * 1 rebind moves the window and kills the old key. What must fail with
 * IBV_WC_REM_ACCESS_ERR at the client (the server's RFC 5040 section 7
 * Terminate) and change no octet of the server's 64 KiB: a type 1 window
 * after a zero-length bind or under its old key, a type 2 window after
 * IBV_WR_LOCAL_INV or after the client's own Send with Invalidate (whose
 * receive completion must carry IBV_WC_WITH_INV and the STag), accesses
 * past either end, a Write through a read-only window, an atomic through
 * a window without the right, the MR's own STag, a type 2 window bound on
 * another connection (type 2B: QP and PD checked), and a window of
 * another PD. A Write that the responder refuses completes as sent at the
 * requester (its error arrives as an asynchronous event), so such a Write
 * is followed by a Read it would not stop: the Terminate fails it, or
 * the QP is in error before it goes and flushes it; never success.
 *
 * The server's own refusals (the QP's bind completes with
 * IBV_WC_MW_BIND_ERR): a bind past the MR, a type 2 window of another PD,
 * an MR registered without IBV_ACCESS_MW_BIND, a type 2 window already
 * bound, a zero-based window. And ibv_dereg_mr of an MR with a window
 * bound fails with EBUSY and leaves it working; ibv_dealloc_mw of a bound
 * window succeeds and kills its STag, after which the MR deregisters.
 *
 * After every case the server compares its 64 KiB with what the
 * successful operations must have made of it, octet by octet.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mw.h"

#define SENTINEL UINT64_C(0x5e5e5e5e5e5e5e5e)
#define DATA_SLOT 512u			/* client: each op's local octets */
#define PLAN_OFF 4096u			/* client buffer: the plan received */
#define DONE_OFF 6144u			/* the done message sent */
#define RES_OFF 7168u			/* atomic results */
#define CLIENT_BUF 8192u

const char *const mw_case_name[NCASES] = {
	[MC_T1_OPS] = "t1-ops",
	[MC_T2_OPS] = "t2-ops",
	[MC_T1_REBIND] = "t1-rebind",
	[MC_T1_UNBOUND] = "t1-unbound",
	[MC_T2_LOCAL_INV] = "t2-local-inv",
	[MC_T2_REMOTE_INV] = "t2-remote-inv",
	[MC_OOB_WRITE] = "oob-write",
	[MC_OOB_READ] = "oob-read",
	[MC_OOB_BELOW] = "oob-below",
	[MC_RIGHTS_WRITE] = "rights-write",
	[MC_RIGHTS_ATOMIC] = "rights-atomic",
	[MC_MR_RKEY] = "mr-rkey",
	[MC_OTHER_QP] = "other-qp",
	[MC_OTHER_PD] = "other-pd",
	[MC_BIND_OOB] = "bind-oob",
	[MC_BIND_OTHER_PD] = "bind-other-pd",
	[MC_BIND_NO_MW_BIND] = "bind-no-mw-bind",
	[MC_BIND_T2_BOUND] = "bind-t2-bound",
	[MC_BIND_ZERO_BASED] = "bind-zero-based",
	[MC_DEREG_BUSY] = "dereg-busy",
};

struct tp_qp_opts mw_qp_opts(void)
{
	return (struct tp_qp_opts){
		.max_send_wr = OPS_CQE,
		.max_recv_wr = 4,
		.max_sge = 1,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_SEND_WITH_INV |
				  IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
				  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				  IBV_QP_EX_WITH_BIND_MW |
				  IBV_QP_EX_WITH_LOCAL_INV,
		.rd_atomic = 4,
	};
}

/* ---- client ------------------------------------------------------------ */

struct client {
	const struct mw_opts *o;
	struct rdma_event_channel *ec;
	struct ibv_pd *pd;
	struct tp_buf buf;
};

static uint8_t *cl_at(struct client *cl, uint32_t off)
{
	return (uint8_t *)cl->buf.addr + off;
}

/* Connect for @mc; the receive for the plan is posted first. */
static bool cl_connect(struct client *cl, struct tp_conn *c, uint32_t mc,
		       bool second)
{
	uint64_t w[3] = { MW_MAGIC, mc, second };
	uint8_t pd[TP_CONNECT_PDATA_MAX];
	struct tp_qp_opts q = mw_qp_opts();

	memset(c, 0, sizeof(*c));
	if (!tp_resolve(c, cl->ec, cl->o->r.host, cl->o->r.port,
			cl->o->r.timeout_ms))
		return false;
	if (!cl->pd) {
		cl->pd = ibv_alloc_pd(c->id->verbs);
		if (!cl->pd) {
			tp_fail("ibv_alloc_pd: %s", strerror(errno));
			return false;
		}
		if (!tp_buf_alloc(&cl->buf, cl->pd, CLIENT_BUF, CLIENT_BUF,
				  IBV_ACCESS_LOCAL_WRITE))
			return false;
	}
	c->pd = cl->pd;
	tp_pdata_put(pd, w, 3);
	if (!tp_setup_qp(c, &q))
		return false;
	/* The server sends its plan as soon as the connection is up */
	if (tp_post_recv(c, 100, cl_at(cl, PLAN_OFF), sizeof(struct mw_plan),
			 cl->buf.mr->lkey)) {
		tp_fail("posting the receive for the plan");
		return false;
	}
	return tp_connect_qp(c, pd, 24, cl->o->r.timeout_ms);
}

static bool cl_plan(struct client *cl, struct tp_conn *c, uint32_t mc,
		    struct mw_plan *p)
{
	struct ibv_wc wc;

	if (tp_poll(c->rcq, &wc, cl->o->r.timeout_ms) <= 0 ||
	    wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
	    wc.byte_len != sizeof(*p)) {
		tp_fail("case %s: no plan from the server", mw_case_name[mc]);
		return false;
	}
	memcpy(p, cl_at(cl, PLAN_OFF), sizeof(*p));
	if (p->magic != MW_MAGIC || p->mcase != mc || p->nops > MAX_OPS) {
		tp_fail("case %s: the server's plan is not for it",
			mw_case_name[mc]);
		return false;
	}
	return true;
}

static int cl_post(struct client *cl, struct tp_conn *c, unsigned int i,
		   const struct mw_op *op)
{
	uint8_t *data = cl_at(cl, i * DATA_SLOT);
	uint64_t *res = (uint64_t *)cl_at(cl, RES_OFF + 8 * i);
	uint32_t lkey = cl->buf.mr->lkey;
	/*
	 * A responder reads a Read's data when it sends the response, and
	 * may execute later requests first: fence each on the ones before.
	 */
	unsigned int fl = IBV_SEND_SIGNALED | (i ? IBV_SEND_FENCE : 0);
	struct ibv_sge sge = { (uintptr_t)data, 8, lkey };
	struct ibv_send_wr wr = {
		.wr_id = i + 1,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = fl,
		.invalidate_rkey = op->rkey,
	}, *bad;

	*res = SENTINEL;
	switch (op->kind) {
	case OP_WRITE:
		tp_pat_fill(data, op->len, op->a);
		return tp_post_write(c, i + 1, data, op->len, lkey, op->addr,
				     op->rkey, fl);
	case OP_READ:
		memset(data, 0, op->len);
		return tp_post_read(c, i + 1, data, op->len, lkey, op->addr,
				    op->rkey, fl);
	case OP_FADD:
		return tp_post_fadd(c, i + 1, res, lkey, op->addr, op->rkey,
				    op->a, fl);
	case OP_CAS:
		return tp_post_cas(c, i + 1, res, lkey, op->addr, op->rkey,
				   op->a, op->b, fl);
	case OP_SEND_INV:
		return ibv_post_send(c->qp, &wr, &bad);
	default:
		return EINVAL;
	}
}

/* What a successful operation brought back. */
static void cl_check_data(struct client *cl, unsigned int i,
			  const struct mw_op *op, const char *who)
{
	uint64_t res = *(uint64_t *)cl_at(cl, RES_OFF + 8 * i);
	int64_t bad;

	if (op->kind == OP_READ && op->a) {
		bad = tp_pat_check(cl_at(cl, i * DATA_SLOT), op->len, op->a);
		if (bad >= 0)
			tp_fail("%s: Read data wrong at octet %" PRId64, who,
				bad);
	} else if ((op->kind == OP_FADD || op->kind == OP_CAS) &&
		   res != op->want) {
		tp_fail("%s: original value 0x%" PRIx64 ", expected 0x%" PRIx64,
			who, res, op->want);
	}
}

/*
 * Post the plan at once, then take every completion in order. Returns
 * true when all succeeded (the server then expects the done message).
 */
static bool cl_run(struct client *cl, struct tp_conn *c, uint32_t mc,
		   const struct mw_plan *p)
{
	static const char *const kind[] = { "?", "Write", "Read", "FetchAdd",
					    "CmpSwap", "Send with Invalidate" };
	bool failed = false;
	unsigned int i;
	struct ibv_wc wc;
	char who[80];
	int r;

	for (i = 0; i < p->nops; i++) {
		r = cl_post(cl, c, i, &p->op[i]);
		if (r) {
			tp_fail("case %s: posting op %u: %s", mw_case_name[mc],
				i, strerror(r));
			return false;
		}
	}
	for (i = 0; i < p->nops; i++) {
		const struct mw_op *op = &p->op[i];
		unsigned int want = failed ? IBV_WC_WR_FLUSH_ERR : op->expect;

		snprintf(who, sizeof(who), "case %s: %s %u at +%#" PRIx64,
			 mw_case_name[mc], kind[op->kind <= OP_SEND_INV ?
						op->kind : 0],
			 op->len, op->addr);
		if (tp_poll(c->scq, &wc, cl->o->r.timeout_ms) <= 0) {
			tp_fail("%s: no completion", who);
			return false;
		}
		if (wc.wr_id != i + 1)
			tp_fail("%s: completion of WR %" PRIu64 " instead", who,
				wc.wr_id);
		if (want == EXPECT_ERROR ?
			    wc.status == IBV_WC_SUCCESS ||
				    (wc.status != IBV_WC_REM_ACCESS_ERR &&
				     wc.status != IBV_WC_WR_FLUSH_ERR) :
			    want != EXPECT_ANY && wc.status != want)
			tp_fail("%s: %s, expected %s", who,
				tp_wc_status_name(wc.status),
				want == EXPECT_ERROR ?
					"REM_ACCESS_ERR or WR_FLUSH_ERR" :
					tp_wc_status_name(want));
		else
			tp_vlog("%s: %s", who, tp_wc_status_name(wc.status));
		if (wc.status == IBV_WC_SUCCESS)
			cl_check_data(cl, i, op, who);
		else
			failed = true;
	}
	return !failed;
}

static bool cl_done(struct client *cl, struct tp_conn *c, uint32_t mc)
{
	struct mw_done d = { MW_MAGIC, mc };
	int r;

	memcpy(cl_at(cl, DONE_OFF), &d, sizeof(d));
	r = tp_post_send(c, 50, cl_at(cl, DONE_OFF), sizeof(d),
			 cl->buf.mr->lkey, IBV_SEND_SIGNALED);
	if (r) {
		tp_fail("case %s: posting done: %s", mw_case_name[mc],
			strerror(r));
		return false;
	}
	return tp_wait_ok(c->scq, IBV_WC_SEND, 50, "done Send",
			  cl->o->r.timeout_ms, NULL);
}

static bool cl_case(struct client *cl, uint32_t mc)
{
	struct tp_conn a, b, *t = &a;
	struct mw_plan p;
	unsigned long before = tp_failures;

	if (!cl_connect(cl, &a, mc, false) || !cl_plan(cl, &a, mc, &p))
		return false;
	if (p.flags & PLAN_SERVER_ONLY) {
		/* The server's bind ends the connection once we have this */
		if (!cl_done(cl, &a, mc))
			return false;
		/* The server ends the connection (its bind fails on purpose) */
		if (!tp_close_after_peer(&a, 1, cl->o->r.timeout_ms))
			tp_fail("case %s: the server did not close",
				mw_case_name[mc]);
		if (tp_failures == before)
			tp_log("ok: case %s (the server's)", mw_case_name[mc]);
		return true;
	}
	if (p.flags & PLAN_SECOND) {
		t = &b;
		if (!cl_connect(cl, &b, mc, true) || !cl_plan(cl, &b, mc, &p))
			return false;
	}
	if (cl_run(cl, t, mc, &p) && !cl_done(cl, t, mc))
		return false;
	tp_close(t, 5000);
	if (t == &b)
		tp_close(&a, 5000);
	if (tp_failures == before)
		tp_log("ok: case %s (%u operations)", mw_case_name[mc],
		       p.nops);
	return true;
}

static int mw_client(const struct mw_opts *o, struct rdma_event_channel *ec)
{
	struct client cl = { .o = o, .ec = ec };
	uint32_t mc;

	for (mc = 0; mc < NCASES; mc++)
		if (!cl_case(&cl, mc))
			break;
	if (cl.buf.mr)
		tp_buf_free(&cl.buf);
	if (cl.pd)
		ibv_dealloc_pd(cl.pd);
	if (mc == NCASES && !tp_failures) {
		tp_log("PASS: client: %u cases", mc);
		return 0;
	}
	tp_log("FAILED: client: %lu failed check(s)", tp_failures);
	return 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: siwx-mw -s | -c HOST [-p PORT] [-t SEC] [-v] [-6]\n"
		   "Memory windows of both types used by a peer; see mw.c.\n");
}

int main(int argc, char **argv)
{
	struct mw_opts o = { .r = { .port = 18530, .timeout_ms = 20000 } };
	struct rdma_event_channel *ec;

	tp_prog = "siwx-mw";
	setvbuf(stdout, NULL, _IOLBF, 0);
	tp_role_parse(argc, argv, &o.r, usage);
	ec = tp_channel();
	return o.r.server ? mw_server(&o, ec) : mw_client(&o, ec);
}
