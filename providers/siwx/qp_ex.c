// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The extended QP API (ibv_qp_ex wr_*). A batch runs from wr_start to
 * wr_complete: each WR is built in qp->batch.sqe with the same builder
 * ibv_post_send() uses, checked, and copied into the next ring slot
 * without VALID. wr_complete publishes the slots in order and rings the
 * doorbell; wr_abort leaves them unpublished, so the kernel never sees
 * them and the next batch overwrites them. The wr_* calls return nothing,
 * so the first error is kept and wr_complete returns it (posting nothing).
 */
#include <errno.h>
#include <string.h>

#include "siwx.h"

/* Close the WR being built: check it and stage it in the ring. */
static void wr_finish(struct siwx_qp *qp)
{
	void *slot;
	int rv;

	if (!qp->batch.open)
		return;
	qp->batch.open = false;
	if (qp->batch.err)
		return;
	rv = siwx_sqe_check(&qp->batch.sqe);
	if (rv) {
		qp->batch.err = rv;
		return;
	}
	/* count == num would wrap onto our own unpublished first slot */
	slot = siwx_ring_at(&qp->sq,
			    (qp->batch.first + qp->batch.count) % qp->sq.num);
	if (qp->batch.count == qp->sq.num || !siwx_elem_free(slot)) {
		qp->batch.err = ENOMEM;
		return;
	}
	memcpy(slot, &qp->batch.sqe, sizeof(qp->batch.sqe));
	qp->batch.count++;
}

bool siwx_wr_begin(struct siwx_qp *qp, uint64_t op_flag)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	int rv;

	wr_finish(qp);
	if (qp->batch.err)
		return false;
	if (!(qp->send_ops & op_flag)) {
		/* not enabled in send_ops_flags at create time */
		qp->batch.err = EINVAL;
		return false;
	}
	rv = siwx_sqe_begin(&qp->batch.sqe, qpx->wr_id, qpx->wr_flags,
			    qp->sig_all);
	if (rv) {
		qp->batch.err = rv;
		return false;
	}
	qp->batch.open = true;
	return true;
}

static void wr_fail(struct ibv_qp_ex *qpx, int err)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	wr_finish(qp);
	if (!qp->batch.err)
		qp->batch.err = err;
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	pthread_spin_lock(&qp->sq_lock);
	qp->batch.first = qp->sq.pos;
	qp->batch.count = 0;
	qp->batch.open = false;
	qp->batch.err = 0;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);
	uint32_t i, idx = qp->batch.first;
	struct siwx_sqe *sqe;
	int rv;

	wr_finish(qp);
	rv = qp->batch.err;
	if (!rv && qp->batch.count) {
		for (i = 0; i < qp->batch.count; i++) {
			sqe = siwx_ring_at(&qp->sq, idx);
			siwx_elem_publish(sqe, sqe->flags);
			idx = siwx_ring_next(&qp->sq, idx);
		}
		qp->sq.pos = idx;
		siwx_sq_doorbell(qp);
	}
	pthread_spin_unlock(&qp->sq_lock);
	return rv;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	qp->batch.open = false;
	pthread_spin_unlock(&qp->sq_lock);
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	if (siwx_wr_begin(qp, IBV_QP_EX_WITH_SEND))
		siwx_sqe_op_send(&qp->batch.sqe);
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t inv_rkey)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	if (siwx_wr_begin(qp, IBV_QP_EX_WITH_SEND_WITH_INV))
		siwx_sqe_op_send_inv(&qp->batch.sqe, inv_rkey);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	if (siwx_wr_begin(qp, IBV_QP_EX_WITH_SEND_WITH_IMM))
		siwx_sqe_op_send_imm(&qp->batch.sqe, imm);
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			  uint64_t raddr)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	if (siwx_wr_begin(qp, IBV_QP_EX_WITH_RDMA_WRITE))
		siwx_sqe_op_write(&qp->batch.sqe, rkey, raddr);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t raddr, __be32 imm)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	if (siwx_wr_begin(qp, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM))
		siwx_sqe_op_write_imm(&qp->batch.sqe, rkey, raddr, imm);
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	if (siwx_wr_begin(qp, IBV_QP_EX_WITH_RDMA_READ))
		siwx_sqe_op_read(&qp->batch.sqe, rkey, raddr);
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t raddr, uint64_t compare, uint64_t swap)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	if (siwx_wr_begin(qp, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP))
		siwx_sqe_op_cmp_swp(&qp->batch.sqe, rkey, raddr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				uint64_t raddr, uint64_t add)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	if (siwx_wr_begin(qp, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD))
		siwx_sqe_op_fetch_add(&qp->batch.sqe, rkey, raddr, add);
}

/* A type 2 window's bind; the application chose the new key in @rkey. */
static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	if (siwx_wr_begin(qp, IBV_QP_EX_WITH_BIND_MW) &&
	    siwx_sqe_op_bind_mw(&qp->batch.sqe, mw, rkey, info))
		qp->batch.err = EINVAL;
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t inv_rkey)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);

	if (siwx_wr_begin(qp, IBV_QP_EX_WITH_LOCAL_INV))
		siwx_sqe_op_local_inv(&qp->batch.sqe, inv_rkey);
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
			    const struct ibv_sge *sgl)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);
	int rv;

	if (!qp->batch.open || qp->batch.err)
		return;
	rv = siwx_sqe_set_sgl(&qp->batch.sqe, sgl, num_sge, &qp->lim);
	if (rv)
		qp->batch.err = rv;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(qpx, 1, &sge);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				    const struct ibv_data_buf *buf)
{
	struct siwx_qp *qp = qpx_to_sqp(qpx);
	int rv;

	if (!qp->batch.open || qp->batch.err)
		return;
	rv = siwx_sqe_set_inline(&qp->batch.sqe, buf, num_buf, &qp->lim);
	if (rv)
		qp->batch.err = rv;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
			       size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(qpx, 1, &buf);
}

/*
 * Operations siwx lacks. create_qp_ex already refuses their send_ops_flags;
 * should they be called anyway, the batch fails with EOPNOTSUPP rather than
 * jumping through a NULL pointer.
 */

static void wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz,
			uint16_t mss)
{
	(void)hdr, (void)hdr_sz, (void)mss;
	wr_fail(qpx, EOPNOTSUPP);
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey)
{
	(void)ah, (void)remote_qpn, (void)remote_qkey;
	wr_fail(qpx, EOPNOTSUPP);
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	(void)remote_srqn;
	wr_fail(qpx, EOPNOTSUPP);
}

/* wr_atomic_write appeared in rdma-core 43's public ibv_qp_ex. */
#ifdef SIWX_HAVE_WR_ATOMIC_WRITE
static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			    uint64_t raddr, const void *data)
{
	(void)rkey, (void)raddr, (void)data;
	wr_fail(qpx, EOPNOTSUPP);
}
#endif

void siwx_qp_ex_init(struct siwx_qp *qp)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
	qpx->wr_send = wr_send;
	qpx->wr_send_inv = wr_send_inv;
	qpx->wr_send_imm = wr_send_imm;
	qpx->wr_rdma_write = wr_rdma_write;
	qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	qpx->wr_rdma_read = wr_rdma_read;
	qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	qpx->wr_local_inv = wr_local_inv;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
	qpx->wr_bind_mw = wr_bind_mw;
	qpx->wr_send_tso = wr_send_tso;
	qpx->wr_set_ud_addr = wr_set_ud_addr;
	qpx->wr_set_xrc_srqn = wr_set_xrc_srqn;
#ifdef SIWX_HAVE_WR_ATOMIC_WRITE
	qpx->wr_atomic_write = wr_atomic_write;
#endif
}
