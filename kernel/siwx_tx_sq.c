// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Running the SQ: the TX engine takes the next SQE, a copy it then checks
 * (the ring is the user's to write), and sends it as an RDMAP message
 * (RFC 5040 5.1-5.3: Send, Write, Read Request; RFC 7306 5.2 and 6:
 * Atomic Request, Immediate Data), or executes a local operation (REG_MR,
 * Local Invalidate, Bind Memory Window). Its completion, or its local
 * error, goes through siwx_comp.c.
 */
#include <rdma/ib_user_verbs.h>

#include <siwx/sqe_op.h>

#include "siwx_comp.h"
#include "siwx_rdq.h"
#include "siwx_stag.h"
#include "siwx_tx_fpdu.h"
#include "siwx_tx_sq.h"
#include "siwx_zc.h"

/* The SQE's payload (SGEs or inline) as a source; validates every SGE. */
static int siwx_tx_src_sqe(struct siwx_conn *conn, const struct siwx_sqe *sqe,
			   u32 *len)
{
	struct siwx_tx_src *src = &conn->src;
	enum siwx_access_fault fault;
	u64 total = 0;
	u32 i;

	/* Empty since the last siwx_tx_src_put(): only what we fill counts */
	src->n = 0;
	src->inl = NULL;
	if (sqe->flags & SIWX_WQE_INLINE) {
		if (sqe->num_sge > SIWX_MAX_INLINE)
			return -EINVAL;
		memcpy(conn->tx_inline, sqe->inline_data, sqe->num_sge);
		src->inl = conn->tx_inline;
		src->el[0].mr = NULL;
		src->el[0].len = sqe->num_sge;
		src->n = 1;
		*len = sqe->num_sge;
		return 0;
	}
	if (sqe->num_sge > SIWX_MAX_SGE)
		return -EINVAL;
	for (i = 0; i < sqe->num_sge; i++) {
		const struct siwx_sge *sge = &sqe->sge[i];
		struct siwx_mr *mr;

		if (!sge->length)
			continue;
		mr = siwx_mr_get_checked(conn->qp, sge->lkey, 0, sge->addr,
					 sge->length, &fault);
		if (!mr) {
			siwx_tx_src_put(src);
			return -EACCES;
		}
		src->el[src->n].mr = mr;
		src->el[src->n].to = sge->addr;
		src->el[src->n].len = sge->length;
		src->n++;
		total += sge->length;
	}
	if (total > SIWX_MAX_MSG_SIZE) {
		siwx_tx_src_put(src);
		return -EINVAL;
	}
	*len = total;
	return 0;
}

/* Local sink of a Read or an atomic result: one SGE we may write. */
static int siwx_tx_check_sink(struct siwx_conn *conn,
			      const struct siwx_sge *sge)
{
	enum siwx_access_fault fault;
	struct siwx_mr *mr;

	if (!sge->length)
		return 0;
	mr = siwx_mr_get_checked(conn->qp, sge->lkey, IB_ACCESS_LOCAL_WRITE,
				 sge->addr, sge->length, &fault);
	if (!mr)
		return -EACCES;
	siwx_mr_put(mr);
	return 0;
}

/* An Immediate Data message (RFC 7306 6), the SQE's 8 octets */
static int siwx_tx_imm(struct siwx_conn *conn, const struct siwx_sqe *sqe)
{
	struct siwx_ddp_hdr h = {
		.opcode = sqe->flags & SIWX_WQE_SOLICITED ?
			  SIWX_OP_IMM_SE : SIWX_OP_IMM,
		.qn = SIWX_QN_SEND,
		.msn = conn->tx_msn[SIWX_QN_SEND]++,
	};

	return siwx_tx_message(conn, &h, sqe->imm, SIWX_IMM_LEN, NULL, 0);
}

static bool siwx_sqe_has_payload(const struct siwx_sqe *sqe)
{
	u32 i;

	if (sqe->flags & SIWX_WQE_INLINE)
		return sqe->num_sge;
	for (i = 0; i < sqe->num_sge && i < SIWX_MAX_SGE; i++)
		if (sqe->sge[i].length)
			return true;
	return false;
}

/* The DDP header of a Send (untagged, QN 0) or an RDMA Write (tagged) */
static void siwx_tx_send_write_hdr(struct siwx_conn *conn,
				   const struct siwx_sqe *sqe,
				   struct siwx_ddp_hdr *h)
{
	bool sol = sqe->flags & SIWX_WQE_SOLICITED;

	switch (sqe->opcode) {
	case IB_UVERBS_WR_SEND:
		h->opcode = sol ? SIWX_OP_SEND_SE : SIWX_OP_SEND;
		break;
	case IB_UVERBS_WR_SEND_WITH_INV:
		h->opcode = sol ? SIWX_OP_SEND_SE_INVAL : SIWX_OP_SEND_INVAL;
		h->inval_stag = sqe->rkey;
		break;
	default:
		h->opcode = SIWX_OP_WRITE;
		h->tagged = true;
		h->stag = sqe->rkey;
		h->to = sqe->raddr;
		return;
	}
	h->qn = SIWX_QN_SEND;
	h->msn = conn->tx_msn[SIWX_QN_SEND]++;
}

static int siwx_tx_send_write(struct siwx_conn *conn, u32 pos)
{
	const struct siwx_sqe *sqe = &conn->sqe;
	bool imm = sqe->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	struct siwx_ddp_hdr h = {};
	u32 len = 0;
	int rv;

	rv = siwx_tx_src_sqe(conn, sqe, &len);
	if (rv)
		return rv;
	siwx_tx_send_write_hdr(conn, sqe, &h);
	/* Large payload, no CRC: TCP's release completes the WR */
	if (siwx_zc_wanted(conn, &conn->src, len)) {
		conn->tx_zc = siwx_zc_start(conn, pos, len);
		conn->tx_payload_ref = conn->tx_zc;
	}
	if (!conn->tx_zc)
		siwx_tx_done_due(conn, pos, len);
	/* Write with Immediate: the Immediate Data message follows */
	conn->tx_follows = imm;
	rv = siwx_tx_message(conn, &h, NULL, 0, &conn->src, len);
	conn->tx_follows = false;
	siwx_tx_src_put(&conn->src);
	if (!rv && imm)
		rv = siwx_tx_imm(conn, sqe);
	if (conn->tx_zc) {
		siwx_zc_end(conn->tx_zc, rv);
		conn->tx_zc = NULL;
		conn->tx_payload_ref = false;
		return rv;
	}
	return siwx_tx_done_end(conn, rv);
}

static int siwx_tx_read(struct siwx_conn *conn, u32 pos)
{
	const struct siwx_sqe *sqe = &conn->sqe;
	struct siwx_read_req r = {
		.src_stag = sqe->rkey,
		.src_to = sqe->raddr,
	};
	struct siwx_ddp_hdr h = {
		.opcode = SIWX_OP_READ_REQ,
		.qn = SIWX_QN_READ,
	};
	u32 len;

	if ((sqe->flags & SIWX_WQE_INLINE) || sqe->num_sge > SIWX_MAX_SGE_RD)
		return -EINVAL;
	if (sqe->num_sge) {
		if (siwx_tx_check_sink(conn, &sqe->sge[0]))
			return -EACCES;
		r.sink_stag = sqe->sge[0].lkey;
		r.sink_to = sqe->sge[0].addr;
		r.size = sqe->sge[0].length;
	}
	if (siwx_orq_push(conn, pos, &r, NULL, NULL))
		return -EIO;
	len = siwx_read_req_encode(&r, conn->tx_rdmap);
	h.msn = conn->tx_msn[SIWX_QN_READ]++;
	return siwx_tx_message(conn, &h, conn->tx_rdmap, len, NULL, 0);
}

static int siwx_tx_atomic(struct siwx_conn *conn, u32 pos)
{
	const struct siwx_sqe *sqe = &conn->sqe;
	struct siwx_ddp_hdr h = {
		.opcode = SIWX_OP_ATOMIC_REQ,
		.qn = SIWX_QN_READ,
	};
	struct siwx_atomic_req r;
	u32 id = conn->atomic_id++;
	u32 len;

	if ((sqe->flags & SIWX_WQE_INLINE) || sqe->num_sge != 1 ||
	    sqe->sge[0].length < sizeof(u64) || (sqe->raddr & 7))
		return -EINVAL;
	if (siwx_tx_check_sink(conn, &sqe->sge[0]))
		return -EACCES;
	if (siwx_sqe_atomic_op(sqe->opcode) == SIWX_SQE_FETCH_ADD)
		siwx_atomic_req_fetch_add(&r, id, sqe->rkey, sqe->raddr,
					  sqe->add_swap, sqe->add_swap_mask);
	else
		siwx_atomic_req_cmp_swap(&r, id, sqe->rkey, sqe->raddr,
					 sqe->compare, sqe->compare_mask,
					 sqe->add_swap, sqe->add_swap_mask);
	if (siwx_orq_push(conn, pos, NULL, &r, &sqe->sge[0]))
		return -EIO;
	len = siwx_atomic_req_encode(&r, conn->tx_rdmap);
	h.msn = conn->tx_msn[SIWX_QN_READ]++;
	return siwx_tx_message(conn, &h, conn->tx_rdmap, len, NULL, 0);
}

/* Kernel ULPs' fast registration (siwx_post.c carries its fields) */
static int siwx_tx_reg_mr(struct siwx_conn *conn, u32 pos)
{
	const struct siwx_sqe *sqe = &conn->sqe;
	int rv;

	if (conn->qp->ibqp.uobject)
		return -EOPNOTSUPP;
	rv = siwx_mr_fast_reg(conn->qp, sqe->rkey, (int)sqe->bind.access);
	if (rv)
		return rv;
	siwx_sq_done(conn->qp, pos, SIWX_WC_SUCCESS, 0);
	return 0;
}

/* A Bind Memory Window (siwx_mw.c); a refused bind is a local error */
static int siwx_tx_bind_mw(struct siwx_conn *conn, u32 pos)
{
	int rv;

	if (!conn->qp->ibqp.uobject)
		return -EOPNOTSUPP;
	rv = siwx_mw_bind(conn->qp, &conn->sqe);
	if (rv == -EPERM)
		siwx_sq_done(conn->qp, pos, SIWX_WC_MW_BIND_ERR, 0);
	else if (rv)
		siwx_sq_done(conn->qp, pos, SIWX_WC_GENERAL_ERR, 0);
	else
		siwx_sq_done(conn->qp, pos, SIWX_WC_SUCCESS, 0);
	return rv;
}

static int siwx_tx_local_inv(struct siwx_conn *conn, u32 pos)
{
	enum siwx_access_fault fault;
	int rv;

	rv = siwx_mr_invalidate(conn->qp, conn->sqe.rkey, &fault);
	if (rv == -EPERM)
		return -EOPNOTSUPP;	/* not a fast registration */
	if (rv)
		return rv;
	siwx_sq_done(conn->qp, pos, SIWX_WC_SUCCESS, 0);
	return 0;
}

/* A local error: the WR fails (and the QP goes to ERROR) */
static int siwx_tx_sqe_failed(struct siwx_conn *conn, u32 pos, int rv)
{
	if (rv == -EACCES || rv == -EINVAL || rv == -EOPNOTSUPP)
		siwx_sq_done(conn->qp, pos,
			     rv == -EACCES ? SIWX_WC_LOC_PROT_ERR :
			     rv == -EINVAL ? SIWX_WC_LOC_LEN_ERR :
					     SIWX_WC_LOC_QP_OP_ERR, 0);
	return rv;
}

static int siwx_tx_sqe_exec(struct siwx_conn *conn, u32 pos)
{
	const struct siwx_sqe *sqe = &conn->sqe;
	int rv;

	switch (sqe->opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_INV:
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		rv = siwx_tx_send_write(conn, pos);
		break;
	case IB_UVERBS_WR_SEND_WITH_IMM:
		/* Only the zero-length form: a lone Immediate Data message */
		if (siwx_sqe_has_payload(sqe)) {
			rv = -EINVAL;
			break;
		}
		siwx_tx_done_due(conn, pos, 0);
		rv = siwx_tx_done_end(conn, siwx_tx_imm(conn, sqe));
		break;
	case IB_UVERBS_WR_RDMA_READ:
		rv = siwx_tx_read(conn, pos);
		break;
	case IB_UVERBS_WR_RDMA_READ_WITH_INV:
		/* Only kernel ULPs have MRs that can be invalidated */
		rv = conn->qp->ibqp.uobject ? -EOPNOTSUPP :
					      siwx_tx_read(conn, pos);
		break;
	case IB_UVERBS_WR_LOCAL_INV:
		rv = siwx_tx_local_inv(conn, pos);
		break;
	case IB_WR_REG_MR:
		rv = siwx_tx_reg_mr(conn, pos);
		break;
	case IB_UVERBS_WR_BIND_MW:
		rv = siwx_tx_bind_mw(conn, pos);
		break;
	default:
		if (siwx_sqe_atomic_op(sqe->opcode) != SIWX_SQE_NOT_ATOMIC)
			rv = siwx_tx_atomic(conn, pos);
		else	/* TSO, ... */
			rv = -EOPNOTSUPP;
		break;
	}
	return siwx_tx_sqe_failed(conn, pos, rv);
}

/* The SQE at @pos is in flight: what its completion needs of it */
static __always_inline void siwx_tx_sq_begin_locked(struct siwx_qp *qp,
						    u32 pos,
						    const struct siwx_sqe *sqe)
{
	struct siwx_sq_shadow *sh = siwx_sq_shadow_at(qp, pos);

	lockdep_assert_held(&qp->sq_lock);
	sh->id = sqe->id;
	sh->opcode = siwx_wr_to_wc_opcode(sqe->opcode);
	sh->status = SIWX_WC_SUCCESS;
	sh->bytes = 0;
	sh->signalled = (sqe->flags & SIWX_WQE_SIGNALLED) || qp->sig_all;
	sh->done = false;
	sh->inval = sqe->opcode == IB_UVERBS_WR_RDMA_READ_WITH_INV;
	sh->inval_stag = sqe->sge[0].lkey;
	qp->sq_tx = pos + 1;
}

/*
 * Whether the copied SQE waits for every outstanding Read and atomic:
 * fenced WRs, and invalidations, which must not pull an MR from under a
 * Read or atomic result still on its way.
 */
static bool siwx_tx_sqe_waits_empty(const struct siwx_sqe *sqe)
{
	return (sqe->flags & SIWX_WQE_FENCE) ||
	       sqe->opcode == IB_UVERBS_WR_LOCAL_INV;
}

/* Whether it may stall at all: that, or it takes an ORQ slot */
static bool siwx_tx_sqe_may_stall(const struct siwx_sqe *sqe)
{
	return siwx_sqe_op_awaits_response(sqe->opcode) ||
	       siwx_tx_sqe_waits_empty(sqe);
}

/*
 * Copy the SQE at the engine's position into conn->sqe, if there is one
 * and the ring lets it go; its position in *@pos. One that cannot stall
 * goes in flight under the same lock (*@begun), a lock pair less per WR
 * for every Send and Write.
 */
static int siwx_tx_sq_fetch(struct siwx_conn *conn, u32 *pos, bool *begun)
{
	struct siwx_qp *qp = conn->qp;
	struct siwx_sqe *sqe;
	int rv = SIWX_TX_DID;

	/*
	 * An empty ring needs no lock: posters ring the engine after making
	 * an entry valid. sq_tx moves only here and in siwx_qp_flush(); a
	 * stale look goes on to the locked check or ends a stopped QP's turn.
	 */
	if (!siwx_elem_valid(&siwx_sq_slot(qp, qp->sq_tx)->flags,
			     SIWX_WQE_VALID))
		return SIWX_TX_IDLE;
	spin_lock_bh(&qp->sq_lock);
	*pos = qp->sq_tx;
	sqe = siwx_sq_slot(qp, *pos);
	/* Stopped: what is left is the flush's (siwx_qp_flush) */
	if (!qp->dp_active) {
		rv = SIWX_TX_STALL;
	} else if (*pos - qp->sq_done >= qp->sq.num) {
		rv = SIWX_TX_FULL;
	} else if (!siwx_elem_valid(&sqe->flags, SIWX_WQE_VALID)) {
		rv = SIWX_TX_IDLE;
	} else {
		memcpy(&conn->sqe, sqe, sizeof(conn->sqe));
		*begun = !siwx_tx_sqe_may_stall(&conn->sqe);
		if (*begun)
			siwx_tx_sq_begin_locked(qp, *pos, &conn->sqe);
	}
	spin_unlock_bh(&qp->sq_lock);
	return rv;
}

/* Take the next SQE, if any and if it may go now. */
int siwx_tx_sq(struct siwx_conn *conn)
{
	const struct siwx_sqe *sqe = &conn->sqe;
	struct siwx_qp *qp = conn->qp;
	bool begun = false;
	u32 pos;
	int rv;

	rv = siwx_tx_sq_fetch(conn, &pos, &begun);
	if (rv != SIWX_TX_DID)
		return rv;
	if (!begun) {
		if (siwx_orq_stalls(conn,
				    siwx_sqe_op_awaits_response(sqe->opcode),
				    siwx_tx_sqe_waits_empty(sqe)))
			return SIWX_TX_STALL;
		spin_lock_bh(&qp->sq_lock);
		siwx_tx_sq_begin_locked(qp, pos, sqe);
		spin_unlock_bh(&qp->sq_lock);
	}
	rv = siwx_tx_sqe_exec(conn, pos);
	return rv ? rv : SIWX_TX_DID;
}
