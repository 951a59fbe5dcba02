// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The installed provider as libibverbs finds it on a user's machine: no
 * RDMAV_DRIVERS, only /etc/libibverbs.d/siwx.driver, so libibverbs must read
 * the driver file, dlopen() <libdir>/libibverbs/libsiwx-rdmav34.so and let it
 * claim the siwx device of a fake sysfs (tests/provider/fake_uverbs.c: this
 * host has no RDMA, so the real libibverbs stops before loading providers).
 *
 * Usage: installed_provider /usr/lib/<multiarch>/libibverbs/libsiwx-rdmav34.so
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_uverbs.h"

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	return remove(path);
}

static int done(int rc)
{
	nftw(getenv("SYSFS_PATH"), rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	return rc;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	int i, n, claimed = 0;
	void *mod;

	if (argc != 2)
		return 2;
	unsetenv("RDMAV_DRIVERS");
	unsetenv("IBV_DRIVERS");
	setenv("SYSFS_PATH", fake_sysfs_create(), 1);

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++) {
		printf("device: %s\n", ibv_get_device_name(list[i]));
		if (!strcmp(ibv_get_device_name(list[i]), "siwx9"))
			claimed = 1;
	}
	mod = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
	if (!mod) {
		fprintf(stderr, "FAIL: libibverbs did not load %s\n", argv[1]);
		return done(1);
	}
	if (!claimed) {
		fprintf(stderr, "FAIL: %s did not claim siwx9\n", argv[1]);
		return done(1);
	}
	printf("libibverbs loaded %s, which claimed siwx9\n", argv[1]);
	ibv_free_device_list(list);
	return done(0);
}
