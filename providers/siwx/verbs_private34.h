/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * libibverbs private ABI 34: rdma-core v34.0 to v56.x (Debian 12 and 13,
 * Ubuntu 24.04, RHEL 9.0-9.6, Fedora 40-42). Everything but the
 * ops-table pins is in verbs_private_base.h.
 */
#ifndef SIWX_VERBS_PRIVATE34_H
#define SIWX_VERBS_PRIVATE34_H

#define IBVP_PABI_VERSION 34
#include "verbs_private_base.h"

/*
 * 76 slots, counted in rdma-core v44.0's struct verbs_context_ops (and
 * checked against v56.1's library by the trixie layout test).
 */
#if defined(__LP64__)
IBVP_PIN_OPS(76, 5, 15, 20, 28, 39, 47, 53, 55, 58, 60, 68, 69, 75);
#endif

#endif /* SIWX_VERBS_PRIVATE34_H */
