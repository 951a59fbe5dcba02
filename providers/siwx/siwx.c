// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Device matching, context setup and registration with libibverbs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "siwx.h"

/*
 * siwx has no upstream rdma_driver_id, so the kernel reports
 * RDMA_DRIVER_UNKNOWN and only a name match can claim the device.
 * libibverbs fnmatch()es MODALIAS patterns against "rdma_device:N<name>";
 * anchoring the pattern right after "N" makes it a true prefix match.
 */
static const struct ibvp_match_ent siwx_match_table[] = {
	{
		.u.modalias = "rdma_device:N" SIWX_DEV_NAME_PREFIX "*",
		.kind = IBVP_MATCH_MODALIAS,
	},
	{ .kind = IBVP_MATCH_END },
};

static void siwx_free_context(struct ibv_context *ibctx)
{
	struct siwx_context *ctx = to_sctx(ibctx);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

/*
 * Everything siwx implements. Entries left NULL keep libibverbs' defaults,
 * which fail with EOPNOTSUPP: address handles, multicast,
 * XRC, WQs/RSS, flow steering, device memory, counters, parent domains,
 * import/export.
 */
static const struct ibvp_context_ops siwx_ctx_ops = {
	.alloc_mw = siwx_alloc_mw,
	.alloc_pd = siwx_alloc_pd,
	.bind_mw = siwx_bind_mw,
	.create_cq = siwx_create_cq,
	.create_cq_ex = siwx_create_cq_ex,
	.create_qp = siwx_create_qp,
	.create_qp_ex = siwx_create_qp_ex,
	.create_srq = siwx_create_srq,
	.dealloc_mw = siwx_dealloc_mw,
	.dealloc_pd = siwx_dealloc_pd,
	.dereg_mr = siwx_dereg_mr,
	.destroy_cq = siwx_destroy_cq,
	.destroy_qp = siwx_destroy_qp,
	.destroy_srq = siwx_destroy_srq,
	.free_context = siwx_free_context,
	.modify_qp = siwx_modify_qp,
	.modify_srq = siwx_modify_srq,
	.poll_cq = siwx_poll_cq,
	.post_recv = siwx_post_recv,
	.post_send = siwx_post_send,
	.post_srq_recv = siwx_post_srq_recv,
	.query_device_ex = siwx_query_device_ex,
	.query_port = siwx_query_port,
	.query_qp = siwx_query_qp,
	.query_rt_values = siwx_query_rt_values,
	.query_srq = siwx_query_srq,
	.reg_mr = siwx_reg_mr,
	.req_notify_cq = siwx_req_notify_cq,
	.resize_cq = siwx_resize_cq,
};

struct siwx_get_context_resp {
	struct ib_uverbs_get_context_resp core;
	struct siwx_uresp_alloc_ctx drv;
};

static struct verbs_context *siwx_alloc_context(struct ibv_device *ibdev,
						int cmd_fd, void *private_data)
{
	struct ibvp_cmd_get_context cmd = {};
	struct siwx_get_context_resp resp = {};
	struct siwx_context *ctx;

	(void)private_data;
	/* RDMA_DRIVER_UNKNOWN (0): we have no upstream driver id. */
	ctx = _verbs_init_and_alloc_context(
		ibdev, cmd_fd, sizeof(*ctx),
		&((struct siwx_context *)NULL)->vctx, 0);
	if (!ctx)
		return NULL;

	if (ibvp_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp.core,
			     sizeof(resp)))
		goto fail;

	ctx->dev_id = resp.drv.dev_id;
	ctx->max_inline = resp.drv.max_inline < SIWX_MAX_INLINE ?
				  resp.drv.max_inline :
				  SIWX_MAX_INLINE;
	verbs_set_ops(&ctx->vctx, &siwx_ctx_ops);
	return &ctx->vctx;

fail:
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	return NULL;
}

static struct ibvp_device *siwx_alloc_device(struct ibvp_sysfs_dev *sysfs_dev)
{
	struct siwx_device *dev;

	(void)sysfs_dev;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->ibvp_dev;
}

static void siwx_uninit_device(struct ibvp_device *ibvp_dev)
{
	free(siwx_container_of(ibvp_dev, struct siwx_device, ibvp_dev));
}

const struct ibvp_device_ops siwx_dev_ops = {
	.name = "siwx",
	/* The kernel reports SIWX_ABI_VERSION as the device's uverbs ABI. */
	.match_min_abi_version = SIWX_ABI_VERSION,
	.match_max_abi_version = SIWX_ABI_VERSION,
	.match_table = siwx_match_table,
	.alloc_device = siwx_alloc_device,
	.uninit_device = siwx_uninit_device,
	.alloc_context = siwx_alloc_context,
};

/*
 * libibverbs dlopen()s lib<name>-rdmav<N>.so for each "driver <name>" line
 * in /etc/libibverbs.d/; the provider announces itself from a constructor.
 */
static void __attribute__((constructor)) siwx_register(void)
{
	ibvp_register_driver(&siwx_dev_ops);
}
