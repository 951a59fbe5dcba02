// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Outstanding Read and Atomic Requests (RFC 5040 5.2, RFC 7306 5.2). */
#include <siwx/proto/ddp.h>
#include <siwx/proto/rdq.h>

void siwx_rdq_init(struct siwx_rdq *q, u32 limit)
{
	memset(q, 0, sizeof(*q));
	if (limit < 1)
		limit = 1;
	if (limit > SIWX_RDQ_MAX)
		limit = SIWX_RDQ_MAX;
	q->limit = limit;
}

struct siwx_rdq_entry *siwx_rdq_push(struct siwx_rdq *q, u8 kind, u64 cookie)
{
	struct siwx_rdq_entry *e;

	if (siwx_rdq_full(q))
		return NULL;
	e = &q->ent[(q->head + q->count) % SIWX_RDQ_MAX];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->cookie = cookie;
	q->count++;
	return e;
}

void siwx_rdq_pop(struct siwx_rdq *q)
{
	if (!q->count)
		return;
	q->head = (q->head + 1) % SIWX_RDQ_MAX;
	q->count--;
}

static struct siwx_term no_buffer(void)
{
	return siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED,
			      SIWX_DDP_UT_NO_BUFFER);
}

static struct siwx_term tagged_err(u8 code)
{
	return siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_TAGGED, code);
}

bool siwx_rdq_accept_request(struct siwx_rdq *irq,
			     const struct siwx_ddp_hdr *ddp,
			     const struct siwx_read_req *read,
			     const struct siwx_atomic_req *atomic,
			     struct siwx_term *err)
{
	bool is_read = ddp->opcode == SIWX_OP_READ_REQ;
	struct siwx_rdq_entry *e;

	e = siwx_rdq_push(irq, is_read ? SIWX_RDQ_READ : SIWX_RDQ_ATOMIC,
			  ddp->msn);
	if (!e) {
		*err = no_buffer();
		return false;
	}
	if (is_read)
		e->u.read = *read;
	else
		e->u.atomic = *atomic;
	return true;
}

struct siwx_rdq_entry *siwx_rdq_read_response(struct siwx_rdq *orq,
					      const struct siwx_ddp_hdr *ddp,
					      u32 len, bool *complete,
					      struct siwx_term *err)
{
	struct siwx_rdq_entry *e = siwx_rdq_head(orq);
	const struct siwx_read_req *r;

	*complete = false;
	if (!e || e->kind != SIWX_RDQ_READ ||
	    ddp->stag != e->u.read.sink_stag) {
		*err = tagged_err(SIWX_DDP_T_INVALID_STAG);
		return NULL;
	}
	r = &e->u.read;
	/* Each segment must continue where the last one ended. */
	if (ddp->to != r->sink_to + e->done || len > r->size - e->done) {
		*err = tagged_err(SIWX_DDP_T_BASE_BOUNDS);
		return NULL;
	}
	e->done += len;
	if (ddp->last) {
		if (e->done != r->size) {
			*err = tagged_err(SIWX_DDP_T_BASE_BOUNDS);
			return NULL;
		}
		*complete = true;
	}
	return e;
}

struct siwx_rdq_entry *
siwx_rdq_atomic_response(struct siwx_rdq *orq, const struct siwx_atomic_resp *r,
			 struct siwx_term *err)
{
	struct siwx_rdq_entry *e = siwx_rdq_head(orq);

	if (!e || e->kind != SIWX_RDQ_ATOMIC ||
	    e->u.atomic.req_id != r->req_id) {
		*err = no_buffer();
		return NULL;
	}
	return e;
}
