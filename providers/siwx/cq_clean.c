// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * A destroyed QP's completions leave its CQs. Verbs leaves open what
 * becomes of them; mlx4 and mlx5, the hardware most software meets,
 * remove them, and software relies on it: libfabric's ofi_rxm closes a
 * connection's endpoint, then reads the shared CQ and would repost a
 * receive it finds completed there on the endpoint it just closed. So
 * siwx removes them too, as mlx5 does: the published completions behind
 * them move up into their places, newest first, and the slots that
 * frees at the front go back to the kernel. The kernel writes only slots
 * whose VALID bit is clear, so it never meets a slot being moved.
 */
#include <string.h>

#include "cq_clean.h"

/* The slot @k after @idx, wrapping */
static uint32_t siwx_cq_clean_slot(const struct siwx_ring *ring, uint32_t idx,
				   uint32_t k)
{
	return (uint32_t)(((uint64_t)idx + k) % ring->num);
}

static bool siwx_cq_clean_takes(const struct siwx_cqe *cqe, uint32_t qp_num,
				bool keep_recv)
{
	if (cqe->qp_num != qp_num)
		return false;
	return !keep_recv || !(cqe->opcode & SIWX_WC_RECV);
}

uint32_t siwx_cq_clean(struct siwx_ring *ring, uint32_t qp_num,
		       bool keep_recv)
{
	uint32_t n, taken = 0, i;
	struct siwx_cqe *cqe;
	void *dst;

	/* The published completions; a full ring holds num of them */
	for (n = 0; n < ring->num; n++) {
		cqe = siwx_ring_at(ring, siwx_cq_clean_slot(ring, ring->pos, n));
		if (!(siwx_elem_load_flags(cqe) & SIWX_ELEM_VALID))
			break;
	}
	/* Newest first: each one kept moves up past those taken after it */
	for (i = n; i-- > 0;) {
		cqe = siwx_ring_at(ring, siwx_cq_clean_slot(ring, ring->pos, i));
		if (siwx_cq_clean_takes(cqe, qp_num, keep_recv)) {
			taken++;
			continue;
		}
		if (!taken)
			continue;
		dst = siwx_ring_at(ring,
				   siwx_cq_clean_slot(ring, ring->pos, i + taken));
		memcpy(dst, cqe, sizeof(*cqe));
	}
	for (i = 0; i < taken; i++)
		siwx_ring_consume(ring);
	return taken;
}
