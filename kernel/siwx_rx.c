// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The RX engine. sk_data_ready runs tcp_read_sock (socket lock held, in
 * softirq or process context), or for the rest of a long message queues
 * rx_work, which does (rx_batch, below); the actor walks each skb's
 * head, pages and frag_list and feeds them to the core's stream parser
 * (MPA, DDP and RDMAP headers, RFC 5044, 5041, 5040, 7306), then acts on its
 * events: SEGMENT finds the payload's target and PAYLOAD places it
 * (siwx_rx_place.c), SEGMENT_END completes the message
 * (siwx_rx_msg.c). Any error becomes the core's Terminate, sent by TX
 * (siwx_rx_term.c). A message that finds no receive stops the reading
 * there until one is posted (siwx_rx_wait.c).
 */
#include <linux/skbuff.h>
#include <net/tcp.h>

#include "siwx_rx.h"
#include "siwx_rx_msg.h"
#include "siwx_rx_place.h"
#include "siwx_rx_rqe.h"
#include "siwx_rx_term.h"
#include "siwx_rx_wait.h"
#include "siwx_stag.h"

/*
 * Feed @n octets at @p to the parser; returns how many it took. Inline in
 * siwx_rx_skb(), for each of the two chunks most segments arrive in (the
 * part virtio-net copied into an skb's head and the rest in its page): a
 * call per chunk cost a long message's FPDU more than its loop's turns.
 */
static __always_inline size_t siwx_rx_chunk(struct siwx_conn *conn,
					    const u8 *p, size_t n,
					    struct siwx_rx_event *ev)
{
	size_t done = 0;

	while (done < n && !conn->rx_dead) {
		done += siwx_rx_feed_fast(&conn->rx, p + done, n - done, ev);
		switch (ev->type) {
		case SIWX_RX_NEED_MORE:
			return done;
		case SIWX_RX_SEGMENT:
			siwx_rx_segment(conn);
			break;
		case SIWX_RX_PAYLOAD:
			siwx_rx_payload(conn, ev);
			break;
		case SIWX_RX_SEGMENT_END:
			siwx_rx_segment_end(conn);
			break;
		case SIWX_RX_ERROR:
			/*
			 * seg.op is set only once the header passed its
			 * checks (else it is the last segment's); the opcode
			 * is the refused segment's own.
			 */
			siwx_rx_terminate(conn, conn->rx.term, true,
					  !conn->rx.seg.ddp.tagged &&
					  conn->rx.seg.ddp.opcode ==
					  SIWX_OP_READ_REQ);
			return done;
		}
		/* No receive for it: the rest stays in the socket */
		if (unlikely(conn->rx_wait))
			return done;
	}
	return done;
}

/*
 * Feed @len octets of @skb from @off to the parser where they lie: the
 * linear head, each page of each frag (mapped for the moment), then the
 * skbs on its frag_list. Returns the octets taken: fewer than @len only
 * when RX stopped (a dead stream, or a message waiting for a receive).
 * What skb_seq_read() does, without its state and a call per chunk.
 */
static size_t siwx_rx_skb(struct siwx_conn *conn, const struct sk_buff *skb,
			  unsigned int off, size_t len)
{
	unsigned int head = skb_headlen(skb), p_off, p_len, copied;
	struct siwx_rx_event ev;
	struct sk_buff *frag_iter;
	size_t done = 0, n, took;
	struct page *p;
	const u8 *va;
	int i;

	if (off < head) {
		n = min_t(size_t, len, head - off);
		done = siwx_rx_chunk(conn, skb->data + off, n, &ev);
		if (done < n)
			return done;
		off = 0;
	} else {
		off -= head;
	}
	for (i = 0; i < skb_shinfo(skb)->nr_frags && done < len; i++) {
		const skb_frag_t *f = &skb_shinfo(skb)->frags[i];

		if (off >= skb_frag_size(f)) {
			off -= skb_frag_size(f);
			continue;
		}
		n = min_t(size_t, len - done, skb_frag_size(f) - off);
		skb_frag_foreach_page(f, skb_frag_off(f) + off, n, p, p_off,
				      p_len, copied) {
			va = kmap_local_page(p);
			took = siwx_rx_chunk(conn, va + p_off, p_len, &ev);
			kunmap_local(va);
			done += took;
			if (took < p_len)
				return done;
		}
		off = 0;
	}
	skb_walk_frags(skb, frag_iter) {
		if (done == len)
			break;
		if (off >= frag_iter->len) {
			off -= frag_iter->len;
			continue;
		}
		n = min_t(size_t, len - done, frag_iter->len - off);
		took = siwx_rx_skb(conn, frag_iter, off, n);
		done += took;
		if (took < n)
			return done;
		off = 0;
	}
	return done;
}

static int siwx_rx_actor(read_descriptor_t *desc, struct sk_buff *skb,
			 unsigned int off, size_t len)
{
	struct siwx_conn *conn = desc->arg.data;
	size_t done;

	if (conn->rx_dead)
		return len;
	/* tcp_read_sock() stops at 0, leaving the rest for later */
	if (unlikely(conn->rx_wait))
		return 0;
	done = siwx_rx_skb(conn, skb, off, len);
	if (unlikely(conn->rx_wait) && !conn->rx_dead)
		return done;
	return len;
}

/*
 * The rest of a long message is read in work-item batches (rx_batch):
 * once SIWX_RX_BATCH_AFTER octets of a message have arrived, data_ready
 * queues rx_work instead of reading. Each read that moves TCP's window
 * by more than a segment sends an ACK (tcp_cleanup_rbuf()), so reading
 * every burst as it lands costs the sender, whose CPU is often the
 * limit, an ACK per two segments; the work item reads what gathered
 * meanwhile at once. Messages up to that size, and the start of every
 * message, are read in data_ready, with the softirq's latency; a long
 * message completes once the batch with its last FPDU is read.
 */
#define SIWX_RX_BATCH_AFTER 8192

static bool siwx_rx_batch = true;
module_param_named(rx_batch, siwx_rx_batch, bool, 0644);
MODULE_PARM_DESC(rx_batch, "Read long messages in work-item batches (default: on)");

/* Socket lock held, softirqs off (as in data_ready) */
static void siwx_rx_read_conn(struct sock *sk, struct siwx_conn *conn)
{
	read_descriptor_t desc = { .count = 1 };

	desc.arg.data = conn;
	tcp_read_sock(sk, &desc, siwx_rx_actor);
}

/*
 * Runs with the socket's lock (softirq, or process context in
 * release_sock()), so no read is in progress and conn->rx holds still.
 */
void siwx_rx_data_ready(struct sock *sk)
{
	struct siwx_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = sk->sk_user_data;
	if (conn) {
		if (READ_ONCE(siwx_rx_batch) && !conn->rx_dead &&
		    siwx_rx_message_octets(&conn->rx) >= SIWX_RX_BATCH_AFTER)
			queue_work(siwx_tx_wq, &conn->rx_work);
		else
			siwx_rx_read_conn(sk, conn);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Process context, while the data path is ours: run @first (if any) and,
 * unless it says no, read what TCP holds.
 */
static void siwx_rx_run(struct siwx_conn *conn,
			bool (*first)(struct siwx_conn *conn))
{
	struct sock *sk = conn->sock->sk;

	lock_sock(sk);
	read_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_user_data == conn && (!first || first(conn)))
		siwx_rx_read_conn(sk, conn);
	read_unlock_bh(&sk->sk_callback_lock);
	release_sock(sk);
}

/* At the data path's start (what arrived before it), and as rx_work */
void siwx_rx_kick(struct siwx_conn *conn)
{
	siwx_rx_run(conn, NULL);
}

/* siwx_dp.c's close work cancels it, and reads what it left if graceful */
void siwx_rx_work(struct work_struct *work)
{
	siwx_rx_kick(container_of(work, struct siwx_conn, rx_work));
}

/*
 * Socket lock held: run again the step that stopped at the missing
 * receive, which takes it if it is there now. True when RX may read on.
 */
static bool siwx_rx_wait_retry(struct siwx_conn *conn)
{
	switch (conn->rx_wait) {
	case SIWX_RX_WAIT_SEGMENT:
		siwx_rx_segment(conn);
		break;
	case SIWX_RX_WAIT_END:
		siwx_rx_segment_end(conn);
		break;
	default:
		return false;
	}
	return !conn->rx_wait && !conn->rx_dead;
}

/*
 * A message waits for a receive (siwx_rx_wait.c): look for it, and once
 * it is there read on. siwx_rx_end() cancels it.
 */
void siwx_rx_wait_work(struct work_struct *work)
{
	siwx_rx_run(container_of(to_delayed_work(work), struct siwx_conn,
				 rx_wait_work), siwx_rx_wait_retry);
}

/*
 * A graceful close, the socket's callbacks no longer ours and rx_work
 * cancelled (siwx_dp.c): what data_ready left to rx_work came
 * before the peer's FIN, and its messages are owed to the application
 * as much as those read at once.
 */
void siwx_rx_drain(struct siwx_conn *conn)
{
	struct sock *sk = conn->sock->sk;

	lock_sock(sk);
	local_bh_disable();
	siwx_rx_read_conn(sk, conn);
	local_bh_enable();
	release_sock(sk);
}

/*
 * The data path has stopped (no receive doorbell wakes RX any more): a
 * wait for a receive ends, the receive buffer held for a Send is
 * flushed, the MR of a segment in progress let go.
 */
void siwx_rx_end(struct siwx_conn *conn)
{
	cancel_delayed_work_sync(&conn->rx_wait_work);
	siwx_rx_wait_end(conn);
	siwx_rx_drop_rqe(conn, SIWX_WC_WR_FLUSH_ERR);
	if (conn->rx_mr) {
		siwx_mr_put(conn->rx_mr);
		conn->rx_mr = NULL;
	}
}
