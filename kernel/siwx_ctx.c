// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * User contexts and protection domains. Neither carries state of its
 * own yet: a ucontext is where ib_core keeps the mmap entries of its
 * rings, a PD only counts against max_pd.
 */
#include "siwx.h"

int siwx_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct siwx_dev *dev = to_siwx_dev(ibuc->device);
	struct siwx_uresp_alloc_ctx resp = {
		.dev_id = dev->id,
		.max_inline = SIWX_MAX_INLINE,
	};

	/* A provider that cannot take the response does not speak our ABI */
	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

void siwx_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * Having this op lets the device go (rdma link delete, rmmod) while
 * processes still hold it open: ib_core destroys their objects through
 * the usual destroy ops first. Our mappings have no vm_ops and their
 * pages outlive the rings, so there is nothing to revoke here.
 */
void siwx_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

int siwx_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct siwx_dev *dev = to_siwx_dev(ibpd->device);

	if (!siwx_count_get(&dev->num_pd, SIWX_MAX_PD))
		return -ENOMEM;
	return 0;
}

int siwx_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct siwx_dev *dev = to_siwx_dev(ibpd->device);

	atomic_dec(&dev->num_pd);
	return 0;
}
