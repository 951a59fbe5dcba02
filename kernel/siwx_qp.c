// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Queue pairs: creation with their SQ and RQ rings, query, the reference
 * count the iWARP CM holds, and destruction. State changes are in
 * siwx_qp_state.c, posting in siwx_post.c.
 */
#include <linux/log2.h>
#include <linux/netdevice.h>
#include <linux/slab.h>

#include "siwx_ring.h"

static int siwx_qp_check_cap(const struct ib_qp_cap *cap, bool has_srq)
{
	if (cap->max_send_wr > SIWX_MAX_QP_WR ||
	    cap->max_send_sge > SIWX_MAX_SGE ||
	    cap->max_inline_data > SIWX_MAX_INLINE)
		return -EINVAL;
	/* With an SRQ the receive capabilities are the SRQ's */
	if (!has_srq && (cap->max_recv_wr > SIWX_MAX_QP_WR ||
			 cap->max_recv_sge > SIWX_MAX_SGE))
		return -EINVAL;
	return 0;
}

/* What the rings and the SQE layout allow, reported back to the caller */
static void siwx_qp_fill_cap(struct siwx_qp *qp, struct ib_qp_cap *cap)
{
	cap->max_send_wr = qp->sq.num;
	cap->max_send_sge = qp->max_send_sge;
	cap->max_recv_wr = qp->srq ? 0 : qp->rq.num;
	cap->max_recv_sge = qp->max_recv_sge;
	cap->max_inline_data = SIWX_MAX_INLINE;
}

static int siwx_qp_alloc_rings(struct siwx_qp *qp,
			       const struct ib_qp_cap *cap)
{
	u32 num;
	int rv;

	num = roundup_pow_of_two(max(cap->max_send_wr, 1U));
	rv = siwx_ring_alloc(&qp->sq, num, sizeof(struct siwx_sqe),
			     sizeof(struct siwx_sq_ctrl));
	if (rv)
		return rv;
	qp->sqe = qp->sq.buf;
	qp->sq_ctrl = siwx_ring_ctrl(&qp->sq);
	if (qp->srq)
		return 0;

	num = roundup_pow_of_two(max(cap->max_recv_wr, 1U));
	rv = siwx_ring_alloc(&qp->rq, num, sizeof(struct siwx_rqe), 0);
	if (rv) {
		siwx_ring_free(&qp->sq);
		return rv;
	}
	qp->rqe = qp->rq.buf;
	return 0;
}

static int siwx_qp_publish(struct siwx_qp *qp, struct ib_udata *udata)
{
	struct siwx_uresp_create_qp resp = {
		.qp_id = qp->ibqp.qp_num,
		.num_sqe = qp->sq.num,
	};
	int rv;

	rv = siwx_ring_publish(&qp->sq, udata, &resp.sq_key);
	if (rv)
		return rv;
	/* With an SRQ, num_rqe is 0 and rq_key means nothing */
	if (!qp->srq) {
		rv = siwx_ring_publish(&qp->rq, udata, &resp.rq_key);
		if (rv)
			return rv;
		resp.num_rqe = qp->rq.num;
	}
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

/* A new QP's fields, from @attr */
static void siwx_qp_init(struct siwx_qp *qp, struct siwx_dev *dev,
			 const struct ib_qp_init_attr *attr)
{
	qp->dev = dev;
	qp->uid = atomic64_inc_return(&dev->next_qp_uid);
	kref_init(&qp->ref);
	init_completion(&qp->released);
	mutex_init(&qp->state_lock);
	/*
	 * An iWARP QP starts in the verbs' one initial state, Idle, which
	 * InfiniBand splits into RESET and INIT; iWARP devices report it
	 * as INIT (protocol-decisions.md, "A new QP is in INIT").
	 */
	qp->state = IB_QPS_INIT;
	qp->scq = to_siwx_cq(attr->send_cq);
	qp->rcq = to_siwx_cq(attr->recv_cq);
	qp->srq = attr->srq ? to_siwx_srq(attr->srq) : NULL;
	qp->sig_all = attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->max_send_sge = SIWX_MAX_SGE;
	qp->max_recv_sge = qp->srq ? 0 : SIWX_MAX_SGE;
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->post_lock);
}

int siwx_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		   struct ib_udata *udata)
{
	struct siwx_dev *dev = to_siwx_dev(ibqp->device);
	struct siwx_qp *qp = to_siwx_qp(ibqp);
	u32 qpn;
	int rv;

	if (attr->qp_type != IB_QPT_RC || attr->create_flags)
		return -EOPNOTSUPP;
	if (!attr->send_cq || !attr->recv_cq)
		return -EINVAL;
	rv = siwx_qp_check_cap(&attr->cap, attr->srq);
	if (rv)
		return rv;
	if (udata && udata->outlen < sizeof(struct siwx_uresp_create_qp))
		return -EINVAL;
	if (!siwx_count_get(&dev->num_qp, SIWX_MAX_QP))
		return -ENOMEM;

	siwx_qp_init(qp, dev, attr);
	rv = siwx_qp_alloc_rings(qp, &attr->cap);
	if (rv)
		goto err_count;
	qp->sq_shadow = kvcalloc(qp->sq.num, sizeof(*qp->sq_shadow),
				 GFP_KERNEL);
	if (!qp->sq_shadow) {
		rv = -ENOMEM;
		goto err_rings;
	}
	/* Reserve the number; the CM can find the QP once it is complete */
	rv = xa_alloc_cyclic_bh(&dev->qps, &qpn, NULL,
				XA_LIMIT(1, SIWX_MAX_QPN), &dev->next_qpn,
				GFP_KERNEL);
	if (rv < 0)
		goto err_rings;
	ibqp->qp_num = qpn;

	if (udata) {
		rv = siwx_qp_publish(qp, udata);
		if (rv)
			goto err_qpn;
	}
	xa_store_bh(&dev->qps, qpn, qp, GFP_KERNEL);
	siwx_qp_fill_cap(qp, &attr->cap);
	return 0;

err_qpn:
	xa_erase_bh(&dev->qps, qpn);
err_rings:
	kvfree(qp->sq_shadow);
	siwx_ring_free(&qp->rq);
	siwx_ring_free(&qp->sq);
err_count:
	atomic_dec(&dev->num_qp);
	return rv;
}

/*
 * ib_core frees the QP when this returns, so wait for every reference:
 * iwcm's (until its CLOSE or connect failure) and the connection's,
 * which the abortive close started here gives back.
 */
int siwx_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct siwx_qp *qp = to_siwx_qp(ibqp);
	struct siwx_dev *dev = qp->dev;

	mutex_lock(&qp->state_lock);
	qp->state = IB_QPS_ERR;
	mutex_unlock(&qp->state_lock);
	siwx_qp_disconnect(qp, true);

	xa_erase_bh(&dev->qps, ibqp->qp_num);
	siwx_qp_put(qp);
	wait_for_completion(&qp->released);
	kvfree(qp->sq_shadow);

	siwx_ring_free(&qp->rq);
	siwx_ring_free(&qp->sq);
	atomic_dec(&dev->num_qp);
	return 0;
}

int siwx_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct siwx_qp *qp = to_siwx_qp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));

	mutex_lock(&qp->state_lock);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->qp_access_flags = qp->access;
	attr->max_rd_atomic = qp->ord;
	attr->max_dest_rd_atomic = qp->ird;
	mutex_unlock(&qp->state_lock);

	attr->port_num = 1;
	attr->path_mtu = ib_mtu_int_to_enum(READ_ONCE(qp->dev->netdev->mtu));
	siwx_qp_fill_cap(qp, &attr->cap);

	init->qp_type = IB_QPT_RC;
	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}
