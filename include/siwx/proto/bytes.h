/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Unaligned big-endian loads and stores. Every iWARP header field is
 * big-endian ("network order") on the wire; the MPA CRC is the one
 * exception and is stored little-endian (see crc32c.h).
 */
#ifndef SIWX_PROTO_BYTES_H
#define SIWX_PROTO_BYTES_H

#include "types.h"

static inline u16 siwx_get_be16(const u8 *p)
{
	return (u16)((u16)p[0] << 8 | p[1]);
}

static inline u32 siwx_get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static inline u64 siwx_get_be64(const u8 *p)
{
	return (u64)siwx_get_be32(p) << 32 | siwx_get_be32(p + 4);
}

static inline u32 siwx_get_le32(const u8 *p)
{
	return (u32)p[3] << 24 | (u32)p[2] << 16 | (u32)p[1] << 8 | p[0];
}

static inline void siwx_put_be16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static inline void siwx_put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

static inline void siwx_put_be64(u8 *p, u64 v)
{
	siwx_put_be32(p, (u32)(v >> 32));
	siwx_put_be32(p + 4, (u32)v);
}

static inline void siwx_put_le32(u8 *p, u32 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
	p[2] = (u8)(v >> 16);
	p[3] = (u8)(v >> 24);
}

#endif /* SIWX_PROTO_BYTES_H */
