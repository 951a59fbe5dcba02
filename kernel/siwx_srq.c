// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Shared receive queues: a ring of siwx_rqe like a QP's RQ, plus the
 * limit that arms the SRQ_LIMIT_REACHED event (raised by the RX path).
 */
#include <linux/log2.h>

#include "siwx_ring.h"

int siwx_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	struct siwx_dev *dev = to_siwx_dev(ibsrq->device);
	struct siwx_srq *srq = to_siwx_srq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	struct siwx_uresp_create_srq resp = {};
	u32 num;
	int rv;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (attr->max_wr > SIWX_MAX_SRQ_WR || attr->max_sge > SIWX_MAX_SGE)
		return -EINVAL;
	num = roundup_pow_of_two(max(attr->max_wr, 1U));
	if (attr->srq_limit > num)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (!siwx_count_get(&dev->num_srq, SIWX_MAX_SRQ))
		return -ENOMEM;

	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->post_lock);
	rv = siwx_ring_alloc(&srq->ring, num, sizeof(struct siwx_rqe), 0);
	if (rv)
		goto err_count;
	srq->rqe = srq->ring.buf;
	srq->max_sge = SIWX_MAX_SGE;
	srq->limit = attr->srq_limit;
	srq->armed = attr->srq_limit != 0;

	if (udata) {
		rv = siwx_ring_publish(&srq->ring, udata, &resp.srq_key);
		if (rv)
			goto err_ring;
		resp.num_rqe = num;
		rv = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (rv)
			goto err_ring;
	}
	attr->max_wr = num;
	attr->max_sge = srq->max_sge;
	return 0;

err_ring:
	siwx_ring_free(&srq->ring);
err_count:
	atomic_dec(&dev->num_srq);
	return rv;
}

int siwx_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct siwx_srq *srq = to_siwx_srq(ibsrq);
	unsigned long flags;

	/* The ring cannot be resized */
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->ring.num)
		return -EINVAL;

	spin_lock_irqsave(&srq->lock, flags);
	srq->limit = attr->srq_limit;
	srq->armed = attr->srq_limit != 0;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

int siwx_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct siwx_srq *srq = to_siwx_srq(ibsrq);
	unsigned long flags;

	attr->max_wr = srq->ring.num;
	attr->max_sge = srq->max_sge;
	spin_lock_irqsave(&srq->lock, flags);
	attr->srq_limit = srq->armed ? srq->limit : 0;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

int siwx_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct siwx_dev *dev = to_siwx_dev(ibsrq->device);
	struct siwx_srq *srq = to_siwx_srq(ibsrq);

	siwx_ring_free(&srq->ring);
	atomic_dec(&dev->num_srq);
	return 0;
}
