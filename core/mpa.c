// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* MPA Request/Reply frames (RFC 5044 7.1, RFC 6581) and FPDU trailers. */
#include <siwx/proto/bytes.h>
#include <siwx/proto/crc32c.h>
#include <siwx/proto/mpa.h>

/*
 * The 16-octet keys of RFC 5044 7.1. One octet more than is sent, for the
 * string's NUL: gcc 15 and later warn about an initializer that drops it.
 */
static const u8 key_req[SIWX_MPA_KEY_LEN + 1] = "MPA ID Req Frame";
static const u8 key_rep[SIWX_MPA_KEY_LEN + 1] = "MPA ID Rep Frame";

#define V2_P 0x8000	/* in the IRD word */
#define V2_S 0x4000	/* in the IRD word */
#define V2_W 0x8000	/* in the ORD word */
#define V2_R 0x4000	/* in the ORD word */

static size_t params_len(const struct siwx_mpa_rr *rr)
{
	return rr->enhanced ? SIWX_MPA_V2_PARAMS_LEN : 0;
}

size_t siwx_mpa_rr_len(const struct siwx_mpa_rr *rr)
{
	size_t pd = params_len(rr) + rr->pd_len;

	if (pd > SIWX_MPA_MAX_PD_LEN || (rr->enhanced && rr->rev < 2))
		return 0;
	if (rr->ird > SIWX_MPA_IRD_ORD_MAX || rr->ord > SIWX_MPA_IRD_ORD_MAX)
		return 0;
	return SIWX_MPA_RR_HDR_LEN + pd;
}

size_t siwx_mpa_rr_encode(const struct siwx_mpa_rr *rr, u8 *buf)
{
	size_t len = siwx_mpa_rr_len(rr);
	u8 *p = buf + SIWX_MPA_RR_HDR_LEN;
	u16 ird, ord;

	if (!len)
		return 0;
	memcpy(buf, rr->reply ? key_rep : key_req, SIWX_MPA_KEY_LEN);
	buf[16] = (u8)((rr->markers ? SIWX_MPA_FLAG_M : 0) |
		       (rr->crc ? SIWX_MPA_FLAG_C : 0) |
		       (rr->reject ? SIWX_MPA_FLAG_R : 0) |
		       (rr->enhanced ? SIWX_MPA_FLAG_E : 0));
	buf[17] = rr->rev;
	siwx_put_be16(buf + 18, (u16)(len - SIWX_MPA_RR_HDR_LEN));
	if (rr->enhanced) {
		ird = rr->ird | (rr->p2p ? V2_P : 0) |
		      (rr->rtr & SIWX_MPA_RTR_SEND ? V2_S : 0);
		ord = rr->ord | (rr->rtr & SIWX_MPA_RTR_WRITE ? V2_W : 0) |
		      (rr->rtr & SIWX_MPA_RTR_READ ? V2_R : 0);
		siwx_put_be16(p, ird);
		siwx_put_be16(p + 2, ord);
		p += SIWX_MPA_V2_PARAMS_LEN;
	}
	if (rr->pd_len)
		memcpy(p, rr->pd, rr->pd_len);
	return len;
}

enum siwx_parse siwx_mpa_rr_decode(const u8 *buf, size_t len,
				   struct siwx_mpa_rr *rr, size_t *frame_len,
				   struct siwx_term *err)
{
	size_t key_have = len < SIWX_MPA_KEY_LEN ? len : SIWX_MPA_KEY_LEN;
	u16 pd_len;
	u16 ird, ord;

	*err = siwx_term_make(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA,
			      SIWX_LLP_INVALID_RR);
	memset(rr, 0, sizeof(*rr));
	/* Fail on the first wrong key octet: no need to wait for more. */
	if (memcmp(buf, key_req, key_have) && memcmp(buf, key_rep, key_have))
		return SIWX_PARSE_ERROR;
	if (len < SIWX_MPA_RR_HDR_LEN)
		return SIWX_PARSE_MORE;
	rr->reply = !memcmp(buf, key_rep, SIWX_MPA_KEY_LEN);
	rr->markers = buf[16] & SIWX_MPA_FLAG_M;
	rr->crc = buf[16] & SIWX_MPA_FLAG_C;
	rr->reject = buf[16] & SIWX_MPA_FLAG_R;
	rr->rev = buf[17];
	pd_len = siwx_get_be16(buf + 18);
	if (rr->rev < 1 || rr->rev > 2 || pd_len > SIWX_MPA_MAX_PD_LEN)
		return SIWX_PARSE_ERROR;
	/* Revision 1 has no E bit: it is reserved and ignored there. */
	rr->enhanced = rr->rev == 2 && (buf[16] & SIWX_MPA_FLAG_E);
	if (len < SIWX_MPA_RR_HDR_LEN + (size_t)pd_len)
		return SIWX_PARSE_MORE;
	rr->pd = buf + SIWX_MPA_RR_HDR_LEN;
	rr->pd_len = pd_len;
	if (rr->enhanced) {
		if (pd_len < SIWX_MPA_V2_PARAMS_LEN)
			return SIWX_PARSE_ERROR;
		ird = siwx_get_be16(rr->pd);
		ord = siwx_get_be16(rr->pd + 2);
		rr->p2p = ird & V2_P;
		rr->rtr = (ird & V2_S ? SIWX_MPA_RTR_SEND : 0) |
			  (ord & V2_W ? SIWX_MPA_RTR_WRITE : 0) |
			  (ord & V2_R ? SIWX_MPA_RTR_READ : 0);
		rr->ird = ird & SIWX_MPA_IRD_ORD_MAX;
		rr->ord = ord & SIWX_MPA_IRD_ORD_MAX;
		rr->pd += SIWX_MPA_V2_PARAMS_LEN;
		rr->pd_len -= SIWX_MPA_V2_PARAMS_LEN;
	}
	*frame_len = SIWX_MPA_RR_HDR_LEN + pd_len;
	return SIWX_PARSE_OK;
}

size_t siwx_mpa_trailer(u32 crc, u32 ulpdu_len, bool crc_on, u8 *out)
{
	static const u8 zeros[3];
	u32 pad = siwx_mpa_pad(ulpdu_len);

	memset(out, 0, pad);
	if (crc_on) {
		if (pad)
			crc = siwx_crc32c(crc, zeros, pad);
		siwx_put_le32(out + pad, siwx_crc32c_final(crc));
	} else {
		siwx_put_le32(out + pad, 0);
	}
	return pad + SIWX_MPA_CRC_LEN;
}
