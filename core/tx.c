// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* TX segmentation of RDMAP messages into DDP segments / MPA FPDUs. */
#include <siwx/proto/bytes.h>
#include <siwx/proto/crc32c.h>
#include <siwx/proto/tx.h>

void siwx_tx_msg_init(struct siwx_tx_msg *m, const struct siwx_ddp_hdr *hdr,
		      const u8 *rdmap_hdr, u32 rdmap_hdr_len, u32 len)
{
	m->hdr = *hdr;
	m->rdmap_hdr = rdmap_hdr;
	m->rdmap_hdr_len = rdmap_hdr_len;
	m->len = len;
	m->done = 0;
	m->started = false;
}

bool siwx_tx_next(struct siwx_tx_msg *m, u32 mulpdu, struct siwx_tx_seg *s)
{
	struct siwx_ddp_hdr h = m->hdr;
	u32 overhead = (u32)siwx_ddp_hdr_len(h.tagged) + m->rdmap_hdr_len;
	u32 room, left = m->len - m->done;
	u8 *p = s->hdr + SIWX_MPA_LEN_FIELD;

	if (m->started && !left)
		return false;
	if (mulpdu > SIWX_MPA_MAX_ULPDU)
		mulpdu = SIWX_MPA_MAX_ULPDU;
	if (mulpdu <= overhead)
		return false;
	room = mulpdu - overhead;

	s->payload_off = m->done;
	s->payload_len = left < room ? left : room;
	s->last = s->payload_len == left;
	s->ulpdu_len = overhead + s->payload_len;

	/* RFC 5041 section 5: tagged segments advance TO, untagged MO. */
	h.last = s->last;
	if (h.tagged)
		h.to += m->done;
	else
		h.mo = m->done;
	siwx_put_be16(s->hdr, (u16)s->ulpdu_len);
	p += siwx_ddp_encode(&h, p);
	if (m->rdmap_hdr_len) {
		memcpy(p, m->rdmap_hdr, m->rdmap_hdr_len);
		p += m->rdmap_hdr_len;
	}
	s->hdr_len = (u32)(p - s->hdr);

	m->done += s->payload_len;
	m->started = true;
	return true;
}

size_t siwx_tx_fpdu(const struct siwx_tx_seg *s, const u8 *payload,
		    bool crc_on, u8 *out)
{
	u32 crc = SIWX_CRC32C_INIT;
	u8 *p = out;

	memcpy(p, s->hdr, s->hdr_len);
	p += s->hdr_len;
	if (s->payload_len)
		memcpy(p, payload + s->payload_off, s->payload_len);
	p += s->payload_len;
	if (crc_on)
		crc = siwx_crc32c(crc, out, (size_t)(p - out));
	p += siwx_mpa_trailer(crc, s->ulpdu_len, crc_on, p);
	return (size_t)(p - out);
}
