// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * RFC 7306 atomics (5.1: FetchAdd and CmpSwap, both masked; 5.3) with
 * real CPU atomics on the registered page, so they are atomic against
 * every QP of every siwx device and against local CPU atomics on the same
 * word. Memory is untouched on a fault. The arithmetic is the protocol
 * core's (siwx_atomic_apply()).
 */
#include <linux/atomic.h>
#include <linux/highmem.h>

#include "siwx_atomic.h"
#include "siwx_stag.h"

/* Responder: execute an Atomic Request (valid AOpCode, from the core). */
int siwx_atomic_execute(struct siwx_qp *qp,
			const struct siwx_atomic_req *req, u64 *orig,
			struct siwx_term *err)
{
	enum siwx_access_fault fault;
	struct siwx_mr *mr;
	unsigned int off;
	struct page *page;
	u64 *word, old;
	void *va;

	mr = siwx_mr_get_checked(qp, req->stag, IB_ACCESS_REMOTE_ATOMIC,
				 req->to, sizeof(u64), &fault);
	if (!mr)
		goto fault;
	page = siwx_mr_page(mr, req->to, &off);
	if (!page || (req->to & 7) || (off & 7)) {
		siwx_mr_put(mr);
		fault = SIWX_FAULT_MISALIGNED;
		goto fault;
	}
	va = kmap_local_page(page);
	word = va + off;
	if (req->aopcode == SIWX_AOP_FETCH_ADD && !req->add_swap_mask) {
		old = (u64)atomic64_fetch_add((s64)req->add_swap,
					      (atomic64_t *)word);
	} else {
		old = READ_ONCE(*word);
		while (!try_cmpxchg64(word, &old, siwx_atomic_apply(req, old)))
			;
	}
	kunmap_local(va);
	siwx_mr_put(mr);
	*orig = old;
	return 0;

fault:
	*err = siwx_term_for_access(SIWX_ACCESS_ATOMIC, fault);
	return -EACCES;
}

/* Requester: store the original value (host order) in the WR's SGE. */
int siwx_atomic_result(struct siwx_qp *qp, const struct siwx_sge *sink,
		       u64 value)
{
	enum siwx_access_fault fault;
	struct siwx_mr *mr;

	mr = siwx_mr_get_checked(qp, sink->lkey, IB_ACCESS_LOCAL_WRITE,
				 sink->addr, sizeof(value), &fault);
	if (!mr)
		return -EACCES;
	siwx_mr_copy_to(mr, sink->addr, (const u8 *)&value, sizeof(value),
			NULL);
	siwx_mr_put(mr);
	return 0;
}
