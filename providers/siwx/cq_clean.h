/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Taking a destroyed QP's completions off a CQ's ring, as ibv_destroy_qp
 * does on mlx4 and mlx5. Pure code, unit-tested without a kernel.
 */
#ifndef SIWX_CQ_CLEAN_H
#define SIWX_CQ_CLEAN_H

#include <stdbool.h>
#include <stdint.h>

#include "ring.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Consumer side, with the CQ's lock held, once the kernel has destroyed
 * QP @qp_num (it writes none of its completions any more): takes that
 * QP's published completions off @ring, except its receive completions
 * when @keep_recv (a QP on an SRQ: each one hands back an SRQ buffer the
 * application must hear of). The completions behind them keep their
 * order; the slots freed go back to the kernel. Returns how many it took.
 */
uint32_t siwx_cq_clean(struct siwx_ring *ring, uint32_t qp_num,
		       bool keep_recv);

#ifdef __cplusplus
}
#endif

#endif /* SIWX_CQ_CLEAN_H */
