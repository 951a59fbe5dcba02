/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * siwx-local-fuzz (see local_fuzz.c's top comment): a hostile local user
 * of a siwx device, and the peer that watches what reaches the wire. The
 * parts:
 *   local_fuzz.c         main, options, the fuzzer's phases and checks
 *   local_fuzz_ring.c    the SQ ring behind the provider: finding it,
 *                        raw SQEs, the doorbell
 *   local_fuzz_cmd.c     raw uverbs commands and mmap() probes
 *   local_fuzz_server.c  the peer: canaries, the marker scan
 */
#ifndef SIWX_TESTS_PROGS_LOCAL_FUZZ_H
#define SIWX_TESTS_PROGS_LOCAL_FUZZ_H

#include <siwx/abi.h>

#include "tp_common.h"

#define LF_MAGIC 0x534957584c465a31ULL	/* "SIWXLFZ1" */
/*
 * Octets only memory the fuzzer must never send hold: unregistered
 * memory and another PD's MR. Its registered memory and the peer's never
 * hold MARKER_RUN of them in a row.
 */
#define MARKER 0xee
#define MARKER_RUN 8
/* The peer's buffer: canary, registered window, canary. */
#define PEER_LEN 65536u
#define PEER_WIN_OFF 16384u
#define PEER_WIN_LEN 32768u
#define PEER_RECV 4096u			/* each of its receives */
#define PEER_NRECV 128u		/* per connection (fz_spend_recv) */
/* The fuzzer's QP: a send queue far larger than any other ring. */
#define LF_SQ_WR 200u
#define LF_MEM 65536u

struct lf_opts {
	struct tp_role r;
	uint64_t seed;
	unsigned int batches;		/* -n: SQE batches */
	unsigned int commands;		/* -m: raw commands */
};

/* Fill @len octets with the registered-memory pattern (no MARKER). */
void lf_pattern(uint8_t *p, size_t len, uint64_t seed);
/* Offset of a run of MARKER_RUN markers in @p, or -1. */
long lf_find_marker(const uint8_t *p, size_t len);

/* local_fuzz_server.c */
int lf_server(const struct lf_opts *o, struct rdma_event_channel *ec);

/* local_fuzz_ring.c */
struct lf_ring {
	struct siwx_sqe *sqe;
	uint32_t num;
	uint32_t pos;			/* our producer position */
	uint64_t pgoff;			/* the kernel's mmap offset, pages */
	size_t len;
};

/* What a raw SQE may name. */
struct lf_targets {
	void *a;			/* registered, ours */
	uint32_t a_lkey;
	size_t a_len;
	void *b;			/* not registered */
	uint32_t c_lkey;		/* another PD's MR */
	void *c;
	uint64_t raddr;			/* the peer's window */
	uint32_t rkey;
	uint32_t rlen;
};

/* uverbs mappings of this process, to find the ones a QP adds. */
struct lf_maps {
	unsigned int n;
	struct {
		uintptr_t start;
		size_t len;
		uint64_t pgoff;
	} m[64];
};

void lf_maps_read(struct lf_maps *m);
bool lf_ring_find(const struct lf_maps *before, struct lf_ring *r);
/* A random SQE: a valid template, then (@hostile) 1-3 mutations. */
void lf_sqe_random(struct siwx_sqe *e, const struct lf_targets *t,
		   uint64_t *rng, uint64_t id, bool hostile);
/* Publish @e in the next slot; false when that slot is not free. */
bool lf_ring_put(struct lf_ring *r, const struct siwx_sqe *e);
/* The zero-WR post_send that makes the kernel look at the ring. */
int lf_doorbell(struct ibv_qp *qp);

/* local_fuzz_cmd.c */
void lf_mmap_probes(struct ibv_context *ctx, const struct lf_ring *r);
void lf_raw_commands(struct ibv_context *ctx, uint64_t *rng,
		     unsigned int n);

#endif
