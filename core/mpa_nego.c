// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* MPA connection setup decisions (RFC 5044 7.1, RFC 6581). */
#include <siwx/proto/mpa_nego.h>
#include <siwx/proto/rdmap.h>

static u16 min_u16(u16 a, u16 b)
{
	return a < b ? a : b;
}

static struct siwx_term llp_err(u8 code)
{
	return siwx_term_make(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA, code);
}

/* Our preference among the RTR types in @offer. */
static u8 pick_rtr(u8 offer)
{
	static const u8 order[] = {
		SIWX_MPA_RTR_WRITE, SIWX_MPA_RTR_READ, SIWX_MPA_RTR_SEND
	};
	size_t i;

	for (i = 0; i < sizeof(order); i++)
		if (offer & order[i])
			return order[i];
	return 0;
}

void siwx_mpa_make_request(const struct siwx_mpa_policy *pol, u16 ird,
			   u16 ord, const u8 *pd, u16 pd_len,
			   struct siwx_mpa_rr *req)
{
	memset(req, 0, sizeof(*req));
	req->crc = pol->crc;
	req->rev = pol->rev == 1 ? 1 : 2;
	req->pd = pd;
	req->pd_len = pd_len;
	/* Kept for siwx_mpa_check_reply(); only revision 2 sends them. */
	req->ird = min_u16(ird, pol->max_ird);
	req->ord = min_u16(ord, pol->max_ord);
	if (req->rev < 2)
		return;
	req->enhanced = true;
	if (pol->p2p) {
		req->p2p = true;
		req->rtr = pol->rtr_types;
		/* A Read RTR needs one outbound Read. */
		if ((req->rtr & SIWX_MPA_RTR_READ) && !req->ord)
			req->ord = 1;
	}
}

bool siwx_mpa_check_request(const struct siwx_mpa_policy *pol,
			    const struct siwx_mpa_rr *req,
			    struct siwx_mpa_conn *conn, struct siwx_term *err)
{
	memset(conn, 0, sizeof(*conn));
	if (req->reply || req->markers) {
		*err = llp_err(SIWX_LLP_INVALID_RR);
		return false;
	}
	conn->crc = req->crc || pol->crc;
	conn->rev = req->rev;
	if (!req->enhanced) {
		/* Revision 1: IRD/ORD are settled by the ULPs themselves. */
		conn->ird = pol->max_ird;
		conn->ord = pol->max_ord;
		return true;
	}
	/* The Initiator's IRD bounds our ORD and vice versa. */
	conn->ord = min_u16(req->ird, pol->max_ord);
	conn->ird = min_u16(req->ord, pol->max_ird);
	if (req->p2p) {
		conn->rtr = pick_rtr(req->rtr & pol->rtr_types);
		if (!conn->rtr) {
			*err = llp_err(SIWX_LLP_NO_MATCHING_RTR);
			return false;
		}
	}
	return true;
}

void siwx_mpa_make_reply(const struct siwx_mpa_rr *req,
			 struct siwx_mpa_conn *conn, bool accept, u16 ird,
			 u16 ord, const u8 *pd, u16 pd_len,
			 struct siwx_mpa_rr *rep)
{
	memset(rep, 0, sizeof(*rep));
	rep->reply = true;
	rep->rev = req->rev;
	rep->crc = conn->crc;
	rep->reject = !accept;
	rep->pd = pd;
	rep->pd_len = pd_len;
	if (accept) {
		/*
		 * IRD is what we serve: never less than the proposal, which
		 * already covers the Initiator's ORD (as upstream siw does).
		 * ORD must stay within the Initiator's IRD.
		 */
		if (ird > conn->ird)
			conn->ird = ird;
		conn->ord = min_u16(ord, conn->ord);
	}
	if (!req->enhanced)
		return;
	rep->enhanced = true;
	rep->ird = conn->ird;
	rep->ord = conn->ord;
	if (req->p2p) {
		rep->p2p = true;
		rep->rtr = conn->rtr;
	}
}

enum siwx_mpa_verdict siwx_mpa_check_reply(const struct siwx_mpa_policy *pol,
					   const struct siwx_mpa_rr *req,
					   const struct siwx_mpa_rr *rep,
					   struct siwx_mpa_conn *conn,
					   struct siwx_term *err)
{
	memset(conn, 0, sizeof(*conn));
	*err = llp_err(SIWX_LLP_INVALID_RR);
	if (!rep->reply || rep->markers || (req->crc && !rep->crc))
		return SIWX_MPA_INVALID;
	if (rep->reject)
		return SIWX_MPA_REJECTED;
	conn->crc = rep->crc;
	conn->rev = rep->rev;
	conn->ird = req->ird;
	conn->ord = req->ord;
	if (!req->enhanced)
		return SIWX_MPA_ACCEPTED;
	/* RFC 6581: an enhanced Request gets an enhanced Reply. */
	if (rep->rev < 2 || !rep->enhanced)
		return SIWX_MPA_INVALID;
	/*
	 * The Responder's ORD should not exceed our IRD; serve it anyway if
	 * we can (relaxed negotiation), else it is RFC 6581's "Insufficient
	 * IRD". Our ORD is cut to the Responder's IRD.
	 */
	if (rep->ord > conn->ird) {
		if (rep->ord > pol->max_ird) {
			*err = llp_err(SIWX_LLP_INSUFFICIENT_IRD);
			return SIWX_MPA_INVALID;
		}
		conn->ird = rep->ord;
	}
	conn->ord = min_u16(conn->ord, rep->ird);
	if (req->p2p) {
		if (!rep->p2p || !(rep->rtr & req->rtr) ||
		    (rep->rtr & (rep->rtr - 1))) {
			*err = llp_err(SIWX_LLP_NO_MATCHING_RTR);
			return SIWX_MPA_INVALID;
		}
		conn->rtr = rep->rtr;
	}
	return SIWX_MPA_ACCEPTED;
}

bool siwx_mpa_rtr_hdr(u8 rtr, u32 send_msn, struct siwx_ddp_hdr *h)
{
	struct siwx_ddp_hdr z = { .last = true };

	*h = z;
	switch (rtr) {
	case SIWX_MPA_RTR_WRITE:
		h->opcode = SIWX_OP_WRITE;
		h->tagged = true;
		return true;
	case SIWX_MPA_RTR_SEND:
		h->opcode = SIWX_OP_SEND;
		h->qn = SIWX_QN_SEND;
		h->msn = send_msn;
		return true;
	default:
		return false;
	}
}

enum siwx_rtr_verdict siwx_mpa_rtr_check(u8 rtr, const struct siwx_ddp_hdr *h,
					 u32 payload_len,
					 struct siwx_term *err)
{
	bool zero = h->last && !payload_len && (h->tagged || !h->mo);

	/* No RTR agreed: any first FPDU releases the Responder (RFC 5044) */
	if (!rtr)
		return SIWX_RTR_SERVE;
	if (rtr == SIWX_MPA_RTR_WRITE && h->opcode == SIWX_OP_WRITE && zero)
		return SIWX_RTR_DISCARD;
	if (rtr == SIWX_MPA_RTR_SEND && h->opcode == SIWX_OP_SEND && zero)
		return SIWX_RTR_DISCARD;
	/* The Read Request names a zero-length source; answered as usual */
	if (rtr == SIWX_MPA_RTR_READ && h->opcode == SIWX_OP_READ_REQ)
		return SIWX_RTR_SERVE;
	*err = llp_err(SIWX_LLP_NO_MATCHING_RTR);
	return SIWX_RTR_INVALID;
}
