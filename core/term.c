// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Terminate causes for refused tagged accesses, and the Terminate header
 * (RFC 5040 section 4.8).
 */
#include <siwx/proto/bytes.h>
#include <siwx/proto/ddp.h>
#include <siwx/proto/term.h>

/*
 * RDMA Write and Read Response placement is checked by DDP, so faults
 * are DDP Tagged Buffer errors (RFC 5041 section 7.2). DDP has no code for
 * missing access rights; such an STag is not valid for the access, so it
 * is reported as Invalid STag.
 */
static struct siwx_term term_for_placement(enum siwx_access_fault fault)
{
	u8 code;

	switch (fault) {
	case SIWX_FAULT_NOT_ASSOC:
		code = SIWX_DDP_T_STAG_NOT_ASSOC;
		break;
	case SIWX_FAULT_BOUNDS:
	case SIWX_FAULT_MISALIGNED:
		code = SIWX_DDP_T_BASE_BOUNDS;
		break;
	case SIWX_FAULT_TO_WRAP:
		code = SIWX_DDP_T_TO_WRAP;
		break;
	case SIWX_FAULT_INVALID_STAG:
	case SIWX_FAULT_ACCESS_RIGHTS:
	default:
		code = SIWX_DDP_T_INVALID_STAG;
		break;
	}
	return siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_TAGGED, code);
}

/* Read Request sources and Atomic targets: RDMAP Remote Protection. */
static struct siwx_term term_for_remote_access(enum siwx_access_fault fault)
{
	u8 code;

	switch (fault) {
	case SIWX_FAULT_NOT_ASSOC:
		code = SIWX_RDMAP_STAG_NOT_ASSOC;
		break;
	case SIWX_FAULT_ACCESS_RIGHTS:
		code = SIWX_RDMAP_ACCESS_RIGHTS;
		break;
	case SIWX_FAULT_BOUNDS:
		code = SIWX_RDMAP_BASE_BOUNDS;
		break;
	case SIWX_FAULT_TO_WRAP:
		code = SIWX_RDMAP_TO_WRAP;
		break;
	case SIWX_FAULT_INVALID_STAG:
	default:
		code = SIWX_RDMAP_INVALID_STAG;
		break;
	}
	return siwx_term_make(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_PROT,
			      code);
}

struct siwx_term siwx_term_for_access(enum siwx_access_kind kind,
				      enum siwx_access_fault fault)
{
	switch (kind) {
	case SIWX_ACCESS_WRITE:
		return term_for_placement(fault);
	case SIWX_ACCESS_ATOMIC:
		/* RFC 7306 section 8.2: misalignment is an operation error. */
		if (fault == SIWX_FAULT_MISALIGNED)
			return siwx_term_make(SIWX_LAYER_RDMAP,
					      SIWX_RDMAP_ETYPE_REMOTE_OP,
					      SIWX_RDMAP_CATASTROPHIC_STREAM);
		return term_for_remote_access(fault);
	case SIWX_ACCESS_INVALIDATE:
		/* RFC 5040 section 5.3: an STag we may not invalidate. */
		if (fault == SIWX_FAULT_INVALID_STAG)
			return term_for_remote_access(fault);
		return siwx_term_make(SIWX_LAYER_RDMAP,
				      SIWX_RDMAP_ETYPE_REMOTE_PROT,
				      SIWX_RDMAP_CANNOT_INVALIDATE);
	case SIWX_ACCESS_READ_SOURCE:
	default:
		return term_for_remote_access(fault);
	}
}

enum siwx_term_class siwx_term_classify(struct siwx_term cause)
{
	if (cause.layer == SIWX_LAYER_RDMAP &&
	    cause.etype == SIWX_RDMAP_ETYPE_REMOTE_PROT)
		return SIWX_TERM_REMOTE_ACCESS;
	if (cause.layer == SIWX_LAYER_DDP &&
	    cause.etype == SIWX_DDP_ETYPE_TAGGED)
		return SIWX_TERM_REMOTE_ACCESS;
	if (cause.layer == SIWX_LAYER_DDP &&
	    cause.etype == SIWX_DDP_ETYPE_UNTAGGED &&
	    cause.ecode == SIWX_DDP_UT_TOO_LONG)
		return SIWX_TERM_REMOTE_INVALID;
	return SIWX_TERM_REMOTE_OP;
}

size_t siwx_term_hdr_len(const struct siwx_term_hdr *h)
{
	size_t len = SIWX_TERM_CTRL_LEN;

	if (h->hdrct & (SIWX_TERM_HDRCT_M | SIWX_TERM_HDRCT_D))
		len += SIWX_TERM_SEGLEN_LEN;
	if (h->hdrct & SIWX_TERM_HDRCT_D)
		len += h->ddp_hdr_len;
	if (h->hdrct & SIWX_TERM_HDRCT_R)
		len += SIWX_TERM_RDMA_HDR_LEN;
	return len;
}

/*
 * Terminate Control (figure 8): Layer (4 bits), EType (4), Error Code (8),
 * HdrCt M/D/R at bits 16-18, then 13 reserved bits.
 */
size_t siwx_term_hdr_encode(const struct siwx_term_hdr *h, u8 *buf)
{
	u8 *p = buf;

	p[0] = (u8)((h->cause.layer & 0xf) << 4 | (h->cause.etype & 0xf));
	p[1] = h->cause.ecode;
	p[2] = (u8)((h->hdrct & 0x7) << 5);
	p[3] = 0;
	p += SIWX_TERM_CTRL_LEN;
	if (h->hdrct & (SIWX_TERM_HDRCT_M | SIWX_TERM_HDRCT_D)) {
		siwx_put_be16(p, h->ddp_seg_len);
		p += SIWX_TERM_SEGLEN_LEN;
	}
	if (h->hdrct & SIWX_TERM_HDRCT_D) {
		memcpy(p, h->ddp_hdr, h->ddp_hdr_len);
		p += h->ddp_hdr_len;
	}
	if (h->hdrct & SIWX_TERM_HDRCT_R) {
		memcpy(p, h->rdma_hdr, SIWX_TERM_RDMA_HDR_LEN);
		p += SIWX_TERM_RDMA_HDR_LEN;
	}
	return (size_t)(p - buf);
}

bool siwx_term_hdr_decode(const u8 *buf, size_t len, struct siwx_term_hdr *h)
{
	const u8 *p = buf;
	const u8 *end = buf + len;

	memset(h, 0, sizeof(*h));
	if (len < SIWX_TERM_CTRL_LEN)
		return false;
	h->cause.layer = p[0] >> 4;
	h->cause.etype = p[0] & 0xf;
	h->cause.ecode = p[1];
	h->hdrct = p[2] >> 5;
	p += SIWX_TERM_CTRL_LEN;
	if (h->hdrct & (SIWX_TERM_HDRCT_M | SIWX_TERM_HDRCT_D)) {
		if (end - p < SIWX_TERM_SEGLEN_LEN)
			return false;
		h->ddp_seg_len = siwx_get_be16(p);
		p += SIWX_TERM_SEGLEN_LEN;
	}
	if (h->hdrct & SIWX_TERM_HDRCT_D) {
		/* The echoed header's own T flag says how long it is. */
		if (p == end)
			return false;
		h->ddp_hdr_len = (p[0] & SIWX_DDP_T_FLAG) ?
				 SIWX_DDP_TAGGED_HDR_LEN :
				 SIWX_DDP_UNTAGGED_HDR_LEN;
		if (end - p < h->ddp_hdr_len)
			return false;
		memcpy(h->ddp_hdr, p, h->ddp_hdr_len);
		p += h->ddp_hdr_len;
	}
	if (h->hdrct & SIWX_TERM_HDRCT_R) {
		if (end - p < SIWX_TERM_RDMA_HDR_LEN)
			return false;
		memcpy(h->rdma_hdr, p, SIWX_TERM_RDMA_HDR_LEN);
		p += SIWX_TERM_RDMA_HDR_LEN;
	}
	return p == end;
}

void siwx_term_hdr_build(struct siwx_term_hdr *h, struct siwx_term cause,
			 u16 ddp_seg_len, const u8 *ddp_hdr, size_t ddp_hdr_len,
			 const u8 *rdma_hdr)
{
	bool catastrophic = cause.etype == 0 && cause.layer != SIWX_LAYER_LLP;

	memset(h, 0, sizeof(*h));
	h->cause = cause;
	/* Figure 10: LLP errors and local catastrophes echo no headers. */
	if (cause.layer == SIWX_LAYER_LLP || catastrophic || !ddp_hdr)
		return;
	if (ddp_hdr_len != SIWX_DDP_TAGGED_HDR_LEN &&
	    ddp_hdr_len != SIWX_DDP_UNTAGGED_HDR_LEN)
		return;
	h->hdrct = SIWX_TERM_HDRCT_M | SIWX_TERM_HDRCT_D;
	h->ddp_seg_len = ddp_seg_len;
	h->ddp_hdr_len = (u8)ddp_hdr_len;
	memcpy(h->ddp_hdr, ddp_hdr, ddp_hdr_len);
	/* Section 7.1 rule 3: RDMAP errors on a Read Request echo it. */
	if (rdma_hdr && cause.layer == SIWX_LAYER_RDMAP) {
		h->hdrct |= SIWX_TERM_HDRCT_R;
		memcpy(h->rdma_hdr, rdma_hdr, SIWX_TERM_RDMA_HDR_LEN);
	}
}
