// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Connections: their lifetime (references, the close that happens once),
 * binding a QP, the socket's callbacks, the events iw_cm gets, and waking
 * the TX engine. What runs on a connection, and the close work that tears
 * it down, are in siwx_dp.c.
 */
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/ipv6.h>
#include <net/tcp.h>

#include "siwx_conn.h"

struct workqueue_struct *siwx_cm_wq;
struct workqueue_struct *siwx_tx_wq;

/* A connection with its locks and MPA policy; siwx_conn_new() wires it */
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

/*
 * The socket's callbacks to the data path: @data_ready (the RX engine's)
 * and ours for its state and write space. Returns with sk_user_data set.
 */
void siwx_conn_hook_sock(struct siwx_conn *conn,
			 void (*data_ready)(struct sock *sk))
{
	struct sock *sk = conn->sock->sk;

	sk->sk_rcvtimeo = MAX_SCHEDULE_TIMEOUT;
	sk->sk_sndtimeo = MAX_SCHEDULE_TIMEOUT;
	write_lock_bh(&sk->sk_callback_lock);
	conn->saved_data_ready = sk->sk_data_ready;
	conn->saved_state_change = sk->sk_state_change;
	conn->saved_write_space = sk->sk_write_space;
	sk->sk_user_data = conn;
	sk->sk_data_ready = data_ready;
	sk->sk_state_change = siwx_conn_state_change;
	sk->sk_write_space = siwx_conn_write_space;
	write_unlock_bh(&sk->sk_callback_lock);
}

/* The socket's callbacks back to TCP's; whether they were ours */
bool siwx_conn_unhook_sock(struct siwx_conn *conn)
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
	return ours;
}

/* Wake the TX engine's work item */
void siwx_conn_kick_tx(struct siwx_conn *conn)
{
	queue_work(siwx_tx_wq, &conn->tx_work);
}

/*
 * RX completed a Read or an Atomic: the WRs behind it may go. The engine
 * waits for that either stalled (ORD full, a fence; tx_active set, so
 * the provider rang no doorbell for WRs it posted since) or parked on a
 * ring full of WRs in flight (tx_active clear, so a WR posted into the
 * freed slot rings the doorbell). Wake it only when a WR waits at its
 * position: after every Response it cost a context switch per Read with
 * perftest's one-slot SQ. Owed Responses and a Terminate wake the engine
 * where RX queues them.
 */
void siwx_conn_sq_progress(struct siwx_conn *conn)
{
	/*
	 * sq_done (siwx_sq_done()) before the look at the ring; pairs with
	 * the provider's publish-then-read-tx_active and the engine's
	 * clear-then-re-check (siwx_tx_run())
	 */
	smp_mb();
	if (siwx_sq_waiting(conn->qp))
		siwx_conn_kick_tx(conn);
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
