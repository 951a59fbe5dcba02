// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-atomic-hammer: remote atomics from many QPs at one 64-bit word.
 *
 * Fetch-and-add mode (default): the client opens Q connections (one
 * rdma_cm id and one thread each); every QP does K IBV_WR_ATOMIC_FETCH_AND_ADD
 * of pseudo-random values (1..2^20) with up to ORD operations in flight.
 * Every returned original must lie in the counter's possible range; then all
 * Q*K (original, add) pairs, sorted by original, must form one unbroken
 * history: first original == initial value, each next original == previous
 * original + previous add, and the end of the chain == the counter's final
 * value. A lost, duplicated or torn update breaks the chain: this proves
 * the device executed the adds atomically. The initial value sits just below
 * a 32-bit boundary, so carries into the high word are exercised.
 *
 * CAS-lock mode (--cas-lock): the counter word is a spin lock taken with
 * IBV_WR_ATOMIC_CMP_AND_SWP (0 -> this QP's 64-bit token); the holder RDMA
 * Reads the record, increments it, RDMA Writes it back and releases with
 * CmpSwap (token -> 0), whose original must be the token. After Q*M
 * iterations the record must have grown by exactly Q*M (no lost update)
 * and the lock must be free. The release is posted right behind the Write
 * (the responder executes one stream in order; --wait-write waits for the
 * Write's completion first).
 *
 * --local-threads N (server): N threads also add to the word (or take the
 * lock) with CPU atomics while the remote operations run. That is only
 * atomic on devices reporting IBV_ATOMIC_GLOB; elsewhere the server refuses
 * (exit 77) rather than report a failure that is not one. The chain check
 * then becomes: originals strictly increasing with gaps >= the adds.
 *
 * --ex posts through the extended API (ibv_wr_atomic_fetch_add,
 * ibv_wr_atomic_cmp_swp, ibv_wr_rdma_read/write).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp_common.h"

#define HAM_MAGIC 0x5349575848414d31ULL		/* "SIWXHAM1" */
#define MODE_FADD 1
#define MODE_CAS 2
#define MAX_QPS 64
#define MAX_ADD (1u << 20)
#define COUNTER_INIT UINT64_C(0x7edcba98fff00000)	/* low word near 2^32 */
#define RECORD_INIT UINT64_C(0xfffffffd)		/* carry after 3 increments */
#define TOKEN_TAG UINT64_C(0x10c4ed0000000000)		/* lock owner: tag | id */
#define TOKEN_MASK UINT64_C(0xffffff0000000000)
#define MSG_LEN 64u
#define NREPORT 8				/* chain breaks printed */

struct opts {
	struct tp_role r;		/* -s/-c, -p, -t */
	const char *dev;
	uint32_t nqps;
	uint64_t iters;		/* K (fetch-add) or M (cas-lock) */
	bool iters_set;
	bool cas;
	uint32_t local_threads;
	uint64_t seed;
	bool ex;
	bool wait_write;
};

/* What the server tells every connection in its accept. */
struct target {
	uint64_t caddr, crkey, raddr, rrkey, cinit, rinit, local, atomic_cap;
};

struct pair {
	uint64_t orig, add;
};

struct worker {
	struct ctx *x;
	uint32_t i;
	pthread_t th;
	struct tp_conn c;
	/* Client fetch-add: results and adds; cas-lock: 4 words. */
	uint64_t *res;
	uint64_t *adds;
	uint64_t total;
	uint64_t contention;
	/* Server local thread. */
	uint64_t local_ops, local_sum;
};

struct ctx {
	struct opts o;
	uint64_t mode, nqps, iters, seed;
	struct rdma_event_channel *ec;
	struct ibv_pd *pd;
	struct worker w[MAX_QPS];
	struct tp_buf mem;		/* server: counter + record */
	struct tp_buf rec;
	struct tp_buf local;		/* client: results */
	struct tp_buf msg;
	struct target t;
	uint64_t *counter;
	uint64_t *record;
	int stop;
	struct worker lw[MAX_QPS];
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-atomic-hammer -s [-p PORT] [-t SEC] [--local-threads N] [-d DEV]\n"
"                          [--ex] [-v]\n"
"       siwx-atomic-hammer -c ADDR [-p PORT] [-q Q] [-k K] [--cas-lock [-M M]]\n"
"                          [--wait-write] [-S SEED] [-t SEC] [--ex] [-v]\n"
"Remote atomics from Q QPs at one word; proves atomicity (see the source).\n"
"  -s                 server (one run of Q connections, then exit)\n"
"  -c ADDR            client, connecting to ADDR\n"
"  -p PORT            rdma_cm port (default 18516)\n"
"  -q Q               QPs, each its own rdma_cm id and thread (default 4)\n"
"  -k K               fetch-adds per QP (default 2000)\n"
"  --cas-lock         CmpSwap spin lock around Read/increment/Write\n"
"  -M M               lock iterations per QP (default 200)\n"
"  --wait-write       cas-lock: wait for the Write's completion before the\n"
"                     release\n"
"  --local-threads N  server: N threads use CPU atomics on the same word\n"
"                     (needs IBV_ATOMIC_GLOB; else exit 77)\n"
"  -d DEV             server: device whose atomic_cap is checked for\n"
"                     --local-threads (default: the first)\n"
"  -S SEED            seed of the add values (default 1)\n"
"  -t SEC             time limit of each wait (default 60)\n"
"  -6                 server: listen on [::], IPv6 only\n"
"  --ex               post with the extended API (ibv_wr_atomic_*)\n"
"  -v                 verbose\n"
"Exit 0 only when every check passed; 77 when --local-threads is refused.\n");
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "cas-lock", no_argument, NULL, 'C' },
		{ "local-threads", required_argument, NULL, 'L' },
		{ "wait-write", no_argument, NULL, 'W' },
		{ "ex", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t m = 200;
	int ch;

	*o = (struct opts){ .r = { .port = 18516, .timeout_ms = 60000 },
			    .nqps = 4, .iters = 2000, .seed = 1 };
	while ((ch = getopt_long(argc, argv, TP_ROLE_OPTS "q:k:M:S:d:h", lo,
				 NULL)) != -1) {
		if (tp_role_opt(&o->r, ch, optarg))
			continue;
		switch (ch) {
		case 'd': o->dev = optarg; break;
		case 'q':
			o->nqps = tp_parse_u64(optarg, "-q", 1, MAX_QPS);
			break;
		case 'k':
			o->iters = tp_parse_u64(optarg, "-k", 1, 1u << 24);
			break;
		case 'M': m = tp_parse_u64(optarg, "-M", 1, 1u << 24); break;
		case 'C': o->cas = true; break;
		case 'W': o->wait_write = true; break;
		case 'L':
			o->local_threads = tp_parse_u64(optarg,
							"--local-threads", 0,
							MAX_QPS);
			break;
		case 'S': o->seed = tp_parse_u64(optarg, "-S", 0, UINT64_MAX); break;
		case 'x': o->ex = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (!tp_role_ok(&o->r, optind, argc) ||
	    (o->local_threads && !o->r.server)) {
		usage(stderr);
		exit(2);
	}
	if (o->cas)
		o->iters = m;
}

static struct tp_qp_opts qp_opts(const struct ctx *x)
{
	struct tp_qp_opts q = {
		.max_send_wr = 20,
		.max_recv_wr = 4,
		.max_sge = 1,
		.rd_atomic = 16,
	};

	if (x->o.ex)
		q.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
				   IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				   IBV_QP_EX_WITH_RDMA_READ |
				   IBV_QP_EX_WITH_RDMA_WRITE |
				   IBV_QP_EX_WITH_SEND;
	return q;
}

static uint8_t *msg_at(struct ctx *x, size_t off)
{
	return (uint8_t *)x->msg.addr + off;
}

/* Message on QP 0: send @w (nwords) and wait for its completion. */
static bool send_words(struct ctx *x, const uint64_t *w, size_t n)
{
	struct tp_conn *c = &x->w[0].c;
	int r;

	tp_pdata_put(msg_at(x, 0), w, n);
	r = tp_post_send(c, 77, msg_at(x, 0), MSG_LEN, x->msg.mr->lkey,
			 IBV_SEND_SIGNALED);
	if (r) {
		tp_fail("posting the Send: %s", strerror(r));
		return false;
	}
	return tp_wait_ok(c->scq, IBV_WC_SEND, 77, "Send on QP 0",
			  x->o.r.timeout_ms, NULL);
}

static bool post_msg_recv(struct ctx *x)
{
	int r = tp_post_recv(&x->w[0].c, 78, msg_at(x, MSG_LEN), MSG_LEN,
			     x->msg.mr->lkey);

	if (r)
		tp_fail("ibv_post_recv: %s", strerror(r));
	return !r;
}

static bool check_recv(struct ctx *x, const struct ibv_wc *wc, uint64_t *w,
		       size_t n, const char *what)
{
	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV ||
	    wc->byte_len != MSG_LEN) {
		tp_fail("%s: status %s, opcode %s, byte_len %u (expected "
			"IBV_WC_SUCCESS, IBV_WC_RECV, %u)", what,
			tp_wc_status_name(wc->status),
			tp_wc_opcode_name(wc->opcode), wc->byte_len, MSG_LEN);
		return false;
	}
	tp_pdata_get(msg_at(x, MSG_LEN), MSG_LEN, w, n);
	if (w[0] != HAM_MAGIC) {
		tp_fail("%s: not a siwx-atomic-hammer message", what);
		return false;
	}
	return true;
}

/* Server. */

static int device_atomic_cap(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_device_attr a;
	struct ibv_context *ctx = NULL;
	int i, cap = -1;

	for (i = 0; l && l[i]; i++) {
		if (name && strcmp(name, ibv_get_device_name(l[i])))
			continue;
		ctx = ibv_open_device(l[i]);
		break;
	}
	if (ctx) {
		if (!ibv_query_device(ctx, &a))
			cap = a.atomic_cap;
		tp_log("device %s: atomic_cap %s",
		       ibv_get_device_name(ctx->device),
		       cap < 0 ? "(query failed)" : tp_atomic_cap_name(cap));
		ibv_close_device(ctx);
	}
	if (l)
		ibv_free_device_list(l);
	return cap;
}

static void *local_fadd(void *arg)
{
	struct worker *w = arg;
	uint64_t st = tp_mix(w->x->seed + 99, w->i), add;

	while (!__atomic_load_n(&w->x->stop, __ATOMIC_RELAXED)) {
		add = 1 + tp_rand(&st) % 255;
		__atomic_fetch_add(w->x->counter, add, __ATOMIC_SEQ_CST);
		w->local_sum += add;
		w->local_ops++;
	}
	return NULL;
}

static void *local_lock(void *arg)
{
	struct worker *w = arg;
	struct ctx *x = w->x;
	uint64_t token = TOKEN_TAG | (x->nqps + 1 + w->i), zero, v;

	while (!__atomic_load_n(&x->stop, __ATOMIC_RELAXED)) {
		zero = 0;
		if (!__atomic_compare_exchange_n(x->counter, &zero, token,
						 false, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED)) {
			usleep(50);
			continue;
		}
		v = __atomic_load_n(x->record, __ATOMIC_RELAXED);
		__atomic_store_n(x->record, v + 1, __ATOMIC_RELAXED);
		w->local_ops++;
		v = token;
		if (!__atomic_compare_exchange_n(x->counter, &v, 0, false,
						 __ATOMIC_RELEASE,
						 __ATOMIC_RELAXED))
			tp_fail("local thread %u: lock word 0x%" PRIx64
				" instead of its token at release", w->i, v);
		usleep(100);
	}
	return NULL;
}

static bool server_first(struct ctx *x, struct tp_conn *c)
{
	uint64_t w[6];
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_device_attr a;

	if (!tp_pdata_get(c->peer_pdata, c->peer_pdata_len, w, 6) ||
	    w[0] != HAM_MAGIC || (w[1] != MODE_FADD && w[1] != MODE_CAS) ||
	    !w[3] || w[3] > MAX_QPS) {
		tp_fail("connect request without usable siwx-atomic-hammer "
			"private data");
		return false;
	}
	x->mode = w[1];
	x->nqps = w[3];
	x->iters = w[4];
	x->seed = w[5];
	x->pd = ibv_alloc_pd(c->id->verbs);
	if (!x->pd)
		tp_die("ibv_alloc_pd: %s", strerror(errno));
	tp_print_device(c->id->verbs, "server");
	/* Counter: 8-byte aligned at the start of its page. */
	if (!tp_buf_alloc(&x->mem, x->pd, 4096, 4096, acc) ||
	    !tp_buf_alloc(&x->rec, x->pd, 4096, 4096,
			  acc & ~IBV_ACCESS_REMOTE_ATOMIC) ||
	    !tp_buf_alloc(&x->msg, x->pd, 4096, 4096, IBV_ACCESS_LOCAL_WRITE))
		return false;
	x->counter = x->mem.addr;
	x->record = x->rec.addr;
	*x->counter = x->mode == MODE_FADD ? COUNTER_INIT : 0;
	*x->record = RECORD_INIT;
	x->t = (struct target){ (uintptr_t)x->counter, x->mem.mr->rkey,
				(uintptr_t)x->record, x->rec.mr->rkey,
				*x->counter, RECORD_INIT, x->o.local_threads,
				0 };
	if (!ibv_query_device(c->id->verbs, &a))
		x->t.atomic_cap = a.atomic_cap;
	return true;
}

static bool server_accept_one(struct ctx *x, struct tp_conn *c, bool *seen)
{
	struct tp_qp_opts q = qp_opts(x);
	uint64_t w[6];
	uint8_t pd[TP_ACCEPT_PDATA_MAX];

	tp_pdata_get(c->peer_pdata, c->peer_pdata_len, w, 6);
	if (w[0] != HAM_MAGIC || w[1] != x->mode || w[2] >= x->nqps ||
	    seen[w[2]] || w[3] != x->nqps) {
		tp_fail("connection with inconsistent parameters (index %"
			PRIu64 ")", w[2]);
		return false;
	}
	seen[w[2]] = true;
	/*
	 * The client connects its QPs one after another, but the CM may
	 * report the next CONNECT_REQUEST before this one's ESTABLISHED:
	 * each connection's events go to a channel of its own.
	 */
	tp_own_channel(c);
	c->pd = x->pd;
	if (!tp_setup_qp(c, &q))
		return false;
	tp_pdata_put(pd, &x->t.caddr, 8);
	x->w[w[2]].c = *c;
	if (w[2] == 0 && !post_msg_recv(x))
		return false;
	return tp_accept(&x->w[w[2]].c, pd, 64, 16, x->o.r.timeout_ms);
}

static bool server_connect_all(struct ctx *x, struct rdma_cm_id *listen)
{
	bool seen[MAX_QPS] = { false };
	struct tp_conn c;
	uint64_t i;

	for (i = 0; !i || i < x->nqps; i++) {
		if (!tp_get_request(x->ec, listen, &c, i ? x->o.r.timeout_ms :
			    600000))
			return false;
		if (!i && !server_first(x, &c))
			return false;
		if (!server_accept_one(x, &c, seen))
			return false;
	}
	tp_log("%" PRIu64 " connections: %s, %" PRIu64 " per QP, %u local "
	       "thread(s)", x->nqps, x->mode == MODE_FADD ? "fetch-add" :
	       "cas-lock", x->iters, x->o.local_threads);
	return true;
}

static void start_local(struct ctx *x)
{
	uint32_t i;

	for (i = 0; i < x->o.local_threads; i++) {
		x->lw[i].x = x;
		x->lw[i].i = i;
		if (pthread_create(&x->lw[i].th, NULL, x->mode == MODE_FADD ?
				   local_fadd : local_lock, &x->lw[i]))
			tp_die("pthread_create failed");
	}
}

static void stop_local(struct ctx *x, uint64_t *ops, uint64_t *sum)
{
	uint32_t i;

	__atomic_store_n(&x->stop, 1, __ATOMIC_RELAXED);
	*ops = *sum = 0;
	for (i = 0; i < x->o.local_threads; i++) {
		pthread_join(x->lw[i].th, NULL);
		*ops += x->lw[i].local_ops;
		*sum += x->lw[i].local_sum;
	}
}

/* The client's final message on QP 0; a disconnect before it fails. */
static bool server_wait_final(struct ctx *x, uint64_t *w)
{
	struct pollfd p = { .fd = x->w[0].c.ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	struct ibv_wc wc;
	int r;

	for (;;) {
		r = tp_poll(x->w[0].c.rcq, &wc, 200);
		if (r > 0)
			return check_recv(x, &wc, w, 4, "client's total");
		if (r < 0 || poll(&p, 1, 0) <= 0)
			continue;
		if (rdma_get_cm_event(x->w[0].c.ec, &ev))
			continue;
		tp_fail("rdma_cm event %s before the client's total",
			rdma_event_str(ev->event));
		rdma_ack_cm_event(ev);
		return false;
	}
}

static bool server_judge(struct ctx *x, const uint64_t *fin, uint64_t lops,
			 uint64_t lsum)
{
	uint64_t c = __atomic_load_n(x->counter, __ATOMIC_SEQ_CST);
	uint64_t r = *x->record, want;

	if (fin[3])
		tp_fail("the client reported %" PRIu64 " failed check(s)",
			fin[3]);
	if (x->mode == MODE_FADD) {
		want = COUNTER_INIT + fin[1] + lsum;
		if (c != want)
			tp_fail("counter 0x%" PRIx64 ", expected 0x%" PRIx64
				" = initial 0x%" PRIx64 " + remote adds %" PRIu64
				" + local adds %" PRIu64 " (difference %" PRId64
				")", c, want, COUNTER_INIT, fin[1], lsum,
				(int64_t)(c - want));
		return c == want;
	}
	want = RECORD_INIT + x->nqps * x->iters + lops;
	if (c)
		tp_fail("lock word 0x%" PRIx64 " at the end, expected 0 (free)",
			c);
	if (r != want)
		tp_fail("record %" PRIu64 ", expected %" PRIu64 " = %" PRIu64
			" + %" PRIu64 " QPs x %" PRIu64 " + %" PRIu64
			" local: %" PRId64 " lost update(s)", r, want,
			RECORD_INIT, x->nqps, x->iters, lops,
			(int64_t)(want - r));
	return !c && r == want;
}

/* Each connection's DISCONNECTED (10 s in all), then tear down. */
static void server_close_all(struct ctx *x)
{
	uint64_t i, end = tp_now_ms() + 10000;
	struct rdma_cm_event *ev;

	for (i = 0; i < x->nqps; i++) {
		struct pollfd p = { .fd = x->w[i].c.ec->fd, .events = POLLIN };
		bool down = false;
		uint64_t now;

		while (!down && (now = tp_now_ms()) < end &&
		       poll(&p, 1, (int)(end - now)) > 0 &&
		       !rdma_get_cm_event(x->w[i].c.ec, &ev)) {
			down = ev->event == RDMA_CM_EVENT_DISCONNECTED;
			rdma_ack_cm_event(ev);
		}
	}
	for (i = 0; i < x->nqps; i++)
		tp_destroy(&x->w[i].c);
}

static int run_server(struct ctx *x)
{
	struct rdma_cm_id *listen;
	uint64_t fin[4], lops = 0, lsum = 0, t0;
	bool ok = false;
	int cap;

	if (x->o.local_threads) {
		cap = device_atomic_cap(x->o.dev);
		if (cap != IBV_ATOMIC_GLOB) {
			tp_log("SKIP: refusing --local-threads: the device "
			       "reports %s; CPU atomics and remote atomics are "
			       "atomic with respect to each other only on "
			       "IBV_ATOMIC_GLOB devices, so a check would fail"
			       " without a device fault",
			       cap < 0 ? "nothing (no device?)" :
			       tp_atomic_cap_name(cap));
			return TP_EXIT_SKIP;
		}
	}
	listen = tp_listen(x->ec, x->o.r.port);
	if (!server_connect_all(x, listen))
		return 1;
	t0 = tp_now_ms();
	start_local(x);
	if (server_wait_final(x, fin)) {
		stop_local(x, &lops, &lsum);
		ok = server_judge(x, fin, lops, lsum);
	} else {
		stop_local(x, &lops, &lsum);
	}
	{
		uint64_t v[6] = { HAM_MAGIC, *x->counter, *x->record, lsum,
				  lops, tp_failures };

		send_words(x, v, 6);
	}
	ok = ok && !tp_failures;
	if (ok)
		tp_log("PASS: server: %s, %" PRIu64 " QPs x %" PRIu64
		       ": counter 0x%" PRIx64 ", record %" PRIu64 ", local "
		       "ops %" PRIu64 ", %.1f s", x->mode == MODE_FADD ?
		       "fetch-add" : "cas-lock", x->nqps, x->iters,
		       *x->counter, *x->record, lops,
		       (tp_now_ms() - t0) / 1000.0);
	else
		tp_log("FAILED: server: %lu failed check(s)", tp_failures);
	server_close_all(x);
	rdma_destroy_id(listen);
	return ok ? 0 : 1;
}

/* Client. */

static bool fadd_complete(struct worker *w, uint64_t k)
{
	struct ctx *x = w->x;
	char what[80];
	uint64_t orig, span;

	snprintf(what, sizeof(what), "QP %u fetch-add %" PRIu64, w->i, k);
	if (!tp_wait_ok(w->c.scq, IBV_WC_FETCH_ADD, k, what, x->o.r.timeout_ms,
			NULL))
		return false;
	orig = w->res[k];
	span = x->nqps * x->iters * MAX_ADD;
	if (orig < x->t.cinit || (!x->t.local && orig - x->t.cinit >= span)) {
		tp_fail("%s: returned original 0x%" PRIx64 " outside the "
			"possible range [0x%" PRIx64 ", 0x%" PRIx64 ")", what,
			orig, x->t.cinit, x->t.cinit + span);
		return false;
	}
	return true;
}

static void *client_fadd(void *arg)
{
	struct worker *w = arg;
	struct ctx *x = w->x;
	uint64_t st = tp_mix(x->seed, w->i), posted = 0, done = 0;
	uint64_t depth = w->c.rd_atomic < 16 ? w->c.rd_atomic : 16;
	int r;

	if (!depth) {
		tp_fail("QP %u: no initiator depth (ORD 0) for atomics", w->i);
		return NULL;
	}
	for (posted = 0; posted < x->iters; posted++) {
		w->adds[posted] = 1 + tp_rand(&st) % MAX_ADD;
		w->res[posted] = 0xdeadbeefdeadbeefULL;
		w->total += w->adds[posted];
	}
	for (posted = 0; done < x->iters;) {
		while (posted < x->iters && posted - done < depth) {
			r = tp_post_fadd(&w->c, posted, &w->res[posted],
					 x->local.mr->lkey, x->t.caddr,
					 (uint32_t)x->t.crkey, w->adds[posted],
					 IBV_SEND_SIGNALED);
			if (r) {
				tp_fail("QP %u: posting fetch-add %" PRIu64
					": %s", w->i, posted, strerror(r));
				return NULL;
			}
			posted++;
		}
		if (!fadd_complete(w, done++))
			return NULL;
	}
	return NULL;
}

/* One CmpSwap on the lock word; the original value lands in *res. */
static bool cas(struct worker *w, uint64_t *res, uint64_t cmp, uint64_t swp,
		const char *what)
{
	struct ctx *x = w->x;
	int r = tp_post_cas(&w->c, 1, res, x->local.mr->lkey, x->t.caddr,
			    (uint32_t)x->t.crkey, cmp, swp, IBV_SEND_SIGNALED);

	if (r) {
		tp_fail("QP %u: posting %s: %s", w->i, what, strerror(r));
		return false;
	}
	return tp_wait_ok(w->c.scq, IBV_WC_COMP_SWAP, 1, what, x->o.r.timeout_ms,
			  NULL);
}

static bool lock_acquire(struct worker *w, uint64_t token, uint64_t *st)
{
	uint64_t tries;

	for (tries = 0; tries < 10000000; tries++) {
		/* A failed QP may hold the lock forever: stop too. */
		if (__atomic_load_n(&tp_failures, __ATOMIC_RELAXED))
			return false;
		if (!cas(w, &w->res[0], 0, token, "lock acquire (CmpSwap 0->token)"))
			return false;
		if (!w->res[0])
			return true;
		if (w->res[0] == token) {
			tp_fail("QP %u: the lock word already holds our token "
				"(release lost)", w->i);
			return false;
		}
		if ((w->res[0] & TOKEN_MASK) != TOKEN_TAG) {
			tp_fail("QP %u: lock word 0x%" PRIx64 " is no owner's "
				"token", w->i, w->res[0]);
			return false;
		}
		w->contention++;
		usleep(20 + tp_rand(st) % 200);
	}
	tp_fail("QP %u: lock never acquired", w->i);
	return false;
}

static bool lock_iteration(struct worker *w, uint64_t token, uint64_t *last,
			   uint64_t *st)
{
	struct ctx *x = w->x;
	uint32_t lkey = x->local.mr->lkey;
	int r;

	if (!lock_acquire(w, token, st))
		return false;
	r = tp_post_read(&w->c, 2, &w->res[1], 8, lkey, x->t.raddr,
			 (uint32_t)x->t.rrkey, IBV_SEND_SIGNALED);
	if (r) {
		tp_fail("posting Read: %s", strerror(r));
		return false;
	}
	if (!tp_wait_ok(w->c.scq, IBV_WC_RDMA_READ, 2, "record Read",
			x->o.r.timeout_ms, NULL))
		return false;
	/* Equal is fine: nobody took the lock since our last Write. */
	if (*last && w->res[1] < *last) {
		tp_fail("QP %u: record %" PRIu64 " read under the lock, but "
			"this QP already wrote %" PRIu64 " (lost update)", w->i,
			w->res[1], *last);
		return false;
	}
	w->res[2] = w->res[1] + 1;
	*last = w->res[2];
	r = tp_post_write(&w->c, 3, &w->res[2], 8, lkey, x->t.raddr,
			  (uint32_t)x->t.rrkey, IBV_SEND_SIGNALED);
	if (r) {
		tp_fail("posting Write: %s", strerror(r));
		return false;
	}
	if (x->o.wait_write &&
	    !tp_wait_ok(w->c.scq, IBV_WC_RDMA_WRITE, 3, "record Write",
			x->o.r.timeout_ms, NULL))
		return false;
	r = tp_post_cas(&w->c, 4, &w->res[3], lkey, x->t.caddr,
			(uint32_t)x->t.crkey, token, 0, IBV_SEND_SIGNALED);
	if (r) {
		tp_fail("posting release: %s", strerror(r));
		return false;
	}
	if ((!x->o.wait_write &&
	     !tp_wait_ok(w->c.scq, IBV_WC_RDMA_WRITE, 3, "record Write",
			 x->o.r.timeout_ms, NULL)) ||
	    !tp_wait_ok(w->c.scq, IBV_WC_COMP_SWAP, 4,
			"lock release (CmpSwap token->0)", x->o.r.timeout_ms,
			NULL))
		return false;
	if (w->res[3] != token) {
		tp_fail("QP %u: at release the lock word held 0x%" PRIx64
			", not our token 0x%" PRIx64 " (mutual exclusion "
			"broken)", w->i, w->res[3], token);
		return false;
	}
	return true;
}

static void *client_lock(void *arg)
{
	struct worker *w = arg;
	uint64_t token = TOKEN_TAG | (w->i + 1), last = 0, it;
	uint64_t st = tp_mix(w->x->seed, w->i);

	for (it = 0; it < w->x->iters; it++)
		if (!lock_iteration(w, token, &last, &st))
			return NULL;
	w->total = w->x->iters;
	return NULL;
}

static bool client_connect_all(struct ctx *x)
{
	struct tp_qp_opts q = qp_opts(x);
	uint8_t pd[TP_CONNECT_PDATA_MAX];
	struct target t;
	uint64_t i;

	for (i = 0; i < x->nqps; i++) {
		uint64_t w[6] = { HAM_MAGIC, x->mode, i, x->nqps, x->iters,
				  x->seed };

		tp_pdata_put(pd, w, 6);
		x->w[i].x = x;
		x->w[i].i = (uint32_t)i;
		if (!tp_connect(&x->w[i].c, x->ec, x->o.r.host, x->o.r.port,
				&x->pd, &q, pd, 48, x->o.r.timeout_ms))
			return false;
		if (!tp_pdata_get(x->w[i].c.peer_pdata,
				  x->w[i].c.peer_pdata_len, &t.caddr, 8) ||
		    (i && memcmp(&t, &x->t, sizeof(t)))) {
			tp_fail("connection %" PRIu64 ": unusable or different"
				" target in the accept", i);
			return false;
		}
		x->t = t;
	}
	tp_print_device(x->w[0].c.id->verbs, "client");
	tp_log("server: atomic_cap %s, %" PRIu64 " local thread(s); %"
	       PRIu64 " QPs, ORD %u, %s, %" PRIu64 " per QP, %s API",
	       tp_atomic_cap_name(x->t.atomic_cap), x->t.local, x->nqps,
	       x->w[0].c.rd_atomic, x->mode == MODE_FADD ? "fetch-add" :
	       "cas-lock", x->iters, x->o.ex ? "extended" : "classic");
	return true;
}

static bool client_buffers(struct ctx *x)
{
	size_t per = x->mode == MODE_FADD ? x->iters * 8 : 64;
	uint64_t i;

	if (!tp_buf_alloc(&x->local, x->pd, per * x->nqps, per * x->nqps,
			  IBV_ACCESS_LOCAL_WRITE) ||
	    !tp_buf_alloc(&x->msg, x->pd, 4096, 4096, IBV_ACCESS_LOCAL_WRITE))
		return false;
	for (i = 0; i < x->nqps; i++) {
		x->w[i].res = (uint64_t *)((uint8_t *)x->local.addr + per * i);
		if (x->mode == MODE_FADD) {
			x->w[i].adds = calloc(x->iters, 8);
			if (!x->w[i].adds)
				tp_die("out of memory");
		}
	}
	return post_msg_recv(x);
}

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *p = a, *q = b;

	return p->orig < q->orig ? -1 : p->orig > q->orig;
}

/* Sorted by original, the adds must chain; returns the chain's end. */
static uint64_t check_history(struct ctx *x)
{
	uint64_t n = x->nqps * x->iters, i, j = 0, bad = 0, next;
	struct pair *p = calloc(n, sizeof(*p));

	if (!p)
		tp_die("out of memory");
	for (i = 0; i < x->nqps; i++)
		for (uint64_t k = 0; k < x->iters; k++, j++)
			p[j] = (struct pair){ x->w[i].res[k], x->w[i].adds[k] };
	qsort(p, n, sizeof(*p), cmp_pair);
	if (!x->t.local && p[0].orig != x->t.cinit)
		tp_fail("history: the smallest original 0x%" PRIx64 " is not "
			"the initial value 0x%" PRIx64, p[0].orig, x->t.cinit);
	for (i = 0; i + 1 < n; i++) {
		next = p[i].orig + p[i].add;
		if (p[i + 1].orig == next ||
		    (x->t.local && p[i + 1].orig > next))
			continue;
		if (bad++ < NREPORT)
			tp_fail("history broken: original 0x%" PRIx64 " + add %"
				PRIu64 " = 0x%" PRIx64 ", but the next original"
				" is 0x%" PRIx64 " (%s)", p[i].orig, p[i].add,
				next, p[i + 1].orig, p[i + 1].orig < next ?
				"overlapping: an add was lost or torn" :
				"gap: an add that nobody saw");
	}
	if (bad > NREPORT)
		tp_fail("history: %" PRIu64 " breaks in all", bad);
	next = p[n - 1].orig + p[n - 1].add;
	free(p);
	return next;
}

static void client_judge(struct ctx *x, const uint64_t *v, uint64_t total,
			 uint64_t chain_end)
{
	if (v[5])
		tp_fail("the server reported %" PRIu64 " failed check(s) "
			"(see its output)", v[5]);
	if (x->mode == MODE_FADD) {
		if (v[1] != x->t.cinit + total + v[3])
			tp_fail("final counter 0x%" PRIx64 ", expected 0x%"
				PRIx64, v[1], x->t.cinit + total + v[3]);
		if (!x->t.local && chain_end != v[1])
			tp_fail("history ends at 0x%" PRIx64 ", but the counter"
				" is 0x%" PRIx64, chain_end, v[1]);
		return;
	}
	if (v[2] != x->t.rinit + x->nqps * x->iters + v[4])
		tp_fail("final record %" PRIu64 ", expected %" PRIu64, v[2],
			x->t.rinit + x->nqps * x->iters + v[4]);
	if (v[1])
		tp_fail("lock word 0x%" PRIx64 " at the end, expected 0",
			v[1]);
}

static bool client_finish(struct ctx *x, uint64_t total, uint64_t *v)
{
	uint64_t fin[4] = { HAM_MAGIC, total, x->nqps * x->iters,
			    tp_failures };
	struct ibv_wc wc;

	if (!send_words(x, fin, 4))
		return false;
	if (tp_poll(x->w[0].c.rcq, &wc, x->o.r.timeout_ms) <= 0) {
		tp_fail("no verdict from the server");
		return false;
	}
	return check_recv(x, &wc, v, 6, "server's verdict");
}

static int run_client(struct ctx *x)
{
	uint64_t total = 0, cont = 0, end = 0, v[6], i, t0;
	bool ok;

	x->mode = x->o.cas ? MODE_CAS : MODE_FADD;
	x->nqps = x->o.nqps;
	x->iters = x->o.iters;
	x->seed = x->o.seed;
	if (!client_connect_all(x) || !client_buffers(x))
		return 1;
	t0 = tp_now_ms();
	for (i = 0; i < x->nqps; i++)
		if (pthread_create(&x->w[i].th, NULL, x->mode == MODE_FADD ?
				   client_fadd : client_lock, &x->w[i]))
			tp_die("pthread_create failed");
	for (i = 0; i < x->nqps; i++) {
		pthread_join(x->w[i].th, NULL);
		total += x->w[i].total;
		cont += x->w[i].contention;
	}
	t0 = tp_now_ms() - t0;
	if (!tp_failures && x->mode == MODE_FADD)
		end = check_history(x);
	ok = client_finish(x, total, v);
	if (ok)
		client_judge(x, v, total, end);
	ok = ok && !tp_failures;
	if (ok && x->mode == MODE_FADD)
		tp_log("PASS: client: %" PRIu64 " QPs x %" PRIu64 " fetch-add "
		       "(%s API): %s history from 0x%" PRIx64 " to 0x%" PRIx64
		       " (server's counter agrees), %.1f s, %.0f ops/s",
		       x->nqps, x->iters, x->o.ex ? "extended" : "classic",
		       x->t.local ? "gapped (local threads)" : "unbroken",
		       x->t.cinit, v[1], t0 / 1000.0,
		       x->nqps * x->iters * 1000.0 / (t0 ? t0 : 1));
	else if (ok)
		tp_log("PASS: client: %" PRIu64 " QPs x %" PRIu64 " cas-lock "
		       "iterations (%s API): record %" PRIu64 " = %" PRIu64
		       " + %" PRIu64 " (+%" PRIu64 " local), lock free, %"
		       PRIu64 " contended acquires, %.1f s", x->nqps, x->iters,
		       x->o.ex ? "extended" : "classic", v[2], x->t.rinit,
		       x->nqps * x->iters, v[4], cont, t0 / 1000.0);
	else
		tp_log("FAILED: client: %lu failed check(s)", tp_failures);
	for (i = 0; i < x->nqps; i++)
		tp_close(&x->w[i].c, 2000);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	static struct ctx x;

	tp_prog = "siwx-atomic-hammer";
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv, &x.o);
	x.ec = tp_channel();
	return x.o.r.server ? run_server(&x) : run_client(&x);
}
