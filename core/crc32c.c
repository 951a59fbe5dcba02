// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Table-driven CRC32c, reflected polynomial 0x82f63b78, eight octets a
 * step ("slicing by 8": eight 256-entry tables, one lookup per octet, the
 * eight lookups of a step independent of each other). User space uses it
 * as siwx_crc32c() (crc32c_user.c); siwx.ko where it is faster than the
 * kernel's crc32c() (kernel/siwx_crc32c.c).
 */
#include <siwx/proto/bytes.h>
#include <siwx/proto/crc32c.h>

#define CRC32C_POLY_REFLECTED 0x82f63b78U

/* tab[k][i]: the register after octet i then k zero octets, from zero */
static u32 tab[8][256];

void siwx_crc32c_sw_init(void)
{
	u32 i, k, crc;

	for (i = 0; i < 256; i++) {
		crc = i;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^
			      (crc & 1 ? CRC32C_POLY_REFLECTED : 0);
		tab[0][i] = crc;
	}
	for (k = 1; k < 8; k++)
		for (i = 0; i < 256; i++)
			tab[k][i] = (tab[k - 1][i] >> 8) ^
				    tab[0][tab[k - 1][i] & 0xff];
}

u32 siwx_crc32c_sw(u32 crc, const void *buf, size_t len)
{
	const u8 *p = buf;
	u32 lo, hi;

	/* The register folds into the first four octets of each step */
	for (; len >= 8; p += 8, len -= 8) {
		lo = siwx_get_le32(p) ^ crc;
		hi = siwx_get_le32(p + 4);
		crc = tab[7][lo & 0xff] ^ tab[6][(lo >> 8) & 0xff] ^
		      tab[5][(lo >> 16) & 0xff] ^ tab[4][lo >> 24] ^
		      tab[3][hi & 0xff] ^ tab[2][(hi >> 8) & 0xff] ^
		      tab[1][(hi >> 16) & 0xff] ^ tab[0][hi >> 24];
	}
	while (len--)
		crc = tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}
