/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Picks the declaration of libibverbs' private provider interface that
 * matches the libibverbs we build against. CMake reads the
 * IBVERBS_PRIVATE_<n> symbol version from libibverbs.so.1 and passes
 * SIWX_IBVERBS_PABI=<n>; it already refuses unsupported versions, this is
 * the second line of defence.
 */
#ifndef SIWX_VERBS_PRIVATE_H
#define SIWX_VERBS_PRIVATE_H

#if !defined(SIWX_IBVERBS_PABI)
#error "SIWX_IBVERBS_PABI is not set (CMake detects it from libibverbs)"
#elif SIWX_IBVERBS_PABI == 34
#include "verbs_private34.h"
#elif SIWX_IBVERBS_PABI == 57
#include "verbs_private57.h"
#elif SIWX_IBVERBS_PABI == 59
#include "verbs_private59.h"
#elif SIWX_IBVERBS_PABI == 64
#include "verbs_private64.h"
#elif SIWX_IBVERBS_PABI == 65
#include "verbs_private65.h"
#else
#error "libsiwx supports libibverbs private ABIs 34, 57, 59, 64 and 65 only"
#endif

#endif /* SIWX_VERBS_PRIVATE_H */
