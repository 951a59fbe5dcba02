// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Data-sink bookkeeping: scatter-list positions, immediate lengths. */
#include <siwx/proto/rdmap.h>
#include <siwx/proto/recv.h>

bool siwx_sgl_seek(const u32 *lens, u32 n, u32 mo, u32 len,
		   struct siwx_sgl_pos *pos, struct siwx_term *err)
{
	u64 total = 0;
	u32 i;

	for (i = 0; i < n; i++)
		total += lens[i];
	if ((u64)mo + len > total) {
		*err = siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED,
				      SIWX_DDP_UT_TOO_LONG);
		return false;
	}
	/* Skip whole elements, and empty ones, before the position. */
	for (i = 0; i < n && (mo >= lens[i]); i++)
		mo -= lens[i];
	pos->idx = i;
	pos->off = mo;
	return true;
}

void siwx_imm_len_track(struct siwx_imm_len *t, u8 opcode, u32 len)
{
	switch (opcode) {
	case SIWX_OP_WRITE:
		t->write_len = len;
		t->after_write = true;
		break;
	case SIWX_OP_READ_RESP:
	case SIWX_OP_ATOMIC_RESP:
	case SIWX_OP_TERMINATE:
		break;
	default:
		t->after_write = false;
		break;
	}
}

u32 siwx_imm_len_take(struct siwx_imm_len *t)
{
	u32 len = t->after_write ? t->write_len : 0;

	t->after_write = false;
	return len;
}
