/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A connection's outstanding Read and Atomic Requests (siwx_rdq.c): the
 * ORQ of those we sent, the IRQ of those we owe a response.
 */
#ifndef SIWX_RDQ_H
#define SIWX_RDQ_H

#include "siwx_conn.h"

int siwx_orq_push(struct siwx_conn *conn, u32 pos,
		  const struct siwx_read_req *read,
		  const struct siwx_atomic_req *atomic,
		  const struct siwx_sge *sink);
bool siwx_orq_read_response(struct siwx_conn *conn,
			    const struct siwx_ddp_hdr *ddp, u32 len,
			    bool *complete, struct siwx_term *err);
bool siwx_orq_atomic_response(struct siwx_conn *conn,
			      const struct siwx_atomic_resp *r, u64 *cookie,
			      struct siwx_sge *sink, struct siwx_term *err);
void siwx_orq_pop(struct siwx_conn *conn);
bool siwx_orq_pop_oldest(struct siwx_conn *conn, u64 *cookie);

int siwx_irq_accept(struct siwx_conn *conn, const struct siwx_ddp_hdr *ddp,
		    const struct siwx_read_req *read,
		    const struct siwx_atomic_req *atomic,
		    struct siwx_term *err);
void siwx_irq_set_ready(struct siwx_conn *conn, int idx, u64 orig);

/*
 * Inline: the TX engine asks these on every turn (a call costs a few %).
 * What needs no lock is answered without one: most WRs take no ORQ slot,
 * and most turns find no response ready. irq_nready is read without the
 * lock: RX sets a response ready, then wakes TX (siwx_rx_msg.c), so a
 * turn that missed it is followed by one that sees it.
 */

/*
 * Whether the next WR must wait: it needs an ORQ slot (@takes_slot) and
 * the ORD is used up, or it waits for every outstanding Read and atomic
 * (@waits_empty: a fence, an invalidation) and some are.
 */
static inline bool siwx_orq_stalls(struct siwx_conn *conn, bool takes_slot,
				   bool waits_empty)
{
	bool stall;

	if (!takes_slot && !waits_empty)
		return false;
	spin_lock_bh(&conn->rdq_lock);
	stall = (takes_slot && siwx_rdq_full(&conn->orq)) ||
		(waits_empty && conn->orq.count);
	spin_unlock_bh(&conn->rdq_lock);
	return stall;
}

/* The oldest request's response may go */
static inline bool siwx_irq_ready(struct siwx_conn *conn)
{
	struct siwx_rdq_entry *e;
	bool ready;

	if (!READ_ONCE(conn->irq_nready))
		return false;
	spin_lock_bh(&conn->rdq_lock);
	e = siwx_rdq_head(&conn->irq);
	ready = e && conn->irq_ready[e - conn->irq.ent];
	spin_unlock_bh(&conn->rdq_lock);
	return ready;
}

/*
 * Take the oldest request if its response may go. Its IRD slot is free
 * before the response goes out: the requester may issue its next request
 * as soon as the response arrives, possibly before TX runs again.
 */
static inline bool siwx_irq_take_ready(struct siwx_conn *conn,
				       struct siwx_rdq_entry *ent, u64 *orig)
{
	struct siwx_rdq_entry *e;
	u32 idx;

	if (!READ_ONCE(conn->irq_nready))
		return false;
	spin_lock_bh(&conn->rdq_lock);
	e = siwx_rdq_head(&conn->irq);
	if (!e || !conn->irq_ready[e - conn->irq.ent]) {
		spin_unlock_bh(&conn->rdq_lock);
		return false;
	}
	idx = e - conn->irq.ent;
	*ent = *e;
	*orig = conn->irq_orig[idx];
	conn->irq_ready[idx] = false;
	WRITE_ONCE(conn->irq_nready, conn->irq_nready - 1);
	siwx_rdq_pop(&conn->irq);
	spin_unlock_bh(&conn->rdq_lock);
	return true;
}

#endif /* SIWX_RDQ_H */
