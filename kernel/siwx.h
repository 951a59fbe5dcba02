/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * siwx.ko internals: the verbs objects of one soft-iWARP RNIC and the
 * limits it advertises. The layout of everything user space sees is in
 * include/siwx/abi.h; this header only holds what the kernel keeps.
 */
#ifndef SIWX_H
#define SIWX_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include <siwx/abi.h>

/*
 * vendor_id of the device attributes: verbs wants an IEEE OUI, siwx has
 * none. Nonzero (rdma-core's tests require it), neither 0 nor rxe's
 * 0xffffff (SPDK takes both for rxe), and with the locally administered
 * bit set in its first octet, so no company's OUI; then "SX" in ASCII
 * (protocol-decisions.md, "What the device reports").
 */
#define SIWX_VENDOR_ID		0x025358

/*
 * Limits. Ring sizes are powers of two so that the kernel's free-running
 * positions wrap with a mask; the maxima are powers of two as well, so a
 * request up to the advertised maximum never rounds past it.
 */
#define SIWX_MAX_QP		4096
/* QP numbers are allocated cyclically below this, so they rarely repeat */
#define SIWX_MAX_QPN		0xffffff
#define SIWX_MAX_QP_WR		4096
#define SIWX_MAX_CQ		8192
#define SIWX_MAX_PD		8192
#define SIWX_MAX_MR		65536
#define SIWX_MAX_MW		65536
#define SIWX_MAX_SRQ		1024
#define SIWX_MAX_SRQ_WR		16384
/* Inbound (IRD) and outbound (ORD) RDMA Read/atomic credits per QP. */
#define SIWX_MAX_IRD		16
#define SIWX_MAX_ORD		16
/* RDMAP messages carry a 32-bit length. */
#define SIWX_MAX_MSG_SIZE	0x80000000U
/*
 * An RDMA Read Request names one data sink STag, so a Read can only
 * land in a single local SGE.
 */
#define SIWX_MAX_SGE_RD		1
/* Pages of one fast registration (alloc_mr's max_num_sg) */
#define SIWX_MAX_FR_PAGES	512

/*
 * An STag is 32 bits: the upper 24 select the memory region (index into
 * siwx_dev.mrs, never 0), the low 8 are a key that changes with every
 * registration, so that a stale STag of a reused index does not match.
 */
#define SIWX_STAG_KEY_BITS	8
#define SIWX_STAG_INDEX_MAX	((1U << (32 - SIWX_STAG_KEY_BITS)) - 1)

struct siwx_dev {
	struct ib_device ibdev;
	/*
	 * Held from creation to dealloc_driver. ib_core's own link to the
	 * netdev (ib_device_set_netdev) is not readable by drivers in 6.1.
	 */
	struct net_device *netdev;
	/* Entry in the module's device list (siwx_main.c) */
	struct list_head list;
	u32 id;
	u8 mac[ETH_ALEN];
	/* Last port state reported by an event; rtnl serialises updates */
	enum ib_port_state port_state;

	/* qp_num -> siwx_qp, for the iWARP CM's iw_get_qp() */
	struct xarray qps;
	/*
	 * STag index -> siwx_mr; BH lock: the RX path looks STags up. A
	 * memory window's index holds its binding while it is bound, else
	 * its idle placeholder (siwx_mw.c).
	 */
	struct xarray mrs;
	u32 next_qpn;
	u32 next_stag_index;
	atomic_t stag_key;
	atomic_t next_cq_id;
	/* siwx_qp.uid: never reused, unlike QP numbers */
	atomic64_t next_qp_uid;

	atomic_t num_pd;
	atomic_t num_cq;
	atomic_t num_qp;
	atomic_t num_srq;
	atomic_t num_mr;
	atomic_t num_mw;
};

struct siwx_ucontext {
	struct ib_ucontext ibuc;
};

struct siwx_pd {
	struct ib_pd ibpd;
};

struct siwx_mmap_entry;

/*
 * A ring of fixed-size elements followed by an optional control block,
 * in vmalloc_user() memory. Once a ring is published to user space its
 * memory belongs to the mmap entry, which frees it when the last
 * reference (ours, or an mmap() in progress) is gone.
 */
struct siwx_ring {
	void *buf;
	u32 num;
	u32 elem_size;
	size_t size;
	struct siwx_mmap_entry *mentry;
};

struct siwx_cq {
	struct ib_cq ibcq;
	/* Serialises producers and the kernel consumer of the ring */
	spinlock_t lock;
	struct siwx_ring ring;
	struct siwx_cqe *cqe;
	struct siwx_cq_ctrl *ctrl;
	u32 prod;
	u32 cons;
	u32 id;
};

struct siwx_srq {
	struct ib_srq ibsrq;
	/* Protects limit, armed and the consumer position (RX path) */
	spinlock_t lock;
	struct siwx_ring ring;
	struct siwx_rqe *rqe;
	u32 cons;
	u32 max_sge;
	u32 limit;
	bool armed;
	/* Kernel ULPs: producer position (siwx_post.c) */
	spinlock_t post_lock;	/* IRQ-safe: ULPs post from any context */
	u32 prod;
};

/* What the kernel remembers of an SQE it took until it completes. */
struct siwx_sq_shadow {
	u64 id;
	u32 bytes;
	u8 opcode;		/* enum siwx_wc_opcode */
	u8 status;		/* enum siwx_wc_status */
	bool signalled;
	bool done;
	/* RDMA Read with Invalidate: the local STag to invalidate */
	bool inval;
	u32 inval_stag;
};

struct siwx_conn;

struct siwx_qp {
	struct ib_qp ibqp;
	struct siwx_dev *dev;
	/* Names the QP a type 2 memory window is bound to (siwx_mw.c) */
	u64 uid;
	/*
	 * References from the iWARP CM (iw_add_ref) and, later, the data
	 * path. destroy_qp drops the initial one and waits for the rest,
	 * because ib_core frees the QP memory when destroy_qp returns.
	 */
	struct kref ref;
	struct completion released;

	/* Serialises state changes (modify_qp, destroy, the CM) */
	struct mutex state_lock;
	enum ib_qp_state state;
	int access;
	u8 ird;
	u8 ord;

	struct siwx_ring sq;
	struct siwx_sqe *sqe;
	struct siwx_sq_ctrl *sq_ctrl;
	struct siwx_ring rq;
	struct siwx_rqe *rqe;
	u32 max_send_sge;
	u32 max_recv_sge;
	bool sig_all;

	struct siwx_cq *scq;
	struct siwx_cq *rcq;
	struct siwx_srq *srq;

	/*
	 * Data path. sq_lock (BH) protects the SQ positions, the shadow
	 * entries, conn and dp_active: SQEs in [sq_done, sq_tx) are in
	 * flight, sq_tx is the next one the TX engine takes. rq_lock (BH)
	 * protects rq_pos, the RQ consumer position.
	 */
	spinlock_t sq_lock;	/* see above */
	u32 sq_tx;
	u32 sq_done;
	struct siwx_sq_shadow *sq_shadow;
	spinlock_t rq_lock;	/* see above */
	u32 rq_pos;
	struct siwx_conn *conn;
	bool dp_active;

	/* Kernel ULPs: producer positions of the rings (siwx_post.c) */
	spinlock_t post_lock;	/* IRQ-safe: ULPs post from any context */
	u32 sq_prod;
	u32 rq_prod;
};

enum siwx_mr_kind {
	SIWX_MR_USER,		/* pinned user pages (reg_user_mr) */
	SIWX_MR_DMA,		/* kernel virtual addresses (get_dma_mr) */
	SIWX_MR_FAST,		/* fast registration (alloc_mr, REG_MR) */
	SIWX_MR_WINDOW,		/* a memory window's binding (siwx_mw.c) */
};

struct siwx_mw;

struct siwx_mr {
	struct ib_mr ibmr;
	/* Lookups by STag take a reference; dereg waits for them */
	struct kref ref;
	struct completion released;
	enum siwx_mr_kind kind;
	/*
	 * STag, rights, bounds and validity change only for SIWX_MR_FAST
	 * (REG_MR, invalidation) and SIWX_MR_WINDOW (invalidation, unbind),
	 * under the xarray lock of dev->mrs.
	 */
	u32 stag;
	int access;
	bool valid;
	/* User MRs: windows bound to it; dereg fails while there are any */
	unsigned int bound_windows;
	/*
	 * SIWX_MR_WINDOW: the window (only while this binding is current),
	 * the MR it is bound to (referenced), and for a type 2 window the
	 * QP it is bound to (siwx_qp.uid; 0 for type 1).
	 */
	struct siwx_mw *mw;
	struct siwx_mr *parent;
	u64 qp_uid;
	struct ib_umem *umem;
	/* User and fast-registered memory: its pages; a DMA MR has none */
	struct page **pages;
	unsigned long npages;
	/* SIWX_MR_FAST: room in pages[], and pages set by map_mr_sg */
	unsigned long max_pages;
	unsigned long mapped;
	/*
	 * Tagged offset of the first byte and its offset in pages[]: a
	 * window shares its MR's pages[], so its offset may pass pages[0].
	 */
	u64 iova;
	u64 length;
	u64 first_offset;
};

/*
 * A memory window (alloc_mw). Unbound, its STag index in dev->mrs holds
 * @idle, which no STag matches; bound, a binding: a SIWX_MR_WINDOW of
 * its own, so that an access in progress keeps the window's bounds and
 * its MR's pages even if the window is rebound or invalidated meanwhile.
 */
struct siwx_mw {
	struct ib_mw ibmw;
	struct siwx_mr idle;
	u32 index;
};

static inline struct siwx_dev *to_siwx_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct siwx_dev, ibdev);
}

static inline struct siwx_ucontext *to_siwx_uctx(struct ib_ucontext *uc)
{
	return container_of(uc, struct siwx_ucontext, ibuc);
}

static inline struct siwx_cq *to_siwx_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct siwx_cq, ibcq);
}

static inline struct siwx_srq *to_siwx_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct siwx_srq, ibsrq);
}

static inline struct siwx_qp *to_siwx_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct siwx_qp, ibqp);
}

static inline struct siwx_mr *to_siwx_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct siwx_mr, ibmr);
}

static inline struct siwx_mw *to_siwx_mw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct siwx_mw, ibmw);
}

/* Take one of a bounded resource count; false when the limit is reached */
static inline bool siwx_count_get(atomic_t *count, int max)
{
	return atomic_add_unless(count, 1, max);
}

/*
 * The QP's references (siwx_qp.ref): iwcm's and the connection's. The
 * last one lets destroy_qp go on.
 */
static inline void siwx_qp_release(struct kref *ref)
{
	complete(&container_of(ref, struct siwx_qp, ref)->released);
}

static inline void siwx_qp_get(struct siwx_qp *qp)
{
	kref_get(&qp->ref);
}

static inline void siwx_qp_put(struct siwx_qp *qp)
{
	kref_put(&qp->ref, siwx_qp_release);
}

/*
 * The verbs entry points, by file (siwx_dev.c's dispatch table, and
 * siwx_compat.h's adaptors where the kernels' signatures differ).
 */

/* siwx_dev.c */
int siwx_dev_add(const char *name, struct net_device *netdev);
int siwx_netdev_event(struct notifier_block *nb, unsigned long event,
		      void *ptr);

/* siwx_dev_list.c: the module's devices */
int siwx_dev_list_add(struct siwx_dev *dev);
void siwx_dev_list_del(struct siwx_dev *dev);
struct siwx_dev *siwx_dev_find(struct net_device *netdev);
bool siwx_dev_on_loopback(void);
void siwx_dev_remove_all(void);

/* siwx_query.c */
int siwx_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata);
int siwx_query_port(struct ib_device *ibdev, u32 port,
		    struct ib_port_attr *attr);
int siwx_get_port_immutable(struct ib_device *ibdev, u32 port,
			    struct ib_port_immutable *imm);
int siwx_query_gid(struct ib_device *ibdev, u32 port, int index,
		   union ib_gid *gid);
int siwx_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
		    u16 *pkey);
void siwx_get_fw_str(struct ib_device *ibdev, char *str);
enum ib_port_state siwx_port_state(struct net_device *netdev);

/* siwx_ctx.c */
int siwx_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void siwx_dealloc_ucontext(struct ib_ucontext *ibuc);
void siwx_disassociate_ucontext(struct ib_ucontext *ibuc);
int siwx_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int siwx_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* siwx_cq.c */
int siwx_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata);
int siwx_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int siwx_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int siwx_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
int siwx_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

/* siwx_qp.c */
int siwx_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		   struct ib_udata *udata);
int siwx_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int siwx_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);

/* siwx_qp_state.c */
int siwx_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);

/* siwx_post.c */
int siwx_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int siwx_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);
int siwx_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
void siwx_qp_doorbell(struct siwx_qp *qp, bool in_syscall);

/* siwx_srq.c */
int siwx_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *attr,
		    struct ib_udata *udata);
int siwx_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int siwx_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int siwx_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);

/* siwx_mr.c */
struct ib_mr *siwx_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *siwx_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata);
int siwx_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *siwx_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg);
int siwx_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
int siwx_mr_fast_reg(struct siwx_qp *qp, u32 stag, int access);

/* siwx_mw.c */
int siwx_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int siwx_dealloc_mw(struct ib_mw *ibmw);
int siwx_mw_bind(struct siwx_qp *qp, const struct siwx_sqe *sqe);

/* siwx_iwcm.c */
void siwx_iw_add_ref(struct ib_qp *ibqp);
void siwx_iw_rem_ref(struct ib_qp *ibqp);
struct ib_qp *siwx_iw_get_qp(struct ib_device *ibdev, int qpn);

/* siwx_cm.c */
int siwx_iw_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param);
int siwx_iw_accept(struct iw_cm_id *id, struct iw_cm_conn_param *param);
int siwx_iw_reject(struct iw_cm_id *id, const void *pdata, u8 pdata_len);
int siwx_iw_create_listen(struct iw_cm_id *id, int backlog);
int siwx_iw_destroy_listen(struct iw_cm_id *id);

/* siwx_conn.c: a QP leaving RTS closes its connection */
void siwx_qp_disconnect(struct siwx_qp *qp, bool abortive);
int siwx_wq_init(void);
void siwx_wq_exit(void);

/* siwx_crc32c.c */
int siwx_crc32c_init(void);
void siwx_crc32c_exit(void);

/* siwx_objects.c: module-wide counts of our own objects (debugfs) */
struct siwx_objects {
	atomic_t conns;
	atomic_t listeners;
	atomic64_t pinned_pages;
	/* the budget the stage's pools hold, in pages (siwx_tx_pool.c) */
	atomic_long_t tx_pool_taken;
};

extern struct siwx_objects siwx_objects;
void siwx_objects_init(void);
void siwx_objects_exit(void);

/* siwx_copies.c: payload copies and CRC passes, per CPU (debugfs) */
struct siwx_copies {
	u64 tx_payload;
	u64 tx_copied_siwx;
	u64 tx_copied_tcp;
	u64 tx_crc;
	u64 tx_crc_fused;
	u64 tx_zerocopy;
	u64 tx_zerocopy_copied;
	u64 rx_payload;
	u64 rx_copied_siwx;
	u64 rx_crc;
	u64 rx_crc_fused;
	u64 tx_stage_new;
	u64 tx_stage_reused;
	u64 tx_fpdus;
};

DECLARE_PER_CPU(struct siwx_copies, siwx_copies);
#define siwx_copies_add(field, n) this_cpu_add(siwx_copies.field, (n))
struct dentry;
void siwx_copies_init(struct dentry *dir);

#endif /* SIWX_H */
