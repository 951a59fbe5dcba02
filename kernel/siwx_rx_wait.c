// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * A message that finds no receive (a Send, RFC 5040 5.3; Immediate Data,
 * RFC 7306 6) waits for one, up to recv_wait_ms, before RX gives up with
 * DDP's "no buffer available" Terminate (RFC 5041 7.2). InfiniBand
 * retries such a message (RNR NAK), and applications first tested on rxe
 * count on it; iWARP has no retry on the wire, but a receiver may take
 * its time over the byte stream: RX stops reading at the message (its
 * headers read, the rest left in the socket), TCP's flow control holds
 * the sender back, and nothing new goes on the wire. What follows the
 * message on the stream waits with it, in order.
 *
 * RX hears of the receive from the provider's receive doorbell, which
 * rq_doorbell asks for while a message waits (abi.h), or from the kernel
 * ULP's post_recv; in any case it looks at the RQ or SRQ again every few
 * milliseconds (an SRQ has no doorbell). Each look is siwx_rx.c's
 * rx_wait_work, which runs the stopped step again.
 */
#include <linux/moduleparam.h>

#include "siwx_rx_wait.h"

static unsigned int siwx_recv_wait_ms = 10000;
module_param_named(recv_wait_ms, siwx_recv_wait_ms, uint, 0644);
MODULE_PARM_DESC(recv_wait_ms,
		 "How long a message that finds no receive waits for one before the Terminate, in ms (0: none, the Terminate at once; default 10000)");

/* Looks at the ring grow from one jiffy to this far apart */
#define SIWX_RX_WAIT_STEP_MAX msecs_to_jiffies(16)
/* The longest wait: ten minutes */
#define SIWX_RX_WAIT_MS_MAX 600000u

/* Ask the provider for its receive doorbell (@why), or no longer (0) */
static void siwx_rx_wait_doorbell(struct siwx_conn *conn, u32 why)
{
	struct siwx_qp *qp = conn->qp;

	if (qp->srq)
		return;
	WRITE_ONCE(qp->sq_ctrl->rq_doorbell, why);
	/* rq_doorbell before the next look (pairs with post_recv's barrier) */
	smp_mb();
}

/*
 * RX found no receive for the message it stopped at (@at): true if the
 * message waits for one (RX reads no further until a look at the ring
 * finds it), false if not (recv_wait_ms 0). Socket lock held.
 */
bool siwx_rx_wait_begin(struct siwx_conn *conn, enum siwx_rx_wait_at at)
{
	unsigned int ms = min(READ_ONCE(siwx_recv_wait_ms),
			      SIWX_RX_WAIT_MS_MAX);

	if (!ms)
		return false;
	WRITE_ONCE(conn->rx_wait, at);
	conn->rx_wait_end = jiffies + msecs_to_jiffies(ms);
	conn->rx_wait_step = 1;
	siwx_rx_wait_doorbell(conn, SIWX_RQ_DB_WAIT);
	/* The first look comes after the barrier: a receive posted before it */
	queue_delayed_work(siwx_tx_wq, &conn->rx_wait_work, 0);
	return true;
}

/*
 * A look found no receive yet: true to look again later, false once
 * recv_wait_ms is over (the wait ends, RX sends the Terminate).
 */
bool siwx_rx_wait_on(struct siwx_conn *conn)
{
	long left = (long)(conn->rx_wait_end - jiffies);

	if (left <= 0) {
		siwx_rx_wait_end(conn);
		return false;
	}
	conn->rx_wait_step = min_t(unsigned long, conn->rx_wait_step * 2,
				   SIWX_RX_WAIT_STEP_MAX);
	queue_delayed_work(siwx_tx_wq, &conn->rx_wait_work,
			   min_t(unsigned long, conn->rx_wait_step, left));
	return true;
}

/* No message waits any more: a receive came, or RX gave up or ended */
void siwx_rx_wait_end(struct siwx_conn *conn)
{
	if (!conn->rx_wait)
		return;
	WRITE_ONCE(conn->rx_wait, SIWX_RX_WAIT_NONE);
	siwx_rx_wait_doorbell(conn, 0);
}

/*
 * A receive was posted: a waiting message looks now. The caller holds
 * qp->sq_lock with the data path active, so the work is not re-armed
 * once siwx_rx_end() has cancelled it.
 */
void siwx_rx_wait_wake(struct siwx_conn *conn)
{
	if (READ_ONCE(conn->rx_wait))
		mod_delayed_work(siwx_tx_wq, &conn->rx_wait_work, 0);
}
