/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The protocol core's only view of its environment. The core is plain C
 * compiled unchanged into siwx.ko and into user-space tests and tools, so
 * it uses nothing but fixed-size integers, bool, size_t and memcpy/memset.
 */
#ifndef SIWX_PROTO_TYPES_H
#define SIWX_PROTO_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
#endif

#endif /* SIWX_PROTO_TYPES_H */
