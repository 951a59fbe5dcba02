// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Step 3 of siwx_pabi_layout_test (see pabi_layout_test.c): every slot of
 * the ops table given to verbs_set_ops() lands where libibverbs' private
 * ABI <N> says, checked either as a public copy or by reaching a private
 * op through its public entry point.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "pabi_check.h"
#include "siwx.h"

/* ---- 3. every slot of the ops table ----------------------------------- */

enum {
	IC_CREATE_CQ_EX, IC_FREE_CONTEXT, IC_IMPORT_DM, IC_IMPORT_MR,
	IC_IMPORT_PD, IC_QUERY_ECE, IC_QUERY_PORT, IC_QUERY_QP_DATA_IN_ORDER,
	IC_REG_DMABUF_MR, IC_SET_ECE, IC_UNIMPORT_DM, IC_UNIMPORT_MR,
	IC_UNIMPORT_PD,
#if IBVP_PABI_VERSION >= 64
	IC_QUERY_PORT_SPEED,
#endif
#if IBVP_PABI_VERSION >= 65
	IC_CREATE_COMP_CNTR, IC_DESTROY_COMP_CNTR, IC_INC_COMP_CNTR,
	IC_INC_ERR_COMP_CNTR, IC_QP_ATTACH_COMP_CNTR, IC_QUERY_COMP_CNTR_CAPS,
	IC_READ_COMP_CNTR, IC_READ_ERR_COMP_CNTR, IC_SET_COMP_CNTR,
	IC_SET_ERR_COMP_CNTR,
#endif
	IC_NUM
};

/*
 * Each stub records that it ran and which one it was: a public entry point
 * must land in the stub of its own name, not merely in some stub (two
 * private slots swapped would otherwise still count one call each).
 */
static int ic_called[IC_NUM];
static int ic_last;

static void ic_hit(int ic)
{
	ic_called[ic]++;
	ic_last = ic;
}

static struct ibv_cq_ex *stub_create_cq_ex(struct ibv_context *c,
					   struct ibv_cq_init_attr_ex *a)
{
	ic_hit(IC_CREATE_CQ_EX);
	errno = ENOSYS;
	return NULL;
}

static void stub_free_context(struct ibv_context *c)
{
	ic_hit(IC_FREE_CONTEXT);
	verbs_uninit_context(&to_sctx(c)->vctx);
	free(to_sctx(c));
}

static struct ibv_dm *stub_import_dm(struct ibv_context *c, uint32_t h)
{
	ic_hit(IC_IMPORT_DM);
	return NULL;
}

static struct ibv_mr *stub_import_mr(struct ibv_pd *pd, uint32_t h)
{
	ic_hit(IC_IMPORT_MR);
	return NULL;
}

static struct ibv_pd *stub_import_pd(struct ibv_context *c, uint32_t h)
{
	ic_hit(IC_IMPORT_PD);
	return NULL;
}

static int stub_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	ic_hit(IC_QUERY_ECE);
	return ENOSYS;
}

static int stub_query_port(struct ibv_context *c, uint8_t port,
			   struct ibv_port_attr *attr)
{
	ic_hit(IC_QUERY_PORT);
	return ENOSYS;
}

static int stub_query_qp_data_in_order(struct ibv_qp *qp,
				       enum ibv_wr_opcode op, uint32_t flags)
{
	ic_hit(IC_QUERY_QP_DATA_IN_ORDER);
	return 0;
}

static struct ibv_mr *stub_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t off,
					 size_t len, uint64_t iova, int fd,
					 int access)
{
	ic_hit(IC_REG_DMABUF_MR);
	return NULL;
}

static int stub_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	ic_hit(IC_SET_ECE);
	return ENOSYS;
}

static void stub_unimport_dm(struct ibv_dm *dm)
{
	ic_hit(IC_UNIMPORT_DM);
}

static void stub_unimport_mr(struct ibv_mr *mr)
{
	ic_hit(IC_UNIMPORT_MR);
}

static void stub_unimport_pd(struct ibv_pd *pd)
{
	ic_hit(IC_UNIMPORT_PD);
}

#if IBVP_PABI_VERSION >= 64
static int stub_query_port_speed(struct ibv_context *c, uint32_t port,
				 uint64_t *speed)
{
	ic_hit(IC_QUERY_PORT_SPEED);
	return ENOSYS;
}
#endif

#if IBVP_PABI_VERSION >= 65
static struct ibv_comp_cntr *stub_create_comp_cntr(
	struct ibv_context *c, struct ibv_comp_cntr_init_attr *a)
{
	ic_hit(IC_CREATE_COMP_CNTR);
	return NULL;
}

static int stub_qp_attach_comp_cntr(struct ibv_qp *qp,
				    struct ibv_comp_cntr *cc,
				    struct ibv_qp_attach_comp_cntr_attr *a)
{
	ic_hit(IC_QP_ATTACH_COMP_CNTR);
	return ENOSYS;
}

static int stub_query_comp_cntr_caps(struct ibv_context *c,
				     struct ibv_comp_cntr_caps *caps,
				     size_t size)
{
	ic_hit(IC_QUERY_COMP_CNTR_CAPS);
	return ENOSYS;
}

/* The counter ops that take (counter) or (counter, 64-bit value). */
static int stub_destroy_comp_cntr(struct ibv_comp_cntr *cc)
{
	ic_hit(IC_DESTROY_COMP_CNTR);
	return ENOSYS;
}

#define STUB_CNTR_OP(name, idx, type)                                          \
	static int stub_##name(struct ibv_comp_cntr *cc, type v)               \
	{                                                                      \
		ic_hit(idx);                                                   \
		return ENOSYS;                                                 \
	}
STUB_CNTR_OP(inc_comp_cntr, IC_INC_COMP_CNTR, uint64_t)
STUB_CNTR_OP(inc_err_comp_cntr, IC_INC_ERR_COMP_CNTR, uint64_t)
STUB_CNTR_OP(set_comp_cntr, IC_SET_COMP_CNTR, uint64_t)
STUB_CNTR_OP(set_err_comp_cntr, IC_SET_ERR_COMP_CNTR, uint64_t)
STUB_CNTR_OP(read_comp_cntr, IC_READ_COMP_CNTR, uint64_t *)
STUB_CNTR_OP(read_err_comp_cntr, IC_READ_ERR_COMP_CNTR, uint64_t *)
#endif

#define NUM_OPS (sizeof(struct ibvp_context_ops) / sizeof(void *))

/*
 * The table given to verbs_set_ops(): a distinct marker in every slot
 * (the public copies must be the marker of their own name), a stub in
 * each slot libibverbs keeps privately.
 */
static char marker[NUM_OPS];
static struct ibvp_context_ops m;

static void fill_ops_table(void)
{
	void **slot = (void **)&m;
	size_t i;

	for (i = 0; i < NUM_OPS; i++)
		slot[i] = &marker[i];
	m.create_cq_ex = stub_create_cq_ex;
	m.free_context = stub_free_context;
	m.import_dm = stub_import_dm;
	m.import_mr = stub_import_mr;
	m.import_pd = stub_import_pd;
	m.query_ece = stub_query_ece;
	m.query_port = stub_query_port;
	m.query_qp_data_in_order = stub_query_qp_data_in_order;
	m.reg_dmabuf_mr = stub_reg_dmabuf_mr;
	m.set_ece = stub_set_ece;
	m.unimport_dm = stub_unimport_dm;
	m.unimport_mr = stub_unimport_mr;
	m.unimport_pd = stub_unimport_pd;
#if IBVP_PABI_VERSION >= 64
	m.query_port_speed = stub_query_port_speed;
#endif
#if IBVP_PABI_VERSION >= 65
	m.create_comp_cntr = stub_create_comp_cntr;
	m.destroy_comp_cntr = stub_destroy_comp_cntr;
	m.inc_comp_cntr = stub_inc_comp_cntr;
	m.inc_err_comp_cntr = stub_inc_err_comp_cntr;
	m.qp_attach_comp_cntr = stub_qp_attach_comp_cntr;
	m.query_comp_cntr_caps = stub_query_comp_cntr_caps;
	m.read_comp_cntr = stub_read_comp_cntr;
	m.read_err_comp_cntr = stub_read_err_comp_cntr;
	m.set_comp_cntr = stub_set_comp_cntr;
	m.set_err_comp_cntr = stub_set_err_comp_cntr;
#endif
}

#define SAME(pub, op)                                                          \
	do {                                                                   \
		nsame++;                                                       \
		CHECK((void *)(pub) == (void *)m.op, "slot " #op);             \
	} while (0)

/* Returns how many slots it checked. */
static size_t check_context_ops_copies(struct ibv_context *ctx)
{
	size_t nsame = 0;

	/* copied into the public ibv_context_ops */
	SAME(ctx->ops.alloc_mw, alloc_mw);
	SAME(ctx->ops.bind_mw, bind_mw);
	SAME(ctx->ops.dealloc_mw, dealloc_mw);
	SAME(ctx->ops.poll_cq, poll_cq);
	SAME(ctx->ops.post_recv, post_recv);
	SAME(ctx->ops.post_send, post_send);
	SAME(ctx->ops.post_srq_recv, post_srq_recv);
	SAME(ctx->ops.req_notify_cq, req_notify_cq);
	SAME(ctx->ops._compat_alloc_pd, alloc_pd);
	SAME(ctx->ops._compat_async_event, async_event);
	SAME(ctx->ops._compat_attach_mcast, attach_mcast);
	SAME(ctx->ops._compat_cq_event, cq_event);
	SAME(ctx->ops._compat_create_ah, create_ah);
	SAME(ctx->ops._compat_create_cq, create_cq);
	SAME(ctx->ops._compat_create_qp, create_qp);
	SAME(ctx->ops._compat_create_srq, create_srq);
	SAME(ctx->ops._compat_dealloc_pd, dealloc_pd);
	SAME(ctx->ops._compat_dereg_mr, dereg_mr);
	SAME(ctx->ops._compat_destroy_ah, destroy_ah);
	SAME(ctx->ops._compat_destroy_cq, destroy_cq);
	SAME(ctx->ops._compat_destroy_qp, destroy_qp);
	SAME(ctx->ops._compat_destroy_srq, destroy_srq);
	SAME(ctx->ops._compat_detach_mcast, detach_mcast);
	SAME(ctx->ops._compat_modify_qp, modify_qp);
	SAME(ctx->ops._compat_modify_srq, modify_srq);
	SAME(ctx->ops._compat_query_qp, query_qp);
	SAME(ctx->ops._compat_query_srq, query_srq);
	SAME(ctx->ops._compat_reg_mr, reg_mr);
	SAME(ctx->ops._compat_rereg_mr, rereg_mr);
	SAME(ctx->ops._compat_resize_cq, resize_cq);
	return nsame;
}

static size_t check_verbs_context_copies(struct verbs_context *v)
{
	size_t nsame = 0;

	/* copied into the public verbs_context */
	SAME(v->advise_mr, advise_mr);
	SAME(v->alloc_dm, alloc_dm);
	SAME(v->alloc_null_mr, alloc_null_mr);
	SAME(v->alloc_parent_domain, alloc_parent_domain);
	SAME(v->alloc_td, alloc_td);
	SAME(v->attach_counters_point_flow, attach_counters_point_flow);
	SAME(v->close_xrcd, close_xrcd);
	SAME(v->create_counters, create_counters);
	SAME(v->ibv_create_flow, create_flow);
	SAME(v->create_flow_action_esp, create_flow_action_esp);
	SAME(v->create_qp_ex, create_qp_ex);
	SAME(v->create_rwq_ind_table, create_rwq_ind_table);
	SAME(v->create_srq_ex, create_srq_ex);
	SAME(v->create_wq, create_wq);
	SAME(v->dealloc_td, dealloc_td);
	SAME(v->destroy_counters, destroy_counters);
	SAME(v->ibv_destroy_flow, destroy_flow);
	SAME(v->destroy_flow_action, destroy_flow_action);
	SAME(v->destroy_rwq_ind_table, destroy_rwq_ind_table);
	SAME(v->destroy_wq, destroy_wq);
	SAME(v->free_dm, free_dm);
	SAME(v->get_srq_num, get_srq_num);
	SAME(v->modify_cq, modify_cq);
	SAME(v->modify_flow_action_esp, modify_flow_action_esp);
	SAME(v->modify_qp_rate_limit, modify_qp_rate_limit);
	SAME(v->modify_wq, modify_wq);
	SAME(v->open_qp, open_qp);
	SAME(v->open_xrcd, open_xrcd);
	SAME(v->post_srq_ops, post_srq_ops);
	SAME(v->query_device_ex, query_device_ex);
	SAME(v->query_rt_values, query_rt_values);
	SAME(v->read_counters, read_counters);
	SAME(v->reg_dm_mr, reg_dm_mr);
#if IBVP_PABI_VERSION >= 59
	SAME(v->alloc_dmah, alloc_dmah);
	SAME(v->dealloc_dmah, dealloc_dmah);
	SAME(v->reg_mr_ex, reg_mr_ex);
#endif
#if IBVP_PABI_VERSION >= 64
	SAME(v->alloc_buf, alloc_buf);
	SAME(v->dm_export_dmabuf_fd, dm_export_dmabuf_fd);
	SAME(v->free_buf, free_buf);
#endif
	return nsame;
}

#undef SAME

#define REACH(ic, call)                                                        \
	do {                                                                   \
		ic_last = -1;                                                  \
		call;                                                          \
		CHECK(ic_last == (ic), "%s landed in private op %d",           \
		      #call, ic_last);                                         \
	} while (0)

/* Kept privately: reach each through its public entry point. */
static void reach_private_ops(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex cq_attr = { .cqe = 1 };
	struct ibv_port_attr port_attr;
	struct ibv_ece ece = { .vendor_id = 1 };
	struct ibv_pd pd = {};
	struct ibv_qp qp = {};
	struct ibv_mr mr = {};
	struct ibv_dm dm = {};

	pd.context = ctx;
	qp.context = ctx;
	mr.context = ctx;
	dm.context = ctx;
	REACH(IC_CREATE_CQ_EX, ibv_create_cq_ex(ctx, &cq_attr));
	REACH(IC_QUERY_PORT,
	      CHECK(ibv_query_port(ctx, 1, &port_attr) == ENOSYS, "port"));
	REACH(IC_IMPORT_DM, ibv_import_dm(ctx, 1));
	REACH(IC_IMPORT_MR, ibv_import_mr(&pd, 1));
	REACH(IC_IMPORT_PD, ibv_import_pd(ctx, 1));
	REACH(IC_QUERY_ECE, ibv_query_ece(&qp, &ece));
	REACH(IC_SET_ECE, ibv_set_ece(&qp, &ece));
	REACH(IC_QUERY_QP_DATA_IN_ORDER,
	      ibv_query_qp_data_in_order(&qp, IBV_WR_SEND, 0));
	REACH(IC_REG_DMABUF_MR, ibv_reg_dmabuf_mr(&pd, 0, 4096, 0, 0, 0));
	REACH(IC_UNIMPORT_DM, ibv_unimport_dm(&dm));
	REACH(IC_UNIMPORT_MR, ibv_unimport_mr(&mr));
	REACH(IC_UNIMPORT_PD, ibv_unimport_pd(&pd));
#if IBVP_PABI_VERSION >= 64
	uint64_t speed;

	REACH(IC_QUERY_PORT_SPEED, ibv_query_port_speed(ctx, 1, &speed));
#endif
#if IBVP_PABI_VERSION >= 65
	struct ibv_comp_cntr cc = { .context = ctx };
	struct ibv_comp_cntr_init_attr cc_attr = {};
	struct ibv_comp_cntr_caps cc_caps;
	struct ibv_qp_attach_comp_cntr_attr cc_qp = {};
	uint64_t val;

	REACH(IC_CREATE_COMP_CNTR, ibv_create_comp_cntr(ctx, &cc_attr));
	REACH(IC_DESTROY_COMP_CNTR, ibv_destroy_comp_cntr(&cc));
	REACH(IC_INC_COMP_CNTR, ibv_inc_comp_cntr(&cc, 1));
	REACH(IC_INC_ERR_COMP_CNTR, ibv_inc_err_comp_cntr(&cc, 1));
	REACH(IC_QP_ATTACH_COMP_CNTR,
	      ibv_qp_attach_comp_cntr(&qp, &cc, &cc_qp));
	REACH(IC_QUERY_COMP_CNTR_CAPS,
	      ibv_query_comp_cntr_caps(ctx, &cc_caps));
	REACH(IC_READ_COMP_CNTR, ibv_read_comp_cntr(&cc, &val));
	REACH(IC_READ_ERR_COMP_CNTR, ibv_read_err_comp_cntr(&cc, &val));
	REACH(IC_SET_COMP_CNTR, ibv_set_comp_cntr(&cc, 1));
	REACH(IC_SET_ERR_COMP_CNTR, ibv_set_err_comp_cntr(&cc, 1));
#endif
}

/*
 * The last private op, free_context, is reached by closing the context;
 * then each private op must have been reached exactly once.
 */
static void check_close_and_counts(struct ibv_device *dev,
				   struct ibv_context *ctx)
{
	size_t i;
	int n;

	n = atomic_load(&to_ibvp_dev(dev)->refcount);
	REACH(IC_FREE_CONTEXT, ibv_close_device(ctx));
	CHECK(atomic_load(&to_ibvp_dev(dev)->refcount) == n - 1,
	      "free_context must have run verbs_uninit_context");
	for (i = 0; i < IC_NUM; i++)
		CHECK(ic_called[i] == 1, "private op %zu reached %d times", i,
		      ic_called[i]);
}

#undef REACH

/* A second context, whose ops table is then closed with it. */
void check_ops_table(struct ibv_device *dev)
{
	struct ibv_context *ctx;
	struct verbs_context *v;
	size_t nsame;

	fill_ops_table();
	ctx = open_fake(dev);
	REQUIRE(ctx, "second context");
	v = verbs_get_ctx(ctx);
	verbs_set_ops(v, &m);

	nsame = check_context_ops_copies(ctx);
	nsame += check_verbs_context_copies(v);
	/* every slot is either copied (checked above) or private (below) */
	CHECK(nsame + IC_NUM == NUM_OPS,
	      "%zu slots declared, %zu checked public + %d private", NUM_OPS,
	      nsame, IC_NUM);
	reach_private_ops(ctx);
	check_close_and_counts(dev, ctx);
}
