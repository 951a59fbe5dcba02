// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Shared receive queues: a receive ring like a QP's RQ, shared by the QPs
 * created with it.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "siwx.h"

struct siwx_create_srq_resp {
	struct ib_uverbs_create_srq_resp core;
	struct siwx_uresp_create_srq drv;
};

struct ibv_srq *siwx_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr)
{
	struct ibvp_cmd_create_srq cmd = {};
	struct siwx_create_srq_resp resp = {};
	struct siwx_srq *srq;
	int rv;

	if (attr->attr.max_sge > SIWX_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	rv = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				&resp.core, sizeof(resp));
	if (rv) {
		free(srq);
		errno = rv;
		return NULL;
	}
	if (!resp.drv.num_rqe) {
		rv = EPROTO;
		goto fail;
	}
	srq->max_sge = attr->attr.max_sge < SIWX_MAX_SGE ? attr->attr.max_sge :
							   SIWX_MAX_SGE;
	srq->map_len = (size_t)resp.drv.num_rqe * sizeof(struct siwx_rqe);
	srq->map = mmap(NULL, srq->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			pd->context->cmd_fd, (off_t)resp.drv.srq_key);
	if (srq->map == MAP_FAILED) {
		rv = errno;
		goto fail;
	}
	siwx_ring_init(&srq->ring, srq->map, resp.drv.num_rqe,
		       sizeof(struct siwx_rqe));
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	return &srq->vsrq.srq;

fail:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
	free(srq);
	errno = rv;
	return NULL;
}

int siwx_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct ibvp_cmd_modify_srq cmd = {};

	return ibv_cmd_modify_srq(srq, attr, mask, &cmd, sizeof(cmd));
}

int siwx_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibvp_cmd_query_srq cmd = {};

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

int siwx_destroy_srq(struct ibv_srq *ibsrq)
{
	struct siwx_srq *srq = to_ssrq(ibsrq);
	int rv;

	rv = ibv_cmd_destroy_srq(ibsrq);
	if (rv)
		return rv;
	munmap(srq->map, srq->map_len);
	pthread_spin_destroy(&srq->lock);
	free(srq);
	return 0;
}

int siwx_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct siwx_srq *srq = to_ssrq(ibsrq);

	return siwx_ring_recv(&srq->ring, &srq->lock, srq->max_sge, wr,
			      bad_wr);
}
