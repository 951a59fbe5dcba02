// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Memory regions and their STags.
 *
 * A user MR pins its pages (ib_umem) and keeps them in an array, so
 * that the data path turns a tagged offset into a page with one
 * division. A DMA MR (for kernel ULPs) has no pages: its tagged offsets
 * are kernel virtual addresses, which is what ib_core hands a device
 * without a DMA device of its own. A fast-registration MR (alloc_mr)
 * gets its page array from map_mr_sg and becomes valid, with a new key,
 * bounds and rights, when the TX engine executes the REG_MR work
 * request; local invalidation, Read with Invalidate and a peer's Send
 * with Invalidate (RFC 5040 section 5.3) make it invalid again.
 *
 * lkey and rkey are the same STag (siwx.h). How the data path looks STags
 * up, checks and places through them: siwx_stag.c.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "siwx_compat.h"
#include "siwx_stag.h"

/*
 * IB_ACCESS_MW_BIND only allows binding windows to the MR later; an
 * application asks for it at registration whether or not it binds any.
 */
#define SIWX_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			IB_ACCESS_MW_BIND)

static int siwx_mr_check_access(int access)
{
	/* Optional bits (relaxed ordering) may be ignored, by definition */
	access &= ~IB_ACCESS_OPTIONAL;
	if (access & ~SIWX_MR_ACCESS)
		return -EOPNOTSUPP;
	return 0;
}

/* Give @mr an STag and make it findable. */
static int siwx_mr_add(struct siwx_dev *dev, struct siwx_mr *mr, int access)
{
	u32 index;
	u8 key;
	int rv;

	kref_init(&mr->ref);
	init_completion(&mr->released);
	mr->access = access;

	rv = xa_alloc_cyclic_bh(&dev->mrs, &index, NULL,
				XA_LIMIT(1, SIWX_STAG_INDEX_MAX),
				&dev->next_stag_index, GFP_KERNEL);
	if (rv < 0)
		return rv;
	key = atomic_inc_return(&dev->stag_key);
	mr->stag = index << SIWX_STAG_KEY_BITS | key;
	mr->ibmr.lkey = mr->stag;
	mr->ibmr.rkey = mr->stag;
	xa_store_bh(&dev->mrs, index, mr, GFP_KERNEL);
	return 0;
}

/* A zeroed MR of @kind, counted against the device's limit. */
static struct siwx_mr *siwx_mr_new(struct siwx_dev *dev,
				   enum siwx_mr_kind kind)
{
	struct siwx_mr *mr;

	if (!siwx_count_get(&dev->num_mr, SIWX_MAX_MR))
		return ERR_PTR(-ENOMEM);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		atomic_dec(&dev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->kind = kind;
	return mr;
}

/* Undo siwx_mr_new and what was gathered since; the MR has no STag. */
static void siwx_mr_discard(struct siwx_dev *dev, struct siwx_mr *mr)
{
	if (mr->umem) {
		atomic64_sub(ib_umem_num_pages(mr->umem),
			     &siwx_objects.pinned_pages);
		ib_umem_release(mr->umem);
	}
	kvfree(mr->pages);
	kfree(mr);
	atomic_dec(&dev->num_mr);
}

struct ib_mr *siwx_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct siwx_dev *dev = to_siwx_dev(ibpd->device);
	struct siwx_mr *mr;
	int rv;

	rv = siwx_mr_check_access(access);
	if (rv)
		return ERR_PTR(rv);
	mr = siwx_mr_new(dev, SIWX_MR_DMA);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->valid = true;
	mr->iova = 0;
	mr->length = U64_MAX;
	rv = siwx_mr_add(dev, mr, access);
	if (rv) {
		siwx_mr_discard(dev, mr);
		return ERR_PTR(rv);
	}
	return &mr->ibmr;
}

static int siwx_mr_collect_pages(struct siwx_mr *mr)
{
	struct sg_page_iter iter;
	unsigned long i = 0;

	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages),
				   GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &iter, 0) {
		if (i == mr->npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&iter);
	}
	return i == mr->npages ? 0 : -EFAULT;
}

struct ib_mr *siwx_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata)
{
	struct siwx_dev *dev = to_siwx_dev(ibpd->device);
	struct ib_umem *umem;
	struct siwx_mr *mr;
	int rv;

	rv = siwx_mr_check_access(access);
	if (rv)
		return ERR_PTR(rv);
	if (!length)
		return ERR_PTR(-EINVAL);
	mr = siwx_mr_new(dev, SIWX_MR_USER);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	umem = siwx_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(umem)) {
		rv = PTR_ERR(umem);
		goto err;
	}
	mr->umem = umem;
	atomic64_add(ib_umem_num_pages(umem), &siwx_objects.pinned_pages);
	rv = siwx_mr_collect_pages(mr);
	if (rv)
		goto err;
	mr->valid = true;
	mr->iova = iova;
	mr->length = length;
	mr->first_offset = ib_umem_offset(mr->umem);
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	rv = siwx_mr_add(dev, mr, access);
	if (rv)
		goto err;
	return &mr->ibmr;

err:
	siwx_mr_discard(dev, mr);
	return ERR_PTR(rv);
}

struct ib_mr *siwx_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct siwx_dev *dev = to_siwx_dev(ibpd->device);
	struct siwx_mr *mr;
	int rv;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SIWX_MAX_FR_PAGES)
		return ERR_PTR(-EINVAL);
	mr = siwx_mr_new(dev, SIWX_MR_FAST);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->pages = kvcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	mr->max_pages = max_num_sg;
	/* Invalid until a REG_MR work request registers it */
	rv = mr->pages ? siwx_mr_add(dev, mr, 0) : -ENOMEM;
	if (rv) {
		siwx_mr_discard(dev, mr);
		return ERR_PTR(rv);
	}
	return &mr->ibmr;
}

static int siwx_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct siwx_mr *mr = to_siwx_mr(ibmr);
	void *va = (void *)(uintptr_t)addr;

	if (mr->mapped == mr->max_pages)
		return -ENOMEM;
	/* Without a DMA device, "DMA addresses" are linear-map addresses */
	if (!virt_addr_valid(va))
		return -EINVAL;
	mr->pages[mr->mapped++] = virt_to_page(va);
	return 0;
}

/*
 * The page list for the next REG_MR. The data path indexes pages[] by
 * PAGE_SIZE, so that is the only page size taken.
 */
int siwx_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct siwx_mr *mr = to_siwx_mr(ibmr);

	if (ibmr->page_size != PAGE_SIZE)
		return -EINVAL;
	mr->mapped = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset,
			      siwx_mr_set_page);
}

/*
 * The TX engine executes a REG_MR work request of @qp: @stag names the MR
 * by its index and brings the new key; bounds come from map_mr_sg.
 */
int siwx_mr_fast_reg(struct siwx_qp *qp, u32 stag, int access)
{
	struct siwx_dev *dev = qp->dev;
	struct siwx_mr *mr;
	int rv = 0;

	if (siwx_mr_check_access(access))
		return -EINVAL;
	xa_lock_bh(&dev->mrs);
	mr = xa_load(&dev->mrs, stag >> SIWX_STAG_KEY_BITS);
	if (!mr || mr->kind != SIWX_MR_FAST || mr->ibmr.pd != qp->ibqp.pd ||
	    mr->valid) {
		rv = -EACCES;
	} else if (offset_in_page(mr->ibmr.iova) + mr->ibmr.length >
		   (u64)mr->mapped << PAGE_SHIFT) {
		rv = -EINVAL;
	} else {
		mr->stag = stag;
		mr->access = access;
		mr->iova = mr->ibmr.iova;
		mr->length = mr->ibmr.length;
		mr->first_offset = offset_in_page(mr->iova);
		mr->npages = mr->mapped;
		WRITE_ONCE(mr->valid, true);
	}
	xa_unlock_bh(&dev->mrs);
	return rv;
}

int siwx_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct siwx_dev *dev = to_siwx_dev(ibmr->device);
	struct siwx_mr *mr = to_siwx_mr(ibmr);

	/*
	 * The verbs refuse to deregister an MR with windows bound to it,
	 * rather than invalidate windows a peer may hold. ib_uverbs retries
	 * at close after the windows are gone.
	 */
	xa_lock_bh(&dev->mrs);
	if (mr->bound_windows) {
		xa_unlock_bh(&dev->mrs);
		return -EBUSY;
	}
	/*
	 * RX may hold it for a message's next segment, which now fails; the
	 * wait below ends with the message or with the connection.
	 */
	WRITE_ONCE(mr->valid, false);
	__xa_erase(&dev->mrs, mr->stag >> SIWX_STAG_KEY_BITS);
	xa_unlock_bh(&dev->mrs);
	siwx_mr_put(mr);
	wait_for_completion(&mr->released);
	siwx_mr_discard(dev, mr);
	return 0;
}
