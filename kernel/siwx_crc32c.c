// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx.ko's CRC32c: the kernel's crc32c(), which uses the CPU's CRC32
 * instruction where there is one, or the protocol core's table code,
 * whichever is faster on this machine. Like the kernel's RAID6 and XOR
 * code, we measure at load rather than guess: on hardware the instruction
 * wins several times over, but an emulator such as QEMU's TCG executes it
 * one bit at a time, and there the table code is about three times
 * faster, which matters because MPA (RFC 5044 section 4.4) checksums every
 * octet twice, once at each end. Both codes update the same raw register,
 * so the parameter may change while an FPDU is half checksummed.
 */
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/slab.h>

#include <siwx/proto/crc32c.h>

#include "siwx.h"
#include "siwx_compat.h"

enum {
	SIWX_CRC32C_MEASURE = -1,
	SIWX_CRC32C_KERNEL = 0,
	SIWX_CRC32C_TABLE = 1,
};

static int siwx_crc32c_impl = SIWX_CRC32C_MEASURE;
module_param_named(crc32c_impl, siwx_crc32c_impl, int, 0644);
MODULE_PARM_DESC(crc32c_impl,
		 "MPA CRC32c code: -1 the faster (default), 0 the kernel's, 1 siwx's table");

/* The kernel's crc32c, held from load to unload (siwx_compat.h) */
static struct siwx_compat_crc32c siwx_crc32c_hash;

static u32 siwx_crc32c_kernel(u32 crc, const void *buf, size_t len)
{
	return siwx_compat_crc32c(&siwx_crc32c_hash, crc, buf, len);
}

/*
 * Below this many octets the kernel's crc32c costs more than the CRC
 * itself: up to Linux 6.13 it is the crypto API's hash, a descriptor to
 * set up and two indirect calls before the first octet, and MPA checksums
 * an FPDU's header, payload and pad (often none) apart. Such inputs go to
 * the CPU's CRC32 instruction inline (below) where the kernel's code is
 * in use and there is one, else to the table code.
 */
#define SIWX_CRC32C_SMALL 32

/* The CPU has CRC32 (SSE4.2): Castagnoli's polynomial, the raw register */
static bool siwx_crc32c_has_insn;

#ifdef CONFIG_X86_64
static void __init siwx_crc32c_insn_probe(void)
{
	siwx_crc32c_has_insn = boot_cpu_has(X86_FEATURE_XMM4_2);
}

static u32 siwx_crc32c_insn(u32 crc, const void *buf, size_t len)
{
	const u8 *p = buf;
	u64 r = crc, v;

	for (; len >= 8; len -= 8, p += 8) {
		memcpy(&v, p, sizeof(v));	/* x86 loads it unaligned */
		asm("crc32q %1, %0" : "+r" (r) : "rm" (v));
	}
	crc = r;
	for (; len; len--, p++)
		asm("crc32b %1, %0" : "+r" (crc) : "rm" (*p));
	return crc;
}
#else
static void __init siwx_crc32c_insn_probe(void)
{
}

static u32 siwx_crc32c_insn(u32 crc, const void *buf, size_t len)
{
	return siwx_crc32c_sw(crc, buf, len);
}
#endif

u32 siwx_crc32c(u32 crc, const void *buf, size_t len)
{
	int impl = READ_ONCE(siwx_crc32c_impl);

	if (impl == SIWX_CRC32C_TABLE)
		return siwx_crc32c_sw(crc, buf, len);
	if (len >= SIWX_CRC32C_SMALL)
		return siwx_crc32c_kernel(crc, buf, len);
	if (siwx_crc32c_has_insn)
		return siwx_crc32c_insn(crc, buf, len);
	return siwx_crc32c_sw(crc, buf, len);
}

/* RFC 3720 B.4: CRC32c of 32 zero octets is 0x8a9136aa. */
static bool __init siwx_crc32c_check(u32 (*fn)(u32, const void *, size_t))
{
	static const u8 zeros[32];

	return siwx_crc32c_final(fn(SIWX_CRC32C_INIT, zeros,
				    sizeof(zeros))) == 0x8a9136aa;
}

/* The instruction's CRC of every short length, unaligned, as the table's */
static bool __init siwx_crc32c_insn_check(void)
{
	u8 buf[SIWX_CRC32C_SMALL + 1];
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (u8)(i * 131 + 7);
	for (i = 0; i < SIWX_CRC32C_SMALL; i++)
		if (siwx_crc32c_insn(SIWX_CRC32C_INIT, buf + 1, i) !=
		    siwx_crc32c_sw(SIWX_CRC32C_INIT, buf + 1, i))
			return false;
	return siwx_crc32c_check(siwx_crc32c_insn);
}

/*
 * Best of five passes over 16 KiB in FPDU-sized calls (an FPDU's payload
 * is at most one MSS); the first pass also warms caches and, under an
 * emulator, translation.
 */
static u64 __init siwx_crc32c_time(u32 (*fn)(u32, const void *, size_t),
				   const u8 *buf, size_t len)
{
	u64 best = U64_MAX, t;
	u32 crc = SIWX_CRC32C_INIT;
	int pass, i;

	for (pass = 0; pass < 5; pass++) {
		t = ktime_get_ns();
		for (i = 0; i < 16; i++)
			crc = fn(crc, buf, len);
		best = min(best, ktime_get_ns() - t);
	}
	return best ?: 1;
}

int __init siwx_crc32c_init(void)
{
	const size_t len = 1024;
	u64 t_kernel, t_table;
	u8 *buf;
	size_t i;

	int rv;

	siwx_crc32c_sw_init();
	rv = siwx_compat_crc32c_get(&siwx_crc32c_hash);
	if (rv) {
		pr_err("siwx: the kernel's crc32c hash is missing (%d): is module crc32c_generic installed?\n",
		       rv);
		return rv;
	}
	siwx_crc32c_insn_probe();
	if (!siwx_crc32c_check(siwx_crc32c_kernel) ||
	    !siwx_crc32c_check(siwx_crc32c_sw) ||
	    (siwx_crc32c_has_insn && !siwx_crc32c_insn_check())) {
		pr_err("siwx: crc32c self-test failed\n");
		siwx_crc32c_exit();
		return -ENODEV;
	}
	if (siwx_crc32c_impl != SIWX_CRC32C_MEASURE)
		return 0;
	buf = kmalloc(len, GFP_KERNEL);
	if (!buf) {
		siwx_crc32c_exit();
		return -ENOMEM;
	}
	for (i = 0; i < len; i++)
		buf[i] = (u8)(i * 131 + 7);
	t_kernel = siwx_crc32c_time(siwx_crc32c_kernel, buf, len);
	t_table = siwx_crc32c_time(siwx_crc32c_sw, buf, len);
	kfree(buf);
	WRITE_ONCE(siwx_crc32c_impl, t_table < t_kernel ? SIWX_CRC32C_TABLE :
			 SIWX_CRC32C_KERNEL);
	pr_info("siwx: crc32c: using %s (kernel crc32c %llu MB/s, table code %llu MB/s)\n",
		t_table < t_kernel ? "the table code" : "the kernel's",
		div64_u64(16 * len * 1000, t_kernel),
		div64_u64(16 * len * 1000, t_table));
	return 0;
}

void siwx_crc32c_exit(void)
{
	siwx_compat_crc32c_put(&siwx_crc32c_hash);
}
