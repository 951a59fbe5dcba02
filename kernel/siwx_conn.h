/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * One iWARP connection: the TCP socket, the MPA setup state of the
 * connection manager, and the data path's state of the QP bound to it
 * (TX engine, RX engine, outbound and inbound Read/Atomic queues).
 *
 * Contexts:
 *   cm_work     CM workqueue: connect + MPA exchange (active), reading
 *               the MPA Request (passive). May block on the socket.
 *   tx_work     TX workqueue: sends once the data path runs; a user's
 *               send doorbell may run the same engine in its system call
 *               (siwx_tx_doorbell). tx_mutex makes either the only
 *               sender.
 *   RX          sk_data_ready (softirq or process context, socket lock
 *               held) -> tcp_read_sock -> siwx_rx_actor.
 *   close_work  CM workqueue: stops the data path, flushes, upcalls.
 * mutex orders CM setup against close (no DISCONNECT/CLOSE before the
 * CONNECT_REPLY/ESTABLISHED upcall). rdq_lock (BH) protects orq, irq
 * and the arrays beside them, shared by TX and RX.
 */
#ifndef SIWX_CONN_H
#define SIWX_CONN_H

#include <linux/bvec.h>
#include <linux/llist.h>
#include <linux/net.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <rdma/iw_cm.h>

#include <siwx/proto/ddp.h>
#include <siwx/proto/mpa_nego.h>
#include <siwx/proto/rdq.h>
#include <siwx/proto/recv.h>
#include <siwx/proto/rx.h>
#include <siwx/proto/term.h>
#include <siwx/proto/tx.h>

#include "siwx.h"
#include "siwx_ring.h"

#define SIWX_MPA_FRAME_MAX (SIWX_MPA_RR_HDR_LEN + SIWX_MPA_MAX_PD_LEN)
/* TCP connect, MPA Request read, MPA frame sends */
#define SIWX_MPA_TIMEOUT (10 * HZ)
/*
 * An Initiator waits this long for the MPA Reply: the Responder's
 * application answers when it accepts, after whatever it does first
 * (allocating and registering its buffers: a GiB takes over 10 s in a
 * slow guest). InfiniBand's CM lets a connect wait about as long, and
 * cxgb4's MPA wait is 60 s by default.
 */
#define SIWX_MPA_REPLY_TIMEOUT (60 * HZ)
/* How long a graceful close waits for the peer's FIN (siwx_conn_linger) */
#define SIWX_CLOSE_LINGER (2 * HZ)
/*
 * A Responder waits for the Initiator's first FPDU (RFC 5044 7.1.2); with
 * no RTR agreed, an application whose server sends first (ib_write_lat)
 * would wait forever, so after this grace period it sends anyway. By then
 * the Initiator's stack has long read the Reply (siwx_tx_rtr_grace).
 */
#define SIWX_RTR_GRACE (HZ / 10)
#define SIWX_TX_BVECS 48
/*
 * The FPDUs of one message that go to TCP in one call: about one GSO
 * skb's worth, so that TCP hands the NIC few big skbs instead of one per
 * FPDU (siwx_tx_put_fpdu())
 */
#define SIWX_TX_BATCH (64 * 1024)
/* Stage pages that bvecs not yet pushed still name (siwx_tx_stage_page()) */
#define SIWX_TX_RETIRED (SIWX_TX_BATCH / PAGE_SIZE)

extern struct workqueue_struct *siwx_cm_wq;
extern struct workqueue_struct *siwx_tx_wq;
extern bool siwx_mpa_crc;
extern uint siwx_mpa_rev;
extern bool siwx_mpa_p2p;
extern uint siwx_mpa_fpdu_segs;

struct siwx_listener;

/* A scatter list the TX engine reads payload from. */
struct siwx_tx_src {
	u32 n;
	u32 idx;		/* cursor: element and offset in it */
	u32 off;
	const u8 *inl;		/* inline payload (kernel copy), or NULL */
	struct {
		struct siwx_mr *mr;
		u64 to;
		u32 len;
	} el[SIWX_MAX_SGE];
};

/*
 * The untagged receive buffer of the Send being received: its first n
 * SGEs, each checked. An SGE that failed its check ends the list, with
 * bad_sge set: only a message that reaches it fails (siwx_rx_rqe.c).
 */
struct siwx_rx_rqe {
	bool held;
	bool bad_sge;
	u64 id;
	u32 n;
	u32 lens[SIWX_MAX_SGE];
	u64 addr[SIWX_MAX_SGE];
	struct siwx_mr *mr[SIWX_MAX_SGE];
};

/* Stage pages given to TCP, oldest first (siwx_tx_pool.c) */
struct siwx_tx_pool {
	struct page **ring;		/* SIWX_TX_POOL, from the first page */
	u32 head;
	u32 n;
	u32 budget;			/* pages of the shared budget held */
	unsigned long used;		/* jiffies of the last page in or out */
	struct delayed_work idle;	/* gives it all back once idle */
};

/*
 * RX: where a tagged segment's next octet goes (siwx_rx_place.c): tagged
 * offset @to, its page (NULL: look it up in the MR) and the octets left in
 * that page from @off.
 */
struct siwx_rx_dst {
	u64 to;
	struct page *page;
	unsigned int off;
	unsigned int room;
};

struct siwx_conn {
	struct kref ref;
	struct mutex mutex;		/* CM setup vs close */
	spinlock_t lock;		/* closing, the flags below */
	struct siwx_dev *dev;
	struct socket *sock;
	struct iw_cm_id *id;		/* reference held while set */
	struct siwx_listener *listener;	/* passive, until handed to iwcm */
	struct list_head lentry;	/* in listener->pending */
	struct siwx_qp *qp;		/* reference held while set */
	struct siwx_qp *cm_qp;		/* active: the QP to bind (iwcm ref) */
	bool closing;
	bool established;		/* DISCONNECT and CLOSE are owed */
	bool abortive;
	bool term_sent;			/* TX: our Terminate is queued */
	bool replied;			/* passive: accepted or rejected */
	/* Peer-to-peer (RFC 6581): RTR owed by us, or awaited from the peer */
	bool rtr_send;			/* TX only */
	bool rtr_wait;			/* set by the CM, cleared by RX */
	bool rx_rtr;			/* RX: the message is the RTR */
	struct delayed_work rtr_grace;	/* no RTR agreed: stop waiting */

	struct work_struct cm_work;
	struct work_struct close_work;
	struct work_struct tx_work;
	struct work_struct rx_work;
	struct mutex tx_mutex;		/* held by whoever runs the engine */

	void (*saved_data_ready)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);

	/* MPA */
	struct siwx_mpa_policy pol;
	struct siwx_mpa_rr req;		/* the Request (pd into mpa_buf) */
	struct siwx_mpa_conn mpa;
	u16 ulp_ird;
	u16 ulp_ord;
	u16 ulp_pd_len;
	u8 ulp_pd[SIWX_MPA_MAX_PD_LEN];
	u8 mpa_buf[SIWX_MPA_FRAME_MAX];

	/* Outstanding Read/Atomic Requests, both directions */
	spinlock_t rdq_lock;
	struct siwx_rdq orq;
	struct siwx_rdq irq;
	bool irq_ready[SIWX_RDQ_MAX];	/* response may be sent */
	u32 irq_nready;			/* of irq_ready, how many are set */
	u64 irq_orig[SIWX_RDQ_MAX];	/* atomics: original value */
	struct siwx_sge orq_sink[SIWX_RDQ_MAX];	/* atomics: result SGE */

	/* TX (under tx_mutex) */
	bool tx_stop;
	bool tx_corked;			/* TCP may hold our last FPDU back */
	bool tx_follows;		/* the message's sequel comes next */
	/*
	 * The WR in work completes as its last FPDU goes to TCP, just
	 * before: siwx_tx_done_due(), siwx_tx_fpdu.c
	 */
	bool tx_done_due;
	u32 tx_done_pos;
	u32 tx_done_len;
	/* Completed, its last push under way: a graceful close waits */
	bool tx_owed;
	bool tx_in_syscall;		/* siwx_tx_doorbell() runs the engine */
	bool term_pending;		/* set by RX, sent by TX */
	struct siwx_term_hdr term;
	u32 mulpdu;
	u32 tx_msn[SIWX_QN_COUNT];
	u32 atomic_id;
	struct siwx_sqe sqe;		/* snapshot of the SQE in work */
	struct siwx_tx_src src;
	u8 tx_inline[SIWX_MAX_INLINE];
	u8 tx_rdmap[SIWX_TX_HDR_MAX];
	struct siwx_tx_seg seg;
	u8 tx_trailer[8];
	struct bio_vec bvec[SIWX_TX_BVECS];
	/* With MPA CRCs FPDUs are copied here, TCP takes them from here */
	struct page *tx_page;
	u32 tx_page_off;		/* its octets in use */
	struct page *tx_retired[SIWX_TX_RETIRED];
	u32 tx_nretired;
	struct siwx_tx_pool tx_pool;
	struct siwx_zc *tx_zc;		/* the WR being sent zero-copy */
	bool tx_payload_ref;		/* payload to TCP by reference */

	/* Zero-copy WRs whose pages TCP still holds (siwx_zc.c) */
	atomic_t zc_inflight;
	struct llist_head zc_done;	/* TCP let go: to complete */
	struct work_struct zc_work;
	spinlock_t zc_lock;		/* zc_detached against completing */
	bool zc_detached;		/* closing: the flush completes them */
	wait_queue_head_t zc_wq;

	/* RX (socket lock) */
	bool rx_dead;
	struct siwx_rx rx;
	struct siwx_imm_len imm;
	struct siwx_mr *rx_mr;		/* tagged target of this message */
	struct siwx_rx_dst rx_dst;	/* where its next octet goes */
	u32 rx_write_len;		/* octets of the Write so far */
	bool rx_resp_done;		/* Read Response: message complete */
	u64 rx_resp_cookie;
	u32 rx_resp_len;
	struct siwx_rx_rqe rqe;
	/* A message waits for a receive (siwx_rx_wait.c) */
	u8 rx_wait;			/* enum siwx_rx_wait_at */
	unsigned long rx_wait_end;	/* jiffies: then the Terminate */
	unsigned long rx_wait_step;	/* jiffies to the next look */
	struct delayed_work rx_wait_work;
};

/* RX publishes conn->term before the flag; TX reads it after */
static inline void siwx_set_term_pending(struct siwx_conn *conn)
{
	/* pairs with siwx_term_is_pending() */
	smp_store_release(&conn->term_pending, true);
}

static inline bool siwx_term_is_pending(struct siwx_conn *conn)
{
	/* pairs with siwx_set_term_pending() */
	return smp_load_acquire(&conn->term_pending);
}

/* siwx_conn.c */
struct siwx_conn *siwx_conn_alloc(struct siwx_dev *dev);
void siwx_conn_get(struct siwx_conn *conn);
void siwx_conn_put(struct siwx_conn *conn);
void siwx_conn_hook_sock(struct siwx_conn *conn,
			 void (*data_ready)(struct sock *sk));
bool siwx_conn_unhook_sock(struct siwx_conn *conn);
void siwx_conn_close(struct siwx_conn *conn, bool abortive);
void siwx_conn_release_sock(struct siwx_conn *conn);
int siwx_conn_bind_qp(struct siwx_conn *conn, struct siwx_qp *qp);
void siwx_conn_unbind_qp(struct siwx_conn *conn);
void siwx_conn_kick_tx(struct siwx_conn *conn);
void siwx_conn_sq_progress(struct siwx_conn *conn);
int siwx_cm_upcall(struct siwx_conn *conn, struct iw_cm_id *id,
		   enum iw_cm_event_type type, int status,
		   const struct siwx_mpa_rr *rr);

#endif /* SIWX_CONN_H */
