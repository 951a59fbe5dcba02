/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The memory an STag names, as the data path uses it: lookup with a
 * reference, the access checks of RFC 5040 (section 2.1 and the errors of
 * 7.1), placement, invalidation (5.3). MRs and memory windows share the
 * STag space (siwx.h); their verbs are in siwx_mr.c and siwx_mw.c.
 */
#ifndef SIWX_STAG_H
#define SIWX_STAG_H

#include <linux/mm.h>

#include <siwx/proto/rx.h>
#include <siwx/proto/term.h>

#include "siwx.h"

struct siwx_mr *siwx_mr_get_checked(struct siwx_qp *qp, u32 stag, int right,
				    u64 to, u64 len,
				    enum siwx_access_fault *fault);
void siwx_mr_put(struct siwx_mr *mr);

#define SIWX_REMOTE_RIGHTS (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			    IB_ACCESS_REMOTE_ATOMIC)

/*
 * Check that @mr may be used by @qp for @len octets at tagged offset @to
 * with access right @right (0: local read, always allowed). Returns 0,
 * or -EACCES with the reason in @fault. Inline: RX checks every tagged
 * segment.
 */
static inline int siwx_mr_check(struct siwx_qp *qp, struct siwx_mr *mr,
				int right, u64 to, u64 len,
				enum siwx_access_fault *fault)
{
	if (!READ_ONCE(mr->valid)) {
		*fault = SIWX_FAULT_INVALID_STAG;
		return -EACCES;
	}
	if (mr->ibmr.pd != qp->ibqp.pd) {
		*fault = SIWX_FAULT_NOT_ASSOC;
		return -EACCES;
	}
	if (mr->kind == SIWX_MR_WINDOW) {
		/* A window's STag is for peers only: no lkey names one */
		if (!(right & SIWX_REMOTE_RIGHTS)) {
			*fault = SIWX_FAULT_INVALID_STAG;
			return -EACCES;
		}
		if (mr->qp_uid && mr->qp_uid != qp->uid) {
			*fault = SIWX_FAULT_NOT_ASSOC;
			return -EACCES;
		}
	}
	if (right && !(mr->access & right)) {
		*fault = SIWX_FAULT_ACCESS_RIGHTS;
		return -EACCES;
	}
	if (to + len < to) {
		*fault = SIWX_FAULT_TO_WRAP;
		return -EACCES;
	}
	/* A DMA MR spans every kernel address; siwx_mr_page checks each */
	if (mr->kind == SIWX_MR_DMA)
		return 0;
	if (!mr->pages || to < mr->iova || to + len > mr->iova + mr->length) {
		*fault = SIWX_FAULT_BOUNDS;
		return -EACCES;
	}
	return 0;
}

/*
 * @mr, held since an earlier segment of the same message, for @stag again
 * (siwx_rx_place.c): true if @stag still names it and @qp may use @len
 * octets at @to with @right, the checks of siwx_mr_get_checked() without
 * its lookup. What ends an STag clears mr->valid (invalidation, unbinding,
 * siwx_dereg_mr()) or gives it a new key (fast registration), so a held
 * MR fails here once the lookup would.
 */
static inline bool siwx_mr_recheck(struct siwx_qp *qp, struct siwx_mr *mr,
				   u32 stag, int right, u64 to, u64 len)
{
	enum siwx_access_fault fault;

	return READ_ONCE(mr->stag) == stag &&
	       !siwx_mr_check(qp, mr, right, to, len, &fault);
}

/*
 * The page holding tagged offset @to of @mr and the offset in it; NULL
 * when @to lies outside the region or the MR has no pages. Inline: TX
 * and RX call it for every page they copy.
 */
static inline struct page *siwx_mr_page(struct siwx_mr *mr, u64 to,
					unsigned int *off)
{
	u64 rel;

	if (mr->kind == SIWX_MR_DMA) {
		void *va = (void *)(uintptr_t)to;

		/* Only the linear map: what ib_dma_map_*() hands out here */
		if (!virt_addr_valid(va))
			return NULL;
		*off = offset_in_page(va);
		return virt_to_page(va);
	}
	if (!mr->pages || to < mr->iova || to - mr->iova >= mr->length)
		return NULL;
	rel = to - mr->iova + mr->first_offset;
	*off = rel & ~PAGE_MASK;
	return mr->pages[rel >> PAGE_SHIFT];
}

void siwx_mr_copy_to(struct siwx_mr *mr, u64 to, const u8 *data, u32 len,
		     struct siwx_rx *rx);
int siwx_mr_invalidate(struct siwx_qp *qp, u32 stag,
		       enum siwx_access_fault *fault);
void siwx_mw_unbind_locked(struct siwx_dev *dev, struct siwx_mr *binding);

#endif /* SIWX_STAG_H */
