/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * libibverbs private ABI 65: rdma-core v65 (Debian unstable). Adds ten
 * op slots for completion counters.
 */
#ifndef SIWX_VERBS_PRIVATE65_H
#define SIWX_VERBS_PRIVATE65_H

#define IBVP_PABI_VERSION 65
#include "verbs_private_base.h"

/*
 * 93 slots, counted in struct verbs_context_ops of rdma-core's git tree at
 * version 65.0 (no v65.0 tarball or tag was at hand; that tree's
 * IBVERBS_PRIVATE_65 symbol list equals Debian's 65.0 library's, and the
 * sid layout test checks every slot against that library).
 */
#if defined(__LP64__)
IBVP_PIN_OPS(93, 7, 18, 23, 32, 46, 56, 62, 64, 69, 71, 82, 84, 92);
IBVP_PIN_OP(create_comp_cntr, 16);
IBVP_PIN_OP(destroy_comp_cntr, 34);
IBVP_PIN_OP(inc_comp_cntr, 52);
IBVP_PIN_OP(qp_attach_comp_cntr, 67);
IBVP_PIN_OP(query_comp_cntr_caps, 68);
IBVP_PIN_OP(query_port_speed, 72);
IBVP_PIN_OP(read_err_comp_cntr, 79);
IBVP_PIN_OP(set_err_comp_cntr, 89);
#endif

#endif /* SIWX_VERBS_PRIVATE65_H */
