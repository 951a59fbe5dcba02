/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * RFC 7306 RDMAP extensions: Atomic Request / Response headers
 * (sections 5.2.1, 5.2.2), Immediate Data (section 6.3) and the masked
 * FetchAdd / CmpSwap arithmetic (sections 5.1.1, 5.1.2).
 */
#ifndef SIWX_PROTO_RFC7306_H
#define SIWX_PROTO_RFC7306_H

#include "term.h"
#include "types.h"

#define SIWX_ATOMIC_REQ_LEN 52
#define SIWX_ATOMIC_RESP_LEN 12
#define SIWX_IMM_LEN 8

/* Atomic Operation Codes (RFC 7306 figure 5; 1 and 3-15 reserved). */
enum siwx_aopcode {
	SIWX_AOP_FETCH_ADD = 0x0,
	SIWX_AOP_CMP_SWAP = 0x2,
};

struct siwx_atomic_req {
	u8 aopcode;
	u32 req_id;
	u32 stag;
	u64 to;
	u64 add_swap;		/* Add Data or Swap Data */
	u64 add_swap_mask;	/* Add Mask or Swap Mask */
	u64 compare;
	u64 compare_mask;
};

struct siwx_atomic_resp {
	u32 req_id;		/* Original Request Identifier */
	u64 orig;		/* Original Remote Data Value */
};

size_t siwx_atomic_req_encode(const struct siwx_atomic_req *r, u8 *buf);
/* Reserved AOpCodes fail with RDMAP Remote Operation, Unexpected OpCode. */
bool siwx_atomic_req_decode(const u8 *buf, struct siwx_atomic_req *r,
			    struct siwx_term *err);
size_t siwx_atomic_resp_encode(const struct siwx_atomic_resp *r, u8 *buf);
void siwx_atomic_resp_decode(const u8 *buf, struct siwx_atomic_resp *r);

/*
 * Requests as the verbs post them. A verbs fetch-and-add is an unmasked
 * FetchAdd (Add Mask 0); a verbs compare-and-swap compares and swaps all
 * 64 bits (both masks all ones). Unused fields follow RFC 7306 section
 * 5.2.1: Compare Data 0, unused masks all ones.
 */
void siwx_atomic_req_fetch_add(struct siwx_atomic_req *r, u32 req_id,
			       u32 stag, u64 to, u64 add, u64 add_mask);
void siwx_atomic_req_cmp_swap(struct siwx_atomic_req *r, u32 req_id,
			      u32 stag, u64 to, u64 compare, u64 compare_mask,
			      u64 swap, u64 swap_mask);

/* Masked FetchAdd: carries do not leave a field whose MSB is set in @mask. */
u64 siwx_fetch_add_masked(u64 orig, u64 add, u64 mask);
/* Masked CmpSwap: the value stored after the operation. */
u64 siwx_cmp_swap_masked(u64 orig, u64 compare, u64 compare_mask, u64 swap,
			 u64 swap_mask);
/* The value an Atomic Request leaves at its target (aopcode valid). */
u64 siwx_atomic_apply(const struct siwx_atomic_req *r, u64 orig);

#endif /* SIWX_PROTO_RFC7306_H */
