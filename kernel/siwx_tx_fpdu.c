// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * An RDMAP message as FPDUs: cut into DDP segments of at most MULPDU by
 * the protocol core (siwx_tx_next()), each framed as an MPA FPDU (RFC 5044
 * 4: length, ULPDU, padding, CRC), gathered in batches for the socket
 * (siwx_tx_push.c).
 *
 * An FPDU's header and trailer come from the connection's stage pages.
 * Without MPA CRCs its payload is named where it is, in the MR's pinned
 * pages: TCP copies it, or takes it by reference (zero-copy, zc_min). With
 * them the payload is copied into the stage too, the CRC computed over
 * that copy, and TCP takes the stage's pages by reference: each payload
 * octet is copied once. An FPDU goes to TCP with MSG_MORE while more is
 * ready to follow it, so that small messages share segments.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/wait_bit.h>

#include <siwx/proto/crc32c.h>

#include "siwx_comp.h"
#include "siwx_rdq.h"
#include "siwx_stag.h"
#include "siwx_tx_fpdu.h"
#include "siwx_tx_pool.h"
#include "siwx_tx_push.h"

/* More is ready to send: a Terminate, a response, or a WR */
bool siwx_tx_more(struct siwx_conn *conn)
{
	return siwx_term_is_pending(conn) || siwx_irq_ready(conn) ||
	       siwx_sq_waiting(conn->qp);
}

/*
 * With MPA CRCs on, an FPDU is sent from a copy: the CRC must cover
 * exactly the octets TCP takes, and registered memory can change before
 * TCP has sent it (an RDMA Write that RX places into a region the peer is
 * reading, an application writing its send buffer), and the peer would
 * end the connection on the CRC error. The copy goes into pages of the
 * connection's own, which TCP takes by reference. A page is written again
 * only once TCP has let go of it (its count back to our one reference),
 * else the pool's oldest page (siwx_tx_pool.c) or a new one replaces it;
 * a full page that bvecs not yet pushed name stays ours until the push,
 * so that FPDUs can go to TCP in batches.
 */
static int siwx_tx_stage_page(struct siwx_conn *conn, struct siwx_tx_vec *v,
			      int flags)
{
	struct page *page;
	int rv;

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
 * The stage's run grows by @n octets just written at tx_page_off: the last
 * bvec when it ends there, else a new one.
 */
static __always_inline void
siwx_tx_stage_grow(struct siwx_conn *conn, struct siwx_tx_vec *v, u32 n)
{
	struct bio_vec *last = v->nb ? &conn->bvec[v->nb - 1] : NULL;

	if (last && last->bv_page == conn->tx_page &&
	    last->bv_offset + last->bv_len == conn->tx_page_off) {
		last->bv_len += n;
		v->len += n;
	} else {
		siwx_tx_add_page(conn, v, conn->tx_page, conn->tx_page_off, n);
	}
	conn->tx_page_off += n;
}

/*
 * The MPA CRC of an FPDU being staged. The octets written into the stage
 * are folded in by runs, once a run's page is full and at the FPDU's end
 * (siwx_tx_crc_fold()), not piece by piece: each call of the kernel's
 * crc32c costs a hundred-odd instructions before its first octet, and a
 * long message's FPDU has a header and one or two pieces of payload.
 */
struct siwx_tx_crc {
	u32 crc;
	u32 from;	/* where in tx_page the octets not yet folded begin */
};

static void siwx_tx_crc_start(struct siwx_conn *conn, struct siwx_tx_crc *c)
{
	c->crc = SIWX_CRC32C_INIT;
	c->from = conn->tx_page ? conn->tx_page_off : 0;
}

/* The stage's octets from c->from to tx_page_off into the CRC */
static void siwx_tx_crc_fold(struct siwx_conn *conn, struct siwx_tx_crc *c)
{
	if (!c || !conn->tx_page || conn->tx_page_off <= c->from)
		return;
	c->crc = siwx_crc32c(c->crc, page_address(conn->tx_page) + c->from,
			     conn->tx_page_off - c->from);
	c->from = conn->tx_page_off;
}

/*
 * @n octets at @src into the stage, and into the CRC @c unless NULL. A
 * page is changed only after a push, so a run of the current page up to
 * tx_page_off that ends the bvecs not yet pushed grows in place.
 */
static int siwx_tx_stage(struct siwx_conn *conn, struct siwx_tx_vec *v,
			 const u8 *src, u32 n, struct siwx_tx_crc *c)
{
	u32 room, k;
	int rv;

	while (n) {
		room = conn->tx_page ? PAGE_SIZE - conn->tx_page_off : 0;
		if (!room) {
			siwx_tx_crc_fold(conn, c);
			rv = siwx_tx_stage_page(conn, v, MSG_MORE);
			if (rv)
				return rv;
			if (c)
				c->from = 0;
			continue;
		}
		k = min(n, room);
		memcpy(page_address(conn->tx_page) + conn->tx_page_off, src, k);
		siwx_tx_stage_grow(conn, v, k);
		src += k;
		n -= k;
	}
	return 0;
}

/*
 * The next piece of @src's payload, at most @left octets and within one
 * page: inline octets (*@inl) or registered memory (*@page at *@poff).
 * Returns its length (the caller advances src->off by it), or 0 when
 * the source has no more or names no page (a fault).
 */
static __always_inline u32
siwx_tx_src_next(struct siwx_tx_src *src, u32 left, const u8 **inl,
		 struct page **page, u32 *poff)
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
 * One piece of payload into @v: staged (and into the CRC @c),
 * named where it is (by reference or for TCP to copy), or, inline octets
 * TCP copies, named in tx_inline, which stays as it is until the push.
 */
static int siwx_tx_put_piece(struct siwx_conn *conn, struct siwx_tx_vec *v,
			     const u8 *inl, struct page *page, u32 poff,
			     u32 n, struct siwx_tx_crc *c)
{
	void *va;
	int rv;

	if (!v->stage && !inl) {
		siwx_tx_add_page(conn, v, page, poff, n);
		return siwx_tx_push_if_full(conn, v);
	}
	if (!v->stage && !v->by_ref) {
		siwx_tx_add_kbuf(conn, v, inl, n);
		return siwx_tx_push_if_full(conn, v);
	}
	if (inl)
		return siwx_tx_stage(conn, v, inl, n, c);
	va = kmap_local_page(page);
	rv = siwx_tx_stage(conn, v, va + poff, n, c);
	kunmap_local(va);
	return rv;
}

/*
 * The copy counters (siwx_copies.c) of one FPDU's @len payload octets,
 * whose pieces all took one way through siwx_tx_put_piece()
 */
static __always_inline void siwx_tx_count(const struct siwx_tx_vec *v,
					  bool inl, bool crc, u32 len)
{
	siwx_copies_add(tx_fpdus, 1);
	siwx_copies_add(tx_payload, len);
	if (inl)	/* siwx_tx_src_sqe() copied it out of the SQE */
		siwx_copies_add(tx_copied_siwx, len);
	if (!v->stage && !(inl && v->by_ref)) {
		/* Of a zero-copy WR, a copy the stack makes after all is
		 * counted when it lets go (siwx_zc.c)
		 */
		if (v->by_ref)
			siwx_copies_add(tx_zerocopy, len);
		else
			siwx_copies_add(tx_copied_tcp, len);
		return;
	}
	/* Copied into the stage, which TCP takes by reference */
	siwx_copies_add(tx_copied_siwx, len);
	if (crc) {
		siwx_copies_add(tx_crc, len);
		siwx_copies_add(tx_crc_fused, len);
	}
}

/*
 * An FPDU whose payload is one piece (inline, or within one page of an MR)
 * and which fits whole in the stage's current page, as most small
 * messages' do: header, payload and trailer written where they go, the
 * CRC taken in one call, one bvec grown. Returns false, having changed
 * nothing TCP sees, when the FPDU is not such; siwx_tx_put_fpdu()'s
 * general way then stages it piece by piece.
 */
static bool siwx_tx_put_whole(struct siwx_conn *conn,
			      const struct siwx_tx_seg *seg,
			      struct siwx_tx_src *src, struct siwx_tx_vec *v)
{
	u32 len = seg->payload_len, poff = 0, crc = SIWX_CRC32C_INIT;
	u32 body = seg->hdr_len + len;
	struct page *page = NULL;
	const u8 *inl = NULL;
	u8 *dst;
	void *va;

	if (!v->stage || !conn->tx_page ||
	    PAGE_SIZE - conn->tx_page_off <
	    body + siwx_mpa_pad(seg->ulpdu_len) + SIWX_MPA_CRC_LEN)
		return false;
	if (len && siwx_tx_src_next(src, len, &inl, &page, &poff) != len)
		return false;
	dst = page_address(conn->tx_page) + conn->tx_page_off;
	memcpy(dst, seg->hdr, seg->hdr_len);
	if (inl) {
		memcpy(dst + seg->hdr_len, inl, len);
		src->off += len;
	} else if (len) {
		va = kmap_local_page(page);
		memcpy(dst + seg->hdr_len, va + poff, len);
		kunmap_local(va);
		src->off += len;
	}
	if (conn->mpa.crc)
		crc = siwx_crc32c(crc, dst, body);
	body += siwx_mpa_trailer(crc, seg->ulpdu_len, conn->mpa.crc,
				 dst + body);
	siwx_tx_stage_grow(conn, v, body);
	siwx_tx_count(v, inl, conn->mpa.crc, len);
	return true;
}

/*
 * One FPDU: header, @seg->payload_len octets from @src, trailer. Header
 * and trailer go into the stage; so does the payload with MPA CRCs, and
 * without them while the stage keeps its pages for reuse (@v->stage: a
 * copy into pages not zeroed again, where TCP's own copy would fill new,
 * zeroed pages of its page_frag whenever its skbs still hold the last).
 *
 * The FPDUs of a message gather in @v and go to TCP in batches of about
 * SIWX_TX_BATCH octets: pushed one by one, each would leave TCP as an
 * skb of its own and cost the NIC a notification (a VM exit for a
 * virtual one) per FPDU.
 */
static int siwx_tx_put_fpdu(struct siwx_conn *conn,
			    const struct siwx_tx_seg *seg,
			    struct siwx_tx_src *src, struct siwx_tx_vec *v)
{
	bool crc_on = conn->mpa.crc;
	struct siwx_tx_crc crc, *c = crc_on ? &crc : NULL;
	u32 left = seg->payload_len;
	const u8 *inl = NULL;
	size_t tlen;
	bool more;
	int rv;

	if (siwx_tx_put_whole(conn, seg, src, v))
		goto batch;
	siwx_tx_crc_start(conn, &crc);
	rv = siwx_tx_stage(conn, v, seg->hdr, seg->hdr_len, c);
	while (!rv && left) {
		struct page *page = NULL;
		u32 poff = 0, n;

		n = siwx_tx_src_next(src, left, &inl, &page, &poff);
		if (!n)
			return -EFAULT;
		src->off += n;
		left -= n;
		rv = siwx_tx_put_piece(conn, v, inl, page, poff, n, c);
	}
	if (rv)
		return rv;
	siwx_tx_count(v, inl, crc_on, seg->payload_len);
	siwx_tx_crc_fold(conn, c);
	tlen = siwx_mpa_trailer(crc.crc, seg->ulpdu_len, crc_on,
				conn->tx_trailer);
	rv = siwx_tx_stage(conn, v, conn->tx_trailer, tlen, NULL);
	if (rv)
		return rv;
batch:
	if (!seg->last && v->len < SIWX_TX_BATCH)
		return 0;
	more = !seg->last || conn->tx_follows || siwx_tx_more(conn);
	if (seg->last && !conn->tx_follows && conn->tx_done_due && v->stage &&
	    !conn->tx_payload_ref) {
		conn->tx_done_due = false;
		/* Seen before the completion is: siwx_conn_close_work() */
		smp_store_mb(conn->tx_owed, true);
		siwx_sq_done(conn->qp, conn->tx_done_pos, SIWX_WC_SUCCESS,
			     conn->tx_done_len);
	}
	rv = siwx_tx_flush(conn, v, more ? MSG_MORE : 0);
	if (conn->tx_owed) {
		/* Cleared before the waker looks for the waiter */
		smp_store_mb(conn->tx_owed, false);
		wake_up_var(&conn->tx_owed);
	}
	return rv;
}

/*
 * The WR at @pos (@len octets) completes as its last FPDU goes to TCP,
 * before the push: a peer's answer to a message must not complete before
 * the message's own WR. Software that asks and waits (ofi_rxm's atomic
 * protocol) frees a request's buffer when the answer comes, and would
 * take a later completion for that of whatever reused the buffer: its
 * fi_rdm_atomic hung. Once TCP has the last FPDU, RX may place the answer
 * before TCP returns (from the socket's backlog, in release_sock()) or
 * before the TX engine posts the completion (a softirq). Completing first
 * is safe when TCP takes copies (the stage): the application's buffer is
 * free from then on, and a graceful close lets that push finish
 * (tx_owed). A WR that TCP takes from the application's pages completes
 * after the push, in siwx_tx_done_end().
 */
void siwx_tx_done_due(struct siwx_conn *conn, u32 pos, u32 len)
{
	conn->tx_done_due = true;
	conn->tx_done_pos = pos;
	conn->tx_done_len = len;
}

/*
 * After the WR's messages went out with outcome @rv: complete it unless
 * its push did; a failed WR is left to the flush (QP to ERROR).
 */
int siwx_tx_done_end(struct siwx_conn *conn, int rv)
{
	if (!conn->tx_done_due)
		return rv;
	conn->tx_done_due = false;
	if (!rv)
		siwx_sq_done(conn->qp, conn->tx_done_pos, SIWX_WC_SUCCESS,
			     conn->tx_done_len);
	return rv;
}

/* One RDMAP message, cut into FPDUs of at most MULPDU. */
int siwx_tx_message(struct siwx_conn *conn, const struct siwx_ddp_hdr *hdr,
		    const u8 *rdmap, u32 rdmap_len, struct siwx_tx_src *src,
		    u32 len)
{
	bool stage = conn->mpa.crc ||
		     (!conn->tx_payload_ref && siwx_tx_pool_on());
	struct siwx_tx_vec batch = {
		.by_ref = stage || conn->tx_payload_ref,
		.stage = stage,
	};
	struct siwx_tx_msg m;
	int rv;

	if (src) {	/* NULL: no payload */
		src->idx = 0;
		src->off = 0;
	}
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

/* Let go of the MRs @src holds */
void siwx_tx_src_put(struct siwx_tx_src *src)
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
