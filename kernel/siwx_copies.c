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
 *   tx_crc_fused    of those, octets it read in the pass that copied them
 *                   (a chunk checksummed while the copy left it in the
 *                   cache: one trip through memory, not two)
 *   tx_zerocopy     octets given to TCP by reference to the
 *                   application's pages, without MPA CRCs: zero-copy WRs
 *                   (siwx_zc.c) and Read Responses
 *   tx_zerocopy_copied  of those, the octets of WRs the network stack
 *                   copied after all, whole or in part (delivery to a
 *                   local socket; a device without checksum offload has
 *                   the skbs linearized), known when it lets go of them
 *   rx_payload      payload octets received
 *   rx_copied_siwx  octets siwx copied from TCP's buffers into memory
 *   rx_crc          payload octets the MPA CRC read on the way in
 *   rx_crc_fused    of those, octets it read in the pass that placed them
 *   tx_stage_new    stage pages allocated (and zeroed by the kernel), in
 *                   pages, not octets
 *   tx_stage_reused stage pages written again from the pool once TCP let
 *                   go of them (siwx_tx_pool.c)
 *   tx_fpdus        FPDUs sent, the unit of the per-FPDU work (headers,
 *                   CRC trailers): tx_payload / tx_fpdus is the mean
 *                   payload of one, a segment's or less unless
 *                   mpa_fpdu_segs lets FPDUs span several
 * Per-CPU counters: the data path adds without a shared cache line.
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
