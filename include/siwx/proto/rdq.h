/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Outstanding RDMA Read and Atomic Requests, at both ends of a stream.
 *
 * RFC 7306 section 5.2 puts Atomic Requests on the Read Request queue
 * (QN 1), so one queue with one limit serves both: ORD at the requester
 * (outbound requests awaiting their response), IRD at the responder
 * (inbound requests whose response is not yet sent). Responses come back
 * in request order (RFC 5040 section 5.5 rule 20, RFC 7306 section 5.4),
 * so each queue is a FIFO and a response must match its head.
 *
 * Faults map to the Terminate that the RFCs' buffer model implies: an
 * inbound request beyond IRD finds no QN 1 buffer, an Atomic Response with
 * nothing outstanding no QN 3 buffer (DDP Untagged "no buffer available");
 * a Read Response nobody asked for targets no advertised sink (DDP Tagged
 * "Invalid STag") and one outside the requested sink range breaks its
 * bounds.
 */
#ifndef SIWX_PROTO_RDQ_H
#define SIWX_PROTO_RDQ_H

#include "rdmap.h"
#include "rfc7306.h"
#include "term.h"
#include "types.h"

#define SIWX_RDQ_MAX 128	/* the largest IRD/ORD siwx offers */

enum siwx_rdq_kind {
	SIWX_RDQ_READ,
	SIWX_RDQ_ATOMIC,
};

struct siwx_rdq_entry {
	u8 kind;
	u64 cookie;		/* the owner's handle (e.g. its WQE slot) */
	union {
		struct siwx_read_req read;
		struct siwx_atomic_req atomic;
	} u;
	u32 done;		/* Read: octets answered so far */
};

struct siwx_rdq {
	struct siwx_rdq_entry ent[SIWX_RDQ_MAX];
	u32 head;		/* oldest entry */
	u32 count;
	u32 limit;		/* negotiated IRD or ORD */
};

/* @limit is clamped to [1, SIWX_RDQ_MAX]. */
void siwx_rdq_init(struct siwx_rdq *q, u32 limit);

static inline bool siwx_rdq_full(const struct siwx_rdq *q)
{
	return q->count >= q->limit;
}

static inline struct siwx_rdq_entry *siwx_rdq_head(struct siwx_rdq *q)
{
	return q->count ? &q->ent[q->head] : NULL;
}

/* Append; returns NULL when the queue is at its limit. */
struct siwx_rdq_entry *siwx_rdq_push(struct siwx_rdq *q, u8 kind, u64 cookie);
void siwx_rdq_pop(struct siwx_rdq *q);

/*
 * Responder: queue an inbound Read or Atomic Request (delivered at its
 * SEGMENT_END). Beyond IRD this fails with DDP "no buffer available".
 */
bool siwx_rdq_accept_request(struct siwx_rdq *irq,
			     const struct siwx_ddp_hdr *ddp,
			     const struct siwx_read_req *read,
			     const struct siwx_atomic_req *atomic,
			     struct siwx_term *err);

/*
 * Requester: check a Read Response segment (tagged, @len payload octets at
 * @to of @stag) against the oldest outstanding request and account for it.
 * Returns the entry; *@complete is set when the segment ends the message
 * and all requested octets have arrived.
 */
struct siwx_rdq_entry *siwx_rdq_read_response(struct siwx_rdq *orq,
					      const struct siwx_ddp_hdr *ddp,
					      u32 len, bool *complete,
					      struct siwx_term *err);

/* Requester: match an Atomic Response against the oldest request. */
struct siwx_rdq_entry *
siwx_rdq_atomic_response(struct siwx_rdq *orq, const struct siwx_atomic_resp *r,
			 struct siwx_term *err);

#endif /* SIWX_PROTO_RDQ_H */
