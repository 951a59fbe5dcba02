// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * One siwx RNIC per netdev: creation and registration with ib_core, the
 * verbs dispatch table, teardown, and what the netdev's events mean for
 * the device.
 */
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/iw_cm.h>

#include "siwx_compat.h"
#include "siwx_ring.h"

static atomic_t siwx_next_dev_id = ATOMIC_INIT(0);

/*
 * Last op ib_core calls on a device: from here on nothing can look the
 * device up, so it leaves the module's list.
 */
static void siwx_dealloc_driver(struct ib_device *ibdev)
{
	struct siwx_dev *dev = to_siwx_dev(ibdev);

	siwx_dev_list_del(dev);
	dev_put(dev->netdev);
	xa_destroy(&dev->qps);
	xa_destroy(&dev->mrs);
}

/* The ops whose signatures differ between kernels (siwx_compat.h) */
/* siwx_dev_create_cq, siwx_dev_reg_user_mr, siwx_dev_resize_cq_ops */
SIWX_COMPAT_CREATE_CQ(siwx_dev, siwx_create_cq)
SIWX_COMPAT_REG_USER_MR(siwx_dev, siwx_reg_user_mr)
SIWX_COMPAT_RESIZE_CQ_OPS(siwx_dev, siwx_resize_cq);

static const struct ib_device_ops siwx_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SIWX_ABI_VERSION,

	.dealloc_driver = siwx_dealloc_driver,

	.query_device = siwx_query_device,
	.query_port = siwx_query_port,
	.get_port_immutable = siwx_get_port_immutable,
	.query_gid = siwx_query_gid,
	.query_pkey = siwx_query_pkey,
	.get_dev_fw_str = siwx_get_fw_str,

	.alloc_ucontext = siwx_alloc_ucontext,
	.dealloc_ucontext = siwx_dealloc_ucontext,
	.disassociate_ucontext = siwx_disassociate_ucontext,
	.mmap = siwx_mmap,
	.mmap_free = siwx_mmap_free,
	.alloc_pd = siwx_alloc_pd,
	.dealloc_pd = siwx_dealloc_pd,

	.create_cq = siwx_dev_create_cq,
	.destroy_cq = siwx_destroy_cq,
	.poll_cq = siwx_poll_cq,
	.req_notify_cq = siwx_req_notify_cq,

	.create_qp = siwx_create_qp,
	.modify_qp = siwx_modify_qp,
	.query_qp = siwx_query_qp,
	.destroy_qp = siwx_destroy_qp,
	.post_send = siwx_post_send,
	.post_recv = siwx_post_recv,

	.create_srq = siwx_create_srq,
	.modify_srq = siwx_modify_srq,
	.query_srq = siwx_query_srq,
	.destroy_srq = siwx_destroy_srq,
	.post_srq_recv = siwx_post_srq_recv,

	.alloc_mr = siwx_alloc_mr,
	.map_mr_sg = siwx_map_mr_sg,
	.get_dma_mr = siwx_get_dma_mr,
	.reg_user_mr = siwx_dev_reg_user_mr,
	.dereg_mr = siwx_dereg_mr,
	.alloc_mw = siwx_alloc_mw,
	.dealloc_mw = siwx_dealloc_mw,

	.iw_add_ref = siwx_iw_add_ref,
	.iw_rem_ref = siwx_iw_rem_ref,
	.iw_get_qp = siwx_iw_get_qp,
	.iw_connect = siwx_iw_connect,
	.iw_accept = siwx_iw_accept,
	.iw_reject = siwx_iw_reject,
	.iw_create_listen = siwx_iw_create_listen,
	.iw_destroy_listen = siwx_iw_destroy_listen,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, siwx_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_pd, siwx_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_cq, siwx_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_qp, siwx_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, siwx_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_mw, siwx_mw, ibmw),
};

/*
 * The GID (and node GUID) come from the MAC; a link without one gets a
 * random MAC-like identity, since the CM needs a unique GID per device.
 */
static void siwx_dev_set_mac(struct siwx_dev *dev, struct net_device *netdev)
{
	if (netdev->addr_len == ETH_ALEN &&
	    !is_zero_ether_addr(netdev->dev_addr))
		ether_addr_copy(dev->mac, netdev->dev_addr);
	else
		eth_random_addr(dev->mac);
}

/*
 * A netdev unregistration that started before the device was registered
 * produced its NETDEV_UNREGISTER event while siwx_dev_find() could not
 * return the device yet. Both the event and reg_state change under rtnl,
 * so checking here catches exactly that case.
 */
static void siwx_dev_check_unregistering(struct net_device *netdev)
{
	struct siwx_dev *dev;

	rtnl_lock();
	if (netdev->reg_state != NETREG_REGISTERED) {
		dev = siwx_dev_find(netdev);
		if (dev) {
			ib_unregister_device_queued(&dev->ibdev);
			ib_device_put(&dev->ibdev);
		}
	}
	rtnl_unlock();
}

/* The ib_device's identity, capabilities and ops, from @netdev */
static void siwx_dev_init_ib(struct siwx_dev *dev, struct net_device *netdev)
{
	struct ib_device *ibdev = &dev->ibdev;

	siwx_dev_set_mac(dev, netdev);
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, dev->mac);
	ibdev->node_type = RDMA_NODE_RNIC;
	strscpy(ibdev->node_desc, "siwx soft-iWARP RNIC",
		sizeof(ibdev->node_desc));
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	/*
	 * The provider's doorbells are a zero-WR post_send and, for a QP
	 * flushed for good, a zero-WR post_recv (abi.h); ib_core leaves
	 * both commands out of the default mask.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV);
	ib_set_device_ops(ibdev, &siwx_dev_ops);
	ib_set_device_ops(ibdev, &siwx_dev_resize_cq_ops);
	memcpy(ibdev->iw_ifname, netdev->name, sizeof(ibdev->iw_ifname));
	/* TCP ports are our own; there is no iwpmd to map them */
	ibdev->iw_driver_flags = IW_F_NO_PORT_MAP;
}

int siwx_dev_add(const char *name, struct net_device *netdev)
{
	struct siwx_dev *dev;
	int rv;

	dev = ib_alloc_device(siwx_dev, ibdev);
	if (!dev)
		return -ENOMEM;
	dev->netdev = netdev;
	dev_hold(netdev);
	INIT_LIST_HEAD(&dev->list);
	/*
	 * RX takes the MR table's lock in softirq. Both tables are locked
	 * with bottom halves off: xarrays set up in one file share one
	 * lockdep class, and a QP table locked with them on made lockdep
	 * report that class as taken both ways.
	 */
	xa_init_flags(&dev->qps, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	xa_init_flags(&dev->mrs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	atomic_set(&dev->stag_key, get_random_u32());
	dev->id = atomic_inc_return(&siwx_next_dev_id);
	siwx_dev_init_ib(dev, netdev);
	rv = ib_device_set_netdev(&dev->ibdev, netdev, 1);
	if (rv)
		goto err_dealloc;
	dev->port_state = siwx_port_state(netdev);

	rv = siwx_dev_list_add(dev);
	if (rv) {
		pr_info("siwx: %s already has a siwx device\n", netdev->name);
		goto err_dealloc;
	}
	rv = ib_register_device(&dev->ibdev, name, NULL);
	if (rv) {
		pr_info("siwx: cannot register %s: %d\n", name, rv);
		goto err_dealloc;
	}
	/* From here on a concurrent unregistration may free dev */
	pr_info("siwx: %s on %s\n", name, netdev->name);
	siwx_dev_check_unregistering(netdev);
	return 0;

err_dealloc:
	/* dealloc_driver takes it off the list again */
	ib_dealloc_device(&dev->ibdev);
	return rv;
}

static void siwx_port_event(struct siwx_dev *dev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &dev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/* Called under rtnl, which serialises port_state updates. */
static void siwx_port_update(struct siwx_dev *dev, struct net_device *netdev)
{
	enum ib_port_state state = siwx_port_state(netdev);

	if (state == dev->port_state)
		return;
	dev->port_state = state;
	siwx_port_event(dev, state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
						      IB_EVENT_PORT_ERR);
}

int siwx_netdev_event(struct notifier_block *nb, unsigned long event,
		      void *ptr)
{
	struct net_device *netdev = netdev_notifier_info_to_dev(ptr);
	struct siwx_dev *dev = siwx_dev_find(netdev);

	if (!dev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		siwx_port_update(dev, netdev);
		break;
	case NETDEV_CHANGEADDR:
		siwx_dev_set_mac(dev, netdev);
		siwx_port_event(dev, IB_EVENT_GID_CHANGE);
		break;
	case NETDEV_UNREGISTER:
		/*
		 * Not synchronously: unregistration waits for users of the
		 * device, who may need rtnl, which we hold.
		 */
		ib_unregister_device_queued(&dev->ibdev);
		break;
	default:
		break;
	}
	ib_device_put(&dev->ibdev);
	return NOTIFY_OK;
}
