/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The memory an STag names, as the data path uses it: lookup with a
 * reference, the access checks of RFC 5040 (section 2.1 and the errors of
 * 7.1), placement, invalidation (5.3). MRs and memory windows share the
 * STag space (siwx.h); their verbs are in siwx_mr.c and siwx_mw.c.
 */
#ifndef SIWX_STAG_H
#define SIWX_STAG_H

#include <siwx/proto/rx.h>
#include <siwx/proto/term.h>

#include "siwx.h"

struct siwx_mr *siwx_mr_get_checked(struct siwx_qp *qp, u32 stag, int right,
				    u64 to, u64 len,
				    enum siwx_access_fault *fault);
void siwx_mr_put(struct siwx_mr *mr);
struct page *siwx_mr_page(struct siwx_mr *mr, u64 to, unsigned int *off);
void siwx_mr_copy_to(struct siwx_mr *mr, u64 to, const u8 *data, u32 len,
		     struct siwx_rx *rx);
int siwx_mr_invalidate(struct siwx_qp *qp, u32 stag,
		       enum siwx_access_fault *fault);
void siwx_mw_unbind_locked(struct siwx_dev *dev, struct siwx_mr *binding);

#endif /* SIWX_STAG_H */
