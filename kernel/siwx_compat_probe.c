// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Kernel API probes for siwx_compat.h; never part of siwx.ko. kernel/Kbuild
 * compiles this file once per probe, with SIWX_PROBE_<NAME> defined, the
 * target kernel's flags and -Werror, and defines SIWX_HAVE_<NAME> for the
 * module's build when it compiles. Each probe takes the address of the
 * kernel's function or op with the newer type, so an older kernel's type
 * is a type mismatch, an error. LIBCRC32C, the one probe of an older
 * API, takes crc32c()'s address with the older type.
 */
#include <linux/crc32c.h>
#include <linux/net.h>
#include <linux/skbuff.h>
#include <linux/socket.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/* Named here so that a kernel without them fails on the type alone */
struct ib_dmah;
struct sockaddr_unsized;

#ifdef SIWX_PROBE_CREATE_CQ_ATTRS
int siwx_probe_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			 struct uverbs_attr_bundle *attrs);
const struct ib_device_ops siwx_probe_ops = {
	.create_cq = siwx_probe_create_cq,
};
#endif

#ifdef SIWX_PROBE_REG_USER_MR_DMAH
struct ib_mr *siwx_probe_reg_user_mr(struct ib_pd *ibpd, u64 start,
				     u64 length, u64 iova, int access,
				     struct ib_dmah *dmah,
				     struct ib_udata *udata);
const struct ib_device_ops siwx_probe_ops = {
	.reg_user_mr = siwx_probe_reg_user_mr,
};
#endif

#ifdef SIWX_PROBE_IB_UMEM_GET_VA
struct ib_umem *(*const siwx_probe_umem_get)(struct ib_device *ibdev,
					     unsigned long addr, size_t size,
					     int access) = ib_umem_get_va;
#endif

#ifdef SIWX_PROBE_SOCKADDR_UNSIZED
int (*const siwx_probe_bind)(struct socket *sock,
			     struct sockaddr_unsized *addr,
			     int len) = kernel_bind;
int (*const siwx_probe_connect)(struct socket *sock,
				struct sockaddr_unsized *addr, int len,
				int flags) = kernel_connect;
#endif

#ifdef SIWX_PROBE_RESIZE_USER_CQ
int siwx_probe_resize_cq(struct ib_cq *ibcq, unsigned int cqe,
			 struct ib_udata *udata);
const struct ib_device_ops siwx_probe_ops = {
	.resize_user_cq = siwx_probe_resize_cq,
};
#endif

#ifdef SIWX_PROBE_KERNEL_SENDPAGE
int (*const siwx_probe_sendpage)(struct socket *sock, struct page *page,
				 int offset, size_t size,
				 int flags) = kernel_sendpage;
#endif

#ifdef SIWX_PROBE_SG_FROM_ITER_SKB
int siwx_probe_fill(struct sk_buff *skb, struct iov_iter *from, size_t length);
const struct msghdr siwx_probe_msg = {
	.sg_from_iter = siwx_probe_fill,
};
#endif

#ifdef SIWX_PROBE_UBUF_INFO_OPS
const struct ubuf_info_ops siwx_probe_ubuf_ops = {
	.complete = NULL,
};
#endif

#ifdef SIWX_PROBE_IB_ACCESS_FLUSH
const int siwx_probe_access_flush = IB_ACCESS_FLUSH_GLOBAL |
				    IB_ACCESS_FLUSH_PERSISTENT;
#endif

/* The one probe of an older API: crc32c() with an unsigned int length */
#ifdef SIWX_PROBE_LIBCRC32C
u32 (*const siwx_probe_crc32c)(u32 crc, const void *address,
			       unsigned int length) = crc32c;
#endif
