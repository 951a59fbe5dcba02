// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The TX engine: one work item per connection, the only sender on the
 * socket once the data path runs (a user's send doorbell may run it in
 * its system call instead; tx_mutex makes either the only one). Order: a
 * Terminate, then the responses the peer is owed (siwx_tx_resp.c), then
 * the SQ (siwx_tx_sq.c); each message goes out as FPDUs
 * (siwx_tx_fpdu.c, siwx_tx_push.c).
 *
 * FPDUs go to TCP with MSG_MORE while more is ready to follow, so that
 * the small messages of a busy SQ share segments; what TCP still holds
 * back is pushed whenever the engine stops for now (siwx_tx_pause): idle,
 * stalled, or waiting for the peer's RTR.
 */
#include <linux/tcp.h>

#include "siwx_rdq.h"
#include "siwx_tx.h"
#include "siwx_tx_fpdu.h"
#include "siwx_tx_pool.h"
#include "siwx_tx_resp.h"
#include "siwx_tx_sq.h"

/* A doorbell's run of the engine (siwx_tx_doorbell): its limits */
#define SIWX_TX_INLINE_WRS 16
#define SIWX_TX_INLINE_BYTES 4096
#define SIWX_TX_INLINE_ROOM (16 * 1024)

/*
 * The engine stops for now: push what TCP holds back (the last FPDU went
 * with MSG_MORE when more seemed to follow). Without this a Read Request
 * could wait in TCP for the Read Response it is waiting for.
 */
static void siwx_tx_pause(struct siwx_conn *conn)
{
	if (conn->tx_corked)
		tcp_sock_set_cork(conn->sock->sk, false);
	conn->tx_corked = false;
}

/*
 * Queue the work item from a doorbell's run, unless the data path has
 * stopped: the close work clears dp_active before it cancels the work
 * item, so a work item queued then would outlive the connection.
 */
static void siwx_tx_kick_active(struct siwx_qp *qp)
{
	spin_lock_bh(&qp->sq_lock);
	if (qp->dp_active)
		siwx_conn_kick_tx(qp->conn);
	spin_unlock_bh(&qp->sq_lock);
}

/*
 * Responder with no RTR agreed: the Initiator has not sent first within
 * SIWX_RTR_GRACE, so its application waits for ours to send first.
 */
static void siwx_tx_rtr_grace(struct work_struct *work)
{
	struct siwx_conn *conn = container_of(to_delayed_work(work),
					      struct siwx_conn, rtr_grace);

	if (!READ_ONCE(conn->rtr_wait) || !conn->qp)
		return;
	WRITE_ONCE(conn->rtr_wait, false);
	siwx_tx_kick_active(conn->qp);
}

/*
 * What a doorbell's run of the engine leaves to the work item: anything
 * but the SQ (responses, a Terminate, the RTR), more than a few WRs, and
 * any WR that might block the system call: more payload than
 * SIWX_TX_INLINE_BYTES, or too little room in the socket for it.
 * The SQE is read as the user left it; siwx_tx_sq() validates its copy.
 */
static bool siwx_tx_inline_ok(struct siwx_conn *conn, u32 *budget)
{
	struct siwx_qp *qp = conn->qp;
	struct siwx_sqe *sqe = siwx_sq_slot(qp, qp->sq_tx);
	u32 i, n = READ_ONCE(sqe->num_sge);
	u64 len = 0;

	if (!*budget)
		return false;
	(*budget)--;
	if (!siwx_elem_valid(&sqe->flags, SIWX_WQE_VALID))
		return true;	/* the loop goes idle */
	if (siwx_term_is_pending(conn) || conn->rtr_send ||
	    READ_ONCE(conn->rtr_wait) || siwx_irq_ready(conn))
		return false;
	if (READ_ONCE(sqe->flags) & SIWX_WQE_INLINE)
		len = n;
	else
		for (i = 0; i < min_t(u32, n, SIWX_MAX_SGE); i++)
			len += READ_ONCE(sqe->sge[i].length);
	return len <= SIWX_TX_INLINE_BYTES &&
	       sk_stream_wspace(conn->sock->sk) >= SIWX_TX_INLINE_ROOM;
}

/* A Terminate is due: send it, and the connection ends */
static void siwx_tx_term_and_close(struct siwx_conn *conn)
{
	siwx_tx_terminate(conn);
	WRITE_ONCE(conn->term_sent, true);
	siwx_tx_pause(conn);
	WRITE_ONCE(conn->tx_stop, true);
	siwx_conn_close(conn, true);
}

/*
 * One turn of the engine: the RTR, the responses, one SQE. Returns
 * SIWX_TX_DID to go on, another SIWX_TX_* to stop for now, or an error.
 */
static int siwx_tx_turn(struct siwx_conn *conn)
{
	int rv;

	if (conn->rtr_send) {
		rv = siwx_tx_rtr(conn);
		if (rv)
			return rv;
		conn->rtr_send = false;
	}
	/* Peer-to-peer Responder: RX kicks us when the RTR arrived */
	if (READ_ONCE(conn->rtr_wait))
		return SIWX_TX_STALL;
	/* Responses are owed only once RX has made one ready */
	if (READ_ONCE(conn->irq_nready)) {
		rv = siwx_tx_responses(conn);
		if (rv)
			return rv;
	}
	if (siwx_term_is_pending(conn))
		return SIWX_TX_DID;
	return siwx_tx_sq(conn);
}

/*
 * Idle, or the ring is full of WRs in flight: either way the next WR
 * comes with a doorbell (abi.h), also one that fills a slot a completion
 * frees (siwx_conn_sq_progress() covers a WR posted while this engine
 * still looked busy). Whether more is to be done after all.
 */
static bool siwx_tx_park(struct siwx_conn *conn, struct siwx_qp *qp)
{
	WRITE_ONCE(qp->sq_ctrl->tx_active, 0);
	/* Clear before the re-check; pairs with the provider's */
	smp_mb();
	if (!siwx_tx_more(conn))
		return false;
	WRITE_ONCE(qp->sq_ctrl->tx_active, 1);
	return true;
}

/* The engine; @in_syscall: a doorbell's run (siwx_tx_doorbell). */
static void siwx_tx_run(struct siwx_conn *conn, bool in_syscall)
{
	u32 budget = SIWX_TX_INLINE_WRS;
	struct siwx_qp *qp = conn->qp;
	int rv;

	if (!qp || READ_ONCE(conn->tx_stop))
		return;
	WRITE_ONCE(qp->sq_ctrl->tx_active, 1);
	for (;;) {
		if (READ_ONCE(conn->tx_stop))
			return;
		cond_resched();	/* as in siwx_tx_responses() */
		if (in_syscall && !siwx_tx_inline_ok(conn, &budget)) {
			siwx_tx_kick_active(qp);
			return;
		}
		if (siwx_term_is_pending(conn)) {
			siwx_tx_term_and_close(conn);
			return;
		}
		rv = siwx_tx_turn(conn);
		if (rv < 0)
			break;
		if (rv == SIWX_TX_DID)
			continue;
		siwx_tx_pause(conn);
		if (rv == SIWX_TX_STALL || !siwx_tx_park(conn, qp))
			return;
	}
	WRITE_ONCE(conn->tx_stop, true);
	siwx_conn_close(conn, true);
}

static void siwx_tx_work(struct work_struct *work)
{
	struct siwx_conn *conn = container_of(work, struct siwx_conn,
					      tx_work);

	mutex_lock(&conn->tx_mutex);
	siwx_tx_run(conn, false);
	mutex_unlock(&conn->tx_mutex);
}

/*
 * A user's send doorbell (the SQ went from idle to busy): send the first
 * few small WRs right here in the system call, as a latency-bound
 * application wants, instead of waking the work item and switching to
 * it. If the engine is running already, it will see the new WRs, or its
 * work item is queued to. The caller holds a reference on @conn.
 */
void siwx_tx_doorbell(struct siwx_qp *qp, struct siwx_conn *conn)
{
	if (!mutex_trylock(&conn->tx_mutex)) {
		siwx_tx_kick_active(qp);
		return;
	}
	conn->tx_in_syscall = true;
	siwx_tx_run(conn, true);
	conn->tx_in_syscall = false;
	mutex_unlock(&conn->tx_mutex);
}

/* The engine's work items on a new connection */
void siwx_tx_init(struct siwx_conn *conn)
{
	INIT_WORK(&conn->tx_work, siwx_tx_work);
	INIT_DELAYED_WORK(&conn->rtr_grace, siwx_tx_rtr_grace);
	siwx_tx_pool_init(conn);
}

/*
 * The data path has stopped (dp_active clear, tx_stop set): the engine
 * runs no more, and its stage pages go (TCP's references keep what its
 * skbs need).
 */
void siwx_tx_end(struct siwx_conn *conn)
{
	cancel_delayed_work_sync(&conn->rtr_grace);
	cancel_work_sync(&conn->tx_work);
	/* and for a doorbell's run of the engine (tx_stop ends it) */
	mutex_lock(&conn->tx_mutex);
	mutex_unlock(&conn->tx_mutex);
	siwx_tx_pool_stop(conn);
	if (conn->tx_page)
		put_page(conn->tx_page);
	conn->tx_page = NULL;
	while (conn->tx_nretired)
		put_page(conn->tx_retired[--conn->tx_nretired]);
	siwx_tx_pool_release(conn);
}
