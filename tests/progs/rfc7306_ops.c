// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-rfc7306-ops: RFC 7306 operations with known operands, for three
 * checks the other programs do not make.
 *
 * --mode masked: masked FetchAdd and masked CmpSwap (RFC 7306 section
 *   5.1) through the provider's direct verbs (siwxdv.h, resolved from the
 *   loaded libsiwx at run time), one case per target word: carries across
 *   and stopped at field boundaries, partial masks, compare hits and
 *   misses. The original value each returns, and the target the client
 *   reads back with an RDMA Read (and the server finds in its memory at
 *   the end), must equal what the protocol core's pure functions
 *   (core/rfc7306.c, compiled into this program) compute.
 *
 * --mode wire: one plain verbs FetchAdd and one CmpSwap with fixed
 *   operands, then four RDMA Writes with Immediate (32 bytes and zero
 *   length, each without and with IBV_SEND_SOLICITED). Both ends check
 *   results and completions; the client prints "WIRE ..." lines with what
 *   must be on the wire, for the capture assertions of the scenario
 *   (tests/vm/scenarios/siwx-rfc7306-wire).
 *
 * --mode foreign: the responder is a device without RFC 7306 (upstream
 *   siw): a FetchAdd, a CmpSwap, and a write-with-imm followed by an RDMA
 *   Read, each on its own connection. siw answers the unknown RDMAP
 *   opcode with a Terminate and drops the connection. The requester's
 *   statuses must be exactly the expected ones, the QP must be in ERROR
 *   afterwards (a later Send is flushed), nothing may hang, and the
 *   server must survive, see no successful receive and find its atomic
 *   targets unchanged; each connection's QP gets IBV_EVENT_QP_FATAL.
 *   Default expectations (siwx, docs/protocol-decisions.md, "A Terminate
 *   from the peer"):
 *     fa, cas    IBV_WC_REM_OP_ERR: the Terminate completes the oldest
 *                outstanding Read/Atomic, the refused request itself.
 *     wimm       IBV_WC_SUCCESS: an RDMA Write completes once sent;
 *                Immediate Data has no response (RFC 7306 section 6), so
 *                the refusal cannot reach this completion.
 *     wimm-read  IBV_WC_REM_OP_ERR: siw echoes no header in its
 *                Terminate (HdrCt 0), so siwx cannot tell that the
 *                refused message was the Immediate Data and completes the
 *                oldest outstanding Read with the error, although siw
 *                never saw that Read (it stopped at the Immediate Data).
 *
 * The server serves connections until the client's last one (the client
 * says in its connect private data which one that is).
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <siwx/proto/rfc7306.h>

#include "tp_common.h"

#define OPS_MAGIC 0x5349575852464f31ULL	/* "SIWXRFO1" */
#define MODE_MASKED 1
#define MODE_WIRE 2
#define MODE_FOREIGN 3
#define REGION 4096u
#define WORDS 64u			/* atomic targets at the start */
#define WIMM_OFF 1024u			/* write-with-imm targets */
#define WIMM_STRIDE 64u
#define WIMM_LEN 32u
#define NRECV 8u
#define RECV_BUF 64u
#define CANARY 0xa5
#define ALL_ONES UINT64_C(0xffffffffffffffff)

/* Masked atomic cases: word i of the region is case i's target. */
struct mcase {
	const char *what;
	bool cas;
	uint64_t orig;
	uint64_t data;		/* Add Data or Swap Data */
	uint64_t mask;		/* Add Mask or Swap Mask */
	uint64_t cmp, cmp_mask;
};

static const struct mcase mcases[] = {
	{ "fa carry across bit 31, mask 0", false, 0xffffffffULL, 1, 0,
	  0, 0 },
	{ "fa carry stopped at bit 31", false, 0xffffffffULL, 1,
	  0x80000000ULL, 0, 0 },
	{ "fa four 16-bit fields wrap", false, ALL_ONES,
	  0x0001000100010001ULL, 0x8000800080008000ULL, 0, 0 },
	{ "fa 16-bit fields, carry inside fields", false,
	  0x00ff7fff80000001ULL, 0x0001000180017fffULL,
	  0x8000800080008000ULL, 0, 0 },
	{ "fa wrap of 64 bits, mask 0", false, ALL_ONES, 1, 0, 0, 0 },
	{ "fa mask bit 63 only", false, 0x7fffffffffffffffULL, 1,
	  0x8000000000000000ULL, 0, 0 },
	{ "fa low byte all boundaries (xor)", false, 0x1ffULL, 0x1ULL,
	  0xffULL, 0, 0 },
	{ "fa all ones mask (xor)", false, 0x123456789abcdef0ULL,
	  0x0f0f0f0f0f0f0f0fULL, ALL_ONES, 0, 0 },
	{ "fa two 32-bit fields", false, 0x00000001ffffffffULL,
	  0xffffffff00000002ULL, 0x8000000080000000ULL, 0, 0 },
	{ "cas full hit", true, 0x0123456789abcdefULL, 0xfedcba9876543210ULL,
	  ALL_ONES, 0x0123456789abcdefULL, ALL_ONES },
	{ "cas full miss (one bit)", true, 0x0123456789abcdefULL,
	  0xfedcba9876543210ULL, ALL_ONES, 0x0123456789abcdeeULL, ALL_ONES },
	{ "cas partial compare hit, partial swap", true,
	  0x1111222233334444ULL, 0xaaaabbbbccccddddULL, 0x00000000ffff0000ULL,
	  0x1111000000000000ULL, 0xffff000000000000ULL },
	{ "cas partial compare miss", true, 0x1111222233334444ULL,
	  0xaaaabbbbccccddddULL, 0x00000000ffff0000ULL,
	  0x1112000000000000ULL, 0xffff000000000000ULL },
	{ "cas compare ignores bits outside mask", true,
	  0xdeadbeef00000000ULL, 0x5555555555555555ULL, 0x0f0f0f0f0f0f0f0fULL,
	  0xdeadbeefffffffffULL, 0xffffffff00000000ULL },
	{ "cas compare mask 0 (always), swap mask 0", true,
	  0x0123456789abcdefULL, ALL_ONES, 0, 0x42, 0 },
	{ "cas compare mask 0, swap odd bits", true, 0, ALL_ONES,
	  0xaaaaaaaaaaaaaaaaULL, 0x42, 0 },
};

#define NMCASES (sizeof(mcases) / sizeof(mcases[0]))

/* Wire mode operands. */
#define W_FA_ORIG UINT64_C(0x0102030405060708)
#define W_FA_ADD UINT64_C(0x1111111111111111)
#define W_CAS_ORIG UINT64_C(0x1122334455667788)
#define W_CAS_SWAP UINT64_C(0x8877665544332211)

struct wimm {
	uint32_t len;
	bool se;
	uint32_t imm;		/* host order; posted as htonl(imm) */
};

static const struct wimm wimms[] = {
	{ WIMM_LEN, false, 0xa1b2c3d4 },
	{ 0, false, 0x0a0b0c0d },
	{ WIMM_LEN, true, 0xc0ffee01 },
	{ 0, true, 0x5ec0de55 },
};

#define NWIMM (sizeof(wimms) / sizeof(wimms[0]))

/* Foreign mode cases, one connection each. */
enum { F_FA, F_CAS, F_WIMM, F_WIMM_READ, NFEXP };

static const char *const fexp_names[NFEXP] = {
	[F_FA] = "fa", [F_CAS] = "cas", [F_WIMM] = "wimm",
	[F_WIMM_READ] = "wimm-read",
};

struct opts {
	struct tp_role r;		/* -s/-c, -p, -t */
	int mode;
	int fexp[NFEXP];
};

struct ctx {
	struct opts o;
	struct rdma_event_channel *ec;
	struct ibv_pd *pd;
	struct tp_conn c;
	struct tp_buf local, rbuf, msg;
	/* Server: the region. */
	void *region;
	struct ibv_mr *mr;
	bool atomic_ok;
	/* Client: the server's region. */
	uint64_t raddr;
	uint32_t rkey;
};

static uint64_t *word(struct ctx *x, unsigned int i)
{
	return (uint64_t *)x->region + i;
}

static uint64_t mcase_result(const struct mcase *m)
{
	if (m->cas)
		return siwx_cmp_swap_masked(m->orig, m->cmp, m->cmp_mask,
					    m->data, m->mask);
	return siwx_fetch_add_masked(m->orig, m->data, m->mask);
}

static uint8_t wimm_byte(unsigned int k, unsigned int i)
{
	return (uint8_t)(0x30 + 7 * k + i);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-rfc7306-ops -s [-p PORT] [-t SEC] [-v]\n"
"       siwx-rfc7306-ops -c ADDR --mode masked|wire|foreign [-p PORT]\n"
"                        [--expect CASE=STATUS]... [-t SEC] [-v]\n"
"RFC 7306 operations with known operands (see the source).\n"
"  -s               server (serves until the client's last connection)\n"
"  -c ADDR          client, connecting to ADDR\n"
"  -p PORT          rdma_cm port (default 18519)\n"
"  --mode M         masked: masked atomics vs the protocol core;\n"
"                   wire: fixed operations for capture assertions;\n"
"                   foreign: RFC 7306 operations against a responder\n"
"                   without RFC 7306 (upstream siw)\n"
"  --expect C=S     foreign mode: the requester status of case C (fa, cas,\n"
"                   wimm, wimm-read: the Read posted after the write-with-\n"
"                   imm); defaults fa=cas=REM_OP_ERR, wimm=SUCCESS,\n"
"                   wimm-read=REM_OP_ERR (see the source)\n"
"  -t SEC           time limit of each wait (default 60)\n"
"  -6               server: listen on [::], IPv6 only\n"
"  -v               verbose\n");
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "mode", required_argument, NULL, 'M' },
		{ "expect", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *eq;
	int ch, i, st;

	*o = (struct opts){ .r = { .port = 18519, .timeout_ms = 60000 } };
	o->fexp[F_FA] = IBV_WC_REM_OP_ERR;
	o->fexp[F_CAS] = IBV_WC_REM_OP_ERR;
	o->fexp[F_WIMM] = IBV_WC_SUCCESS;
	o->fexp[F_WIMM_READ] = IBV_WC_REM_OP_ERR;
	while ((ch = getopt_long(argc, argv, TP_ROLE_OPTS "h", lo, NULL)) != -1) {
		if (tp_role_opt(&o->r, ch, optarg))
			continue;
		switch (ch) {
		case 'M':
			o->mode = !strcmp(optarg, "masked") ? MODE_MASKED :
				  !strcmp(optarg, "wire") ? MODE_WIRE :
				  !strcmp(optarg, "foreign") ? MODE_FOREIGN : 0;
			if (!o->mode)
				tp_die("unknown --mode %s", optarg);
			break;
		case 'E':
			eq = strchr(optarg, '=');
			if (!eq)
				tp_die("--expect %s: CASE=STATUS", optarg);
			*eq = 0;
			st = tp_wc_status_parse(eq + 1);
			for (i = 0; i < NFEXP; i++)
				if (!strcmp(optarg, fexp_names[i]))
					break;
			if (i == NFEXP || st < 0)
				tp_die("--expect %s=%s: unknown case or status",
				       optarg, eq + 1);
			o->fexp[i] = st;
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (!tp_role_ok(&o->r, optind, argc) ||
	    (!o->r.server && !o->mode)) {
		usage(stderr);
		exit(2);
	}
}

/* Server. */

static void region_init(struct ctx *x, int mode)
{
	unsigned int i;

	memset(x->region, CANARY, REGION);
	for (i = 0; i < WORDS; i++)
		*word(x, i) = tp_mix(0x7306, i);
	if (mode == MODE_MASKED)
		for (i = 0; i < NMCASES; i++)
			*word(x, i) = mcases[i].orig;
	if (mode == MODE_WIRE) {
		*word(x, 0) = W_FA_ORIG;
		*word(x, 1) = W_CAS_ORIG;
	}
}

/* What the region must hold after the client's operations. */
static void region_check(struct ctx *x, int mode)
{
	const uint8_t *b = x->region;
	unsigned int i, k;
	uint64_t want;

	for (i = 0; i < WORDS; i++) {
		want = tp_mix(0x7306, i);
		if (mode == MODE_MASKED && i < NMCASES)
			want = mcase_result(&mcases[i]);
		if (mode == MODE_WIRE && i == 0)
			want = W_FA_ORIG + W_FA_ADD;
		if (mode == MODE_WIRE && i == 1)
			want = W_CAS_SWAP;
		if (*word(x, i) != want)
			tp_fail("server memory: word %u is 0x%016" PRIx64
				", expected 0x%016" PRIx64 "%s%s", i,
				*word(x, i), want,
				mode == MODE_MASKED && i < NMCASES ? ": " : "",
				mode == MODE_MASKED && i < NMCASES ?
				mcases[i].what : "");
	}
	if (mode != MODE_WIRE)
		return;
	for (k = 0; k < NWIMM; k++)
		for (i = 0; i < WIMM_STRIDE; i++) {
			uint8_t w = i < wimms[k].len ? wimm_byte(k, i) : CANARY;
			uint8_t got = b[WIMM_OFF + k * WIMM_STRIDE + i];

			if (got != w) {
				tp_fail("server memory: write-with-imm %u, byte"
					" %u is 0x%02x, expected 0x%02x", k, i,
					got, w);
				break;
			}
		}
}

static bool server_post_recv(struct ctx *x, uint32_t i)
{
	uint8_t *b = (uint8_t *)x->rbuf.addr + (size_t)i * RECV_BUF;
	int r;

	memset(b, CANARY, RECV_BUF);
	r = tp_post_recv(&x->c, i, b, RECV_BUF, x->rbuf.mr->lkey);
	if (r)
		tp_fail("ibv_post_recv: %s", strerror(r));
	return !r;
}

/* Wire mode: the write-with-imm completions, in posting order. */
static void server_check_recv(const struct ibv_wc *wc, unsigned int k,
			      int mode)
{
	if (mode == MODE_FOREIGN) {
		if (wc->status == IBV_WC_SUCCESS)
			tp_fail("foreign: a receive completed successfully "
				"(opcode %s, byte_len %u): siw cannot deliver "
				"Immediate Data", tp_wc_opcode_name(wc->opcode),
				wc->byte_len);
		return;
	}
	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		return;		/* the connection's end flushes the rest */
	if (mode != MODE_WIRE || k >= NWIMM) {
		tp_fail("unexpected receive completion %u (status %s, opcode"
			" %s)", k, tp_wc_status_name(wc->status),
			tp_wc_opcode_name(wc->opcode));
		return;
	}
	if (wc->status != IBV_WC_SUCCESS ||
	    wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
	    !(wc->wc_flags & IBV_WC_WITH_IMM) ||
	    ntohl(wc->imm_data) != wimms[k].imm ||
	    wc->byte_len != wimms[k].len || wc->wr_id != k)
		tp_fail("write-with-imm %u: status %s, opcode %s, flags 0x%x,"
			" imm 0x%08x, byte_len %u, wr_id %" PRIu64
			"; expected SUCCESS, RECV_RDMA_WITH_IMM, WITH_IMM, imm "
			"0x%08x, byte_len %u, wr_id %u", k,
			tp_wc_status_name(wc->status),
			tp_wc_opcode_name(wc->opcode), wc->wc_flags,
			ntohl(wc->imm_data), wc->byte_len,
			(uint64_t)wc->wr_id, wimms[k].imm, wimms[k].len, k);
	else
		tp_log("write-with-imm %u: imm 0x%08x, byte_len %u%s: ok", k,
		       wimms[k].imm, wimms[k].len,
		       wimms[k].se ? " (solicited)" : "");
}

/*
 * Serve one connection until the peer disconnects or the connection
 * breaks (a Terminate ends it without a clean disconnect). Receive
 * completions are checked as they come.
 */
static bool server_conn(struct ctx *x, int mode)
{
	struct pollfd p = { .fd = x->ec->fd, .events = POLLIN };
	uint64_t deadline = tp_now_ms() + (uint64_t)x->o.r.timeout_ms;
	struct rdma_cm_event *ev;
	unsigned int nrc = 0;
	struct ibv_wc wc;
	bool done = false;

	while (!done) {
		while (ibv_poll_cq(x->c.rcq, 1, &wc) > 0)
			server_check_recv(&wc, nrc++, mode);
		if (tp_now_ms() > deadline) {
			tp_fail("the connection did not end within %d ms",
				x->o.r.timeout_ms);
			return false;
		}
		if (poll(&p, 1, 10) <= 0)
			continue;
		if (rdma_get_cm_event(x->ec, &ev))
			continue;
		tp_vlog("rdma_cm event %s", rdma_event_str(ev->event));
		done = ev->id == x->c.id &&
		       (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
			ev->event == RDMA_CM_EVENT_CONNECT_ERROR);
		rdma_ack_cm_event(ev);
	}
	/* What came in before the end, then the flushed rest. */
	while (ibv_poll_cq(x->c.rcq, 1, &wc) > 0)
		server_check_recv(&wc, nrc++, mode);
	if (mode == MODE_WIRE && nrc < NWIMM)
		tp_fail("only %u receive completions, expected %zu", nrc,
			NWIMM);
	return true;
}

static int run_server(struct ctx *x)
{
	struct rdma_cm_id *listen = tp_listen(x->ec, x->o.r.port);
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ;
	uint8_t pd[TP_ACCEPT_PDATA_MAX];
	struct tp_qp_opts q = { .max_send_wr = 4, .max_recv_wr = NRECV,
				.max_sge = 1 };
	uint64_t w[4];
	bool last = false;
	unsigned int n = 0, i;
	int mode;

	if (posix_memalign(&x->region, 4096, REGION))
		tp_die("out of memory");
	while (!last) {
		if (!tp_get_request(x->ec, listen, &x->c, 600000))
			return 1;
		if (!tp_pdata_get(x->c.peer_pdata, x->c.peer_pdata_len, w, 3) ||
		    w[0] != OPS_MAGIC)
			tp_die("connect request without siwx-rfc7306-ops data");
		mode = (int)w[1];
		last = w[2];
		if (!x->pd) {
			x->pd = ibv_alloc_pd(x->c.id->verbs);
			if (!x->pd)
				tp_die("ibv_alloc_pd: %s", strerror(errno));
			tp_print_device(x->c.id->verbs, "server");
			/* siw may refuse the remote atomic right. */
			x->mr = ibv_reg_mr(x->pd, x->region, REGION,
					   acc | IBV_ACCESS_REMOTE_ATOMIC);
			x->atomic_ok = x->mr;
			if (!x->mr)
				x->mr = ibv_reg_mr(x->pd, x->region, REGION,
						   acc);
			if (!x->mr)
				tp_die("ibv_reg_mr: %s", strerror(errno));
			if (!tp_buf_alloc(&x->rbuf, x->pd, NRECV * RECV_BUF,
					  NRECV * RECV_BUF,
					  IBV_ACCESS_LOCAL_WRITE))
				return 1;
		}
		x->c.pd = x->pd;
		region_init(x, mode);
		if (!tp_setup_qp(&x->c, &q))
			return 1;
		for (i = 0; i < NRECV; i++)
			if (!server_post_recv(x, i))
				return 1;
		w[1] = (uintptr_t)x->region;
		w[2] = x->mr->rkey;
		w[3] = x->atomic_ok;
		tp_pdata_put(pd, w, 4);
		if (!tp_accept(&x->c, pd, 32, 4, x->o.r.timeout_ms))
			return 1;
		tp_log("connection %u (mode %d%s): region 0x%" PRIx64
		       " rkey 0x%08x%s", n, mode, last ? ", last" : "",
		       (uint64_t)(uintptr_t)x->region, x->mr->rkey,
		       x->atomic_ok ? "" : " (no remote atomic right)");
		server_conn(x, mode);
		region_check(x, mode);
		tp_destroy(&x->c);
		n++;
	}
	rdma_destroy_id(listen);
	if (tp_failures) {
		tp_log("FAILED: server: %lu failed check(s)", tp_failures);
		return 1;
	}
	tp_log("PASS: server: %u connection(s), memory and completions as "
	       "expected", n);
	return 0;
}

/* Client. */

static bool client_connect(struct ctx *x, uint64_t send_ops, bool last)
{
	struct tp_qp_opts q = { .max_send_wr = 32, .max_recv_wr = 4,
				.max_sge = 1, .rd_atomic = 4,
				.send_ops_flags = send_ops };
	uint8_t pd[TP_CONNECT_PDATA_MAX];
	uint64_t w[4] = { OPS_MAGIC, (uint64_t)x->o.mode, last };

	tp_pdata_put(pd, w, 3);
	if (!tp_connect(&x->c, x->ec, x->o.r.host, x->o.r.port, &x->pd, &q, pd,
			24, x->o.r.timeout_ms))
		return false;
	if (!tp_pdata_get(x->c.peer_pdata, x->c.peer_pdata_len, w, 4) ||
	    w[0] != OPS_MAGIC) {
		tp_fail("the server's accept carries no usable private data");
		return false;
	}
	x->raddr = w[1];
	x->rkey = (uint32_t)w[2];
	if (!x->local.mr &&
	    !tp_buf_alloc(&x->local, x->pd, REGION, REGION,
			  IBV_ACCESS_LOCAL_WRITE))
		return false;
	return true;
}

/* The whole remote region into x->local, by RDMA Read. */
static bool client_read_back(struct ctx *x, uint64_t wr_id)
{
	int r;

	memset(x->local.addr, 0, REGION);
	r = tp_post_read(&x->c, wr_id, x->local.addr, REGION,
			 x->local.mr->lkey, x->raddr, x->rkey,
			 IBV_SEND_SIGNALED);
	if (r) {
		tp_fail("posting the RDMA Read: %s", strerror(r));
		return false;
	}
	return tp_wait_ok(x->c.scq, IBV_WC_RDMA_READ, wr_id, "read-back",
			  x->o.r.timeout_ms, NULL);
}

typedef void (*dv_fa_t)(struct ibv_qp_ex *, uint32_t, uint64_t, uint64_t,
			uint64_t);
typedef void (*dv_cas_t)(struct ibv_qp_ex *, uint32_t, uint64_t, uint64_t,
			 uint64_t, uint64_t, uint64_t);
typedef bool (*dv_sup_t)(struct ibv_device *);

static int client_masked(struct ctx *x)
{
	uint64_t ops = IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		       IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_SEND;
	uint64_t *res, *back, want;
	const char *lib = getenv("SIWXDV_LIB");
	const char *loaded = NULL;
	struct ibv_wc wc;
	unsigned int i;
	dv_fa_t fa;
	dv_cas_t cas;
	dv_sup_t sup;
	void *h;
	int r;

	if (!client_connect(x, ops, true))
		return 1;
	/*
	 * libibverbs has loaded the provider, named for the private ABI of
	 * this libibverbs (libsiwx-rdmav<N>.so): take that very copy.
	 */
	if (!lib) {
		loaded = tp_loaded_siwx_provider();
		if (!loaded)
			tp_die("libibverbs has loaded no libsiwx-rdmav*.so");
		lib = loaded;
	}
	h = dlopen(lib, RTLD_NOW);
	if (!h)
		tp_die("dlopen(%s): %s", lib, dlerror());
	sup = (dv_sup_t)dlsym(h, "siwxdv_is_supported");
	fa = (dv_fa_t)dlsym(h, "siwxdv_wr_masked_fetch_add");
	cas = (dv_cas_t)dlsym(h, "siwxdv_wr_masked_cmp_swp");
	if (!sup || !fa || !cas)
		tp_die("libsiwx lacks the siwxdv symbols: %s", dlerror());
	if (!sup(x->c.id->verbs->device)) {
		tp_log("the device is not a siwx device: masked atomics are "
		       "siwx direct verbs");
		return TP_EXIT_SKIP;
	}
	res = (uint64_t *)x->local.addr + WORDS;
	for (i = 0; i < NMCASES; i++)
		res[i] = UINT64_C(0x5e5e5e5e5e5e5e5e);	/* no case's value */
	for (i = 0; i < NMCASES; i++) {
		const struct mcase *m = &mcases[i];

		ibv_wr_start(x->c.qpx);
		x->c.qpx->wr_id = i;
		x->c.qpx->wr_flags = IBV_SEND_SIGNALED;
		if (m->cas)
			cas(x->c.qpx, x->rkey, x->raddr + 8 * i, m->cmp,
			    m->cmp_mask, m->data, m->mask);
		else
			fa(x->c.qpx, x->rkey, x->raddr + 8 * i, m->data,
			   m->mask);
		ibv_wr_set_sge(x->c.qpx, x->local.mr->lkey,
			       (uintptr_t)&res[i], 8);
		r = ibv_wr_complete(x->c.qpx);
		if (r) {
			tp_fail("case %u (%s): posting: %s", i, m->what,
				strerror(r));
			return 1;
		}
	}
	for (i = 0; i < NMCASES; i++) {
		const struct mcase *m = &mcases[i];

		if (!tp_wait_ok(x->c.scq, m->cas ? IBV_WC_COMP_SWAP :
				IBV_WC_FETCH_ADD, i, m->what, x->o.r.timeout_ms,
				&wc))
			return 1;
		if (res[i] != m->orig)
			tp_fail("case %u (%s): returned original 0x%016" PRIx64
				", expected 0x%016" PRIx64, i, m->what, res[i],
				m->orig);
	}
	/* The targets now, as the responder's memory holds them. */
	if (!client_read_back(x, 1000))
		return 1;
	back = x->local.addr;
	for (i = 0; i < NMCASES; i++) {
		const struct mcase *m = &mcases[i];

		want = mcase_result(m);
		if (back[i] != want)
			tp_fail("case %u (%s): target 0x%016" PRIx64 " after "
				"the operation, the core computes 0x%016" PRIx64
				" (orig 0x%016" PRIx64 ", data 0x%016" PRIx64
				", mask 0x%016" PRIx64 ", compare 0x%016"
				PRIx64 "/0x%016" PRIx64 ")", i, m->what,
				back[i], want, m->orig, m->data, m->mask,
				m->cmp, m->cmp_mask);
		else
			tp_vlog("case %u (%s): 0x%016" PRIx64 " -> 0x%016"
				PRIx64 ": ok", i, m->what, m->orig, want);
	}
	tp_close(&x->c, 5000);
	if (tp_failures) {
		tp_log("FAILED: client: %lu failed check(s)", tp_failures);
		return 1;
	}
	tp_log("PASS: client: %zu masked atomics: returned originals and "
	       "targets equal the protocol core's", NMCASES);
	return 0;
}

static int client_wire(struct ctx *x)
{
	uint64_t *res;
	unsigned int k;
	int r;

	if (!client_connect(x, 0, true))
		return 1;
	res = (uint64_t *)x->local.addr + WORDS;
	res[0] = res[1] = 0;
	memset((uint8_t *)x->local.addr + WIMM_OFF, 0, WIMM_STRIDE * NWIMM);
	r = tp_post_fadd(&x->c, 1, &res[0], x->local.mr->lkey, x->raddr,
			 x->rkey, W_FA_ADD, IBV_SEND_SIGNALED);
	if (!r)
		r = tp_post_cas(&x->c, 2, &res[1], x->local.mr->lkey,
				x->raddr + 8, x->rkey, W_CAS_ORIG, W_CAS_SWAP,
				IBV_SEND_SIGNALED);
	if (r) {
		tp_fail("posting the atomics: %s", strerror(r));
		return 1;
	}
	if (!tp_wait_ok(x->c.scq, IBV_WC_FETCH_ADD, 1, "FetchAdd",
			x->o.r.timeout_ms, NULL) ||
	    !tp_wait_ok(x->c.scq, IBV_WC_COMP_SWAP, 2, "CmpSwap",
			x->o.r.timeout_ms, NULL))
		return 1;
	if (res[0] != W_FA_ORIG || res[1] != W_CAS_ORIG)
		tp_fail("atomic originals 0x%016" PRIx64 ", 0x%016" PRIx64
			"; expected 0x%016" PRIx64 ", 0x%016" PRIx64, res[0],
			res[1], W_FA_ORIG, W_CAS_ORIG);
	printf("WIRE fa stag=0x%08x to=0x%016" PRIx64 " add=0x%016" PRIx64
	       " orig=0x%016" PRIx64 "\n", x->rkey, x->raddr, W_FA_ADD,
	       W_FA_ORIG);
	printf("WIRE cas stag=0x%08x to=0x%016" PRIx64 " compare=0x%016"
	       PRIx64 " swap=0x%016" PRIx64 " orig=0x%016" PRIx64 "\n",
	       x->rkey, x->raddr + 8, W_CAS_ORIG, W_CAS_SWAP, W_CAS_ORIG);
	for (k = 0; k < NWIMM; k++) {
		uint8_t *src = (uint8_t *)x->local.addr + WIMM_OFF +
			       k * WIMM_STRIDE;
		uint64_t to = x->raddr + WIMM_OFF + k * WIMM_STRIDE;
		unsigned int i;

		for (i = 0; i < wimms[k].len; i++)
			src[i] = wimm_byte(k, i);
		r = tp_post_write_imm(&x->c, 10 + k, src, wimms[k].len,
				      x->local.mr->lkey, to, x->rkey,
				      wimms[k].imm, IBV_SEND_SIGNALED |
				      (wimms[k].se ? IBV_SEND_SOLICITED : 0));
		if (r) {
			tp_fail("posting write-with-imm %u: %s", k,
				strerror(r));
			return 1;
		}
		if (!tp_wait_ok(x->c.scq, IBV_WC_RDMA_WRITE, 10 + k,
				"write-with-imm", x->o.r.timeout_ms, NULL))
			return 1;
		printf("WIRE wimm stag=0x%08x to=0x%016" PRIx64 " len=%u se=%d"
		       " imm=%08x\n", x->rkey, to, wimms[k].len, wimms[k].se,
		       wimms[k].imm);
	}
	tp_close(&x->c, 5000);
	if (tp_failures) {
		tp_log("FAILED: client: %lu failed check(s)", tp_failures);
		return 1;
	}
	tp_log("PASS: client: FetchAdd, CmpSwap and %zu write-with-imm done",
	       NWIMM);
	return 0;
}

/* Foreign mode: wait for one completion and check its status exactly. */
static bool foreign_wait(struct ctx *x, uint64_t wr_id, int want,
			 const char *what)
{
	struct ibv_wc wc;
	int r = tp_poll(x->c.scq, &wc, x->o.r.timeout_ms);

	if (r <= 0) {
		tp_fail("%s: no completion within %d ms (hang?)", what,
			x->o.r.timeout_ms);
		return false;
	}
	tp_log("%s: completion status %s (vendor_err 0x%x)", what,
	       tp_wc_status_name(wc.status), wc.vendor_err);
	if (wc.wr_id != wr_id)
		tp_fail("%s: completion for wr_id %" PRIu64 ", expected %"
			PRIu64, what, (uint64_t)wc.wr_id, wr_id);
	if ((int)wc.status != want)
		tp_fail("%s: status %s, expected %s", what,
			tp_wc_status_name(wc.status),
			tp_wc_status_name((enum ibv_wc_status)want));
	return true;
}

/*
 * The QP must be in ERROR: a Send posted now is flushed (or refused), and
 * the state says so once the connection is gone.
 */
/*
 * The peer's Terminate also ends up as the QP's affiliated asynchronous
 * error (docs/protocol-decisions.md, "A Terminate from the peer"): for
 * a Send, Write or Immediate Data it is the only report a requester
 * gets. siw's Unexpected OpCode is an operation error:
 * IBV_EVENT_QP_FATAL.
 */
static void foreign_async(struct ctx *x, const char *what)
{
	tp_expect_qp_event(x->c.qp, IBV_EVENT_QP_FATAL, 5000, what);
}

static void foreign_after(struct ctx *x, const char *what)
{
	uint64_t deadline = tp_now_ms() + (uint64_t)x->o.r.timeout_ms;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct ibv_wc wc;
	int r;

	do {
		if (ibv_query_qp(x->c.qp, &a, IBV_QP_STATE, &ia)) {
			tp_fail("%s: ibv_query_qp: %s", what, strerror(errno));
			return;
		}
		if (a.qp_state == IBV_QPS_ERR)
			break;
		usleep(10000);
	} while (tp_now_ms() < deadline);
	if (a.qp_state != IBV_QPS_ERR) {
		tp_fail("%s: QP state %s, expected ERR", what,
			tp_qp_state_name(a.qp_state));
		return;
	}
	r = tp_post_send(&x->c, 99, x->local.addr, 8, x->local.mr->lkey,
			 IBV_SEND_SIGNALED);
	if (r) {
		tp_log("%s: a Send after it is refused (%s): QP in ERR", what,
		       strerror(r));
		return;
	}
	r = tp_poll(x->c.scq, &wc, x->o.r.timeout_ms);
	if (r <= 0)
		tp_fail("%s: the Send posted after it never completed", what);
	else if (wc.status != IBV_WC_WR_FLUSH_ERR)
		tp_fail("%s: the Send posted after it completed with %s, "
			"expected WR_FLUSH_ERR", what,
			tp_wc_status_name(wc.status));
	else
		tp_log("%s: QP in ERR, a later Send is flushed", what);
}

/*
 * A write-with-imm and an RDMA Read in one ibv_post_send: both go out
 * before the peer's Terminate for the Immediate Data can come back, so
 * the Terminate finds the Read outstanding and refuses it. (Posted one
 * by one, the Read may find the QP in ERROR already and be flushed: a
 * race with the peer, not a property of the requester.)
 */
static int post_wimm_then_read(struct ctx *x, uint64_t *res)
{
	struct ibv_sge ws = { (uintptr_t)x->local.addr, WIMM_LEN,
			      x->local.mr->lkey };
	struct ibv_sge rs = { (uintptr_t)res, 8, x->local.mr->lkey };
	struct ibv_send_wr rd = { .wr_id = 2, .sg_list = &rs, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr wi = { .wr_id = 1, .next = &rd, .sg_list = &ws,
				  .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htonl(0x7306) };
	struct ibv_send_wr *bad;

	wi.wr.rdma.remote_addr = x->raddr + WIMM_OFF;
	wi.wr.rdma.rkey = x->rkey;
	rd.wr.rdma.remote_addr = x->raddr;
	rd.wr.rdma.rkey = x->rkey;
	return ibv_post_send(x->c.qp, &wi, &bad);
}

static int client_foreign(struct ctx *x)
{
	uint64_t *res;
	unsigned int k;
	int r;

	for (k = 0; k < 3; k++) {
		const char *what = k == 0 ? "FetchAdd" : k == 1 ? "CmpSwap" :
				   "write-with-imm";

		if (!client_connect(x, 0, k == 2))
			return 1;
		tp_print_device(x->c.id->verbs, "client");
		res = (uint64_t *)x->local.addr + WORDS;
		if (k == 0)
			r = tp_post_fadd(&x->c, 1, res, x->local.mr->lkey,
					 x->raddr, x->rkey, 1,
					 IBV_SEND_SIGNALED);
		else if (k == 1)
			r = tp_post_cas(&x->c, 1, res, x->local.mr->lkey,
					x->raddr + 8, x->rkey,
					tp_mix(0x7306, 1), 42,
					IBV_SEND_SIGNALED);
		else
			r = post_wimm_then_read(x, res);
		if (r) {
			tp_fail("%s: posting: %s", what, strerror(r));
			return 1;
		}
		if (!foreign_wait(x, 1, x->o.fexp[k], what))
			return 1;
		if (k == 2 && !foreign_wait(x, 2, x->o.fexp[F_WIMM_READ],
					    "RDMA Read after write-with-imm"))
			return 1;
		foreign_async(x, what);
		foreign_after(x, what);
		tp_close(&x->c, 5000);
	}
	if (tp_failures) {
		tp_log("FAILED: client: %lu failed check(s)", tp_failures);
		return 1;
	}
	tp_log("PASS: client: FetchAdd, CmpSwap and write-with-imm against a "
	       "peer without RFC 7306 failed cleanly with the expected "
	       "statuses");
	return 0;
}

int main(int argc, char **argv)
{
	static struct ctx x;

	tp_prog = "siwx-rfc7306-ops";
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv, &x.o);
	x.ec = tp_channel();
	if (x.o.r.server)
		return run_server(&x);
	switch (x.o.mode) {
	case MODE_MASKED:
		return client_masked(&x);
	case MODE_WIRE:
		return client_wire(&x);
	default:
		return client_foreign(&x);
	}
}
