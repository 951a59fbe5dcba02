// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The iWARP connection manager (iw_cm ops): kernel TCP sockets and the
 * MPA Request/Reply exchange. Every negotiation decision comes from the
 * protocol core (mpa_nego.h); this file only moves the frames.
 *
 * Policy: CRC, the MPA revision and peer-to-peer mode (RFC 6581) follow
 * the module parameters. As Initiator we offer a zero-length Write or
 * Send as RTR and send it first (TX, conn->rtr_send); as Responder we
 * take any RTR type. A Responder sends nothing before the Initiator's
 * first FPDU, the RTR or, without peer-to-peer mode, any (RFC 5044 7.1.2;
 * conn->rtr_wait, cleared by RX), or without one until SIWX_RTR_GRACE
 * has passed.
 *
 * Passive: the listening socket's data_ready queues accept_work, which
 * accepts every pending connection and gives each a cm_work reading its
 * MPA Request (blocking, SIWX_MPA_TIMEOUT). A valid one becomes
 * IW_CM_EVENT_CONNECT_REQUEST; iw_accept/iw_reject answer it.
 * Active: iw_connect creates and binds the socket; cm_work connects,
 * sends the Request, reads the Reply (waiting SIWX_MPA_REPLY_TIMEOUT for
 * the peer's application to accept) and reports CONNECT_REPLY.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/ipv6.h>
#include <net/tcp.h>

#include <siwx/proto/bytes.h>

#include "siwx_compat.h"
#include "siwx_dp.h"

struct siwx_listener {
	struct kref ref;
	struct iw_cm_id *id;
	struct siwx_dev *dev;
	struct socket *sock;
	struct work_struct accept_work;
	struct mutex lock;		/* pending, dead */
	struct list_head pending;
	bool dead;
	void (*saved_data_ready)(struct sock *sk);
};

static void siwx_listener_free(struct kref *ref)
{
	kfree(container_of(ref, struct siwx_listener, ref));
	atomic_dec(&siwx_objects.listeners);
}

static void siwx_listener_put(struct siwx_listener *l)
{
	kref_put(&l->ref, siwx_listener_free);
}

static int siwx_addr_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					   sizeof(struct sockaddr_in);
}

static bool siwx_addr_is_any(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

	if (ss->ss_family == AF_INET6)
		return ipv6_addr_any(&s6->sin6_addr);
	return s4->sin_addr.s_addr == htonl(INADDR_ANY);
}

/* 127.0.0.0/8 and ::1: rdma_cm's loopback addresses (cma_loopback_addr()) */
static bool siwx_addr_is_loopback(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

	if (ss->ss_family == AF_INET6)
		return ipv6_addr_loopback(&s6->sin6_addr);
	return ipv4_is_loopback(s4->sin_addr.s_addr);
}

/*
 * rdma_cm's AF_ONLY (rdma_set_afonly(), or net.ipv6.bindv6only for a
 * wildcard bind): an IPv6 socket that takes no IPv4 traffic. The NFS
 * server listens on 0.0.0.0 and, AF_ONLY, on [::] of one port: as a
 * dual-stack socket the second would not bind (EADDRINUSE).
 */
static int siwx_sock_set_afonly(struct socket *sock,
				const struct iw_cm_id *id)
{
	if (sock->sk->sk_family != AF_INET6 || !id->afonly)
		return 0;
	return ip6_sock_set_v6only(sock->sk);
}

static int siwx_cm_send_rr(struct siwx_conn *conn,
			   const struct siwx_mpa_rr *rr)
{
	size_t len = siwx_mpa_rr_len(rr);
	struct msghdr msg = {};
	struct kvec iov;
	u8 *buf;
	int rv;

	if (!len)
		return -EINVAL;
	buf = kmalloc(len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	iov.iov_base = buf;
	iov.iov_len = siwx_mpa_rr_encode(rr, buf);
	rv = kernel_sendmsg(conn->sock, &msg, &iov, 1, iov.iov_len);
	kfree(buf);
	if (rv < 0)
		return rv;
	return rv == len ? 0 : -ECONNRESET;
}

static int siwx_cm_recv_exact(struct socket *sock, u8 *buf, size_t len)
{
	struct msghdr msg = {};
	struct kvec iov = { .iov_base = buf, .iov_len = len };
	int rv;

	if (!len)
		return 0;
	rv = kernel_recvmsg(sock, &msg, &iov, 1, len, MSG_WAITALL);
	if (rv < 0)
		return rv;
	return rv == len ? 0 : -ECONNRESET;
}

/* Read one MPA Request or Reply frame into conn->mpa_buf. */
static int siwx_cm_recv_rr(struct siwx_conn *conn, struct siwx_mpa_rr *rr)
{
	struct siwx_term err;
	size_t flen;
	u16 pd_len;
	int rv;

	rv = siwx_cm_recv_exact(conn->sock, conn->mpa_buf,
				SIWX_MPA_RR_HDR_LEN);
	if (rv)
		return rv;
	pd_len = siwx_get_be16(conn->mpa_buf + SIWX_MPA_RR_HDR_LEN - 2);
	if (pd_len > SIWX_MPA_MAX_PD_LEN)
		return -EINVAL;
	rv = siwx_cm_recv_exact(conn->sock,
				conn->mpa_buf + SIWX_MPA_RR_HDR_LEN, pd_len);
	if (rv)
		return rv;
	if (siwx_mpa_rr_decode(conn->mpa_buf, SIWX_MPA_RR_HDR_LEN + pd_len,
			       rr, &flen, &err) != SIWX_PARSE_OK)
		return -EINVAL;
	return 0;
}

static void siwx_cm_sock_setup(struct socket *sock)
{
	tcp_sock_set_nodelay(sock->sk);
	sock->sk->sk_rcvtimeo = SIWX_MPA_TIMEOUT;
	sock->sk->sk_sndtimeo = SIWX_MPA_TIMEOUT;
}

/* A passive connection leaves its listener (handed on or dropped). */
static void siwx_cm_unlist(struct siwx_conn *conn, bool *dead)
{
	struct siwx_listener *l = conn->listener;

	mutex_lock(&l->lock);
	list_del_init(&conn->lentry);
	*dead = l->dead;
	mutex_unlock(&l->lock);
}

static void siwx_cm_passive_work(struct work_struct *work)
{
	struct siwx_conn *conn = container_of(work, struct siwx_conn,
					      cm_work);
	struct siwx_listener *l = conn->listener;
	struct siwx_mpa_rr rep;
	struct siwx_term err;
	bool dead;

	siwx_cm_sock_setup(conn->sock);
	if (siwx_cm_recv_rr(conn, &conn->req) || conn->req.reply)
		goto drop;
	if (!siwx_mpa_check_request(&conn->pol, &conn->req, &conn->mpa,
				    &err)) {
		siwx_mpa_make_reply(&conn->req, &conn->mpa, false, 0, 0, NULL,
				    0, &rep);
		siwx_cm_send_rr(conn, &rep);
		goto drop;
	}
	siwx_cm_unlist(conn, &dead);
	if (dead)
		goto drop_unlisted;
	conn->listener = NULL;
	/*
	 * From here iwcm owns the connection (iw_accept or iw_reject), unless
	 * it took no event: a listener whose backlog of requests is full.
	 * Such a request is refused as a reject would (RFC 5044 7.1.2), not
	 * left unanswered until the Initiator gives up.
	 */
	if (siwx_cm_upcall(conn, l->id, IW_CM_EVENT_CONNECT_REQUEST, 0,
			   &conn->req)) {
		siwx_mpa_make_reply(&conn->req, &conn->mpa, false, 0, 0, NULL,
				    0, &rep);
		siwx_cm_send_rr(conn, &rep);
		goto drop_unlisted;
	}
	l->id->rem_ref(l->id);
	siwx_listener_put(l);
	return;

drop:
	siwx_cm_unlist(conn, &dead);
drop_unlisted:
	conn->listener = NULL;
	siwx_conn_release_sock(conn);
	l->id->rem_ref(l->id);
	siwx_listener_put(l);
	siwx_conn_put(conn);
}

static void siwx_listen_accept_work(struct work_struct *work)
{
	struct siwx_listener *l = container_of(work, struct siwx_listener,
					       accept_work);
	struct siwx_conn *conn;
	struct socket *sock;

	while (!kernel_accept(l->sock, &sock, O_NONBLOCK)) {
		/* The child inherited the listener's callbacks: undo that */
		write_lock_bh(&sock->sk->sk_callback_lock);
		sock->sk->sk_user_data = NULL;
		sock->sk->sk_data_ready = l->saved_data_ready;
		write_unlock_bh(&sock->sk->sk_callback_lock);
		conn = siwx_conn_new(l->dev);
		if (!conn) {
			sock_release(sock);
			continue;
		}
		conn->sock = sock;
		INIT_WORK(&conn->cm_work, siwx_cm_passive_work);
		mutex_lock(&l->lock);
		if (l->dead) {
			mutex_unlock(&l->lock);
			siwx_conn_release_sock(conn);
			siwx_conn_put(conn);
			break;
		}
		kref_get(&l->ref);
		l->id->add_ref(l->id);
		conn->listener = l;
		list_add_tail(&conn->lentry, &l->pending);
		mutex_unlock(&l->lock);
		queue_work(siwx_cm_wq, &conn->cm_work);
	}
}

static void siwx_listen_data_ready(struct sock *sk)
{
	struct siwx_listener *l;

	read_lock_bh(&sk->sk_callback_lock);
	l = sk->sk_user_data;
	if (l)
		queue_work(siwx_cm_wq, &l->accept_work);
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Whether a siwx device on lo serves loopback addresses; if not, says why
 * and what to do, as "siwx: <device>: <what> <address>: <why>".
 */
static bool siwx_loopback_served(struct iw_cm_id *id, const char *what,
				 const struct sockaddr_storage *addr)
{
	const char *dev = dev_name(&id->device->dev);

	if (!siwx_dev_on_loopback()) {
		pr_info_ratelimited("siwx: %s: %s %pISpc: no siwx device on lo serves loopback addresses; add one (rdma link add siwx_lo type siwx netdev lo)\n",
				    dev, what, addr);
		return false;
	}
	return true;
}

/*
 * A listen on a loopback address reaches every RDMA device, as one on the
 * wildcard address does: rdma_cm binds no device for it and listens on
 * all (cma_listen_on_all()). Only a device on lo can serve it (the
 * connections arrive there, and rdma_cm attaches them to lo's device):
 * the others take the call and listen on nothing, else their sockets on
 * the same address and port collide (EADDRINUSE fails the whole
 * rdma_listen). If no device can serve it, the listen fails at once
 * rather than every connect later.
 */
static int siwx_listen_elsewhere(struct iw_cm_id *id)
{
	id->provider_data = NULL;
	if (!siwx_loopback_served(id, "cannot listen on", &id->m_local_addr))
		return -EADDRNOTAVAIL;
	return 0;
}

/*
 * The listener's socket, bound to @id's address and listening, its
 * data_ready ours.
 */
static int siwx_listen_sock(struct siwx_listener *l, struct iw_cm_id *id,
			    int backlog)
{
	struct sock *sk;
	int rv;

	rv = sock_create_kern(&init_net, id->m_local_addr.ss_family,
			      SOCK_STREAM, IPPROTO_TCP, &l->sock);
	if (rv)
		return rv;
	sk = l->sock->sk;
	sk->sk_reuse = SK_CAN_REUSE;
	rv = siwx_sock_set_afonly(l->sock, id);
	if (rv)
		goto err;
	/*
	 * rdma_listen() on the wildcard address asks every RDMA device to
	 * listen on the port. Ours takes only what arrives on its netdev:
	 * else another iWARP device's listener on that port could not bind
	 * (EADDRINUSE fails the whole rdma_listen), or we would take
	 * connections meant for it.
	 */
	if (siwx_addr_is_any(&id->m_local_addr)) {
		rv = sock_bindtoindex(sk, l->dev->netdev->ifindex, true);
		if (rv)
			goto err;
	}
	rv = siwx_kernel_bind(l->sock, &id->m_local_addr,
			      siwx_addr_len(&id->m_local_addr));
	if (rv)
		goto err;
	write_lock_bh(&sk->sk_callback_lock);
	l->saved_data_ready = sk->sk_data_ready;
	sk->sk_user_data = l;
	sk->sk_data_ready = siwx_listen_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
	rv = kernel_listen(l->sock, backlog);
	if (!rv)
		return 0;
err:
	sock_release(l->sock);
	return rv;
}

int siwx_iw_create_listen(struct iw_cm_id *id, int backlog)
{
	struct siwx_dev *dev = to_siwx_dev(id->device);
	struct siwx_listener *l;
	int rv;

	if (siwx_addr_is_loopback(&id->m_local_addr) &&
	    !(dev->netdev->flags & IFF_LOOPBACK))
		return siwx_listen_elsewhere(id);
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	atomic_inc(&siwx_objects.listeners);
	kref_init(&l->ref);
	mutex_init(&l->lock);
	INIT_LIST_HEAD(&l->pending);
	INIT_WORK(&l->accept_work, siwx_listen_accept_work);
	l->id = id;
	l->dev = dev;
	rv = siwx_listen_sock(l, id, backlog);
	if (rv) {
		kfree(l);
		atomic_dec(&siwx_objects.listeners);
		return rv;
	}
	id->provider_data = l;
	return 0;
}

int siwx_iw_destroy_listen(struct iw_cm_id *id)
{
	struct siwx_listener *l = id->provider_data;
	struct sock *sk;
	struct siwx_conn *conn;

	if (!l)
		return 0;
	sk = l->sock->sk;
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_data_ready = l->saved_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
	cancel_work_sync(&l->accept_work);

	/* Connections still reading their Request give up now */
	mutex_lock(&l->lock);
	l->dead = true;
	list_for_each_entry(conn, &l->pending, lentry)
		kernel_sock_shutdown(conn->sock, SHUT_RDWR);
	mutex_unlock(&l->lock);

	sock_release(l->sock);
	l->sock = NULL;
	id->provider_data = NULL;
	siwx_listener_put(l);
	return 0;
}

int siwx_iw_accept(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	struct siwx_conn *conn = id->provider_data;
	struct ib_qp *ibqp;
	struct siwx_mpa_rr rep;
	int rv;

	if (!conn || conn->replied)
		return -EINVAL;
	if (param->private_data_len >
	    SIWX_MPA_MAX_PD_LEN - SIWX_MPA_V2_PARAMS_LEN)
		return -EINVAL;
	ibqp = siwx_iw_get_qp(id->device, param->qpn);
	if (!ibqp)
		return -EINVAL;

	mutex_lock(&conn->mutex);
	conn->replied = true;
	siwx_mpa_make_reply(&conn->req, &conn->mpa, true,
			    min_t(u32, param->ird, SIWX_MAX_IRD),
			    min_t(u32, param->ord, SIWX_MAX_ORD),
			    param->private_data, param->private_data_len,
			    &rep);
	rv = siwx_conn_bind_qp(conn, to_siwx_qp(ibqp));
	if (rv) {
		siwx_mpa_make_reply(&conn->req, &conn->mpa, false, 0, 0,
				    NULL, 0, &rep);
		siwx_cm_send_rr(conn, &rep);
		goto err;
	}
	rv = siwx_cm_send_rr(conn, &rep);
	if (rv) {
		siwx_conn_unbind_qp(conn);
		goto err;
	}
	id->add_ref(id);
	conn->id = id;
	/*
	 * Nothing goes out before the Initiator's first FPDU (RFC 5044
	 * 7.1.2): its stack may still be reading our Reply (upstream siw
	 * drops a connection whose first FPDU comes with the Reply). Only
	 * an RTR is sure to come; else see SIWX_RTR_GRACE.
	 */
	WRITE_ONCE(conn->rtr_wait, true);
	siwx_conn_start(conn);
	if (!conn->mpa.rtr)
		queue_delayed_work(siwx_tx_wq, &conn->rtr_grace,
				   SIWX_RTR_GRACE);
	siwx_cm_upcall(conn, id, IW_CM_EVENT_ESTABLISHED, 0, NULL);
	conn->established = true;
	mutex_unlock(&conn->mutex);
	return 0;

err:
	siwx_conn_release_sock(conn);
	mutex_unlock(&conn->mutex);
	id->provider_data = NULL;
	siwx_conn_put(conn);
	return rv;
}

int siwx_iw_reject(struct iw_cm_id *id, const void *pdata, u8 pdata_len)
{
	struct siwx_conn *conn = id->provider_data;
	struct siwx_mpa_rr rep;

	if (!conn || conn->replied)
		return -EINVAL;
	mutex_lock(&conn->mutex);
	conn->replied = true;
	siwx_mpa_make_reply(&conn->req, &conn->mpa, false, 0, 0, pdata,
			    pdata_len, &rep);
	siwx_cm_send_rr(conn, &rep);
	siwx_conn_release_sock(conn);
	mutex_unlock(&conn->mutex);
	id->provider_data = NULL;
	siwx_conn_put(conn);
	return 0;
}

/*
 * A blocking connect that outlives sk_sndtimeo returns -EINPROGRESS, a send
 * or read that outlives its timeout -EAGAIN. For iw_cm both mean that the
 * peer did not answer in time: -ETIMEDOUT, which rdma_cm reports as
 * RDMA_CM_EVENT_UNREACHABLE (siw reports its MPA timeout the same way).
 */
static int siwx_cm_timed_out(int rv)
{
	return rv == -EINPROGRESS || rv == -EAGAIN ? -ETIMEDOUT : rv;
}

/* A refused connection to a loopback address: the usual cause, named */
static void siwx_cm_loopback_hint(struct iw_cm_id *id, int rv)
{
	if (rv == -ECONNREFUSED && siwx_addr_is_loopback(&id->m_remote_addr))
		siwx_loopback_served(id, "refused by", &id->m_remote_addr);
}

/*
 * Initiator: connect, send the MPA Request, read and check the Reply
 * (RFC 5044 7.1). 0 when accepted; a rejecting Reply is left in *@rep
 * and *@reply points at it.
 */
static int siwx_cm_mpa_request(struct siwx_conn *conn,
			       struct siwx_mpa_rr *rep,
			       struct siwx_mpa_rr **reply)
{
	struct iw_cm_id *id = conn->id;
	enum siwx_mpa_verdict verdict;
	struct siwx_term err;
	int rv;

	siwx_cm_sock_setup(conn->sock);
	rv = siwx_kernel_connect(conn->sock, &id->m_remote_addr,
				 siwx_addr_len(&id->m_remote_addr), 0);
	if (rv)
		return rv;
	siwx_mpa_make_request(&conn->pol, conn->ulp_ird, conn->ulp_ord,
			      conn->ulp_pd, conn->ulp_pd_len, &conn->req);
	rv = siwx_cm_send_rr(conn, &conn->req);
	if (rv)
		return rv;
	conn->sock->sk->sk_rcvtimeo = SIWX_MPA_REPLY_TIMEOUT;
	rv = siwx_cm_recv_rr(conn, rep);
	if (rv) {
		pr_info_ratelimited("siwx: MPA Reply not read: %d\n", rv);
		return rv == -EINVAL || rv == -EAGAIN ? rv : -ECONNRESET;
	}
	verdict = siwx_mpa_check_reply(&conn->pol, &conn->req, rep,
				       &conn->mpa, &err);
	if (verdict == SIWX_MPA_REJECTED) {
		*reply = rep;
		return -ECONNREFUSED;
	}
	return verdict == SIWX_MPA_ACCEPTED ? 0 : -EINVAL;
}

static void siwx_cm_active_work(struct work_struct *work)
{
	struct siwx_conn *conn = container_of(work, struct siwx_conn,
					      cm_work);
	struct iw_cm_id *id = conn->id;
	struct siwx_mpa_rr rep, *reply = NULL;
	int rv;

	rv = siwx_cm_mpa_request(conn, &rep, &reply);
	if (rv)
		goto fail;
	mutex_lock(&conn->mutex);
	rv = siwx_conn_bind_qp(conn, conn->cm_qp);
	if (rv) {
		mutex_unlock(&conn->mutex);
		goto fail;
	}
	/* Peer-to-peer: our RTR is the first message (TX sends it first) */
	conn->rtr_send = conn->mpa.rtr != 0;
	siwx_conn_start(conn);
	if (conn->rtr_send)
		siwx_conn_kick_tx(conn);
	siwx_cm_upcall(conn, id, IW_CM_EVENT_CONNECT_REPLY, 0, &rep);
	conn->established = true;
	mutex_unlock(&conn->mutex);
	return;

fail:
	rv = siwx_cm_timed_out(rv);
	pr_info_ratelimited("siwx: %s: connect failed: %d\n",
			    dev_name(&id->device->dev), rv);
	siwx_cm_loopback_hint(id, rv);
	siwx_cm_upcall(conn, id, IW_CM_EVENT_CONNECT_REPLY, rv, reply);
	siwx_conn_release_sock(conn);
	id->provider_data = NULL;
	conn->id = NULL;
	id->rem_ref(id);
	siwx_conn_put(conn);
}

int siwx_iw_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	struct siwx_dev *dev = to_siwx_dev(id->device);
	struct ib_qp *ibqp = siwx_iw_get_qp(id->device, param->qpn);
	struct siwx_conn *conn;
	int rv;

	if (!ibqp)
		return -EINVAL;
	if (param->private_data_len >
	    SIWX_MPA_MAX_PD_LEN - SIWX_MPA_V2_PARAMS_LEN)
		return -EINVAL;
	conn = siwx_conn_new(dev);
	if (!conn)
		return -ENOMEM;
	conn->cm_qp = to_siwx_qp(ibqp);
	conn->pol.rtr_types = SIWX_MPA_RTR_WRITE | SIWX_MPA_RTR_SEND;
	conn->ulp_ird = min_t(u32, param->ird, SIWX_MAX_IRD);
	conn->ulp_ord = min_t(u32, param->ord, SIWX_MAX_ORD);
	conn->ulp_pd_len = param->private_data_len;
	if (param->private_data_len)
		memcpy(conn->ulp_pd, param->private_data,
		       param->private_data_len);

	rv = sock_create_kern(&init_net, id->m_remote_addr.ss_family,
			      SOCK_STREAM, IPPROTO_TCP, &conn->sock);
	if (rv)
		goto err;
	conn->sock->sk->sk_reuse = SK_CAN_REUSE;
	rv = siwx_sock_set_afonly(conn->sock, id);
	if (rv)
		goto err;
	rv = siwx_kernel_bind(conn->sock, &id->m_local_addr,
			      siwx_addr_len(&id->m_local_addr));
	if (rv)
		goto err;

	id->add_ref(id);
	conn->id = id;
	id->provider_data = conn;
	INIT_WORK(&conn->cm_work, siwx_cm_active_work);
	queue_work(siwx_cm_wq, &conn->cm_work);
	return 0;

err:
	siwx_conn_release_sock(conn);
	siwx_conn_put(conn);
	return rv;
}
