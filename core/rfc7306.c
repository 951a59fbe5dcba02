// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* RFC 7306 Atomic Request / Response headers and atomic arithmetic. */
#include <siwx/proto/bytes.h>
#include <siwx/proto/rfc7306.h>

#define ALL_ONES 0xffffffffffffffffULL

size_t siwx_atomic_req_encode(const struct siwx_atomic_req *r, u8 *buf)
{
	/* 28 reserved bits, zero on transmit, then the 4-bit AOpCode. */
	siwx_put_be32(buf, r->aopcode & 0xf);
	siwx_put_be32(buf + 4, r->req_id);
	siwx_put_be32(buf + 8, r->stag);
	siwx_put_be64(buf + 12, r->to);
	siwx_put_be64(buf + 20, r->add_swap);
	siwx_put_be64(buf + 28, r->add_swap_mask);
	siwx_put_be64(buf + 36, r->compare);
	siwx_put_be64(buf + 44, r->compare_mask);
	return SIWX_ATOMIC_REQ_LEN;
}

bool siwx_atomic_req_decode(const u8 *buf, struct siwx_atomic_req *r,
			    struct siwx_term *err)
{
	r->aopcode = buf[3] & 0xf;	/* reserved bits are ignored */
	r->req_id = siwx_get_be32(buf + 4);
	r->stag = siwx_get_be32(buf + 8);
	r->to = siwx_get_be64(buf + 12);
	r->add_swap = siwx_get_be64(buf + 20);
	r->add_swap_mask = siwx_get_be64(buf + 28);
	r->compare = siwx_get_be64(buf + 36);
	r->compare_mask = siwx_get_be64(buf + 44);
	if (r->aopcode != SIWX_AOP_FETCH_ADD &&
	    r->aopcode != SIWX_AOP_CMP_SWAP) {
		/* Section 1: an unsupported operation is Unexpected OpCode. */
		*err = siwx_term_make(SIWX_LAYER_RDMAP,
				      SIWX_RDMAP_ETYPE_REMOTE_OP,
				      SIWX_RDMAP_UNEXPECTED_OPCODE);
		return false;
	}
	return true;
}

size_t siwx_atomic_resp_encode(const struct siwx_atomic_resp *r, u8 *buf)
{
	siwx_put_be32(buf, r->req_id);
	siwx_put_be64(buf + 4, r->orig);
	return SIWX_ATOMIC_RESP_LEN;
}

void siwx_atomic_resp_decode(const u8 *buf, struct siwx_atomic_resp *r)
{
	r->req_id = siwx_get_be32(buf);
	r->orig = siwx_get_be64(buf + 4);
}

void siwx_atomic_req_fetch_add(struct siwx_atomic_req *r, u32 req_id,
			       u32 stag, u64 to, u64 add, u64 add_mask)
{
	r->aopcode = SIWX_AOP_FETCH_ADD;
	r->req_id = req_id;
	r->stag = stag;
	r->to = to;
	r->add_swap = add;
	r->add_swap_mask = add_mask;
	r->compare = 0;
	r->compare_mask = ALL_ONES;
}

void siwx_atomic_req_cmp_swap(struct siwx_atomic_req *r, u32 req_id,
			      u32 stag, u64 to, u64 compare, u64 compare_mask,
			      u64 swap, u64 swap_mask)
{
	r->aopcode = SIWX_AOP_CMP_SWAP;
	r->req_id = req_id;
	r->stag = stag;
	r->to = to;
	r->add_swap = swap;
	r->add_swap_mask = swap_mask;
	r->compare = compare;
	r->compare_mask = compare_mask;
}

/*
 * Section 5.1.1 adds bit by bit and drops the carry out of every bit set
 * in the Add Mask. The same in three word operations: add with the mask
 * bits cleared in both operands, so a carry into a mask bit position stops
 * there, then put back the sum of the two operand bits at those positions
 * (sum bit = carry in XOR a XOR b; its carry out is discarded).
 */
u64 siwx_fetch_add_masked(u64 orig, u64 add, u64 mask)
{
	u64 partial = (orig & ~mask) + (add & ~mask);

	return partial ^ ((orig ^ add) & mask);
}

/* Section 5.1.2. */
u64 siwx_cmp_swap_masked(u64 orig, u64 compare, u64 compare_mask, u64 swap,
			 u64 swap_mask)
{
	if ((compare ^ orig) & compare_mask)
		return orig;
	return (orig & ~swap_mask) | (swap & swap_mask);
}

u64 siwx_atomic_apply(const struct siwx_atomic_req *r, u64 orig)
{
	if (r->aopcode == SIWX_AOP_FETCH_ADD)
		return siwx_fetch_add_masked(orig, r->add_swap,
					     r->add_swap_mask);
	return siwx_cmp_swap_masked(orig, r->compare, r->compare_mask,
				    r->add_swap, r->add_swap_mask);
}
