// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Completion queues: a ring of siwx_cqe the kernel produces into and the
 * consumer (provider, or poll_cq for kernel users) drains, plus the
 * siwx_cq_ctrl word that holds the armed state. Producing CQEs is the
 * data path's job; this file creates, drains and arms.
 */
#include <linux/log2.h>

#include "siwx.h"
#include "siwx_ring.h"

int siwx_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata)
{
	struct siwx_dev *dev = to_siwx_dev(ibcq->device);
	struct siwx_cq *cq = to_siwx_cq(ibcq);
	struct siwx_uresp_create_cq resp = {};
	u32 num;
	int rv;

	/* Every CQE carries its time (abi.h): the flag asks for nothing more */
	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > SIWX_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (!siwx_count_get(&dev->num_cq, SIWX_MAX_CQ))
		return -ENOMEM;

	num = roundup_pow_of_two(attr->cqe);
	spin_lock_init(&cq->lock);
	rv = siwx_ring_alloc(&cq->ring, num, sizeof(struct siwx_cqe),
			     sizeof(struct siwx_cq_ctrl));
	if (rv)
		goto err_count;
	cq->cqe = cq->ring.buf;
	cq->ctrl = siwx_ring_ctrl(&cq->ring);
	cq->id = atomic_inc_return(&dev->next_cq_id);
	ibcq->cqe = num;

	if (udata) {
		rv = siwx_ring_publish(&cq->ring, udata, &resp.cq_key);
		if (rv)
			goto err_ring;
		resp.cq_id = cq->id;
		resp.num_cqe = num;
		rv = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (rv)
			goto err_ring;
	}
	return 0;

err_ring:
	siwx_ring_free(&cq->ring);
err_count:
	atomic_dec(&dev->num_cq);
	return rv;
}

/*
 * The CQEs the consumer has not taken yet: VALID and contiguous up to the
 * producer's position, since the consumer gives them back in ring order.
 * For a user CQ the provider owns the flags; whatever it wrote there, the
 * count stays within the ring.
 */
static u32 siwx_cq_held(struct siwx_cq *cq)
{
	u32 held = 0;

	while (held < cq->ring.num &&
	       siwx_elem_valid(&siwx_cq_slot(cq, cq->prod - 1 - held)->flags,
			       SIWX_CQE_VALID))
		held++;
	return held;
}

/*
 * A new ring that starts with the CQEs the old one holds, in their order,
 * and the same armed state. Producers add CQEs under cq->lock, so each
 * CQE goes to the old ring before the move or to the new one after it:
 * none is lost or seen twice. The consumer does not run meanwhile: a
 * kernel consumer polls under the same lock, and the provider holds its
 * CQ lock across the command and then continues at the new ring's start.
 * A size below the CQEs held fails (EINVAL) and changes nothing.
 */
int siwx_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct siwx_cq *cq = to_siwx_cq(ibcq);
	struct siwx_uresp_create_cq resp = {};
	struct siwx_ring ring, old;
	struct siwx_cq_ctrl *ctrl;
	struct siwx_cqe *to;
	unsigned long flags;
	u32 num, held, i;
	int rv;

	if (cqe < 1 || cqe > SIWX_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	num = roundup_pow_of_two(cqe);
	rv = siwx_ring_alloc(&ring, num, sizeof(struct siwx_cqe),
			     sizeof(struct siwx_cq_ctrl));
	if (rv)
		return rv;
	if (udata) {
		rv = siwx_ring_publish(&ring, udata, &resp.cq_key);
		if (rv)
			goto err_ring;
	}
	to = ring.buf;
	ctrl = siwx_ring_ctrl(&ring);

	spin_lock_irqsave(&cq->lock, flags);
	held = siwx_cq_held(cq);
	if (held > num) {
		spin_unlock_irqrestore(&cq->lock, flags);
		rv = -EINVAL;
		goto err_ring;
	}
	for (i = 0; i < held; i++)
		to[i] = *siwx_cq_slot(cq, cq->prod - held + i);
	ctrl->notify = READ_ONCE(cq->ctrl->notify);
	ctrl->wall_offset_ns = READ_ONCE(cq->ctrl->wall_offset_ns);
	old = cq->ring;
	cq->ring = ring;
	cq->cqe = to;
	cq->ctrl = ctrl;
	cq->prod = held;
	cq->cons = 0;
	ibcq->cqe = num;
	spin_unlock_irqrestore(&cq->lock, flags);
	/* A mapping of the old ring keeps its pages until it is unmapped */
	siwx_ring_free(&old);

	if (!udata)
		return 0;
	resp.cq_id = cq->id;
	resp.num_cqe = num;
	return ib_copy_to_udata(udata, &resp, sizeof(resp));

err_ring:
	siwx_ring_free(&ring);
	return rv;
}

int siwx_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct siwx_dev *dev = to_siwx_dev(ibcq->device);
	struct siwx_cq *cq = to_siwx_cq(ibcq);

	siwx_ring_free(&cq->ring);
	atomic_dec(&dev->num_cq);
	return 0;
}

/*
 * The CQE's opcode and status values are those of ib_wc_opcode and
 * ib_wc_status (abi.h takes them from the verbs enums).
 */
static void siwx_cqe_to_wc(struct siwx_cq *cq, const struct siwx_cqe *cqe,
			   struct ib_wc *wc)
{
	struct siwx_dev *dev = to_siwx_dev(cq->ibcq.device);
	struct siwx_qp *qp = xa_load(&dev->qps, cqe->qp_num);

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->byte_len = cqe->bytes;
	wc->qp = qp ? &qp->ibqp : NULL;
	if (cqe->flags & SIWX_CQE_WITH_IMM) {
		/* verbs' 32-bit imm_data is the first four octets */
		memcpy(&wc->ex.imm_data, cqe->imm, sizeof(wc->ex.imm_data));
		wc->wc_flags |= IB_WC_WITH_IMM;
	} else if (cqe->flags & SIWX_CQE_WITH_INV) {
		wc->ex.invalidate_rkey = cqe->inval_stag;
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	}
}

/* For kernel consumers; user space polls the mapped ring itself. */
int siwx_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct siwx_cq *cq = to_siwx_cq(ibcq);
	unsigned long flags;
	int i;

	spin_lock_irqsave(&cq->lock, flags);
	for (i = 0; i < num; i++) {
		struct siwx_cqe *cqe = siwx_cq_slot(cq, cq->cons);

		if (!siwx_elem_valid(&cqe->flags, SIWX_CQE_VALID))
			break;
		siwx_cqe_to_wc(cq, cqe, &wc[i]);
		siwx_elem_release(&cqe->flags);
		cq->cons++;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return i;
}

int siwx_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct siwx_cq *cq = to_siwx_cq(ibcq);
	unsigned long irqflags;
	u32 notify;
	int rv = 0;

	notify = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
			 SIWX_NOTIFY_SOLICITED : SIWX_NOTIFY_NEXT;
	spin_lock_irqsave(&cq->lock, irqflags);
	/*
	 * Producers add a CQE and test the armed state under the same
	 * lock, so a CQE that raced with arming is seen here.
	 */
	WRITE_ONCE(cq->ctrl->notify, notify);
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    (READ_ONCE(siwx_cq_slot(cq, cq->cons)->flags) & SIWX_CQE_VALID))
		rv = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return rv;
}
