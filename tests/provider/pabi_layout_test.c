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
 *  1. Discovery (this file). libibverbs scans a fake sysfs tree
 *     (SYSFS_PATH; RDMA netlink is made unavailable) holding siwx9 (ours),
 *     siwx8 (ours by name, wrong ABI) and other7. libibverbs must read our
 *     match table and ABI bounds (ibvp_device_ops, ibvp_match_ent), call
 *     alloc_device and fill the ibvp_device/ibvp_sysfs_dev we declared: we
 *     check each field it wrote where we expect it (ops, refcount, sysfs,
 *     match, abi_ver, ibdev_name, sysfs_name, sysfs_cdev, node_type).
 *  2. Context (this file). verbs_open_device() (private) calls our
 *     alloc_context, whose ibv_cmd_get_context response must carry siwx
 *     udata at the offset the fake kernel writes it.
 *  3. Ops table (pabi_ops_table.c). verbs_set_ops() is given a table whose
 *     slots (76 in ABI 34 and 57, 79 in 59, 83 in 64, 93 in 65) hold
 *     distinct markers; for the ops libibverbs copies into public
 *     structures (ibv_context_ops, verbs_context) we check every copy is
 *     the marker of the same name, and the ops it keeps privately are
 *     stubs that we reach through the public entry points (ibv_query_port,
 *     ibv_create_cq_ex, ibv_import_pd, ibv_query_port_speed,
 *     ibv_create_comp_cntr, ...). Every slot is checked one way or the
 *     other (counted), so a slot declared out of order or missing fails.
 *  4. Data path (pabi_data_path.c) against the fake kernel (fake_uverbs.c):
 *     PD, MR, CQ, QP(ex), SRQ through public verbs, the public inline
 *     post/poll functions (qp->context->ops.post_send etc.),
 *     ibv_qp_to_qp_ex (reads our ibvp_qp.comp_mask at libibverbs' offset),
 *     the command buffers (sizes and core fields seen by the "kernel"), the
 *     rings and the doorbell, and the EOPNOTSUPP defaults for what siwx
 *     lacks.
 *
 * main() below runs the steps in that order; the CHECK/REQUIRE macros and
 * what the files share are in pabi_check.h.
 *
 * What it does not prove: layouts of members libibverbs never touches in
 * these paths (e.g. ibvp_device.core_support, ibvp_srq beyond ibv_srq,
 * ibvp_xrcd), and the real kernel's side of abi.h; those need siwx.ko in
 * the VM tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "fake_uverbs.h"
#include "pabi_check.h"
#include "siwx.h"

int failures;

struct ibvp_device *to_ibvp_dev(struct ibv_device *dev)
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

		CHECK(strcmp(name, "siwx8"), "siwx8 has the previous ABI and must be refused");
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
struct ibv_context *open_fake(struct ibv_device *dev)
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
