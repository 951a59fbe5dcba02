// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-local-fuzz: the send queue behind the provider's back. A local
 * user needs no provider to write the ring: it is memory of its own
 * process, mapped from the uverbs file. This finds it the way any user
 * could (/proc/self/maps: the largest uverbs mapping a new QP adds is
 * its SQ, LF_SQ_WR being far beyond the other rings), writes SQEs into
 * it as abi.h lays them out, and rings the doorbell itself.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "local_fuzz.h"

void lf_maps_read(struct lf_maps *m)
{
	char line[512], path[256];
	unsigned long start, end, pgoff;
	FILE *f = fopen("/proc/self/maps", "r");

	m->n = 0;
	if (!f)
		tp_die("/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f) && m->n < 64) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %255s", &start, &end,
			   &pgoff, path) < 3 ||
		    !strstr(path, "uverbs"))
			continue;
		m->m[m->n].start = start;
		m->m[m->n].len = end - start;
		m->m[m->n].pgoff = pgoff;	/* in bytes, as maps shows it */
		m->n++;
	}
	fclose(f);
}

static bool lf_maps_has(const struct lf_maps *m, uintptr_t start)
{
	unsigned int i;

	for (i = 0; i < m->n; i++)
		if (m->m[i].start == start)
			return true;
	return false;
}

bool lf_ring_find(const struct lf_maps *before, struct lf_ring *r)
{
	struct lf_maps now;
	unsigned int i, best = ~0u;
	size_t n;

	lf_maps_read(&now);
	for (i = 0; i < now.n; i++)
		if (!lf_maps_has(before, now.m[i].start) &&
		    (best == ~0u || now.m[i].len > now.m[best].len))
			best = i;
	if (best == ~0u) {
		tp_fail("no uverbs mapping came with the QP");
		return false;
	}
	memset(r, 0, sizeof(*r));
	r->sqe = (struct siwx_sqe *)now.m[best].start;
	r->len = now.m[best].len;
	r->pgoff = now.m[best].pgoff / 4096;
	/* The ring is a power of two of SQEs, then the control block */
	n = (r->len - sizeof(struct siwx_sq_ctrl)) / sizeof(struct siwx_sqe);
	for (r->num = 1; (size_t)r->num * 2 <= n; r->num *= 2)
		;
	if (r->num < LF_SQ_WR) {
		tp_fail("the largest new uverbs mapping (%zu octets) is no SQ "
			"of %u WRs", r->len, LF_SQ_WR);
		return false;
	}
	tp_vlog("SQ ring at %p: %u SQEs, mmap offset 0x%" PRIx64,
		(void *)r->sqe, r->num, r->pgoff * 4096);
	return true;
}

bool lf_ring_put(struct lf_ring *r, const struct siwx_sqe *e)
{
	struct siwx_sqe *slot = &r->sqe[r->pos % r->num];
	uint16_t flags = e->flags | SIWX_WQE_VALID;

	if (__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & SIWX_WQE_VALID)
		return false;
	memcpy((uint8_t *)slot + sizeof(slot->id) + sizeof(slot->flags),
	       (const uint8_t *)e + sizeof(e->id) + sizeof(e->flags),
	       sizeof(*e) - sizeof(e->id) - sizeof(e->flags));
	slot->id = e->id;
	__atomic_store_n(&slot->flags, flags, __ATOMIC_RELEASE);
	r->pos++;
	return true;
}

int lf_doorbell(struct ibv_qp *qp)
{
	struct ib_uverbs_post_send_resp resp;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send core;
	} cmd = {
		.hdr = { IB_USER_VERBS_CMD_POST_SEND, sizeof(cmd) / 4,
			 sizeof(resp) / 4 },
		.core = {
			.response = (uintptr_t)&resp,
			.qp_handle = qp->handle,
			.wqe_size = sizeof(struct ib_uverbs_send_wr),
		},
	};

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return write(qp->context->cmd_fd, &cmd, sizeof(cmd)) == sizeof(cmd) ?
		       0 : errno;
}

/* ---- raw SQEs ---------------------------------------------------------- */

static uint64_t pick(uint64_t *rng, uint64_t n)
{
	return tp_rand(rng) % n;
}

/* A WR that is fine as it stands: the mutations make it hostile. */
static void lf_sqe_template(struct siwx_sqe *e, const struct lf_targets *t,
			    uint64_t *rng)
{
	uint32_t len = 8 + pick(rng, 512);
	uint64_t off = pick(rng, t->a_len - len) & ~7ULL;
	uint64_t roff = pick(rng, t->rlen - len) & ~7ULL;

	e->num_sge = 1;
	e->sge[0].addr = (uintptr_t)t->a + off;
	e->sge[0].length = len;
	e->sge[0].lkey = t->a_lkey;
	e->rkey = t->rkey;
	e->raddr = t->raddr + roff;
	switch (pick(rng, 6)) {
	case 0:
		e->opcode = IB_UVERBS_WR_SEND;
		break;
	case 1:
		e->opcode = IB_UVERBS_WR_RDMA_WRITE;
		break;
	case 2:
		e->opcode = IB_UVERBS_WR_RDMA_READ;
		break;
	case 3:
		e->opcode = IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
		e->sge[0].length = 8;
		e->add_swap = pick(rng, 100);
		break;
	case 4:
		e->opcode = IB_UVERBS_WR_ATOMIC_CMP_AND_SWP;
		e->sge[0].length = 8;
		e->compare = tp_rand(rng);
		e->add_swap = tp_rand(rng);
		e->compare_mask = ~0ULL;
		e->add_swap_mask = ~0ULL;
		break;
	default:
		e->opcode = IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
		break;
	}
}

/* Addresses no SGE of ours may name. */
static uint64_t lf_bad_addr(const struct lf_targets *t, uint64_t *rng)
{
	switch (pick(rng, 6)) {
	case 0:
		return (uintptr_t)t->b + pick(rng, 4096);
	case 1:
		return (uintptr_t)t->a - 64;
	case 2:
		return (uintptr_t)t->a + t->a_len - 8;
	case 3:
		return 0xffff888000000000ULL + pick(rng, 1 << 20) * 4096;
	case 4:
		return (uintptr_t)t->c;
	default:
		return tp_rand(rng);
	}
}

static void lf_mutate(struct siwx_sqe *e, const struct lf_targets *t,
		      uint64_t *rng)
{
	unsigned int i;

	switch (pick(rng, 10)) {
	case 0:		/* another PD's key, a wrong key, a random one */
		e->sge[0].lkey = pick(rng, 2) ? t->c_lkey :
				 pick(rng, 2) ? t->a_lkey ^ 1 :
						(uint32_t)tp_rand(rng);
		break;
	case 1:
		e->sge[0].addr = lf_bad_addr(t, rng);
		break;
	case 2:		/* lengths past the region, the message, 2^32 */
		e->sge[0].length = pick(rng, 2) ? 0x80000000u + pick(rng, 9) :
						  (uint32_t)t->a_len + 1;
		break;
	case 3:		/* SGE counts past the limit, with junk SGEs */
		e->num_sge = SIWX_MAX_SGE + 1 + pick(rng, 249);
		for (i = 1; i < SIWX_MAX_SGE; i++) {
			e->sge[i].addr = lf_bad_addr(t, rng);
			e->sge[i].length = (uint32_t)tp_rand(rng);
			e->sge[i].lkey = (uint32_t)tp_rand(rng);
		}
		break;
	case 4:		/* kernel-only and unknown opcodes */
		switch (pick(rng, 6)) {
		case 0:
			e->opcode = 0x20;	/* IB_WR_REG_MR */
			break;
		case 1:
			e->opcode = IB_UVERBS_WR_RDMA_READ_WITH_INV;
			break;
		case 2:
			e->opcode = IB_UVERBS_WR_LOCAL_INV;
			e->rkey = t->a_lkey;
			break;
		case 3:
			e->opcode = IB_UVERBS_WR_BIND_MW;
			e->rkey = (uint32_t)tp_rand(rng);
			e->compare = t->c_lkey;
			e->add_swap = tp_rand(rng);
			e->add_swap_mask = tp_rand(rng);
			break;
		default:
			e->opcode = (uint8_t)tp_rand(rng);
			break;
		}
		break;
	case 5:		/* inline, longer than inline can be */
		e->flags |= SIWX_WQE_INLINE;
		e->num_sge = SIWX_MAX_INLINE + pick(rng, 160);
		break;
	case 6:		/* random flag bits */
		e->flags |= (uint16_t)tp_rand(rng) & ~SIWX_WQE_VALID;
		break;
	case 7:		/* the peer's bounds, keys, alignment */
		e->raddr = pick(rng, 2) ? t->raddr + t->rlen - 4 :
					  t->raddr - 8 + pick(rng, 8);
		if (pick(rng, 2))
			e->rkey = (uint32_t)tp_rand(rng);
		break;
	case 8:		/* zero SGEs, a NULL address */
		e->num_sge = 0;
		e->sge[0].addr = 0;
		break;
	default:	/* every byte after the header random */
		for (i = sizeof(e->id) + sizeof(e->flags); i < sizeof(*e); i++)
			((uint8_t *)e)[i] = (uint8_t)tp_rand(rng);
		break;
	}
}

void lf_sqe_random(struct siwx_sqe *e, const struct lf_targets *t,
		   uint64_t *rng, uint64_t id, bool hostile)
{
	unsigned int i, n = hostile ? 1 + pick(rng, 3) : 0;

	memset(e, 0, sizeof(*e));
	lf_sqe_template(e, t, rng);
	for (i = 0; i < n; i++)
		lf_mutate(e, t, rng);
	e->id = id;
	/* Every WR completes: signalled, so that successes count too */
	e->flags = (e->flags | SIWX_WQE_SIGNALLED) & ~SIWX_WQE_VALID;
}
