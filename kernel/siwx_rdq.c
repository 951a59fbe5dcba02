// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * A connection's outstanding Read and Atomic Requests (RFC 5040 5.2 and
 * 5.5, RFC 7306 5.2), shared by TX and RX under rdq_lock: the ORQ holds
 * those we sent, within the ORD, until their responses complete them; the
 * IRQ those the peer sent, within our IRD, until TX has sent their
 * responses, in request order. The queues' rules are the protocol core's
 * (rdq.h).
 */
#include "siwx_rdq.h"

/*
 * A Read (@read) or an atomic (@atomic, whose result goes to @sink) of
 * the SQE at @pos is about to go out. -EIO if the ORD is used up.
 */
int siwx_orq_push(struct siwx_conn *conn, u32 pos,
		  const struct siwx_read_req *read,
		  const struct siwx_atomic_req *atomic,
		  const struct siwx_sge *sink)
{
	struct siwx_rdq_entry *e;

	spin_lock_bh(&conn->rdq_lock);
	e = siwx_rdq_push(&conn->orq, read ? SIWX_RDQ_READ : SIWX_RDQ_ATOMIC,
			  pos);
	if (e && read) {
		e->u.read = *read;
	} else if (e) {
		e->u.atomic = *atomic;
		conn->orq_sink[e - conn->orq.ent] = *sink;
	}
	spin_unlock_bh(&conn->rdq_lock);
	return e ? 0 : -EIO;
}

/*
 * A Read Response segment of @len octets: the Read it answers must be the
 * oldest outstanding one. Its SQ position and size go to conn->rx_resp_*,
 * and *@complete says whether this segment ends it.
 */
bool siwx_orq_read_response(struct siwx_conn *conn,
			    const struct siwx_ddp_hdr *ddp, u32 len,
			    bool *complete, struct siwx_term *err)
{
	struct siwx_rdq_entry *e;

	spin_lock_bh(&conn->rdq_lock);
	e = siwx_rdq_read_response(&conn->orq, ddp, len, complete, err);
	if (e) {
		conn->rx_resp_cookie = e->cookie;
		conn->rx_resp_len = e->u.read.size;
	}
	spin_unlock_bh(&conn->rdq_lock);
	return e;
}

/*
 * An Atomic Response: the oldest outstanding request must be the atomic
 * it answers. It leaves the ORQ; its SQ position and result SGE are
 * returned.
 */
bool siwx_orq_atomic_response(struct siwx_conn *conn,
			      const struct siwx_atomic_resp *r, u64 *cookie,
			      struct siwx_sge *sink, struct siwx_term *err)
{
	struct siwx_rdq_entry *e;

	spin_lock_bh(&conn->rdq_lock);
	e = siwx_rdq_atomic_response(&conn->orq, r, err);
	if (e) {
		*cookie = e->cookie;
		*sink = conn->orq_sink[e - conn->orq.ent];
		siwx_rdq_pop(&conn->orq);
	}
	spin_unlock_bh(&conn->rdq_lock);
	return e;
}

/* The oldest outstanding request is answered */
void siwx_orq_pop(struct siwx_conn *conn)
{
	spin_lock_bh(&conn->rdq_lock);
	siwx_rdq_pop(&conn->orq);
	spin_unlock_bh(&conn->rdq_lock);
}

/* The oldest outstanding request leaves, if any: its SQ position */
bool siwx_orq_pop_oldest(struct siwx_conn *conn, u64 *cookie)
{
	struct siwx_rdq_entry *e;

	spin_lock_bh(&conn->rdq_lock);
	e = siwx_rdq_head(&conn->orq);
	if (e) {
		*cookie = e->cookie;
		siwx_rdq_pop(&conn->orq);
	}
	spin_unlock_bh(&conn->rdq_lock);
	return e;
}

/*
 * Queue an inbound Read (@read) or Atomic (@atomic) Request; returns its
 * IRQ index, or -1 with the Terminate's cause in @err.
 */
int siwx_irq_accept(struct siwx_conn *conn, const struct siwx_ddp_hdr *ddp,
		    const struct siwx_read_req *read,
		    const struct siwx_atomic_req *atomic,
		    struct siwx_term *err)
{
	bool ok;
	int idx;

	spin_lock_bh(&conn->rdq_lock);
	ok = siwx_rdq_accept_request(&conn->irq, ddp, read, atomic, err);
	idx = (conn->irq.head + conn->irq.count - 1) % SIWX_RDQ_MAX;
	spin_unlock_bh(&conn->rdq_lock);
	return ok ? idx : -1;
}

/* The response to the request at @idx may go (an atomic's: @orig) */
void siwx_irq_set_ready(struct siwx_conn *conn, int idx, u64 orig)
{
	spin_lock_bh(&conn->rdq_lock);
	conn->irq_orig[idx] = orig;
	conn->irq_ready[idx] = true;
	WRITE_ONCE(conn->irq_nready, conn->irq_nready + 1);
	spin_unlock_bh(&conn->rdq_lock);
}
