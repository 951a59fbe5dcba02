// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * STags as the data path uses them (RFC 5040 section 2.1: an STag names
 * a Memory Region or a Memory Window alike).
 *
 * An STag (siwx.h) is its index in dev->mrs << 8 | a key. Lookups take a
 * reference under the xarray lock; dereg marks the MR invalid and removes
 * the index first, then waits for the references to go (siwx_mr.c). RX
 * holds a tagged message's MR from its first segment to its last, and
 * checks it again for each (siwx_mr_recheck()). A bound window's index
 * holds its binding, a SIWX_MR_WINDOW of its own (siwx_mw.c), checked and
 * placed through here like an MR.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "siwx_stag.h"

static void siwx_mr_release(struct kref *ref)
{
	struct siwx_mr *mr = container_of(ref, struct siwx_mr, ref);
	struct siwx_mr *parent = mr->parent;

	/* A window's binding is nobody's to wait for: it goes by itself */
	if (mr->kind == SIWX_MR_WINDOW) {
		kfree(mr);
		siwx_mr_put(parent);
		return;
	}
	complete(&mr->released);
}

/* The MR an STag names, with a reference; NULL if none (any more). */
static struct siwx_mr *siwx_mr_get(struct siwx_dev *dev, u32 stag)
{
	struct siwx_mr *mr;

	xa_lock_bh(&dev->mrs);
	mr = xa_load(&dev->mrs, stag >> SIWX_STAG_KEY_BITS);
	if (mr && (mr->stag != stag || !kref_get_unless_zero(&mr->ref)))
		mr = NULL;
	xa_unlock_bh(&dev->mrs);
	return mr;
}

void siwx_mr_put(struct siwx_mr *mr)
{
	kref_put(&mr->ref, siwx_mr_release);
}

/*
 * The MR @stag names, with a reference, if @qp may use @len octets of it
 * at @to with @right (siwx_mr_check()); else NULL and the reason in
 * @fault.
 */
struct siwx_mr *siwx_mr_get_checked(struct siwx_qp *qp, u32 stag, int right,
				    u64 to, u64 len,
				    enum siwx_access_fault *fault)
{
	struct siwx_mr *mr = siwx_mr_get(qp->dev, stag);

	if (!mr) {
		*fault = SIWX_FAULT_INVALID_STAG;
		return NULL;
	}
	if (siwx_mr_check(qp, mr, right, to, len, fault)) {
		siwx_mr_put(mr);
		return NULL;
	}
	return mr;
}

/*
 * Copy @len octets to tagged offset @to of @mr (bounds checked). An
 * inbound FPDU's payload comes with its parser @rx, which takes each octet
 * into the MPA CRC in the same pass (siwx_rx_place()); else NULL.
 */
void siwx_mr_copy_to(struct siwx_mr *mr, u64 to, const u8 *data, u32 len,
		     struct siwx_rx *rx)
{
	unsigned int off;
	struct page *page;
	void *va;
	u32 n;

	while (len) {
		page = siwx_mr_page(mr, to, &off);
		if (!page) {
			if (rx)
				siwx_rx_skip(rx, data, len);
			return;
		}
		n = min_t(u32, len, PAGE_SIZE - off);
		va = kmap_local_page(page);
		if (rx)
			siwx_rx_place(rx, va + off, data, n);
		else
			memcpy(va + off, data, n);
		kunmap_local(va);
		to += n;
		data += n;
		len -= n;
	}
}

/*
 * Put the window of the current @binding back to its idle placeholder;
 * accesses in progress finish with the binding, which goes with them.
 */
void siwx_mw_unbind_locked(struct siwx_dev *dev, struct siwx_mr *binding)
{
	struct siwx_mw *mw = binding->mw;

	/* Replaces an entry, so it allocates nothing */
	__xa_store(&dev->mrs, mw->index, &mw->idle, 0);
	binding->mw = NULL;
	WRITE_ONCE(binding->valid, false);
	binding->parent->bound_windows--;
	siwx_mr_put(binding);
}

/*
 * Invalidate @stag for @qp: a Local Invalidate, the sink of a Read with
 * Invalidate, or the STag of a peer's Send with Invalidate. Only fast
 * registrations and type 2 windows of the QP's PD can be invalidated
 * (RFC 5040 5.3; type 1 windows are only rebound).
 */
int siwx_mr_invalidate(struct siwx_qp *qp, u32 stag,
		       enum siwx_access_fault *fault)
{
	struct siwx_dev *dev = qp->dev;
	struct siwx_mr *mr;
	int rv = 0;

	xa_lock_bh(&dev->mrs);
	mr = xa_load(&dev->mrs, stag >> SIWX_STAG_KEY_BITS);
	if (!mr || mr->stag != stag || !mr->valid) {
		*fault = SIWX_FAULT_INVALID_STAG;
		rv = -EACCES;
	} else if (mr->ibmr.pd != qp->ibqp.pd) {
		*fault = SIWX_FAULT_NOT_ASSOC;
		rv = -EACCES;
	} else if (mr->kind == SIWX_MR_WINDOW && mr->qp_uid) {
		/* A type 2 window, by the QP it is bound to only */
		if (mr->qp_uid == qp->uid) {
			siwx_mw_unbind_locked(dev, mr);
		} else {
			*fault = SIWX_FAULT_NOT_ASSOC;
			rv = -EACCES;
		}
	} else if (mr->kind != SIWX_MR_FAST) {
		*fault = SIWX_FAULT_ACCESS_RIGHTS;
		rv = -EPERM;
	} else {
		WRITE_ONCE(mr->valid, false);
	}
	xa_unlock_bh(&dev->mrs);
	return rv;
}
