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
	if (!resp.drv.num_cqe) {
		rv = EPROTO;	/* a kernel that did not fill our udata */
		goto fail_cmd;
	}

	cq->id = resp.drv.cq_id;
	cq->map_len = (size_t)resp.drv.num_cqe * sizeof(struct siwx_cqe) +
		      sizeof(struct siwx_cq_ctrl);
	cq->map = mmap(NULL, cq->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ctx->cmd_fd, (off_t)resp.drv.cq_key);
	if (cq->map == MAP_FAILED) {
		rv = errno;
		goto fail_cmd;
	}
	siwx_ring_init(&cq->ring, cq->map, resp.drv.num_cqe,
		       sizeof(struct siwx_cqe));
	cq->ctrl = (struct siwx_cq_ctrl *)siwx_ring_at(&cq->ring,
						       resp.drv.num_cqe);
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return cq;

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

int siwx_destroy_cq(struct ibv_cq *ibcq)
{
	struct siwx_cq *cq = to_scq(ibcq);
	int rv;

	rv = ibv_cmd_destroy_cq(ibcq);
	if (rv)
		return rv;
	munmap(cq->map, cq->map_len);
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

	__atomic_store_n(&cq->ctrl->notify,
			 solicited_only ? SIWX_NOTIFY_SOLICITED :
					  SIWX_NOTIFY_NEXT,
			 __ATOMIC_RELEASE);
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
