// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The built module as libibverbs really uses it: dlopen()ed by name
 * (RDMAV_DRIVERS=<dir>/libsiwx resolves to <dir>/libsiwx-rdmav<N>.so), so
 * every private symbol must resolve against the libibverbs we built for, the
 * constructor must register the driver, the name match must claim siwx9
 * in a fake sysfs, and the version script must export siwxdv_* at
 * SIWX_1.0 and nothing of the provider's internals. Then one context and
 * a few verbs run against the fake uverbs device (fake_uverbs.c).
 *
 * Usage: siwx_module_load_test <dir>/libsiwx
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_uverbs.h"
#include "verbs_private.h"

static int failures;

#define CHECK(cond, msg)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			failures++;                                            \
			fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__,      \
				__LINE__, #cond, msg);                         \
		}                                                              \
	} while (0)

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	return remove(path);
}

int main(int argc, char **argv)
{
	struct ibv_device **list, *dev = NULL;
	struct ibvp_device *vdev;
	struct ibvp_sysfs_dev *sysfs;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char path[4096];
	void *mod;
	bool (*is_supported)(struct ibv_device *);
	int i, n;

	if (argc != 2)
		return 2;
	setenv("RDMAV_DRIVERS", argv[1], 1);
	setenv("SYSFS_PATH", fake_sysfs_create(), 1);

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "siwx9"))
			dev = list[i];
	if (!dev) {
		fprintf(stderr, "FAIL: the module did not claim siwx9\n");
		return 1;
	}

	snprintf(path, sizeof(path), "%s-rdmav%d.so", argv[1],
		 IBVP_PABI_VERSION);
	mod = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	CHECK(mod, "libibverbs loaded the module from RDMAV_DRIVERS");
	if (mod) {
		is_supported = (bool (*)(struct ibv_device *))dlvsym(
			mod, "siwxdv_is_supported", "SIWX_1.0");
		CHECK(is_supported && is_supported(dev), "siwxdv@SIWX_1.0");
		CHECK(dlvsym(mod, "siwxdv_wr_masked_fetch_add", "SIWX_1.0"),
		      "masked FetchAdd exported");
		CHECK(dlvsym(mod, "siwxdv_wr_masked_cmp_swp", "SIWX_1.0"),
		      "masked CmpSwap exported");
		CHECK(dlvsym(mod, "siwxdv_wr_rdma_write_imm8", "SIWX_1.0"),
		      "write_imm8 exported");
		CHECK(dlvsym(mod, "siwxdv_poll_cq_imm8", "SIWX_1.0"),
		      "poll_cq_imm8 exported");
		CHECK(dlvsym(mod, "siwxdv_wc_read_imm8", "SIWX_1.1"),
		      "wc_read_imm8 exported");
		CHECK(!dlsym(mod, "siwx_dev_ops") && !dlsym(mod, "siwx_post_send"),
		      "internals stay local");
	}

	/* open with cmd_fd -1 (no sysfs node): the fake device */
	vdev = (struct ibvp_device *)dev;
	sysfs = vdev->sysfs;
	vdev->sysfs = NULL;
	ctx = verbs_open_device(dev, NULL);
	vdev->sysfs = sysfs;
	CHECK(ctx, "alloc_context through the module");
	if (ctx) {
		pd = ibv_alloc_pd(ctx);
		CHECK(pd && pd->handle == 0x10, "alloc_pd");
		if (pd) {
			errno = 0;
			CHECK(!ibv_create_ah(pd, &(struct ibv_ah_attr){}) &&
				      errno == EOPNOTSUPP,
			      "address handles refused");
			CHECK(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
		}
		ibv_close_device(ctx);
	}
	CHECK(fake.bad == 0, "malformed commands");
	ibv_free_device_list(list);
	nftw(getenv("SYSFS_PATH"), rm_entry, 8, FTW_DEPTH | FTW_PHYS);

	if (failures)
		return 1;
	printf("libsiwx-rdmav%d.so: loaded, registered, matched, opened\n",
	       IBVP_PABI_VERSION);
	return 0;
}
