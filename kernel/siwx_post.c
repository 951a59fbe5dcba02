// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Posting work requests, and the doorbell. User space posts into the
 * mapped rings itself and rings the doorbell (a post_send or post_recv
 * without work requests), which starts the TX engine (siwx_tx.c), wakes
 * a message waiting for a receive (siwx_rx_wait.c), or flushes in ERROR
 * (siwx_comp.c). Kernel ULPs post through these
 * functions, which fill the very same rings (siwx_ring.h), so the data
 * path does not know who posted.
 *
 * Kernel-only operations travel in the SQE fields the user operations
 * leave unused: REG_MR carries the MR's new STag in rkey and its access
 * rights in bind.access. RDMA_READ_WITH_INV invalidates the STag of its sink
 * SGE, as iWARP RNICs do: rdma_rw fills ex.invalidate_rkey before it
 * moves the MR to its next key, so that field may name the old one. The
 * TX engine takes these from kernel QPs only.
 */
#include "siwx_comp.h"
#include "siwx_rx_wait.h"
#include "siwx_tx.h"

#define SIWX_KSEND_FLAGS (IB_SEND_FENCE | IB_SEND_SIGNALED | \
			  IB_SEND_SOLICITED | IB_SEND_INLINE)

static int siwx_ksqe_inline(struct siwx_sqe *sqe, const struct ib_send_wr *wr)
{
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		if (sge->length > SIWX_MAX_INLINE - len)
			return -EINVAL;
		/* ib_core hands kernel virtual addresses (no DMA device) */
		memcpy(sqe->inline_data + len, (void *)(uintptr_t)sge->addr,
		       sge->length);
		len += sge->length;
	}
	sqe->flags |= SIWX_WQE_INLINE;
	sqe->num_sge = len;
	return 0;
}

/*
 * The operands as the provider lays them out (abi.h): the plain verbs
 * atomics with the masks RFC 7306 gives them (FetchAdd: Add Mask 0;
 * CmpSwap: all ones), the masked ones with the caller's.
 */
static void siwx_ksqe_atomic(struct siwx_sqe *sqe, const struct ib_send_wr *wr)
{
	const struct ib_atomic_wr *a = atomic_wr(wr);

	sqe->rkey = a->rkey;
	sqe->raddr = a->remote_addr;
	switch (wr->opcode) {
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		sqe->add_swap = a->compare_add;
		break;
	case IB_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		sqe->add_swap = a->compare_add;
		sqe->add_swap_mask = a->compare_add_mask;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		sqe->compare = a->compare_add;
		sqe->compare_mask = ~0ULL;
		sqe->add_swap = a->swap;
		sqe->add_swap_mask = ~0ULL;
		break;
	default:
		sqe->compare = a->compare_add;
		sqe->compare_mask = a->compare_add_mask;
		sqe->add_swap = a->swap;
		sqe->add_swap_mask = a->swap_mask;
		break;
	}
}

static int siwx_ksqe_op(struct siwx_sqe *sqe, const struct ib_send_wr *wr)
{
	switch (wr->opcode) {
	case IB_WR_SEND:
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		sqe->rkey = wr->ex.invalidate_rkey;
		break;
	case IB_WR_SEND_WITH_IMM:
		/* verbs' 32-bit immediate: the first four octets */
		memcpy(sqe->imm, &wr->ex.imm_data, sizeof(wr->ex.imm_data));
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		memcpy(sqe->imm, &wr->ex.imm_data, sizeof(wr->ex.imm_data));
		fallthrough;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
		sqe->rkey = rdma_wr(wr)->rkey;
		sqe->raddr = rdma_wr(wr)->remote_addr;
		break;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_MASKED_ATOMIC_FETCH_AND_ADD:
	case IB_WR_MASKED_ATOMIC_CMP_AND_SWP:
		siwx_ksqe_atomic(sqe, wr);
		break;
	case IB_WR_REG_MR:
		sqe->rkey = reg_wr(wr)->key;
		sqe->bind.access = reg_wr(wr)->access;
		if (reg_wr(wr)->mr->lkey != reg_wr(wr)->key)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	sqe->opcode = wr->opcode;
	return 0;
}

/* Fill the (not yet VALID) ring slot @sqe from @wr. */
static int siwx_ksqe_fill(struct siwx_qp *qp, struct siwx_sqe *sqe,
			  const struct ib_send_wr *wr)
{
	u16 flags = 0;
	int i, rv;

	if (wr->send_flags & ~SIWX_KSEND_FLAGS)
		return -EINVAL;
	if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	memset(sqe, 0, sizeof(*sqe));
	sqe->id = wr->wr_id;
	if (wr->send_flags & IB_SEND_SIGNALED)
		flags |= SIWX_WQE_SIGNALLED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		flags |= SIWX_WQE_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		flags |= SIWX_WQE_FENCE;
	sqe->flags = flags;
	rv = siwx_ksqe_op(sqe, wr);
	if (rv)
		return rv;
	if (wr->opcode == IB_WR_REG_MR || wr->opcode == IB_WR_LOCAL_INV)
		return 0;
	if (wr->send_flags & IB_SEND_INLINE)
		return siwx_ksqe_inline(sqe, wr);
	for (i = 0; i < wr->num_sge; i++) {
		sqe->sge[i].addr = wr->sg_list[i].addr;
		sqe->sge[i].length = wr->sg_list[i].length;
		sqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	sqe->num_sge = wr->num_sge;
	return 0;
}

/*
 * The send doorbell (a post_send without WRs): start the TX engine, or,
 * in ERROR with no connection left, flush what was posted.
 * @in_syscall: a user's send doorbell, which may run the engine itself
 * (kernel ULPs post from any context).
 */
void siwx_qp_doorbell(struct siwx_qp *qp, bool in_syscall)
{
	struct siwx_conn *conn = NULL;
	bool flush = false;

	spin_lock_bh(&qp->sq_lock);
	if (qp->dp_active) {
		conn = qp->conn;
		if (in_syscall)
			siwx_conn_get(conn);
		else
			siwx_conn_kick_tx(conn);
	} else if (READ_ONCE(qp->state) == IB_QPS_ERR && !qp->conn) {
		flush = true;	/* else the closing connection flushes */
	}
	spin_unlock_bh(&qp->sq_lock);
	if (conn && in_syscall) {
		siwx_tx_doorbell(qp, conn);
		siwx_conn_put(conn);
	}
	if (flush)
		siwx_qp_flush_final(qp);
}

/*
 * The receive doorbell (a post_recv without WRs, or a kernel ULP's
 * post_recv that rq_doorbell asks for): a message waiting for a receive
 * looks again, or, in ERROR with no connection left, what was posted is
 * flushed.
 */
static void siwx_qp_recv_doorbell(struct siwx_qp *qp)
{
	bool flush = false;

	spin_lock_bh(&qp->sq_lock);
	if (qp->dp_active)
		siwx_rx_wait_wake(qp->conn);
	else if (READ_ONCE(qp->state) == IB_QPS_ERR && !qp->conn)
		flush = true;	/* else the closing connection flushes */
	spin_unlock_bh(&qp->sq_lock);
	if (flush)
		siwx_qp_flush_final(qp);
}

/* Sends need a connected QP, or one in ERROR (they are flushed). */
static bool siwx_qp_takes_sends(struct siwx_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	return state == IB_QPS_RTS || state == IB_QPS_SQD ||
	       state == IB_QPS_SQE || state == IB_QPS_ERR;
}

int siwx_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct siwx_qp *qp = to_siwx_qp(ibqp);
	unsigned long flags;
	int rv = 0;

	if (!wr) {
		siwx_qp_doorbell(qp, !!ibqp->uobject);
		return 0;
	}
	if (ibqp->uobject) {
		/* User QPs post into their mapped ring */
		*bad_wr = wr;
		return -EINVAL;
	}
	if (!siwx_qp_takes_sends(qp)) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->post_lock, flags);
	for (; wr; wr = wr->next) {
		struct siwx_sqe *sqe = siwx_sq_slot(qp, qp->sq_prod);

		if (siwx_elem_valid(&sqe->flags, SIWX_WQE_VALID)) {
			rv = -ENOMEM;
			break;
		}
		rv = siwx_ksqe_fill(qp, sqe, wr);
		if (rv)
			break;
		siwx_elem_publish(&sqe->flags, sqe->flags | SIWX_WQE_VALID);
		qp->sq_prod++;
	}
	spin_unlock_irqrestore(&qp->post_lock, flags);
	if (rv)
		*bad_wr = wr;
	siwx_qp_doorbell(qp, false);
	return rv;
}

/* Post @wr into the RQ or SRQ slot @rqe; caller holds the lock. */
static int siwx_krqe_post(struct siwx_rqe *rqe, u32 *prod, u32 max_sge,
			  const struct ib_recv_wr *wr)
{
	int i;

	if (siwx_elem_valid(&rqe->flags, SIWX_WQE_VALID))
		return -ENOMEM;
	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	memset(rqe, 0, sizeof(*rqe));
	rqe->id = wr->wr_id;
	for (i = 0; i < wr->num_sge; i++) {
		rqe->sge[i].addr = wr->sg_list[i].addr;
		rqe->sge[i].length = wr->sg_list[i].length;
		rqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	rqe->num_sge = wr->num_sge;
	siwx_elem_publish(&rqe->flags, SIWX_WQE_VALID);
	(*prod)++;
	return 0;
}

int siwx_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct siwx_qp *qp = to_siwx_qp(ibqp);
	unsigned long flags;
	int rv = 0;

	if (!wr) {
		siwx_qp_recv_doorbell(qp);
		return 0;
	}
	if (ibqp->uobject || qp->srq || READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->post_lock, flags);
	for (; wr; wr = wr->next) {
		rv = siwx_krqe_post(siwx_rq_slot(qp, qp->rq_prod),
				    &qp->rq_prod, qp->max_recv_sge, wr);
		if (rv)
			break;
	}
	spin_unlock_irqrestore(&qp->post_lock, flags);
	if (rv)
		*bad_wr = wr;
	/*
	 * As the provider does (abi.h): a QP in ERROR completes them right
	 * away, with a flush error, and a message waiting for one takes it.
	 */
	smp_mb();
	if (READ_ONCE(qp->sq_ctrl->rq_doorbell) ||
	    READ_ONCE(qp->state) == IB_QPS_ERR)
		siwx_qp_recv_doorbell(qp);
	return rv;
}

int siwx_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct siwx_srq *srq = to_siwx_srq(ibsrq);
	unsigned long flags;
	int rv = 0;

	if (!wr)
		return 0;
	if (ibsrq->uobject) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->post_lock, flags);
	for (; wr; wr = wr->next) {
		rv = siwx_krqe_post(siwx_srq_slot(srq, srq->prod), &srq->prod,
				    srq->max_sge, wr);
		if (rv)
			break;
	}
	spin_unlock_irqrestore(&srq->post_lock, flags);
	if (rv)
		*bad_wr = wr;
	return rv;
}
