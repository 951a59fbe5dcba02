/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * siwx direct verbs: the parts of RFC 7306 that plain verbs cannot express.
 *
 *  - Masked atomics (RFC 7306 section 5.1): FetchAdd with an Add Mask
 *    (bit i set = no carry out of bit i, so one 64-bit word holds
 *    independent fields) and CmpSwap with separate Compare and Swap masks.
 *  - The full 8 octets of Immediate Data (RFC 7306 section 6.3); verbs'
 *    imm_data holds only 4.
 *
 * The wr_* calls extend the ibv_qp_ex work-request API: use them between
 * ibv_wr_start() and ibv_wr_complete() on a QP that ibv_create_qp_ex()
 * created on a siwx device with the matching send_ops_flags
 * (IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, _CMP_AND_SWP,
 * _RDMA_WRITE_WITH_IMM), then add the data with ibv_wr_set_sge() as for the
 * plain operation. Errors surface from ibv_wr_complete(), as for every
 * wr_* call. Passing a QP of another provider is undefined; check the
 * device with siwxdv_is_supported() first.
 *
 * Link with the provider module itself (N: libibverbs' private ABI, 34 on
 * Debian 12 and 13):
 *   -L<libdir>/libibverbs -l:libsiwx-rdmav<N>.so -Wl,-rpath,<libdir>/libibverbs
 */
#ifndef SIWXDV_H
#define SIWXDV_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIWXDV_IMM_LEN 8

/* True if the device is driven by libsiwx. */
bool siwxdv_is_supported(struct ibv_device *device);

/* RFC 7306 masked FetchAdd; add_mask 0 is the plain verbs FetchAdd. */
void siwxdv_wr_masked_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				uint64_t remote_addr, uint64_t add,
				uint64_t add_mask);

/*
 * RFC 7306 masked CmpSwap: if ((*remote ^ compare) & compare_mask) == 0,
 * *remote = (*remote & ~swap_mask) | (swap & swap_mask). Masks of all ones
 * give the plain verbs CmpSwap.
 */
void siwxdv_wr_masked_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr, uint64_t compare,
			      uint64_t compare_mask, uint64_t swap,
			      uint64_t swap_mask);

/* RDMA Write followed by all 8 octets of Immediate Data, in wire order. */
void siwxdv_wr_rdma_write_imm8(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t remote_addr,
			       const uint8_t imm[SIWXDV_IMM_LEN]);

/*
 * ibv_poll_cq() that also returns each completion's 8 Immediate Data
 * octets: imm[i] belongs to wc[i] and is all zero unless
 * wc[i].wc_flags has IBV_WC_WITH_IMM. wc[i].imm_data is still set (the
 * first 4 octets). Returns the number of completions or a negative value
 * (-EOPNOTSUPP for a CQ of another provider).
 */
int siwxdv_poll_cq_imm8(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc,
			uint8_t (*imm)[SIWXDV_IMM_LEN]);

/*
 * The extended CQ's counterpart: all 8 Immediate Data octets of the
 * current completion (between ibv_start_poll() and ibv_end_poll(), as the
 * ibv_wc_read_*() calls), all zero unless ibv_wc_read_wc_flags() has
 * IBV_WC_WITH_IMM; ibv_wc_read_imm_data() gives the first 4. For a CQ that
 * ibv_create_cq_ex() made on a siwx device.
 */
void siwxdv_wc_read_imm8(struct ibv_cq_ex *cq, uint8_t imm[SIWXDV_IMM_LEN]);

#ifdef __cplusplus
}
#endif

#endif /* SIWXDV_H */
