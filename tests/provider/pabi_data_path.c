// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Step 4 of siwx_pabi_layout_test (see pabi_layout_test.c): the data path
 * against the fake kernel (fake_uverbs.c). The steps run in the order of
 * check_data_path() and depend on one another's effects on the fake: ring
 * slot indices, doorbell and command counts.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "fake_uverbs.h"
#include "pabi_check.h"
#include "siwx.h"
#include "siwxdv.h"

/* ---- 4. data path against the fake kernel ----------------------------- */

static struct siwx_sqe *kernel_take_sqe(unsigned int idx)
{
	struct siwx_sqe *sqe = &fake.sq[idx];

	return (sqe->flags & SIWX_WQE_VALID) ? sqe : NULL;
}

static void kernel_release_sq(void)
{
	int i;

	for (i = 0; i < FAKE_NUM_SQE; i++)
		__atomic_store_n(&fake.sq[i].flags, 0, __ATOMIC_RELEASE);
}

/*
 * What the steps share: the objects made by the earlier steps and used by
 * the later ones, and the scatter entry (8 bytes of buf under mr's lkey)
 * that the sends and receives reuse. A step copies the pointers it uses
 * into locals of the same names, so its checks read as they always did.
 * buf, rwr and rbad stand apart because the checks name them as objects
 * (sizeof(buf), &rwr); rwr is the last receive posted to qp, which the SRQ
 * step posts again.
 */
static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct siwx_cqe *cq_ring;	/* cq's ring as the fake kernel made it */
	struct ibv_qp *qp;	/* RC, with send_ops_flags */
	struct ibv_qp_ex *qpx;	/* qp's extended API */
	struct ibv_srq *srq;
	struct ibv_qp *qp2;	/* RC on srq, without send_ops_flags */
	struct ibv_sge sge;
} dp;
static uint64_t buf[512];
static struct ibv_recv_wr rwr, *rbad;
static const uint8_t want_imm[8] = { 9, 8, 7, 6, 5, 4, 3, 2 };

static void dp_query(void)
{
	struct ibv_context *ctx = dp.ctx;
	struct ibv_device_attr_ex dattr;
	struct ibv_port_attr pattr;

	CHECK(ibv_query_device_ex(ctx, NULL, &dattr) == 0 &&
		      !strcmp(dattr.orig_attr.fw_ver, "1.2.3") &&
		      dattr.orig_attr.atomic_cap == IBV_ATOMIC_HCA &&
		      dattr.orig_attr.max_qp == 100,
	      "query_device_ex (legacy fallback)");
	CHECK(ibv_query_port(ctx, 1, &pattr) == 0 &&
		      pattr.state == IBV_PORT_ACTIVE &&
		      pattr.active_mtu == IBV_MTU_1024 &&
		      pattr.link_layer == IBV_LINK_LAYER_ETHERNET,
	      "query_port");
}

static void dp_create_pd_mr_cq(void)
{
	struct ibv_context *ctx = dp.ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;

	pd = ibv_alloc_pd(ctx);
	REQUIRE(pd && pd->handle == 0x10 && pd->context == ctx, "alloc_pd");

	mr = ibv_reg_mr(pd, buf, sizeof(buf),
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	REQUIRE(mr, "reg_mr: %s", strerror(errno));
	CHECK(mr->lkey == 0x1111 && mr->rkey == 0x2222 && mr->handle == 0x20,
	      "reg_mr response");
	CHECK(fake.last_reg_mr.start == (uintptr_t)buf &&
		      fake.last_reg_mr.length == sizeof(buf) &&
		      fake.last_reg_mr.pd_handle == 0x10 &&
		      fake.last_reg_mr.access_flags ==
			      (IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_ATOMIC),
	      "reg_mr request as the kernel sees it");
	CHECK(fake.in_bytes[IB_USER_VERBS_CMD_REG_MR] ==
		      sizeof(struct ibvp_cmd_reg_mr),
	      "reg_mr request size");

	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	REQUIRE(cq, "create_cq: %s", strerror(errno));
	CHECK(cq->handle == 0x30 && cq->cqe == FAKE_NUM_CQE, "create_cq");
	CHECK(fake.out_bytes[IB_USER_VERBS_CMD_CREATE_CQ] ==
		      sizeof(struct ib_uverbs_create_cq_resp) +
			      sizeof(struct siwx_uresp_create_cq),
	      "create_cq response carries udata");
	dp.pd = pd;
	dp.mr = mr;
	dp.cq = cq;
	dp.cq_ring = fake.cq;
}

/* The QP the later steps use, after two that must be refused. */
static void dp_create_qp(void)
{
	struct ibv_context *ctx = dp.ctx;
	struct ibv_pd *pd = dp.pd;
	struct ibv_cq *cq = dp.cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 32 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
				  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
	};

	/* refused before the kernel sees it */
	qa.send_ops_flags |= IBV_QP_EX_WITH_TSO;
	errno = 0;
	CHECK(!ibv_create_qp_ex(ctx, &qa) && errno == EOPNOTSUPP,
	      "TSO in send_ops_flags must be refused");
	qa.send_ops_flags &= ~(uint64_t)IBV_QP_EX_WITH_TSO;
	qa.qp_type = IBV_QPT_UD;
	errno = 0;
	CHECK(!ibv_create_qp_ex(ctx, &qa) && errno == EOPNOTSUPP, "UD QP");
	qa.qp_type = IBV_QPT_RC;
	qa.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	qa.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	errno = 0;
	CHECK(!ibv_create_qp_ex(ctx, &qa) && errno == EOPNOTSUPP,
	      "a create flag must be refused");
	CHECK(fake.ncmd[IB_USER_VERBS_CMD_CREATE_QP] == 0, "nothing sent");
	qa.send_ops_flags |= IBV_QP_EX_WITH_BIND_MW;

	/* create flags asked for, none set (rdma-core's tests do that) */
	qa.create_flags = 0;
	qp = ibv_create_qp_ex(ctx, &qa);
	REQUIRE(qp, "create_qp_ex: %s", strerror(errno));
	CHECK(qp->handle == 0x40 && qp->qp_num == 0x41, "create_qp handle");
	CHECK(fake.last_create_qp.pd_handle == 0x10 &&
		      fake.last_create_qp.send_cq_handle == 0x30 &&
		      fake.last_create_qp.max_send_sge == 2 &&
		      fake.last_create_qp.qp_type == IBV_QPT_RC,
	      "create_qp request");
	CHECK(fake.out_bytes[IB_USER_VERBS_CMD_CREATE_QP] ==
		      sizeof(struct ib_uverbs_create_qp_resp) +
			      sizeof(struct siwx_uresp_create_qp),
	      "create_qp response carries udata");
	qpx = ibv_qp_to_qp_ex(qp);
	CHECK(qpx == &to_sqp(qp)->vqp.qp_ex,
	      "ibv_qp_to_qp_ex reads ibvp_qp.comp_mask");
	CHECK(to_sqp(qp)->lim.max_inline == 32, "inline limit");
	dp.qp = qp;
	dp.qpx = qpx;
}

/* Atomics, a refusal and a full ring through the classic post_send. */
static void dp_post_send(void)
{
	struct ibv_qp *qp = dp.qp;
	struct ibv_mr *mr = dp.mr;
	struct ibv_send_wr wr, *bad = NULL;
	struct siwx_sqe *sqe;

	/* ibv_post_send is inline: qp->context->ops.post_send */
	dp.sge.addr = (uintptr_t)buf;
	dp.sge.length = 8;
	dp.sge.lkey = mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xf00d;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.sg_list = &dp.sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = 0x8000;
	wr.wr.atomic.rkey = 0x77;
	wr.wr.atomic.compare_add = 3;
	CHECK(ibv_post_send(qp, &wr, &bad) == 0, "post FetchAdd");
	sqe = kernel_take_sqe(0);
	REQUIRE(sqe, "SQE 0 not published");
	CHECK(sqe->id == 0xf00d &&
		      sqe->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD &&
		      sqe->add_swap == 3 && sqe->add_swap_mask == 0 &&
		      sqe->raddr == 0x8000 && sqe->rkey == 0x77 &&
		      sqe->num_sge == 1 && sqe->sge[0].lkey == 0x1111 &&
		      (sqe->flags & SIWX_WQE_SIGNALLED),
	      "FetchAdd SQE");
	CHECK(fake.doorbells == 1 && fake.last_db_qp_handle == 0x40,
	      "doorbell rung for an idle SQ");

	/* TX engine busy: no doorbell */
	__atomic_store_n(&fake.sq_ctrl->tx_active, 1, __ATOMIC_RELEASE);
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.swap = 5;
	CHECK(ibv_post_send(qp, &wr, &bad) == 0, "post CmpSwap");
	CHECK(fake.doorbells == 1, "no doorbell while tx_active");
	sqe = kernel_take_sqe(1);
	CHECK(sqe && sqe->compare == 3 && sqe->add_swap == 5 &&
		      sqe->compare_mask == ~0ULL && sqe->add_swap_mask == ~0ULL,
	      "CmpSwap SQE");
	__atomic_store_n(&fake.sq_ctrl->tx_active, 0, __ATOMIC_RELEASE);

	/* post-time refusals set *bad_wr */
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	dp.sge.length = 1;
	bad = NULL;
	CHECK(ibv_post_send(qp, &wr, &bad) == EINVAL && bad == &wr,
	      "Send with Immediate and payload");
	dp.sge.length = 8;

	/* fill the ring: 2 used, 2 free, the 5th overall must fail */
	wr.opcode = IBV_WR_SEND;
	CHECK(ibv_post_send(qp, &wr, &bad) == 0, "3rd");
	CHECK(ibv_post_send(qp, &wr, &bad) == 0, "4th");
	bad = NULL;
	CHECK(ibv_post_send(qp, &wr, &bad) == ENOMEM && bad == &wr,
	      "full SQ -> ENOMEM");
	kernel_release_sq();
}

static void dp_post_batch(void)
{
	struct ibv_qp_ex *qpx = dp.qpx;
	struct ibv_mr *mr = dp.mr;
	struct siwx_sqe *sqe;
	unsigned int db;

	/* extended API + direct verbs, one batch */
	db = fake.doorbells;
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	siwxdv_wr_rdma_write_imm8(qpx, 0x99, 0x4000, want_imm);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 64);
	qpx->wr_id = 2;
	siwxdv_wr_masked_fetch_add(qpx, 0x99, 0x4008, 1, 0x8000000080000000ULL);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	CHECK(!kernel_take_sqe(0), "nothing visible before wr_complete");
	CHECK(ibv_wr_complete(qpx) == 0, "wr_complete");
	sqe = kernel_take_sqe(0);
	CHECK(sqe && sqe->id == 1 &&
		      sqe->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM &&
		      !memcmp(sqe->imm, want_imm, 8) &&
		      (sqe->flags & SIWX_WQE_IMM_FULL),
	      "write_imm8 SQE");
	sqe = kernel_take_sqe(1);
	CHECK(sqe && sqe->id == 2 &&
		      sqe->opcode == IB_UVERBS_WR_MASKED_ATOMIC_FETCH_AND_ADD &&
		      sqe->add_swap_mask == 0x8000000080000000ULL,
	      "masked FetchAdd SQE");
	CHECK(fake.doorbells == db + 1, "one doorbell per batch");

	/* an op not enabled at create time fails the whole batch */
	ibv_wr_start(qpx);
	ibv_wr_rdma_read(qpx, 1, 0x10);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	CHECK(ibv_wr_complete(qpx) == EINVAL, "RDMA_READ not enabled");
	CHECK(!kernel_take_sqe(2), "failed batch posts nothing");
}

static void dp_poll_and_arm(void)
{
	struct ibv_cq *cq = dp.cq;
	struct ibv_wc wc[2];
	uint8_t imm8[2][8];

	/* completions: ibv_poll_cq is inline: cq->context->ops.poll_cq */
	CHECK(ibv_poll_cq(cq, 2, wc) == 0, "empty CQ");
	fake.cq[0].id = 0xc0;
	fake.cq[0].opcode = SIWX_WC_RECV_RDMA_WITH_IMM;
	fake.cq[0].bytes = 64;
	fake.cq[0].qp_num = 0x41;
	memcpy(fake.cq[0].imm, want_imm, 8);
	__atomic_store_n(&fake.cq[0].flags, SIWX_CQE_VALID | SIWX_CQE_WITH_IMM,
			 __ATOMIC_RELEASE);
	fake.cq[1].id = 0xc1;
	fake.cq[1].opcode = SIWX_WC_FETCH_ADD;
	__atomic_store_n(&fake.cq[1].flags, SIWX_CQE_VALID, __ATOMIC_RELEASE);
	CHECK(ibv_poll_cq(cq, 1, wc) == 1 && wc[0].wr_id == 0xc0 &&
		      wc[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		      (wc[0].wc_flags & IBV_WC_WITH_IMM) &&
		      ntohl(wc[0].imm_data) == 0x09080706,
	      "poll RECV_RDMA_WITH_IMM");
	CHECK(fake.cq[0].flags == 0, "CQE handed back to the kernel");
	CHECK(siwxdv_poll_cq_imm8(cq, 2, wc, imm8) == 1 &&
		      wc[0].wr_id == 0xc1 &&
		      wc[0].opcode == IBV_WC_FETCH_ADD,
	      "siwxdv_poll_cq_imm8");

	CHECK(ibv_req_notify_cq(cq, 1) == 0 &&
		      fake.cq_ctrl->notify == SIWX_NOTIFY_SOLICITED,
	      "arm solicited");
	CHECK(ibv_req_notify_cq(cq, 0) == 0 &&
		      fake.cq_ctrl->notify == SIWX_NOTIFY_NEXT,
	      "arm next");
}

static void dp_post_recv(void)
{
	struct ibv_qp *qp = dp.qp;

	/* receive queue */
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 0xbeef;
	rwr.sg_list = &dp.sge;
	rwr.num_sge = 1;
	CHECK(ibv_post_recv(qp, &rwr, &rbad) == 0 &&
		      (fake.rq[0].flags & SIWX_WQE_VALID) &&
		      fake.rq[0].id == 0xbeef && fake.rq[0].num_sge == 1,
	      "post_recv");
	CHECK(fake.ncmd[IB_USER_VERBS_CMD_POST_RECV] == 0,
	      "no receive doorbell for a live QP");
	/* the kernel flushed the QP for good: receives ring the doorbell */
	__atomic_store_n(&fake.sq_ctrl->rq_doorbell, SIWX_RQ_DB_FLUSH, __ATOMIC_RELEASE);
	rwr.wr_id = 0xbef0;
	CHECK(ibv_post_recv(qp, &rwr, &rbad) == 0 &&
		      (fake.rq[1].flags & SIWX_WQE_VALID) &&
		      fake.rq[1].id == 0xbef0,
	      "post_recv to a flushed QP");
	CHECK(fake.ncmd[IB_USER_VERBS_CMD_POST_RECV] == 1 &&
		      fake.last_rdb_qp_handle == 0x40 && !fake.bad,
	      "receive doorbell after posting to a flushed QP");
	/* a message waits for a receive (recv_wait_ms): the doorbell too */
	__atomic_store_n(&fake.sq_ctrl->rq_doorbell, SIWX_RQ_DB_WAIT, __ATOMIC_RELEASE);
	rwr.wr_id = 0xbef1;
	CHECK(ibv_post_recv(qp, &rwr, &rbad) == 0 &&
		      (fake.rq[2].flags & SIWX_WQE_VALID) &&
		      fake.rq[2].id == 0xbef1,
	      "post_recv while a message waits");
	CHECK(fake.ncmd[IB_USER_VERBS_CMD_POST_RECV] == 2 && !fake.bad,
	      "receive doorbell while a message waits for a receive");
	__atomic_store_n(&fake.sq_ctrl->rq_doorbell, 0, __ATOMIC_RELEASE);
}

static void dp_modify_qp(void)
{
	struct ibv_qp *qp = dp.qp;
	struct ibv_qp_attr attr = {};

	attr.qp_state = IBV_QPS_INIT;
	CHECK(ibv_modify_qp(qp, &attr, IBV_QP_STATE) == 0 &&
		      fake.last_modify_qp.qp_state == IBV_QPS_INIT &&
		      fake.last_modify_qp.attr_mask == IBV_QP_STATE &&
		      fake.last_modify_qp.qp_handle == 0x40,
	      "modify_qp request");
	CHECK(fake.in_bytes[IB_USER_VERBS_CMD_MODIFY_QP] ==
		      sizeof(struct ibvp_cmd_modify_qp),
	      "modify_qp request size");
}

/* An SRQ and a QP that uses it. */
static void dp_srq(void)
{
	struct ibv_pd *pd = dp.pd;
	struct ibv_cq *cq = dp.cq;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 2 } };
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq,
				       .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4,
						.max_send_sge = 1 } };
	struct ibv_srq *srq;
	struct ibv_qp *qp2;

	srq = ibv_create_srq(pd, &sa);
	REQUIRE(srq, "create_srq: %s", strerror(errno));
	CHECK(srq->handle == 0x50, "srq handle");
	CHECK(ibv_post_srq_recv(srq, &rwr, &rbad) == 0 &&
		      (fake.srq[0].flags & SIWX_WQE_VALID),
	      "post_srq_recv");
	ia.srq = srq;
	qp2 = ibv_create_qp(pd, &ia);
	REQUIRE(qp2, "legacy create_qp with SRQ: %s", strerror(errno));
	CHECK(!ibv_qp_to_qp_ex(qp2), "no qp_ex without send_ops_flags");
	CHECK(ibv_post_recv(qp2, &rwr, &rbad) == EINVAL,
	      "post_recv on an SRQ QP");
	dp.srq = srq;
	dp.qp2 = qp2;
}

/* What siwx lacks: libibverbs' defaults answer EOPNOTSUPP. */
static void dp_unsupported(void)
{
	struct ibv_context *ctx = dp.ctx;
	struct ibv_pd *pd = dp.pd;
	struct ibv_qp *qp = dp.qp;
	struct ibv_ah_attr ah = {};
	union ibv_gid gid = {};
	struct ibv_xrcd_init_attr xa = {};

	errno = 0;
	CHECK(!ibv_create_ah(pd, &ah) && errno == EOPNOTSUPP, "AH");
	CHECK(ibv_attach_mcast(qp, &gid, 0) == EOPNOTSUPP, "multicast");
	errno = 0;
	CHECK(!ibv_open_xrcd(ctx, &xa) && errno == EOPNOTSUPP, "XRC");
}

/*
 * The only SQE the kernel would find in @sq, or NULL if none or several;
 * the rest of @sq is released. fake.sq is the last QP's SQ, not dp.qp's.
 */
static struct siwx_sqe *kernel_take_only_sqe(struct siwx_sqe *sq)
{
	struct siwx_sqe *found = NULL;
	unsigned int i, n = 0;

	for (i = 0; i < FAKE_NUM_SQE; i++)
		if (sq[i].flags & SIWX_WQE_VALID) {
			found = &sq[i];
			n++;
		}
	return n == 1 ? found : NULL;
}

static void kernel_release(struct siwx_sqe *sq)
{
	int i;

	for (i = 0; i < FAKE_NUM_SQE; i++)
		__atomic_store_n(&sq[i].flags, 0, __ATOMIC_RELEASE);
}

/* Windows: alloc, type 1 and type 2 binds as SQEs (abi.h), dealloc. */
static void dp_memory_windows(void)
{
	const int rw = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_qp_ex *qpx = dp.qpx;
	struct ibv_qp *qp = dp.qp;
	struct ibv_mr *mr = dp.mr;
	struct ibv_mw_bind bind = {
		.wr_id = 0xb1,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { mr, (uintptr_t)buf + 64, 128, rw },
	};
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW }, *bad;
	struct ibv_mw *mw1, *mw2;
	struct siwx_sqe *sq = (struct siwx_sqe *)to_sqp(qp)->sq.base;
	struct siwx_sqe *sqe;

	kernel_release(sq);
	mw1 = ibv_alloc_mw(dp.pd, IBV_MW_TYPE_1);
	REQUIRE(mw1, "alloc_mw type 1: %s", strerror(errno));
	CHECK(mw1->handle == 0x51 && mw1->rkey == 0x3301 &&
		      mw1->type == IBV_MW_TYPE_1 &&
		      fake.last_alloc_mw.pd_handle == 0x10 &&
		      fake.last_alloc_mw.mw_type == IBV_MW_TYPE_1,
	      "alloc_mw type 1");
	CHECK(ibv_bind_mw(qp, mw1, &bind) == 0, "bind_mw");
	CHECK(mw1->rkey == 0x3302, "a type 1 bind takes the next key");
	sqe = kernel_take_only_sqe(sq);
	CHECK(sqe && sqe->id == 0xb1 && sqe->opcode == IB_UVERBS_WR_BIND_MW &&
		      sqe->rkey == 0x3302 &&
		      sqe->raddr == (uintptr_t)buf + 64 &&
		      sqe->bind.length == 128 && sqe->bind.mr_lkey == 0x1111 &&
		      sqe->bind.access == rw && sqe->num_sge == 0 &&
		      (sqe->flags & SIWX_WQE_SIGNALLED),
	      "type 1 bind SQE");
	kernel_release(sq);
	memset(&bind.bind_info, 0, sizeof(bind.bind_info));
	CHECK(ibv_bind_mw(qp, mw1, &bind) == 0 && mw1->rkey == 0x3302,
	      "unbind keeps the key");
	sqe = kernel_take_only_sqe(sq);
	CHECK(sqe && sqe->bind.length == 0 && sqe->bind.mr_lkey == 0,
	      "unbind SQE");
	kernel_release(sq);

	mw2 = ibv_alloc_mw(dp.pd, IBV_MW_TYPE_2);
	REQUIRE(mw2, "alloc_mw type 2: %s", strerror(errno));
	CHECK(mw2->rkey == 0x3401 && mw2->type == IBV_MW_TYPE_2,
	      "alloc_mw type 2");
	bind.bind_info = (struct ibv_mw_bind_info){ mr, (uintptr_t)buf, 8,
						    IBV_ACCESS_REMOTE_ATOMIC };
	ibv_wr_start(qpx);
	qpx->wr_id = 0xb2;
	qpx->wr_flags = 0;
	ibv_wr_bind_mw(qpx, mw2, ibv_inc_rkey(mw2->rkey), &bind.bind_info);
	CHECK(ibv_wr_complete(qpx) == 0, "wr_bind_mw");
	sqe = kernel_take_only_sqe(sq);
	CHECK(sqe && sqe->id == 0xb2 && sqe->opcode == IB_UVERBS_WR_BIND_MW &&
		      sqe->rkey == 0x3402 && sqe->raddr == (uintptr_t)buf &&
		      sqe->bind.length == 8 &&
		      sqe->bind.access == IBV_ACCESS_REMOTE_ATOMIC &&
		      !(sqe->flags & SIWX_WQE_SIGNALLED),
	      "type 2 bind SQE");
	kernel_release(sq);

	/* refused before the kernel: another window's STag, no MR */
	ibv_wr_start(qpx);
	ibv_wr_bind_mw(qpx, mw2, mw1->rkey, &bind.bind_info);
	CHECK(ibv_wr_complete(qpx) == EINVAL, "STag of another window");
	wr.bind_mw.mw = mw2;
	wr.bind_mw.rkey = mw2->rkey;
	wr.bind_mw.bind_info.length = 8;
	bad = NULL;
	CHECK(ibv_post_send(qp, &wr, &bad) == EINVAL && bad == &wr,
	      "bind without an MR");
	CHECK(!kernel_take_only_sqe(sq), "refused binds post nothing");

	CHECK(ibv_dealloc_mw(mw1) == 0 && ibv_dealloc_mw(mw2) == 0 &&
		      fake.ncmd[IB_USER_VERBS_CMD_DEALLOC_MW] == 2,
	      "dealloc_mw");
}

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void fake_cqe(unsigned int i, uint64_t id, uint8_t opcode,
		     uint16_t flags, uint64_t ts_ns)
{
	fake.cq[i].id = id;
	fake.cq[i].opcode = opcode;
	fake.cq[i].bytes = 64;
	fake.cq[i].qp_num = 0x41;
	fake.cq[i].ts_ns = ts_ns;
	__atomic_store_n(&fake.cq[i].flags, SIWX_CQE_VALID | flags,
			 __ATOMIC_RELEASE);
}

/* The extended CQ: what it refuses, then start/next/end_poll on the ring. */
static void dp_cq_ex(void)
{
	struct ibv_context *ctx = dp.ctx;
	struct ibv_cq_init_attr_ex a = { .cqe = 4 };
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_poll_cq_attr pa = {};
	uint64_t mono0;
	struct ibv_cq_ex *cqx;
	uint8_t imm8[8];
	struct ibv_wc wc;
	int marker;

	a.wc_flags = IBV_WC_EX_WITH_CVLAN;
	errno = 0;
	CHECK(!ibv_create_cq_ex(ctx, &a) && errno == EOPNOTSUPP,
	      "CQ ex: CVLAN refused");
	a.wc_flags = IBV_WC_STANDARD_FLAGS;
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	a.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	errno = 0;
	CHECK(!ibv_create_cq_ex(ctx, &a) && errno == EOPNOTSUPP,
	      "CQ ex: IGNORE_OVERRUN refused");
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	errno = 0;
	CHECK(!ibv_create_cq_ex(ctx, &a) && errno == EOPNOTSUPP,
	      "CQ ex: parent domain refused");

	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	a.flags = 0;
	a.wc_flags = IBV_WC_STANDARD_FLAGS |
		     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
		     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	a.cq_context = &marker;
	cqx = ibv_create_cq_ex(ctx, &a);
	REQUIRE(cqx, "create_cq_ex: %s", strerror(errno));
	CHECK(cqx->context == ctx && cqx->cq_context == &marker &&
		      cqx->handle == 0x30 && cqx->cqe == FAKE_NUM_CQE,
	      "create_cq_ex: the CQ as libibverbs made it");
	CHECK(ibv_start_poll(cqx, &pa) == ENOENT, "cq_ex: empty");

	fake_cqe(0, 0xd0, SIWX_WC_RECV_RDMA_WITH_IMM, SIWX_CQE_WITH_IMM, 1000);
	memcpy(fake.cq[0].imm, want_imm, 8);
	fake.cq[1].inval_stag = 0x1234;
	fake_cqe(1, 0xd1, SIWX_WC_RECV, SIWX_CQE_WITH_INV, 2000);

	fake.cq_ctrl->wall_offset_ns = 1000000000;
	CHECK(ibv_start_poll(cqx, &pa) == 0 && cqx->wr_id == 0xd0 &&
		      cqx->status == IBV_WC_SUCCESS &&
		      ibv_wc_read_opcode(cqx) == IBV_WC_RECV_RDMA_WITH_IMM &&
		      ibv_wc_read_byte_len(cqx) == 64 &&
		      ibv_wc_read_wc_flags(cqx) == IBV_WC_WITH_IMM &&
		      ntohl(ibv_wc_read_imm_data(cqx)) == 0x09080706 &&
		      ibv_wc_read_qp_num(cqx) == 0x41 &&
		      ibv_wc_read_src_qp(cqx) == 0 &&
		      ibv_wc_read_slid(cqx) == 0 && ibv_wc_read_sl(cqx) == 0 &&
		      ibv_wc_read_dlid_path_bits(cqx) == 0 &&
		      ibv_wc_read_completion_ts(cqx) == 1000,
	      "start_poll: the first CQE, every field");
	CHECK(ibv_wc_read_completion_wallclock_ns(cqx) == 1000001000,
	      "wall clock: the stamp plus the kernel's offset of the clocks");
	siwxdv_wc_read_imm8(cqx, imm8);
	CHECK(!memcmp(imm8, want_imm, 8), "siwxdv_wc_read_imm8");
	CHECK(fake.cq[0].flags & SIWX_CQE_VALID,
	      "the current CQE stays the provider's");
	CHECK(ibv_next_poll(cqx) == 0 && fake.cq[0].flags == 0 &&
		      cqx->wr_id == 0xd1 &&
		      ibv_wc_read_opcode(cqx) == IBV_WC_RECV &&
		      ibv_wc_read_wc_flags(cqx) == IBV_WC_WITH_INV &&
		      ibv_wc_read_invalidated_rkey(cqx) == 0x1234 &&
		      ibv_wc_read_completion_ts(cqx) == 2000,
	      "next_poll: the second CQE; the first handed back");
	siwxdv_wc_read_imm8(cqx, imm8);
	CHECK(!memcmp(imm8, (uint8_t[8]){ 0 }, 8),
	      "siwxdv_wc_read_imm8 without immediate data");
	CHECK(ibv_next_poll(cqx) == ENOENT && fake.cq[1].flags == 0,
	      "next_poll: none left");
	ibv_end_poll(cqx);

	fake_cqe(2, 0xd2, SIWX_WC_SEND, 0, 3000);
	CHECK(ibv_start_poll(cqx, &pa) == 0 && cqx->wr_id == 0xd2, "again");
	ibv_end_poll(cqx);
	CHECK(fake.cq[2].flags == 0, "end_poll hands the CQE back");
	fake_cqe(3, 0xd3, SIWX_WC_SEND, 0, 4000);
	CHECK(ibv_poll_cq(ibv_cq_ex_to_cq(cqx), 1, &wc) == 1 &&
		      wc.wr_id == 0xd3,
	      "ibv_poll_cq on an extended CQ");

	mono0 = clock_ns(CLOCK_MONOTONIC);
	CHECK(ibv_query_rt_values_ex(ctx, &v) == 0 &&
		      v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK &&
		      v.raw_clock.tv_sec == 0 &&
		      (uint64_t)v.raw_clock.tv_nsec >= mono0 &&
		      (uint64_t)v.raw_clock.tv_nsec <= clock_ns(CLOCK_MONOTONIC),
	      "query_rt_values_ex: CLOCK_MONOTONIC in ns");
	CHECK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) == 0, "destroy cq_ex");
}

/*
 * Resize: the provider maps the kernel's new ring where the old one was
 * and goes on at its start (where the kernel moved the CQEs not yet
 * polled).
 */
static void dp_resize_cq(void)
{
	struct ibv_cq *cq = dp.cq;
	struct ibv_wc wc;

	CHECK(ibv_resize_cq(cq, 20) == 0 && fake.last_resize_cqe == 20 &&
		      cq->cqe == FAKE_RESIZED_CQE,
	      "resize_cq: the kernel's new size");
	CHECK(fake.cq == dp.cq_ring && fake.cq[0].flags == 0 &&
		      fake.cq[0].id == 0,
	      "the new ring where the old one was");
	fake_cqe(0, 0xe0, SIWX_WC_SEND, 0, 5000);
	fake_cqe(FAKE_NUM_CQE, 0xe1, SIWX_WC_SEND, 0, 6000);
	CHECK(ibv_poll_cq(cq, 1, &wc) == 1 && wc.wr_id == 0xe0 &&
		      fake.cq[0].flags == 0,
	      "poll the new ring from its start");
	CHECK(ibv_poll_cq(cq, 1, &wc) == 0, "the next slot is empty");
	__atomic_store_n(&fake.cq[FAKE_NUM_CQE].flags, 0, __ATOMIC_RELEASE);
	CHECK(ibv_req_notify_cq(cq, 0) == 0 &&
		      fake.cq_ctrl->notify == SIWX_NOTIFY_NEXT,
	      "arm: the new ring's control block");
}

/* Destroy everything, then what the fake kernel saw over the whole step. */
static void dp_teardown(void)
{
	struct ibv_pd *pd = dp.pd;
	struct ibv_mr *mr = dp.mr;
	struct ibv_cq *cq = dp.cq;
	struct ibv_qp *qp = dp.qp, *qp2 = dp.qp2;
	struct ibv_srq *srq = dp.srq;
	int i, rv;

	CHECK(ibv_destroy_qp(qp2) == 0, "destroy qp2");
	CHECK(ibv_destroy_srq(srq) == 0, "destroy srq");
	CHECK(ibv_destroy_qp(qp) == 0, "destroy qp");
	CHECK(ibv_destroy_cq(cq) == 0, "destroy cq");
	CHECK(ibv_dereg_mr(mr) == 0, "dereg mr");
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc pd");
	for (i = 0; i < fake.nq; i++)
		CHECK(fake.q[i].mapped, "queue %d mapped with abi.h's length",
		      i);
	rv = (int)fake.bad;
	CHECK(rv == 0, "the fake kernel saw %d malformed commands/mappings",
	      rv);
}

void check_data_path(struct ibv_context *ctx)
{
	dp.ctx = ctx;
	dp_query();
	dp_create_pd_mr_cq();
	dp_create_qp();
	dp_post_send();
	dp_post_batch();
	dp_poll_and_arm();
	dp_post_recv();
	dp_modify_qp();
	dp_srq();
	dp_unsupported();
	dp_memory_windows();
	dp_cq_ex();
	dp_resize_cq();
	dp_teardown();
}
