// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Connections: their lifetime, binding a QP, taking the socket's
 * callbacks over for the data path, and tearing it all down once
 * (siwx_conn_close -> close_work): callbacks back, socket shut, TX
 * stopped, QP to ERROR and flushed, DISCONNECT and CLOSE upcalls,
 * references dropped.
 */
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/ipv6.h>
#include <net/tcp.h>

#include "siwx_conn.h"

struct workqueue_struct *siwx_cm_wq;
struct workqueue_struct *siwx_tx_wq;

static void siwx_conn_close_work(struct work_struct *work);

struct siwx_conn *siwx_conn_alloc(struct siwx_dev *dev)
{
	struct siwx_conn *conn = kvzalloc(sizeof(*conn), GFP_KERNEL);

	if (!conn)
		return NULL;
	atomic_inc(&siwx_objects.conns);
	kref_init(&conn->ref);
	mutex_init(&conn->mutex);
	spin_lock_init(&conn->lock);
	spin_lock_init(&conn->rdq_lock);
	INIT_LIST_HEAD(&conn->lentry);
	INIT_WORK(&conn->close_work, siwx_conn_close_work);
	INIT_WORK(&conn->tx_work, siwx_tx_work);
	INIT_WORK(&conn->rx_work, siwx_rx_work);
	INIT_DELAYED_WORK(&conn->rtr_grace, siwx_tx_rtr_grace);
	siwx_tx_pool_init(conn);
	siwx_zc_conn_init(conn);
	mutex_init(&conn->tx_mutex);
	conn->dev = dev;
	conn->pol.crc = siwx_mpa_crc;
	conn->pol.rev = siwx_mpa_rev == 1 ? 1 : 2;
	conn->pol.p2p = siwx_mpa_p2p;
	/* As Responder we take any RTR (siwx_cm.c narrows what we send) */
	conn->pol.rtr_types = SIWX_MPA_RTR_WRITE | SIWX_MPA_RTR_READ |
			      SIWX_MPA_RTR_SEND;
	conn->pol.max_ird = SIWX_MAX_IRD;
	conn->pol.max_ord = SIWX_MAX_ORD;
	return conn;
}

void siwx_conn_get(struct siwx_conn *conn)
{
	kref_get(&conn->ref);
}

static void siwx_conn_free(struct kref *ref)
{
	struct siwx_conn *conn = container_of(ref, struct siwx_conn, ref);

	/* TCP's references keep it as long as its skbs need it */
	if (conn->tx_page)
		put_page(conn->tx_page);
	while (conn->tx_nretired)
		put_page(conn->tx_retired[--conn->tx_nretired]);
	siwx_tx_pool_release(conn);
	kvfree(conn);
	atomic_dec(&siwx_objects.conns);
}

void siwx_conn_put(struct siwx_conn *conn)
{
	kref_put(&conn->ref, siwx_conn_free);
}

void siwx_conn_release_sock(struct siwx_conn *conn)
{
	if (!conn->sock)
		return;
	/*
	 * TCP still holds pages of zero-copy WRs (the peer has not
	 * acknowledged them): a reset lets go of them now, where a close
	 * would keep retransmitting them for minutes, and siwx_zc_exit()
	 * waits for them.
	 */
	if (atomic_read(&conn->zc_inflight))
		sock_no_linger(conn->sock->sk);
	kernel_sock_shutdown(conn->sock, SHUT_RDWR);
	sock_release(conn->sock);
	conn->sock = NULL;
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

/* Take a reference on @qp and make @conn its connection (QP -> RTS). */
int siwx_conn_bind_qp(struct siwx_conn *conn, struct siwx_qp *qp)
{
	int rv = 0;

	mutex_lock(&qp->state_lock);
	if (qp->conn || (qp->state != IB_QPS_INIT &&
			 qp->state != IB_QPS_RTR)) {
		rv = -EINVAL;
		goto out;
	}
	siwx_qp_get(qp);
	conn->qp = qp;
	siwx_rdq_init(&conn->orq, conn->mpa.ord);
	siwx_rdq_init(&conn->irq, conn->mpa.ird);
	siwx_rx_init(&conn->rx, conn->mpa.crc);
	/* siwx_rx_payload() takes the CRC in the pass that places payload */
	siwx_rx_defer_crc(&conn->rx);
	memset(&conn->imm, 0, sizeof(conn->imm));
	conn->tx_msn[SIWX_QN_SEND] = 1;
	conn->tx_msn[SIWX_QN_READ] = 1;
	conn->tx_msn[SIWX_QN_TERM] = 1;
	conn->tx_msn[SIWX_QN_ATOMIC_RESP] = 1;
	conn->mulpdu = siwx_mpa_mulpdu_segs(tcp_sk(conn->sock->sk)->mss_cache,
					    READ_ONCE(siwx_mpa_fpdu_segs));
	if (conn->mulpdu < 128)
		conn->mulpdu = 128;
	qp->ird = conn->mpa.ird;
	qp->ord = conn->mpa.ord;
	qp->state = IB_QPS_RTS;
	spin_lock_bh(&qp->sq_lock);
	siwx_conn_get(conn);
	qp->conn = conn;
	qp->dp_active = true;
	spin_unlock_bh(&qp->sq_lock);
out:
	mutex_unlock(&qp->state_lock);
	return rv;
}

/* Undo siwx_conn_bind_qp before the data path ran. */
void siwx_conn_unbind_qp(struct siwx_conn *conn)
{
	struct siwx_qp *qp = conn->qp;

	if (!qp)
		return;
	spin_lock_bh(&qp->sq_lock);
	qp->dp_active = false;
	qp->conn = NULL;
	spin_unlock_bh(&qp->sq_lock);
	mutex_lock(&qp->state_lock);
	qp->state = IB_QPS_ERR;
	mutex_unlock(&qp->state_lock);
	siwx_conn_put(conn);
	siwx_qp_put(qp);
	conn->qp = NULL;
}

static void siwx_conn_state_change(struct sock *sk)
{
	struct siwx_conn *conn;
	void (*orig)(struct sock *sk) = NULL;

	read_lock_bh(&sk->sk_callback_lock);
	conn = sk->sk_user_data;
	if (conn) {
		orig = conn->saved_state_change;
		switch (sk->sk_state) {
		case TCP_ESTABLISHED:
			break;
		default:
			/* FIN or RST from the peer, or our own close */
			siwx_conn_close(conn, sk->sk_state != TCP_CLOSE_WAIT);
			break;
		}
	}
	read_unlock_bh(&sk->sk_callback_lock);
	if (orig)
		orig(sk);
}

static void siwx_conn_write_space(struct sock *sk)
{
	struct siwx_conn *conn;
	void (*orig)(struct sock *sk) = NULL;

	read_lock_bh(&sk->sk_callback_lock);
	conn = sk->sk_user_data;
	if (conn)
		orig = conn->saved_write_space;
	read_unlock_bh(&sk->sk_callback_lock);
	if (orig)
		orig(sk);
}

/* Hand the socket to the data path and pick up what already arrived. */
void siwx_conn_start(struct siwx_conn *conn)
{
	struct sock *sk = conn->sock->sk;

	sk->sk_rcvtimeo = MAX_SCHEDULE_TIMEOUT;
	sk->sk_sndtimeo = MAX_SCHEDULE_TIMEOUT;
	write_lock_bh(&sk->sk_callback_lock);
	conn->saved_data_ready = sk->sk_data_ready;
	conn->saved_state_change = sk->sk_state_change;
	conn->saved_write_space = sk->sk_write_space;
	sk->sk_user_data = conn;
	sk->sk_data_ready = siwx_rx_data_ready;
	sk->sk_state_change = siwx_conn_state_change;
	sk->sk_write_space = siwx_conn_write_space;
	write_unlock_bh(&sk->sk_callback_lock);
	siwx_rx_kick(conn);
	if (sk->sk_state != TCP_ESTABLISHED)
		siwx_conn_close(conn, true);
}

/*
 * The socket's callbacks back to TCP's. rx_batch may have left data to
 * rx_work: a graceful close reads it, an abortive one drops it with
 * whatever else is still on its way.
 */
static void siwx_conn_stop(struct siwx_conn *conn, bool graceful)
{
	struct sock *sk = conn->sock->sk;
	bool ours;

	write_lock_bh(&sk->sk_callback_lock);
	ours = sk->sk_user_data == conn;
	if (ours) {
		sk->sk_user_data = NULL;
		sk->sk_data_ready = conn->saved_data_ready;
		sk->sk_state_change = conn->saved_state_change;
		sk->sk_write_space = conn->saved_write_space;
	}
	write_unlock_bh(&sk->sk_callback_lock);
	cancel_work_sync(&conn->rx_work);
	if (ours && graceful)
		siwx_rx_drain(conn);
}

/* Any context: tear the connection down (once). */
void siwx_conn_close(struct siwx_conn *conn, bool abortive)
{
	struct siwx_qp *qp;
	unsigned long flags;
	bool first;

	spin_lock_irqsave(&conn->lock, flags);
	first = !conn->closing;
	conn->closing = true;
	if (abortive)
		conn->abortive = true;
	qp = conn->qp;
	spin_unlock_irqrestore(&conn->lock, flags);
	/*
	 * An abortive close (a Terminate, a socket error, modify to ERROR)
	 * stops the data path now, not when the close work runs: whoever
	 * sees the error completion that goes with it must find the QP in
	 * ERROR, and nothing posted afterwards may go out. That holds for
	 * one that overtakes a graceful close (SQD) still under way too:
	 * ib_drain_qp() posts its marker right after moving to ERROR.
	 */
	if (abortive && qp) {
		WRITE_ONCE(conn->tx_stop, true);
		spin_lock_bh(&qp->sq_lock);
		qp->dp_active = false;
		spin_unlock_bh(&qp->sq_lock);
		WRITE_ONCE(qp->state, IB_QPS_ERR);
	}
	if (!first)
		return;
	siwx_conn_get(conn);
	queue_work(siwx_cm_wq, &conn->close_work);
}

/*
 * An IPv4 connection that a dual-stack IPv6 listener took has IPv4-mapped
 * addresses (::ffff:a.b.c.d). rdma_cm finds the device of a connection by
 * its local address, and finds none for a mapped one: report the IPv4
 * addresses they stand for, as the connection is IPv4 on the wire.
 */
static void siwx_addr_unmap(struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	__be32 a;
	__be16 port;

	if (ss->ss_family != AF_INET6 || !ipv6_addr_v4mapped(&s6->sin6_addr))
		return;
	a = s6->sin6_addr.s6_addr32[3];
	port = s6->sin6_port;
	memset(ss, 0, sizeof(*ss));
	s4->sin_family = AF_INET;
	s4->sin_port = port;
	s4->sin_addr.s_addr = a;
}

/*
 * The event to iwcm. Its handler fails (-ENOMEM) when it has no room for
 * the event: a listener's room is its backlog.
 */
int siwx_cm_upcall(struct siwx_conn *conn, struct iw_cm_id *id,
		   enum iw_cm_event_type type, int status,
		   const struct siwx_mpa_rr *rr)
{
	struct iw_cm_event ev = {
		.event = type,
		.status = status,
	};
	if (conn->sock) {
		kernel_getsockname(conn->sock,
				   (struct sockaddr *)&ev.local_addr);
		kernel_getpeername(conn->sock,
				   (struct sockaddr *)&ev.remote_addr);
		siwx_addr_unmap(&ev.local_addr);
		siwx_addr_unmap(&ev.remote_addr);
	}
	if (type == IW_CM_EVENT_CONNECT_REQUEST)
		ev.provider_data = conn;
	if (type == IW_CM_EVENT_CONNECT_REQUEST ||
	    type == IW_CM_EVENT_CONNECT_REPLY) {
		bool request = type == IW_CM_EVENT_CONNECT_REQUEST;

		/*
		 * A request carries the Initiator's IRD and ORD (our
		 * proposal's ORD and IRD): rdma_cm hands them to the listener
		 * as the initiator_depth and responder_resources it may
		 * accept with, as InfiniBand's CM and upstream siw do (the
		 * NFS server refuses an initiator_depth of 0). A reply
		 * carries what we agreed.
		 */
		ev.ird = request ? conn->mpa.ord : conn->mpa.ird;
		ev.ord = request ? conn->mpa.ird : conn->mpa.ord;
		if (rr && rr->pd_len) {
			ev.private_data = (void *)rr->pd;
			ev.private_data_len = rr->pd_len;
		}
	}
	return id->event_handler(id, &ev);
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
		siwx_conn_stop(conn, !abortive);
		WRITE_ONCE(conn->tx_stop, true);
		/* Ends any send in progress; graceful: FIN after the data */
		kernel_sock_shutdown(conn->sock, drain ? SHUT_WR : SHUT_RDWR);
	}
	if (qp) {
		spin_lock_bh(&qp->sq_lock);
		qp->dp_active = false;
		spin_unlock_bh(&qp->sq_lock);
		cancel_delayed_work_sync(&conn->rtr_grace);
		cancel_work_sync(&conn->tx_work);
		/* and for a doorbell's run of the engine (tx_stop ends it) */
		mutex_lock(&conn->tx_mutex);
		mutex_unlock(&conn->tx_mutex);
		siwx_tx_pool_stop(conn);
		mutex_lock(&qp->state_lock);
		qp->state = IB_QPS_ERR;
		mutex_unlock(&qp->state_lock);
		siwx_rx_drop_rqe(conn, SIWX_WC_WR_FLUSH_ERR);
		if (conn->rx_mr) {
			siwx_mr_put(conn->rx_mr);
			conn->rx_mr = NULL;
		}
		/* Zero-copy WRs: done within a second of a graceful close */
		siwx_zc_detach(conn, drain ? HZ : 0);
		siwx_qp_flush(qp);
		WRITE_ONCE(qp->sq_ctrl->tx_active, 0);
		spin_lock_bh(&qp->sq_lock);
		qp->conn = NULL;
		spin_unlock_bh(&qp->sq_lock);
		/* What was posted while the connection went away. */
		siwx_qp_flush_final(qp);
	}
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

/*
 * The QP leaves RTS through modify_qp (SQD: graceful, ERROR: abortive)
 * or destroy_qp: close its connection, if any.
 */
void siwx_qp_disconnect(struct siwx_qp *qp, bool abortive)
{
	struct siwx_conn *conn;

	spin_lock_bh(&qp->sq_lock);
	conn = qp->conn;
	if (conn)
		siwx_conn_get(conn);
	spin_unlock_bh(&qp->sq_lock);
	if (!conn)
		return;
	siwx_conn_close(conn, abortive);
	siwx_conn_put(conn);
}

int siwx_wq_init(void)
{
	siwx_cm_wq = alloc_workqueue("siwx_cm", WQ_UNBOUND, 0);
	if (!siwx_cm_wq)
		return -ENOMEM;
	siwx_tx_wq = alloc_workqueue("siwx_tx", WQ_UNBOUND | WQ_HIGHPRI, 0);
	if (!siwx_tx_wq) {
		destroy_workqueue(siwx_cm_wq);
		return -ENOMEM;
	}
	return 0;
}

void siwx_wq_exit(void)
{
	destroy_workqueue(siwx_tx_wq);
	destroy_workqueue(siwx_cm_wq);
}
