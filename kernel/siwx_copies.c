// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * How often payload octets are copied and checksummed on their way
 * through siwx, for the benchmark's "copies per payload octet" (each
 * copy and each CRC pass is a trip through memory the application
 * pays for). Payload is what the application's WRs carry: Send, Write
 * and Read Response data; headers are not counted.
 *
 * Read-only in debugfs, siwx/copies, one "name value" line each, sums
 * since the module was loaded (a reader subtracts two readings):
 *   tx_payload      payload octets sent
 *   tx_copied_siwx  of those, octets siwx copied (the CRC stage, inline)
 *   tx_copied_tcp   octets TCP copied out of what siwx gave it (TCP
 *                   copies whatever comes without MSG_SPLICE_PAGES)
 *   tx_crc          payload octets the MPA CRC read on the way out
 *   rx_payload      payload octets received
 *   rx_copied_siwx  octets siwx copied from TCP's buffers into memory
 *   rx_crc          payload octets the MPA CRC read on the way in
 * Per-CPU counters: the data path adds without a shared cache line.
 */
#include <linux/debugfs.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>

#include "siwx.h"

DEFINE_PER_CPU(struct siwx_copies, siwx_copies);

static int siwx_copies_show(struct seq_file *m, void *unused)
{
	struct siwx_copies sum = {};
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct siwx_copies *c = per_cpu_ptr(&siwx_copies, cpu);

		sum.tx_payload += READ_ONCE(c->tx_payload);
		sum.tx_copied_siwx += READ_ONCE(c->tx_copied_siwx);
		sum.tx_copied_tcp += READ_ONCE(c->tx_copied_tcp);
		sum.tx_crc += READ_ONCE(c->tx_crc);
		sum.rx_payload += READ_ONCE(c->rx_payload);
		sum.rx_copied_siwx += READ_ONCE(c->rx_copied_siwx);
		sum.rx_crc += READ_ONCE(c->rx_crc);
	}
	seq_printf(m, "tx_payload %llu\n", sum.tx_payload);
	seq_printf(m, "tx_copied_siwx %llu\n", sum.tx_copied_siwx);
	seq_printf(m, "tx_copied_tcp %llu\n", sum.tx_copied_tcp);
	seq_printf(m, "tx_crc %llu\n", sum.tx_crc);
	seq_printf(m, "rx_payload %llu\n", sum.rx_payload);
	seq_printf(m, "rx_copied_siwx %llu\n", sum.rx_copied_siwx);
	seq_printf(m, "rx_crc %llu\n", sum.rx_crc);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(siwx_copies);

void siwx_copies_init(struct dentry *dir)
{
	debugfs_create_file("copies", 0444, dir, NULL, &siwx_copies_fops);
}
