// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Module-wide counts of siwx's own objects, for finding leaks, shown in
 * debugfs (siwx/objects); all are 0 once nothing uses siwx. Connections
 * and listeners can outlive their device, so the counts are the module's.
 * Each counter: docs/design.md, "What siwx.ko counts".
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
