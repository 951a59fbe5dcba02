/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * RX: the MPA/DDP/RDMAP stream parser. It takes the TCP byte stream in
 * chunks of any size (as the socket hands them over) and reports, one at a
 * time, the events a receiver acts on. It validates everything RFC 5044,
 * RFC 5041, RFC 5040 section 7.2 and RFC 7306 section 8.2 ask a receiver
 * to validate that needs no memory tables; STag, PD, rights, bounds and
 * receive-buffer checks stay with the caller (see siwx_term_for_access()).
 *
 * Per FPDU the events are:
 *   SIWX_RX_SEGMENT      headers decoded and valid (rx->seg);
 *   SIWX_RX_PAYLOAD      0..n slices of ULP payload (data messages only);
 *   SIWX_RX_SEGMENT_END  PAD and CRC checked: the segment is intact.
 * Payload may be placed as it arrives: its target was validated at
 * SEGMENT, and a CRC error aborts the stream before anything is
 * Delivered. Header-only messages (Read Request, Terminate, Immediate Data,
 * Atomic Request/Response) must be acted on only at SEGMENT_END.
 * Any error gives SIWX_RX_ERROR with rx->term set; the parser then stays
 * in error.
 *
 * The CRC over a PAYLOAD slice: by default the parser reads the slice
 * for the CRC before handing it over, and the caller then reads it again
 * to place it. A caller that places payload may fuse the two passes:
 * after siwx_rx_defer_crc(), it folds every octet of every slice into the
 * CRC itself, once and in order, with siwx_rx_place() (copy and CRC in
 * one pass over the slice) or siwx_rx_skip() (octets it does not place).
 * An octet it leaves out fails the FPDU's CRC check, so a careless caller
 * loses the connection, never the check.
 */
#ifndef SIWX_PROTO_RX_H
#define SIWX_PROTO_RX_H

#include "bytes.h"
#include "crc32c.h"
#include "ddp.h"
#include "mpa.h"
#include "rdmap.h"
#include "rfc7306.h"
#include "term.h"
#include "types.h"

/* MPA length plus the DDP control octets: enough to size the headers. */
#define SIWX_RX_PEEK_LEN (SIWX_MPA_LEN_FIELD + SIWX_DDP_CTRL_LEN)

#define SIWX_RX_HDR_MAX (SIWX_MPA_LEN_FIELD + SIWX_DDP_UNTAGGED_HDR_LEN + \
			 SIWX_TERM_MAX_LEN)

/* A decoded, validated segment. */
struct siwx_rx_seg {
	struct siwx_ddp_hdr ddp;
	const struct siwx_opinfo *op;
	u16 ulpdu_len;
	u32 payload_len;	/* ULP payload octets (0 if header-only) */
	u32 ddp_hdr_len;
	u32 rdmap_hdr_len;
	/* The raw DDP header, echoed by a Terminate about this segment. */
	u8 raw[SIWX_RX_HDR_MAX - SIWX_MPA_LEN_FIELD];
	union {
		struct siwx_read_req read;
		struct siwx_atomic_req atomic;
		struct siwx_atomic_resp atomic_resp;
		u8 imm[SIWX_IMM_LEN];
		struct siwx_term_hdr term;
	} u;
};

enum siwx_rx_event_type {
	SIWX_RX_NEED_MORE,	/* the input was consumed without an event */
	SIWX_RX_SEGMENT,
	SIWX_RX_PAYLOAD,
	SIWX_RX_SEGMENT_END,
	SIWX_RX_ERROR,
};

struct siwx_rx_event {
	enum siwx_rx_event_type type;
	const u8 *data;		/* PAYLOAD: the slice, inside the input */
	u32 len;
	u32 offset;		/* PAYLOAD: the slice's offset in the segment */
};

/* The parser's states (rx->state), siwx_rx_feed_fast() reads them too */
enum siwx_rx_state {
	SIWX_RXS_HDR,		/* gathering the MPA length and the headers */
	SIWX_RXS_PAYLOAD,
	SIWX_RXS_TRAILER,	/* PAD and CRC */
	SIWX_RXS_DEAD,
};

struct siwx_rx {
	bool crc_on;
	bool crc_deferred;	/* the caller folds payload (siwx_rx_place) */
	u8 state;		/* enum siwx_rx_state */
	u32 crc;
	u32 have;		/* octets gathered in hdr[] */
	u32 need;		/* octets hdr[] must reach */
	u32 payload_done;
	u32 msg_octets;		/* siwx_rx_message_octets() */
	u8 hdr[SIWX_RX_HDR_MAX];
	u8 trailer[3 + SIWX_MPA_CRC_LEN];
	u32 expect_msn[SIWX_QN_COUNT];	/* next MSN of each queue */
	u32 expect_mo[SIWX_QN_COUNT];	/* next MO of a message in flight */
	struct siwx_rx_seg seg;
	struct siwx_term term;
};

void siwx_rx_init(struct siwx_rx *rx, bool crc_on);

/*
 * Consume input up to the next event. Returns the number of octets of
 * @buf consumed (those are never seen again); call again with the rest.
 * SIWX_RX_NEED_MORE means all of @buf was consumed without an event.
 */
size_t siwx_rx_feed(struct siwx_rx *rx, const u8 *buf, size_t len,
		    struct siwx_rx_event *ev);

/*
 * The parser's own: the PAYLOAD slice of the @len octets at @buf (state
 * SIWX_RXS_PAYLOAD, @len > 0); returns its length.
 */
static inline size_t siwx_rx_slice(struct siwx_rx *rx, const u8 *buf,
				   size_t len, struct siwx_rx_event *ev)
{
	size_t n = rx->seg.payload_len - rx->payload_done;

	if (n > len)
		n = len;
	ev->type = SIWX_RX_PAYLOAD;
	ev->data = buf;
	ev->len = (u32)n;
	ev->offset = rx->payload_done;
	rx->payload_done += (u32)n;
	if (rx->payload_done == rx->seg.payload_len)
		rx->state = SIWX_RXS_TRAILER;
	return n;
}

/*
 * The parser's own: the FPDU's PAD and CRC passed (RFC 5044 section 7.1),
 * the segment is intact; on to the next FPDU.
 */
static inline void siwx_rx_fpdu_end(struct siwx_rx *rx,
				    struct siwx_rx_event *ev)
{
	/* RFC 5041 section 5.1: L set ends the message */
	if (rx->seg.ddp.last)
		rx->msg_octets = 0;
	else if (rx->seg.payload_len < ~rx->msg_octets)	/* saturates */
		rx->msg_octets += rx->seg.payload_len;
	rx->state = SIWX_RXS_HDR;
	rx->have = 0;
	rx->need = SIWX_RX_PEEK_LEN;
	rx->crc = SIWX_CRC32C_INIT;
	ev->type = SIWX_RX_SEGMENT_END;
}

/*
 * siwx_rx_feed() for a segment's headers (state SIWX_RXS_HDR, nothing
 * gathered): those of a data segment lying whole at @buf are decoded in
 * one pass; anything else goes to siwx_rx_feed().
 */
size_t siwx_rx_feed_headers(struct siwx_rx *rx, const u8 *buf, size_t len,
			    struct siwx_rx_event *ev);

/*
 * siwx_rx_feed() as a receiver's loop calls it: a PAYLOAD slice, half the
 * events of a long message (a TCP segment's payload often comes in two
 * chunks), is cut here inline when the caller folds the CRC or there is
 * none; so is a PAD and CRC that lies whole at @buf, a quarter of them;
 * the headers that begin a chunk go to siwx_rx_feed_headers().
 * Anything else goes to siwx_rx_feed(), a CRC that does not match too:
 * it checks the same octets again and fails the stream.
 */
static __always_inline size_t siwx_rx_feed_fast(struct siwx_rx *rx,
						const u8 *buf, size_t len,
						struct siwx_rx_event *ev)
{
	u32 pad, whole;

	if (!len || (rx->crc_on && !rx->crc_deferred))
		return siwx_rx_feed(rx, buf, len, ev);
	if (rx->state == SIWX_RXS_PAYLOAD)
		return siwx_rx_slice(rx, buf, len, ev);
	if (rx->state == SIWX_RXS_HDR && !rx->have)
		return siwx_rx_feed_headers(rx, buf, len, ev);
	if (rx->state != SIWX_RXS_TRAILER || rx->have)
		return siwx_rx_feed(rx, buf, len, ev);
	pad = siwx_mpa_pad(rx->seg.ulpdu_len);
	whole = pad + SIWX_MPA_CRC_LEN;
	if (len < whole ||
	    (rx->crc_on &&
	     siwx_crc32c_final(siwx_crc32c(rx->crc, buf, pad)) !=
	     siwx_get_le32(buf + pad)))
		return siwx_rx_feed(rx, buf, len, ev);
	siwx_rx_fpdu_end(rx, ev);
	return whole;
}

/*
 * Payload octets of the message in progress that arrived so far, those of
 * the FPDU in progress included: 0 between messages (and on a dead
 * stream). What arrives next completes nothing before the end of that
 * message's last FPDU, so a receiver may batch its reading of a long
 * message without delaying a completion by more than the batching. The
 * FPDU in progress counts because one FPDU may be a whole long message
 * (FPDUs of 64 KiB on loopback's MSS, or with mpa_fpdu_segs).
 */
u32 siwx_rx_message_octets(const struct siwx_rx *rx);

/* From now on the caller folds PAYLOAD slices into the CRC (see above). */
void siwx_rx_defer_crc(struct siwx_rx *rx);

/* siwx_rx_place() with the CRC to fold: copy and CRC in one pass */
void siwx_rx_place_crc(struct siwx_rx *rx, void *dst, const u8 *src,
		       size_t n);

/*
 * Copy @n octets of a PAYLOAD slice to @dst, in the CRC as they pass.
 * Inline: without a CRC to fold it is a copy and no call more.
 */
static inline void siwx_rx_place(struct siwx_rx *rx, void *dst,
				 const u8 *src, size_t n)
{
	if (rx->crc_on && rx->crc_deferred)
		siwx_rx_place_crc(rx, dst, src, n);
	else
		memcpy(dst, src, n);
}

/* @n octets of a PAYLOAD slice that are not placed: the CRC only. */
void siwx_rx_skip(struct siwx_rx *rx, const u8 *src, size_t n);

#endif /* SIWX_PROTO_RX_H */
