// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The MPA/DDP/RDMAP receive stream parser. */
#include <siwx/proto/bytes.h>
#include <siwx/proto/crc32c.h>
#include <siwx/proto/rx.h>

void siwx_rx_init(struct siwx_rx *rx, bool crc_on)
{
	u32 qn;

	memset(rx, 0, sizeof(*rx));
	rx->crc_on = crc_on;
	rx->state = SIWX_RXS_HDR;
	rx->need = SIWX_RX_PEEK_LEN;
	rx->crc = SIWX_CRC32C_INIT;
	/* RFC 5041 section 5.1: the first MSN of every queue is 1. */
	for (qn = 0; qn < SIWX_QN_COUNT; qn++)
		rx->expect_msn[qn] = 1;
}

static size_t rx_fail(struct siwx_rx *rx, struct siwx_term term, size_t used,
		      struct siwx_rx_event *ev)
{
	rx->term = term;
	rx->state = SIWX_RXS_DEAD;
	ev->type = SIWX_RX_ERROR;
	return used;
}

static struct siwx_term rdmap_op_err(u8 code)
{
	return siwx_term_make(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_OP,
			      code);
}

static struct siwx_term ddp_untagged_err(u8 code)
{
	return siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED, code);
}

/*
 * Size the headers from the MPA length and the T flag and opcode, the
 * first SIWX_RX_PEEK_LEN octets at @peek. Sets nothing when it fails.
 */
static bool rx_size_headers(struct siwx_rx *rx, const u8 *peek,
			    struct siwx_term *err)
{
	u16 ulpdu = siwx_get_be16(peek);
	u8 ctrl = peek[SIWX_MPA_LEN_FIELD];
	u8 opcode = peek[SIWX_MPA_LEN_FIELD + 1] & 0xf;
	const struct siwx_opinfo *op = siwx_opinfo(opcode);
	u32 ddp_len = (u32)siwx_ddp_hdr_len(ctrl & SIWX_DDP_T_FLAG);
	u32 rdmap_len = 0;

	/* An ULPDU too short for its own DDP header: a framing error. */
	if (ulpdu < ddp_len) {
		*err = siwx_term_make(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA,
				      SIWX_LLP_LENGTH_MISMATCH);
		return false;
	}
	/*
	 * Gather the RDMAP header of a header-only message with the DDP
	 * header when its length is plausible; if it is not, the DDP
	 * checks still run first and the length is reported afterwards.
	 */
	if (op && op->hdr_only && ulpdu - ddp_len >= op->hdr_min &&
	    ulpdu - ddp_len <= op->hdr_max)
		rdmap_len = ulpdu - ddp_len;
	rx->seg.ulpdu_len = ulpdu;
	rx->seg.ddp_hdr_len = ddp_len;
	rx->seg.rdmap_hdr_len = rdmap_len;
	rx->need = SIWX_MPA_LEN_FIELD + ddp_len + rdmap_len;
	return true;
}

/* RFC 5041 section 5: in-order MSN and MO per untagged queue. */
static bool rx_check_sequence(struct siwx_rx *rx, struct siwx_term *err)
{
	struct siwx_ddp_hdr *h = &rx->seg.ddp;

	if (h->tagged)
		return true;
	if (h->msn != rx->expect_msn[h->qn]) {
		*err = ddp_untagged_err(SIWX_DDP_UT_MSN_RANGE);
		return false;
	}
	if (h->mo != rx->expect_mo[h->qn]) {
		*err = ddp_untagged_err(SIWX_DDP_UT_INVALID_MO);
		return false;
	}
	return true;
}

static void rx_advance_sequence(struct siwx_rx *rx)
{
	struct siwx_ddp_hdr *h = &rx->seg.ddp;

	if (h->tagged)
		return;
	if (h->last) {
		rx->expect_msn[h->qn]++;
		rx->expect_mo[h->qn] = 0;
	} else {
		rx->expect_mo[h->qn] += rx->seg.payload_len;
	}
}

static bool rx_decode_rdmap(struct siwx_rx *rx, const u8 *p,
			    struct siwx_term *err)
{
	struct siwx_rx_seg *s = &rx->seg;

	switch (s->ddp.opcode) {
	case SIWX_OP_READ_REQ:
		siwx_read_req_decode(p, &s->u.read);
		return true;
	case SIWX_OP_ATOMIC_REQ:
		return siwx_atomic_req_decode(p, &s->u.atomic, err);
	case SIWX_OP_ATOMIC_RESP:
		siwx_atomic_resp_decode(p, &s->u.atomic_resp);
		return true;
	case SIWX_OP_IMM:
	case SIWX_OP_IMM_SE:
		memcpy(s->u.imm, p, SIWX_IMM_LEN);
		return true;
	case SIWX_OP_TERMINATE:
		if (!siwx_term_hdr_decode(p, s->rdmap_hdr_len, &s->u.term)) {
			*err = rdmap_op_err(SIWX_RDMAP_CATASTROPHIC_STREAM);
			return false;
		}
		return true;
	default:
		return true;
	}
}

/* All header octets are at @hdr: decode and validate the segment. */
static bool rx_decode_segment(struct siwx_rx *rx, const u8 *hdr,
			      struct siwx_term *err)
{
	struct siwx_rx_seg *s = &rx->seg;
	const u8 *ddp = hdr + SIWX_MPA_LEN_FIELD;
	u32 body;

	/*
	 * Kept before any check: a Terminate about this segment echoes its
	 * DDP header (RFC 5040 section 7.1 rule 2, figure 10), including
	 * when the header itself is what is wrong.
	 */
	if (s->ddp_hdr_len == SIWX_DDP_TAGGED_HDR_LEN)	/* constant: inline */
		memcpy(s->raw, ddp, SIWX_DDP_TAGGED_HDR_LEN);
	else
		memcpy(s->raw, ddp, SIWX_DDP_UNTAGGED_HDR_LEN);
	/*
	 * Likewise a Read Request's own header, which a Terminate about it
	 * echoes for RDMAP errors (rule 3), a bad RDMAP version included.
	 * Zeros when it was not gathered, never a previous request's.
	 */
	memset(&s->u.read, 0, sizeof(s->u.read));
	if ((ddp[1] & 0xf) == SIWX_OP_READ_REQ &&
	    s->rdmap_hdr_len == SIWX_READ_REQ_LEN)
		siwx_read_req_decode(ddp + s->ddp_hdr_len, &s->u.read);
	if (!siwx_ddp_decode(ddp, s->ddp_hdr_len, &s->ddp, err))
		return false;
	s->op = siwx_opinfo(s->ddp.opcode);
	if (!rx_check_sequence(rx, err))
		return false;
	body = s->ulpdu_len - s->ddp_hdr_len;
	if (s->op->hdr_only) {
		/*
		 * A header-only message is exactly one segment of exactly its
		 * header (RFC 7306 section 6.3: Immediate Data is 8 octets).
		 * RFC 5040/7306 name no code for a malformed RDMAP header;
		 * siwx reports it as localized catastrophic.
		 */
		if (!s->ddp.last || body != s->rdmap_hdr_len ||
		    body < s->op->hdr_min) {
			*err = rdmap_op_err(SIWX_RDMAP_CATASTROPHIC_STREAM);
			return false;
		}
		s->payload_len = 0;
		if (!rx_decode_rdmap(rx, ddp + s->ddp_hdr_len, err))
			return false;
	} else {
		s->payload_len = body;
	}
	rx_advance_sequence(rx);
	return true;
}

/* Gather header octets; returns octets used. */
static size_t rx_gather(struct siwx_rx *rx, const u8 *buf, size_t len)
{
	size_t n = rx->need - rx->have;

	if (n > len)
		n = len;
	memcpy(rx->hdr + rx->have, buf, n);
	rx->have += (u32)n;
	return n;
}

/* The segment's headers, rx->need octets at @hdr, passed: on to its payload */
static void rx_headers_passed(struct siwx_rx *rx, const u8 *hdr,
			      struct siwx_rx_event *ev)
{
	if (rx->crc_on)
		rx->crc = siwx_crc32c(rx->crc, hdr, rx->need);
	rx->payload_done = 0;
	rx->have = 0;
	rx->state = rx->seg.payload_len ? SIWX_RXS_PAYLOAD : SIWX_RXS_TRAILER;
	ev->type = SIWX_RX_SEGMENT;
}

/*
 * The headers, rx->need octets at @hdr, are all here: decode them and go
 * on to the payload. Returns @used; may set an event.
 */
static size_t rx_headers_whole(struct siwx_rx *rx, const u8 *hdr, size_t used,
			       struct siwx_rx_event *ev)
{
	struct siwx_term err;

	if (!rx_decode_segment(rx, hdr, &err))
		return rx_fail(rx, err, used, ev);
	rx_headers_passed(rx, hdr, ev);
	return used;
}

/*
 * The headers of a data segment (RDMA Write, Read Response, Send: RFC
 * 5040 section 4) lying whole at @buf, nothing gathered: nearly every
 * FPDU. Decoded in one pass, with the checks rx_size_headers() and
 * rx_decode_segment() make of such a segment; when one fails, or the
 * segment is of another kind (header-only), this changes nothing of the
 * parser's state and returns 0, and siwx_rx_feed() takes the same octets
 * and says what is wrong. Else returns the octets used.
 */
static size_t rx_data_headers(struct siwx_rx *rx, const u8 *buf, size_t len,
			      struct siwx_rx_event *ev)
{
	const u8 *ddp = buf + SIWX_MPA_LEN_FIELD;
	struct siwx_rx_seg *s = &rx->seg;
	const struct siwx_opinfo *op;
	u32 ulpdu, hdr_len, qn;
	bool tagged;

	if (len < SIWX_RX_PEEK_LEN)
		return 0;
	tagged = ddp[0] & SIWX_DDP_T_FLAG;
	hdr_len = (u32)siwx_ddp_hdr_len(tagged);
	ulpdu = siwx_get_be16(buf);
	op = siwx_opinfo(ddp[1] & 0xf);
	/* RFC 5041 section 7.2, RFC 5040 section 7.2: versions, opcode, T */
	if (len < SIWX_MPA_LEN_FIELD + hdr_len || ulpdu < hdr_len || !op ||
	    op->hdr_only || op->tagged != tagged ||
	    (ddp[0] & SIWX_DDP_DV_MASK) != SIWX_DDP_VERSION ||
	    ddp[1] >> 6 != SIWX_RDMAP_VERSION)
		return 0;
	/* RFC 5041 section 5: the opcode's queue, its MSN and MO in order */
	if (!tagged) {
		qn = siwx_get_be32(ddp + 6);
		if (qn != op->qn ||
		    siwx_get_be32(ddp + 10) != rx->expect_msn[qn] ||
		    siwx_get_be32(ddp + 14) != rx->expect_mo[qn])
			return 0;
	}
	/* What rx_decode_segment() keeps for a Terminate's echo */
	if (tagged)
		memcpy(s->raw, ddp, SIWX_DDP_TAGGED_HDR_LEN);
	else
		memcpy(s->raw, ddp, SIWX_DDP_UNTAGGED_HDR_LEN);
	memset(&s->u.read, 0, sizeof(s->u.read));
	siwx_ddp_fields(ddp, &s->ddp);
	s->op = op;
	s->ulpdu_len = (u16)ulpdu;
	s->ddp_hdr_len = hdr_len;
	s->rdmap_hdr_len = 0;
	s->payload_len = ulpdu - hdr_len;
	rx_advance_sequence(rx);
	rx->need = SIWX_MPA_LEN_FIELD + hdr_len;
	ev->data = NULL;
	ev->len = 0;
	ev->offset = 0;
	rx_headers_passed(rx, buf, ev);
	return rx->need;
}

size_t siwx_rx_feed_headers(struct siwx_rx *rx, const u8 *buf, size_t len,
			    struct siwx_rx_event *ev)
{
	size_t used = rx_data_headers(rx, buf, len, ev);

	return used ? used : siwx_rx_feed(rx, buf, len, ev);
}

/* Headers: size, gather, decode. Returns octets used; may set an event. */
static size_t rx_header(struct siwx_rx *rx, const u8 *buf, size_t len,
			struct siwx_rx_event *ev)
{
	struct siwx_term err;
	size_t used;

	/*
	 * Most chunks begin with an FPDU whose headers they hold whole (a
	 * TCP segment per FPDU, RFC 5044 section 8): parsed where they lie,
	 * not gathered first. Otherwise they are gathered; a sizing that
	 * failed here fails again there, on the same octets.
	 */
	if (!rx->have && len >= SIWX_RX_PEEK_LEN &&
	    rx_size_headers(rx, buf, &err) && len >= rx->need)
		return rx_headers_whole(rx, buf, rx->need, ev);
	used = rx_gather(rx, buf, len);
	if (rx->have < rx->need)
		return used;
	if (rx->need == SIWX_RX_PEEK_LEN) {
		if (!rx_size_headers(rx, rx->hdr, &err))
			return rx_fail(rx, err, used, ev);
		if (rx->have < rx->need)
			return used;
	}
	return rx_headers_whole(rx, rx->hdr, used, ev);
}

/* Payload: hand the slice that is here to the caller, in place. */
static size_t rx_payload(struct siwx_rx *rx, const u8 *buf, size_t len,
			 struct siwx_rx_event *ev)
{
	size_t n = siwx_rx_slice(rx, buf, len, ev);

	if (rx->crc_on && !rx->crc_deferred)
		rx->crc = siwx_crc32c(rx->crc, buf, n);
	return n;
}

/* PAD and CRC: the FPDU is intact only if the CRC matches. */
static size_t rx_trailer(struct siwx_rx *rx, const u8 *buf, size_t len,
			 struct siwx_rx_event *ev)
{
	u32 pad = siwx_mpa_pad(rx->seg.ulpdu_len);
	u32 whole = pad + SIWX_MPA_CRC_LEN;
	const u8 *trailer = buf;
	size_t n = whole;
	u32 crc;

	/* Checked where it lies when it is all here, else gathered first */
	if (rx->have || len < whole) {
		n = whole - rx->have < len ? whole - rx->have : len;
		memcpy(rx->trailer + rx->have, buf, n);
		rx->have += (u32)n;
		if (rx->have < whole)
			return n;
		trailer = rx->trailer;
	}
	if (rx->crc_on) {
		crc = pad ? siwx_crc32c(rx->crc, trailer, pad) : rx->crc;
		crc = siwx_crc32c_final(crc);
		if (crc != siwx_get_le32(trailer + pad))
			return rx_fail(rx, siwx_term_make(SIWX_LAYER_LLP,
							  SIWX_LLP_ETYPE_MPA,
							  SIWX_LLP_CRC),
				       n, ev);
	}
	siwx_rx_fpdu_end(rx, ev);
	return n;
}

void siwx_rx_defer_crc(struct siwx_rx *rx)
{
	rx->crc_deferred = true;
}

u32 siwx_rx_message_octets(const struct siwx_rx *rx)
{
	u32 fpdu = 0;

	if (rx->state == SIWX_RXS_DEAD)
		return 0;
	/* payload_done is the previous FPDU's until the next one's header */
	if (rx->state == SIWX_RXS_PAYLOAD || rx->state == SIWX_RXS_TRAILER)
		fpdu = rx->payload_done;
	return fpdu < ~rx->msg_octets ? rx->msg_octets + fpdu : ~0u;
}

/*
 * Small enough that a chunk just copied is still in the first-level cache
 * (32 KiB or more) when the CRC reads it back, large enough that a slice
 * of a page, which is what a TCP segment's payload lies in, takes one
 * call of the CRC, which in the kernel costs a hundred-odd instructions
 * before its first octet. The CRC reads the source, which is the
 * receiver's own (TCP's buffers); the destination may be memory the
 * application is free to write meanwhile.
 */
#define RX_PLACE_CHUNK 4096

void siwx_rx_place_crc(struct siwx_rx *rx, void *dst, const u8 *src,
		       size_t n)
{
	u8 *to = (u8 *)dst;
	size_t k;

	while (n) {
		k = n < RX_PLACE_CHUNK ? n : RX_PLACE_CHUNK;
		memcpy(to, src, k);
		rx->crc = siwx_crc32c(rx->crc, src, k);
		to += k;
		src += k;
		n -= k;
	}
}

void siwx_rx_skip(struct siwx_rx *rx, const u8 *src, size_t n)
{
	if (rx->crc_on && rx->crc_deferred)
		rx->crc = siwx_crc32c(rx->crc, src, n);
}

size_t siwx_rx_feed(struct siwx_rx *rx, const u8 *buf, size_t len,
		    struct siwx_rx_event *ev)
{
	size_t used = 0;

	ev->type = SIWX_RX_NEED_MORE;
	ev->data = NULL;
	ev->len = 0;
	ev->offset = 0;
	while (used < len && ev->type == SIWX_RX_NEED_MORE) {
		switch (rx->state) {
		case SIWX_RXS_HDR:
			used += rx_header(rx, buf + used, len - used, ev);
			break;
		case SIWX_RXS_PAYLOAD:
			used += rx_payload(rx, buf + used, len - used, ev);
			break;
		case SIWX_RXS_TRAILER:
			used += rx_trailer(rx, buf + used, len - used, ev);
			break;
		default:
			ev->type = SIWX_RX_ERROR;
			break;
		}
	}
	if (rx->state == SIWX_RXS_DEAD)
		ev->type = SIWX_RX_ERROR;
	return used;
}
