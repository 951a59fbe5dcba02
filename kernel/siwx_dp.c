// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * A connection's data path: the work items of the TX and RX engines
 * wired to it (siwx_conn_new), the socket handed to them once the MPA
 * exchange is done (siwx_conn_start), and the close work that ends it
 * all once (siwx_conn_close() queues it): callbacks back, socket shut,
 * the engines stopped, the QP to ERROR and flushed, DISCONNECT and CLOSE
 * upcalls, references dropped.
 */
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <net/tcp.h>

#include "siwx_comp.h"
#include "siwx_dp.h"
#include "siwx_rx.h"
#include "siwx_tx.h"
#include "siwx_zc.h"

static void siwx_conn_close_work(struct work_struct *work);

/* A connection whose work items run the engines and its close */
struct siwx_conn *siwx_conn_new(struct siwx_dev *dev)
{
	struct siwx_conn *conn = siwx_conn_alloc(dev);

	if (!conn)
		return NULL;
	INIT_WORK(&conn->close_work, siwx_conn_close_work);
	siwx_tx_init(conn);
	INIT_WORK(&conn->rx_work, siwx_rx_work);
	INIT_DELAYED_WORK(&conn->rx_wait_work, siwx_rx_wait_work);
	siwx_zc_conn_init(conn);
	return conn;
}

/* Hand the socket to the data path and pick up what already arrived. */
void siwx_conn_start(struct siwx_conn *conn)
{
	siwx_conn_hook_sock(conn, siwx_rx_data_ready);
	siwx_rx_kick(conn);
	if (conn->sock->sk->sk_state != TCP_ESTABLISHED)
		siwx_conn_close(conn, true);
}

/*
 * RX no longer runs: rx_batch may have left data to rx_work, which a
 * graceful close reads and an abortive one drops with whatever else is
 * still on its way.
 */
static void siwx_conn_stop_rx(struct siwx_conn *conn, bool graceful)
{
	bool ours = siwx_conn_unhook_sock(conn);

	cancel_work_sync(&conn->rx_work);
	if (ours && graceful)
		siwx_rx_drain(conn);
}

/*
 * The end of a graceful close, our FIN already queued behind the last
 * FPDUs: read and drop what the peer still sends, until its FIN. TCP
 * resets a connection whose socket is released with unread data (RFC
 * 2525), and a reset discards what it has not sent yet: the peer then
 * lost our last messages, though they had completed here. Gives up
 * after SIWX_CLOSE_LINGER (a peer that never closes gets the reset).
 */
static void siwx_conn_linger(struct socket *sock)
{
	unsigned long end = jiffies + SIWX_CLOSE_LINGER;
	struct msghdr msg = {};
	struct kvec iov;
	void *buf;
	int rv;

	buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return;
	do {
		iov.iov_base = buf;
		iov.iov_len = PAGE_SIZE;
		sock->sk->sk_rcvtimeo = max_t(long, end - jiffies, 1);
		rv = kernel_recvmsg(sock, &msg, &iov, 1, PAGE_SIZE, 0);
	} while (rv > 0 && time_before(jiffies, end));
	kfree(buf);
}

/*
 * The data path on @qp ends: the engines stop, the QP goes to ERROR and
 * everything it holds completes, zero-copy WRs done within a second of a
 * graceful close (@drain) as they are.
 */
static void siwx_conn_end_dp(struct siwx_conn *conn, struct siwx_qp *qp,
			     bool drain)
{
	spin_lock_bh(&qp->sq_lock);
	qp->dp_active = false;
	spin_unlock_bh(&qp->sq_lock);
	siwx_tx_end(conn);
	mutex_lock(&qp->state_lock);
	qp->state = IB_QPS_ERR;
	mutex_unlock(&qp->state_lock);
	siwx_rx_end(conn);
	siwx_zc_detach(conn, drain ? HZ : 0);
	siwx_qp_flush(qp);
	WRITE_ONCE(qp->sq_ctrl->tx_active, 0);
	spin_lock_bh(&qp->sq_lock);
	qp->conn = NULL;
	spin_unlock_bh(&qp->sq_lock);
	/* What was posted while the connection went away. */
	siwx_qp_flush_final(qp);
}

static void siwx_conn_close_work(struct work_struct *work)
{
	struct siwx_conn *conn = container_of(work, struct siwx_conn,
					      close_work);
	unsigned long flags;
	struct siwx_qp *qp;
	bool abortive, drain;

	mutex_lock(&conn->mutex);
	spin_lock_irqsave(&conn->lock, flags);
	abortive = conn->abortive;
	spin_unlock_irqrestore(&conn->lock, flags);
	/*
	 * The socket of a graceful close, and of one that sent a Terminate,
	 * ends like a graceful one: our FIN behind the last FPDU, what the
	 * peer still sends read and dropped (siwx_conn_linger). A reset
	 * would discard a Terminate not yet sent, and the peer would never
	 * learn why the Stream ended, which is what a Terminate is for.
	 */
	drain = !abortive || READ_ONCE(conn->term_sent);
	qp = conn->qp;
	if (conn->sock) {
		siwx_conn_stop_rx(conn, !abortive);
		/*
		 * A WR that completed before its last push (siwx_tx_fpdu.c):
		 * the application may have closed on seeing it, and its data
		 * must go out before our FIN. A push that TCP does not take
		 * within a second (a peer that reads no more) is ended.
		 */
		if (!abortive)
			wait_var_event_timeout(&conn->tx_owed,
					       !READ_ONCE(conn->tx_owed), HZ);
		WRITE_ONCE(conn->tx_stop, true);
		/* Ends any send in progress; graceful: FIN after the data */
		kernel_sock_shutdown(conn->sock, drain ? SHUT_WR : SHUT_RDWR);
	}
	if (qp)
		siwx_conn_end_dp(conn, qp, drain);
	if (conn->established && conn->id) {
		siwx_cm_upcall(conn, conn->id, IW_CM_EVENT_DISCONNECT,
			       conn->abortive ? -ECONNRESET : 0, NULL);
		siwx_cm_upcall(conn, conn->id, IW_CM_EVENT_CLOSE, 0, NULL);
		conn->established = false;
	}
	if (conn->sock && drain)
		siwx_conn_linger(conn->sock);
	siwx_conn_release_sock(conn);
	if (conn->id) {
		conn->id->provider_data = NULL;
		conn->id->rem_ref(conn->id);
		conn->id = NULL;
	}
	if (qp) {
		conn->qp = NULL;
		siwx_conn_put(conn);	/* qp->conn's */
		siwx_qp_put(qp);
	}
	mutex_unlock(&conn->mutex);
	siwx_conn_put(conn);		/* the queued work's */
	siwx_conn_put(conn);		/* the connection's own */
}
