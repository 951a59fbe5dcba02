/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Terminate causes and the Terminate header (RFC 5040 sections 4.8 and 7,
 * figures 7-10; DDP codes from RFC 5041 section 7.2; LLP codes from
 * RFC 5044 section 8 and RFC 6581).
 *
 * Every error the core detects is reported as a struct siwx_term, so the
 * kernel glue only forwards a cause and never invents one.
 */
#ifndef SIWX_PROTO_TERM_H
#define SIWX_PROTO_TERM_H

#include "types.h"

/* Layer field (RFC 5040 figure 9). */
enum siwx_term_layer {
	SIWX_LAYER_RDMAP = 0x0,
	SIWX_LAYER_DDP = 0x1,
	SIWX_LAYER_LLP = 0x2,
};

/* Error types of the RDMAP layer. */
enum siwx_rdmap_etype {
	SIWX_RDMAP_ETYPE_CATASTROPHIC = 0x0,
	SIWX_RDMAP_ETYPE_REMOTE_PROT = 0x1,
	SIWX_RDMAP_ETYPE_REMOTE_OP = 0x2,
};

/* Error codes of the RDMAP layer. */
enum siwx_rdmap_ecode {
	SIWX_RDMAP_INVALID_STAG = 0x00,
	SIWX_RDMAP_BASE_BOUNDS = 0x01,
	SIWX_RDMAP_ACCESS_RIGHTS = 0x02,
	SIWX_RDMAP_STAG_NOT_ASSOC = 0x03,
	SIWX_RDMAP_TO_WRAP = 0x04,
	SIWX_RDMAP_INVALID_VERSION = 0x05,
	SIWX_RDMAP_UNEXPECTED_OPCODE = 0x06,
	SIWX_RDMAP_CATASTROPHIC_STREAM = 0x07,
	SIWX_RDMAP_CATASTROPHIC_GLOBAL = 0x08,
	SIWX_RDMAP_CANNOT_INVALIDATE = 0x09,
	SIWX_RDMAP_UNSPECIFIED = 0xff,
};

/* Error types of the DDP layer (RFC 5041 section 7.2). */
enum siwx_ddp_etype {
	SIWX_DDP_ETYPE_CATASTROPHIC = 0x0,
	SIWX_DDP_ETYPE_TAGGED = 0x1,
	SIWX_DDP_ETYPE_UNTAGGED = 0x2,
};

/* DDP Tagged Buffer error codes. */
enum siwx_ddp_tagged_ecode {
	SIWX_DDP_T_INVALID_STAG = 0x00,
	SIWX_DDP_T_BASE_BOUNDS = 0x01,
	SIWX_DDP_T_STAG_NOT_ASSOC = 0x02,
	SIWX_DDP_T_TO_WRAP = 0x03,
	SIWX_DDP_T_INVALID_VERSION = 0x04,
};

/* DDP Untagged Buffer error codes. */
enum siwx_ddp_untagged_ecode {
	SIWX_DDP_UT_INVALID_QN = 0x01,
	SIWX_DDP_UT_NO_BUFFER = 0x02,
	SIWX_DDP_UT_MSN_RANGE = 0x03,
	SIWX_DDP_UT_INVALID_MO = 0x04,
	SIWX_DDP_UT_TOO_LONG = 0x05,
	SIWX_DDP_UT_INVALID_VERSION = 0x06,
};

/* LLP (MPA) error type and codes (RFC 5044 section 8, RFC 6581). */
#define SIWX_LLP_ETYPE_MPA 0x0
enum siwx_llp_ecode {
	SIWX_LLP_TCP_LOST = 0x01,
	SIWX_LLP_CRC = 0x02,
	SIWX_LLP_LENGTH_MISMATCH = 0x03,
	SIWX_LLP_INVALID_RR = 0x04,
	SIWX_LLP_LOCAL_CATASTROPHIC = 0x05,
	SIWX_LLP_INSUFFICIENT_IRD = 0x06,
	SIWX_LLP_NO_MATCHING_RTR = 0x07,
};

/* A Terminate cause: the Layer, EType and Error Code of figure 8. */
struct siwx_term {
	u8 layer;
	u8 etype;
	u8 ecode;
};

static inline struct siwx_term siwx_term_make(u8 layer, u8 etype, u8 ecode)
{
	struct siwx_term t = { layer, etype, ecode };

	return t;
}

static inline bool siwx_term_eq(struct siwx_term a, struct siwx_term b)
{
	return a.layer == b.layer && a.etype == b.etype && a.ecode == b.ecode;
}

/*
 * Why a tagged access was refused. The kernel checks STag, PD, rights and
 * bounds against its memory tables and reports the reason; the core maps
 * it to the Terminate the message type calls for.
 */
enum siwx_access_fault {
	SIWX_FAULT_INVALID_STAG,	/* unknown or invalid STag */
	SIWX_FAULT_NOT_ASSOC,		/* STag of another PD / stream */
	SIWX_FAULT_ACCESS_RIGHTS,	/* MR lacks the needed remote right */
	SIWX_FAULT_BOUNDS,		/* outside the registered region */
	SIWX_FAULT_TO_WRAP,		/* TO + length wraps 2^64 */
	SIWX_FAULT_MISALIGNED,		/* atomic target not 64-bit aligned */
};

/* Message classes that reach tagged memory, each with its own mapping. */
enum siwx_access_kind {
	SIWX_ACCESS_WRITE,		/* RDMA Write, Read Response */
	SIWX_ACCESS_READ_SOURCE,	/* Read Request data source */
	SIWX_ACCESS_ATOMIC,		/* Atomic Request target */
	SIWX_ACCESS_INVALIDATE,		/* Send with Invalidate STag */
};

struct siwx_term siwx_term_for_access(enum siwx_access_kind kind,
				      enum siwx_access_fault fault);

/*
 * What a Terminate received from the peer says about the request it ends:
 * the peer refused access to memory (protection errors of RDMAP, tagged
 * buffer errors of DDP), found the request itself invalid (a message too
 * long for the receive buffer), or could not carry it out (everything
 * else, including an opcode it does not implement).
 */
enum siwx_term_class {
	SIWX_TERM_REMOTE_ACCESS,
	SIWX_TERM_REMOTE_INVALID,
	SIWX_TERM_REMOTE_OP,
};

enum siwx_term_class siwx_term_classify(struct siwx_term cause);

/* Header control bits (HdrCt) of the Terminate Control field. */
#define SIWX_TERM_HDRCT_M 0x4	/* DDP Segment Length valid */
#define SIWX_TERM_HDRCT_D 0x2	/* DDP Header included */
#define SIWX_TERM_HDRCT_R 0x1	/* RDMAP header included */

#define SIWX_TERM_CTRL_LEN 4
#define SIWX_TERM_SEGLEN_LEN 2
#define SIWX_TERM_RDMA_HDR_LEN 28	/* a Read Request header */
#define SIWX_TERM_MAX_LEN (SIWX_TERM_CTRL_LEN + SIWX_TERM_SEGLEN_LEN + \
			   18 + SIWX_TERM_RDMA_HDR_LEN)

/* The Terminate header that follows the DDP header of a Terminate. */
struct siwx_term_hdr {
	struct siwx_term cause;
	u8 hdrct;		/* SIWX_TERM_HDRCT_* */
	u16 ddp_seg_len;	/* present when M or D is set */
	u8 ddp_hdr_len;		/* 14 (tagged) or 18 (untagged) when D */
	u8 ddp_hdr[18];
	u8 rdma_hdr[SIWX_TERM_RDMA_HDR_LEN];	/* when R */
};

/* Length of the encoded Terminate header. */
size_t siwx_term_hdr_len(const struct siwx_term_hdr *h);
size_t siwx_term_hdr_encode(const struct siwx_term_hdr *h, u8 *buf);
/* Returns false when the header is malformed (short or inconsistent). */
bool siwx_term_hdr_decode(const u8 *buf, size_t len, struct siwx_term_hdr *h);

/*
 * Fill in which headers a Terminate echoes for @cause (RFC 5040 figure 10,
 * section 7.1; RFC 7306 section 8): @ddp_hdr is the raw DDP header of the
 * offending segment (NULL when the error is not tied to an incoming one),
 * @rdma_hdr the Read Request header (NULL unless the message was one).
 */
void siwx_term_hdr_build(struct siwx_term_hdr *h, struct siwx_term cause,
			 u16 ddp_seg_len, const u8 *ddp_hdr, size_t ddp_hdr_len,
			 const u8 *rdma_hdr);

#endif /* SIWX_PROTO_TERM_H */
