// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-cq-ex's messages, deterministic in (seed, seq) so that both sides
 * compute them and nothing but the seed crosses the wire: each one's kind,
 * size and immediate data, the payload pattern, and the canary that
 * shows bytes written where no message should be.
 */
#include <endian.h>
#include <string.h>

#include <arpa/inet.h>

#include "cq_ex.h"

const char *const kind_name[] = {
	[K_SEND] = "Send",
	[K_WIMM] = "write-with-imm (4 octets, ibv_post_send)",
	[K_WIMM8] = "write-with-imm (8 octets, siwxdv)",
};

/* The first ones cover each kind at 0, 1 and the largest size. */
static const struct {
	enum kind k;
	uint32_t len;
} first_msgs[] = {
	{ K_SEND, 0 }, { K_WIMM, 0 }, { K_WIMM8, 0 },
	{ K_SEND, SEND_MAX }, { K_WIMM, WRITE_MAX }, { K_WIMM8, WRITE_MAX },
	{ K_SEND, 1 }, { K_WIMM8, 1 }, { K_WIMM, 1 }, { K_WIMM8, 4095 },
	{ K_SEND, 4095 }, { K_WIMM, 4097 },
};

#define NFIRST (sizeof(first_msgs) / sizeof(first_msgs[0]))

enum kind msg_kind(uint64_t seed, uint64_t seq)
{
	if (seq < NFIRST)
		return first_msgs[seq].k;
	return (enum kind)(tp_mix(seed ^ 0x11, seq) % 3);
}

uint32_t msg_len(uint64_t seed, uint64_t seq)
{
	uint64_t r = tp_mix(seed ^ 0x22, seq);
	uint32_t max = msg_kind(seed, seq) == K_SEND ? SEND_MAX : WRITE_MAX;

	if (seq < NFIRST)
		return first_msgs[seq].len;
	switch (r & 7) {
	case 0: return 0;
	case 1: return 1 + (uint32_t)((r >> 8) % 16);
	case 2: return max;
	default: return (uint32_t)((r >> 8) % (max + 1));
	}
}

/* K_WIMM: imm_data in host order (message 1: zero). */
uint32_t msg_imm(uint64_t seed, uint64_t seq)
{
	return seq == 1 ? 0 : (uint32_t)tp_mix(seed ^ 0x33, seq);
}

/* K_WIMM8: the 8 octets (message 2: all zero, 5: all ones). */
void msg_imm8(uint64_t seed, uint64_t seq, uint8_t imm[IMM8_LEN])
{
	uint64_t v = seq == 2 ? 0 : seq == 5 ? UINT64_MAX :
		     tp_mix(seed ^ 0x44, seq);

	memcpy(imm, &v, IMM8_LEN);
}

/* What the receiver's 8 octets must be for message @seq (zeros: none). */
void want_imm8(uint64_t seed, uint64_t seq, uint8_t imm[IMM8_LEN])
{
	uint32_t be;

	memset(imm, 0, IMM8_LEN);
	switch (msg_kind(seed, seq)) {
	case K_WIMM:
		/* libsiwx: imm_data as stored in octets 0-3, zeros after */
		be = htonl(msg_imm(seed, seq));
		memcpy(imm, &be, 4);
		break;
	case K_WIMM8:
		msg_imm8(seed, seq, imm);
		break;
	default:
		break;
	}
}

int64_t canary_check(const uint8_t *p, size_t len)
{
	static uint8_t canary[4096];
	size_t i, chunk;

	if (!canary[0])
		memset(canary, CANARY, sizeof(canary));
	/* memcmp by pages first: TCG guests are slow at byte loops */
	for (i = 0; i < len; i += chunk) {
		chunk = len - i < sizeof(canary) ? len - i : sizeof(canary);
		if (memcmp(p + i, canary, chunk))
			break;
	}
	for (; i < len; i++)
		if (p[i] != CANARY)
			return (int64_t)i;
	return -1;
}
