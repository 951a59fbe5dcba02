// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Posting work requests. User space posts into the mapped rings and
 * rings the doorbell (a post_send without work requests), which starts
 * the TX engine, or flushes in ERROR. Kernel consumers' work requests
 * are refused: siwx serves user-space verbs only for now.
 */
#include "siwx.h"

int siwx_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	if (!wr) {
		siwx_qp_doorbell(to_siwx_qp(ibqp));
		return 0;
	}
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

int siwx_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	if (!wr)
		return 0;
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

int siwx_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	if (!wr)
		return 0;
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

/*
 * ib_drain_qp() would otherwise post a marker WR and wait for its
 * completion, which cannot be posted yet. Nothing is ever in flight, so
 * there is nothing to wait for; the data path must make these wait for
 * the flush of everything outstanding.
 */
void siwx_drain_sq(struct ib_qp *ibqp)
{
}

void siwx_drain_rq(struct ib_qp *ibqp)
{
}
