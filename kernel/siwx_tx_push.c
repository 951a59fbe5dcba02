// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The TX engine's way to the socket: FPDUs gather as bvecs in a batch
 * (struct siwx_tx_vec), which goes to TCP copied, or by reference: the
 * stage's pages (siwx_tx_fpdu.c) and, with conn->tx_payload_ref, the MR's
 * pages too (zero-copy WRs, conn->tx_zc, siwx_zc.c; Read Responses).
 *
 * Sends block (the work item sleeps while the socket is full); closing
 * shuts the socket down, which ends any send in progress.
 */
#include <linux/mm.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>

#include "siwx_compat.h"
#include "siwx_tx_pool.h"
#include "siwx_tx_push.h"
#include "siwx_zc.h"

/* @nb bvecs of @len octets to TCP: copied, or with @by_ref by reference */
static int siwx_tx_push(struct siwx_conn *conn, u32 nb, size_t len,
			int flags, bool by_ref)
{
	struct msghdr msg = { .msg_flags = flags | MSG_NOSIGNAL };
	int rv;

	conn->tx_corked = flags & MSG_MORE;
	/*
	 * In a system call a blocking send would end early when a signal
	 * is pending (mid-FPDU); siwx_tx_inline_ok() made sure the socket
	 * has room, so not sleeping in TCP is cheap, and in the rare case
	 * it is full after all we wait here, in steps, until closing.
	 */
	if (conn->tx_in_syscall)
		msg.msg_flags |= MSG_DONTWAIT;
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, conn->bvec, nb, len);
	while (msg_data_left(&msg)) {
		if (READ_ONCE(conn->tx_stop))
			return -ECONNRESET;
		if (!by_ref)
			rv = sock_sendmsg(conn->sock, &msg);
		else if (conn->tx_zc)
			rv = siwx_zc_sendmsg(conn->sock, &msg, conn->tx_zc);
		else
			rv = siwx_compat_send_pages(conn->sock, &msg);
		if (rv == -EAGAIN && conn->tx_in_syscall) {
			schedule_timeout_uninterruptible(1);
			continue;
		}
		if (rv <= 0)
			return rv ? rv : -EPIPE;
	}
	return 0;
}

/* Forget what @v holds and let go of the full stage pages it named. */
void siwx_tx_drop(struct siwx_conn *conn, struct siwx_tx_vec *v)
{
	v->nb = 0;
	v->len = 0;
	while (conn->tx_nretired)
		siwx_tx_pool_put(conn, conn->tx_retired[--conn->tx_nretired]);
}

/*
 * Push what @v holds, then let go of the stage pages its bvecs named:
 * TCP holds its own references to those it took.
 */
int siwx_tx_flush(struct siwx_conn *conn, struct siwx_tx_vec *v, int flags)
{
	int rv = 0;

	if (v->nb)
		rv = siwx_tx_push(conn, v->nb, v->len, flags, v->by_ref);
	siwx_tx_drop(conn, v);
	return rv;
}

/*
 * Push what @v holds once its bvecs are nearly used up, keeping room for
 * the pieces an FPDU's trailer may still need.
 */
int siwx_tx_push_if_full(struct siwx_conn *conn, struct siwx_tx_vec *v)
{
	if (v->nb < SIWX_TX_BVECS - 4)
		return 0;
	return siwx_tx_flush(conn, v, MSG_MORE);
}

/* A kernel buffer (kmalloc or vmalloc memory), page by page. */
void siwx_tx_add_kbuf(struct siwx_conn *conn, struct siwx_tx_vec *v,
		      const u8 *buf, u32 len)
{
	while (len) {
		u32 off = offset_in_page(buf);
		u32 n = min_t(u32, len, PAGE_SIZE - off);
		struct page *page = is_vmalloc_addr(buf) ?
			vmalloc_to_page(buf) : virt_to_page(buf);

		siwx_tx_add_page(conn, v, page, off, n);
		buf += n;
		len -= n;
	}
}
