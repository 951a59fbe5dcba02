/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The VALID-flag ring protocol of include/siwx/abi.h, both directions.
 *
 * There are no shared indices: each side walks the ring with its own
 * position and an element belongs to whoever the element's VALID bit says.
 * The producer fills an element it owns (VALID clear), then stores the
 * flags with VALID set using release semantics, so the consumer can never
 * see VALID before the element's contents. The consumer loads the flags
 * with acquire semantics, uses the element, and hands it back by storing
 * zero flags with release semantics, so the producer never overwrites an
 * element the consumer is still reading.
 *
 * Every queue element of abi.h starts with a 64-bit id followed by the
 * 16-bit flags word; the helpers rely on that (checked below) so that one
 * implementation serves SQ, RQ, SRQ and CQ.
 *
 * Pure code (no syscalls): the unit tests drive it on plain memory.
 */
#ifndef SIWX_RING_H
#define SIWX_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <siwx/abi.h>

#define SIWX_ELEM_VALID 1u	/* SIWX_WQE_VALID == SIWX_CQE_VALID */
#define SIWX_ELEM_FLAGS_OFF 8

#ifdef __cplusplus
static_assert(offsetof(struct siwx_sqe, flags) == SIWX_ELEM_FLAGS_OFF, "");
static_assert(offsetof(struct siwx_rqe, flags) == SIWX_ELEM_FLAGS_OFF, "");
static_assert(offsetof(struct siwx_cqe, flags) == SIWX_ELEM_FLAGS_OFF, "");
#else
_Static_assert(offsetof(struct siwx_sqe, flags) == SIWX_ELEM_FLAGS_OFF,
	       "SQE flags must follow the id");
_Static_assert(offsetof(struct siwx_rqe, flags) == SIWX_ELEM_FLAGS_OFF,
	       "RQE flags must follow the id");
_Static_assert(offsetof(struct siwx_cqe, flags) == SIWX_ELEM_FLAGS_OFF,
	       "CQE flags must follow the id");
_Static_assert(SIWX_WQE_VALID == SIWX_ELEM_VALID &&
		       SIWX_CQE_VALID == SIWX_ELEM_VALID,
	       "one VALID bit for all queues");
#endif

struct siwx_ring {
	uint8_t *base;		/* element array (mmap'ed) */
	uint32_t num;		/* number of elements */
	uint32_t esize;		/* element size */
	uint32_t pos;		/* this side's next element */
};

static inline void siwx_ring_init(struct siwx_ring *r, void *base,
				  uint32_t num, uint32_t esize)
{
	r->base = (uint8_t *)base;
	r->num = num;
	r->esize = esize;
	r->pos = 0;
}

static inline void *siwx_ring_at(const struct siwx_ring *r, uint32_t idx)
{
	return r->base + (size_t)idx * r->esize;
}

/* The position after idx, wrapping. */
static inline uint32_t siwx_ring_next(const struct siwx_ring *r, uint32_t idx)
{
	return idx + 1 == r->num ? 0 : idx + 1;
}

static inline uint16_t *siwx_elem_flags(void *elem)
{
	return (uint16_t *)((uint8_t *)elem + SIWX_ELEM_FLAGS_OFF);
}

static inline uint16_t siwx_elem_load_flags(void *elem)
{
	return __atomic_load_n(siwx_elem_flags(elem), __ATOMIC_ACQUIRE);
}

/* Producer: may this element be (re)filled? */
static inline bool siwx_elem_free(void *elem)
{
	return !(siwx_elem_load_flags(elem) & SIWX_ELEM_VALID);
}

/* Producer: hand a filled element to the consumer. */
static inline void siwx_elem_publish(void *elem, uint16_t flags)
{
	__atomic_store_n(siwx_elem_flags(elem), flags | SIWX_ELEM_VALID,
			 __ATOMIC_RELEASE);
}

/* Consumer: the current element if the producer has published it. */
static inline void *siwx_ring_peek(const struct siwx_ring *r)
{
	void *elem = siwx_ring_at(r, r->pos);

	return (siwx_elem_load_flags(elem) & SIWX_ELEM_VALID) ? elem : NULL;
}

/* Consumer: give the current element back and move on. */
static inline void siwx_ring_consume(struct siwx_ring *r)
{
	__atomic_store_n(siwx_elem_flags(siwx_ring_at(r, r->pos)), 0,
			 __ATOMIC_RELEASE);
	/* atomic: siwx_ring_ready() reads it without the consumer's lock */
	__atomic_store_n(&r->pos, siwx_ring_next(r, r->pos), __ATOMIC_RELAXED);
}

/*
 * Consumer, without its lock: whether an element looks published. Only a
 * hint (another consumer may take it first); false means come back later.
 */
static inline bool siwx_ring_ready(const struct siwx_ring *r)
{
	uint32_t pos = __atomic_load_n(&r->pos, __ATOMIC_RELAXED);

	return siwx_elem_load_flags(siwx_ring_at(r, pos)) & SIWX_ELEM_VALID;
}

/* Producer: the current element if it is free (else the ring is full). */
static inline void *siwx_ring_claim(const struct siwx_ring *r)
{
	void *elem = siwx_ring_at(r, r->pos);

	return siwx_elem_free(elem) ? elem : NULL;
}

/*
 * SQ doorbell decision (abi.h): after publishing, a full barrier orders
 * our VALID stores before the read of tx_active; the kernel does the
 * mirror image (clear tx_active, full barrier, re-check the next element)
 * so at least one side notices the new work.
 */
static inline bool siwx_sq_doorbell_needed(const struct siwx_sq_ctrl *ctrl)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&ctrl->tx_active, __ATOMIC_RELAXED) == 0;
}

/*
 * RQ doorbell decision (abi.h): after publishing, a full barrier orders
 * our VALID stores before the read of rq_doorbell; the kernel sets it,
 * issues a full barrier, then looks at the ring, so a receive posted to a
 * dead QP, or one a waiting message needs, is either seen by the kernel
 * or seen here.
 */
static inline bool siwx_rq_doorbell_needed(const struct siwx_sq_ctrl *ctrl)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&ctrl->rq_doorbell, __ATOMIC_RELAXED) != 0;
}

#endif /* SIWX_RING_H */
