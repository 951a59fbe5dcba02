/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * libibverbs private ABI 59: rdma-core v59 to v63 (Ubuntu 26.04,
 * Fedora 44). Adds the DMA handle and extended MR registration op slots.
 */
#ifndef SIWX_VERBS_PRIVATE59_H
#define SIWX_VERBS_PRIVATE59_H

#define IBVP_PABI_VERSION 59
#include "verbs_private_base.h"

/* 79 slots, counted in rdma-core v59.0's struct verbs_context_ops. */
#if defined(__LP64__)
IBVP_PIN_OPS(79, 6, 16, 21, 30, 41, 49, 55, 57, 60, 62, 70, 72, 78);
IBVP_PIN_OP(alloc_dmah, 2);
IBVP_PIN_OP(dealloc_dmah, 26);
IBVP_PIN_OP(reg_mr_ex, 71);
#endif

#endif /* SIWX_VERBS_PRIVATE59_H */
