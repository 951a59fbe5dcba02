/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The one place where siwx.ko meets differences between the kernels it
 * builds for (Debian 12's 6.1, Debian 13's 6.12, sid's 7.2). The rest of
 * the module uses the siwx_compat_* and siwx_* helpers below and has no
 * version or feature conditionals of its own. This header uses nothing
 * of siwx: where an op's signature differs, a SIWX_COMPAT_* macro defines
 * the op, of this kernel's type, in the file that names siwx's function.
 *
 * Each entry keys on a SIWX_HAVE_<NAME> feature macro that kernel/Kbuild
 * defines when siwx_compat_probe.c compiles with SIWX_PROBE_<NAME>
 * against the target kernel's headers, so a distribution kernel that
 * backported a change gets the right side too. Each entry says which
 * upstream release changed what; one goes by the version (the lo entry).
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

/*
 * ib_device_ops.create_cq: since 6.11 ("RDMA: Pass uverbs_attr_bundle as
 * part of '.create_cq' op") it gets the whole uverbs_attr_bundle instead
 * of the ib_udata. The driver's udata is the bundle's driver_udata; kernel
 * users (__ib_create_cq) pass NULL, as they passed a NULL udata before.
 * Defines the op, @prefix_create_cq, which calls @impl with the udata.
 */
#ifdef SIWX_HAVE_CREATE_CQ_ATTRS
#define SIWX_COMPAT_CREATE_CQ(prefix, impl)				\
static int prefix##_create_cq(struct ib_cq *ibcq,			\
			      const struct ib_cq_init_attr *attr,	\
			      struct uverbs_attr_bundle *attrs)		\
{									\
	return impl(ibcq, attr, attrs ? &attrs->driver_udata : NULL);	\
}
#else
#define SIWX_COMPAT_CREATE_CQ(prefix, impl)				\
static int prefix##_create_cq(struct ib_cq *ibcq,			\
			      const struct ib_cq_init_attr *attr,	\
			      struct ib_udata *udata)			\
{									\
	return impl(ibcq, attr, udata);					\
}
#endif

/*
 * ib_device_ops.reg_user_mr: 6.17 ("RDMA/core: Introduce a DMAH object
 * and its alloc/free APIs") adds a DMA handle, a PCIe TPH steering hint
 * that user space made with alloc_dmah. siwx has no DMA device and no
 * alloc_dmah, so a handle can only be refused, as siw refuses it.
 * Defines the op, @prefix_reg_user_mr, which calls @impl.
 */
#ifdef SIWX_HAVE_REG_USER_MR_DMAH
#define SIWX_COMPAT_REG_USER_MR(prefix, impl)				\
static struct ib_mr *prefix##_reg_user_mr(struct ib_pd *ibpd, u64 start, \
					  u64 length, u64 iova,		\
					  int access,			\
					  struct ib_dmah *dmah,		\
					  struct ib_udata *udata)	\
{									\
	if (dmah)							\
		return ERR_PTR(-EOPNOTSUPP);				\
	return impl(ibpd, start, length, iova, access, udata);		\
}
#else
#define SIWX_COMPAT_REG_USER_MR(prefix, impl)				\
static struct ib_mr *prefix##_reg_user_mr(struct ib_pd *ibpd, u64 start, \
					  u64 length, u64 iova,		\
					  int access,			\
					  struct ib_udata *udata)	\
{									\
	return impl(ibpd, start, length, iova, access, udata);		\
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
 * no ib_resize_cq() for kernel ULPs. The op's name differs, so it goes in
 * a table of its own, @prefix_resize_cq_ops (ib_set_device_ops() after
 * the device's), whose op calls @impl, which serves both.
 */
#ifdef SIWX_HAVE_RESIZE_USER_CQ
#define SIWX_COMPAT_RESIZE_CQ_OPS(prefix, impl)			\
static int prefix##_resize_cq(struct ib_cq *ibcq, unsigned int cqe,	\
			      struct ib_udata *udata)			\
{									\
	return impl(ibcq, cqe > INT_MAX ? -1 : (int)cqe, udata);	\
}									\
static const struct ib_device_ops prefix##_resize_cq_ops = {		\
	.resize_user_cq = prefix##_resize_cq,				\
}
#else
#define SIWX_COMPAT_RESIZE_CQ_OPS(prefix, impl)			\
static const struct ib_device_ops prefix##_resize_cq_ops = {		\
	.resize_cq = impl,						\
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
 * rdma_cm and lo: before 6.6 ("RDMA/cma: Avoid GID lookups on iWARP
 * devices") rdma_cm finds an iWARP connection's device by a GID made of
 * the hardware address of the netdev with the local address, and lo has
 * none, so a device on lo first gives lo a random one if it has none
 * (docs/protocol-decisions.md, "One machine"). Nothing in the headers
 * shows the change: kernel/Kbuild keys this entry on the version.
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
			pr_info("siwx: %s: gave %s the hardware address %pM: before Linux 6.6, rdma_cm finds devices on %s by it\n",
				lo->name, lo->name, lo->dev_addr, lo->name);
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
 * SIWX_COMPAT_UBUF_OPS(prefix, fn) defines @prefix_ubuf_ops, with @fn as
 * the completion, which siwx_compat_ubuf_init() gives a ubuf_info.
 */
#ifdef SIWX_HAVE_UBUF_INFO_OPS
#define SIWX_COMPAT_UBUF_OPS(prefix, fn)				\
static const struct ubuf_info_ops prefix##_ubuf_ops = { .complete = fn }

static inline void siwx_compat_ubuf_init(struct ubuf_info *ubuf,
					 const struct ubuf_info_ops *ops)
{
	ubuf->ops = ops;
}
#else
struct siwx_compat_ubuf_ops {
	void (*complete)(struct sk_buff *skb, struct ubuf_info *ubuf,
			 bool zerocopy_success);
};

#define SIWX_COMPAT_UBUF_OPS(prefix, fn)				\
static const struct siwx_compat_ubuf_ops prefix##_ubuf_ops = {		\
	.complete = fn,							\
}

static inline void
siwx_compat_ubuf_init(struct ubuf_info *ubuf,
		      const struct siwx_compat_ubuf_ops *ops)
{
	ubuf->callback = ops->complete;
}
#endif

/*
 * Zero-copy sends fill TCP's skbs themselves (msghdr.sg_from_iter, as
 * io_uring's zero-copy send does). The callback of 6.1 takes the socket
 * and charges it the octets added; by 6.12 it had lost the socket, and
 * TCP charges the skb's growth in truesize itself. Defines the callback,
 * @prefix_sg_from_iter, which calls @fill(skb, from, length).
 */
#ifdef SIWX_HAVE_SG_FROM_ITER_SKB
#define SIWX_COMPAT_SG_FROM_ITER(prefix, fill)				\
static int prefix##_sg_from_iter(struct sk_buff *skb,			\
				 struct iov_iter *from, size_t length)	\
{									\
	return fill(skb, from, length);					\
}
#else
#define SIWX_COMPAT_SG_FROM_ITER(prefix, fill)				\
static int prefix##_sg_from_iter(struct sock *sk, struct sk_buff *skb,	\
				 struct iov_iter *from, size_t length)	\
{									\
	unsigned int before = skb->truesize;				\
	int rv = fill(skb, from, length);				\
									\
	sk_wmem_queued_add(sk, skb->truesize - before);			\
	if (!skb_zcopy_pure(skb))					\
		sk_mem_charge(sk, skb->truesize - before);		\
	return rv;							\
}
#endif

/*
 * crc32c(): up to 6.13 it is libcrc32c's, which wraps the crypto API's
 * "crc32c" hash and takes an unsigned int length (the probe: the CRC
 * library's own, sid's, takes a size_t). Each call first zeroes a
 * descriptor of HASH_MAX_DESCSIZE, about 390 octets, on the stack (Debian
 * builds with INIT_STACK_ALL_ZERO), and MPA makes two or three calls per
 * FPDU at each end. There siwx holds the hash itself and updates it
 * through a descriptor of the size it needs. Where crc32c() is the CRC
 * library's, siwx calls it as it is.
 */
#ifdef SIWX_HAVE_LIBCRC32C
#include <crypto/hash.h>

/* The largest hash state taken: crc32c's is its 32-bit register */
#define SIWX_COMPAT_CRC32C_STATE 8

struct siwx_compat_crc32c {
	struct crypto_shash *tfm;
};

static inline int siwx_compat_crc32c_get(struct siwx_compat_crc32c *c)
{
	struct crypto_shash *tfm = crypto_alloc_shash("crc32c", 0, 0);

	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	if (crypto_shash_descsize(tfm) > SIWX_COMPAT_CRC32C_STATE) {
		crypto_free_shash(tfm);
		return -EINVAL;
	}
	c->tfm = tfm;
	return 0;
}

static inline void siwx_compat_crc32c_put(struct siwx_compat_crc32c *c)
{
	crypto_free_shash(c->tfm);
}

/* crc32c()'s raw register in and out, as libcrc32c's own */
static inline u32 siwx_compat_crc32c(const struct siwx_compat_crc32c *c,
				     u32 crc, const void *buf, size_t len)
{
	char raw[sizeof(struct shash_desc) + SIWX_COMPAT_CRC32C_STATE]
		__aligned(__alignof__(struct shash_desc));
	struct shash_desc *desc = (struct shash_desc *)raw;
	u32 *state = shash_desc_ctx(desc);

	desc->tfm = c->tfm;
	*state = crc;
	/* crc32c's update cannot fail (libcrc32c BUG()s if it did) */
	crypto_shash_update(desc, buf, len);
	return *state;
}
#else
#include <linux/crc32c.h>

struct siwx_compat_crc32c {
};

static inline int siwx_compat_crc32c_get(struct siwx_compat_crc32c *c)
{
	return 0;
}

static inline void siwx_compat_crc32c_put(struct siwx_compat_crc32c *c)
{
}

static inline u32 siwx_compat_crc32c(const struct siwx_compat_crc32c *c,
				     u32 crc, const void *buf, size_t len)
{
	return crc32c(crc, buf, len);
}
#endif

#endif /* SIWX_COMPAT_H */
