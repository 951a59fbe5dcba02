/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * The siwx kernel/provider ABI: udata of the verbs commands and the layout
 * of the queues that siwx.ko and libsiwx share through mmap.
 *
 * Queues are rings of fixed-size elements. Ownership of an element moves
 * with its SIWX_*_VALID flag: the producer fills the element, then sets
 * the flag with release semantics; the consumer reads the flag with
 * acquire semantics, uses the element, then clears the flag (release).
 * No indices are shared; each side keeps its own position.
 *
 *   SQ:  provider produces, kernel consumes. The kernel TX engine sets
 *        siwx_sq_ctrl.tx_active while it works the queue; before it goes
 *        idle, or waits with every element holding a WR in flight, it
 *        clears the word, issues a full barrier and looks at the next
 *        element once more. The provider, after publishing WQEs, issues
 *        a full barrier and rings the doorbell (a zero-WR post_send on
 *        the command fd) only if tx_active is clear.
 *   RQ, SRQ: provider produces, kernel consumes. The kernel sets
 *        siwx_sq_ctrl.rq_doorbell non-zero when it wants to hear of the
 *        next receive, and then issues a full barrier and looks at the RQ:
 *        SIWX_RQ_DB_FLUSH once a QP is in ERROR with its connection gone
 *        (it flushes the RQ), SIWX_RQ_DB_WAIT while a message that found
 *        no receive waits for one (recv_wait_ms). The provider, after
 *        publishing RQEs, issues a full barrier and, if rq_doorbell is
 *        non-zero, rings the receive doorbell (a zero-WR post_recv), so a
 *        receive posted to a dead QP completes with a flush error too,
 *        and a waiting message is placed without delay.
 *        An SQ or RQ element returns to the provider (its flag clears)
 *        before the work request's completion is posted.
 *   CQ:  kernel produces, provider consumes. siwx_cq_ctrl.notify holds
 *        the armed state that ibv_req_notify_cq() writes.
 *
 * Every queue's mmap area is its element array followed by its control
 * block, at the offset the create response gives.
 */
#ifndef SIWX_ABI_H
#define SIWX_ABI_H

#include <linux/types.h>

/*
 * Reported as the device's uverbs ABI version; the provider checks it, so
 * a provider and a module of different layouts refuse each other.
 * 2: a CQE carries its completion time (ts_ns), the CQ's control block
 *    the wall clock's offset.
 */
#define SIWX_ABI_VERSION 2

/* Every siwx device name starts with this; libsiwx matches on it. */
#define SIWX_DEV_NAME_PREFIX "siwx"

#define SIWX_MAX_SGE 6
/* Inline payload reuses the SGE array of the SQE. */
#define SIWX_MAX_INLINE (SIWX_MAX_SGE * 16)
/* RFC 7306 Immediate Data is 8 octets. */
#define SIWX_IMM_LEN 8
/*
 * The largest CQ ring (max_cqe); the provider reserves address space for
 * one, so that a resized ring stays where the old one was. 2^20 CQEs
 * (40 MiB): libfabric's ofi_rxm asks for 256 x FI_UNIVERSE_SIZE entries
 * (262,144 by default) and up to 4096 peers fit; siw admits 3,276,800.
 */
#define SIWX_MAX_CQE 1048576

struct siwx_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* siwx_sqe.flags, siwx_rqe.flags */
enum {
	SIWX_WQE_VALID = 1 << 0,
	SIWX_WQE_INLINE = 1 << 1,
	SIWX_WQE_SIGNALLED = 1 << 2,
	SIWX_WQE_SOLICITED = 1 << 3,
	SIWX_WQE_FENCE = 1 << 4,	/* wait for prior Reads/atomics */
	SIWX_WQE_IMM_FULL = 1 << 5,	/* imm[] holds all 8 octets */
};

/*
 * The operands of a Bind Memory Window SQE (IB_UVERBS_WR_BIND_MW, types 1
 * and 2, no SGEs; rkey is the window's new STag, its index and the new
 * key, and raddr its first tagged offset). They lie over the atomic
 * operands, which a bind has none of, at the offsets the bind used before
 * its fields had names: the layout, and SIWX_ABI_VERSION, are unchanged.
 * Kernel ULPs' IB_WR_REG_MR uses access too (siwx.ko's own SQEs only).
 */
struct siwx_sqe_bind {
	__aligned_u64 length;		/* the window's length; 0: unbind */
	__aligned_u64 access;		/* its rights (IB_ACCESS_*) */
	__aligned_u64 mr_lkey;		/* the MR it is bound to */
	__aligned_u64 reserved;
};

/*
 * Send queue element. opcode is an enum ib_uverbs_wr_opcode value
 * (<rdma/ib_user_verbs.h>); the plain verbs atomics are sent with the
 * masks RFC 7306 gives them (FetchAdd: add mask 0; CmpSwap: all ones),
 * the MASKED_ variants with the masks given here.
 */
struct siwx_sqe {
	__aligned_u64 id;		/* wr_id */
	__u16 flags;
	__u8 num_sge;
	__u8 opcode;
	__u32 rkey;			/* remote STag; invalidate STag */
	__aligned_u64 raddr;		/* remote tagged offset */
	__u8 imm[SIWX_IMM_LEN];		/* Immediate Data, wire order */
	union {
		struct {			/* the atomics (RFC 7306) */
			__aligned_u64 add_swap;	/* Add Data / Swap Data */
			__aligned_u64 add_swap_mask;
			__aligned_u64 compare;
			__aligned_u64 compare_mask;
		};
		struct siwx_sqe_bind bind;	/* IB_UVERBS_WR_BIND_MW */
	};
	/*
	 * With SIWX_WQE_INLINE, num_sge carries the inline payload length in
	 * bytes (0..SIWX_MAX_INLINE, fits the __u8) and inline_data[] the
	 * payload; otherwise num_sge SGEs follow.
	 */
	union {
		struct siwx_sge sge[SIWX_MAX_SGE];
		__u8 inline_data[SIWX_MAX_INLINE];
	};
};

/* Receive queue element (RQ and SRQ). */
struct siwx_rqe {
	__aligned_u64 id;
	__u16 flags;
	__u8 num_sge;
	__u8 reserved[5];
	struct siwx_sge sge[SIWX_MAX_SGE];
};

/* siwx_cqe.flags */
enum {
	SIWX_CQE_VALID = 1 << 0,
	SIWX_CQE_WITH_IMM = 1 << 1,	/* imm[] is valid */
	SIWX_CQE_WITH_INV = 1 << 2,	/* inval_stag was invalidated */
	SIWX_CQE_SOLICITED = 1 << 3,
};

/* siwx_cqe.opcode: the values of enum ibv_wc_opcode. */
enum siwx_wc_opcode {
	SIWX_WC_SEND = 0,
	SIWX_WC_RDMA_WRITE = 1,
	SIWX_WC_RDMA_READ = 2,
	SIWX_WC_COMP_SWAP = 3,
	SIWX_WC_FETCH_ADD = 4,
	SIWX_WC_BIND_MW = 5,
	SIWX_WC_LOCAL_INV = 6,
	SIWX_WC_RECV = 1 << 7,
	SIWX_WC_RECV_RDMA_WITH_IMM = (1 << 7) + 1,
};

/* siwx_cqe.status: the values of enum ibv_wc_status. */
enum siwx_wc_status {
	SIWX_WC_SUCCESS = 0,
	SIWX_WC_LOC_LEN_ERR = 1,
	SIWX_WC_LOC_QP_OP_ERR = 2,
	SIWX_WC_LOC_PROT_ERR = 4,
	SIWX_WC_WR_FLUSH_ERR = 5,
	SIWX_WC_MW_BIND_ERR = 6,
	SIWX_WC_BAD_RESP_ERR = 7,
	SIWX_WC_LOC_ACCESS_ERR = 8,
	SIWX_WC_REM_INV_REQ_ERR = 9,
	SIWX_WC_REM_ACCESS_ERR = 10,
	SIWX_WC_REM_OP_ERR = 11,
	SIWX_WC_FATAL_ERR = 19,
	SIWX_WC_GENERAL_ERR = 21,
};

struct siwx_cqe {
	__aligned_u64 id;
	__u16 flags;
	__u8 opcode;
	__u8 status;
	__u32 bytes;
	__u32 qp_num;
	__u32 inval_stag;
	__u8 imm[SIWX_IMM_LEN];		/* Immediate Data, wire order */
	/*
	 * When the kernel wrote the CQE: CLOCK_MONOTONIC in ns. The device
	 * reports a 1 GHz clock (hca_core_clock 1000000 kHz) of 64 bits, so
	 * verbs' completion timestamp is this value as it is.
	 */
	__aligned_u64 ts_ns;
};

/* siwx_cq_ctrl.notify */
enum {
	SIWX_NOTIFY_NONE = 0,
	SIWX_NOTIFY_SOLICITED = 1,
	SIWX_NOTIFY_NEXT = 2,
};

struct siwx_cq_ctrl {
	__u32 notify;
	__u32 reserved;
	/*
	 * CLOCK_REALTIME - CLOCK_MONOTONIC in ns, as the kernel's timekeeping
	 * had it when it wrote the last CQE: a CQE's ts_ns plus this is its
	 * wall-clock time (what the provider cannot measure as exactly: its
	 * two clock readings may be far apart when it is preempted).
	 */
	__aligned_s64 wall_offset_ns;
};

struct siwx_sq_ctrl {
	__u32 tx_active;
	__u32 rq_doorbell;	/* SIWX_RQ_DB_*: ring after posting */
};

/* Why siwx_sq_ctrl.rq_doorbell asks for the receive doorbell */
#define SIWX_RQ_DB_FLUSH 1	/* receives posted now are flushed */
#define SIWX_RQ_DB_WAIT 2	/* a message waits for a receive */

/* udata of the verbs commands (all responses are kernel -> provider). */

struct siwx_uresp_alloc_ctx {
	__u32 dev_id;
	__u32 max_inline;
};

/* Also resize_cq's: the new ring, which starts with the CQEs still held */
struct siwx_uresp_create_cq {
	__u32 cq_id;
	__u32 num_cqe;		/* ring slots, a power of two */
	__aligned_u64 cq_key;	/* mmap offset: cqe[num_cqe], siwx_cq_ctrl */
};

struct siwx_uresp_create_qp {
	__u32 qp_id;
	__u32 num_sqe;
	__u32 num_rqe;		/* 0 when the QP uses an SRQ */
	__u32 reserved;
	__aligned_u64 sq_key;	/* sqe[num_sqe], siwx_sq_ctrl */
	__aligned_u64 rq_key;	/* rqe[num_rqe] */
};

struct siwx_uresp_create_srq {
	__u32 num_rqe;
	__u32 reserved;
	__aligned_u64 srq_key;	/* rqe[num_rqe] */
};

#endif /* SIWX_ABI_H */
