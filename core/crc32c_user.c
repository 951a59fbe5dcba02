// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx_crc32c() for user space: the table code, its tables built on first
 * use. Not part of siwx.ko, which picks its own (kernel/siwx_crc32c.c).
 */
#include <siwx/proto/crc32c.h>

static bool tables_ready;

u32 siwx_crc32c(u32 crc, const void *buf, size_t len)
{
	/* Idempotent: racing first callers all write the same tables. */
	if (!__atomic_load_n(&tables_ready, __ATOMIC_ACQUIRE)) {
		siwx_crc32c_sw_init();
		__atomic_store_n(&tables_ready, true, __ATOMIC_RELEASE);
	}
	return siwx_crc32c_sw(crc, buf, len);
}
