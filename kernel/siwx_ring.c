// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Rings shared with user space (abi.h): allocation, publication as an
 * mmap key, and mmap() itself. (Their elements: siwx_ring.h.)
 *
 * Ring memory comes from vmalloc_user(): zeroed (every VALID flag clear)
 * and mappable page by page. A published ring is owned by its mmap
 * entry, not by the QP/CQ/SRQ: an mmap() that looked the entry up holds
 * a reference, so the memory may only go when the last reference does
 * (siwx_mmap_free). Pages still mapped into a process after that stay
 * alive through their page references; the kernel no longer looks at
 * them.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "siwx_ring.h"

struct siwx_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
};

int siwx_ring_alloc(struct siwx_ring *ring, u32 num, u32 elem_size,
		    size_t ctrl_size)
{
	ring->num = num;
	ring->elem_size = elem_size;
	ring->size = PAGE_ALIGN((size_t)num * elem_size + ctrl_size);
	ring->mentry = NULL;
	ring->buf = vmalloc_user(ring->size);
	return ring->buf ? 0 : -ENOMEM;
}

/* The control block follows the element array (abi.h). */
void *siwx_ring_ctrl(struct siwx_ring *ring)
{
	return ring->buf + (size_t)ring->num * ring->elem_size;
}

/* Make the ring mappable by the caller's process; @key is the offset. */
int siwx_ring_publish(struct siwx_ring *ring, struct ib_udata *udata,
		      u64 *key)
{
	struct siwx_ucontext *uctx =
		rdma_udata_to_drv_context(udata, struct siwx_ucontext, ibuc);
	struct siwx_mmap_entry *entry;
	int rv;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	entry->buf = ring->buf;
	rv = rdma_user_mmap_entry_insert(&uctx->ibuc, &entry->rdma,
					 ring->size);
	if (rv) {
		kfree(entry);
		return rv;
	}
	ring->mentry = entry;
	*key = rdma_user_mmap_get_offset(&entry->rdma);
	return 0;
}

void siwx_ring_free(struct siwx_ring *ring)
{
	if (ring->mentry)
		rdma_user_mmap_entry_remove(&ring->mentry->rdma);
	else
		vfree(ring->buf);
	ring->buf = NULL;
	ring->mentry = NULL;
}

/*
 * The mapping must cover the ring's pages exactly (ib_core compares the
 * length): the provider maps num * element size + control block size.
 */
int siwx_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rentry;
	struct siwx_mmap_entry *entry;
	int rv;

	rentry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rentry)
		return -EINVAL;
	entry = container_of(rentry, struct siwx_mmap_entry, rdma);
	rv = remap_vmalloc_range(vma, entry->buf, 0);
	rdma_user_mmap_entry_put(rentry);
	return rv;
}

void siwx_mmap_free(struct rdma_user_mmap_entry *rentry)
{
	struct siwx_mmap_entry *entry =
		container_of(rentry, struct siwx_mmap_entry, rdma);

	vfree(entry->buf);
	kfree(entry);
}
