// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-local-fuzz: a hostile local user. /dev/infiniband/uverbs* is open
 * to every local user, and siwx takes work requests from rings user space
 * writes; this program writes them behind the provider's back.
 *
 * The fuzzer (-c) registers 64 KiB "A" (a pattern without the marker,
 * local write only), keeps 64 KiB "B" unregistered and a 4 KiB MR "C" in a
 * second PD, both full of the marker octet. Its phases:
 *   sqe       -n batches of 1-16 raw SQEs written straight into the SQ
 *             ring (local_fuzz_ring.c): Sends, Writes, Reads, atomics and
 *             writes with immediate; in three batches of four, one SQE at
 *             a random place has 1-3 mutations: C's key,
 *             wrong and random keys, B's and kernel addresses, addresses
 *             across A's ends, lengths past A and 2^31, SGE counts past
 *             the limit, kernel-only (REG_MR, Read with Invalidate) and
 *             unknown opcodes, Local Invalidate of an MR, junk binds,
 *             inline longer than inline can be, random flags, the peer's
 *             bounds, keys and alignment, all bytes random. Every SQE is
 *             signalled, and every one must complete exactly once, in
 *             order (success, error or flush error) within 10 s; after
 *             an error the connection is gone and the next batch makes a
 *             new one;
 *   scribble  the same while a second thread writes random bytes into
 *             random slots of the ring, published ones too (the kernel
 *             must copy an SQE once, then check its copy); nothing is
 *             counted, the device must survive;
 *   resize    valid batches, counted exactly, while a second thread
 *             resizes the send CQ under them;
 *   windows   a bind whose MR key has bits above 32 is refused; then
 *             Bind Memory Window SQEs (and unbinds) of the window a
 *             second thread has just allocated, of either type, while it
 *             deallocates them; each completes once, and at the end the
 *             MR they were bound to deregisters (a window or binding the
 *             kernel kept would hold it: EBUSY, or a hang);
 *   mmap      mmap() of the ring's offset one page longer, of its second
 *             page alone, of offsets never given out, and from another
 *             context must fail (local_fuzz_cmd.c);
 *   commands  -m raw uverbs commands with random numbers, sizes, handles
 *             and udata on a context of their own, then its close;
 *   after     a fresh connection: a Write and a Read through the peer's
 *             window still work and bring back what was written.
 * After every batch B and C must hold only the marker and A must hold no
 * run of it; the peer (-s, local_fuzz_server.c) scans every receive and
 * its window for the marker and checks the canaries around the window.
 * The guest's kernel log is checked by the harness (any WARN, BUG or
 * oops fails the scenario; KASAN and lockdep on the debug kernel).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "local_fuzz.h"

#define BATCH_MAX 16u

/* What a batch holds */
enum fz_mode {
	FZ_HOSTILE,	/* valid SQEs, three batches in four one hostile */
	FZ_VALID,
	FZ_BIND,	/* binds of the window fz_windows() has now */
};

void lf_pattern(uint8_t *p, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = 0x10 + (uint8_t)((i * 7 + seed) % 0x60);
}

long lf_find_marker(const uint8_t *p, size_t len)
{
	size_t i, run = 0;

	for (i = 0; i < len; i++) {
		run = p[i] == MARKER ? run + 1 : 0;
		if (run == MARKER_RUN)
			return (long)(i + 1 - MARKER_RUN);
	}
	return -1;
}

struct fuzzer {
	const struct lf_opts *o;
	struct rdma_event_channel *ec;
	uint64_t rng;
	struct ibv_pd *pd, *pd2;
	struct tp_buf a, c;
	struct tp_buf w;		/* MW_BIND: the windows phase's MR */
	uint32_t mw_rkey;		/* the window fz_windows() has now */
	unsigned long windows;
	uint8_t *b;
	struct tp_conn conn;
	bool up;
	struct lf_ring ring;
	struct lf_targets t;
	uint64_t next_id;
	unsigned long posted, ok, errors, flushed, conns;
	uint32_t recvs_left;		/* the peer's receives not yet used */
	/* scribble and resize threads */
	volatile bool stop;
	pthread_t thr;
};

static void fz_close(struct fuzzer *f);

/* A new connection (the peer serves one at a time: the last one ends) */
static bool fz_connect(struct fuzzer *f, bool end)
{
	struct tp_qp_opts q = {
		.max_send_wr = LF_SQ_WR, .max_recv_wr = 1, .max_sge = 1,
		.rd_atomic = 16,
	};
	uint64_t w[4] = { LF_MAGIC, end };
	uint8_t pd[TP_CONNECT_PDATA_MAX];
	struct lf_maps before;

	fz_close(f);
	memset(&f->conn, 0, sizeof(f->conn));
	if (!tp_resolve(&f->conn, f->ec, f->o->r.host, f->o->r.port,
			f->o->r.timeout_ms))
		return false;
	if (!f->pd) {
		struct ibv_context *ctx = f->conn.id->verbs;

		f->pd = ibv_alloc_pd(ctx);
		f->pd2 = ibv_alloc_pd(ctx);
		f->b = malloc(LF_MEM);
		if (!f->pd || !f->pd2 || !f->b) {
			tp_fail("setup: %s", strerror(errno));
			return false;
		}
		if (!tp_buf_alloc(&f->a, f->pd, LF_MEM, LF_MEM,
				  IBV_ACCESS_LOCAL_WRITE) ||
		    !tp_buf_alloc(&f->c, f->pd2, 4096, 4096,
				  IBV_ACCESS_LOCAL_WRITE))
			return false;
		lf_pattern(f->a.addr, LF_MEM, 3);
		memset(f->b, MARKER, LF_MEM);
		memset(f->c.addr, MARKER, 4096);
	}
	f->conn.pd = f->pd;
	lf_maps_read(&before);
	tp_pdata_put(pd, w, 2);
	if (!tp_setup_qp(&f->conn, &q) || !lf_ring_find(&before, &f->ring) ||
	    !tp_connect_qp(&f->conn, pd, 16, f->o->r.timeout_ms))
		return false;
	if (!tp_pdata_get(f->conn.peer_pdata, f->conn.peer_pdata_len, w, 4) ||
	    w[0] != LF_MAGIC) {
		tp_fail("the peer's accept carries no window");
		return false;
	}
	f->t = (struct lf_targets){
		.a = f->a.addr, .a_lkey = f->a.mr->lkey, .a_len = LF_MEM,
		.b = f->b, .c = f->c.addr, .c_lkey = f->c.mr->lkey,
		.raddr = w[1], .rkey = (uint32_t)w[2], .rlen = (uint32_t)w[3],
	};
	f->recvs_left = PEER_NRECV;
	f->up = true;
	f->conns++;
	return true;
}

static void fz_close(struct fuzzer *f)
{
	if (f->up)
		tp_close(&f->conn, 5000);
	f->up = false;
}

/* Nothing but A may change, and A never to the marker. */
static void fz_check_memory(struct fuzzer *f, const char *when)
{
	static uint8_t ref[LF_MEM];
	long at;

	if (!ref[0])
		memset(ref, MARKER, sizeof(ref));
	if (memcmp(f->b, ref, LF_MEM))
		tp_fail("%s: unregistered memory changed", when);
	if (memcmp(f->c.addr, ref, 4096))
		tp_fail("%s: the other PD's MR changed", when);
	at = lf_find_marker(f->a.addr, LF_MEM);
	if (at >= 0)
		tp_fail("%s: foreign octets landed in A at %ld", when, at);
}

/* A bind of the current window to part of f->w, or an unbind. */
static void fz_bind_sqe(struct fuzzer *f, struct siwx_sqe *e, uint64_t id)
{
	uint32_t k = __atomic_load_n(&f->mw_rkey, __ATOMIC_ACQUIRE);
	uint64_t off = tp_rand(&f->rng) % (LF_MEM / 2);

	memset(e, 0, sizeof(*e));
	e->id = id;
	e->flags = SIWX_WQE_SIGNALLED;
	e->opcode = IB_UVERBS_WR_BIND_MW;
	e->rkey = (k & ~0xffu) | ((k + 1 + tp_rand(&f->rng) % 8) & 0xff);
	e->raddr = (uintptr_t)f->w.addr + off;
	e->bind.length = tp_rand(&f->rng) % 4 ?
				 1 + tp_rand(&f->rng) % (LF_MEM / 2) : 0;
	e->bind.mr_lkey = f->w.mr->lkey;
	e->bind.access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
}

/* Post one raw SQE and take its completion's status (-1: none came). */
static int fz_one(struct fuzzer *f, struct siwx_sqe *e)
{
	struct ibv_wc wc;

	e->id = f->next_id++;
	if (!lf_ring_put(&f->ring, e) || lf_doorbell(f->conn.qp) ||
	    tp_poll(f->conn.scq, &wc, 10000) <= 0 || wc.wr_id != e->id)
		return -1;
	return wc.status;
}

/*
 * The bind SQE's MR key is 64 bits wide in the ring and an lkey is 32:
 * a bind whose key has bits above 32 is refused, not truncated to the
 * valid lkey below them, and leaves the type 2 window free for a bind
 * that names the lkey alone.
 */
static bool fz_wide_lkey(struct fuzzer *f)
{
	struct siwx_sqe e = {
		.flags = SIWX_WQE_SIGNALLED, .opcode = IB_UVERBS_WR_BIND_MW,
	};
	struct ibv_mw *mw = ibv_alloc_mw(f->pd, IBV_MW_TYPE_2);
	int wide, plain;

	if (!mw || !fz_connect(f, false)) {
		tp_fail("wide lkey: setup: %s", strerror(errno));
		return false;
	}
	e.rkey = (mw->rkey & ~0xffu) | ((mw->rkey + 1) & 0xff);
	e.raddr = (uintptr_t)f->w.addr;
	e.bind.length = 4096;
	e.bind.access = IBV_ACCESS_REMOTE_READ;
	e.bind.mr_lkey = (1ull << 32) | f->w.mr->lkey;
	wide = fz_one(f, &e);
	fz_close(f);
	e.bind.mr_lkey = f->w.mr->lkey;
	plain = fz_connect(f, false) ? fz_one(f, &e) : -1;
	fz_close(f);
	if (wide == IBV_WC_SUCCESS || wide == IBV_WC_WR_FLUSH_ERR || wide < 0)
		tp_fail("wide lkey: the bind with bit 32 set completed %s",
			wide < 0 ? "never" : ibv_wc_status_str(wide));
	else if (plain != IBV_WC_SUCCESS)
		tp_fail("wide lkey: the same bind with the lkey alone: %s",
			plain < 0 ? "no completion" : ibv_wc_status_str(plain));
	else
		tp_log("ok: wide lkey: refused (%s), the lkey alone binds",
		       ibv_wc_status_str(wide));
	if (ibv_dealloc_mw(mw))
		tp_fail("wide lkey: ibv_dealloc_mw failed");
	return wide != IBV_WC_SUCCESS && plain == IBV_WC_SUCCESS;
}

/*
 * On iWARP a Send that finds no receive ends the connection (there is no
 * RNR retry; siwx waits recv_wait_ms first). The peer posts PEER_NRECV
 * receives before it accepts, and reposts when its poll loop gets to it:
 * a fuzzer that counted on those would fail now and then for a reason
 * that is the test's (the valid batches of the resize race did, in CI).
 * So each connection sends at most PEER_NRECV; past them an SQE writes
 * instead.
 */
static void fz_spend_recv(struct fuzzer *f, struct siwx_sqe *e)
{
	switch (e->opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
	case IB_UVERBS_WR_SEND_WITH_INV:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		if (f->recvs_left)
			f->recvs_left--;
		else
			e->opcode = IB_UVERBS_WR_RDMA_WRITE;
		break;
	}
}

/*
 * Post @n SQEs of @mode and take their completions: each exactly once,
 * in order. In FZ_HOSTILE, three batches in four have one hostile SQE at
 * a random place: the valid ones before it run, those after it are
 * flushed. Returns 0, 1 when one failed (the connection is gone: the
 * caller closes it, once no thread touches its ring), -1 when one never
 * came.
 */
static int fz_batch(struct fuzzer *f, unsigned int n, enum fz_mode mode,
		    bool count)
{
	uint64_t first = f->next_id;
	unsigned int hostile = mode != FZ_HOSTILE ||
			       !(tp_rand(&f->rng) % 4) ? n :
			       tp_rand(&f->rng) % n;
	unsigned int i, posted = 0, got = 0;
	bool failed = false;
	struct siwx_sqe e;
	struct ibv_wc wc;
	int r;

	for (i = 0; i < n; i++) {
		if (mode == FZ_BIND)
			fz_bind_sqe(f, &e, f->next_id);
		else
			lf_sqe_random(&e, &f->t, &f->rng, f->next_id,
				      i == hostile);
		fz_spend_recv(f, &e);
		if (!lf_ring_put(&f->ring, &e))
			break;
		f->next_id++;
		posted++;
	}
	f->posted += posted;
	r = lf_doorbell(f->conn.qp);
	if (r)
		tp_vlog("doorbell: %s", strerror(r));
	while (got < posted) {
		r = tp_poll(f->conn.scq, &wc, count ? 10000 : 2000);
		if (r <= 0) {
			if (count)
				tp_fail("SQE %" PRIu64 " (of %u posted) never "
					"completed", first + got, posted);
			return -1;
		}
		if (count && wc.wr_id != first + got)
			tp_fail("completion of SQE %" PRIu64 ", expected %"
				PRIu64, wc.wr_id, first + got);
		got++;
		if (wc.status != IBV_WC_SUCCESS && mode == FZ_VALID && !failed)
			tp_log("valid SQE %" PRIu64 " (opcode %d): %s",
			       wc.wr_id, wc.opcode,
			       ibv_wc_status_str(wc.status));
		if (wc.status == IBV_WC_SUCCESS) {
			f->ok++;
		} else if (wc.status == IBV_WC_WR_FLUSH_ERR) {
			f->flushed++;
			failed = true;
		} else {
			f->errors++;
			failed = true;
		}
	}
	return failed;
}

static bool fz_phase_sqe(struct fuzzer *f)
{
	unsigned int i;
	int r;

	for (i = 0; i < f->o->batches; i++) {
		if (!f->up && !fz_connect(f, false))
			return false;
		r = fz_batch(f, 1 + tp_rand(&f->rng) % BATCH_MAX, FZ_HOSTILE,
			     true);
		if (r < 0)
			return false;
		if (r)
			fz_close(f);
		fz_check_memory(f, "sqe phase");
	}
	tp_log("ok: sqe: %lu SQEs, %lu succeeded, %lu failed, %lu flushed, "
	       "%lu connections", f->posted, f->ok, f->errors, f->flushed,
	       f->conns);
	return true;
}

static void *fz_scribbler(void *arg)
{
	struct fuzzer *f = arg;
	uint64_t rng = f->rng ^ 0x5c5c;

	while (!f->stop) {
		uint8_t *slot = (uint8_t *)&f->ring.sqe[tp_rand(&rng) %
							f->ring.num];

		slot[tp_rand(&rng) % sizeof(struct siwx_sqe)] ^=
			(uint8_t)(1 + tp_rand(&rng) % 255);
	}
	return NULL;
}

static void *fz_resizer(void *arg)
{
	struct fuzzer *f = arg;
	uint64_t rng = f->rng ^ 0x7e7e;

	/*
	 * A pause after each: the provider holds the CQ's lock across the
	 * resize, and back-to-back resizes starved the poller on the debug
	 * kernel, where each takes long (the test's run timed out there).
	 */
	while (!f->stop) {
		ibv_resize_cq(f->conn.scq, LF_SQ_WR + 1 + tp_rand(&rng) % 4000);
		usleep(1000 + tp_rand(&rng) % 4000);
	}
	return NULL;
}

/* Batches while @thread runs; @count: each completion accounted for. */
static bool fz_race(struct fuzzer *f, void *(*thread)(void *),
		    unsigned int batches, enum fz_mode mode, bool count)
{
	unsigned int i;
	int r = 0;

	if (!fz_connect(f, false))
		return false;
	f->stop = false;
	if (pthread_create(&f->thr, NULL, thread, f)) {
		tp_fail("pthread_create");
		return false;
	}
	for (i = 0; i < batches && !r; i++)
		r = fz_batch(f, 1 + tp_rand(&f->rng) % BATCH_MAX, mode,
			     count);
	/* The thread uses the ring and the CQ: stop it before they go */
	f->stop = true;
	pthread_join(f->thr, NULL);
	fz_close(f);
	fz_check_memory(f, "after a race");
	if (count && r)
		tp_fail("a valid SQE failed or never completed while the "
			"CQ resized");
	return !count || !r;
}

/* Windows of both types allocated and deallocated while binds name them */
static void *fz_windows(void *arg)
{
	struct fuzzer *f = arg;
	uint64_t rng = f->rng ^ 0x3b3b;
	struct ibv_mw *mw;
	unsigned int i;

	while (!f->stop) {
		mw = ibv_alloc_mw(f->pd, tp_rand(&rng) % 2 ? IBV_MW_TYPE_1 :
							     IBV_MW_TYPE_2);
		if (!mw) {
			tp_fail("ibv_alloc_mw: %s", strerror(errno));
			break;
		}
		__atomic_store_n(&f->mw_rkey, mw->rkey, __ATOMIC_RELEASE);
		for (i = tp_rand(&rng) % 100; i && !f->stop; i--)
			sched_yield();
		if (ibv_dealloc_mw(mw)) {
			tp_fail("ibv_dealloc_mw failed");
			break;
		}
		f->windows++;
	}
	return NULL;
}

/*
 * Binds (and unbinds) of windows that a second thread allocates and
 * deallocates meanwhile; each bind completes once, and at the end the MR
 * deregisters: no window and no binding may still hold it.
 */
static bool fz_phase_windows(struct fuzzer *f, unsigned int batches)
{
	unsigned long ok0 = f->ok, bad0 = f->errors, posted0 = f->posted;
	unsigned int i;
	int r = 0;

	if (!tp_buf_alloc(&f->w, f->pd, LF_MEM, LF_MEM,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return false;
	f->stop = false;
	if (!fz_wide_lkey(f))
		return false;
	if (pthread_create(&f->thr, NULL, fz_windows, f)) {
		tp_fail("pthread_create");
		return false;
	}
	for (i = 0; i < batches && r >= 0; i++) {
		if (!f->up && !fz_connect(f, false))
			break;
		r = fz_batch(f, 1 + tp_rand(&f->rng) % BATCH_MAX, FZ_BIND,
			     true);
		if (r > 0)
			fz_close(f);
	}
	f->stop = true;
	pthread_join(f->thr, NULL);
	fz_close(f);
	r = ibv_dereg_mr(f->w.mr);
	if (r)
		tp_fail("ibv_dereg_mr once every window is gone: %s",
			strerror(r));
	free(f->w.addr);
	f->w.mr = NULL;
	tp_log("ok: windows: %lu allocated and deallocated under %lu binds "
	       "(%lu done, %lu refused); the MR deregistered", f->windows,
	       f->posted - posted0, f->ok - ok0, f->errors - bad0);
	return !r;
}

/* The device still works: a Write and a Read of the peer's window. */
static bool fz_after(struct fuzzer *f)
{
	uint8_t *src = f->a.addr, *dst = (uint8_t *)f->a.addr + 8192;

	if (!fz_connect(f, false))
		return false;
	lf_pattern(src, 4096, 11);
	memset(dst, 0, 4096);
	if (tp_post_write(&f->conn, 1, src, 4096, f->a.mr->lkey, f->t.raddr,
			  f->t.rkey, IBV_SEND_SIGNALED) ||
	    !tp_wait_ok(f->conn.scq, IBV_WC_RDMA_WRITE, 1, "final Write",
			f->o->r.timeout_ms, NULL) ||
	    tp_post_read(&f->conn, 2, dst, 4096, f->a.mr->lkey, f->t.raddr,
			 f->t.rkey, IBV_SEND_SIGNALED) ||
	    !tp_wait_ok(f->conn.scq, IBV_WC_RDMA_READ, 2, "final Read",
			f->o->r.timeout_ms, NULL))
		return false;
	if (memcmp(src, dst, 4096))
		tp_fail("the final Read brought back other octets");
	else
		tp_log("ok: after: the device still works");
	fz_close(f);
	return true;
}

static int lf_client(const struct lf_opts *o, struct rdma_event_channel *ec)
{
	struct fuzzer f = { .o = o, .ec = ec, .rng = o->seed };
	uint64_t t0 = tp_now_ms();
	bool ok;

	ok = fz_phase_sqe(&f);
	tp_vlog("sqe phase: %" PRIu64 " ms", tp_now_ms() - t0);
	ok = ok && fz_race(&f, fz_scribbler, 20, FZ_HOSTILE, false);
	if (ok)
		tp_log("ok: scribble: the ring changed under the kernel");
	ok = ok && fz_race(&f, fz_resizer, 30, FZ_VALID, true);
	if (ok)
		tp_log("ok: resize: every SQE completed while the CQ resized");
	ok = ok && fz_phase_windows(&f, 40);
	tp_vlog("races: %" PRIu64 " ms", tp_now_ms() - t0);
	ok = ok && fz_connect(&f, false);
	if (ok) {
		lf_mmap_probes(f.conn.id->verbs, &f.ring);
		fz_close(&f);
		lf_raw_commands(f.pd->context, &f.rng, o->commands);
	}
	tp_vlog("mmap and commands: %" PRIu64 " ms", tp_now_ms() - t0);
	ok = ok && fz_after(&f) && fz_connect(&f, true);
	fz_close(&f);
	if (ok && !tp_failures) {
		tp_log("PASS: fuzzer: seed %" PRIu64, o->seed);
		return 0;
	}
	tp_log("FAILED: fuzzer (seed %" PRIu64 "): %lu failed check(s)",
	       o->seed, tp_failures);
	return 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: siwx-local-fuzz -s | -c HOST [-p PORT] [-t SEC] "
		   "[-v] [-6] [-S SEED] [-n BATCHES] [-m COMMANDS]\n"
		   "A hostile local user of siwx; see local_fuzz.c.\n");
}

static bool opt(int ch, const char *arg, void *ctx)
{
	struct lf_opts *o = ctx;

	switch (ch) {
	case 'S':
		o->seed = tp_parse_u64(arg, "-S", 0, UINT64_MAX);
		return true;
	case 'n':
		o->batches = (unsigned int)tp_parse_u64(arg, "-n", 1, 1000000);
		return true;
	case 'm':
		o->commands = (unsigned int)tp_parse_u64(arg, "-m", 0,
							 10000000);
		return true;
	default:
		return false;
	}
}

int main(int argc, char **argv)
{
	struct lf_opts o = {
		.r = { .port = 18540, .timeout_ms = 20000 },
		.seed = 1, .batches = 200, .commands = 2000,
	};
	struct rdma_event_channel *ec;

	tp_prog = "siwx-local-fuzz";
	setvbuf(stdout, NULL, _IOLBF, 0);
	tp_role_parse_opts(argc, argv, &o.r, "S:n:m:", opt, &o, usage);
	ec = tp_channel();
	return o.r.server ? lf_server(&o, ec) : lf_client(&o, ec);
}
