// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Placement (RFC 5041's tagged and untagged buffers, RFC 5040 5.1-5.3):
 * at each segment's start RX finds where its payload goes, the MR a
 * tagged segment's STag names (RDMA Write, Read Response) checked for PD,
 * rights and bounds, or the receive buffer of an untagged one (Send);
 * then the payload is copied straight there, the MPA CRC taken in the
 * same pass.
 */
#include "siwx_rdq.h"
#include "siwx_rx_place.h"
#include "siwx_rx_rqe.h"
#include "siwx_rx_term.h"
#include "siwx_stag.h"

/*
 * A tagged segment places into the MR its STag names, held until the
 * message ends (conn->rx_mr, siwx_rx_segment_end()): its next segments,
 * which name the same STag, check it again without looking it up.
 */
static void siwx_rx_tagged_target(struct siwx_conn *conn, int access)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	enum siwx_access_fault fault;
	struct siwx_mr *mr = conn->rx_mr;

	conn->rx_dst.page = NULL;
	/* A segment that places nothing names no STag to check */
	if (!siwx_ddp_tagged_needs_stag(seg->payload_len))
		return;
	if (mr) {
		if (siwx_mr_recheck(conn->qp, mr, seg->ddp.stag, access,
				    seg->ddp.to, seg->payload_len))
			return;
		/* Another STag, or this one no more: a lookup says which */
		conn->rx_mr = NULL;
		siwx_mr_put(mr);
	}
	mr = siwx_mr_get_checked(conn->qp, seg->ddp.stag, access, seg->ddp.to,
				 seg->payload_len, &fault);
	if (!mr) {
		siwx_rx_fault(conn, SIWX_ACCESS_WRITE, fault, false);
		return;
	}
	conn->rx_mr = mr;
}

/*
 * Responder, the Initiator's first message (siwx_mpa_rtr_check): a
 * peer-to-peer RTR is taken without delivering anything; a Read RTR, or
 * any FPDU when no RTR was agreed, is processed as usual and lets TX go.
 * Returns whether the segment goes on to the usual processing.
 */
static bool siwx_rx_rtr(struct siwx_conn *conn)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	struct siwx_term err;

	switch (siwx_mpa_rtr_check(conn->mpa.rtr, &seg->ddp, seg->payload_len,
				   &err)) {
	case SIWX_RTR_DISCARD:
		conn->rx_rtr = true;
		return false;
	case SIWX_RTR_SERVE:
		WRITE_ONCE(conn->rtr_wait, false);
		siwx_conn_kick_tx(conn);
		return true;
	default:
		siwx_rx_terminate(conn, err, true, false);
		return false;
	}
}

/* A Send's segment: its receive buffer, taken at the message's start */
static void siwx_rx_send_target(struct siwx_conn *conn)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	struct siwx_sgl_pos pos;
	struct siwx_term err;

	if (!seg->ddp.mo && !conn->rqe.held && !siwx_rx_need_rqe(conn, true))
		return;
	if (!conn->rqe.held) {
		siwx_rx_terminate(conn, siwx_rx_no_buffer(), true, false);
		return;
	}
	if (!siwx_sgl_seek(conn->rqe.lens, conn->rqe.n, seg->ddp.mo,
			   seg->payload_len, &pos, &err)) {
		siwx_rx_rqe_overrun(conn, &err);
		siwx_rx_terminate(conn, err, true, false);
	}
}

/* A segment's header passed the core's checks: find its target */
void siwx_rx_segment(struct siwx_conn *conn)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	int access = IB_ACCESS_REMOTE_WRITE;
	struct siwx_term err;
	bool complete;

	if (unlikely(READ_ONCE(conn->rtr_wait)) && !siwx_rx_rtr(conn))
		return;
	switch (seg->ddp.opcode) {
	case SIWX_OP_READ_RESP:
		if (!siwx_orq_read_response(conn, &seg->ddp, seg->payload_len,
					    &complete, &err)) {
			siwx_rx_terminate(conn, err, true, false);
			return;
		}
		conn->rx_resp_done = complete;
		access = IB_ACCESS_LOCAL_WRITE;
		fallthrough;
	case SIWX_OP_WRITE:
		/* One call: inline, for every segment of a long message */
		siwx_rx_tagged_target(conn, access);
		return;
	case SIWX_OP_SEND:
	case SIWX_OP_SEND_INVAL:
	case SIWX_OP_SEND_SE:
	case SIWX_OP_SEND_SE_INVAL:
		siwx_rx_send_target(conn);
		return;
	default:
		return;
	}
}

/*
 * An untagged slice into the held receive buffer's SGEs, from message
 * offset @mo; returns the octets placed (the rest only checksummed), or
 * -1 when the slice overruns the buffer. Not inline: its locals would
 * cost the tagged slices, most of a long message's, a stack canary.
 */
static noinline int siwx_rx_place_untagged(struct siwx_conn *conn, u32 mo,
					   const u8 *data, u32 len)
{
	struct siwx_rx_rqe *rq = &conn->rqe;
	struct siwx_sgl_pos pos;
	struct siwx_term err;
	u32 placed = 0;

	if (!siwx_sgl_seek(rq->lens, rq->n, mo, len, &pos, &err)) {
		siwx_rx_rqe_overrun(conn, &err);
		siwx_rx_terminate(conn, err, true, false);
		return -1;
	}
	while (len && pos.idx < rq->n) {
		u32 n = min(len, rq->lens[pos.idx] - pos.off);

		if (n && rq->mr[pos.idx]) {
			siwx_mr_copy_to(rq->mr[pos.idx],
					rq->addr[pos.idx] + pos.off, data, n,
					&conn->rx);
			placed += n;
		} else {
			siwx_rx_skip(&conn->rx, data, n);
		}
		data += n;
		len -= n;
		pos.idx++;
		pos.off = 0;
	}
	siwx_rx_skip(&conn->rx, data, len);
	return placed;
}

/*
 * A tagged slice at offset @to of the segment's MR, whose bounds
 * siwx_rx_tagged_target() checked for the whole segment. Slices follow
 * one another, so the page the last one ended in is where the next one
 * starts: looked up once per page, not once per slice.
 */
static void siwx_rx_place_tagged(struct siwx_conn *conn, u64 to,
				 const u8 *data, u32 len)
{
	struct siwx_rx_dst *dst = &conn->rx_dst;
	void *va;
	u32 n;

	while (len) {
		if (!dst->page || dst->to != to || !dst->room) {
			dst->page = siwx_mr_page(conn->rx_mr, to, &dst->off);
			if (!dst->page) {
				siwx_rx_skip(&conn->rx, data, len);
				return;
			}
			dst->room = PAGE_SIZE - dst->off;
			dst->to = to;
		}
		n = min(len, dst->room);
		va = kmap_local_page(dst->page);
		siwx_rx_place(&conn->rx, va + dst->off, data, n);
		kunmap_local(va);
		dst->to += n;
		dst->off += n;
		dst->room -= n;
		to += n;
		data += n;
		len -= n;
	}
}

/*
 * A slice of payload, placed where its segment's target says. Each
 * octet also goes into the MPA CRC (the parser left that to us,
 * siwx_rx_defer_crc()) in the same pass that places it; octets with no
 * place to go are only checksummed.
 */
void siwx_rx_payload(struct siwx_conn *conn, const struct siwx_rx_event *ev)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	u32 len = ev->len;
	int placed = 0;

	if (seg->ddp.tagged && conn->rx_mr) {
		siwx_rx_place_tagged(conn, seg->ddp.to + ev->offset, ev->data,
				     len);
		placed = len;
	} else if (!seg->ddp.tagged && conn->rqe.held) {
		placed = siwx_rx_place_untagged(conn, seg->ddp.mo + ev->offset,
						ev->data, len);
		if (placed < 0)
			return;
	} else {
		siwx_rx_skip(&conn->rx, ev->data, len);
	}
	/* The copy counters (siwx_copies.c) */
	siwx_copies_add(rx_payload, len);
	siwx_copies_add(rx_copied_siwx, placed);
	if (conn->rx.crc_on) {
		siwx_copies_add(rx_crc, len);
		siwx_copies_add(rx_crc_fused, placed);
	}
}
