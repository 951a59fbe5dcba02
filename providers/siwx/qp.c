// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Queue pairs: creation (mapping the SQ and RQ rings), the control verbs
 * that go to the kernel, and the data path, which writes ring elements
 * and leaves the doorbells to doorbell.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "siwx.h"

struct siwx_create_qp_resp {
	struct ib_uverbs_create_qp_resp core;
	struct siwx_uresp_create_qp drv;
};

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static void siwx_qp_unmap(struct siwx_qp *qp)
{
	if (qp->sq_map)
		munmap(qp->sq_map, qp->sq_map_len);
	if (qp->rq_map)
		munmap(qp->rq_map, qp->rq_map_len);
}

static void *map_queue(struct ibv_context *ctx, uint64_t key, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ctx->cmd_fd, (off_t)key);

	return p == MAP_FAILED ? NULL : p;
}

static int siwx_qp_map(struct siwx_qp *qp, struct ibv_context *ctx,
		       const struct siwx_uresp_create_qp *drv)
{
	if (!drv->num_sqe || (!qp->srq && !drv->num_rqe))
		return EPROTO;	/* a kernel that did not fill our udata */

	qp->sq_map_len = (size_t)drv->num_sqe * sizeof(struct siwx_sqe) +
			 sizeof(struct siwx_sq_ctrl);
	qp->sq_map = map_queue(ctx, drv->sq_key, qp->sq_map_len);
	if (!qp->sq_map)
		return errno;
	siwx_ring_init(&qp->sq, qp->sq_map, drv->num_sqe,
		       sizeof(struct siwx_sqe));
	qp->sq_ctrl = (struct siwx_sq_ctrl *)siwx_ring_at(&qp->sq,
							  drv->num_sqe);

	if (qp->srq)
		return 0;
	qp->rq_map_len = (size_t)drv->num_rqe * sizeof(struct siwx_rqe);
	qp->rq_map = map_queue(ctx, drv->rq_key, qp->rq_map_len);
	if (!qp->rq_map)
		return errno;
	siwx_ring_init(&qp->rq, qp->rq_map, drv->num_rqe,
		       sizeof(struct siwx_rqe));
	return 0;
}

static int siwx_check_qp_attr(const struct ibv_qp_init_attr_ex *attr)
{
	if (attr->qp_type != IBV_QPT_RC)
		return EOPNOTSUPP;	/* iWARP is connected-only */
	/* No create flag is supported; asking for none is fine */
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags)
		return EOPNOTSUPP;
	if (attr->comp_mask &
	    ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			IBV_QP_INIT_ATTR_CREATE_FLAGS))
		return EOPNOTSUPP;	/* XRC, RSS, TSO, ... */
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd)
		return EINVAL;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~(uint64_t)SIWX_QP_EX_SEND_OPS))
		return EOPNOTSUPP;
	if (attr->cap.max_send_sge > SIWX_MAX_SGE ||
	    attr->cap.max_recv_sge > SIWX_MAX_SGE ||
	    attr->cap.max_inline_data > SIWX_MAX_INLINE)
		return EINVAL;
	return 0;
}

struct ibv_qp *siwx_create_qp_ex(struct ibv_context *ctx,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct ibvp_cmd_create_qp cmd = {};
	struct siwx_create_qp_resp resp = {};
	struct ibv_qp_init_attr_ex cmd_attr;
	struct siwx_qp *qp;
	int rv;

	rv = siwx_check_qp_attr(attr);
	if (rv) {
		errno = rv;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}

	/* The command takes no create flags (and none is set): not asked */
	cmd_attr = *attr;
	cmd_attr.comp_mask &= ~(uint32_t)IBV_QP_INIT_ATTR_CREATE_FLAGS;
	rv = ibv_cmd_create_qp_ex(ctx, &qp->vqp, &cmd_attr, &cmd, sizeof(cmd),
				  &resp.core, sizeof(resp));
	if (rv) {
		free(qp);
		errno = rv;
		return NULL;
	}
	attr->cap = cmd_attr.cap;

	qp->id = resp.drv.qp_id;
	qp->srq = attr->srq ? to_ssrq(attr->srq) : NULL;
	qp->sig_all = attr->sq_sig_all;
	/* attr->cap now holds what the kernel granted */
	qp->lim.max_sge = min_u32(attr->cap.max_send_sge, SIWX_MAX_SGE);
	qp->lim.max_inline = min_u32(attr->cap.max_inline_data,
				     to_sctx(ctx)->max_inline);
	qp->max_recv_sge = min_u32(attr->cap.max_recv_sge, SIWX_MAX_SGE);

	rv = siwx_qp_map(qp, ctx, &resp.drv);
	if (rv)
		goto fail;

	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	siwx_qp_init_doorbell(qp);

	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		qp->send_ops = attr->send_ops_flags;
		siwx_qp_ex_init(qp);
		qp->vqp.comp_mask |= IBVP_QP_EX;
	}
	return &qp->vqp.qp;

fail:
	siwx_qp_unmap(qp);
	ibv_cmd_destroy_qp(&qp->vqp.qp);
	free(qp);
	errno = rv;
	return NULL;
}

struct ibv_qp *siwx_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp = siwx_create_qp_ex(pd->context, &ex);

	if (qp)
		attr->cap = ex.cap;
	return qp;
}

int siwx_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct ibvp_cmd_modify_qp cmd = {};

	return ibv_cmd_modify_qp(qp, attr, mask, &cmd, sizeof(cmd));
}

int siwx_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		  struct ibv_qp_init_attr *init_attr)
{
	struct ibvp_cmd_query_qp cmd = {};

	return ibv_cmd_query_qp(qp, attr, mask, init_attr, &cmd, sizeof(cmd));
}

int siwx_destroy_qp(struct ibv_qp *ibqp)
{
	struct siwx_qp *qp = to_sqp(ibqp);
	int rv;

	rv = ibv_cmd_destroy_qp(ibqp);
	if (rv)
		return rv;
	siwx_qp_unmap(qp);
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp);
	return 0;
}

int siwx_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct siwx_qp *qp = to_sqp(ibqp);
	struct siwx_sqe sqe;
	unsigned int posted = 0;
	void *slot;
	int rv = 0;

	pthread_spin_lock(&qp->sq_lock);
	for (; wr; wr = wr->next) {
		slot = siwx_ring_claim(&qp->sq);
		if (!slot) {
			rv = ENOMEM;
			break;
		}
		rv = siwx_sqe_from_send_wr(&sqe, wr, qp->sig_all, &qp->lim);
		if (rv)
			break;
		/* copied with flags lacking VALID; published next */
		memcpy(slot, &sqe, sizeof(sqe));
		siwx_elem_publish(slot, sqe.flags);
		qp->sq.pos = siwx_ring_next(&qp->sq, qp->sq.pos);
		posted++;
	}
	if (posted)
		siwx_sq_doorbell(qp);
	pthread_spin_unlock(&qp->sq_lock);

	if (rv)
		*bad_wr = wr;
	return rv;
}

int siwx_ring_recv(struct siwx_ring *ring, pthread_spinlock_t *lock,
		   uint32_t max_sge, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct siwx_rqe rqe;
	void *slot;
	int rv = 0;

	pthread_spin_lock(lock);
	for (; wr; wr = wr->next) {
		slot = siwx_ring_claim(ring);
		if (!slot) {
			rv = ENOMEM;
			break;
		}
		rv = siwx_rqe_from_recv_wr(&rqe, wr, max_sge);
		if (rv)
			break;
		memcpy(slot, &rqe, sizeof(rqe));
		siwx_elem_publish(slot, rqe.flags);
		ring->pos = siwx_ring_next(ring, ring->pos);
	}
	pthread_spin_unlock(lock);

	if (rv)
		*bad_wr = wr;
	return rv;
}

int siwx_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct siwx_qp *qp = to_sqp(ibqp);
	int rv;

	if (qp->srq) {
		/* receives go to the SRQ (ibv_post_srq_recv) */
		*bad_wr = wr;
		return EINVAL;
	}
	rv = siwx_ring_recv(&qp->rq, &qp->rq_lock, qp->max_recv_sge, wr,
			    bad_wr);
	siwx_rq_doorbell(qp);
	return rv;
}
