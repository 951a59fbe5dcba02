/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Translating a completion (abi.h siwx_cqe) into a verbs work completion.
 * Pure code, unit-tested without a kernel.
 */
#ifndef SIWX_CQE_H
#define SIWX_CQE_H

#include <stdint.h>

#include <infiniband/verbs.h>
#include <siwx/abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Fill *wc from *cqe. Verbs' imm_data is the first four octets of the
 * 8-octet RFC 7306 Immediate Data exactly as they arrived (so it is in
 * network order, as verbs expects); siwx_cqe_imm8() gives all eight.
 */
void siwx_cqe_to_wc(const struct siwx_cqe *cqe, struct ibv_wc *wc);

/* All eight Immediate Data octets, or zeros if the CQE carries none. */
void siwx_cqe_imm8(const struct siwx_cqe *cqe, uint8_t imm[SIWX_IMM_LEN]);

#ifdef __cplusplus
}
#endif

#endif /* SIWX_CQE_H */
