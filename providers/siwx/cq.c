// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Completion queues: the kernel produces CQEs into an mmap'ed ring, the
 * provider consumes them without a system call (VALID-flag protocol).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cqe.h"
#include "siwx.h"

struct siwx_create_cq_resp {
	struct ib_uverbs_create_cq_resp core;
	struct siwx_uresp_create_cq drv;
};

/*
 * A CQ's ring lives at the start of an address range reserved for the
 * largest ring, zero pages elsewhere, and never moves: pollers look at the
 * ring without the lock first (siwx_ring_ready()), and one that does so
 * during a resize must read a ring, old or new, or zeros (an empty ring),
 * never a hole.
 */
static size_t siwx_cq_reserve_len(void)
{
	return (size_t)SIWX_MAX_CQE * sizeof(struct siwx_cqe) +
	       sizeof(struct siwx_cq_ctrl);
}

static size_t siwx_cq_ring_len(uint32_t num_cqe)
{
	return (size_t)num_cqe * sizeof(struct siwx_cqe) +
	       sizeof(struct siwx_cq_ctrl);
}

/* The kernel's ring (num_cqe slots at key) at the reserved range's start */
static int siwx_cq_map(struct siwx_cq *cq, int cmd_fd, uint32_t num_cqe,
		       uint64_t key)
{
	void *map;

	if (!num_cqe || num_cqe > SIWX_MAX_CQE)
		return EPROTO;	/* a kernel that did not fill our udata */
	/* Set first: a failed fixed mapping may leave a hole this long */
	cq->map_len = siwx_cq_ring_len(num_cqe);
	map = mmap(cq->map, cq->map_len, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_FIXED, cmd_fd, (off_t)key);
	if (map == MAP_FAILED)
		return errno;
	siwx_ring_init(&cq->ring, cq->map, num_cqe, sizeof(struct siwx_cqe));
	cq->ctrl = (struct siwx_cq_ctrl *)siwx_ring_at(&cq->ring, num_cqe);
	return 0;
}

/* Zero pages where the ring was; its own pages go back to the kernel */
static void siwx_cq_unmap(struct siwx_cq *cq)
{
	mmap(cq->map, cq->map_len, PROT_READ,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

/* The kernel CQ and its mapped ring, for ibv_create_cq and _cq_ex alike */
struct siwx_cq *siwx_cq_new(struct ibv_context *ctx, int num_cqe,
			    struct ibv_comp_channel *channel, int comp_vector)
{
	struct ibvp_cmd_create_cq cmd = {};
	struct siwx_create_cq_resp resp = {};
	struct siwx_cq *cq;
	int rv;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	rv = ibv_cmd_create_cq(ctx, num_cqe, channel, comp_vector, &cq->vcq.cq,
			       &cmd, sizeof(cmd), &resp.core, sizeof(resp));
	if (rv) {
		free(cq);
		errno = rv;
		return NULL;
	}
	cq->id = resp.drv.cq_id;
	cq->map = mmap(NULL, siwx_cq_reserve_len(), PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cq->map == MAP_FAILED) {
		rv = errno;
		goto fail_cmd;
	}
	rv = siwx_cq_map(cq, ctx->cmd_fd, resp.drv.num_cqe, resp.drv.cq_key);
	if (rv)
		goto fail_map;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return cq;

fail_map:
	munmap(cq->map, siwx_cq_reserve_len());
fail_cmd:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
	free(cq);
	errno = rv;
	return NULL;
}

struct ibv_cq *siwx_create_cq(struct ibv_context *ctx, int num_cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector)
{
	struct siwx_cq *cq = siwx_cq_new(ctx, num_cqe, channel, comp_vector);

	return cq ? &cq->vcq.cq : NULL;
}

struct siwx_resize_cq_resp {
	struct ib_uverbs_resize_cq_resp core;
	struct siwx_uresp_create_cq drv;
};

/*
 * The kernel moves the CQEs not yet polled to the start of a new ring
 * (kernel/siwx_cq.c); the lock keeps pollers and arming out until the
 * ring they see is the new one. An arm that waited here lands in the new
 * ring's control block, which the kernel started with the old one's state.
 */
int siwx_resize_cq(struct ibv_cq *ibcq, int num_cqe)
{
	struct siwx_cq *cq = to_scq(ibcq);
	struct ibvp_cmd_resize_cq cmd = {};
	struct siwx_resize_cq_resp resp = {};
	int rv;

	pthread_spin_lock(&cq->lock);
	rv = ibv_cmd_resize_cq(ibcq, num_cqe, &cmd, sizeof(cmd), &resp.core,
			       sizeof(resp));
	if (rv)
		goto out;
	/*
	 * From here the kernel writes only the new ring. Should it not map,
	 * the CQ is lost to us: its range reads as an empty ring, and the
	 * error says why.
	 */
	siwx_cq_unmap(cq);
	rv = siwx_cq_map(cq, ibcq->context->cmd_fd, resp.drv.num_cqe,
			 resp.drv.cq_key);
	if (rv)
		siwx_cq_unmap(cq);
out:
	pthread_spin_unlock(&cq->lock);
	return rv;
}

int siwx_destroy_cq(struct ibv_cq *ibcq)
{
	struct siwx_cq *cq = to_scq(ibcq);
	int rv;

	rv = ibv_cmd_destroy_cq(ibcq);
	if (rv)
		return rv;
	munmap(cq->map, siwx_cq_reserve_len());
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

int siwx_poll_cq_imm8(struct ibv_cq *ibcq, int num, struct ibv_wc *wc,
		      uint8_t (*imm)[SIWX_IMM_LEN])
{
	struct siwx_cq *cq = to_scq(ibcq);
	struct siwx_cqe *cqe;
	int n;

	/*
	 * Busy-polling consumers mostly find the CQ empty: say so without
	 * the lock (a racing poller may take the CQE we saw; then the
	 * locked loop below finds nothing).
	 */
	if (!siwx_ring_ready(&cq->ring))
		return 0;
	pthread_spin_lock(&cq->lock);
	for (n = 0; n < num; n++) {
		cqe = siwx_ring_peek(&cq->ring);
		if (!cqe)
			break;
		siwx_cqe_to_wc(cqe, &wc[n]);
		if (imm)
			siwx_cqe_imm8(cqe, imm[n]);
		siwx_ring_consume(&cq->ring);
	}
	pthread_spin_unlock(&cq->lock);
	return n;
}

int siwx_poll_cq(struct ibv_cq *ibcq, int num, struct ibv_wc *wc)
{
	return siwx_poll_cq_imm8(ibcq, num, wc, NULL);
}

/*
 * Arming is a store into the shared control block; the kernel reads it
 * when it adds a CQE and raises the completion event (then disarms).
 */
int siwx_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct siwx_cq *cq = to_scq(ibcq);

	/* Not into a control block that a resize is replacing */
	pthread_spin_lock(&cq->lock);
	__atomic_store_n(&cq->ctrl->notify,
			 solicited_only ? SIWX_NOTIFY_SOLICITED :
					  SIWX_NOTIFY_NEXT,
			 __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
	/*
	 * The caller polls next. The kernel writes a CQE, then (full
	 * barrier) reads notify; we write notify, then must not read the
	 * ring before that store is visible, or both sides can miss each
	 * other: the kernel sees no arm, we see no CQE, and the consumer
	 * sleeps on an event that never comes.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}
