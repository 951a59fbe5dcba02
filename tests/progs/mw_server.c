// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-mw's server (see mw.c): the memory, the windows, each case's binds
 * and plan, and the checks after it. A shadow copy holds what the
 * server's 64 KiB must hold: each operation a plan expects to succeed is
 * applied to it when the plan is made.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mw.h"

#define RECV_OFF 1024u			/* msg buffer: receive slots */
#define RECV_SLOT 64u
#define ALL_RIGHTS (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | \
		    IBV_ACCESS_REMOTE_ATOMIC)
#define RR IBV_ACCESS_REMOTE_READ
#define RW (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)

struct server {
	const struct mw_opts *o;
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen;
	struct ibv_pd *pd, *pd2;
	struct tp_buf mem;		/* pd: local write and MW_BIND only */
	struct tp_buf mem2;		/* pd2: the same, all zero */
	struct tp_buf plain;		/* pd: without MW_BIND */
	struct tp_buf msg;		/* the plan; receive slots */
	uint8_t *shadow;
	struct ibv_mw *mw1;		/* type 1 in pd, for most cases */
	struct ibv_mw *mw2;		/* type 2 of the case, or NULL */
	struct ibv_mw *mwx;		/* another PD's window of the case */
	uint64_t seq;			/* the last Write's pattern */
	struct mw_plan plan;
};

static uint64_t base(const struct server *sv)
{
	return (uintptr_t)sv->mem.addr;
}

static uint64_t win(const struct server *sv)
{
	return base(sv) + WIN_OFF;
}

/* ---- windows ----------------------------------------------------------- */

/* The bind's (or invalidation's) completion, with status @want. */
static bool sv_wait(struct server *sv, struct tp_conn *c, uint64_t id,
		    enum ibv_wc_opcode op, enum ibv_wc_status want,
		    const char *what)
{
	struct ibv_wc wc;

	if (tp_poll(c->scq, &wc, sv->o->r.timeout_ms) <= 0) {
		tp_fail("%s: no completion", what);
		return false;
	}
	if (wc.wr_id != id || wc.status != want ||
	    (want == IBV_WC_SUCCESS && wc.opcode != op)) {
		tp_fail("%s: completion of WR %" PRIu64 ", %s, opcode %s; "
			"expected %s", what, wc.wr_id,
			tp_wc_status_name(wc.status),
			tp_wc_opcode_name(wc.opcode), tp_wc_status_name(want));
		return false;
	}
	tp_vlog("%s: %s", what, tp_wc_status_name(wc.status));
	return true;
}

/* A type 1 bind (ibv_bind_mw) on @c's QP; length 0 unbinds. */
static bool sv_bind1(struct server *sv, struct tp_conn *c, struct ibv_mw *mw,
		     struct ibv_mr *mr, uint64_t addr, uint64_t len,
		     unsigned int access, enum ibv_wc_status want)
{
	struct ibv_mw_bind b = {
		.wr_id = 10,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { len ? mr : NULL, len ? addr : 0, len, access },
	};
	int r = ibv_bind_mw(c->qp, mw, &b);

	if (r) {
		tp_fail("ibv_bind_mw: %s", strerror(r));
		return false;
	}
	return sv_wait(sv, c, 10, IBV_WC_BIND_MW, want, "type 1 bind");
}

/* A type 2 bind (ibv_wr_bind_mw) with the window's next key. */
static bool sv_bind2(struct server *sv, struct tp_conn *c, struct ibv_mw *mw,
		     struct ibv_mr *mr, uint64_t addr, uint64_t len,
		     unsigned int access, enum ibv_wc_status want)
{
	struct ibv_mw_bind_info bi = { mr, addr, len, access };
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	int r;

	ibv_wr_start(c->qpx);
	c->qpx->wr_id = 11;
	c->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(c->qpx, mw, rkey, &bi);
	r = ibv_wr_complete(c->qpx);
	if (r) {
		tp_fail("ibv_wr_bind_mw: %s", strerror(r));
		return false;
	}
	if (!sv_wait(sv, c, 11, IBV_WC_BIND_MW, want, "type 2 bind"))
		return false;
	if (want == IBV_WC_SUCCESS)
		mw->rkey = rkey;
	return true;
}

static bool sv_local_inv(struct server *sv, struct tp_conn *c, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = 12,
		.opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
		.invalidate_rkey = rkey,
	}, *bad;
	int r = ibv_post_send(c->qp, &wr, &bad);

	if (r) {
		tp_fail("posting Local Invalidate: %s", strerror(r));
		return false;
	}
	return sv_wait(sv, c, 12, IBV_WC_LOCAL_INV, IBV_WC_SUCCESS,
		       "Local Invalidate");
}

static struct ibv_mw *sv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, type);

	if (!mw)
		tp_fail("ibv_alloc_mw(type %d): %s", type, strerror(errno));
	return mw;
}

static void sv_dealloc(struct ibv_mw **mw)
{
	int r;

	if (!*mw)
		return;
	r = ibv_dealloc_mw(*mw);
	if (r)
		tp_fail("ibv_dealloc_mw: %s", strerror(r));
	*mw = NULL;
}

/* ---- plans ------------------------------------------------------------- */

static struct mw_op *op_add(struct server *sv, uint32_t kind, uint32_t rkey,
			    uint64_t addr, uint32_t len, uint32_t expect)
{
	struct mw_op *op = &sv->plan.op[sv->plan.nops++];

	*op = (struct mw_op){ .kind = kind, .expect = expect, .rkey = rkey,
			      .len = len, .addr = addr };
	return op;
}

static uint64_t *shadow_word(struct server *sv, uint64_t addr)
{
	return (uint64_t *)(sv->shadow + (addr - base(sv)));
}

/* A Write that must succeed; returns its pattern. */
static uint64_t op_write(struct server *sv, uint32_t rkey, uint64_t addr,
			 uint32_t len)
{
	struct mw_op *op = op_add(sv, OP_WRITE, rkey, addr, len, 0);

	op->a = ++sv->seq;
	tp_pat_fill(sv->shadow + (addr - base(sv)), len, op->a);
	return op->a;
}

static void op_read(struct server *sv, uint32_t rkey, uint64_t addr,
		    uint32_t len, uint64_t pattern)
{
	op_add(sv, OP_READ, rkey, addr, len, 0)->a = pattern;
}

static void op_fadd(struct server *sv, uint32_t rkey, uint64_t addr,
		    uint64_t add)
{
	struct mw_op *op = op_add(sv, OP_FADD, rkey, addr, 8, 0);

	op->a = add;
	op->want = *shadow_word(sv, addr);
	*shadow_word(sv, addr) += add;
}

/* A CmpSwap that matches, so that it changes the word. */
static void op_cas(struct server *sv, uint32_t rkey, uint64_t addr,
		   uint64_t swap)
{
	struct mw_op *op = op_add(sv, OP_CAS, rkey, addr, 8, 0);

	op->a = op->want = *shadow_word(sv, addr);
	op->b = swap;
	*shadow_word(sv, addr) = swap;
}

/* The access the server must refuse: the plan's last operation. */
static void op_refused(struct server *sv, uint32_t kind, uint32_t rkey,
		       uint64_t addr, uint32_t len)
{
	struct mw_op *op = op_add(sv, kind, rkey, addr, len,
				  IBV_WC_REM_ACCESS_ERR);

	op->a = kind == OP_CAS ? *(uint64_t *)(sv->shadow + WIN_OFF) : 1;
	op->b = ~op->a;
}

/*
 * A Write the responder refuses completes as sent (mw.c); the Read
 * behind it, which shows the refusal, fails or is flushed (mw.h).
 */
static void op_write_refused(struct server *sv, uint32_t rkey, uint64_t addr,
			     uint32_t len)
{
	op_add(sv, OP_WRITE, rkey, addr, len, EXPECT_ANY)->a = ~sv->seq;
	op_add(sv, OP_READ, rkey, addr, 8, EXPECT_ERROR);
}

/* Every access a window with all rights must allow, to its last octet. */
static void plan_all_ops(struct server *sv, uint32_t rkey, uint64_t addr,
			 uint32_t len)
{
	uint64_t p = op_write(sv, rkey, addr, len);

	op_read(sv, rkey, addr, len, p);
	op_fadd(sv, rkey, addr, 5);
	op_cas(sv, rkey, addr + 8, 0x1122334455667788ULL);
	p = op_write(sv, rkey, addr + len - 8, 8);
	op_read(sv, rkey, addr + len - 8, 8, p);
}

/* Binds and the plan of @mc on @c (the second connection's ops, too). */
static bool sv_prepare(struct server *sv, struct tp_conn *c, uint32_t mc)
{
	struct ibv_mr *mr = sv->mem.mr;
	uint64_t w = win(sv);
	uint32_t k1;

	switch (mc) {
	case MC_T1_OPS:
		if (!sv_bind1(sv, c, sv->mw1, mr, w, WIN_LEN, ALL_RIGHTS, 0))
			return false;
		plan_all_ops(sv, sv->mw1->rkey, w, WIN_LEN);
		return true;
	case MC_T2_OPS:
		sv->mw2 = sv_alloc_mw(sv->pd, IBV_MW_TYPE_2);
		if (!sv->mw2 || !sv_bind2(sv, c, sv->mw2, mr, w + 1024, 256,
					  ALL_RIGHTS, 0))
			return false;
		plan_all_ops(sv, sv->mw2->rkey, w + 1024, 256);
		return true;
	case MC_T1_REBIND:
		if (!sv_bind1(sv, c, sv->mw1, mr, w, WIN_LEN, RW, 0))
			return false;
		k1 = sv->mw1->rkey;
		if (!sv_bind1(sv, c, sv->mw1, mr, w + 2048, 256, RW, 0))
			return false;
		if (sv->mw1->rkey == k1)
			tp_fail("a type 1 rebind kept the key 0x%x", k1);
		op_read(sv, sv->mw1->rkey, w + 2048, 256,
			op_write(sv, sv->mw1->rkey, w + 2048, 256));
		op_refused(sv, OP_READ, k1, w, 8);
		return true;
	case MC_T1_UNBOUND:
		if (!sv_bind1(sv, c, sv->mw1, mr, w, WIN_LEN, RR, 0) ||
		    !sv_bind1(sv, c, sv->mw1, NULL, 0, 0, 0, 0))
			return false;
		op_refused(sv, OP_READ, sv->mw1->rkey, w, 8);
		return true;
	case MC_T2_LOCAL_INV:
	case MC_T2_REMOTE_INV:
		sv->mw2 = sv_alloc_mw(sv->pd, IBV_MW_TYPE_2);
		if (!sv->mw2 || !sv_bind2(sv, c, sv->mw2, mr, w + 1024, 256,
					  RR, 0))
			return false;
		if (mc == MC_T2_LOCAL_INV &&
		    !sv_local_inv(sv, c, sv->mw2->rkey))
			return false;
		if (mc == MC_T2_REMOTE_INV)
			op_add(sv, OP_SEND_INV, sv->mw2->rkey, 0, 8, 0);
		op_refused(sv, OP_READ, sv->mw2->rkey, w + 1024, 8);
		return true;
	case MC_OOB_WRITE:
	case MC_OOB_READ:
	case MC_OOB_BELOW:
		if (!sv_bind1(sv, c, sv->mw1, mr, w, WIN_LEN, ALL_RIGHTS, 0))
			return false;
		k1 = sv->mw1->rkey;
		if (mc == MC_OOB_WRITE) {
			op_write_refused(sv, k1, w + WIN_LEN - 16, 32);
		} else if (mc == MC_OOB_READ) {
			op_refused(sv, OP_READ, k1, w + WIN_LEN - 16, 32);
		} else {
			op_refused(sv, OP_FADD, k1, w - 8, 8);
		}
		return true;
	case MC_RIGHTS_WRITE:
		if (!sv_bind1(sv, c, sv->mw1, mr, w, WIN_LEN, RR, 0))
			return false;
		op_read(sv, sv->mw1->rkey, w, 8, 0);
		op_write_refused(sv, sv->mw1->rkey, w, 8);
		return true;
	case MC_RIGHTS_ATOMIC:
		if (!sv_bind1(sv, c, sv->mw1, mr, w, WIN_LEN, RW, 0))
			return false;
		op_write(sv, sv->mw1->rkey, w, 8);
		op_refused(sv, OP_CAS, sv->mw1->rkey, w, 8);
		return true;
	case MC_MR_RKEY:
		op_refused(sv, OP_READ, mr->rkey, w, 8);
		return true;
	case MC_OTHER_QP:
		sv->mw2 = sv_alloc_mw(sv->pd, IBV_MW_TYPE_2);
		if (!sv->mw2 || !sv_bind2(sv, c, sv->mw2, mr, w + 1024, 256,
					  ALL_RIGHTS, 0))
			return false;
		op_refused(sv, OP_READ, sv->mw2->rkey, w + 1024, 8);
		return true;
	case MC_OTHER_PD:
		/* @c is in pd2; the client's second connection in pd */
		sv->mwx = sv_alloc_mw(sv->pd2, IBV_MW_TYPE_1);
		if (!sv->mwx ||
		    !sv_bind1(sv, c, sv->mwx, sv->mem2.mr,
			      (uintptr_t)sv->mem2.addr, 4096, ALL_RIGHTS, 0))
			return false;
		op_refused(sv, OP_READ, sv->mwx->rkey,
			   (uintptr_t)sv->mem2.addr, 8);
		return true;
	default:
		tp_fail("no plan for case %u", mc);
		return false;
	}
}

/* Server-only cases: a bind the kernel must refuse (the QP ends). */
static void sv_bad_bind(struct server *sv, struct tp_conn *c, uint32_t mc)
{
	const enum ibv_wc_status e = IBV_WC_MW_BIND_ERR;
	struct ibv_mr *mr = sv->mem.mr;
	uint64_t w = win(sv);

	switch (mc) {
	case MC_BIND_OOB:
		sv_bind1(sv, c, sv->mw1, mr, base(sv) + MEM_LEN - 256, 512,
			 RR, e);
		break;
	case MC_BIND_OTHER_PD:
		sv->mwx = sv_alloc_mw(sv->pd2, IBV_MW_TYPE_2);
		if (sv->mwx)
			sv_bind2(sv, c, sv->mwx, mr, w, 8, RR, e);
		break;
	case MC_BIND_NO_MW_BIND:
		sv_bind1(sv, c, sv->mw1, sv->plain.mr,
			 (uintptr_t)sv->plain.addr, 64, RR, e);
		break;
	case MC_BIND_T2_BOUND:
		sv->mw2 = sv_alloc_mw(sv->pd, IBV_MW_TYPE_2);
		if (sv->mw2 && sv_bind2(sv, c, sv->mw2, mr, w, 8, RR, 0))
			sv_bind2(sv, c, sv->mw2, mr, w + 64, 8, RR, e);
		break;
	case MC_BIND_ZERO_BASED:
		sv->mw2 = sv_alloc_mw(sv->pd, IBV_MW_TYPE_2);
		if (sv->mw2)
			sv_bind2(sv, c, sv->mw2, mr, w, 8,
				 RR | IBV_ACCESS_ZERO_BASED, e);
		break;
	}
}

/* ---- connections ------------------------------------------------------- */

static bool sv_resources(struct server *sv, struct ibv_context *ctx)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
	struct ibv_device_attr da;

	if (ibv_query_device(ctx, &da)) {
		tp_fail("ibv_query_device: %s", strerror(errno));
		return false;
	}
	if (!(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW) ||
	    !(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) ||
	    !da.max_mw)
		tp_fail("device announces no memory windows: cap flags 0x%x, "
			"max_mw %d", da.device_cap_flags, da.max_mw);
	sv->pd = ibv_alloc_pd(ctx);
	sv->pd2 = ibv_alloc_pd(ctx);
	if (!sv->pd || !sv->pd2) {
		tp_fail("ibv_alloc_pd: %s", strerror(errno));
		return false;
	}
	if (!tp_buf_alloc(&sv->mem, sv->pd, MEM_LEN, MEM_LEN, acc) ||
	    !tp_buf_alloc(&sv->mem2, sv->pd2, 4096, 4096, acc) ||
	    !tp_buf_alloc(&sv->plain, sv->pd, 4096, 4096,
			  IBV_ACCESS_LOCAL_WRITE) ||
	    !tp_buf_alloc(&sv->msg, sv->pd, 4096, 4096,
			  IBV_ACCESS_LOCAL_WRITE))
		return false;
	sv->shadow = malloc(MEM_LEN);
	if (!sv->shadow) {
		tp_fail("out of memory");
		return false;
	}
	tp_pat_fill(sv->mem.addr, MEM_LEN, 0x77);
	memcpy(sv->shadow, sv->mem.addr, MEM_LEN);
	sv->mw1 = sv_alloc_mw(sv->pd, IBV_MW_TYPE_1);
	return sv->mw1;
}

static bool sv_accept(struct server *sv, struct tp_conn *c, uint32_t mc,
		      bool second, bool in_pd2)
{
	struct tp_qp_opts q = mw_qp_opts();
	uint64_t w[3];
	int i;

	if (!tp_get_request(sv->ec, sv->listen, c, mc ? sv->o->r.timeout_ms :
			    600000))
		return false;
	if (!tp_pdata_get(c->peer_pdata, c->peer_pdata_len, w, 3) ||
	    w[0] != MW_MAGIC || w[1] != mc || w[2] != second) {
		tp_fail("case %s: a connect request for another case",
			mw_case_name[mc]);
		return false;
	}
	tp_own_channel(c);
	if (!sv->pd && !sv_resources(sv, c->id->verbs))
		return false;
	c->pd = in_pd2 ? sv->pd2 : sv->pd;
	if (!tp_setup_qp(c, &q))
		return false;
	/* Those of pd2 receive nothing; posting needs an lkey of the PD */
	for (i = 0; i < 2 && !in_pd2; i++)
		if (tp_post_recv(c, 201 + i, (uint8_t *)sv->msg.addr +
				 RECV_OFF + i * RECV_SLOT, RECV_SLOT,
				 sv->msg.mr->lkey)) {
			tp_fail("posting a receive");
			return false;
		}
	return tp_accept(c, NULL, 0, 4, sv->o->r.timeout_ms);
}

static bool sv_send_plan(struct server *sv, struct tp_conn *c)
{
	int r;

	if (c->pd == sv->pd2) {
		/* The plan goes from pd2's own buffer */
		memcpy(sv->mem2.addr, &sv->plan, sizeof(sv->plan));
		r = tp_post_send(c, 20, sv->mem2.addr, sizeof(sv->plan),
				 sv->mem2.mr->lkey, IBV_SEND_SIGNALED);
	} else {
		memcpy(sv->msg.addr, &sv->plan, sizeof(sv->plan));
		r = tp_post_send(c, 20, sv->msg.addr, sizeof(sv->plan),
				 sv->msg.mr->lkey, IBV_SEND_SIGNALED);
	}
	if (r) {
		tp_fail("posting the plan: %s", strerror(r));
		return false;
	}
	return sv_wait(sv, c, 20, IBV_WC_SEND, IBV_WC_SUCCESS, "plan Send");
}

/* The next receive: the client's done message, or its Send w/ Inv. */
static bool sv_recv(struct server *sv, struct tp_conn *c, uint32_t mc,
		    struct ibv_wc *wc)
{
	if (tp_poll(c->rcq, wc, sv->o->r.timeout_ms) <= 0 ||
	    wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV) {
		tp_fail("case %s: no message from the client",
			mw_case_name[mc]);
		return false;
	}
	return true;
}

static bool sv_recv_done(struct server *sv, struct tp_conn *c, uint32_t mc)
{
	struct mw_done d;
	struct ibv_wc wc;

	if (!sv_recv(sv, c, mc, &wc))
		return false;
	memcpy(&d, (uint8_t *)sv->msg.addr + RECV_OFF +
	       (wc.wr_id - 201) * RECV_SLOT, sizeof(d));
	if (wc.byte_len != sizeof(d) || d.magic != MW_MAGIC || d.mcase != mc) {
		tp_fail("case %s: the client's done message is wrong",
			mw_case_name[mc]);
		return false;
	}
	return true;
}

/* The client ends each connection (or the Terminate of its access) */
static void sv_wait_close(struct server *sv, struct tp_conn *c, uint32_t mc)
{
	if (!tp_close_after_peer(c, 1, sv->o->r.timeout_ms))
		tp_fail("case %s: the connection did not end",
			mw_case_name[mc]);
}

/* Not an octet the plan did not change, nor one it did, may differ. */
static void sv_check_mem(struct server *sv, uint32_t mc)
{
	const uint8_t *m = sv->mem.addr, *z = sv->mem2.addr;
	size_t i;

	for (i = 0; i < MEM_LEN; i++)
		if (m[i] != sv->shadow[i]) {
			tp_fail("case %s: octet %zu of the server's memory is "
				"0x%02x, expected 0x%02x", mw_case_name[mc], i,
				m[i], sv->shadow[i]);
			return;
		}
	/* pd2's buffer held plans; only its first 4 KiB octets past them */
	for (i = sizeof(sv->plan); i < 4096; i++)
		if (z[i]) {
			tp_fail("case %s: pd2's memory changed at %zu",
				mw_case_name[mc], i);
			return;
		}
}

/* The last case: deregistration while windows are bound, dealloc. */
static bool sv_dereg_busy(struct server *sv, struct tp_conn *c, uint32_t mc)
{
	struct ibv_mr *mr = sv->mem.mr;
	uint64_t w = win(sv);
	uint32_t k1;
	int r;

	sv->mw2 = sv_alloc_mw(sv->pd, IBV_MW_TYPE_2);
	if (!sv->mw2 || !sv_bind1(sv, c, sv->mw1, mr, w, WIN_LEN, RR, 0) ||
	    !sv_bind2(sv, c, sv->mw2, mr, w + 1024, 256, RR, 0))
		return false;
	k1 = sv->mw1->rkey;
	r = ibv_dereg_mr(mr);
	if (r != EBUSY) {
		tp_fail("ibv_dereg_mr with windows bound: %s, expected EBUSY",
			r ? strerror(r) : "success");
		return false;
	}
	sv_dealloc(&sv->mw1);
	r = ibv_dereg_mr(mr);
	if (r != EBUSY) {
		tp_fail("ibv_dereg_mr with a type 2 window bound: %s, "
			"expected EBUSY", r ? strerror(r) : "success");
		return false;
	}
	tp_vlog("case %s: ibv_dereg_mr refused twice (EBUSY)",
		mw_case_name[mc]);
	/* The MR and the window left work; the dealloc'ed one's STag not */
	op_read(sv, sv->mw2->rkey, w + 1024, 256, 0);
	op_refused(sv, OP_READ, k1, w, 8);
	return true;
}

static bool sv_case(struct server *sv, uint32_t mc)
{
	bool two = mc == MC_OTHER_QP || mc == MC_OTHER_PD;
	bool server_only = mc >= MC_BIND_OOB && mc <= MC_BIND_ZERO_BASED;
	unsigned long before = tp_failures;
	struct tp_conn a = { 0 }, b = { 0 }, *t = &a;
	struct mw_plan ops;
	struct ibv_wc wc;
	bool all_ok = true;
	unsigned int i;

	memset(&sv->plan, 0, sizeof(sv->plan));
	sv->plan.magic = MW_MAGIC;
	sv->plan.mcase = mc;
	if (!sv_accept(sv, &a, mc, false, mc == MC_OTHER_PD))
		return false;
	if (server_only) {
		sv->plan.flags = PLAN_SERVER_ONLY;
		if (!sv_send_plan(sv, &a) || !sv_recv_done(sv, &a, mc))
			return false;
		sv_bad_bind(sv, &a, mc);
		tp_close(&a, 5000);
	} else {
		if (mc == MC_DEREG_BUSY ? !sv_dereg_busy(sv, &a, mc) :
					  !sv_prepare(sv, &a, mc))
			return false;
		if (two) {
			ops = sv->plan;
			sv->plan.nops = 0;
			sv->plan.flags = PLAN_SECOND;
			memset(sv->plan.op, 0, sizeof(sv->plan.op));
			if (!sv_send_plan(sv, &a) ||
			    !sv_accept(sv, &b, mc, true, false))
				return false;
			sv->plan = ops;
			t = &b;
		}
		if (!sv_send_plan(sv, t))
			return false;
		for (i = 0; i < sv->plan.nops; i++)
			all_ok &= sv->plan.op[i].expect == IBV_WC_SUCCESS;
		if (mc == MC_T2_REMOTE_INV && sv_recv(sv, t, mc, &wc) &&
		    (!(wc.wc_flags & IBV_WC_WITH_INV) ||
		     wc.invalidated_rkey != sv->mw2->rkey))
			tp_fail("case %s: the receive shows no invalidation "
				"of 0x%x (wc_flags 0x%x, STag 0x%x)",
				mw_case_name[mc], sv->mw2->rkey, wc.wc_flags,
				wc.invalidated_rkey);
		if (all_ok && !sv_recv_done(sv, t, mc))
			return false;
		sv_wait_close(sv, t, mc);
		if (two)
			sv_wait_close(sv, &a, mc);
	}
	sv_dealloc(&sv->mw2);
	sv_dealloc(&sv->mwx);
	sv_check_mem(sv, mc);
	if (tp_failures == before)
		tp_log("ok: case %s", mw_case_name[mc]);
	return true;
}

int mw_server(const struct mw_opts *o, struct rdma_event_channel *ec)
{
	struct server sv = { .o = o, .ec = ec };
	uint32_t mc;
	int r;

	sv.listen = tp_listen(ec, o->r.port);
	for (mc = 0; mc < NCASES; mc++)
		if (!sv_case(&sv, mc))
			break;
	/* With its windows gone, the MR deregisters */
	if (sv.mem.mr) {
		r = ibv_dereg_mr(sv.mem.mr);
		if (r)
			tp_fail("ibv_dereg_mr after the windows: %s",
				strerror(r));
		sv.mem.mr = NULL;
		free(sv.mem.addr);
	}
	sv_dealloc(&sv.mw1);
	tp_buf_free(&sv.mem2);
	tp_buf_free(&sv.plain);
	tp_buf_free(&sv.msg);
	free(sv.shadow);
	if (sv.pd)
		ibv_dealloc_pd(sv.pd);
	if (sv.pd2)
		ibv_dealloc_pd(sv.pd2);
	rdma_destroy_id(sv.listen);
	if (mc == NCASES && !tp_failures) {
		tp_log("PASS: server: %u cases, memory exact", mc);
		return 0;
	}
	tp_log("FAILED: server: %lu failed check(s)", tp_failures);
	return 1;
}
