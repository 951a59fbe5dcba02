/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * CRC32c (Castagnoli), the MPA FPDU check value (RFC 5044 section 4.4,
 * which takes the CRC from iSCSI, RFC 3720 section 12.1).
 *
 * siwx_crc32c() updates a raw, reflected CRC register and does no pre- or
 * post-inversion, the same contract as the kernel's crc32c(): start from
 * SIWX_CRC32C_INIT, finish with siwx_crc32c_final(). The value goes on the
 * wire least significant byte first (RFC 3720's test vectors: 32 zero
 * bytes give the octets aa 36 91 8a).
 *
 * siwx_crc32c_sw() is the core's table code (core/crc32c.c), which needs
 * siwx_crc32c_sw_init() once before use. User space's siwx_crc32c() is the
 * table code (core/crc32c_user.c); siwx.ko's is the kernel's crc32c() or
 * the table code, whichever is faster on the machine (measured at load,
 * kernel/siwx_crc32c.c).
 */
#ifndef SIWX_PROTO_CRC32C_H
#define SIWX_PROTO_CRC32C_H

#include "types.h"

#define SIWX_CRC32C_INIT 0xffffffffU

u32 siwx_crc32c(u32 crc, const void *buf, size_t len);
void siwx_crc32c_sw_init(void);
u32 siwx_crc32c_sw(u32 crc, const void *buf, size_t len);

static inline u32 siwx_crc32c_final(u32 crc)
{
	return ~crc;
}

#endif /* SIWX_PROTO_CRC32C_H */
