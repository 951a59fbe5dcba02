// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Software CRC32c for user space (siwx.ko uses the kernel's crc32c).
 * Reflected polynomial 0x82f63b78, one table lookup per octet.
 */
#include <siwx/proto/crc32c.h>

#define CRC32C_POLY_REFLECTED 0x82f63b78U

static u32 table[256];
static bool table_ready;

static void table_init(void)
{
	u32 i, bit, crc;

	for (i = 0; i < 256; i++) {
		crc = i;
		for (bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^
			      (crc & 1 ? CRC32C_POLY_REFLECTED : 0);
		table[i] = crc;
	}
	__atomic_store_n(&table_ready, true, __ATOMIC_RELEASE);
}

u32 siwx_crc32c(u32 crc, const void *buf, size_t len)
{
	const u8 *p = buf;

	/* Idempotent: racing first callers all write the same table. */
	if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE))
		table_init();
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}
