// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The protocol core's CRC32c, backed by the kernel's (which uses the
 * CPU's CRC32 instruction where there is one). Same contract: raw
 * register in and out, no inversion.
 */
#include <linux/crc32c.h>

#include <siwx/proto/crc32c.h>

u32 siwx_crc32c(u32 crc, const void *buf, size_t len)
{
	return crc32c(crc, buf, len);
}
