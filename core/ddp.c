// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* DDP segment headers with the RDMAP Control Field (RFC 5041, 5040 4.1). */
#include <siwx/proto/bytes.h>
#include <siwx/proto/ddp.h>
#include <siwx/proto/rdmap.h>

size_t siwx_ddp_encode(const struct siwx_ddp_hdr *h, u8 *buf)
{
	buf[0] = (u8)((h->tagged ? SIWX_DDP_T_FLAG : 0) |
		      (h->last ? SIWX_DDP_L_FLAG : 0) | SIWX_DDP_VERSION);
	buf[1] = (u8)(SIWX_RDMAP_VERSION << 6 | (h->opcode & 0xf));
	if (h->tagged) {
		siwx_put_be32(buf + 2, h->stag);
		siwx_put_be64(buf + 6, h->to);
		return SIWX_DDP_TAGGED_HDR_LEN;
	}
	siwx_put_be32(buf + 2, h->inval_stag);
	siwx_put_be32(buf + 6, h->qn);
	siwx_put_be32(buf + 10, h->msn);
	siwx_put_be32(buf + 14, h->mo);
	return SIWX_DDP_UNTAGGED_HDR_LEN;
}

static struct siwx_term ddp_err(bool tagged, u8 tagged_code, u8 untagged_code)
{
	if (tagged)
		return siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_TAGGED,
				      tagged_code);
	return siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED,
			      untagged_code);
}

static struct siwx_term rdmap_op_err(u8 code)
{
	return siwx_term_make(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_OP,
			      code);
}

bool siwx_ddp_decode(const u8 *buf, size_t len, struct siwx_ddp_hdr *h,
		     struct siwx_term *err)
{
	const struct siwx_opinfo *op;

	if (len < siwx_ddp_hdr_len(buf[0] & SIWX_DDP_T_FLAG)) {
		memset(h, 0, sizeof(*h));
		h->tagged = buf[0] & SIWX_DDP_T_FLAG;
		h->last = buf[0] & SIWX_DDP_L_FLAG;
		h->opcode = buf[1] & 0xf;
		*err = siwx_term_make(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA,
				      SIWX_LLP_LENGTH_MISMATCH);
		return false;
	}
	siwx_ddp_fields(buf, h);

	/* RFC 5041 section 7.2: the DDP version comes first. */
	if ((buf[0] & SIWX_DDP_DV_MASK) != SIWX_DDP_VERSION) {
		*err = ddp_err(h->tagged, SIWX_DDP_T_INVALID_VERSION,
			       SIWX_DDP_UT_INVALID_VERSION);
		return false;
	}
	/* RFC 5040 section 7.2: RDMA version, then opcode. */
	if (buf[1] >> 6 != SIWX_RDMAP_VERSION) {
		*err = rdmap_op_err(SIWX_RDMAP_INVALID_VERSION);
		return false;
	}
	op = siwx_opinfo(h->opcode);
	if (!op || op->tagged != h->tagged) {
		*err = rdmap_op_err(SIWX_RDMAP_UNEXPECTED_OPCODE);
		return false;
	}
	/* A queue number that is not the opcode's queue is not valid. */
	if (!h->tagged && h->qn != op->qn) {
		*err = ddp_err(false, 0, SIWX_DDP_UT_INVALID_QN);
		return false;
	}
	return true;
}
