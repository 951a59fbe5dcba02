// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx: soft-iWARP with RFC 7306 atomics and immediate data.
 *
 * Module entry. The RNIC (rdma link type, verbs, connection manager, TX
 * and RX engines) is built on the protocol core in core/; until it lands
 * the module only carries the core and checks it at load time.
 */
#include <linux/module.h>

#include <siwx/proto/crc32c.h>

static int __init siwx_init(void)
{
	/* RFC 3720 B.4: CRC32c of 32 zero octets is 0x8a9136aa. */
	static const u8 zeros[32];
	u32 crc = siwx_crc32c_final(siwx_crc32c(SIWX_CRC32C_INIT, zeros,
						sizeof(zeros)));

	if (crc != 0x8a9136aa) {
		pr_err("siwx: crc32c self-test failed (%08x)\n", crc);
		return -ENODEV;
	}
	pr_info("siwx: protocol core loaded\n");
	return 0;
}

static void __exit siwx_exit(void)
{
}

module_init(siwx_init);
module_exit(siwx_exit);

MODULE_DESCRIPTION("Soft-iWARP RNIC with RFC 7306 atomics and immediate data");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_SOFTDEP("pre: crc32c");
