// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Module-wide counts of siwx's own objects, for finding leaks: what
 * ib_core does not track (it counts PDs, CQs, QPs, SRQs, MRs and cm_ids
 * per device: `rdma resource`). Connections and listeners can outlive
 * the device they were made for (their close runs on a workqueue), so
 * they are counted for the module, not per device.
 *
 * Read-only in debugfs, siwx/objects, one "name value" line each:
 *   conns         connections, from allocation to their last reference
 *   listeners     listening endpoints
 *   pinned_pages  user pages pinned by registered MRs
 *   tx_pool_taken budget the stage's page pools hold, in pages
 *                 (siwx_tx_pool.c): 0 too once every connection has
 *                 been idle a few seconds
 * All are 0 once every application and ULP has let go of siwx.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "siwx.h"

struct siwx_objects siwx_objects;

static struct dentry *siwx_debugfs;

static int siwx_objects_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "conns %d\n", atomic_read(&siwx_objects.conns));
	seq_printf(m, "listeners %d\n", atomic_read(&siwx_objects.listeners));
	seq_printf(m, "pinned_pages %lld\n",
		   (long long)atomic64_read(&siwx_objects.pinned_pages));
	seq_printf(m, "tx_pool_taken %ld\n",
		   atomic_long_read(&siwx_objects.tx_pool_taken));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(siwx_objects);

/* Without debugfs the counts are kept all the same, just not shown. */
void siwx_objects_init(void)
{
	siwx_debugfs = debugfs_create_dir("siwx", NULL);
	debugfs_create_file("objects", 0444, siwx_debugfs, NULL,
			    &siwx_objects_fops);
	siwx_copies_init(siwx_debugfs);
}

void siwx_objects_exit(void)
{
	debugfs_remove_recursive(siwx_debugfs);
}
