// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Memory windows. In RFC 5040 (section 2.1) an STag names a Memory
 * Region or a Memory Window alike; a window grants a peer access to a
 * range of a registered region with rights of its own. The wire does not
 * change: a peer's Write, Read or atomic names the window's STag, and the
 * data path checks and places through it as through an MR.
 *
 * A window is bound by a Bind Memory Window work request, which the TX
 * engine executes in order with the QP's other WRs. Each bind makes a
 * binding (a SIWX_MR_WINDOW siwx_mr) that holds the window's bounds and
 * rights, shares its MR's page array and holds a reference on the MR;
 * the binding sits in the window's STag slot of dev->mrs while it is
 * current. Rebinding, invalidation and dealloc replace it with the
 * window's idle placeholder, so an access in progress keeps a binding
 * that no longer changes, and the MR's pages stay until it ends.
 *
 * Verbs rules kept here (the InfiniBand Architecture's memory windows,
 * the RDMAC verbs' Bind Memory Window): window, MR and QP share one PD; the MR
 * allows binding (IB_ACCESS_MW_BIND); a window with remote write or
 * atomic rights needs an MR with local write; the window lies inside the
 * MR; a type 2 window is bound only when it is not bound (free) and is
 * then associated with the QP that bound it (type 2B: QP and PD are
 * checked on every access). A zero-length bind leaves the window
 * unbound. An MR cannot be deregistered while windows are bound to it
 * (siwx_dereg_mr: EBUSY).
 */
#include <linux/slab.h>

#include "siwx_stag.h"

/* Rights a window may grant; local write means nothing for one */
#define SIWX_MW_ACCESS (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | \
			IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_LOCAL_WRITE)

int siwx_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct siwx_dev *dev = to_siwx_dev(ibmw->device);
	struct siwx_mw *mw = to_siwx_mw(ibmw);
	u8 key;
	int rv;

	if (!siwx_count_get(&dev->num_mw, SIWX_MAX_MW))
		return -ENOMEM;
	/* stag 0 (index 0 is never allocated): no STag finds the window */
	mw->idle.kind = SIWX_MR_WINDOW;
	mw->idle.mw = mw;
	rv = xa_alloc_cyclic_bh(&dev->mrs, &mw->index, &mw->idle,
				XA_LIMIT(1, SIWX_STAG_INDEX_MAX),
				&dev->next_stag_index, GFP_KERNEL);
	if (rv < 0) {
		atomic_dec(&dev->num_mw);
		return rv;
	}
	key = atomic_inc_return(&dev->stag_key);
	ibmw->rkey = mw->index << SIWX_STAG_KEY_BITS | key;
	return 0;
}

/* A bound window is unbound first: dealloc never fails. */
int siwx_dealloc_mw(struct ib_mw *ibmw)
{
	struct siwx_dev *dev = to_siwx_dev(ibmw->device);
	struct siwx_mw *mw = to_siwx_mw(ibmw);
	struct siwx_mr *slot;

	xa_lock_bh(&dev->mrs);
	slot = xa_load(&dev->mrs, mw->index);
	if (slot && slot != &mw->idle)
		siwx_mw_unbind_locked(dev, slot);
	__xa_erase(&dev->mrs, mw->index);
	xa_unlock_bh(&dev->mrs);
	atomic_dec(&dev->num_mw);
	return 0;
}

/* May @qp bind a window with @access to [@addr, @addr + @len) of @mr? */
static bool siwx_mw_mr_ok(struct siwx_qp *qp, struct siwx_mr *mr, u32 lkey,
			  u64 addr, u64 len, int access)
{
	if (!mr || mr->stag != lkey || !mr->valid ||
	    mr->kind != SIWX_MR_USER || mr->ibmr.pd != qp->ibqp.pd)
		return false;
	if (!(mr->access & IB_ACCESS_MW_BIND))
		return false;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return false;
	return addr >= mr->iova && addr + len >= addr &&
	       addr + len <= mr->iova + mr->length;
}

static void siwx_mw_binding_init(struct siwx_mr *b, struct siwx_mw *mw,
				 struct siwx_mr *mr, struct siwx_qp *qp,
				 const struct siwx_sqe *sqe)
{
	kref_init(&b->ref);
	b->kind = SIWX_MR_WINDOW;
	b->ibmr.pd = mw->ibmw.pd;
	b->stag = sqe->rkey;
	b->access = (int)sqe->bind.access & ~IB_ACCESS_LOCAL_WRITE;
	b->valid = true;
	b->mw = mw;
	kref_get(&mr->ref);
	b->parent = mr;
	mr->bound_windows++;
	b->qp_uid = mw->ibmw.type == IB_MW_TYPE_2 ? qp->uid : 0;
	b->pages = mr->pages;
	b->iova = sqe->raddr;
	b->length = sqe->bind.length;
	b->first_offset = sqe->raddr - mr->iova + mr->first_offset;
}

/*
 * Execute the Bind Memory Window SQE (siwx_sqe_bind: abi.h) for @qp.
 * Returns 0, -EPERM when the bind breaks a rule above (the WR completes
 * with a bind error), or -ENOMEM.
 */
int siwx_mw_bind(struct siwx_qp *qp, const struct siwx_sqe *sqe)
{
	struct siwx_dev *dev = qp->dev;
	u64 len = sqe->bind.length;
	struct siwx_mr *slot, *mr = NULL, *binding = NULL;
	struct siwx_mw *mw;
	int rv = -EPERM;

	if (sqe->bind.access & ~(u64)SIWX_MW_ACCESS)
		return -EPERM;	/* zero-based windows included */
	if (len) {
		binding = kzalloc(sizeof(*binding), GFP_KERNEL);
		if (!binding)
			return -ENOMEM;
	}
	xa_lock_bh(&dev->mrs);
	slot = xa_load(&dev->mrs, sqe->rkey >> SIWX_STAG_KEY_BITS);
	mw = slot && slot->kind == SIWX_MR_WINDOW ? slot->mw : NULL;
	if (!mw || mw->ibmw.pd != qp->ibqp.pd)
		goto out;
	if (mw->ibmw.type == IB_MW_TYPE_2 && slot != &mw->idle)
		goto out;
	if (len) {
		u32 lkey = sqe->bind.mr_lkey;

		mr = xa_load(&dev->mrs, lkey >> SIWX_STAG_KEY_BITS);
		if (sqe->bind.mr_lkey > U32_MAX ||
		    !siwx_mw_mr_ok(qp, mr, lkey, sqe->raddr, len,
				   (int)sqe->bind.access))
			goto out;
	}
	if (slot != &mw->idle)
		siwx_mw_unbind_locked(dev, slot);
	mw->ibmw.rkey = sqe->rkey;
	if (binding) {
		siwx_mw_binding_init(binding, mw, mr, qp, sqe);
		__xa_store(&dev->mrs, mw->index, binding, 0);
		binding = NULL;
	}
	rv = 0;
out:
	xa_unlock_bh(&dev->mrs);
	kfree(binding);
	return rv;
}
