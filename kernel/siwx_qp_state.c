// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The QP state machine as modify_qp sees it.
 *
 * iWARP QPs follow the verbs states, but the connection manager owns
 * the connected ones: a new QP is in INIT, the rdma_cm/iw_cm flow is
 * INIT (access flags) -> RTR, and the CM moves a QP to RTS by itself
 * when the MPA exchange completes; a modify_qp to RTS is refused. RESET
 * is reached only by a modify_qp to it, and left to INIT. SQD (iwcm's
 * graceful disconnect) and ERROR close the connection; ERROR without
 * one flushes the queues.
 * Attributes that only mean something on InfiniBand (paths, PSNs,
 * timeouts, Q_Key, destination QP) are ignored, as on other iWARP
 * devices; those with a meaning here are validated before anything
 * changes.
 */
#include "siwx_compat.h"
#include "siwx_ring.h"

#define SIWX_QP_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

static bool siwx_qp_transition_ok(enum ib_qp_state cur,
				  enum ib_qp_state next)
{
	/* Any state may be reset or put into ERROR */
	if (next == IB_QPS_RESET || next == IB_QPS_ERR)
		return true;

	switch (cur) {
	case IB_QPS_RESET:
		return next == IB_QPS_INIT;
	case IB_QPS_INIT:
		return next == IB_QPS_INIT || next == IB_QPS_RTR;
	case IB_QPS_RTR:
		return next == IB_QPS_RTR;
	case IB_QPS_RTS:
		/* Only the CM enters RTS */
		return next == IB_QPS_RTS || next == IB_QPS_SQD;
	case IB_QPS_SQD:
		return next == IB_QPS_SQD;
	case IB_QPS_ERR:
		/* A graceful disconnect after the end: see siwx_modify_qp() */
		return next == IB_QPS_SQD;
	default:
		return false;
	}
}

static int siwx_qp_check_attr(struct siwx_qp *qp,
			      const struct ib_qp_attr *attr, int mask)
{
	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	/* Resizing the rings is not supported */
	if (mask & IB_QP_CAP)
		return -EINVAL;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != qp->state)
		return -EINVAL;
	if ((mask & IB_QP_STATE) &&
	    !siwx_qp_transition_ok(qp->state, attr->qp_state))
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index != 0)
		return -EINVAL;
	/*
	 * Remote Flush rights (IBTA 1.5) are accepted and dropped: iWARP has
	 * no Flush message, so no peer can use them (protocol-decisions.md).
	 */
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(SIWX_QP_ACCESS | SIWX_IB_ACCESS_FLUSH)))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SIWX_MAX_ORD)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SIWX_MAX_IRD)
		return -EINVAL;
	return 0;
}

int siwx_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct siwx_qp *qp = to_siwx_qp(ibqp);
	bool disconnect = false;
	int rv;

	mutex_lock(&qp->state_lock);
	rv = siwx_qp_check_attr(qp, attr, mask);
	if (rv)
		goto out;

	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access = attr->qp_access_flags & SIWX_QP_ACCESS;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->ord = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->ird = attr->max_dest_rd_atomic;
	if (mask & IB_QP_STATE) {
		enum ib_qp_state old = qp->state;

		/*
		 * SQD on a QP in ERROR is the graceful disconnect of a
		 * connection that has ended already, typically by the
		 * peer's close (librdmacm's rdma_disconnect() asks for SQD
		 * on iWARP, before iw_cm_disconnect() finds nothing to do):
		 * it succeeds, as on siw, and the QP stays in ERROR.
		 */
		if (old != IB_QPS_ERR || attr->qp_state != IB_QPS_SQD)
			qp->state = attr->qp_state;
		/* A QP made new again posts receives without doorbells */
		if (attr->qp_state == IB_QPS_RESET)
			WRITE_ONCE(qp->sq_ctrl->rq_doorbell, 0);
		if (attr->qp_state == IB_QPS_ERR ||
		    (attr->qp_state == IB_QPS_SQD && old == IB_QPS_RTS))
			disconnect = true;
	}
out:
	mutex_unlock(&qp->state_lock);
	if (disconnect) {
		siwx_qp_disconnect(qp, attr->qp_state == IB_QPS_ERR);
		if (attr->qp_state == IB_QPS_ERR)
			siwx_qp_doorbell(qp, false);
	}
	return rv;
}
