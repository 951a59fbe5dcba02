/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The protocol core's only view of its environment. The core is plain C
 * compiled unchanged into siwx.ko and into user-space tests and tools, so
 * it uses nothing but fixed-size integers, bool, size_t and memcpy/memset
 * (and __always_inline: the kernel's, or glibc's from <sys/cdefs.h>).
 */
#ifndef SIWX_PROTO_TYPES_H
#define SIWX_PROTO_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The kernel's names, from the compiler's own fixed-size types. */
typedef __UINT8_TYPE__ u8;
typedef __UINT16_TYPE__ u16;
typedef __UINT32_TYPE__ u32;
typedef __UINT64_TYPE__ u64;
#endif

#endif /* SIWX_PROTO_TYPES_H */
