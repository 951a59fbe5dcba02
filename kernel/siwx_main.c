// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx: soft-iWARP with RFC 7306 atomics and immediate data.
 *
 * Module entry: the module's parameters for connections, the "siwx" rdma
 * link type and the netdev notifier.
 */
#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <rdma/rdma_netlink.h>

#include "siwx_compat.h"
#include "siwx_conn.h"
#include "siwx_zc.h"

bool siwx_mpa_crc = true;
module_param_named(mpa_crc, siwx_mpa_crc, bool, 0644);
MODULE_PARM_DESC(mpa_crc, "Ask for MPA CRCs (always used if the peer asks)");

uint siwx_mpa_rev = 2;
module_param_named(mpa_rev, siwx_mpa_rev, uint, 0644);
MODULE_PARM_DESC(mpa_rev, "MPA revision of our Requests: 1 or 2 (RFC 6581)");

bool siwx_mpa_p2p;
module_param_named(mpa_p2p, siwx_mpa_p2p, bool, 0644);
MODULE_PARM_DESC(mpa_p2p,
		 "Ask for peer-to-peer mode (RFC 6581 RTR) when connecting");

uint siwx_mpa_fpdu_segs = 1;
module_param_named(mpa_fpdu_segs, siwx_mpa_fpdu_segs, uint, 0644);
MODULE_PARM_DESC(mpa_fpdu_segs,
		 "TCP segments an FPDU may span: 1 (RFC 5044) or more (fewer, larger FPDUs)");

/*
 * Any Ethernet-like link, and loopback for a server and client on one
 * machine. On kernels whose rdma_cm finds a device on lo by lo's hardware
 * address, lo first gets one (siwx_compat_lo_hwaddr()).
 */
static int siwx_netdev_check(struct net_device *netdev)
{
	int rv;

	if (netdev->type != ARPHRD_ETHER && netdev->type != ARPHRD_LOOPBACK) {
		pr_info("siwx: %s: not an Ethernet or loopback device\n",
			netdev->name);
		return -EINVAL;
	}
	if (netdev->type != ARPHRD_LOOPBACK)
		return 0;
	rv = siwx_compat_lo_hwaddr(netdev);
	if (rv)
		pr_info("siwx: %s: no hardware address (%d); set one: ip link set %s address 02:00:00:00:00:01\n",
			netdev->name, rv, netdev->name);
	return rv;
}

static int siwx_newlink(const char *name, struct net_device *netdev)
{
	int rv;

	if (strncmp(name, SIWX_DEV_NAME_PREFIX,
		    strlen(SIWX_DEV_NAME_PREFIX))) {
		/* newlink has no extack in this kernel: say it in the log */
		pr_info("siwx: refusing device name '%s': siwx device names must start with '%s'\n",
			name, SIWX_DEV_NAME_PREFIX);
		return -EINVAL;
	}
	rv = siwx_netdev_check(netdev);
	if (rv)
		return rv;
	return siwx_dev_add(name, netdev);
}

static struct rdma_link_ops siwx_link_ops = {
	.type = "siwx",
	.newlink = siwx_newlink,
};

static struct notifier_block siwx_netdev_nb = {
	.notifier_call = siwx_netdev_event,
};

static int __init siwx_init(void)
{
	int rv;

	rv = siwx_crc32c_init();
	if (rv)
		return rv;
	rv = siwx_wq_init();
	if (rv)
		goto out_crc32c;
	rv = register_netdevice_notifier(&siwx_netdev_nb);
	if (rv)
		goto out_wq;
	siwx_objects_init();
	rdma_link_register(&siwx_link_ops);
	pr_info("siwx: loaded (rdma link type siwx)\n");
	return 0;

out_wq:
	siwx_wq_exit();
out_crc32c:
	siwx_crc32c_exit();
	return rv;
}

static void __exit siwx_exit(void)
{
	/* No new devices once this returns: newlink runs under its lock */
	rdma_link_unregister(&siwx_link_ops);
	siwx_dev_remove_all();
	/*
	 * Last: netdev unregistrations until here still remove their device;
	 * the events this replays find no device any more.
	 */
	unregister_netdevice_notifier(&siwx_netdev_nb);
	/* Zero-copy sends the stack still holds, then connections closing */
	siwx_zc_exit();
	siwx_wq_exit();
	siwx_objects_exit();
	siwx_crc32c_exit();
}

module_init(siwx_init);
module_exit(siwx_exit);

MODULE_DESCRIPTION("Soft-iWARP RNIC with RFC 7306 atomics and immediate data");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_VERSION(SIWX_VERSION);
MODULE_SOFTDEP("pre: crc32c");
MODULE_ALIAS_RDMA_LINK("siwx");
