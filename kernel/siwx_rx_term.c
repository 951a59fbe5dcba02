// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * An error RX finds ends the stream (RFC 5040 7.2): RX stops, and TX
 * sends the Terminate (5.4, 4.8) whose header is built here from the
 * core's cause and the offending segment's headers.
 */
#include "siwx_comp.h"
#include "siwx_rx_term.h"

/*
 * Either end of a Terminate learns of it through the QP's affiliated
 * asynchronous error, named after what the Terminate says went wrong.
 */
void siwx_term_event(struct siwx_qp *qp, struct siwx_term cause)
{
	static const enum ib_event_type type[] = {
		[SIWX_TERM_REMOTE_ACCESS] = IB_EVENT_QP_ACCESS_ERR,
		[SIWX_TERM_REMOTE_INVALID] = IB_EVENT_QP_REQ_ERR,
		[SIWX_TERM_REMOTE_OP] = IB_EVENT_QP_FATAL,
	};

	siwx_qp_event(qp, type[siwx_term_classify(cause)]);
}

/*
 * Stop receiving and have TX send a Terminate for @cause, echoing the
 * segment's DDP and RDMAP headers (@echo) and a Read Request's header
 * (@read_req).
 */
void siwx_rx_terminate(struct siwx_conn *conn, struct siwx_term cause,
		       bool echo, bool read_req)
{
	const struct siwx_rx_seg *seg = &conn->rx.seg;
	u8 rh[SIWX_READ_REQ_LEN];

	if (conn->rx_dead)
		return;
	conn->rx_dead = true;
	if (read_req)
		siwx_read_req_encode(&seg->u.read, rh);
	siwx_term_hdr_build(&conn->term, cause, seg->ulpdu_len,
			    echo ? seg->raw : NULL, seg->ddp_hdr_len,
			    read_req ? rh : NULL);
	siwx_set_term_pending(conn);
	siwx_conn_kick_tx(conn);
	siwx_term_event(conn->qp, cause);
}

/* An access to memory failed (@kind, @fault): its Terminate */
void siwx_rx_fault(struct siwx_conn *conn, enum siwx_access_kind kind,
		   enum siwx_access_fault fault, bool read_req)
{
	siwx_rx_terminate(conn, siwx_term_for_access(kind, fault), true,
			  read_req);
}
