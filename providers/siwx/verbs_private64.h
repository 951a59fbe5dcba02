/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * libibverbs private ABI 64: rdma-core v64 (Fedora 45). Adds the buffer
 * allocation, DM dma-buf export and port speed op slots.
 */
#ifndef SIWX_VERBS_PRIVATE64_H
#define SIWX_VERBS_PRIVATE64_H

#define IBVP_PABI_VERSION 64
#include "verbs_private_base.h"

/* 83 slots, counted in rdma-core v64.0's struct verbs_context_ops. */
#if defined(__LP64__)
IBVP_PIN_OPS(83, 7, 17, 22, 31, 44, 52, 58, 60, 63, 65, 74, 76, 82);
IBVP_PIN_OP(alloc_buf, 1);
IBVP_PIN_OP(dm_export_dmabuf_fd, 42);
IBVP_PIN_OP(free_buf, 43);
IBVP_PIN_OP(query_port_speed, 66);
IBVP_PIN_OP(reg_mr_ex, 75);
#endif

#endif /* SIWX_VERBS_PRIVATE64_H */
