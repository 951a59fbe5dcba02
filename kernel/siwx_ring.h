/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The rings shared with the provider (include/siwx/abi.h): an element by
 * its free-running position, and the ownership protocol of its flags
 * word. The producer fills the element and sets VALID last; the consumer
 * reads it and clears the flags last, which gives the slot back. Each
 * side uses release for its last store and acquire to read the other's.
 * Allocation and mmap: siwx_ring.c.
 */
#ifndef SIWX_RING_H
#define SIWX_RING_H

#include "siwx.h"

/* siwx_ring.c */
int siwx_ring_alloc(struct siwx_ring *ring, u32 num, u32 elem_size,
		    size_t ctrl_size);
void *siwx_ring_ctrl(struct siwx_ring *ring);
int siwx_ring_publish(struct siwx_ring *ring, struct ib_udata *udata,
		      u64 *key);
void siwx_ring_free(struct siwx_ring *ring);
int siwx_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void siwx_mmap_free(struct rdma_user_mmap_entry *rentry);

/* The element's contents may be read once its VALID flag is seen */
static inline bool siwx_elem_valid(__u16 *flags, u16 valid)
{
	/* pairs with the producer's release of the flag */
	return smp_load_acquire(flags) & valid;
}

/* Hand @flags' element back to its producer */
static inline void siwx_elem_release(__u16 *flags)
{
	/* the element is ours until the flag clears: reads before it */
	smp_store_release(flags, 0);
}

/* Publish a filled element: its contents before its VALID flag */
static inline void siwx_elem_publish(__u16 *flags, u16 set)
{
	/* pairs with siwx_elem_valid() on the consumer's side */
	smp_store_release(flags, set);
}

/* Ring sizes are powers of two (siwx_ring_alloc) */
static inline struct siwx_sqe *siwx_sq_slot(struct siwx_qp *qp, u32 pos)
{
	return &qp->sqe[pos & (qp->sq.num - 1)];
}

/* The kernel's private state of the SQE at @pos */
static inline struct siwx_sq_shadow *siwx_sq_shadow_at(struct siwx_qp *qp,
						       u32 pos)
{
	return &qp->sq_shadow[pos & (qp->sq.num - 1)];
}

static inline struct siwx_rqe *siwx_rq_slot(struct siwx_qp *qp, u32 pos)
{
	return &qp->rqe[pos & (qp->rq.num - 1)];
}

static inline struct siwx_rqe *siwx_srq_slot(struct siwx_srq *srq, u32 pos)
{
	return &srq->rqe[pos & (srq->ring.num - 1)];
}

static inline struct siwx_cqe *siwx_cq_slot(struct siwx_cq *cq, u32 pos)
{
	return &cq->cqe[pos & (cq->ring.num - 1)];
}

/*
 * A WR waits at the TX engine's position and the ring lets it go (not
 * every slot holds a WR in flight). The SQE is only looked at.
 */
static inline bool siwx_sq_waiting(struct siwx_qp *qp)
{
	u32 pos = READ_ONCE(qp->sq_tx);
	struct siwx_sqe *sqe = siwx_sq_slot(qp, pos);

	if (pos - READ_ONCE(qp->sq_done) >= qp->sq.num)
		return false;
	return siwx_elem_valid(&sqe->flags, SIWX_WQE_VALID);
}

#endif /* SIWX_RING_H */
