// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * How often payload octets are copied and checksummed on their way through
 * siwx: per-CPU sums shown in debugfs (siwx/copies). What each counter
 * means: docs/design.md, "What siwx.ko counts".
 */
#include <linux/debugfs.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/stddef.h>

#include "siwx.h"

DEFINE_PER_CPU(struct siwx_copies, siwx_copies);

#define SIWX_COPIES_FIELD(f) { #f, offsetof(struct siwx_copies, f) }
static const struct {
	const char *name;
	size_t off;
} siwx_copies_fields[] = {
	SIWX_COPIES_FIELD(tx_payload),
	SIWX_COPIES_FIELD(tx_copied_siwx),
	SIWX_COPIES_FIELD(tx_copied_tcp),
	SIWX_COPIES_FIELD(tx_crc),
	SIWX_COPIES_FIELD(tx_crc_fused),
	SIWX_COPIES_FIELD(tx_zerocopy),
	SIWX_COPIES_FIELD(tx_zerocopy_copied),
	SIWX_COPIES_FIELD(rx_payload),
	SIWX_COPIES_FIELD(rx_copied_siwx),
	SIWX_COPIES_FIELD(rx_crc),
	SIWX_COPIES_FIELD(rx_crc_fused),
	SIWX_COPIES_FIELD(tx_stage_new),
	SIWX_COPIES_FIELD(tx_stage_reused),
	SIWX_COPIES_FIELD(tx_fpdus),
};

static int siwx_copies_show(struct seq_file *m, void *unused)
{
	unsigned int i;
	const char *c;
	u64 sum;
	int cpu;

	for (i = 0; i < ARRAY_SIZE(siwx_copies_fields); i++) {
		sum = 0;
		for_each_possible_cpu(cpu) {
			c = (const char *)per_cpu_ptr(&siwx_copies, cpu);
			sum += READ_ONCE(*(const u64 *)(c +
					 siwx_copies_fields[i].off));
		}
		seq_printf(m, "%s %llu\n", siwx_copies_fields[i].name, sum);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(siwx_copies);

void siwx_copies_init(struct dentry *dir)
{
	debugfs_create_file("copies", 0444, dir, NULL, &siwx_copies_fops);
}
