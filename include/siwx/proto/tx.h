/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * TX segmentation: cut one RDMAP message into DDP segments that each fit
 * one MPA FPDU of at most MULPDU octets (RFC 5041 section 5, RFC 5044
 * section 4), and produce each segment's MPA length, DDP and RDMAP
 * headers. The caller sends header, payload slice and trailer.
 */
#ifndef SIWX_PROTO_TX_H
#define SIWX_PROTO_TX_H

#include "ddp.h"
#include "mpa.h"
#include "types.h"

/* MPA length field + untagged DDP header + the largest RDMAP header. */
#define SIWX_TX_HDR_MAX (SIWX_MPA_LEN_FIELD + SIWX_DDP_UNTAGGED_HDR_LEN + 52)

struct siwx_tx_msg {
	struct siwx_ddp_hdr hdr;	/* STag/TO or QN/MSN of the message */
	const u8 *rdmap_hdr;		/* header-only messages: the header */
	u32 rdmap_hdr_len;
	u32 len;			/* ULP payload octets */
	u32 done;			/* payload octets already segmented */
	bool started;
};

struct siwx_tx_seg {
	u8 hdr[SIWX_TX_HDR_MAX];	/* MPA length, DDP and RDMAP headers */
	u32 hdr_len;
	u32 payload_off;		/* offset of the slice in the payload */
	u32 payload_len;
	u32 ulpdu_len;
	bool last;
};

/*
 * @hdr describes the message: opcode, tagged, STag and TO (tagged) or QN,
 * MSN and Invalidate STag (untagged); L and MO are set per segment.
 * Header-only messages pass their RDMAP header and len 0.
 */
void siwx_tx_msg_init(struct siwx_tx_msg *m, const struct siwx_ddp_hdr *hdr,
		      const u8 *rdmap_hdr, u32 rdmap_hdr_len, u32 len);

/*
 * Produce the next segment for a path of @mulpdu octets (see
 * siwx_mpa_mulpdu()). Returns false when the message has been fully
 * segmented, or when @mulpdu cannot carry the headers plus one octet of
 * payload. A zero-length message yields one segment.
 */
bool siwx_tx_next(struct siwx_tx_msg *m, u32 mulpdu, struct siwx_tx_seg *s);

/*
 * Write a whole FPDU to @out (siwx_mpa_fpdu_len(s->ulpdu_len) octets) from
 * a segment and the message payload: for tests, tools and small messages.
 */
size_t siwx_tx_fpdu(const struct siwx_tx_seg *s, const u8 *payload,
		    bool crc_on, u8 *out);

#endif /* SIWX_PROTO_TX_H */
