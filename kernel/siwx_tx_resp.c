// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * What the TX engine sends that no WR of ours asked for: the Read and
 * Atomic Responses the peer is owed, in request order (RFC 5040 5.2.2,
 * RFC 7306 5.2.2), the Terminate (RFC 5040 5.4) and the peer-to-peer RTR
 * (RFC 6581).
 */
#include "siwx_rdq.h"
#include "siwx_stag.h"
#include "siwx_tx_fpdu.h"
#include "siwx_tx_resp.h"
#include "siwx_zc.h"

/*
 * The source of a Read Response, checked again: the MR may have been
 * deregistered since the request was accepted. If so, the Terminate
 * goes instead.
 */
static struct siwx_mr *siwx_tx_read_source(struct siwx_conn *conn,
					   const struct siwx_read_req *r)
{
	enum siwx_access_fault fault;
	struct siwx_term cause;
	struct siwx_mr *mr;

	mr = siwx_mr_get_checked(conn->qp, r->src_stag, IB_ACCESS_REMOTE_READ,
				 r->src_to, r->size, &fault);
	if (!mr) {
		cause = siwx_term_for_access(SIWX_ACCESS_READ_SOURCE, fault);
		siwx_term_hdr_build(&conn->term, cause, 0, NULL, 0, NULL);
		siwx_set_term_pending(conn);
	}
	return mr;
}

static int siwx_tx_read_resp(struct siwx_conn *conn,
			     const struct siwx_read_req *r)
{
	struct siwx_ddp_hdr h = {
		.opcode = SIWX_OP_READ_RESP,
		.tagged = true,
		.stag = r->sink_stag,
		.to = r->sink_to,
	};
	struct siwx_tx_src *src = &conn->src;
	struct siwx_mr *mr = NULL;
	int rv;

	src->n = 0;
	src->inl = NULL;
	if (r->size) {
		mr = siwx_tx_read_source(conn, r);
		if (!mr)
			return 0;
		src->el[0].mr = mr;
		src->el[0].to = r->src_to;
		src->el[0].len = r->size;
		src->n = 1;
	}
	/*
	 * Copied by TCP unless zc_min asks otherwise: an FPDU by reference
	 * is three skb fragments (header, payload, trailer), so TCP's skbs
	 * stay small, and 1 MiB Reads ran at half to two thirds of the
	 * speed of copied ones (docs/performance.md). By reference, it owes
	 * no completion, and the page references TCP takes keep the pages
	 * for as long as it needs them, also past the MR's deregistration.
	 */
	conn->tx_payload_ref = mr && siwx_zc_wanted(conn, src, r->size);
	rv = siwx_tx_message(conn, &h, NULL, 0, src, r->size);
	conn->tx_payload_ref = false;
	siwx_tx_src_put(src);
	return rv;
}

static int siwx_tx_atomic_resp(struct siwx_conn *conn, u32 req_id, u64 orig)
{
	struct siwx_atomic_resp resp = { .req_id = req_id, .orig = orig };
	struct siwx_ddp_hdr h = {
		.opcode = SIWX_OP_ATOMIC_RESP,
		.qn = SIWX_QN_ATOMIC_RESP,
		.msn = conn->tx_msn[SIWX_QN_ATOMIC_RESP]++,
	};
	u32 len = siwx_atomic_resp_encode(&resp, conn->tx_rdmap);

	return siwx_tx_message(conn, &h, conn->tx_rdmap, len, NULL, 0);
}

/* The responses that may go, oldest first, until a Terminate is due */
int siwx_tx_responses(struct siwx_conn *conn)
{
	struct siwx_rdq_entry ent;
	u64 orig;
	int rv;

	for (;;) {
		if (siwx_term_is_pending(conn))
			return 0;
		/* A long run of responses waits in TCP only once its send
		 * buffer is full: until then let other tasks have the CPU
		 */
		cond_resched();
		if (!siwx_irq_take_ready(conn, &ent, &orig))
			return 0;
		if (ent.kind == SIWX_RDQ_READ)
			rv = siwx_tx_read_resp(conn, &ent.u.read);
		else
			rv = siwx_tx_atomic_resp(conn, ent.u.atomic.req_id,
						 orig);
		if (rv)
			return rv;
	}
}

/* The Terminate whose header RX built (conn->term) */
void siwx_tx_terminate(struct siwx_conn *conn)
{
	struct siwx_ddp_hdr h = {
		.opcode = SIWX_OP_TERMINATE,
		.qn = SIWX_QN_TERM,
		.msn = conn->tx_msn[SIWX_QN_TERM]++,
	};
	u32 len = siwx_term_hdr_encode(&conn->term, conn->tx_rdmap);

	siwx_tx_message(conn, &h, conn->tx_rdmap, len, NULL, 0);
}

/* Peer-to-peer Initiator: the agreed RTR message (siwx_mpa_rtr_hdr). */
int siwx_tx_rtr(struct siwx_conn *conn)
{
	struct siwx_ddp_hdr h;

	if (!siwx_mpa_rtr_hdr(conn->mpa.rtr, conn->tx_msn[SIWX_QN_SEND], &h))
		return -EPROTO;
	if (!h.tagged)
		conn->tx_msn[SIWX_QN_SEND]++;
	return siwx_tx_message(conn, &h, NULL, 0, NULL, 0);
}
