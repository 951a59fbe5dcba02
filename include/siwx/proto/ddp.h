/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * DDP segment headers (RFC 5041 section 4) with the RDMAP Control Field and
 * Invalidate STag that RDMAP keeps in the DDP RsvdULP field (RFC 5040
 * section 4.1, figure 3):
 *
 *   byte 0: T | L | Resrv(4) | DV(2)      byte 1: RV(2) | Rsv(2) | Opcode(4)
 *   tagged:   STag(32) TO(64)                              = 14 bytes
 *   untagged: Invalidate STag(32) QN(32) MSN(32) MO(32)    = 18 bytes
 */
#ifndef SIWX_PROTO_DDP_H
#define SIWX_PROTO_DDP_H

#include "bytes.h"
#include "term.h"
#include "types.h"

#define SIWX_DDP_VERSION 1	/* DV 01b: RFC 5041 */
#define SIWX_DDP_T_FLAG 0x80
#define SIWX_DDP_L_FLAG 0x40
#define SIWX_DDP_DV_MASK 0x03
#define SIWX_DDP_CTRL_LEN 2
#define SIWX_DDP_TAGGED_HDR_LEN 14
#define SIWX_DDP_UNTAGGED_HDR_LEN 18

struct siwx_ddp_hdr {
	u8 opcode;	/* enum siwx_rdmap_opcode */
	bool tagged;
	bool last;
	/* tagged */
	u32 stag;
	u64 to;
	/* untagged */
	u32 inval_stag;	/* Send with Invalidate variants only, else 0 */
	u32 qn;
	u32 msn;
	u32 mo;
};

static inline size_t siwx_ddp_hdr_len(bool tagged)
{
	return tagged ? SIWX_DDP_TAGGED_HDR_LEN : SIWX_DDP_UNTAGGED_HDR_LEN;
}

/*
 * Whether the Data Sink must validate the STag and TO of a tagged segment
 * with @payload_len octets (RFC 5041 section 7.2): only when it places
 * something. A zero-length RDMA Write carries no data, only its Immediate
 * Data message's 32-bit immediate (rsockets sends every credit update
 * that way, with no SGE and so no meaningful STag), and a Data Source
 * owes no STag for nothing: InfiniBand skips the R_Key check for a DMA
 * length of zero, and upstream siw does the same.
 */
static inline bool siwx_ddp_tagged_needs_stag(u32 payload_len)
{
	return payload_len != 0;
}

/*
 * The fields of the DDP header at @buf, whose T flag says how long it is
 * (siwx_ddp_hdr_len()); nothing checked. The other kind's fields are 0.
 */
static inline void siwx_ddp_fields(const u8 *buf, struct siwx_ddp_hdr *h)
{
	h->tagged = buf[0] & SIWX_DDP_T_FLAG;
	h->last = buf[0] & SIWX_DDP_L_FLAG;
	h->opcode = buf[1] & 0xf;
	if (h->tagged) {
		h->stag = siwx_get_be32(buf + 2);
		h->to = siwx_get_be64(buf + 6);
		h->inval_stag = 0;
		h->qn = 0;
		h->msn = 0;
		h->mo = 0;
	} else {
		h->stag = 0;
		h->to = 0;
		h->inval_stag = siwx_get_be32(buf + 2);
		h->qn = siwx_get_be32(buf + 6);
		h->msn = siwx_get_be32(buf + 10);
		h->mo = siwx_get_be32(buf + 14);
	}
}

/* Writes DV = RV = 1; returns the header length. */
size_t siwx_ddp_encode(const struct siwx_ddp_hdr *h, u8 *buf);

/*
 * Decode and validate a DDP header (@len must cover the whole header, see
 * siwx_ddp_hdr_len() on the T flag of buf[0]). Checks, in this order:
 * DDP version, RDMAP version, known opcode, T flag matching the opcode,
 * QN matching the opcode. On failure returns false and sets @err.
 */
bool siwx_ddp_decode(const u8 *buf, size_t len, struct siwx_ddp_hdr *h,
		     struct siwx_term *err);

#endif /* SIWX_PROTO_DDP_H */
