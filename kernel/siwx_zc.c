// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Zero-copy sends (docs/design.md): without MPA CRCs, from zc_min octets
 * on, a Send's, Write's or Read Response's payload goes to TCP by
 * reference to the MR's pinned pages, a Send's or Write's in skbs that
 * carry our ubuf_info (MSG_ZEROCOPY with msg_ubuf). Such a WR completes
 * when the stack drops its last reference: the callback, from any
 * context, only queues the siwx_zc; zc_work completes it in SQ order. A
 * siwx_zc holds a reference on its connection; a closing connection
 * detaches after a grace period and the flush completes the rest.
 */
#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "siwx_comp.h"
#include "siwx_compat.h"
#include "siwx_zc.h"

/* Off by default: docs/performance.md has why */
static unsigned int siwx_zc_min;
module_param_named(zc_min, siwx_zc_min, uint, 0644);
MODULE_PARM_DESC(zc_min,
		 "Smallest payload sent zero-copy without MPA CRCs (octets; 0: never)");

static atomic_t siwx_zc_live = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(siwx_zc_gone);

struct siwx_zc {
	struct ubuf_info ubuf;
	struct llist_node done;
	struct siwx_conn *conn;
	u32 pos;		/* the WR's SQ position */
	u32 bytes;
	bool copied;		/* the stack copied some of it after all */
	bool failed;		/* not all sent: the flush completes the WR */
};

static void siwx_zc_work(struct work_struct *work);

void siwx_zc_conn_init(struct siwx_conn *conn)
{
	init_llist_head(&conn->zc_done);
	INIT_WORK(&conn->zc_work, siwx_zc_work);
	spin_lock_init(&conn->zc_lock);
	init_waitqueue_head(&conn->zc_wq);
}

/*
 * Whether the payload of @src, @len octets, goes by reference: from
 * zc_min octets on (0: never), a Send's or Write's, whose WR then
 * completes when TCP lets go of its pages, or a Read Response's, which
 * owes no completion. Never with MPA CRCs (which must cover exactly what
 * TCP sends, so those FPDUs are copied), and only from pinned user pages
 * (kernel ULPs' memory may be slab, which TCP must not take references
 * on).
 */
bool siwx_zc_wanted(struct siwx_conn *conn, const struct siwx_tx_src *src,
		    u32 len)
{
	unsigned int min = READ_ONCE(siwx_zc_min);
	u32 i;

	if (!min || len < min || conn->mpa.crc || src->inl)
		return false;
	for (i = 0; i < src->n; i++)
		if (src->el[i].mr->kind != SIWX_MR_USER)
			return false;
	return true;
}

/* Any context: the stack dropped a reference (or we dropped ours). */
static void siwx_zc_complete(struct sk_buff *skb, struct ubuf_info *ubuf,
			     bool zerocopy_success)
{
	struct siwx_zc *zc = container_of(ubuf, struct siwx_zc, ubuf);
	struct siwx_conn *conn = zc->conn;

	if (!zerocopy_success)
		WRITE_ONCE(zc->copied, true);
	if (!refcount_dec_and_test(&ubuf->refcnt))
		return;
	if (llist_add(&zc->done, &conn->zc_done))
		queue_work(siwx_tx_wq, &conn->zc_work);
}

/* siwx_zc_ubuf_ops */
SIWX_COMPAT_UBUF_OPS(siwx_zc, siwx_zc_complete);

/* TX: a zero-copy WR begins; its completion is now the siwx_zc's. */
struct siwx_zc *siwx_zc_start(struct siwx_conn *conn, u32 pos, u32 bytes)
{
	struct siwx_zc *zc = kzalloc(sizeof(*zc), GFP_KERNEL);

	if (!zc)
		return NULL;
	siwx_compat_ubuf_init(&zc->ubuf, &siwx_zc_ubuf_ops);
	zc->ubuf.flags = SKBFL_ZEROCOPY_FRAG | SKBFL_DONT_ORPHAN;
	refcount_set(&zc->ubuf.refcnt, 1);	/* ours, until siwx_zc_end */
	zc->pos = pos;
	zc->bytes = bytes;
	siwx_conn_get(conn);
	zc->conn = conn;
	atomic_inc(&siwx_zc_live);
	atomic_inc(&conn->zc_inflight);
	return zc;
}

/* TX: all of the WR went to TCP (@rv 0) or not; drop our reference. */
void siwx_zc_end(struct siwx_zc *zc, int rv)
{
	if (rv)
		zc->failed = true;
	siwx_zc_complete(NULL, &zc->ubuf, true);
}

/*
 * TCP's MSG_ZEROCOPY path adds @msg's bvecs to @skb through this: a
 * reference on each page, and the send buffer charged the octets added.
 * The kernel's own filler charges each piece as the whole pages it
 * touches: an FPDU's header and trailer, a few octets of a stage page, as
 * 4 KiB each, and its payload of 1.4 KiB as up to 8 KiB. The send buffer
 * then held a fraction of the octets it was sized for, and zero-copy
 * Writes ran at a quarter of copied ones (docs/performance.md).
 */
static int siwx_zc_fill_skb(struct sk_buff *skb, struct iov_iter *from,
			    size_t length)
{
	int frag = skb_shinfo(skb)->nr_frags;

	while (length && iov_iter_count(from)) {
		/* siwx_tx_push()'s bvecs, each within one page */
		const struct bio_vec *bv = from->bvec;
		size_t skip = from->iov_offset;
		size_t n = min_t(size_t, bv->bv_len - skip, length);
		u32 off = bv->bv_offset + skip;
		skb_frag_t *last = frag ? &skb_shinfo(skb)->frags[frag - 1] :
				   NULL;

		/*
		 * Extend the last fragment where this piece follows it in
		 * the same page: an FPDU's trailer and the next one's header
		 * in the stage. Not skb_can_coalesce(), which refuses every
		 * zero-copy skb (TCP's copying path writes into the pages it
		 * coalesces; these are only referenced).
		 */
		if (last && skb_frag_page(last) == bv->bv_page &&
		    skb_frag_off(last) + skb_frag_size(last) == off) {
			skb_frag_size_add(last, n);
		} else {
			if (frag == MAX_SKB_FRAGS)
				return -EMSGSIZE;
			get_page(bv->bv_page);
			skb_fill_page_desc_noacc(skb, frag++, bv->bv_page, off,
						 n);
		}
		skb->len += n;
		skb->data_len += n;
		skb->truesize += n;
		iov_iter_advance(from, n);
		length -= n;
	}
	return 0;
}

/* siwx_zc_sg_from_iter */
SIWX_COMPAT_SG_FROM_ITER(siwx_zc, siwx_zc_fill_skb)

/* TCP takes @msg's pages by reference, for @zc's WR. */
int siwx_zc_sendmsg(struct socket *sock, struct msghdr *msg,
		    struct siwx_zc *zc)
{
	msg->msg_flags |= MSG_ZEROCOPY;
	msg->msg_ubuf = &zc->ubuf;
	msg->sg_from_iter = siwx_zc_sg_from_iter;
	return sock_sendmsg(sock, msg);
}

static void siwx_zc_finish(struct siwx_conn *conn, struct siwx_zc *zc)
{
	/* Counted before the completion that lets a reader look */
	if (zc->copied)
		siwx_copies_add(tx_zerocopy_copied, zc->bytes);
	spin_lock_bh(&conn->zc_lock);
	if (!conn->zc_detached && !zc->failed)
		siwx_sq_done(conn->qp, zc->pos, SIWX_WC_SUCCESS, zc->bytes);
	spin_unlock_bh(&conn->zc_lock);
	kfree(zc);
	if (atomic_dec_and_test(&conn->zc_inflight))
		wake_up(&conn->zc_wq);
	if (atomic_dec_and_test(&siwx_zc_live))
		wake_up(&siwx_zc_gone);
}

static void siwx_zc_work(struct work_struct *work)
{
	struct siwx_conn *conn = container_of(work, struct siwx_conn,
					      zc_work);
	struct llist_node *list = llist_del_all(&conn->zc_done);
	struct siwx_zc *zc, *next;

	/* Each holds a reference on conn: the last put may free it */
	llist_for_each_entry_safe(zc, next, list, done) {
		siwx_zc_finish(conn, zc);
		siwx_conn_put(conn);
	}
}

/*
 * Closing (siwx_conn_close_work, before the flush): a graceful close
 * gives the peer @grace jiffies to acknowledge what is in flight, so
 * that those WRs complete; then late completions only free their
 * siwx_zc, and the flush completes the rest (siwx_conn_release_sock()
 * then resets a socket that still holds pages).
 */
void siwx_zc_detach(struct siwx_conn *conn, unsigned long grace)
{
	if (grace)
		wait_event_timeout(conn->zc_wq,
				   !atomic_read(&conn->zc_inflight), grace);
	flush_work(&conn->zc_work);
	spin_lock_bh(&conn->zc_lock);
	conn->zc_detached = true;
	spin_unlock_bh(&conn->zc_lock);
}

/* Module exit: the stack may still hold skbs of closed connections. */
void siwx_zc_exit(void)
{
	wait_event(siwx_zc_gone, !atomic_read(&siwx_zc_live));
}
