// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The TX engine: one work item per connection, the only sender on the
 * socket once the data path runs. Order: a Terminate, then the
 * responses the peer is owed (Read and Atomic Responses, in request
 * order), then the SQ. An FPDU's header and trailer come from the
 * connection's stage pages. Without MPA CRCs its payload is named where
 * it is, in the MR's pinned pages: TCP copies it, or takes it by
 * reference (zero-copy sends, zc_min: siwx_zc.c). With them the
 * payload is copied into the stage too, the CRC computed over that copy,
 * and TCP takes the stage's pages by reference: each payload octet is
 * copied once. The FPDUs of a message go to TCP in batches
 * (SIWX_TX_BATCH).
 *
 * Sends block (the work item sleeps while the socket is full); closing
 * shuts the socket down, which ends any send in progress.
 *
 * An FPDU goes to TCP with MSG_MORE while more is ready to follow it, so
 * that the small messages of a busy SQ share segments instead of each
 * costing a packet; what TCP still holds back is pushed whenever the
 * engine stops for now (siwx_tx_pause): idle, stalled, or waiting for
 * the peer's RTR.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/tcp.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <rdma/ib_user_verbs.h>

#include <siwx/proto/crc32c.h>
#include <siwx/sqe_op.h>

#include "siwx_compat.h"
#include "siwx_conn.h"

enum {
	SIWX_TX_IDLE,		/* no WR at the engine's position */
	SIWX_TX_FULL,		/* every slot holds a WR in flight */
	SIWX_TX_DID,
	SIWX_TX_STALL,		/* a WR waits (ORD, a fence, stopped) */
};

void siwx_tx_kick(struct siwx_conn *conn)
{
	queue_work(siwx_tx_wq, &conn->tx_work);
}

static bool siwx_tx_more(struct siwx_conn *conn);

/*
 * @nb bvecs of @len octets to TCP: copied, or with @by_ref by reference:
 * the stage's pages (siwx_tx_stage_page()), and with conn->tx_payload_ref
 * the MR's pages too (zc_min: a zero-copy WR, conn->tx_zc, or a Read
 * Response).
 */
static int siwx_tx_push(struct siwx_conn *conn, u32 nb, size_t len,
			int flags, bool by_ref)
{
	struct msghdr msg = { .msg_flags = flags | MSG_NOSIGNAL };
	int rv;

	conn->tx_corked = flags & MSG_MORE;
	/*
	 * In a system call a blocking send would end early when a signal
	 * is pending (mid-FPDU); siwx_tx_inline_ok() made sure the socket
	 * has room, so not sleeping in TCP is cheap, and in the rare case
	 * it is full after all we wait here, in steps, until closing.
	 */
	if (conn->tx_in_syscall)
		msg.msg_flags |= MSG_DONTWAIT;
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, conn->bvec, nb, len);
	while (msg_data_left(&msg)) {
		if (READ_ONCE(conn->tx_stop))
			return -ECONNRESET;
		if (!by_ref)
			rv = sock_sendmsg(conn->sock, &msg);
		else if (conn->tx_zc)
			rv = siwx_zc_sendmsg(conn->sock, &msg, conn->tx_zc);
		else
			rv = siwx_compat_send_pages(conn->sock, &msg);
		if (rv == -EAGAIN && conn->tx_in_syscall) {
			schedule_timeout_uninterruptible(1);
			continue;
		}
		if (rv <= 0)
			return rv ? rv : -EPIPE;
	}
	return 0;
}

/* The bvecs of a batch not yet pushed, and how TCP is to take them */
struct siwx_tx_vec {
	u32 nb;
	size_t len;
	bool by_ref;
	bool stage;	/* the payload too goes into the stage */
};

/* Forget what @v holds and let go of the full stage pages it named. */
static void siwx_tx_drop(struct siwx_conn *conn, struct siwx_tx_vec *v)
{
	v->nb = 0;
	v->len = 0;
	while (conn->tx_nretired)
		siwx_tx_pool_put(conn, conn->tx_retired[--conn->tx_nretired]);
}

/*
 * Push what @v holds, then let go of the stage pages its bvecs named:
 * TCP holds its own references to those it took.
 */
static int siwx_tx_flush(struct siwx_conn *conn, struct siwx_tx_vec *v,
			 int flags)
{
	int rv = 0;

	if (v->nb)
		rv = siwx_tx_push(conn, v->nb, v->len, flags, v->by_ref);
	siwx_tx_drop(conn, v);
	return rv;
}

/*
 * Push what @v holds once its bvecs are nearly used up, keeping room for
 * the pieces an FPDU's trailer may still need.
 */
static int siwx_tx_push_if_full(struct siwx_conn *conn, struct siwx_tx_vec *v)
{
	if (v->nb < SIWX_TX_BVECS - 4)
		return 0;
	return siwx_tx_flush(conn, v, MSG_MORE);
}

static void siwx_tx_add_page(struct siwx_conn *conn, struct siwx_tx_vec *v,
			     struct page *page, u32 off, u32 len)
{
	bvec_set_page(&conn->bvec[v->nb++], page, len, off);
	v->len += len;
}

/* A kernel buffer (kmalloc or vmalloc memory), page by page. */
static void siwx_tx_add_kbuf(struct siwx_conn *conn, struct siwx_tx_vec *v,
			     const u8 *buf, u32 len)
{
	while (len) {
		u32 off = offset_in_page(buf);
		u32 n = min_t(u32, len, PAGE_SIZE - off);
		struct page *page = is_vmalloc_addr(buf) ?
			vmalloc_to_page(buf) : virt_to_page(buf);

		siwx_tx_add_page(conn, v, page, off, n);
		buf += n;
		len -= n;
	}
}

/*
 * The next piece of @src's payload, at most @left octets and within one
 * page: inline octets (*@inl) or registered memory (*@page at *@poff).
 * Returns its length (the caller advances src->off by it), or 0 when
 * the source has no more or names no page (a fault).
 */
static u32 siwx_tx_src_next(struct siwx_tx_src *src, u32 left,
			    const u8 **inl, struct page **page, u32 *poff)
{
	u32 elen, n;

	while (src->idx < src->n) {
		elen = src->el[src->idx].len;
		if (src->off == elen) {
			src->idx++;
			src->off = 0;
			continue;
		}
		n = min(left, elen - src->off);
		if (src->inl) {
			*inl = src->inl + src->off;
			return n;
		}
		*inl = NULL;
		*page = siwx_mr_page(src->el[src->idx].mr,
				     src->el[src->idx].to + src->off, poff);
		return *page ? min_t(u32, n, PAGE_SIZE - *poff) : 0;
	}
	return 0;
}

/*
 * With MPA CRCs on, an FPDU is sent from a copy: the CRC must cover
 * exactly the octets TCP takes, and registered memory can change before
 * TCP has sent it (an RDMA Write that the RX path places into a region
 * the peer is reading, an application writing its send buffer): the data
 * may change, but the FPDU must stay whole, or the peer ends the
 * connection with an MPA CRC error. The copy goes into pages of the
 * connection's own, which TCP then takes by reference instead of copying
 * them again. A page is written again only once TCP has let go of it
 * (its count back to our one reference), else the pool's oldest page
 * replaces it if TCP let go of that one, or a new page
 * (siwx_tx_pool.c); a full page that bvecs not yet pushed name is kept
 * until the push, so that no bvec names a page we let go of.
 */
static int siwx_tx_stage_page(struct siwx_conn *conn, struct siwx_tx_vec *v,
			      int flags)
{
	struct page *page;
	int rv;

	/*
	 * A full page that bvecs not yet pushed name stays ours until the
	 * push (siwx_tx_flush()), so that FPDUs can go to TCP in batches
	 */
	if (v->nb && conn->tx_page) {
		if (conn->tx_nretired == SIWX_TX_RETIRED) {
			rv = siwx_tx_flush(conn, v, flags);
			if (rv)
				return rv;
		} else {
			conn->tx_retired[conn->tx_nretired++] = conn->tx_page;
			conn->tx_page = NULL;
		}
	}
	page = conn->tx_page;
	if (!page || page_ref_count(page) != 1) {
		page = siwx_tx_pool_get(conn);
		if (!page)
			return -ENOMEM;
		if (conn->tx_page)
			siwx_tx_pool_put(conn, conn->tx_page);
		conn->tx_page = page;
	}
	conn->tx_page_off = 0;
	return 0;
}

/*
 * @n octets at @src into the stage, and into the CRC when @crc. A page
 * is changed only after a push, so a run of the current page up to
 * tx_page_off that ends the bvecs not yet pushed grows in place.
 */
static int siwx_tx_stage(struct siwx_conn *conn, struct siwx_tx_vec *v,
			 const u8 *src, u32 n, u32 *crc)
{
	struct bio_vec *last;
	u32 room, k;
	u8 *dst;
	int rv;

	while (n) {
		room = conn->tx_page ? PAGE_SIZE - conn->tx_page_off : 0;
		if (!room) {
			rv = siwx_tx_stage_page(conn, v, MSG_MORE);
			if (rv)
				return rv;
			continue;
		}
		k = min(n, room);
		dst = page_address(conn->tx_page) + conn->tx_page_off;
		memcpy(dst, src, k);
		if (crc)
			*crc = siwx_crc32c(*crc, dst, k);
		last = v->nb ? &conn->bvec[v->nb - 1] : NULL;
		if (last && last->bv_page == conn->tx_page &&
		    last->bv_offset + last->bv_len == conn->tx_page_off) {
			last->bv_len += k;
			v->len += k;
		} else {
			siwx_tx_add_page(conn, v, conn->tx_page,
					 conn->tx_page_off, k);
		}
		conn->tx_page_off += k;
		src += k;
		n -= k;
	}
	return 0;
}

/*
 * One FPDU: header, @seg->payload_len octets from @src, trailer. Header
 * and trailer go into the stage; so does the payload with MPA CRCs, the
 * CRC computed over the copy, and without them while the stage keeps its
 * pages for reuse (@v->stage: a copy into pages not zeroed again, where
 * TCP's own copy would fill pages of its page_frag, new and zeroed
 * whenever its skbs still hold the last). Else the bvecs name the
 * payload where it is. TCP takes it all by reference (@v->by_ref: what
 * is staged, and a payload that goes by reference, conn->tx_payload_ref)
 * or copies it.
 *
 * The FPDUs of a message gather in @v and go to TCP in batches of about
 * SIWX_TX_BATCH octets: pushed one by one, each would leave TCP as an
 * skb of its own whenever TCP may send at once, and cost the NIC a
 * notification (a VM exit for a virtual one) per FPDU.
 */
static int siwx_tx_put_fpdu(struct siwx_conn *conn,
			    const struct siwx_tx_seg *seg,
			    struct siwx_tx_src *src, struct siwx_tx_vec *v)
{
	bool crc_on = conn->mpa.crc;
	bool stage = v->stage;
	u32 crc = SIWX_CRC32C_INIT;
	u32 *crcp = crc_on ? &crc : NULL;
	u32 left = seg->payload_len;
	size_t tlen;
	bool more;
	int rv;

	siwx_copies_add(tx_fpdus, 1);
	rv = siwx_tx_stage(conn, v, seg->hdr, seg->hdr_len, crcp);
	while (!rv && left) {
		struct page *page;
		const u8 *inl;
		u32 poff, n;
		void *va;

		n = siwx_tx_src_next(src, left, &inl, &page, &poff);
		if (!n)
			return -EFAULT;
		src->off += n;
		left -= n;
		siwx_copies_add(tx_payload, n);
		if (inl)	/* siwx_tx_src_sqe() copied it out of the SQE */
			siwx_copies_add(tx_copied_siwx, n);
		if (!stage && !inl) {
			/* By reference; of a zero-copy WR, a copy the stack
			 * makes after all is counted when it lets go
			 */
			if (v->by_ref)
				siwx_copies_add(tx_zerocopy, n);
			else
				siwx_copies_add(tx_copied_tcp, n);
			siwx_tx_add_page(conn, v, page, poff, n);
			rv = siwx_tx_push_if_full(conn, v);
			continue;
		}
		if (!stage && !v->by_ref) {
			/* tx_inline stays as it is until the push copies it */
			siwx_copies_add(tx_copied_tcp, n);
			siwx_tx_add_kbuf(conn, v, inl, n);
			rv = siwx_tx_push_if_full(conn, v);
			continue;
		}
		if (inl) {
			rv = siwx_tx_stage(conn, v, inl, n, crcp);
		} else {
			va = kmap_local_page(page);
			rv = siwx_tx_stage(conn, v, va + poff, n, crcp);
			kunmap_local(va);
		}
		/* Copied by siwx; TCP takes the copy by reference */
		siwx_copies_add(tx_copied_siwx, n);
		if (crc_on) {
			siwx_copies_add(tx_crc, n);
			siwx_copies_add(tx_crc_fused, n);
		}
	}
	if (rv)
		return rv;
	tlen = siwx_mpa_trailer(crc, seg->ulpdu_len, crc_on, conn->tx_trailer);
	rv = siwx_tx_stage(conn, v, conn->tx_trailer, tlen, NULL);
	if (rv)
		return rv;
	if (!seg->last && v->len < SIWX_TX_BATCH)
		return 0;
	more = !seg->last || conn->tx_follows || siwx_tx_more(conn);
	return siwx_tx_flush(conn, v, more ? MSG_MORE : 0);
}

/* One RDMAP message, cut into FPDUs of at most MULPDU. */
static int siwx_tx_message(struct siwx_conn *conn,
			   const struct siwx_ddp_hdr *hdr, const u8 *rdmap,
			   u32 rdmap_len, struct siwx_tx_src *src, u32 len)
{
	bool stage = conn->mpa.crc ||
		     (!conn->tx_payload_ref && siwx_tx_pool_on());
	struct siwx_tx_vec batch = {
		.by_ref = stage || conn->tx_payload_ref,
		.stage = stage,
	};
	struct siwx_tx_msg m;
	int rv;

	src->idx = 0;
	src->off = 0;
	siwx_tx_msg_init(&m, hdr, rdmap, rdmap_len, len);
	while (siwx_tx_next(&m, conn->mulpdu, &conn->seg)) {
		rv = siwx_tx_put_fpdu(conn, &conn->seg, src, &batch);
		if (rv) {
			/* The connection ends: nothing more goes to TCP */
			siwx_tx_drop(conn, &batch);
			return rv;
		}
	}
	return 0;
}

static void siwx_tx_src_put(struct siwx_tx_src *src)
{
	u32 i;

	for (i = 0; i < src->n; i++) {
		if (src->el[i].mr)
			siwx_mr_put(src->el[i].mr);
		src->el[i].mr = NULL;
	}
	src->n = 0;
	src->inl = NULL;
}

/* The SQE's payload (SGEs or inline) as a source; validates every SGE. */
static int siwx_tx_src_sqe(struct siwx_conn *conn, const struct siwx_sqe *sqe,
			   u32 *len)
{
	struct siwx_tx_src *src = &conn->src;
	enum siwx_access_fault fault;
	u64 total = 0;
	u32 i;

	memset(src, 0, sizeof(*src));
	if (sqe->flags & SIWX_WQE_INLINE) {
		if (sqe->num_sge > SIWX_MAX_INLINE)
			return -EINVAL;
		memcpy(conn->tx_inline, sqe->inline_data, sqe->num_sge);
		src->inl = conn->tx_inline;
		src->el[0].len = sqe->num_sge;
		src->n = 1;
		*len = sqe->num_sge;
		return 0;
	}
	if (sqe->num_sge > SIWX_MAX_SGE)
		return -EINVAL;
	for (i = 0; i < sqe->num_sge; i++) {
		const struct siwx_sge *sge = &sqe->sge[i];
		struct siwx_mr *mr;

		if (!sge->length)
			continue;
		mr = siwx_mr_get(conn->dev, sge->lkey);
		if (!mr)
			goto err;
		if (siwx_mr_check(conn->qp, mr, 0, sge->addr, sge->length,
				  &fault)) {
			siwx_mr_put(mr);
			goto err;
		}
		src->el[src->n].mr = mr;
		src->el[src->n].to = sge->addr;
		src->el[src->n].len = sge->length;
		src->n++;
		total += sge->length;
	}
	if (total > SIWX_MAX_MSG_SIZE) {
		siwx_tx_src_put(src);
		return -EINVAL;
	}
	*len = total;
	return 0;
err:
	siwx_tx_src_put(src);
	return -EACCES;
}

/* Local sink of a Read or an atomic result: one SGE we may write. */
static int siwx_tx_check_sink(struct siwx_conn *conn,
			      const struct siwx_sge *sge)
{
	enum siwx_access_fault fault;
	struct siwx_mr *mr;
	int rv;

	if (!sge->length)
		return 0;
	mr = siwx_mr_get(conn->dev, sge->lkey);
	if (!mr)
		return -EACCES;
	rv = siwx_mr_check(conn->qp, mr, IB_ACCESS_LOCAL_WRITE, sge->addr,
			   sge->length, &fault);
	siwx_mr_put(mr);
	return rv;
}

void siwx_sq_mark_done(struct siwx_qp *qp, u32 pos, u8 status, u32 bytes)
{
	struct siwx_sq_shadow *sh;

	spin_lock_bh(&qp->sq_lock);
	sh = siwx_sq_shadow_at(qp, pos);
	sh->status = status;
	sh->bytes = bytes;
	sh->done = true;
	spin_unlock_bh(&qp->sq_lock);
	siwx_sq_complete(qp);
}

static int siwx_tx_imm(struct siwx_conn *conn, const struct siwx_sqe *sqe)
{
	struct siwx_ddp_hdr h = {
		.opcode = sqe->flags & SIWX_WQE_SOLICITED ?
			  SIWX_OP_IMM_SE : SIWX_OP_IMM,
		.qn = SIWX_QN_SEND,
		.msn = conn->tx_msn[SIWX_QN_SEND]++,
	};
	struct siwx_tx_src none = {};

	return siwx_tx_message(conn, &h, sqe->imm, SIWX_IMM_LEN, &none, 0);
}

static bool siwx_sqe_has_payload(const struct siwx_sqe *sqe)
{
	u32 i;

	if (sqe->flags & SIWX_WQE_INLINE)
		return sqe->num_sge;
	for (i = 0; i < sqe->num_sge && i < SIWX_MAX_SGE; i++)
		if (sqe->sge[i].length)
			return true;
	return false;
}

static int siwx_tx_send_write(struct siwx_conn *conn, u32 pos)
{
	const struct siwx_sqe *sqe = &conn->sqe;
	bool sol = sqe->flags & SIWX_WQE_SOLICITED;
	struct siwx_ddp_hdr h = {};
	u32 len = 0;
	int rv;

	rv = siwx_tx_src_sqe(conn, sqe, &len);
	if (rv)
		return rv;
	switch (sqe->opcode) {
	case IB_UVERBS_WR_SEND:
		h.opcode = sol ? SIWX_OP_SEND_SE : SIWX_OP_SEND;
		break;
	case IB_UVERBS_WR_SEND_WITH_INV:
		h.opcode = sol ? SIWX_OP_SEND_SE_INVAL : SIWX_OP_SEND_INVAL;
		h.inval_stag = sqe->rkey;
		break;
	default:
		h.opcode = SIWX_OP_WRITE;
		h.tagged = true;
		h.stag = sqe->rkey;
		h.to = sqe->raddr;
		break;
	}
	if (!h.tagged) {
		h.qn = SIWX_QN_SEND;
		h.msn = conn->tx_msn[SIWX_QN_SEND]++;
	}
	/* Large payload, no CRC: TCP's release completes the WR */
	if (siwx_zc_wanted(conn, &conn->src, len)) {
		conn->tx_zc = siwx_zc_start(conn, pos, len);
		conn->tx_payload_ref = conn->tx_zc;
	}
	/* Write with Immediate: the Immediate Data message follows */
	conn->tx_follows = sqe->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	rv = siwx_tx_message(conn, &h, NULL, 0, &conn->src, len);
	conn->tx_follows = false;
	siwx_tx_src_put(&conn->src);
	if (!rv && sqe->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM)
		rv = siwx_tx_imm(conn, sqe);
	if (conn->tx_zc) {
		siwx_zc_end(conn->tx_zc, rv);
		conn->tx_zc = NULL;
		conn->tx_payload_ref = false;
		return rv;
	}
	if (rv)
		return rv;
	siwx_sq_mark_done(conn->qp, pos, SIWX_WC_SUCCESS, len);
	return 0;
}

static int siwx_tx_read(struct siwx_conn *conn, u32 pos)
{
	const struct siwx_sqe *sqe = &conn->sqe;
	struct siwx_read_req r = {
		.src_stag = sqe->rkey,
		.src_to = sqe->raddr,
	};
	struct siwx_ddp_hdr h = {
		.opcode = SIWX_OP_READ_REQ,
		.qn = SIWX_QN_READ,
	};
	struct siwx_tx_src none = {};
	struct siwx_rdq_entry *e;
	u32 len;

	if ((sqe->flags & SIWX_WQE_INLINE) || sqe->num_sge > SIWX_MAX_SGE_RD)
		return -EINVAL;
	if (sqe->num_sge) {
		if (siwx_tx_check_sink(conn, &sqe->sge[0]))
			return -EACCES;
		r.sink_stag = sqe->sge[0].lkey;
		r.sink_to = sqe->sge[0].addr;
		r.size = sqe->sge[0].length;
	}
	spin_lock_bh(&conn->rdq_lock);
	e = siwx_rdq_push(&conn->orq, SIWX_RDQ_READ, pos);
	if (e)
		e->u.read = r;
	spin_unlock_bh(&conn->rdq_lock);
	if (!e)
		return -EIO;
	len = siwx_read_req_encode(&r, conn->tx_rdmap);
	h.msn = conn->tx_msn[SIWX_QN_READ]++;
	return siwx_tx_message(conn, &h, conn->tx_rdmap, len, &none, 0);
}

static int siwx_tx_atomic(struct siwx_conn *conn, u32 pos)
{
	const struct siwx_sqe *sqe = &conn->sqe;
	struct siwx_ddp_hdr h = {
		.opcode = SIWX_OP_ATOMIC_REQ,
		.qn = SIWX_QN_READ,
	};
	struct siwx_tx_src none = {};
	struct siwx_atomic_req r;
	struct siwx_rdq_entry *e;
	u32 id = conn->atomic_id++;
	u32 len;

	if ((sqe->flags & SIWX_WQE_INLINE) || sqe->num_sge != 1 ||
	    sqe->sge[0].length < sizeof(u64) || (sqe->raddr & 7))
		return -EINVAL;
	if (siwx_tx_check_sink(conn, &sqe->sge[0]))
		return -EACCES;
	if (siwx_sqe_atomic_op(sqe->opcode) == SIWX_SQE_FETCH_ADD)
		siwx_atomic_req_fetch_add(&r, id, sqe->rkey, sqe->raddr,
					  sqe->add_swap, sqe->add_swap_mask);
	else
		siwx_atomic_req_cmp_swap(&r, id, sqe->rkey, sqe->raddr,
					 sqe->compare, sqe->compare_mask,
					 sqe->add_swap, sqe->add_swap_mask);
	spin_lock_bh(&conn->rdq_lock);
	e = siwx_rdq_push(&conn->orq, SIWX_RDQ_ATOMIC, pos);
	if (e) {
		e->u.atomic = r;
		conn->orq_sink[e - conn->orq.ent] = sqe->sge[0];
	}
	spin_unlock_bh(&conn->rdq_lock);
	if (!e)
		return -EIO;
	len = siwx_atomic_req_encode(&r, conn->tx_rdmap);
	h.msn = conn->tx_msn[SIWX_QN_READ]++;
	return siwx_tx_message(conn, &h, conn->tx_rdmap, len, &none, 0);
}

/* Kernel ULPs' fast registration (siwx_post.c carries its fields) */
static int siwx_tx_reg_mr(struct siwx_conn *conn, u32 pos)
{
	const struct siwx_sqe *sqe = &conn->sqe;
	int rv;

	if (conn->qp->ibqp.uobject)
		return -EOPNOTSUPP;
	rv = siwx_mr_fast_reg(conn->qp, sqe->rkey, (int)sqe->bind.access);
	if (rv)
		return rv;
	siwx_sq_mark_done(conn->qp, pos, SIWX_WC_SUCCESS, 0);
	return 0;
}

/* A Bind Memory Window (siwx_mw.c); a refused bind is a local error */
static int siwx_tx_bind_mw(struct siwx_conn *conn, u32 pos)
{
	int rv;

	if (!conn->qp->ibqp.uobject)
		return -EOPNOTSUPP;
	rv = siwx_mw_bind(conn->qp, &conn->sqe);
	if (rv == -EPERM)
		siwx_sq_mark_done(conn->qp, pos, SIWX_WC_MW_BIND_ERR, 0);
	else if (rv)
		siwx_sq_mark_done(conn->qp, pos, SIWX_WC_GENERAL_ERR, 0);
	else
		siwx_sq_mark_done(conn->qp, pos, SIWX_WC_SUCCESS, 0);
	return rv;
}

static int siwx_tx_local_inv(struct siwx_conn *conn, u32 pos)
{
	enum siwx_access_fault fault;
	int rv;

	rv = siwx_mr_invalidate(conn->qp, conn->sqe.rkey, &fault);
	if (rv == -EPERM)
		return -EOPNOTSUPP;	/* not a fast registration */
	if (rv)
		return rv;
	siwx_sq_mark_done(conn->qp, pos, SIWX_WC_SUCCESS, 0);
	return 0;
}

/* A local error: the WR fails (and the QP goes to ERROR) */
static int siwx_tx_sqe_failed(struct siwx_conn *conn, u32 pos, int rv)
{
	if (rv == -EACCES || rv == -EINVAL || rv == -EOPNOTSUPP)
		siwx_sq_mark_done(conn->qp, pos,
				  rv == -EACCES ? SIWX_WC_LOC_PROT_ERR :
				  rv == -EINVAL ? SIWX_WC_LOC_LEN_ERR :
						  SIWX_WC_LOC_QP_OP_ERR, 0);
	return rv;
}

static int siwx_tx_sqe_exec(struct siwx_conn *conn, u32 pos)
{
	const struct siwx_sqe *sqe = &conn->sqe;
	int rv;

	switch (sqe->opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_INV:
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		rv = siwx_tx_send_write(conn, pos);
		break;
	case IB_UVERBS_WR_SEND_WITH_IMM:
		/* Only the zero-length form: a lone Immediate Data message */
		if (siwx_sqe_has_payload(sqe)) {
			rv = -EINVAL;
			break;
		}
		rv = siwx_tx_imm(conn, sqe);
		if (!rv)
			siwx_sq_mark_done(conn->qp, pos, SIWX_WC_SUCCESS, 0);
		break;
	case IB_UVERBS_WR_RDMA_READ:
		rv = siwx_tx_read(conn, pos);
		break;
	case IB_UVERBS_WR_RDMA_READ_WITH_INV:
		/* Only kernel ULPs have MRs that can be invalidated */
		rv = conn->qp->ibqp.uobject ? -EOPNOTSUPP :
					      siwx_tx_read(conn, pos);
		break;
	case IB_UVERBS_WR_LOCAL_INV:
		rv = siwx_tx_local_inv(conn, pos);
		break;
	case IB_WR_REG_MR:
		rv = siwx_tx_reg_mr(conn, pos);
		break;
	case IB_UVERBS_WR_BIND_MW:
		rv = siwx_tx_bind_mw(conn, pos);
		break;
	default:
		if (siwx_sqe_atomic_op(sqe->opcode) != SIWX_SQE_NOT_ATOMIC)
			rv = siwx_tx_atomic(conn, pos);
		else	/* TSO, ... */
			rv = -EOPNOTSUPP;
		break;
	}
	return siwx_tx_sqe_failed(conn, pos, rv);
}

/* Take the next SQE, if any and if it may go now. */
static int siwx_tx_sq(struct siwx_conn *conn)
{
	struct siwx_qp *qp = conn->qp;
	struct siwx_sq_shadow *sh;
	struct siwx_sqe *sqe;
	bool stall = false;
	u32 pos;
	int rv;

	spin_lock_bh(&qp->sq_lock);
	/* Stopped: what is left is the flush's (siwx_qp_flush) */
	if (!qp->dp_active) {
		spin_unlock_bh(&qp->sq_lock);
		return SIWX_TX_STALL;
	}
	pos = qp->sq_tx;
	if (pos - qp->sq_done >= qp->sq.num) {
		spin_unlock_bh(&qp->sq_lock);
		return SIWX_TX_FULL;
	}
	sqe = siwx_sq_slot(qp, pos);
	if (!(siwx_elem_valid(&sqe->flags, SIWX_WQE_VALID))) {
		spin_unlock_bh(&qp->sq_lock);
		return SIWX_TX_IDLE;
	}
	memcpy(&conn->sqe, sqe, sizeof(conn->sqe));
	spin_unlock_bh(&qp->sq_lock);

	spin_lock_bh(&conn->rdq_lock);
	if (siwx_sqe_op_awaits_response(conn->sqe.opcode) &&
	    siwx_rdq_full(&conn->orq))
		stall = true;
	/*
	 * Fenced WRs, and invalidations, which must not pull an MR from
	 * under a Read or atomic result still on its way, wait for the
	 * outstanding Reads and atomics.
	 */
	if (((conn->sqe.flags & SIWX_WQE_FENCE) ||
	     conn->sqe.opcode == IB_UVERBS_WR_LOCAL_INV) && conn->orq.count)
		stall = true;
	spin_unlock_bh(&conn->rdq_lock);
	if (stall)
		return SIWX_TX_STALL;

	spin_lock_bh(&qp->sq_lock);
	sh = siwx_sq_shadow_at(qp, pos);
	sh->id = conn->sqe.id;
	sh->opcode = siwx_wr_to_wc_opcode(conn->sqe.opcode);
	sh->status = SIWX_WC_SUCCESS;
	sh->bytes = 0;
	sh->signalled = (conn->sqe.flags & SIWX_WQE_SIGNALLED) || qp->sig_all;
	sh->done = false;
	sh->inval = conn->sqe.opcode == IB_UVERBS_WR_RDMA_READ_WITH_INV;
	sh->inval_stag = conn->sqe.sge[0].lkey;
	qp->sq_tx = pos + 1;
	spin_unlock_bh(&qp->sq_lock);

	rv = siwx_tx_sqe_exec(conn, pos);
	return rv ? rv : SIWX_TX_DID;
}

static int siwx_tx_read_resp(struct siwx_conn *conn,
			     const struct siwx_read_req *r)
{
	struct siwx_ddp_hdr h = {
		.opcode = SIWX_OP_READ_RESP,
		.tagged = true,
		.stag = r->sink_stag,
		.to = r->sink_to,
	};
	struct siwx_tx_src *src = &conn->src;
	enum siwx_access_fault fault = SIWX_FAULT_INVALID_STAG;
	struct siwx_mr *mr = NULL;
	int rv;

	memset(src, 0, sizeof(*src));
	if (r->size) {
		mr = siwx_mr_get(conn->dev, r->src_stag);
		if (!mr || siwx_mr_check(conn->qp, mr, IB_ACCESS_REMOTE_READ,
					 r->src_to, r->size, &fault)) {
			/* Deregistered since the request was accepted */
			if (mr)
				siwx_mr_put(mr);
			struct siwx_term cause =
				siwx_term_for_access(SIWX_ACCESS_READ_SOURCE,
						     fault);

			siwx_term_hdr_build(&conn->term, cause, 0, NULL, 0,
					    NULL);
			siwx_set_term_pending(conn);
			return 0;
		}
		src->el[0].mr = mr;
		src->el[0].to = r->src_to;
		src->el[0].len = r->size;
		src->n = 1;
	}
	/*
	 * Copied by TCP unless zc_min asks otherwise: an FPDU by reference
	 * is three skb fragments (header, payload, trailer), so TCP's skbs
	 * stay small, and 1 MiB Reads ran at half to two thirds of the
	 * speed of copied ones (docs/performance.md). By reference, it owes
	 * no completion, and the page references TCP takes keep the pages
	 * for as long as it needs them, also past the MR's deregistration.
	 */
	conn->tx_payload_ref = mr && siwx_zc_wanted(conn, src, r->size);
	rv = siwx_tx_message(conn, &h, NULL, 0, src, r->size);
	conn->tx_payload_ref = false;
	siwx_tx_src_put(src);
	return rv;
}

static int siwx_tx_atomic_resp(struct siwx_conn *conn, u32 req_id, u64 orig)
{
	struct siwx_atomic_resp resp = { .req_id = req_id, .orig = orig };
	struct siwx_ddp_hdr h = {
		.opcode = SIWX_OP_ATOMIC_RESP,
		.qn = SIWX_QN_ATOMIC_RESP,
		.msn = conn->tx_msn[SIWX_QN_ATOMIC_RESP]++,
	};
	struct siwx_tx_src none = {};
	u32 len = siwx_atomic_resp_encode(&resp, conn->tx_rdmap);

	return siwx_tx_message(conn, &h, conn->tx_rdmap, len, &none, 0);
}

static bool siwx_tx_resp_ready(struct siwx_conn *conn)
{
	struct siwx_rdq_entry *e;
	bool ready;

	spin_lock_bh(&conn->rdq_lock);
	e = siwx_rdq_head(&conn->irq);
	ready = e && conn->irq_ready[e - conn->irq.ent];
	spin_unlock_bh(&conn->rdq_lock);
	return ready;
}

static int siwx_tx_responses(struct siwx_conn *conn)
{
	struct siwx_rdq_entry *e, ent;
	u32 idx;
	u64 orig;
	int rv;

	for (;;) {
		if (siwx_term_is_pending(conn))
			return 0;
		/* A long run of responses waits in TCP only once its send
		 * buffer is full: until then let other tasks have the CPU
		 */
		cond_resched();
		spin_lock_bh(&conn->rdq_lock);
		e = siwx_rdq_head(&conn->irq);
		if (!e || !conn->irq_ready[e - conn->irq.ent]) {
			spin_unlock_bh(&conn->rdq_lock);
			return 0;
		}
		idx = e - conn->irq.ent;
		ent = *e;
		orig = conn->irq_orig[idx];
		/*
		 * Free the IRD slot before the response goes out: the
		 * requester may issue its next request as soon as the
		 * response arrives, possibly before this thread runs again.
		 */
		conn->irq_ready[idx] = false;
		siwx_rdq_pop(&conn->irq);
		spin_unlock_bh(&conn->rdq_lock);

		if (ent.kind == SIWX_RDQ_READ)
			rv = siwx_tx_read_resp(conn, &ent.u.read);
		else
			rv = siwx_tx_atomic_resp(conn, ent.u.atomic.req_id,
						 orig);
		if (rv)
			return rv;
	}
}

static void siwx_tx_terminate(struct siwx_conn *conn)
{
	struct siwx_ddp_hdr h = {
		.opcode = SIWX_OP_TERMINATE,
		.qn = SIWX_QN_TERM,
		.msn = conn->tx_msn[SIWX_QN_TERM]++,
	};
	struct siwx_tx_src none = {};
	u32 len = siwx_term_hdr_encode(&conn->term, conn->tx_rdmap);

	siwx_tx_message(conn, &h, conn->tx_rdmap, len, &none, 0);
}

/* Peer-to-peer Initiator: the agreed RTR message (siwx_mpa_rtr_hdr). */
static int siwx_tx_rtr(struct siwx_conn *conn)
{
	struct siwx_tx_src none = {};
	struct siwx_ddp_hdr h;

	if (!siwx_mpa_rtr_hdr(conn->mpa.rtr, conn->tx_msn[SIWX_QN_SEND], &h))
		return -EPROTO;
	if (!h.tagged)
		conn->tx_msn[SIWX_QN_SEND]++;
	return siwx_tx_message(conn, &h, NULL, 0, &none, 0);
}

/* A WR waits at the engine's position, and the ring lets it go. */
static bool siwx_tx_sq_waiting(struct siwx_qp *qp)
{
	u32 pos = READ_ONCE(qp->sq_tx);
	struct siwx_sqe *sqe = siwx_sq_slot(qp, pos);

	if (pos - READ_ONCE(qp->sq_done) >= qp->sq.num)
		return false;
	return siwx_elem_valid(&sqe->flags, SIWX_WQE_VALID);
}

static bool siwx_tx_more(struct siwx_conn *conn)
{
	return siwx_term_is_pending(conn) || siwx_tx_resp_ready(conn) ||
	       siwx_tx_sq_waiting(conn->qp);
}

/*
 * RX completed a Read or an Atomic: the WRs behind it may go. The engine
 * waits for that either stalled (ORD full, a fence; tx_active set, so
 * the provider rang no doorbell for WRs it posted since) or parked on a
 * ring full of WRs in flight (tx_active clear, so a WR posted into the
 * freed slot rings the doorbell). Wake the work item only when a WR
 * waits at the engine's position: after every Response, as before, it
 * cost a context switch per Read with perftest's one-slot SQ. Only the
 * SQ is looked at: owed Responses and a Terminate wake the engine where
 * RX queues them.
 */
void siwx_tx_sq_progress(struct siwx_conn *conn)
{
	/*
	 * sq_done (siwx_sq_complete) before the look at the ring; pairs with
	 * the provider's publish-then-read-tx_active and the engine's
	 * clear-then-re-check (siwx_tx_run)
	 */
	smp_mb();
	if (siwx_tx_sq_waiting(conn->qp))
		siwx_tx_kick(conn);
}

/*
 * The engine stops for now: push what TCP holds back (the last FPDU went
 * with MSG_MORE when more seemed to follow). Without this a Read Request
 * could wait in TCP for the Read Response it is waiting for.
 */
static void siwx_tx_pause(struct siwx_conn *conn)
{
	if (conn->tx_corked)
		tcp_sock_set_cork(conn->sock->sk, false);
	conn->tx_corked = false;
}

/*
 * Queue the work item from a doorbell's run, unless the data path has
 * stopped: the close work clears dp_active before it cancels the work
 * item, so a work item queued then would outlive the connection.
 */
static void siwx_tx_kick_active(struct siwx_qp *qp)
{
	spin_lock_bh(&qp->sq_lock);
	if (qp->dp_active)
		siwx_tx_kick(qp->conn);
	spin_unlock_bh(&qp->sq_lock);
}

/*
 * Responder with no RTR agreed: the Initiator has not sent first within
 * SIWX_RTR_GRACE, so its application waits for ours to send first.
 */
void siwx_tx_rtr_grace(struct work_struct *work)
{
	struct siwx_conn *conn = container_of(to_delayed_work(work),
					      struct siwx_conn, rtr_grace);

	if (!READ_ONCE(conn->rtr_wait) || !conn->qp)
		return;
	WRITE_ONCE(conn->rtr_wait, false);
	siwx_tx_kick_active(conn->qp);
}

/*
 * What a doorbell's run of the engine leaves to the work item: anything
 * but the SQ (responses, a Terminate, the RTR), more than a few WRs, and
 * any WR that might block the system call: more payload than
 * SIWX_TX_INLINE_BYTES, or too little room in the socket for it.
 * The SQE is read as the user left it; siwx_tx_sq() validates its copy.
 */
static bool siwx_tx_inline_ok(struct siwx_conn *conn, u32 *budget)
{
	struct siwx_qp *qp = conn->qp;
	struct siwx_sqe *sqe = siwx_sq_slot(qp, qp->sq_tx);
	u32 i, n = READ_ONCE(sqe->num_sge);
	u64 len = 0;

	if (!*budget)
		return false;
	(*budget)--;
	if (!siwx_elem_valid(&sqe->flags, SIWX_WQE_VALID))
		return true;	/* the loop goes idle */
	if (siwx_term_is_pending(conn) || conn->rtr_send ||
	    READ_ONCE(conn->rtr_wait) || siwx_tx_resp_ready(conn))
		return false;
	if (READ_ONCE(sqe->flags) & SIWX_WQE_INLINE)
		len = n;
	else
		for (i = 0; i < min_t(u32, n, SIWX_MAX_SGE); i++)
			len += READ_ONCE(sqe->sge[i].length);
	return len <= SIWX_TX_INLINE_BYTES &&
	       sk_stream_wspace(conn->sock->sk) >= SIWX_TX_INLINE_ROOM;
}

/* The engine; @in_syscall: a doorbell's run (siwx_tx_doorbell). */
static void siwx_tx_run(struct siwx_conn *conn, bool in_syscall)
{
	u32 budget = SIWX_TX_INLINE_WRS;
	struct siwx_qp *qp = conn->qp;
	int rv;

	if (!qp || READ_ONCE(conn->tx_stop))
		return;
	WRITE_ONCE(qp->sq_ctrl->tx_active, 1);
	for (;;) {
		if (READ_ONCE(conn->tx_stop))
			return;
		cond_resched();	/* as in siwx_tx_responses() */
		if (in_syscall && !siwx_tx_inline_ok(conn, &budget)) {
			siwx_tx_kick_active(qp);
			return;
		}
		if (siwx_term_is_pending(conn)) {
			siwx_tx_terminate(conn);
			WRITE_ONCE(conn->term_sent, true);
			siwx_tx_pause(conn);
			WRITE_ONCE(conn->tx_stop, true);
			siwx_conn_close(conn, true);
			return;
		}
		if (conn->rtr_send) {
			rv = siwx_tx_rtr(conn);
			if (rv)
				break;
			conn->rtr_send = false;
		}
		/* Peer-to-peer Responder: RX kicks us when the RTR arrived */
		if (READ_ONCE(conn->rtr_wait)) {
			siwx_tx_pause(conn);
			return;
		}
		rv = siwx_tx_responses(conn);
		if (rv)
			break;
		if (siwx_term_is_pending(conn))
			continue;
		rv = siwx_tx_sq(conn);
		if (rv < 0)
			break;
		if (rv == SIWX_TX_DID)
			continue;
		siwx_tx_pause(conn);
		if (rv == SIWX_TX_STALL)
			return;
		/*
		 * Idle, or the ring is full of WRs in flight: either way the
		 * next WR comes with a doorbell (abi.h), also one that fills
		 * a slot a completion frees (siwx_tx_sq_progress() covers a
		 * WR posted while this engine still looked busy).
		 */
		WRITE_ONCE(qp->sq_ctrl->tx_active, 0);
		/* Clear before the re-check; pairs with the provider's */
		smp_mb();
		if (!siwx_tx_more(conn))
			return;
		WRITE_ONCE(qp->sq_ctrl->tx_active, 1);
	}
	WRITE_ONCE(conn->tx_stop, true);
	siwx_conn_close(conn, true);
}

void siwx_tx_work(struct work_struct *work)
{
	struct siwx_conn *conn = container_of(work, struct siwx_conn,
					      tx_work);

	mutex_lock(&conn->tx_mutex);
	siwx_tx_run(conn, false);
	mutex_unlock(&conn->tx_mutex);
}

/*
 * A user's send doorbell (the SQ went from idle to busy): send the first
 * few small WRs right here in the system call, as a latency-bound
 * application wants, instead of waking the work item and switching to
 * it. If the engine is running already, it will see the new WRs, or its
 * work item is queued to. The caller holds a reference on @conn.
 */
void siwx_tx_doorbell(struct siwx_qp *qp, struct siwx_conn *conn)
{
	if (!mutex_trylock(&conn->tx_mutex)) {
		siwx_tx_kick_active(qp);
		return;
	}
	conn->tx_in_syscall = true;
	siwx_tx_run(conn, true);
	conn->tx_in_syscall = false;
	mutex_unlock(&conn->tx_mutex);
}
