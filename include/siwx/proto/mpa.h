/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * MPA (RFC 5044) framing and connection setup frames, with the enhanced
 * connection establishment of RFC 6581.
 *
 * FPDU (section 4.1; markers are never used by siwx):
 *   ULPDU_Length(16) | ULPDU | PAD (0-3, FPDU a multiple of 4) | CRC(32)
 * The CRC field is always present; it is zero when CRCs were not agreed.
 *
 * Request/Reply frame (section 7.1):
 *   Key(16: "MPA ID Req Frame" / "MPA ID Rep Frame")
 *   M | C | R | E | Res(4) | Rev(8) | PD_Length(16) | Private Data
 * E (0x10 of the flags octet) is set by RFC 6581 enhanced connection
 * establishment (Rev 2); the private data then starts with
 *   P | S | IRD(14) | W | R | ORD(14)
 * P: peer-to-peer mode; S, W, R: zero-length Send, RDMA Write and RDMA
 * Read are acceptable Ready To Receive (RTR) messages.
 */
#ifndef SIWX_PROTO_MPA_H
#define SIWX_PROTO_MPA_H

#include "term.h"
#include "types.h"

#define SIWX_MPA_KEY_LEN 16
#define SIWX_MPA_RR_HDR_LEN 20
#define SIWX_MPA_MAX_PD_LEN 512
#define SIWX_MPA_V2_PARAMS_LEN 4
#define SIWX_MPA_IRD_ORD_MAX 0x3fff
#define SIWX_MPA_LEN_FIELD 2
#define SIWX_MPA_CRC_LEN 4
#define SIWX_MPA_MAX_ULPDU 0xffff

#define SIWX_MPA_FLAG_M 0x80
#define SIWX_MPA_FLAG_C 0x40
#define SIWX_MPA_FLAG_R 0x20
#define SIWX_MPA_FLAG_E 0x10

/* RTR types of RFC 6581, as a bit set. */
enum siwx_mpa_rtr {
	SIWX_MPA_RTR_SEND = 0x1,
	SIWX_MPA_RTR_WRITE = 0x2,
	SIWX_MPA_RTR_READ = 0x4,
};

struct siwx_mpa_rr {
	bool reply;		/* Rep Frame key, else Req Frame */
	bool markers;		/* M: the sender wants markers */
	bool crc;		/* C */
	bool reject;		/* R (reply only) */
	u8 rev;			/* 1 or 2 */
	bool enhanced;		/* E: the RFC 6581 parameters follow */
	bool p2p;
	u8 rtr;			/* enum siwx_mpa_rtr bits */
	u16 ird;
	u16 ord;
	u16 pd_len;		/* the ULP's private data, after the params */
	const u8 *pd;
};

/* Length of the encoded frame, or 0 when @rr cannot be encoded. */
size_t siwx_mpa_rr_len(const struct siwx_mpa_rr *rr);
/* Returns the frame length, or 0 when @rr cannot be encoded. */
size_t siwx_mpa_rr_encode(const struct siwx_mpa_rr *rr, u8 *buf);

enum siwx_parse {
	SIWX_PARSE_OK,
	SIWX_PARSE_MORE,	/* a longer prefix of the stream is needed */
	SIWX_PARSE_ERROR,
};

/*
 * Decode a Request or Reply frame from the start of @buf. On SIWX_PARSE_OK
 * *@frame_len is its length and rr->pd points into @buf. A wrong key, a
 * revision other than 1 or 2, a PD_Length over 512 or enhanced parameters
 * that do not fit give SIWX_PARSE_ERROR with the LLP "Invalid MPA
 * Request/Reply frame" cause.
 */
enum siwx_parse siwx_mpa_rr_decode(const u8 *buf, size_t len,
				   struct siwx_mpa_rr *rr, size_t *frame_len,
				   struct siwx_term *err);

/* Octets of PAD after an ULPDU so that the FPDU is a multiple of 4. */
static inline u32 siwx_mpa_pad(u32 ulpdu_len)
{
	return (0u - (ulpdu_len + SIWX_MPA_LEN_FIELD)) & 3;
}

static inline u32 siwx_mpa_fpdu_len(u32 ulpdu_len)
{
	return SIWX_MPA_LEN_FIELD + ulpdu_len + siwx_mpa_pad(ulpdu_len) +
	       SIWX_MPA_CRC_LEN;
}

/*
 * Largest ULPDU whose FPDU fits an effective MSS without markers
 * (RFC 5044 section 4.3: MULPDU = EMSS - (6 + EMSS mod 4)).
 */
static inline u32 siwx_mpa_mulpdu(u32 emss)
{
	u32 mulpdu = emss - (6 + emss % 4);

	if (emss < 6 + emss % 4)
		return 0;
	return mulpdu > SIWX_MPA_MAX_ULPDU ? SIWX_MPA_MAX_ULPDU : mulpdu;
}

/*
 * Largest ULPDU whose FPDU fills at most @segs segments of @emss octets,
 * so that FPDU and segment boundaries still meet every @segs segments
 * (fewer if @segs of them would exceed the largest FPDU). 0 and 1 give
 * siwx_mpa_mulpdu(). RFC 5044 sizes FPDUs to one segment for receivers
 * that place each segment on its own; one that cannot rely on that
 * (TCP may resegment a stream anywhere) accepts FPDUs of any length.
 */
static inline u32 siwx_mpa_mulpdu_segs(u32 emss, u32 segs)
{
	u32 fpdu_max = siwx_mpa_fpdu_len(SIWX_MPA_MAX_ULPDU);

	if (emss && segs > fpdu_max / emss)
		segs = fpdu_max / emss;
	if (segs < 1)
		segs = 1;
	return siwx_mpa_mulpdu(emss * segs);
}

/*
 * Append PAD and the CRC field to an FPDU whose length field and ULPDU
 * have been fed into the CRC register @crc. Writes pad + 4 octets to @out
 * and returns that count.
 */
size_t siwx_mpa_trailer(u32 crc, u32 ulpdu_len, bool crc_on, u8 *out);

#endif /* SIWX_PROTO_MPA_H */
