// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Doorbells: the only system calls of the data path. Both are a
 * POST_SEND or POST_RECV without work requests, prepared once per QP and
 * written to cmd_fd only when the ring's control page says the kernel
 * needs waking (ring.h). ibv_post_send() and the ibv_qp_ex wr_* API share
 * the SQ doorbell.
 */
#include <unistd.h>

#include "siwx.h"

void siwx_qp_init_doorbell(struct siwx_qp *qp)
{
	struct ibvp_cmd_post_send *db = &qp->db_cmd;
	struct ibvp_cmd_post_recv *rdb = &qp->rdb_cmd;

	db->hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	db->hdr.in_words = sizeof(*db) / 4;
	db->hdr.out_words = sizeof(qp->db_resp) / 4;
	db->core.response = (uintptr_t)&qp->db_resp;
	db->core.qp_handle = qp->vqp.qp.handle;
	db->core.wr_count = 0;
	db->core.sge_count = 0;
	/* uverbs insists on a plausible WR size even for zero WRs */
	db->core.wqe_size = sizeof(struct ib_uverbs_send_wr);

	rdb->hdr.command = IB_USER_VERBS_CMD_POST_RECV;
	rdb->hdr.in_words = sizeof(*rdb) / 4;
	rdb->hdr.out_words = sizeof(qp->rdb_resp) / 4;
	rdb->core.response = (uintptr_t)&qp->rdb_resp;
	rdb->core.qp_handle = qp->vqp.qp.handle;
	rdb->core.wqe_size = sizeof(struct ib_uverbs_recv_wr);
}

/* Call with sq_lock held, after publishing. */
void siwx_sq_doorbell(struct siwx_qp *qp)
{
	ssize_t n;

	if (!siwx_sq_doorbell_needed(qp->sq_ctrl))
		return;
	/*
	 * A failed doorbell cannot be reported per WR any more (they are
	 * published); the kernel's next idle re-check still finds them.
	 */
	n = write(qp->vqp.qp.context->cmd_fd, &qp->db_cmd, sizeof(qp->db_cmd));
	(void)n;
}

/* Call after publishing receives. */
void siwx_rq_doorbell(struct siwx_qp *qp)
{
	ssize_t n;

	if (!siwx_rq_doorbell_needed(qp->sq_ctrl))
		return;
	/* The QP is gone: the kernel flushes what was just posted */
	n = write(qp->vqp.qp.context->cmd_fd, &qp->rdb_cmd,
		  sizeof(qp->rdb_cmd));
	(void)n;
}
