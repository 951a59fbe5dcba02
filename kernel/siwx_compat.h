/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The one place where siwx.ko meets differences between the kernels it
 * builds for (Debian 12's 6.1, Debian 13's 6.12, sid's 7.2). The rest of
 * the module calls the siwx_compat_* and siwx_* helpers below and has no
 * version or feature conditionals of its own.
 *
 * Each entry keys on a SIWX_HAVE_<NAME> feature macro that kernel/Kbuild
 * defines when kernel/siwx_compat_probe.c compiles with SIWX_PROBE_<NAME>
 * against the target kernel's headers, so a distribution kernel that
 * backported a change gets the right side too. Each entry says which
 * upstream release changed what. One entry, siwx_compat_lo_hwaddr(), is
 * about a change of ib_core's behaviour that left no trace in the headers:
 * its macro alone comes from the kernel's version.
 */
#ifndef SIWX_COMPAT_H
#define SIWX_COMPAT_H

#include <linux/err.h>
#include <linux/etherdevice.h>
#include <linux/net.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/socket.h>
#include <linux/uio.h>
#include <net/sock.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "siwx.h"

/*
 * ib_device_ops.create_cq: since 6.11 ("RDMA: Pass uverbs_attr_bundle as
 * part of '.create_cq' op") it gets the whole uverbs_attr_bundle instead
 * of the ib_udata. The driver's udata is the bundle's driver_udata, the
 * same one the write and ioctl paths filled in before; kernel users
 * (__ib_create_cq) pass NULL, as they passed a NULL udata before.
 */
#ifdef SIWX_HAVE_CREATE_CQ_ATTRS
static inline int siwx_compat_create_cq(struct ib_cq *ibcq,
					const struct ib_cq_init_attr *attr,
					struct uverbs_attr_bundle *attrs)
{
	return siwx_create_cq(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}
#else
static inline int siwx_compat_create_cq(struct ib_cq *ibcq,
					const struct ib_cq_init_attr *attr,
					struct ib_udata *udata)
{
	return siwx_create_cq(ibcq, attr, udata);
}
#endif

/*
 * ib_device_ops.reg_user_mr: 6.17 ("RDMA/core: Introduce a DMAH object
 * and its alloc/free APIs", "IB: Extend UVERBS_METHOD_REG_MR to get DMAH")
 * adds a DMA handle, a PCIe TPH steering hint (CPU id, memory type) that
 * user space created with alloc_dmah and passes with the ioctl REG_MR.
 * siwx has no DMA device and no alloc_dmah, so a handle can only be
 * refused, as siw refuses it.
 */
#ifdef SIWX_HAVE_REG_USER_MR_DMAH
static inline struct ib_mr *
siwx_compat_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length, u64 iova,
			int access, struct ib_dmah *dmah,
			struct ib_udata *udata)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return siwx_reg_user_mr(ibpd, start, length, iova, access, udata);
}
#else
static inline struct ib_mr *
siwx_compat_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length, u64 iova,
			int access, struct ib_udata *udata)
{
	return siwx_reg_user_mr(ibpd, start, length, iova, access, udata);
}
#endif

/*
 * Pinning a user MR: 7.2 ("RDMA/umem: Rename ib_umem_get() to
 * ib_umem_get_va()") renames ib_umem_get(). The new name pins the same
 * range (addr, size, access) the same way: umem->address and ->length are
 * addr and size, the scatterlist starts at addr's page and
 * ib_umem_offset() is addr's offset in it. New in 7.2 on that path, and
 * not reached by siwx: -EOPNOTSUPP for devices that bounce DMA in a
 * confidential-computing guest (only devices with a DMA device).
 */
static inline struct ib_umem *siwx_umem_get(struct ib_device *ibdev,
					    unsigned long addr, size_t size,
					    int access)
{
#ifdef SIWX_HAVE_IB_UMEM_GET_VA
	return ib_umem_get_va(ibdev, addr, size, access);
#else
	return ib_umem_get(ibdev, addr, size, access);
#endif
}

/*
 * kernel_bind() and kernel_connect(): 6.19 ("net: Introduce struct
 * sockaddr_unsized" and the conversions after it) changes the address
 * argument to struct sockaddr_unsized *; only the pointer type changed,
 * the length still says how much of the address is valid.
 */
#ifdef SIWX_HAVE_SOCKADDR_UNSIZED
#define SIWX_SOCKADDR(ss) ((struct sockaddr_unsized *)(ss))
#else
#define SIWX_SOCKADDR(ss) ((struct sockaddr *)(ss))
#endif

static inline int siwx_kernel_bind(struct socket *sock,
				   struct sockaddr_storage *addr, int len)
{
	return kernel_bind(sock, SIWX_SOCKADDR(addr), len);
}

static inline int siwx_kernel_connect(struct socket *sock,
				      struct sockaddr_storage *addr, int len,
				      int flags)
{
	return kernel_connect(sock, SIWX_SOCKADDR(addr), len, flags);
}

/*
 * ib_device_ops.resize_cq: newer kernels (7.2 checked; not 6.12) have
 * resize_user_cq instead, for user CQs only, with an unsigned count, and
 * no ib_resize_cq() for kernel ULPs. siwx_resize_cq() serves both. The
 * op's name differs, so these ops join the device's after siwx_dev_ops.
 */
#ifdef SIWX_HAVE_RESIZE_USER_CQ
static inline int siwx_compat_resize_cq(struct ib_cq *ibcq, unsigned int cqe,
					struct ib_udata *udata)
{
	return siwx_resize_cq(ibcq, cqe > INT_MAX ? -1 : (int)cqe, udata);
}

static inline void siwx_compat_set_ops(struct ib_device *ibdev)
{
	static const struct ib_device_ops ops = {
		.resize_user_cq = siwx_compat_resize_cq,
	};

	ib_set_device_ops(ibdev, &ops);
}
#else
static inline void siwx_compat_set_ops(struct ib_device *ibdev)
{
	static const struct ib_device_ops ops = {
		.resize_cq = siwx_resize_cq,
	};

	ib_set_device_ops(ibdev, &ops);
}
#endif

/*
 * Remote Flush rights, IB_ACCESS_FLUSH_GLOBAL and _PERSISTENT: named since
 * 6.2 ("RDMA: Extend RDMA kernel verbs ABI to support flush"), bits 8 and
 * 9 of the access flags as in the uverbs ABI (IB_UVERBS_ACCESS_FLUSH_*).
 * 6.1's uverbs passes a QP's access flags from user space unchanged, so
 * those bits can come there too.
 */
#ifdef SIWX_HAVE_IB_ACCESS_FLUSH
#define SIWX_IB_ACCESS_FLUSH	(IB_ACCESS_FLUSH_GLOBAL | \
				 IB_ACCESS_FLUSH_PERSISTENT)
#else
#define SIWX_IB_ACCESS_FLUSH	(BIT(8) | BIT(9))
#endif

/*
 * rdma_cm and the loopback netdev. Before 6.6 ("RDMA/cma: Avoid GID
 * lookups on iWARP devices", 2023) rdma_cm finds the device of an iWARP
 * connection, at both ends, by a GID made of the hardware address of the
 * netdev that owns the connection's local address (cma_iw_acquire_dev(),
 * cma_acquire_dev_by_src_ip()). lo's address is all zeros, a GID ib_core
 * never stores, so every connection over lo (127.0.0.0/8, ::1) is
 * rejected, whichever iWARP driver carries it; Debian 12's 6.1 (checked
 * up to 6.1.192) is such a kernel. lo takes a hardware address as an
 * Ethernet device does, while up (eth_mac_addr(), IFF_LIVE_ADDR_CHANGE;
 * NETDEV_CHANGEADDR flushes its neighbours), and a siwx device's GID is
 * its netdev's address (siwx_dev_set_mac()): then the lookup finds the
 * device on lo. So on these kernels a siwx device added on lo first gives
 * lo a random locally administered address if it has none, and says so.
 * Nothing else uses lo's address; it stays when the device goes (an
 * all-zero address cannot be set back through the same call). Since 6.6
 * rdma_cm matches an iWARP port by the netdev's ifindex and lo is left as
 * it is (6.12 and 7.2 checked). The change is inside ib_core and nothing
 * in the headers shows it, so kernel/Kbuild defines
 * SIWX_HAVE_CMA_IWARP_IFINDEX by the kernel's version, the one entry that
 * goes by version (a kernel that backported the change gets an address on
 * lo it does not need, and works either way); docs/protocol-decisions.md
 * has the path.
 */
#ifdef SIWX_HAVE_CMA_IWARP_IFINDEX
static inline int siwx_compat_lo_hwaddr(struct net_device *lo)
{
	return 0;
}
#else
static inline int siwx_compat_lo_hwaddr(struct net_device *lo)
{
	struct sockaddr sa = { .sa_family = lo->type };
	int rv = 0;

	rtnl_lock();
	if (lo->addr_len == ETH_ALEN && is_zero_ether_addr(lo->dev_addr)) {
		eth_random_addr((u8 *)sa.sa_data);
		rv = dev_set_mac_address(lo, &sa, NULL);
		if (!rv)
			pr_info("siwx: %s: gave %s the hardware address %pM: before Linux 6.6, rdma_cm finds the RDMA device of a connection over %s by that address, and %s had none\n",
				lo->name, lo->name, lo->dev_addr, lo->name,
				lo->name);
	}
	rtnl_unlock();
	return rv;
}
#endif

/*
 * Pages to TCP by reference (siwx_tx_push of the CRC stage): since 6.5
 * ("net: Declare MSG_SPLICE_PAGES internal sendmsg() flag", then "tcp:
 * Support MSG_SPLICE_PAGES") a sendmsg flag, which makes TCP take
 * references on the bvec's pages instead of copying them; 6.5 also
 * removed kernel_sendpage() ("net: Kill sendpage"). Before, kernel_sendpage()
 * page by page, with MSG_SENDPAGE_NOTLAST on all but the last so that
 * TCP does not push between them. The probe is for kernel_sendpage(), not
 * the flag: Debian's 6.1 defines MSG_SPLICE_PAGES (backported for other
 * protocols) while its TCP ignores the flag and copies. Either way like
 * sock_sendmsg(): octets sent (the iterator advanced by them) or an error.
 */
#ifndef SIWX_HAVE_KERNEL_SENDPAGE
static inline int siwx_compat_send_pages(struct socket *sock,
					 struct msghdr *msg)
{
	msg->msg_flags |= MSG_SPLICE_PAGES;
	return sock_sendmsg(sock, msg);
}
#else
static inline int siwx_compat_send_pages(struct socket *sock,
					 struct msghdr *msg)
{
	const struct bio_vec *bv = msg->msg_iter.bvec;
	size_t skip = msg->msg_iter.iov_offset;
	size_t n = min_t(size_t, bv->bv_len - skip, msg_data_left(msg));
	int flags = msg->msg_flags;
	int rv;

	if (n < msg_data_left(msg))
		flags |= MSG_MORE | MSG_SENDPAGE_NOTLAST;
	rv = kernel_sendpage(sock, bv->bv_page, bv->bv_offset + skip, n,
			     flags);
	if (rv > 0)
		iov_iter_advance(&msg->msg_iter, rv);
	return rv;
}
#endif

/*
 * Zero-copy sends (siwx_zc.c): the ubuf_info's completion. Since 6.10
 * ("net: extend ubuf_info callback to ops structure") it is ops->complete
 * (with an optional ops->link_skb, which siwx leaves out: an skb then
 * carries one WR's ubuf_info only); before, the callback pointer itself.
 * The function is the same, and so is dropping a reference: calling it,
 * which does the counting (net_zcopy_put()'s contract, with no skb).
 */
void siwx_zc_complete(struct sk_buff *skb, struct ubuf_info *ubuf,
		      bool zerocopy_success);

#ifdef SIWX_HAVE_UBUF_INFO_OPS
static inline void siwx_compat_ubuf_init(struct ubuf_info *ubuf)
{
	static const struct ubuf_info_ops ops = {
		.complete = siwx_zc_complete,
	};

	ubuf->ops = &ops;
}
#else
static inline void siwx_compat_ubuf_init(struct ubuf_info *ubuf)
{
	ubuf->callback = siwx_zc_complete;
}
#endif

static inline void siwx_compat_ubuf_put(struct ubuf_info *ubuf)
{
	siwx_zc_complete(NULL, ubuf, true);
}

/*
 * Zero-copy sends fill TCP's skbs themselves (msghdr.sg_from_iter, as
 * io_uring's zero-copy send does), charging the send buffer the octets
 * they add (siwx_zc_fill_skb()). The callback of 6.1 takes the socket
 * and charges it; by 6.12 it had lost the socket, and TCP charges the
 * skb's growth in truesize itself.
 */
int siwx_zc_fill_skb(struct sk_buff *skb, struct iov_iter *from,
		     size_t length);

#ifdef SIWX_HAVE_SG_FROM_ITER_SKB
static inline int siwx_compat_zc_fill(struct sk_buff *skb,
				      struct iov_iter *from, size_t length)
{
	return siwx_zc_fill_skb(skb, from, length);
}
#else
static inline int siwx_compat_zc_fill(struct sock *sk, struct sk_buff *skb,
				      struct iov_iter *from, size_t length)
{
	unsigned int before = skb->truesize;
	int rv = siwx_zc_fill_skb(skb, from, length);

	sk_wmem_queued_add(sk, skb->truesize - before);
	if (!skb_zcopy_pure(skb))
		sk_mem_charge(sk, skb->truesize - before);
	return rv;
}
#endif

#endif /* SIWX_COMPAT_H */
