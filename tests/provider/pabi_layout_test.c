// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Does libsiwx's own declaration of libibverbs' private ABI <N>
 * (providers/siwx/verbs_private<N>.h and verbs_private_base.h) agree with
 * the libibverbs it is built and run against? One source for every ABI:
 * CMake builds it against the host's libibverbs, and pabi-subbuild against
 * rdma-core releases and Debian roots of the other ABIs.
 *
 * The static_asserts in those headers pin the layout to numbers measured
 * on rdma-core's headers; this test asks the real library instead. The
 * provider is linked in statically, registers itself through its
 * constructor (verbs_register_driver_<N>), and then:
 *
 *  1. Discovery. libibverbs scans a fake sysfs tree (SYSFS_PATH; RDMA
 *     netlink is made unavailable) holding siwx9 (ours), siwx8 (ours by
 *     name, wrong ABI) and other7. libibverbs must read our match table
 *     and ABI bounds (ibvp_device_ops, ibvp_match_ent), call alloc_device
 *     and fill the ibvp_device/ibvp_sysfs_dev we declared: we check each
 *     field it wrote where we expect it (ops, refcount, sysfs, match,
 *     abi_ver, ibdev_name, sysfs_name, sysfs_cdev, node_type).
 *  2. Context. verbs_open_device() (private) calls our alloc_context,
 *     whose ibv_cmd_get_context response must carry siwx udata at the
 *     offset the fake kernel writes it.
 *  3. Ops table. verbs_set_ops() is given a table whose slots (76 in
 *     ABI 34 and 57, 79 in 59, 83 in 64, 93 in 65) hold distinct markers;
 *     for the ops libibverbs copies into public structures
 *     (ibv_context_ops, verbs_context) we check every copy is the marker
 *     of the same name, and the ops it keeps privately are stubs that we
 *     reach through the public entry points (ibv_query_port,
 *     ibv_create_cq_ex, ibv_import_pd, ibv_query_port_speed,
 *     ibv_create_comp_cntr, ...). Every slot is checked one way or the
 *     other (counted), so a slot declared out of order or missing fails.
 *  4. Data path against the fake kernel (fake_uverbs.c): PD, MR, CQ,
 *     QP(ex), SRQ through public verbs, the public inline post/poll
 *     functions (qp->context->ops.post_send etc.), ibv_qp_to_qp_ex (reads
 *     our ibvp_qp.comp_mask at libibverbs' offset), the command buffers
 *     (sizes and core fields seen by the "kernel"), the rings and the
 *     doorbell, and the EOPNOTSUPP defaults for what siwx lacks.
 *
 * What it does not prove: layouts of members libibverbs never touches in
 * these paths (e.g. ibvp_device.core_support, ibvp_srq beyond ibv_srq,
 * ibvp_xrcd), and the real kernel's side of abi.h; those need siwx.ko in
 * the VM tests.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "fake_uverbs.h"
#include "siwx.h"
#include "siwxdv.h"

static int failures;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			failures++;                                            \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,          \
				__LINE__, #cond);                              \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
		}                                                              \
	} while (0)

#define REQUIRE(cond, ...)                                                     \
	do {                                                                   \
		CHECK(cond, __VA_ARGS__);                                      \
		if (!(cond)) {                                                 \
			fprintf(stderr, "cannot continue\n");                  \
			exit(1);                                               \
		}                                                              \
	} while (0)

static struct ibvp_device *to_ibvp_dev(struct ibv_device *dev)
{
	return siwx_container_of(dev, struct ibvp_device, device);
}

/* ---- 1. discovery ------------------------------------------------------ */

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	return remove(path);
}

static struct ibv_device *discover(struct ibv_device ***list_out)
{
	struct ibv_device **list, *found = NULL;
	struct ibvp_device *vdev;
	int i, n = 0;

	setenv("SYSFS_PATH", fake_sysfs_create(), 1);
	list = ibv_get_device_list(&n);
	REQUIRE(list, "ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]);

		CHECK(strcmp(name, "siwx8"), "siwx8 has ABI 2 and must be refused");
		if (!strcmp(name, "siwx9"))
			found = list[i];
	}
	REQUIRE(found, "libibverbs did not give siwx9 to libsiwx (%d devices)",
		n);

	vdev = to_ibvp_dev(found);
	CHECK(vdev->ops == &siwx_dev_ops, "ibvp_device.ops");
	CHECK(atomic_load(&vdev->refcount) == 2,
	      "ibvp_device.refcount: list + ibv_get_device_list hold = 2, got %d",
	      atomic_load(&vdev->refcount));
	REQUIRE(vdev->sysfs, "ibvp_device.sysfs");
	CHECK(!strcmp(vdev->sysfs->ibdev_name, "siwx9"), "sysfs.ibdev_name");
	CHECK(!strcmp(vdev->sysfs->sysfs_name, "uverbs9"), "sysfs.sysfs_name");
	CHECK(vdev->sysfs->sysfs_cdev == makedev(231, 201), "sysfs.sysfs_cdev");
	CHECK(vdev->sysfs->abi_ver == SIWX_ABI_VERSION, "sysfs.abi_ver = %u",
	      vdev->sysfs->abi_ver);
	CHECK(vdev->sysfs->node_type == IBV_NODE_RNIC, "sysfs.node_type");
	CHECK(vdev->sysfs->match == &siwx_dev_ops.match_table[0],
	      "sysfs.match must point at our name-match row");
	CHECK(found->transport_type == IBV_TRANSPORT_IWARP, "transport");
	CHECK(found->node_type == IBV_NODE_RNIC, "node_type");
	*list_out = list;
	return found;
}

static void check_name_pattern(void)
{
	const char *pat = siwx_dev_ops.match_table[0].u.modalias;

	CHECK(siwx_dev_ops.match_table[0].kind == IBVP_MATCH_MODALIAS, "kind");
	CHECK(siwx_dev_ops.match_table[1].kind == IBVP_MATCH_END, "sentinel");
	CHECK(!fnmatch(pat, "rdma_device:Nsiwx0", 0), "siwx0 matches");
	CHECK(!fnmatch(pat, "rdma_device:Nsiwx_eth1", 0), "siwx_eth1 matches");
	CHECK(fnmatch(pat, "rdma_device:Nrxe0", 0), "rxe0 must not match");
	CHECK(fnmatch(pat, "rdma_device:Nmysiwx0", 0), "prefix only");
}

/* ---- 2. context --------------------------------------------------------- */

/*
 * verbs_open_device() opens the uverbs node named in sysfs; with no sysfs
 * it passes cmd_fd -1 to alloc_context, which is our fake device.
 */
static struct ibv_context *open_fake(struct ibv_device *dev)
{
	struct ibvp_device *vdev = to_ibvp_dev(dev);
	struct ibvp_sysfs_dev *sysfs = vdev->sysfs;
	struct ibv_context *ctx;

	vdev->sysfs = NULL;
	ctx = verbs_open_device(dev, NULL);
	vdev->sysfs = sysfs;
	return ctx;
}

static void check_context(struct ibv_context *ctx, struct ibv_device *dev)
{
	struct siwx_context *sctx = to_sctx(ctx);

	CHECK(fake.ncmd[IB_USER_VERBS_CMD_GET_CONTEXT] == 1, "GET_CONTEXT");
	CHECK(fake.in_bytes[IB_USER_VERBS_CMD_GET_CONTEXT] ==
		      sizeof(struct ibvp_cmd_get_context),
	      "GET_CONTEXT request size %u",
	      fake.in_bytes[IB_USER_VERBS_CMD_GET_CONTEXT]);
	CHECK(fake.out_bytes[IB_USER_VERBS_CMD_GET_CONTEXT] ==
		      sizeof(struct ib_uverbs_get_context_resp) +
			      sizeof(struct siwx_uresp_alloc_ctx),
	      "GET_CONTEXT response must include the siwx udata");
	CHECK(sctx->dev_id == 7 && sctx->max_inline == FAKE_MAX_INLINE,
	      "siwx udata read from the wrong place");
	CHECK(ctx->device == dev, "context.device");
	CHECK(ctx->cmd_fd == FAKE_UVERBS_FD, "context.cmd_fd");
	CHECK(verbs_get_ctx(ctx) == &sctx->vctx, "verbs_get_ctx");
	CHECK(atomic_load(&to_ibvp_dev(dev)->refcount) == 3,
	      "the context holds the device");

	/* our real ops, where the public inline verbs look for them */
	CHECK(ctx->ops.poll_cq == siwx_poll_cq, "ops.poll_cq");
	CHECK(ctx->ops.post_send == siwx_post_send, "ops.post_send");
	CHECK(ctx->ops.post_recv == siwx_post_recv, "ops.post_recv");
	CHECK(ctx->ops.req_notify_cq == siwx_req_notify_cq, "ops.req_notify");
	CHECK(ctx->ops.post_srq_recv == siwx_post_srq_recv, "ops.srq_recv");
	CHECK(verbs_get_ctx(ctx)->create_qp_ex == siwx_create_qp_ex,
	      "verbs_context.create_qp_ex");
	CHECK(verbs_get_ctx(ctx)->query_device_ex == siwx_query_device_ex,
	      "verbs_context.query_device_ex");
}

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
		ic_hit(idx);                                              \
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

static void check_ops_table(struct ibv_device *dev)
{
	static char marker[NUM_OPS];
	struct ibvp_context_ops m;
	struct ibv_context *ctx;
	struct verbs_context *v;
	void **slot = (void **)&m;
	struct ibv_cq_init_attr_ex cq_attr = { .cqe = 1 };
	struct ibv_port_attr port_attr;
	struct ibv_ece ece = { .vendor_id = 1 };
	struct ibv_pd pd = {};
	struct ibv_qp qp = {};
	struct ibv_mr mr = {};
	struct ibv_dm dm = {};
	size_t i, nsame = 0;
	int n;

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

	ctx = open_fake(dev);
	REQUIRE(ctx, "second context");
	v = verbs_get_ctx(ctx);
	verbs_set_ops(v, &m);

#define SAME(pub, op)                                                          \
	do {                                                                   \
		nsame++;                                                       \
		CHECK((void *)(pub) == (void *)m.op, "slot " #op);             \
	} while (0)
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
#undef SAME
	/* every slot is either copied (checked above) or private (below) */
	CHECK(nsame + IC_NUM == NUM_OPS,
	      "%zu slots declared, %zu checked public + %d private", NUM_OPS,
	      nsame, IC_NUM);

	/* kept privately: reach each through its public entry point */
	pd.context = ctx;
	qp.context = ctx;
	mr.context = ctx;
	dm.context = ctx;
#define REACH(ic, call)                                                        \
	do {                                                                   \
		ic_last = -1;                                                  \
		call;                                                          \
		CHECK(ic_last == (ic), "%s landed in private op %d",        \
		      #call, ic_last);                                         \
	} while (0)
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
	n = atomic_load(&to_ibvp_dev(dev)->refcount);
	REACH(IC_FREE_CONTEXT, ibv_close_device(ctx));
#undef REACH
	CHECK(atomic_load(&to_ibvp_dev(dev)->refcount) == n - 1,
	      "free_context must have run verbs_uninit_context");
	for (i = 0; i < IC_NUM; i++)
		CHECK(ic_called[i] == 1, "private op %zu reached %d times", i,
		      ic_called[i]);
}

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

static void check_data_path(struct ibv_context *ctx)
{
	static uint64_t buf[512];
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp, *qp2;
	struct ibv_qp_ex *qpx;
	struct ibv_srq *srq;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_recv_wr rwr, *rbad = NULL;
	struct ibv_wc wc[2];
	struct ibv_qp_attr attr = {};
	struct siwx_sqe *sqe;
	uint8_t imm8[2][8];
	const uint8_t want_imm[8] = { 9, 8, 7, 6, 5, 4, 3, 2 };
	unsigned int db;
	int i, rv;

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
	qa.send_ops_flags |= IBV_QP_EX_WITH_BIND_MW;
	errno = 0;
	CHECK(!ibv_create_qp_ex(ctx, &qa) && errno == EOPNOTSUPP,
	      "BIND_MW in send_ops_flags must be refused");
	qa.send_ops_flags &= ~(uint64_t)IBV_QP_EX_WITH_BIND_MW;
	qa.qp_type = IBV_QPT_UD;
	errno = 0;
	CHECK(!ibv_create_qp_ex(ctx, &qa) && errno == EOPNOTSUPP, "UD QP");
	qa.qp_type = IBV_QPT_RC;
	CHECK(fake.ncmd[IB_USER_VERBS_CMD_CREATE_QP] == 0, "nothing sent");

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

	/* ibv_post_send is inline: qp->context->ops.post_send */
	sge.addr = (uintptr_t)buf;
	sge.length = 8;
	sge.lkey = mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xf00d;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.sg_list = &sge;
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
	sge.length = 1;
	bad = NULL;
	CHECK(ibv_post_send(qp, &wr, &bad) == EINVAL && bad == &wr,
	      "Send with Immediate and payload");
	sge.length = 8;

	/* fill the ring: 2 used, 2 free, the 5th overall must fail */
	wr.opcode = IBV_WR_SEND;
	CHECK(ibv_post_send(qp, &wr, &bad) == 0, "3rd");
	CHECK(ibv_post_send(qp, &wr, &bad) == 0, "4th");
	bad = NULL;
	CHECK(ibv_post_send(qp, &wr, &bad) == ENOMEM && bad == &wr,
	      "full SQ -> ENOMEM");
	kernel_release_sq();

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

	/* receive queue */
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 0xbeef;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	CHECK(ibv_post_recv(qp, &rwr, &rbad) == 0 &&
		      (fake.rq[0].flags & SIWX_WQE_VALID) &&
		      fake.rq[0].id == 0xbeef && fake.rq[0].num_sge == 1,
	      "post_recv");
	CHECK(fake.ncmd[IB_USER_VERBS_CMD_POST_RECV] == 0,
	      "no receive doorbell for a live QP");
	/* the kernel flushed the QP for good: receives ring the doorbell */
	__atomic_store_n(&fake.sq_ctrl->rq_flush, 1, __ATOMIC_RELEASE);
	rwr.wr_id = 0xbef0;
	CHECK(ibv_post_recv(qp, &rwr, &rbad) == 0 &&
		      (fake.rq[1].flags & SIWX_WQE_VALID) &&
		      fake.rq[1].id == 0xbef0,
	      "post_recv to a flushed QP");
	CHECK(fake.ncmd[IB_USER_VERBS_CMD_POST_RECV] == 1 &&
		      fake.last_rdb_qp_handle == 0x40 && !fake.bad,
	      "receive doorbell after posting to a flushed QP");
	__atomic_store_n(&fake.sq_ctrl->rq_flush, 0, __ATOMIC_RELEASE);

	attr.qp_state = IBV_QPS_INIT;
	CHECK(ibv_modify_qp(qp, &attr, IBV_QP_STATE) == 0 &&
		      fake.last_modify_qp.qp_state == IBV_QPS_INIT &&
		      fake.last_modify_qp.attr_mask == IBV_QP_STATE &&
		      fake.last_modify_qp.qp_handle == 0x40,
	      "modify_qp request");
	CHECK(fake.in_bytes[IB_USER_VERBS_CMD_MODIFY_QP] ==
		      sizeof(struct ibvp_cmd_modify_qp),
	      "modify_qp request size");

	/* SRQ and a QP that uses it */
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 2 } };

	srq = ibv_create_srq(pd, &sa);
	REQUIRE(srq, "create_srq: %s", strerror(errno));
	CHECK(srq->handle == 0x50, "srq handle");
	CHECK(ibv_post_srq_recv(srq, &rwr, &rbad) == 0 &&
		      (fake.srq[0].flags & SIWX_WQE_VALID),
	      "post_srq_recv");
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq,
				       .srq = srq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4,
						.max_send_sge = 1 } };
	qp2 = ibv_create_qp(pd, &ia);
	REQUIRE(qp2, "legacy create_qp with SRQ: %s", strerror(errno));
	CHECK(!ibv_qp_to_qp_ex(qp2), "no qp_ex without send_ops_flags");
	CHECK(ibv_post_recv(qp2, &rwr, &rbad) == EINVAL,
	      "post_recv on an SRQ QP");

	/* what siwx lacks: libibverbs' defaults answer EOPNOTSUPP */
	errno = 0;
	CHECK(!ibv_alloc_mw(pd, IBV_MW_TYPE_1) && errno == EOPNOTSUPP, "MW");
	errno = 0;
	struct ibv_ah_attr ah = {};
	CHECK(!ibv_create_ah(pd, &ah) && errno == EOPNOTSUPP, "AH");
	struct ibv_cq_init_attr_ex cqx = { .cqe = 4 };
	errno = 0;
	CHECK(!ibv_create_cq_ex(ctx, &cqx) && errno == EOPNOTSUPP, "CQ ex");
	CHECK(ibv_resize_cq(cq, 16) == EOPNOTSUPP, "resize_cq");
	union ibv_gid gid = {};
	CHECK(ibv_attach_mcast(qp, &gid, 0) == EOPNOTSUPP, "multicast");
	struct ibv_xrcd_init_attr xa = {};
	errno = 0;
	CHECK(!ibv_open_xrcd(ctx, &xa) && errno == EOPNOTSUPP, "XRC");

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

int main(void)
{
	struct ibv_device **list, *dev;
	struct ibv_context *ctx;

	check_name_pattern();
	dev = discover(&list);
	ctx = open_fake(dev);
	REQUIRE(ctx, "verbs_open_device -> siwx alloc_context: %s",
		strerror(errno));
	check_context(ctx, dev);
	check_ops_table(dev);
	check_data_path(ctx);
	ibv_close_device(ctx);
	CHECK(atomic_load(&to_ibvp_dev(dev)->refcount) == 2, "close drops");
	ibv_free_device_list(list);
	nftw(getenv("SYSFS_PATH"), rm_entry, 8, FTW_DEPTH | FTW_PHYS);

	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("libibverbs private ABI %d layout: all checks passed\n",
	       IBVP_PABI_VERSION);
	return 0;
}
