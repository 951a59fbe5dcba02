/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * MPA connection setup decisions (RFC 5044 section 7.1, RFC 6581): what
 * the initiator asks for, how the responder answers a Request, and what
 * the initiator makes of the Reply. The connection manager only moves the
 * frames; every accept/refuse decision and every negotiated value comes
 * from here.
 *
 * CRC: used in both directions when either side asks for it (RFC 5044
 * 7.1: a Responder must honour an Initiator's C bit).
 * Markers: never; a peer asking for them is refused.
 * IRD/ORD (RFC 6581): each side's ORD is cut to the peer's IRD (relaxed
 * negotiation, as upstream siw does): a connection never fails for it.
 * Peer-to-peer RTR (RFC 6581): the Responder picks one RTR type the
 * Initiator offered, preferring a zero-length RDMA Write, then Read, then
 * Send; the Initiator sends it as its first message.
 */
#ifndef SIWX_PROTO_MPA_NEGO_H
#define SIWX_PROTO_MPA_NEGO_H

#include "ddp.h"
#include "mpa.h"
#include "term.h"
#include "types.h"

struct siwx_mpa_policy {
	bool crc;		/* ask for CRC (always used if the peer asks) */
	u8 rev;			/* revision of Requests we send: 1 or 2 */
	bool p2p;		/* Initiator: ask for peer-to-peer mode */
	u8 rtr_types;		/* RTR types we can send and accept */
	u16 max_ird;
	u16 max_ord;
};

/* The outcome of a successful negotiation, for both ends. */
struct siwx_mpa_conn {
	bool crc;
	u8 rev;
	u16 ird;		/* inbound Read/Atomic Requests we serve */
	u16 ord;		/* outbound Read/Atomic Requests we may issue */
	u8 rtr;			/* the RTR message of a p2p connection, or 0 */
};

/* Initiator: the Request for the ULP's @ird/@ord and private data. */
void siwx_mpa_make_request(const struct siwx_mpa_policy *pol, u16 ird,
			   u16 ord, const u8 *pd, u16 pd_len,
			   struct siwx_mpa_rr *req);

/*
 * Responder, on a Request: false when it must be refused (markers, or
 * peer-to-peer without an RTR type we accept; @err says why). Otherwise
 * @conn holds the proposal, with the Initiator's IRD/ORD mirrored and cut
 * to our maxima; the ULP may lower them in siwx_mpa_make_reply().
 */
bool siwx_mpa_check_request(const struct siwx_mpa_policy *pol,
			    const struct siwx_mpa_rr *req,
			    struct siwx_mpa_conn *conn, struct siwx_term *err);

/*
 * Responder: the Reply accepting (@conn from siwx_mpa_check_request, with
 * the ULP's accept values: @ird may raise the proposal's IRD, the caller
 * having bounded it by the device maximum; @ord is cut to the proposal)
 * or refusing. On accept, @conn is updated to what was agreed.
 */
void siwx_mpa_make_reply(const struct siwx_mpa_rr *req,
			 struct siwx_mpa_conn *conn, bool accept, u16 ird,
			 u16 ord, const u8 *pd, u16 pd_len,
			 struct siwx_mpa_rr *rep);

enum siwx_mpa_verdict {
	SIWX_MPA_ACCEPTED,
	SIWX_MPA_REJECTED,	/* the peer refused (R bit) */
	SIWX_MPA_INVALID,	/* a protocol error; @err says which */
};

/* Initiator, on the Reply to @req (the Request as we built it). */
enum siwx_mpa_verdict siwx_mpa_check_reply(const struct siwx_mpa_policy *pol,
					   const struct siwx_mpa_rr *req,
					   const struct siwx_mpa_rr *rep,
					   struct siwx_mpa_conn *conn,
					   struct siwx_term *err);

/*
 * Initiator of a peer-to-peer connection: the DDP header of the RTR
 * message @rtr (one type), its first message: a zero-length RDMA Write
 * (STag 0, TO 0: nothing is placed) or a zero-length Send, which takes
 * @send_msn, the first MSN of QN 0. False for a Read RTR, which an
 * Initiator of ours never offers (its Read Response would need an ORD
 * credit and a sink of its own).
 */
bool siwx_mpa_rtr_hdr(u8 rtr, u32 send_msn, struct siwx_ddp_hdr *h);

enum siwx_rtr_verdict {
	SIWX_RTR_DISCARD,	/* the RTR: take it, deliver nothing */
	SIWX_RTR_SERVE,		/* a Read RTR, or any FPDU if no RTR agreed */
	SIWX_RTR_INVALID,	/* not the agreed RTR; @err says why */
};

/*
 * A Responder sends no FPDU before it has received one from the Initiator
 * (RFC 5044 section 7.1.2, rule 3): the Initiator's stack may still be
 * reading the MPA Reply. In peer-to-peer mode (RFC 6581 section 3) that
 * first FPDU is the agreed RTR message. What to make of the first segment
 * of the Initiator's first message, @h with @payload_len octets, given the
 * agreed RTR type @rtr (0: none, any FPDU will do).
 */
enum siwx_rtr_verdict siwx_mpa_rtr_check(u8 rtr, const struct siwx_ddp_hdr *h,
					 u32 payload_len,
					 struct siwx_term *err);

#endif /* SIWX_PROTO_MPA_NEGO_H */
