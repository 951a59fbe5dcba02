/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * libibverbs private ABI 57: rdma-core v57 and v58 (RHEL 9.7 and 10,
 * Fedora 43). Same structures and ops table as 34; what made the ABI
 * change is ibv_cmd_get_context()'s fd array (verbs_private_base.h).
 */
#ifndef SIWX_VERBS_PRIVATE57_H
#define SIWX_VERBS_PRIVATE57_H

#define IBVP_PABI_VERSION 57
#include "verbs_private_base.h"

/* 76 slots, counted in rdma-core v57.0's struct verbs_context_ops. */
#if defined(__LP64__)
IBVP_PIN_OPS(76, 5, 15, 20, 28, 39, 47, 53, 55, 58, 60, 68, 69, 75);
#endif

#endif /* SIWX_VERBS_PRIVATE57_H */
