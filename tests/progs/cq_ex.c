// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-cq-ex: extended CQs (ibv_create_cq_ex), every field they report.
 *
 * Each side first checks the device (phase "device", "clock"):
 *   - ibv_create_cq_ex accepts IBV_WC_STANDARD_FLAGS with both completion
 *     timestamps (and IBV_CREATE_CQ_ATTR_SINGLE_THREADED), and refuses with
 *     EOPNOTSUPP: IBV_WC_EX_WITH_CVLAN, _FLOW_TAG, _TM_INFO,
 *     IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN and IBV_CQ_INIT_ATTR_MASK_PD (no
 *     parent domains). A refusal must leave no CQ behind: the kernel's
 *     resource tracking (`rdma resource show cq`) lists this process's CQs
 *     on the device, before, with the accepted CQ alive (which proves the
 *     listing sees them) and after the refusals.
 *   - ibv_query_device_ex: completion_timestamp_mask all ones and
 *     hca_core_clock 1000000 kHz (the clock ticks in ns);
 *     ibv_query_rt_values_ex's raw clock (tv_sec 0, tv_nsec the count, as
 *     mlx5) lies between two CLOCK_MONOTONIC readings around the call.
 *
 * Then the client streams N messages in windows of W (phase "receive" on
 * the server): Sends of 0..4096 bytes, RDMA Writes with Immediate Data
 * posted with ibv_post_send (4 octets, verbs imm_data) and with
 * siwxdv_wr_rdma_write_imm8 (all 8 octets RFC 7306 carries, ibv_wr_* API
 * on the same QP), of 0..8192 bytes into W slots of the server's buffer.
 * The server's receive CQ is an extended CQ with every accepted wc_flag on
 * a completion channel; the server sleeps on it (ibv_get_cq_event,
 * ibv_ack_cq_events, ibv_req_notify_cq, then ibv_start_poll/next_poll/
 * end_poll until ENOENT) and checks every completion: status, wr_id (the
 * RQ's next receive), opcode, byte_len, wc_flags, imm_data and the 8
 * octets of siwxdv_wc_read_imm8, qp_num, src_qp/slid/sl/dlid_path_bits 0,
 * the payload and what lies around it; the completion timestamp
 * (CLOCK_MONOTONIC) and the wall-clock one (CLOCK_REALTIME) non-decreasing
 * in poll order, not before the receive was posted and not after it was
 * polled. It acknowledges each window with a Send once it reposted the
 * receives (iWARP has no RNR retry: a Send must find a receive).
 *
 * The client's send CQ is an extended CQ with the two timestamps, polled
 * busy with start/next/end_poll (phase "send"): status, wr_id in posting
 * order, opcode, timestamps as above. Its last windows it polls with
 * ibv_poll_cq() on the same extended CQ instead (phase "legacy").
 *
 * Phase "errors": an RDMA Read from an rkey the server never handed out,
 * WRs behind it (the first one fenced), then more posted once its error
 * was polled. The Read must complete with IBV_WC_REM_ACCESS_ERR and every
 * other WR with IBV_WC_WR_FLUSH_ERR, each exactly once, in posting order,
 * read through start/next/end_poll. A Read, not a Write: an RDMA Write
 * completes once sent, and the responder's refusal (a Terminate) has no
 * response WR to complete, so a Write to a bad rkey completes successfully
 * and the error reaches the requester only as IBV_EVENT_QP_ACCESS_ERR
 * (docs/protocol-decisions.md, "A Terminate from the peer"); the Terminate
 * completes the oldest outstanding Read. The server's Terminate puts its
 * QP in ERROR too: its W posted receives must come back flushed, each
 * once, in RQ order, through the event-driven extended CQ (phase "flush").
 *
 * With -r (the client asks, the server follows; a server given -r insists)
 * come the ibv_resize_cq phases, each side printing "ok: ..." per check:
 *   - "resize-receive" (server): the receive phase as above, its extended
 *     receive CQ resized between polls, growing and shrinking through sizes
 *     of 1 to 8 times the window (the most completions it can hold): right
 *     after each CQ event (armed, completions unpolled), after each batch
 *     (armed, Sends in flight), and at each window's end, before its
 *     acknowledgement, twice while armed with nothing held or pending, so
 *     that only an arm that survived the resizes raises the next event (a
 *     lost one ends the wait with a failure after -t, not a hang). Every
 *     completion is checked as in the receive phase (wr_id order: none
 *     lost, duplicated or reordered; data, imm, timestamps in order), and
 *     cq->cqe after each resize is the size rounded up to a power of two.
 *   - "resize-send" (client): its extended, SINGLE_THREADED send CQ resized
 *     after posting each window and again with half of it reaped.
 *   - On a second connection, both sides (phases "resize-below" and
 *     "resize-load"): a plain CQ (ibv_create_cq) of 32 entries, the send CQ
 *     of RDMA Writes into the peer's buffer. "resize-below": 8 completions
 *     held unpolled (each Write posted with the CQ armed, its event
 *     awaited), then ibv_resize_cq to 4, 0, -1 and max_cqe + 1 must fail with
 *     EINVAL and leave cq->cqe; all 8 are then polled in order, with a
 *     resize to exactly the 4 held (must succeed) half way. "resize-load":
 *     a second thread polls the CQ with ibv_poll_cq while this one streams
 *     Writes (at most 16 in flight) and resizes the CQ in a loop between
 *     16 and 128 entries; every completion once, in posting order, nothing
 *     after; the peer's last Writes intact.
 *
 * Both sides print "ok: ..." per phase and exit 0 only when every check
 * passed (77: the device is not a siwx device).
 */
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "tp_common.h"

#define CQX_MAGIC 0x5349575843515831ULL	/* "SIWXCQX1" */
#define IMM8_LEN 8
#define SEND_MAX 4096u			/* largest Send = receive buffer */
#define RECV_BUF SEND_MAX
#define WRITE_MAX 8192u			/* largest write-with-imm */
#define GUARD 256u			/* checked bytes after each write */
#define SRC_STRIDE 8192u		/* client: one message's source */
#define CANARY 0xa5
#define MSG_LEN 32u			/* server -> client messages */
#define MSG_WINDOW 1
#define MSG_FINAL 2
#define MAX_W 64u
#define QUIET_MS 200			/* "no further completion" window */
#define BAD_RKEY_XOR 0x5a5a0000u	/* an rkey never handed out */
#define ERR_ID 0xe0000000ULL		/* wr_id base of the error phase */
#define P_RESIZE 1u			/* params.flags: the resize phases */

/* The resize phases' second connection (see the top comment). */
#define RL_MAGIC 0x5349575843515852ULL	/* "SIWXCQXR" */
#define RL_DEPTH 16u			/* Writes in flight at most */
#define RL_WRITES 512u			/* a multiple of RL_DEPTH */
#define RL_SLOT 1024u			/* bytes per Write slot, at most */
#define RL_CQE 32			/* the send CQ's entries */
#define RL_HELD 8u			/* completions held for "below" */
#define RL_MAX_RESIZES 2000u		/* per side, in "resize-load" */
#define RL_ID_BELOW UINT64_C(0xb0000000)
#define RL_ID_LOAD UINT64_C(0xc0000000)
#define RL_ID_DONE UINT64_C(0xd0000000)

/* What the server's receive CQ reports: all that siwx accepts. */
#define WC_ACCEPTED (IBV_WC_STANDARD_FLAGS | \
		     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
		     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
/* The client's send CQ: the timestamps only. */
#define WC_SEND (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
		 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

struct opts {
	struct tp_role r;		/* -s/-c, -p, -t, -6 */
	uint64_t n;
	uint32_t window;
	uint64_t seed;
	bool resize;			/* -r */
};

/* What the client asks for in its connect private data. */
struct params {
	uint64_t n, window, seed;
	uint64_t flags;			/* P_RESIZE */
};

/* The resizes of one CQ, for the messages. */
struct rz {
	unsigned int next;		/* position in the size cycle */
	unsigned int count, grew, shrank;
	int min, max;			/* cq->cqe seen after them */
};

typedef bool (*dv_sup_t)(struct ibv_device *);
typedef void (*dv_write_imm8_t)(struct ibv_qp_ex *, uint32_t, uint64_t,
				const uint8_t *);
typedef void (*dv_read_imm8_t)(struct ibv_cq_ex *, uint8_t *);

/* The provider's direct verbs, resolved from the loaded libsiwx. */
struct dv {
	dv_sup_t sup;
	dv_write_imm8_t write_imm8;
	dv_read_imm8_t read_imm8;
};

/* Two clock readings taken together. */
struct stamp {
	uint64_t mono, real;		/* ns */
};

/* One completion of an extended CQ, read between start and end_poll. */
struct xwc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t vendor_err;
	unsigned int wc_flags;
	uint32_t byte_len, qp_num, src_qp, slid;
	uint8_t sl, dlid_path_bits;
	uint32_t imm_data;		/* as read: network order */
	uint8_t imm8[IMM8_LEN];
	uint64_t ts, wall;
	struct stamp polled;		/* right after start/next_poll */
};

/* Timestamps of one CQ in poll order. */
struct ts_track {
	bool any;
	uint64_t ts, wall;
};

struct ctx {
	struct opts o;
	struct params p;
	struct rdma_event_channel *ec;
	struct ibv_pd *pd;
	struct tp_conn c;
	struct dv dv;
	struct ibv_cq_ex *cqx;		/* server: recv CQ; client: send CQ */
	uint64_t cqx_flags;
	struct ts_track tt;
	struct tp_buf data;		/* server: slots; client: sources */
	struct tp_buf rbuf;		/* receive buffers */
	struct tp_buf msg;		/* server: outgoing message */
	uint32_t nrecv;
	uint64_t stride;		/* write slot stride */
	uint64_t raddr;			/* client: server's buffer */
	uint32_t rkey;
	/* Server: the RQ's receives in posting order and when each went. */
	uint32_t rq[MAX_W];
	uint32_t rq_head, rq_len;
	struct stamp rposted[MAX_W];
	/* Server: failures before the data phase (not the client's to see) */
	unsigned long fail_base;
	struct rdma_cm_id *listen;	/* server: the resize phases connect */
	/* -r: the resizes of the receive (server) or send (client) CQ */
	struct rz rz;
	uint32_t sq_depth;		/* client: the send CQ's floor */
	unsigned int rz_after_event, rz_between, rz_idle_rounds;
	unsigned int rz_idle_proven;	/* idle arms that raised an event */
	unsigned int rz_since_event;	/* resizes since the last event */
	bool rz_idle_pending;		/* armed idle resizes, no event yet */
	/* Client: when each WR of the window went. */
	struct stamp sposted[MAX_W];
	/* Statistics. */
	uint64_t events, batches, nsend, nimm4, nimm8, bytes;
};

/* Messages: deterministic in (seed, seq), on both sides. */
enum kind { K_SEND, K_WIMM, K_WIMM8 };

static const char *const kind_name[] = {
	[K_SEND] = "Send",
	[K_WIMM] = "write-with-imm (4 octets, ibv_post_send)",
	[K_WIMM8] = "write-with-imm (8 octets, siwxdv)",
};

/* The first ones cover each kind at 0, 1 and the largest size. */
static const struct {
	enum kind k;
	uint32_t len;
} first_msgs[] = {
	{ K_SEND, 0 }, { K_WIMM, 0 }, { K_WIMM8, 0 },
	{ K_SEND, SEND_MAX }, { K_WIMM, WRITE_MAX }, { K_WIMM8, WRITE_MAX },
	{ K_SEND, 1 }, { K_WIMM8, 1 }, { K_WIMM, 1 }, { K_WIMM8, 4095 },
	{ K_SEND, 4095 }, { K_WIMM, 4097 },
};

#define NFIRST (sizeof(first_msgs) / sizeof(first_msgs[0]))

static enum kind msg_kind(uint64_t seed, uint64_t seq)
{
	if (seq < NFIRST)
		return first_msgs[seq].k;
	return (enum kind)(tp_mix(seed ^ 0x11, seq) % 3);
}

static uint32_t msg_len(uint64_t seed, uint64_t seq)
{
	uint64_t r = tp_mix(seed ^ 0x22, seq);
	uint32_t max = msg_kind(seed, seq) == K_SEND ? SEND_MAX : WRITE_MAX;

	if (seq < NFIRST)
		return first_msgs[seq].len;
	switch (r & 7) {
	case 0: return 0;
	case 1: return 1 + (uint32_t)((r >> 8) % 16);
	case 2: return max;
	default: return (uint32_t)((r >> 8) % (max + 1));
	}
}

/* K_WIMM: imm_data in host order (message 1: zero). */
static uint32_t msg_imm(uint64_t seed, uint64_t seq)
{
	return seq == 1 ? 0 : (uint32_t)tp_mix(seed ^ 0x33, seq);
}

/* K_WIMM8: the 8 octets (message 2: all zero, 5: all ones). */
static void msg_imm8(uint64_t seed, uint64_t seq, uint8_t imm[IMM8_LEN])
{
	uint64_t v = seq == 2 ? 0 : seq == 5 ? UINT64_MAX :
		     tp_mix(seed ^ 0x44, seq);

	memcpy(imm, &v, IMM8_LEN);
}

/* What the receiver's 8 octets must be for message @seq (zeros: none). */
static void want_imm8(uint64_t seed, uint64_t seq, uint8_t imm[IMM8_LEN])
{
	uint32_t be;

	memset(imm, 0, IMM8_LEN);
	switch (msg_kind(seed, seq)) {
	case K_WIMM:
		/* libsiwx: imm_data as stored in octets 0-3, zeros after */
		be = htonl(msg_imm(seed, seq));
		memcpy(imm, &be, 4);
		break;
	case K_WIMM8:
		msg_imm8(seed, seq, imm);
		break;
	default:
		break;
	}
}

static uint32_t pat_word(uint64_t seq, uint32_t i)
{
	uint32_t x = (uint32_t)seq * 0x9e3779b1u ^ i * 0x85ebca77u ^
		     (uint32_t)(seq >> 32);

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return htole32(x);
}

static void pat_fill(uint8_t *p, uint32_t len, uint64_t seq)
{
	uint32_t i, n = len / 4, w;

	for (i = 0; i < n; i++) {
		w = pat_word(seq, i);
		memcpy(p + 4 * (size_t)i, &w, 4);
	}
	if (len % 4) {
		w = pat_word(seq, n);
		memcpy(p + 4 * (size_t)n, &w, len % 4);
	}
}

static uint8_t pat_byte(uint64_t seq, uint32_t off)
{
	uint32_t w = pat_word(seq, off / 4);

	return ((const uint8_t *)&w)[off % 4];
}

/* First offset in [0, len) that does not hold the pattern, or -1. */
static int64_t pat_check(const uint8_t *p, uint32_t len, uint64_t seq)
{
	uint32_t i, n = len / 4, w;

	/* Word by word, then byte by byte from the first difference */
	for (i = 0; i < n; i++) {
		w = pat_word(seq, i);
		if (memcmp(p + 4 * (size_t)i, &w, 4))
			break;
	}
	for (i *= 4; i < len; i++)
		if (p[i] != pat_byte(seq, i))
			return i;
	return -1;
}

static int64_t canary_check(const uint8_t *p, size_t len)
{
	static uint8_t canary[4096];
	size_t i, chunk;

	if (!canary[0])
		memset(canary, CANARY, sizeof(canary));
	/* memcmp by pages first: TCG guests are slow at byte loops */
	for (i = 0; i < len; i += chunk) {
		chunk = len - i < sizeof(canary) ? len - i : sizeof(canary);
		if (memcmp(p + i, canary, chunk))
			break;
	}
	for (; i < len; i++)
		if (p[i] != CANARY)
			return (int64_t)i;
	return -1;
}

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Monotonic first, then real: taken before an event, both precede the
 * kernel's readings of it; taken after, both follow them.
 */
static void stamp_now(struct stamp *s)
{
	s->mono = clock_ns(CLOCK_MONOTONIC);
	s->real = clock_ns(CLOCK_REALTIME);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-cq-ex -s [-6] [-r] [-p PORT] [-t SEC] [-v]\n"
"       siwx-cq-ex -c ADDR [-r] [-p PORT] [-n N] [-w W] [-S SEED]\n"
"                  [-t SEC] [-v]\n"
"Extended CQs (ibv_create_cq_ex) checked field by field (see the source).\n"
"  -s          server (one client, then exit)\n"
"  -c ADDR     client, connecting to ADDR\n"
"  -p PORT     rdma_cm port (default 18528)\n"
"  -n N        messages (default 2000; more than W)\n"
"  -w W        window: messages per acknowledgement (default 32, 2..64)\n"
"  -S SEED     seed of kinds, sizes and immediates (default 1)\n"
"  -r          the ibv_resize_cq phases too (client: asks for them;\n"
"              server: fails when the client does not)\n"
"  -t SEC      time limit of each wait (default 60)\n"
"  -6          server: listen on [::], IPv6 only\n"
"  -v          verbose\n"
"The client chooses N, W, the seed and -r; the server follows. Exit 0\n"
"only when every check passed, 77 when the device is not a siwx device.\n");
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	*o = (struct opts){ .r = { .port = 18528, .timeout_ms = 60000 },
			    .n = 2000, .window = 32, .seed = 1 };
	while ((ch = getopt_long(argc, argv, TP_ROLE_OPTS "n:w:S:rh", lo,
				 NULL)) != -1) {
		if (tp_role_opt(&o->r, ch, optarg))
			continue;
		switch (ch) {
		case 'n': o->n = tp_parse_u64(optarg, "-n", 3, 1u << 24); break;
		case 'w':
			o->window = tp_parse_u64(optarg, "-w", 2, MAX_W);
			break;
		case 'S':
			o->seed = tp_parse_u64(optarg, "-S", 0, UINT64_MAX);
			break;
		case 'r': o->resize = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (!tp_role_ok(&o->r, optind, argc) || o->n <= o->window) {
		usage(stderr);
		exit(2);
	}
}

/* The direct verbs. */

/* dl_iterate_phdr() callback: the path of the loaded libsiwx provider. */
static int find_provider(struct dl_phdr_info *info, size_t size, void *data)
{
	const char **path = data;

	(void)size;
	if (!strstr(info->dlpi_name, "/libsiwx-rdmav"))
		return 0;
	*path = info->dlpi_name;
	return 1;
}

/*
 * libibverbs has loaded the provider, named for the private ABI of this
 * libibverbs (libsiwx-rdmav<N>.so): take that very copy. The programs are
 * built where libsiwx is not installed, so they cannot link with it.
 * False (after a message) when the device is not a siwx device.
 */
static bool dv_open(struct ctx *x)
{
	const char *lib = getenv("SIWXDV_LIB");
	const char *loaded = NULL;
	void *h;

	if (!lib) {
		dl_iterate_phdr(find_provider, &loaded);
		if (!loaded) {
			tp_log("libibverbs has loaded no libsiwx-rdmav*.so: "
			       "the device is not a siwx device");
			return false;
		}
		lib = loaded;
	}
	h = dlopen(lib, RTLD_NOW);
	if (!h)
		tp_die("dlopen(%s): %s", lib, dlerror());
	x->dv.sup = (dv_sup_t)dlsym(h, "siwxdv_is_supported");
	x->dv.write_imm8 = (dv_write_imm8_t)dlsym(h,
						  "siwxdv_wr_rdma_write_imm8");
	if (!x->dv.sup || !x->dv.write_imm8)
		tp_die("libsiwx lacks the siwxdv symbols: %s", dlerror());
	/* The version is part of the contract: SIWX_1.1 added it. */
	x->dv.read_imm8 = (dv_read_imm8_t)dlvsym(h, "siwxdv_wc_read_imm8",
						 "SIWX_1.1");
	if (!x->dv.read_imm8)
		tp_die("%s lacks siwxdv_wc_read_imm8@SIWX_1.1%s", lib,
		       dlsym(h, "siwxdv_wc_read_imm8") ?
		       " (exported, but not in version SIWX_1.1)" : "");
	if (!x->dv.sup(x->c.id->verbs->device)) {
		tp_log("%s is not a siwx device",
		       ibv_get_device_name(x->c.id->verbs->device));
		return false;
	}
	return true;
}

/* Phase "device": what ibv_create_cq_ex accepts and refuses. */

/*
 * This process's CQs on the device as the kernel's resource tracking
 * lists them (iproute2's rdma tool, in every guest); -1 when it cannot.
 * Only ours count: nothing else of this process makes CQs meanwhile, and
 * another process's (a peer on the same machine) must not disturb it.
 */
static long count_cqs(struct ibv_context *ctx)
{
	const char *dev = ibv_get_device_name(ctx->device);
	char line[1024], me[32];
	long n = 0;
	FILE *f;

	snprintf(me, sizeof(me), "%ld", (long)getpid());
	f = popen("PATH=$PATH:/usr/sbin:/sbin rdma resource show cq "
		  "2>/dev/null", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		bool on_dev = false, mine = false;
		char *save, *tok, *prev = NULL;

		for (tok = strtok_r(line, " \t\n", &save); tok;
		     prev = tok, tok = strtok_r(NULL, " \t\n", &save)) {
			if (prev && !strcmp(prev, "dev") && !strcmp(tok, dev))
				on_dev = true;
			if (prev && !strcmp(prev, "pid") && !strcmp(tok, me))
				mine = true;
		}
		n += on_dev && mine;
	}
	if (pclose(f))
		return -1;
	return n;
}

static struct ibv_cq_ex *create_cq_ex(struct ibv_context *ctx, uint32_t cqe,
				      uint64_t wc_flags, uint32_t comp_mask,
				      uint32_t flags, struct ibv_pd *pd)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = cqe,
		.wc_flags = wc_flags,
		.comp_mask = comp_mask,
		.flags = flags,
		.parent_domain = pd,
	};

	return ibv_create_cq_ex(ctx, &a);
}

static const struct refusal {
	const char *what;
	uint64_t wc_flags;
	uint32_t comp_mask;
	uint32_t flags;
	bool pd;
} refusals[] = {
	{ "wc_flags IBV_WC_EX_WITH_CVLAN",
	  WC_ACCEPTED | IBV_WC_EX_WITH_CVLAN, 0, 0, false },
	{ "wc_flags IBV_WC_EX_WITH_FLOW_TAG",
	  WC_ACCEPTED | IBV_WC_EX_WITH_FLOW_TAG, 0, 0, false },
	{ "wc_flags IBV_WC_EX_WITH_TM_INFO",
	  WC_ACCEPTED | IBV_WC_EX_WITH_TM_INFO, 0, 0, false },
	{ "flags IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN", WC_ACCEPTED,
	  IBV_CQ_INIT_ATTR_MASK_FLAGS, IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN,
	  false },
	/*
	 * siwx makes no parent domains, so an ordinary PD stands in: the
	 * mask alone must be refused.
	 */
	{ "comp_mask IBV_CQ_INIT_ATTR_MASK_PD (a parent domain)", WC_ACCEPTED,
	  IBV_CQ_INIT_ATTR_MASK_PD, 0, true },
};

#define NREFUSALS (sizeof(refusals) / sizeof(refusals[0]))

static void phase_device(struct ctx *x, const char *who)
{
	struct ibv_context *ctx = x->c.id->verbs;
	unsigned long before = tp_failures;
	struct ibv_poll_cq_attr pa = {};
	struct ibv_cq_ex *cq;
	long base, n;
	size_t i;
	int r;

	base = count_cqs(ctx);
	cq = create_cq_ex(ctx, 16, WC_ACCEPTED, IBV_CQ_INIT_ATTR_MASK_FLAGS,
			  IBV_CREATE_CQ_ATTR_SINGLE_THREADED, NULL);
	if (!cq) {
		tp_fail("%s: ibv_create_cq_ex(IBV_WC_STANDARD_FLAGS | both "
			"completion timestamps, SINGLE_THREADED) refused: %s",
			who, strerror(errno));
	} else {
		n = count_cqs(ctx);
		if (base < 0 || n != base + 1)
			tp_fail("%s: `rdma resource show cq` lists %ld CQs of "
				"this process with an extended CQ alive, %ld "
				"without (-1: cannot run it): cannot tell a "
				"leaked CQ", who, n, base);
		if (ibv_cq_ex_to_cq(cq)->cqe < 16)
			tp_fail("%s: extended CQ of %d entries, asked for 16",
				who, ibv_cq_ex_to_cq(cq)->cqe);
		r = ibv_start_poll(cq, &pa);
		if (r != ENOENT) {
			tp_fail("%s: ibv_start_poll on a new extended CQ "
				"returned %d, expected ENOENT", who, r);
			if (!r)
				ibv_end_poll(cq);
		}
		r = ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
		if (r)
			tp_fail("%s: ibv_destroy_cq of an extended CQ: %s", who,
				strerror(r));
	}
	for (i = 0; i < NREFUSALS; i++) {
		const struct refusal *f = &refusals[i];

		errno = 0;
		cq = create_cq_ex(ctx, 16, f->wc_flags, f->comp_mask, f->flags,
				  f->pd ? x->pd : NULL);
		if (cq) {
			tp_fail("%s: ibv_create_cq_ex accepted %s", who,
				f->what);
			ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
		} else if (errno != EOPNOTSUPP) {
			tp_fail("%s: ibv_create_cq_ex refused %s with errno %d"
				" (%s), expected EOPNOTSUPP", who, f->what,
				errno, strerror(errno));
		} else {
			tp_vlog("%s: %s refused: EOPNOTSUPP", who, f->what);
		}
	}
	n = count_cqs(ctx);
	if (n != base)
		tp_fail("%s: after the refusals `rdma resource show cq` lists "
			"%ld CQs of this process, before them %ld: a refused "
			"ibv_create_cq_ex left a CQ behind", who, n, base);
	if (tp_failures == before)
		tp_log("ok: %s: device: ibv_create_cq_ex accepts "
		       "IBV_WC_STANDARD_FLAGS, both completion timestamps and "
		       "SINGLE_THREADED; refuses CVLAN, FLOW_TAG, TM_INFO, "
		       "IGNORE_OVERRUN and a parent domain with EOPNOTSUPP, "
		       "leaving no CQ behind", who);
}

/* Phase "clock": the device clock of the completion timestamps. */
static void phase_clock(struct ctx *x, const char *who)
{
	struct ibv_context *ctx = x->c.id->verbs;
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	unsigned long before = tp_failures;
	struct ibv_device_attr_ex a;
	uint64_t t0, t1, raw;
	int r;

	memset(&a, 0, sizeof(a));
	r = ibv_query_device_ex(ctx, NULL, &a);
	if (r) {
		tp_fail("%s: ibv_query_device_ex: %s", who, strerror(r));
	} else {
		if (a.completion_timestamp_mask != UINT64_MAX)
			tp_fail("%s: completion_timestamp_mask 0x%" PRIx64
				", expected 0x%" PRIx64 " (64-bit ns)", who,
				a.completion_timestamp_mask, UINT64_MAX);
		if (a.hca_core_clock != 1000000)
			tp_fail("%s: hca_core_clock %" PRIu64 " kHz, expected "
				"1000000 (one tick per ns)", who,
				a.hca_core_clock);
	}
	t0 = clock_ns(CLOCK_MONOTONIC);
	r = ibv_query_rt_values_ex(ctx, &v);
	t1 = clock_ns(CLOCK_MONOTONIC);
	if (r) {
		tp_fail("%s: ibv_query_rt_values_ex(IBV_VALUES_MASK_RAW_CLOCK):"
			" %s", who, strerror(r));
	} else if (!(v.comp_mask & IBV_VALUES_MASK_RAW_CLOCK)) {
		tp_fail("%s: ibv_query_rt_values_ex returned comp_mask 0x%x, "
			"without IBV_VALUES_MASK_RAW_CLOCK", who, v.comp_mask);
	} else {
		raw = (uint64_t)v.raw_clock.tv_nsec;
		if (v.raw_clock.tv_sec != 0)
			tp_fail("%s: raw_clock.tv_sec %lld, expected 0 (the "
				"count is in tv_nsec)", who,
				(long long)v.raw_clock.tv_sec);
		else if (raw < t0 || raw > t1)
			tp_fail("%s: raw clock %" PRIu64 " ns is not within the"
				" CLOCK_MONOTONIC readings around the call "
				"[%" PRIu64 ", %" PRIu64 "]", who, raw, t0, t1);
	}
	if (tp_failures == before)
		tp_log("ok: %s: clock: completion_timestamp_mask 0x%" PRIx64
		       ", hca_core_clock %" PRIu64 " kHz, raw clock within "
		       "CLOCK_MONOTONIC (%" PRIu64 " ns window)", who,
		       a.completion_timestamp_mask, a.hca_core_clock, t1 - t0);
}

/* Extended CQ polling. */

/* The current completion: only the fields the CQ was made with. */
static void xwc_read(struct ctx *x, struct xwc *w)
{
	struct ibv_cq_ex *cq = x->cqx;
	uint64_t fl = x->cqx_flags;

	stamp_now(&w->polled);
	w->wr_id = cq->wr_id;
	w->status = cq->status;
	w->opcode = ibv_wc_read_opcode(cq);
	w->vendor_err = ibv_wc_read_vendor_err(cq);
	w->wc_flags = ibv_wc_read_wc_flags(cq);
	if (fl & IBV_WC_EX_WITH_BYTE_LEN)
		w->byte_len = ibv_wc_read_byte_len(cq);
	if (fl & IBV_WC_EX_WITH_IMM) {
		w->imm_data = ibv_wc_read_imm_data(cq);
		x->dv.read_imm8(cq, w->imm8);
	}
	if (fl & IBV_WC_EX_WITH_QP_NUM)
		w->qp_num = ibv_wc_read_qp_num(cq);
	if (fl & IBV_WC_EX_WITH_SRC_QP)
		w->src_qp = ibv_wc_read_src_qp(cq);
	if (fl & IBV_WC_EX_WITH_SLID)
		w->slid = ibv_wc_read_slid(cq);
	if (fl & IBV_WC_EX_WITH_SL)
		w->sl = ibv_wc_read_sl(cq);
	if (fl & IBV_WC_EX_WITH_DLID_PATH_BITS)
		w->dlid_path_bits = ibv_wc_read_dlid_path_bits(cq);
	if (fl & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		w->ts = ibv_wc_read_completion_ts(cq);
	if (fl & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		w->wall = ibv_wc_read_completion_wallclock_ns(cq);
}

/*
 * Every completion the CQ holds now (at most @max) into @w, in one
 * start/next/end_poll batch; the checks come after ibv_end_poll, so the
 * batch holds the CQ no longer than reading takes. Count, or -1.
 */
static int xcq_drain(struct ctx *x, struct xwc *w, int max)
{
	struct ibv_poll_cq_attr pa = {};
	int n = 0, r;

	r = ibv_start_poll(x->cqx, &pa);
	if (r == ENOENT)
		return 0;
	if (r) {
		tp_fail("ibv_start_poll: %d (%s)", r, strerror(r));
		return -1;
	}
	for (;;) {
		memset(&w[n], 0, sizeof(w[n]));
		xwc_read(x, &w[n++]);
		if (n == max)
			break;
		r = ibv_next_poll(x->cqx);
		if (r)
			break;
	}
	/* After an error of next_poll too: it ends the batch. */
	ibv_end_poll(x->cqx);
	if (r && r != ENOENT) {
		tp_fail("ibv_next_poll: %d (%s)", r, strerror(r));
		return -1;
	}
	x->batches++;
	return n;
}

/*
 * The timestamps of @w: not before @posted, not after the poll that read
 * it, not before the previous completion of this CQ. No slack: the kernel
 * stamps the CQE between the two readings (see stamp_now()), with the
 * same clocks; CLOCK_REALTIME must not be stepped meanwhile (the guests
 * run no time service).
 */
static void check_ts(struct ctx *x, const struct xwc *w,
		     const struct stamp *posted, const char *what)
{
	struct ts_track *t = &x->tt;

	if (w->ts < posted->mono)
		tp_fail("%s: completion timestamp %" PRIu64 " is %" PRIu64
			" ns before the WR was posted (CLOCK_MONOTONIC %"
			PRIu64 ")", what, w->ts, posted->mono - w->ts,
			posted->mono);
	if (w->ts > w->polled.mono)
		tp_fail("%s: completion timestamp %" PRIu64 " is %" PRIu64
			" ns after the completion was polled (CLOCK_MONOTONIC"
			" %" PRIu64 ")", what, w->ts, w->ts - w->polled.mono,
			w->polled.mono);
	if (t->any && w->ts < t->ts)
		tp_fail("%s: completion timestamp %" PRIu64 " is %" PRIu64
			" ns before the previous completion's", what, w->ts,
			t->ts - w->ts);
	if (w->wall < posted->real)
		tp_fail("%s: wall-clock timestamp %" PRIu64 " is %" PRIu64
			" ns before the WR was posted (CLOCK_REALTIME %" PRIu64
			")", what, w->wall, posted->real - w->wall,
			posted->real);
	if (w->wall > w->polled.real)
		tp_fail("%s: wall-clock timestamp %" PRIu64 " is %" PRIu64
			" ns after the completion was polled (CLOCK_REALTIME %"
			PRIu64 ")", what, w->wall, w->wall - w->polled.real,
			w->polled.real);
	if (t->any && w->wall < t->wall)
		tp_fail("%s: wall-clock timestamp %" PRIu64 " is %" PRIu64
			" ns before the previous completion's", what, w->wall,
			t->wall - w->wall);
	t->any = true;
	t->ts = w->ts;
	t->wall = w->wall;
}

/* Resizing. */

/*
 * The sizes a CQ cycles through, in eighths of its floor (the most
 * completions it can hold then): 1 to 8 times it, growing and shrinking
 * in turn, some not powers of two.
 */
static const uint8_t rz_eighths[] = { 8, 32, 17, 64, 24, 9, 48, 12, 40, 8,
				      26, 64, 10 };

#define RZ_CYCLE (sizeof(rz_eighths) / sizeof(rz_eighths[0]))

static int pow2_up(int n)
{
	int p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* ibv_resize_cq's error: the errno value it returns (or sets). */
static int resize_err(int r)
{
	return r < 0 ? (errno ? errno : -r) : r;
}

/*
 * Resize @cq to the next size of @z's cycle over @floor, while it holds
 * at most @floor completions: it must succeed and report the size rounded
 * up to a power of two. False after tp_fail().
 */
static bool rz_resize(struct rz *z, struct ibv_cq *cq, uint32_t floor,
		      const char *what)
{
	int n = (int)((floor * rz_eighths[z->next++ % RZ_CYCLE] + 7) / 8);
	int old = cq->cqe, r;

	errno = 0;
	r = ibv_resize_cq(cq, n);
	if (r) {
		tp_fail("%s: ibv_resize_cq(%d) of a CQ of %d entries holding "
			"at most %u completions: %s", what, n, old, floor,
			strerror(resize_err(r)));
		return false;
	}
	if (cq->cqe != pow2_up(n)) {
		tp_fail("%s: after ibv_resize_cq(%d) cq->cqe is %d, expected "
			"%d (the size rounded up to a power of two)", what, n,
			cq->cqe, pow2_up(n));
		return false;
	}
	if (!z->count || cq->cqe < z->min)
		z->min = cq->cqe;
	if (!z->count || cq->cqe > z->max)
		z->max = cq->cqe;
	z->count++;
	z->grew += cq->cqe > old;
	z->shrank += cq->cqe < old;
	return true;
}

/* The resize phases' second connection: "resize-below", "resize-load". */

struct rl {
	struct tp_conn c;
	struct tp_buf src;		/* our Writes' sources */
	struct tp_buf dst;		/* where the peer's Writes land */
	struct tp_buf msg;		/* [0]: our end message, [1]: peer's */
	uint64_t raddr;			/* the peer's dst */
	uint32_t rkey;
	struct rz rz;
	/* Shared with the poller thread (__atomic) */
	uint64_t done;			/* completions it polled */
	int stop;			/* we give up */
	int bad;			/* it found a wrong completion */
	/* The poller's finding, read after pthread_join */
	int poll_ret;
	uint64_t bad_at;
	struct ibv_wc bad_wc;
};

static uint32_t rl_len(uint64_t seq)
{
	return 1 + (uint32_t)(tp_mix(RL_MAGIC, seq) % RL_SLOT);
}

/* A signaled RDMA Write of @len bytes of pattern @id into the peer's @slot */
static int rl_write(struct rl *l, uint64_t id, uint32_t slot, uint32_t len)
{
	uint8_t *src = (uint8_t *)l->src.addr + (size_t)slot * RL_SLOT;

	pat_fill(src, len, id);
	return tp_post_write(&l->c, id, src, len, l->src.mr->lkey,
			     l->raddr + (uint64_t)slot * RL_SLOT, l->rkey,
			     IBV_SEND_SIGNALED);
}

/*
 * Buffers, CQs and the QP of the second connection (its id is resolved or
 * requested): Writes complete on a plain CQ of RL_CQE entries with a
 * completion channel, the end messages on a plain CQ of their own.
 */
static bool rl_setup(struct ctx *x, struct rl *l)
{
	struct ibv_context *ctx = l->c.id->verbs;
	struct ibv_qp_init_attr_ex qa;
	size_t len = (size_t)RL_DEPTH * RL_SLOT;
	int r;

	if (ctx != x->c.id->verbs) {
		tp_fail("resize: the second connection is on another device");
		return false;
	}
	l->c.pd = x->pd;
	if (!tp_buf_alloc(&l->src, x->pd, len, len, IBV_ACCESS_LOCAL_WRITE) ||
	    !tp_buf_alloc(&l->dst, x->pd, len, len, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE) ||
	    !tp_buf_alloc(&l->msg, x->pd, 2 * MSG_LEN, 2 * MSG_LEN,
			  IBV_ACCESS_LOCAL_WRITE))
		return false;
	l->c.rch = ibv_create_comp_channel(ctx);
	if (!l->c.rch) {
		tp_fail("ibv_create_comp_channel: %s", strerror(errno));
		return false;
	}
	l->c.scq = ibv_create_cq(ctx, RL_CQE, l, l->c.rch, 0);
	l->c.rcq = ibv_create_cq(ctx, 2, NULL, NULL, 0);
	if (!l->c.scq || !l->c.rcq) {
		tp_fail("ibv_create_cq: %s", strerror(errno));
		return false;
	}
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RC;
	qa.send_cq = l->c.scq;
	qa.recv_cq = l->c.rcq;
	qa.cap.max_send_wr = RL_DEPTH + 1;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.pd = x->pd;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (rdma_create_qp_ex(l->c.id, &qa)) {
		tp_fail("rdma_create_qp_ex: %s", strerror(errno));
		return false;
	}
	l->c.qp = l->c.id->qp;
	/* The peer's end message: a Send must find its receive */
	r = tp_post_recv(&l->c, RL_ID_DONE,
			 (uint8_t *)l->msg.addr + MSG_LEN, MSG_LEN,
			 l->msg.mr->lkey);
	if (r)
		tp_fail("ibv_post_recv: %s", strerror(r));
	return !r;
}

/* Our private data on the second connection: where the peer writes. */
static void rl_pdata(struct rl *l, uint8_t *pd)
{
	uint64_t w[3] = { RL_MAGIC, (uintptr_t)l->dst.addr, l->dst.mr->rkey };

	tp_pdata_put(pd, w, 3);
}

static bool rl_peer_pdata(struct rl *l)
{
	uint64_t w[3];

	if (!tp_pdata_get(l->c.peer_pdata, l->c.peer_pdata_len, w, 3) ||
	    w[0] != RL_MAGIC) {
		tp_fail("resize: the second connection's peer sent no usable "
			"private data (%zu bytes)", l->c.peer_pdata_len);
		return false;
	}
	l->raddr = w[1];
	l->rkey = (uint32_t)w[2];
	return true;
}

/* One completion event of the send CQ within -t, acknowledged. */
static bool rl_event(struct ctx *x, struct rl *l, const char *what)
{
	struct pollfd p = { .fd = l->c.rch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;

	if (poll(&p, 1, x->o.r.timeout_ms) != 1) {
		tp_fail("%s: no completion event within %d ms", what,
			x->o.r.timeout_ms);
		return false;
	}
	if (ibv_get_cq_event(l->c.rch, &cq, &cq_ctx)) {
		tp_fail("%s: ibv_get_cq_event: %s", what, strerror(errno));
		return false;
	}
	ibv_ack_cq_events(cq, 1);
	if (cq != l->c.scq || cq_ctx != l) {
		tp_fail("%s: an event of CQ %p (context %p), expected %p (%p)",
			what, (void *)cq, cq_ctx, (void *)l->c.scq, (void *)l);
		return false;
	}
	return true;
}

/* ibv_resize_cq(@n) must fail with EINVAL and leave cq->cqe at @cqe. */
static void rl_refused(struct rl *l, int n, int cqe, const char *why,
		       const char *who)
{
	struct ibv_cq *cq = l->c.scq;
	int r, e;

	errno = 0;
	r = ibv_resize_cq(cq, n);
	e = r ? resize_err(r) : 0;
	if (!r)
		tp_fail("%s: resize-below: ibv_resize_cq(%d) %s succeeded, "
			"expected EINVAL", who, n, why);
	else if (e != EINVAL)
		tp_fail("%s: resize-below: ibv_resize_cq(%d) %s failed with %s,"
			" expected EINVAL", who, n, why, strerror(e));
	if (cq->cqe != cqe)
		tp_fail("%s: resize-below: after ibv_resize_cq(%d) %s cq->cqe "
			"is %d, was %d", who, n, why, cq->cqe, cqe);
}

/* Completions @first.. of "below", there to poll now, in order. */
static bool rl_poll_held(struct rl *l, uint32_t first, uint32_t cnt,
			 const char *who)
{
	struct ibv_wc wc;
	uint32_t i;
	int r;

	for (i = first; i < first + cnt; i++) {
		r = ibv_poll_cq(l->c.scq, 1, &wc);
		if (r != 1) {
			tp_fail("%s: resize-below: completion %u of the %u "
				"held: ibv_poll_cq returned %d (%s)", who, i,
				RL_HELD, r, r ? "an error" : "none: lost");
			return false;
		}
		if (wc.wr_id != RL_ID_BELOW + i ||
		    wc.status != IBV_WC_SUCCESS ||
		    wc.opcode != IBV_WC_RDMA_WRITE) {
			tp_fail("%s: resize-below: completion %u of the %u "
				"held: wr_id 0x%" PRIx64 ", status %s, opcode "
				"%s; expected 0x%" PRIx64 ", IBV_WC_SUCCESS, "
				"IBV_WC_RDMA_WRITE", who, i, RL_HELD,
				(uint64_t)wc.wr_id,
				tp_wc_status_name(wc.status),
				tp_wc_opcode_name(wc.opcode),
				RL_ID_BELOW + i);
			return false;
		}
	}
	return true;
}

/*
 * Phase "resize-below": RL_HELD completions held unpolled (each Write
 * posted with the CQ armed and its event awaited: the CQ then holds it),
 * resizes below them or out of range refused, none lost.
 */
static bool rl_below(struct ctx *x, struct rl *l, const char *who)
{
	struct ibv_cq *cq = l->c.scq;
	unsigned long before = tp_failures;
	struct ibv_device_attr da;
	int cqe = cq->cqe, r;
	char what[96];
	struct ibv_wc wc;
	uint32_t i;

	if (ibv_query_device(l->c.id->verbs, &da)) {
		tp_fail("ibv_query_device: %s", strerror(errno));
		return false;
	}
	if (cqe < RL_CQE)
		tp_fail("%s: resize-below: ibv_create_cq(%d) made a CQ of %d "
			"entries", who, RL_CQE, cqe);
	for (i = 0; i < RL_HELD; i++) {
		if (ibv_req_notify_cq(cq, 0)) {
			tp_fail("%s: ibv_req_notify_cq failed", who);
			return false;
		}
		r = rl_write(l, RL_ID_BELOW + i, i, 64);
		if (r) {
			tp_fail("%s: resize-below: posting RDMA Write %u: %s",
				who, i, strerror(r));
			return false;
		}
		snprintf(what, sizeof(what), "%s: resize-below: RDMA Write %u "
			 "of %u, posted with the CQ armed", who, i, RL_HELD);
		if (!rl_event(x, l, what))
			return false;
	}
	rl_refused(l, (int)RL_HELD / 2, cqe, "below the completions held",
		   who);
	rl_refused(l, 0, cqe, "(a size below 1)", who);
	rl_refused(l, -1, cqe, "(a size below 1)", who);
	if (da.max_cqe < INT_MAX)
		rl_refused(l, da.max_cqe + 1, cqe, "(max_cqe + 1)", who);
	else
		tp_fail("%s: ibv_query_device: max_cqe %d", who, da.max_cqe);
	/* All still there: the first half, then exactly as many entries */
	if (!rl_poll_held(l, 0, RL_HELD / 2, who))
		return false;
	errno = 0;
	r = ibv_resize_cq(cq, (int)RL_HELD / 2);
	if (r)
		tp_fail("%s: resize-below: ibv_resize_cq(%u) holding %u "
			"completions (not below them): %s", who, RL_HELD / 2,
			RL_HELD / 2, strerror(resize_err(r)));
	else if (cq->cqe != (int)RL_HELD / 2)
		tp_fail("%s: resize-below: after ibv_resize_cq(%u) cq->cqe is "
			"%d", who, RL_HELD / 2, cq->cqe);
	if (!rl_poll_held(l, RL_HELD / 2, RL_HELD / 2, who))
		return false;
	r = ibv_poll_cq(cq, 1, &wc);
	if (r)
		tp_fail("%s: resize-below: ibv_poll_cq after the %u held "
			"returned %d (wr_id 0x%" PRIx64 ")", who, RL_HELD, r,
			r > 0 ? (uint64_t)wc.wr_id : 0);
	/* Room again for "resize-load"'s first Writes */
	errno = 0;
	r = ibv_resize_cq(cq, RL_CQE);
	if (r || cq->cqe != RL_CQE) {
		tp_fail("%s: resize-below: ibv_resize_cq(%d) of the empty CQ: "
			"%s, cq->cqe %d", who, RL_CQE,
			r ? strerror(resize_err(r)) : "success", cq->cqe);
		return false;
	}
	if (tp_failures == before)
		tp_log("ok: %s: resize-below: with %u completions held "
		       "unpolled on a plain CQ of %d entries, ibv_resize_cq to "
		       "%u, 0, -1 and max_cqe + 1 (%d) failed with EINVAL, "
		       "cq->cqe unchanged; all %u then polled in order, a "
		       "resize to exactly the %u held succeeding half way",
		       who, RL_HELD, cqe, RL_HELD / 2, da.max_cqe + 1, RL_HELD,
		       RL_HELD / 2);
	return tp_failures == before;
}

/*
 * The poller of "resize-load": ibv_poll_cq until every Write completed,
 * each checked against posting order; what it finds for the main thread.
 */
static void *rl_poller(void *arg)
{
	struct rl *l = arg;
	struct ibv_wc wc[4];
	unsigned int spins = 0;
	uint64_t got = 0;
	int i, n;

	while (got < RL_WRITES &&
	       !__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE)) {
		n = ibv_poll_cq(l->c.scq, 4, wc);
		if (n < 0) {
			l->poll_ret = n;
			break;
		}
		for (i = 0; i < n; i++) {
			if (got >= RL_WRITES ||
			    wc[i].wr_id != RL_ID_LOAD + got ||
			    wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].opcode != IBV_WC_RDMA_WRITE) {
				l->bad_at = got;
				l->bad_wc = wc[i];
				__atomic_store_n(&l->bad, 1, __ATOMIC_RELEASE);
				return NULL;
			}
			got++;
		}
		__atomic_store_n(&l->done, got, __ATOMIC_RELEASE);
		/* One vCPU under TCG: leave the CPU to the resizer too. */
		if (n)
			spins = 0;
		else if (++spins > 32)
			usleep(50);
	}
	return NULL;
}

/*
 * Phase "resize-load": a second thread polls the send CQ with ibv_poll_cq
 * while this one streams Writes (at most RL_DEPTH in flight, so at most
 * that many held) and resizes the CQ between RL_DEPTH and 8 times it.
 */
static bool rl_load(struct ctx *x, struct rl *l, const char *who)
{
	uint64_t deadline = tp_now_ms() + (uint64_t)x->o.r.timeout_ms;
	uint64_t posted = 0, done = 0, prev = 0;
	unsigned long before = tp_failures;
	struct ibv_cq *cq = l->c.scq;
	struct ibv_wc wc;
	char what[64];
	pthread_t t;
	int r;

	snprintf(what, sizeof(what), "%s: resize-load", who);
	r = pthread_create(&t, NULL, rl_poller, l);
	if (r) {
		tp_fail("pthread_create: %s", strerror(r));
		return false;
	}
	while (done < RL_WRITES &&
	       !__atomic_load_n(&l->bad, __ATOMIC_ACQUIRE)) {
		while (posted < RL_WRITES && posted - done < RL_DEPTH) {
			r = rl_write(l, RL_ID_LOAD + posted,
				     (uint32_t)(posted % RL_DEPTH),
				     rl_len(posted));
			if (r) {
				tp_fail("%s: posting RDMA Write %" PRIu64
					": %s", what, posted, strerror(r));
				break;
			}
			posted++;
		}
		if (r)
			break;
		if (l->rz.count < RL_MAX_RESIZES &&
		    !rz_resize(&l->rz, cq, RL_DEPTH, what))
			break;
		if (tp_now_ms() > deadline) {
			tp_fail("%s: %" PRIu64 " of %u RDMA Write completions "
				"polled within %d ms (%" PRIu64 " posted)",
				what, done, RL_WRITES, x->o.r.timeout_ms,
				posted);
			break;
		}
		done = __atomic_load_n(&l->done, __ATOMIC_ACQUIRE);
		if (done == prev)
			usleep(100);
		prev = done;
	}
	__atomic_store_n(&l->stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	done = __atomic_load_n(&l->done, __ATOMIC_ACQUIRE);
	if (l->bad)
		tp_fail("%s: the polling thread's completion %" PRIu64 ": "
			"wr_id 0x%" PRIx64 ", status %s, opcode %s; expected "
			"0x%" PRIx64 " (posting order), IBV_WC_SUCCESS, "
			"IBV_WC_RDMA_WRITE", what, l->bad_at,
			(uint64_t)l->bad_wc.wr_id,
			tp_wc_status_name(l->bad_wc.status),
			tp_wc_opcode_name(l->bad_wc.opcode),
			RL_ID_LOAD + l->bad_at);
	if (l->poll_ret)
		tp_fail("%s: the polling thread's ibv_poll_cq returned %d",
			what, l->poll_ret);
	if (tp_failures != before)
		return false;
	/* Each once: nothing may follow. */
	usleep(QUIET_MS * 1000);
	r = ibv_poll_cq(cq, 1, &wc);
	if (r)
		tp_fail("%s: ibv_poll_cq after all %u completions returned %d "
			"(wr_id 0x%" PRIx64 ")", what, RL_WRITES, r,
			r > 0 ? (uint64_t)wc.wr_id : 0);
	if (tp_failures == before)
		tp_log("ok: %s: %u RDMA Writes (at most %u in flight) "
		       "completed on a plain CQ (ibv_create_cq) that a second "
		       "thread polled with ibv_poll_cq while this one resized "
		       "it %u times (cqe %d..%d, %u grew, %u shrank, cq->cqe "
		       "the size rounded up to a power of two): each completion"
		       " once, in posting order, none after", what, RL_WRITES,
		       RL_DEPTH, l->rz.count, l->rz.min, l->rz.max, l->rz.grew,
		       l->rz.shrank);
	return tp_failures == before;
}

/*
 * The end of the phases: our end message (how many checks failed here),
 * the peer's, then the peer's last Write to each slot must be there (its
 * Send follows its Writes on the connection).
 */
static bool rl_end(struct ctx *x, struct rl *l, unsigned long fails,
		   const char *who)
{
	uint8_t *dst = l->dst.addr;
	uint64_t w[4] = { RL_MAGIC, RL_WRITES, fails }, seq;
	unsigned long before = tp_failures;
	struct ibv_wc wc;
	int64_t bad;
	uint32_t j;
	int r;

	/* After a failure: whatever is still to complete, first */
	if (fails)
		while (tp_poll(l->c.scq, &wc, QUIET_MS) > 0)
			;
	tp_pdata_put(l->msg.addr, w, 4);
	r = tp_post_send(&l->c, RL_ID_DONE, l->msg.addr, MSG_LEN,
			 l->msg.mr->lkey, IBV_SEND_SIGNALED);
	if (r) {
		tp_fail("%s: resize: posting the end message: %s", who,
			strerror(r));
		return false;
	}
	if (!tp_wait_ok(l->c.scq, IBV_WC_SEND, RL_ID_DONE,
			"resize: the end message", x->o.r.timeout_ms, NULL) ||
	    !tp_wait_ok(l->c.rcq, IBV_WC_RECV, RL_ID_DONE,
			"resize: the peer's end message", x->o.r.timeout_ms,
			&wc))
		return false;
	tp_pdata_get((uint8_t *)l->msg.addr + MSG_LEN, MSG_LEN, w, 4);
	if (wc.byte_len != MSG_LEN || w[0] != RL_MAGIC || w[1] != RL_WRITES) {
		tp_fail("%s: resize: the peer's end message is not one "
			"(%u bytes)", who, wc.byte_len);
		return false;
	}
	if (w[2])
		tp_fail("%s: resize: the peer reported %" PRIu64 " failed "
			"check(s) (see its output)", who, w[2]);
	if (fails)
		return false;
	for (j = 0; j < RL_DEPTH; j++) {
		seq = RL_WRITES - RL_DEPTH + j;
		bad = pat_check(dst + (size_t)j * RL_SLOT, rl_len(seq),
				RL_ID_LOAD + seq);
		if (bad >= 0)
			tp_fail("%s: resize-load: byte %" PRId64 " of the "
				"peer's RDMA Write %" PRIu64 " is 0x%02x, "
				"expected 0x%02x", who, bad, seq,
				dst[(size_t)j * RL_SLOT + (size_t)bad],
				pat_byte(RL_ID_LOAD + seq, (uint32_t)bad));
	}
	return tp_failures == before;
}

/* Both phases and the end, on a connected @l. */
static bool rl_run(struct ctx *x, struct rl *l, const char *who)
{
	unsigned long before = tp_failures;

	if (rl_below(x, l, who))
		rl_load(x, l, who);
	return rl_end(x, l, tp_failures - before, who) &&
	       tp_failures == before;
}

static void rl_free(struct rl *l)
{
	tp_buf_free(&l->src);
	tp_buf_free(&l->dst);
	tp_buf_free(&l->msg);
}

/* Server. */

static bool post_recv_slot(struct ctx *x, uint32_t slot)
{
	uint8_t *b = (uint8_t *)x->rbuf.addr + (size_t)slot * RECV_BUF;
	int r;

	memset(b, CANARY, RECV_BUF);
	stamp_now(&x->rposted[slot]);
	r = tp_post_recv(&x->c, slot, b, RECV_BUF, x->rbuf.mr->lkey);
	if (r) {
		tp_fail("ibv_post_recv: %s", strerror(r));
		return false;
	}
	x->rq[(x->rq_head + x->rq_len++) % MAX_W] = slot;
	return true;
}

/* The RQ's oldest receive, which the next completion must consume. */
static bool rq_pop(struct ctx *x, uint64_t wr_id, const char *what)
{
	uint32_t want = x->rq[x->rq_head];

	if (!x->rq_len) {
		tp_fail("%s: a receive completion (wr_id %" PRIu64 ") with no"
			" receive posted", what, wr_id);
		return false;
	}
	if (wr_id != want) {
		tp_fail("%s: completion for receive %" PRIu64 ", expected %u"
			" (the RQ's oldest)", what, wr_id, want);
		return false;
	}
	x->rq_head = (x->rq_head + 1) % MAX_W;
	x->rq_len--;
	return true;
}

/* To the client: (kind, val) and how many checks of its data failed. */
static bool send_msg(struct ctx *x, uint64_t kind, uint64_t val)
{
	uint64_t w[4] = { CQX_MAGIC, kind, val, tp_failures - x->fail_base };
	int r;

	tp_pdata_put(x->msg.addr, w, 4);
	r = tp_post_send(&x->c, kind, x->msg.addr, MSG_LEN, x->msg.mr->lkey,
			 IBV_SEND_SIGNALED);
	if (r) {
		tp_fail("posting the Send to the client: %s", strerror(r));
		return false;
	}
	return tp_wait_ok(x->c.scq, IBV_WC_SEND, kind, "Send to the client",
			  x->o.r.timeout_ms, NULL);
}

/*
 * Server: one data completion, message @seq, every field and byte. False
 * when it cannot be the receive expected (its buffer is not to be reused).
 */
static bool check_recv(struct ctx *x, const struct xwc *w, uint64_t seq)
{
	enum kind k = msg_kind(x->p.seed, seq);
	uint32_t len = msg_len(x->p.seed, seq);
	unsigned int want_flags = k == K_SEND ? 0 : IBV_WC_WITH_IMM;
	enum ibv_wc_opcode want_op = k == K_SEND ? IBV_WC_RECV :
				     IBV_WC_RECV_RDMA_WITH_IMM;
	uint8_t *slot = (uint8_t *)x->data.addr +
			(seq % x->p.window) * x->stride;
	uint8_t *rb, imm8[IMM8_LEN];
	uint32_t imm4;
	char what[96];
	int64_t bad;

	snprintf(what, sizeof(what), "message %" PRIu64 " (%s, %u bytes)",
		 seq, kind_name[k], len);
	tp_vlog("%s: status %s, opcode %s, byte_len %u, wc_flags 0x%x, "
		"imm 0x%08x, ts %" PRIu64, what, tp_wc_status_name(w->status),
		tp_wc_opcode_name(w->opcode), w->byte_len, w->wc_flags,
		ntohl(w->imm_data), w->ts);
	if (w->status != IBV_WC_SUCCESS) {
		tp_fail("%s: status %s (%d), vendor_err 0x%x", what,
			tp_wc_status_name(w->status), w->status,
			w->vendor_err);
		return false;
	}
	if (!rq_pop(x, w->wr_id, what))
		return false;
	check_ts(x, w, &x->rposted[w->wr_id], what);
	if (w->opcode != want_op)
		tp_fail("%s: opcode %s (%d), expected %s", what,
			tp_wc_opcode_name(w->opcode), w->opcode,
			tp_wc_opcode_name(want_op));
	if (w->byte_len != len)
		tp_fail("%s: byte_len %u, expected %u", what, w->byte_len,
			len);
	if (w->wc_flags != want_flags)
		tp_fail("%s: wc_flags 0x%x, expected 0x%x (IBV_WC_WITH_IMM "
			"exactly when Immediate Data came)", what, w->wc_flags,
			want_flags);
	want_imm8(x->p.seed, seq, imm8);
	/* imm_data means something only with IBV_WC_WITH_IMM */
	memcpy(&imm4, imm8, 4);
	if (want_flags && w->imm_data != imm4)
		tp_fail("%s: imm_data 0x%08x, expected 0x%08x (host order)",
			what, ntohl(w->imm_data), ntohl(imm4));
	if (memcmp(w->imm8, imm8, IMM8_LEN))
		tp_fail("%s: siwxdv_wc_read_imm8 %02x%02x%02x%02x %02x%02x%02x"
			"%02x, expected %02x%02x%02x%02x %02x%02x%02x%02x",
			what, w->imm8[0], w->imm8[1], w->imm8[2], w->imm8[3],
			w->imm8[4], w->imm8[5], w->imm8[6], w->imm8[7],
			imm8[0], imm8[1], imm8[2], imm8[3], imm8[4], imm8[5],
			imm8[6], imm8[7]);
	if (w->qp_num != x->c.qp->qp_num)
		tp_fail("%s: qp_num %u, expected %u", what, w->qp_num,
			x->c.qp->qp_num);
	if (w->src_qp || w->slid || w->sl || w->dlid_path_bits)
		tp_fail("%s: src_qp %u, slid %u, sl %u, dlid_path_bits %u; "
			"expected all 0 on iWARP", what, w->src_qp, w->slid,
			w->sl, w->dlid_path_bits);
	rb = (uint8_t *)x->rbuf.addr + w->wr_id * RECV_BUF;
	if (k == K_SEND) {
		bad = pat_check(rb, len, seq);
		if (bad >= 0)
			tp_fail("%s: payload byte %" PRId64 " is 0x%02x, "
				"expected 0x%02x", what, bad, rb[bad],
				pat_byte(seq, (uint32_t)bad));
		bad = canary_check(rb + len, RECV_BUF - len);
		if (bad >= 0)
			tp_fail("%s: receive buffer written at offset %" PRId64
				" past the payload", what, len + bad);
		x->nsend++;
		x->bytes += len;
		return true;
	}
	bad = canary_check(rb, RECV_BUF);
	if (bad >= 0)
		tp_fail("%s: the receive it consumed was written at offset %"
			PRId64, what, bad);
	bad = pat_check(slot, len, seq);
	if (bad >= 0)
		tp_fail("%s: written byte %" PRId64 " is 0x%02x, expected "
			"0x%02x%s", what, bad, slot[bad],
			pat_byte(seq, (uint32_t)bad),
			slot[bad] == CANARY ? " (never written)" : "");
	bad = canary_check(slot + len, GUARD);
	if (bad >= 0)
		tp_fail("%s: byte %" PRId64 " after the write's end was "
			"written (0x%02x)", what, bad, slot[len + bad]);
	memset(slot, CANARY, (size_t)len + GUARD);
	if (k == K_WIMM)
		x->nimm4++;
	else
		x->nimm8++;
	x->bytes += len;
	return true;
}

/* What the receive CQ holds when no event came: for the message. */
static const char *rcq_diagnosis(struct ctx *x)
{
	struct xwc w;
	int n = xcq_drain(x, &w, 1);

	return n > 0 ? "a completion is in the CQ but no event came" :
	       n == 0 ? "no completion arrived either" : "polling failed";
}

/*
 * One completion event of the receive CQ within @ms, acknowledged, the CQ
 * armed again before it is polled (so that no completion goes without an
 * event): 1, 0 (none in time) or -1.
 */
static int rcq_event(struct ctx *x, int ms)
{
	struct pollfd p = { .fd = x->c.rch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;
	int r = poll(&p, 1, ms);

	if (r <= 0)
		return r < 0 && errno != EINTR ? -1 : 0;
	if (ibv_get_cq_event(x->c.rch, &cq, &cq_ctx)) {
		tp_fail("ibv_get_cq_event: %s", strerror(errno));
		return -1;
	}
	/* Acknowledged whatever it is: ibv_destroy_cq waits for that. */
	ibv_ack_cq_events(cq, 1);
	x->events++;
	if (cq != x->c.rcq || cq_ctx != x) {
		tp_fail("ibv_get_cq_event: CQ %p with context %p, expected "
			"the extended receive CQ %p with context %p",
			(void *)cq, cq_ctx, (void *)x->c.rcq, (void *)x);
		return -1;
	}
	if (ibv_req_notify_cq(cq, 0)) {
		tp_fail("ibv_req_notify_cq on the extended CQ failed");
		return -1;
	}
	return 1;
}

/* -r: what the receive CQ's resizes since the last event were, if any. */
static const char *rz_note(struct ctx *x)
{
	static char note[224];

	if (x->rz_idle_pending)
		snprintf(note, sizeof(note), "; before this wait the receive "
			 "CQ was armed with nothing held or pending, then "
			 "resized twice: with a completion in the CQ, the arm "
			 "did not survive ibv_resize_cq");
	else if (x->rz_since_event)
		snprintf(note, sizeof(note), "; the receive CQ was resized %u "
			 "time(s) while armed since the last event: the arm "
			 "did not survive ibv_resize_cq?", x->rz_since_event);
	else
		note[0] = 0;
	return note;
}

/* -r: the next resize of the receive CQ (at most a window held). */
static bool rcq_resize(struct ctx *x, const char *when)
{
	char what[96];

	snprintf(what, sizeof(what), "resize-receive (%s)", when);
	if (!rz_resize(&x->rz, x->c.rcq, (uint32_t)x->p.window, what))
		return false;
	x->rz_since_event++;
	return true;
}

/*
 * -r, at a window's end before its acknowledgement, when nothing can
 * complete on the receive CQ: take the events of completions polled
 * already, arm the CQ, make sure it holds nothing, resize it twice. The
 * client's next Send must then raise an event through the arm made
 * before the resizes.
 */
static bool rcq_resize_idle(struct ctx *x)
{
	struct pollfd p = { .fd = x->c.rch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	struct xwc w;
	void *cq_ctx;
	int n;

	while (poll(&p, 1, 0) > 0) {
		if (ibv_get_cq_event(x->c.rch, &cq, &cq_ctx)) {
			tp_fail("ibv_get_cq_event: %s", strerror(errno));
			return false;
		}
		ibv_ack_cq_events(cq, 1);
		x->events++;
	}
	if (ibv_req_notify_cq(x->c.rcq, 0)) {
		tp_fail("ibv_req_notify_cq on the extended CQ failed");
		return false;
	}
	n = xcq_drain(x, &w, 1);
	if (n > 0)
		tp_fail("resize-receive: a receive completion (wr_id %" PRIu64
			", status %s) before the window was acknowledged",
			w.wr_id, tp_wc_status_name(w.status));
	if (n)
		return false;
	if (!rcq_resize(x, "armed, nothing held, before the acknowledgement")
	    || !rcq_resize(x, "armed, nothing held, before the "
			   "acknowledgement"))
		return false;
	x->rz_idle_rounds++;
	x->rz_idle_pending = true;
	return true;
}

/* Phase "receive" (with -r "resize-receive" too). */
static bool server_data(struct ctx *x)
{
	bool resize = x->p.flags & P_RESIZE;
	uint64_t seq = 0, next_ack = x->p.window;
	struct xwc w[MAX_W];
	int i, n, r;

	x->fail_base = tp_failures;
	while (seq < x->p.n) {
		r = rcq_event(x, x->o.r.timeout_ms);
		if (r == 0)
			tp_fail("message %" PRIu64 ": no CQ event within %d ms "
				"(%s)%s", seq, x->o.r.timeout_ms,
				rcq_diagnosis(x), rz_note(x));
		if (r <= 0)
			return false;
		x->rz_idle_proven += x->rz_idle_pending;
		x->rz_idle_pending = false;
		x->rz_since_event = 0;
		/* Armed again, the event's completion(s) not yet polled */
		if (resize && rcq_resize(x, "after a CQ event, armed, "
					 "before polling"))
			x->rz_after_event++;
		n = xcq_drain(x, w, MAX_W);
		if (n < 0)
			return false;
		/* An event may find its completion taken by the last batch */
		for (i = 0; i < n; i++) {
			if (seq >= x->p.n) {
				tp_fail("a receive completion after the last "
					"message (status %s, opcode %s)",
					tp_wc_status_name(w[i].status),
					tp_wc_opcode_name(w[i].opcode));
				break;
			}
			if (!check_recv(x, &w[i], seq++))
				break;
		}
		/*
		 * The client stops at the first acknowledgement that reports
		 * failures: so do we, after telling it.
		 */
		if (tp_failures != x->fail_base) {
			send_msg(x, MSG_FINAL, seq);
			return false;
		}
		/* The receives back before the client may send again */
		for (i = 0; i < n; i++)
			if (!post_recv_slot(x, (uint32_t)w[i].wr_id))
				return false;
		/* Between polls: armed, the client's Sends in flight */
		if (resize && rcq_resize(x, "between polls, armed"))
			x->rz_between++;
		if (resize && seq >= next_ack && seq < x->p.n)
			rcq_resize_idle(x);
		if (resize && tp_failures != x->fail_base) {
			send_msg(x, MSG_FINAL, seq);
			return false;
		}
		if (seq >= next_ack && seq < x->p.n) {
			if (!send_msg(x, MSG_WINDOW, seq))
				return false;
			next_ack = seq + x->p.window;
		}
	}
	/* Nothing more, and nothing written anywhere else. */
	n = xcq_drain(x, w, MAX_W);
	if (n > 0)
		tp_fail("%d receive completion(s) after the last message "
			"(the first: status %s, wr_id %" PRIu64 ")", n,
			tp_wc_status_name(w[0].status), w[0].wr_id);
	if (canary_check(x->data.addr, x->data.len) >= 0)
		tp_fail("stray write: the buffer changed outside the writes");
	if (tp_failures == x->fail_base)
		tp_log("ok: server: receive: %" PRIu64 " completions through %"
		       PRIu64 " CQ events in %" PRIu64 " start/next/end_poll "
		       "batches: %" PRIu64 " Sends, %" PRIu64 " 4-octet and %"
		       PRIu64 " 8-octet write-with-imm, %" PRIu64 " bytes; "
		       "status, wr_id, opcode, byte_len, wc_flags, imm_data, "
		       "imm8, qp_num, src_qp/slid/sl/dlid_path_bits, both "
		       "timestamps and the data as expected", x->p.n,
		       x->events, x->batches, x->nsend, x->nimm4, x->nimm8,
		       x->bytes);
	if (resize && tp_failures == x->fail_base)
		tp_log("ok: server: resize-receive: %u ibv_resize_cq of the "
		       "event-driven extended receive CQ amid those messages "
		       "(cqe %d..%d, %u grew, %u shrank, cq->cqe the size "
		       "rounded up to a power of two): %u right after a CQ "
		       "event, armed, completions unpolled; %u between polls, "
		       "armed, Sends in flight; %u rounds of two while armed "
		       "with nothing held before a window's acknowledgement, "
		       "the arm raising the next event %u times; every "
		       "completion as in the receive phase (none lost, "
		       "duplicated or reordered)", x->rz.count, x->rz.min,
		       x->rz.max, x->rz.grew, x->rz.shrank, x->rz_after_event,
		       x->rz_between, x->rz_idle_rounds, x->rz_idle_proven);
	return send_msg(x, MSG_FINAL, x->p.n);
}

/*
 * Phase "flush": the client's Read with a bad rkey makes this side send a
 * Terminate, which puts the QP in ERROR: every receive still posted comes
 * back flushed, once, in RQ order, through the event-driven extended CQ;
 * and the connection ends.
 */
static bool server_flush(struct ctx *x)
{
	struct pollfd p[2] = { { .fd = x->c.rch->fd, .events = POLLIN },
			       { .fd = x->ec->fd, .events = POLLIN } };
	uint64_t deadline = tp_now_ms() + (uint64_t)x->o.r.timeout_ms;
	unsigned long before = tp_failures;
	uint32_t flushed = 0, posted = x->rq_len;
	struct rdma_cm_event *ev;
	bool ended = false;
	struct xwc w[MAX_W];
	char what[64];
	int i, n;

	while (flushed < posted || !ended) {
		uint64_t now = tp_now_ms();

		if (now >= deadline) {
			tp_fail("flush: after the client's error %u of %u "
				"receives flushed (%s), the connection %s "
				"within %d ms", flushed, posted,
				rcq_diagnosis(x), ended ? "ended" :
				"did not end", x->o.r.timeout_ms);
			return false;
		}
		if (poll(p, 2, (int)(deadline - now)) <= 0)
			continue;
		if (p[0].revents) {
			if (rcq_event(x, 0) < 0)
				return false;
			n = xcq_drain(x, w, MAX_W);
			if (n < 0)
				return false;
			for (i = 0; i < n; i++) {
				snprintf(what, sizeof(what), "flush: receive %"
					 PRIu64, w[i].wr_id);
				if (w[i].status != IBV_WC_WR_FLUSH_ERR)
					tp_fail("%s: status %s, expected "
						"IBV_WC_WR_FLUSH_ERR", what,
						tp_wc_status_name(w[i].status));
				if (!rq_pop(x, w[i].wr_id, what))
					return false;
				if (w[i].qp_num != x->c.qp->qp_num)
					tp_fail("%s: qp_num %u, expected %u",
						what, w[i].qp_num,
						x->c.qp->qp_num);
				check_ts(x, &w[i], &x->rposted[w[i].wr_id],
					 what);
				flushed++;
			}
		}
		if (p[1].revents && !rdma_get_cm_event(x->ec, &ev)) {
			tp_vlog("rdma_cm event %s",
				rdma_event_str(ev->event));
			if (ev->id == x->c.id &&
			    (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
			     ev->event == RDMA_CM_EVENT_CONNECT_ERROR))
				ended = true;
			rdma_ack_cm_event(ev);
		}
	}
	/* Once each: nothing may follow. */
	usleep(QUIET_MS * 1000);
	n = xcq_drain(x, w, MAX_W);
	if (n > 0)
		tp_fail("flush: %d completion(s) after every receive was "
			"flushed (the first: wr_id %" PRIu64 ", status %s)", n,
			w[0].wr_id, tp_wc_status_name(w[0].status));
	if (tp_failures == before)
		tp_log("ok: server: flush: the %u posted receives came back "
		       "IBV_WC_WR_FLUSH_ERR once each, in RQ order, through "
		       "CQ events and start/next/end_poll, timestamps in "
		       "order", posted);
	return true;
}

/*
 * -r: the client's second connection (after the receive phase), phases
 * "resize-below" and "resize-load"; the client disconnects it.
 */
static bool server_resize(struct ctx *x)
{
	uint8_t pd[TP_ACCEPT_PDATA_MAX];
	struct rl *l = calloc(1, sizeof(*l));
	bool ok = false;

	if (!l)
		tp_die("out of memory");
	if (!tp_get_request(x->ec, x->listen, &l->c, x->o.r.timeout_ms))
		goto out;
	tp_own_channel(&l->c);
	if (!rl_peer_pdata(l) || !rl_setup(x, l))
		goto out;
	rl_pdata(l, pd);
	if (!tp_accept(&l->c, pd, 24, 0, x->o.r.timeout_ms))
		goto out;
	ok = rl_run(x, l, "server");
	ok = tp_close_after_peer(&l->c, 1, x->o.r.timeout_ms) && ok;
out:
	tp_destroy(&l->c);
	rl_free(l);
	free(l);
	return ok;
}

static bool server_params(struct ctx *x)
{
	uint64_t w[5];

	if (!tp_pdata_get(x->c.peer_pdata, x->c.peer_pdata_len, w, 4) ||
	    w[0] != CQX_MAGIC) {
		tp_fail("connect request without siwx-cq-ex private data "
			"(%zu bytes)", x->c.peer_pdata_len);
		return false;
	}
	/* The flags word only with -r: without, the request is as before */
	if (!tp_pdata_get(x->c.peer_pdata, x->c.peer_pdata_len, w, 5))
		w[4] = 0;
	x->p = (struct params){ w[1], w[2], w[3], w[4] };
	if (x->p.window < 2 || x->p.window > MAX_W || x->p.n <= x->p.window ||
	    (x->p.flags & ~(uint64_t)P_RESIZE)) {
		tp_fail("unusable parameters from the client");
		return false;
	}
	if (x->o.resize && !(x->p.flags & P_RESIZE)) {
		tp_fail("-r: the client did not ask for the resize phases "
			"(give it -r too)");
		return false;
	}
	return true;
}

/*
 * The QP: receives complete on an extended CQ with every accepted flag on
 * a completion channel, the acknowledgements on a plain CQ.
 */
static bool server_qp(struct ctx *x)
{
	struct ibv_context *ctx = x->c.id->verbs;
	struct ibv_cq_init_attr_ex ca = {
		.cqe = x->nrecv + 1,
		.cq_context = x,
		.wc_flags = WC_ACCEPTED,
	};
	struct ibv_qp_init_attr_ex qa;

	x->c.rch = ibv_create_comp_channel(ctx);
	if (!x->c.rch) {
		tp_fail("ibv_create_comp_channel: %s", strerror(errno));
		return false;
	}
	ca.channel = x->c.rch;
	x->cqx = ibv_create_cq_ex(ctx, &ca);
	if (!x->cqx) {
		tp_fail("ibv_create_cq_ex(every accepted wc_flag, completion "
			"channel): %s", strerror(errno));
		return false;
	}
	x->cqx_flags = WC_ACCEPTED;
	x->c.rcq = ibv_cq_ex_to_cq(x->cqx);
	x->c.scq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!x->c.scq) {
		tp_fail("ibv_create_cq: %s", strerror(errno));
		return false;
	}
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RC;
	qa.send_cq = x->c.scq;
	qa.recv_cq = x->c.rcq;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = x->nrecv;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.pd = x->pd;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (rdma_create_qp_ex(x->c.id, &qa)) {
		tp_fail("rdma_create_qp_ex: %s", strerror(errno));
		return false;
	}
	x->c.qp = x->c.id->qp;
	/* Armed before the first completion can come */
	if (ibv_req_notify_cq(x->c.rcq, 0)) {
		tp_fail("ibv_req_notify_cq on the extended CQ failed");
		return false;
	}
	return true;
}

static bool server_setup(struct ctx *x)
{
	uint8_t pd[TP_ACCEPT_PDATA_MAX];
	uint64_t w[5];
	uint32_t i;

	x->stride = ((uint64_t)WRITE_MAX + GUARD + 4095) & ~4095ULL;
	x->nrecv = (uint32_t)x->p.window;
	if (!tp_buf_alloc(&x->data, x->pd, x->stride * x->p.window,
			  x->stride * x->p.window,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) ||
	    !tp_buf_alloc(&x->rbuf, x->pd, (size_t)x->nrecv * RECV_BUF,
			  (size_t)x->nrecv * RECV_BUF,
			  IBV_ACCESS_LOCAL_WRITE) ||
	    !tp_buf_alloc(&x->msg, x->pd, 4096, 4096, IBV_ACCESS_LOCAL_WRITE))
		return false;
	memset(x->data.addr, CANARY, x->data.len);
	if (!server_qp(x))
		return false;
	for (i = 0; i < x->nrecv; i++)
		if (!post_recv_slot(x, i))
			return false;
	w[0] = CQX_MAGIC;
	w[1] = (uintptr_t)x->data.addr;
	w[2] = x->data.mr->rkey;
	w[3] = x->stride;
	w[4] = x->p.window;
	tp_pdata_put(pd, w, 5);
	return tp_accept(&x->c, pd, 40, 0, x->o.r.timeout_ms);
}

static int run_server(struct ctx *x)
{
	struct rdma_cm_id *listen = tp_listen(x->ec, x->o.r.port);
	bool ok;

	x->listen = listen;
	if (!tp_get_request(x->ec, listen, &x->c, 600000) || !server_params(x))
		return 1;
	x->pd = ibv_alloc_pd(x->c.id->verbs);
	if (!x->pd)
		tp_die("ibv_alloc_pd: %s", strerror(errno));
	x->c.pd = x->pd;
	tp_print_device(x->c.id->verbs, "server");
	if (!dv_open(x))
		return TP_EXIT_SKIP;
	/* Before any memory is registered: count_cqs() runs a program. */
	phase_device(x, "server");
	phase_clock(x, "server");
	if (!server_setup(x))
		return 1;
	tp_log("client connected: n=%" PRIu64 ", window %" PRIu64 ", seed %"
	       PRIu64, x->p.n, x->p.window, x->p.seed);
	ok = server_data(x) &&
	     (!(x->p.flags & P_RESIZE) || server_resize(x)) && server_flush(x);
	ok = ok && !tp_failures;
	if (ok)
		tp_log("PASS: server: extended receive CQ verified (%" PRIu64
		       " messages, %" PRIu64 " CQ events)", x->p.n, x->events);
	else
		tp_log("FAILED: server: %lu failed check(s)", tp_failures);
	tp_destroy(&x->c);
	rdma_destroy_id(listen);
	return ok ? 0 : 1;
}

/* Client. */

static bool post_ack_recv(struct ctx *x, uint32_t i)
{
	int r = tp_post_recv(&x->c, i, (uint8_t *)x->rbuf.addr + i * MSG_LEN,
			     MSG_LEN, x->rbuf.mr->lkey);

	if (r)
		tp_fail("ibv_post_recv: %s", strerror(r));
	return !r;
}

/* The next server message must be (kind, val) with no failures. */
static bool recv_msg(struct ctx *x, uint64_t kind, uint64_t val)
{
	struct ibv_wc wc;
	uint64_t w[4];
	int r = tp_poll(x->c.rcq, &wc, x->o.r.timeout_ms);

	if (r <= 0) {
		tp_fail("no acknowledgement of message %" PRIu64 " from the "
			"server within %d ms", val - 1, x->o.r.timeout_ms);
		return false;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
	    wc.byte_len != MSG_LEN || wc.wr_id >= 2) {
		tp_fail("server message: status %s, opcode %s, byte_len %u, "
			"wr_id %" PRIu64, tp_wc_status_name(wc.status),
			tp_wc_opcode_name(wc.opcode), wc.byte_len,
			(uint64_t)wc.wr_id);
		return false;
	}
	tp_pdata_get((uint8_t *)x->rbuf.addr + wc.wr_id * MSG_LEN, MSG_LEN, w,
		     4);
	if (w[3]) {
		tp_fail("the server reported %" PRIu64 " failed check(s) by "
			"message %" PRIu64 " (see its output)", w[3], w[2]);
		return false;
	}
	if (w[0] != CQX_MAGIC || w[1] != kind || w[2] != val) {
		tp_fail("server message (kind %" PRIu64 ", value %" PRIu64
			"), expected (kind %" PRIu64 ", value %" PRIu64 ")",
			w[1], w[2], kind, val);
		return false;
	}
	return post_ack_recv(x, (uint32_t)wc.wr_id);
}

/* A WR through ibv_post_send (the classic API), signaled. */
static int post_verbs(struct ctx *x, uint64_t wr_id, enum ibv_wr_opcode op,
		      void *addr, uint32_t len, uint64_t raddr, uint32_t rkey,
		      uint32_t imm_host, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, x->data.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = len ? 1 : 0, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED | flags,
				  .imm_data = htonl(imm_host) };
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(x->c.qp, &wr, &bad);
}

/* A write-with-imm of all 8 octets, through the ibv_wr_* API. */
static int post_imm8(struct ctx *x, uint64_t wr_id, void *addr, uint32_t len,
		     uint64_t raddr, const uint8_t imm[IMM8_LEN])
{
	struct ibv_qp_ex *q = x->c.qpx;

	ibv_wr_start(q);
	q->wr_id = wr_id;
	q->wr_flags = IBV_SEND_SIGNALED;
	x->dv.write_imm8(q, x->rkey, raddr, imm);
	if (len)
		ibv_wr_set_sge(q, x->data.mr->lkey, (uintptr_t)addr, len);
	else
		ibv_wr_set_sge_list(q, 0, NULL);
	return ibv_wr_complete(q);
}

static bool post_msg(struct ctx *x, uint64_t seq)
{
	enum kind k = msg_kind(x->p.seed, seq);
	uint32_t len = msg_len(x->p.seed, seq);
	uint32_t slot = (uint32_t)(seq % x->p.window);
	uint8_t *src = (uint8_t *)x->data.addr + (size_t)slot * SRC_STRIDE;
	uint64_t raddr = x->raddr + slot * x->stride;
	uint8_t imm[IMM8_LEN];
	int r;

	pat_fill(src, len, seq);
	stamp_now(&x->sposted[slot]);
	switch (k) {
	case K_SEND:
		r = post_verbs(x, seq, IBV_WR_SEND, src, len, 0, 0, 0, 0);
		break;
	case K_WIMM:
		r = post_verbs(x, seq, IBV_WR_RDMA_WRITE_WITH_IMM, src, len,
			       raddr, x->rkey, msg_imm(x->p.seed, seq), 0);
		break;
	default:
		msg_imm8(x->p.seed, seq, imm);
		r = post_imm8(x, seq, src, len, raddr, imm);
		break;
	}
	if (r) {
		tp_fail("posting message %" PRIu64 " (%s, %u bytes): %s", seq,
			kind_name[k], len, strerror(r));
		return false;
	}
	x->nsend += k == K_SEND;
	x->nimm4 += k == K_WIMM;
	x->nimm8 += k == K_WIMM8;
	x->bytes += len;
	return true;
}

/* A send completion: what every one must be. */
static void check_sq(struct ctx *x, const struct xwc *w, uint64_t want_id,
		     enum ibv_wc_status want_st, int want_op,
		     const struct stamp *posted, const char *what)
{
	if (w->wr_id != want_id)
		tp_fail("%s: completion for wr_id %" PRIu64 ", expected %"
			PRIu64 " (posting order)", what, w->wr_id, want_id);
	if (w->status != want_st)
		tp_fail("%s: status %s (%d), vendor_err 0x%x; expected %s",
			what, tp_wc_status_name(w->status), w->status,
			w->vendor_err, tp_wc_status_name(want_st));
	/* verbs define the opcode of successful completions only */
	else if (want_op >= 0 && w->opcode != (enum ibv_wc_opcode)want_op)
		tp_fail("%s: opcode %s (%d), expected %s", what,
			tp_wc_opcode_name(w->opcode), w->opcode,
			tp_wc_opcode_name((enum ibv_wc_opcode)want_op));
	check_ts(x, w, posted, what);
}

static enum ibv_wc_opcode send_opcode(const struct ctx *x, uint64_t seq)
{
	return msg_kind(x->p.seed, seq) == K_SEND ? IBV_WC_SEND :
						    IBV_WC_RDMA_WRITE;
}

/*
 * @cnt completions of the extended send CQ, polled busy: start_poll
 * until it finds one, then next_poll until ENOENT. @check gets each with
 * its index, counted from @base; false on timeout or a poll error.
 */
static bool reap_ex(struct ctx *x, uint64_t base, uint64_t cnt,
		    const char *what,
		    void (*check)(struct ctx *, const struct xwc *, uint64_t))
{
	uint64_t got = 0, deadline = tp_now_ms() + (uint64_t)x->o.r.timeout_ms;
	unsigned int spins = 0;
	struct xwc w[MAX_W + 8];
	int i, n;

	while (got < cnt) {
		n = xcq_drain(x, w, (int)(cnt - got));
		if (n < 0)
			return false;
		for (i = 0; i < n; i++)
			check(x, &w[i], base + got++);
		if (n)
			continue;
		if (tp_now_ms() > deadline) {
			tp_fail("%s: %" PRIu64 " of %" PRIu64 " completions "
				"within %d ms", what, got, cnt,
				x->o.r.timeout_ms);
			return false;
		}
		/* One vCPU under TCG: leave the CPU to the soft device. */
		if (++spins > 32)
			usleep(100);
	}
	return true;
}

static void check_data_ex(struct ctx *x, const struct xwc *w, uint64_t seq)
{
	char what[80];

	snprintf(what, sizeof(what), "send completion %" PRIu64 " (%s)", seq,
		 kind_name[msg_kind(x->p.seed, seq)]);
	check_sq(x, w, seq, IBV_WC_SUCCESS, send_opcode(x, seq),
		 &x->sposted[seq % x->p.window], what);
}

/* The same completions through ibv_poll_cq() on the extended CQ. */
static bool reap_legacy(struct ctx *x, uint64_t first, uint64_t cnt)
{
	struct ibv_cq *cq = ibv_cq_ex_to_cq(x->cqx);
	uint64_t seq;
	struct ibv_wc wc;
	int r;

	for (seq = first; seq < first + cnt; seq++) {
		r = tp_poll(cq, &wc, x->o.r.timeout_ms);
		if (r <= 0) {
			tp_fail("send completion %" PRIu64 ": %s", seq,
				r ? "ibv_poll_cq on the extended CQ failed" :
				"none within the time limit (ibv_poll_cq on "
				"the extended CQ)");
			return false;
		}
		if (wc.wr_id != seq || wc.status != IBV_WC_SUCCESS ||
		    wc.opcode != send_opcode(x, seq) ||
		    wc.qp_num != x->c.qp->qp_num)
			tp_fail("send completion %" PRIu64 " (ibv_poll_cq on "
				"the extended CQ): wr_id %" PRIu64 ", status "
				"%s, opcode %s, qp_num %u; expected %" PRIu64
				", IBV_WC_SUCCESS, %s, %u", seq,
				(uint64_t)wc.wr_id,
				tp_wc_status_name(wc.status),
				tp_wc_opcode_name(wc.opcode), wc.qp_num, seq,
				tp_wc_opcode_name(send_opcode(x, seq)),
				x->c.qp->qp_num);
	}
	return true;
}

/*
 * -r: a window's completions in two halves, the send CQ resized after
 * posting (WRs in flight) and between the halves (half the window
 * unpolled, the rest coming); at most the SQ's depth is held.
 */
static bool reap_resizing(struct ctx *x, uint64_t s, uint64_t cnt,
			  bool legacy)
{
	uint64_t h = cnt / 2;
	const char *what = legacy ? "resize-send (legacy windows)" :
				    "resize-send";

	if (!rz_resize(&x->rz, x->c.scq, x->sq_depth, what))
		return false;
	if (legacy ? !reap_legacy(x, s, h) :
		     !reap_ex(x, s, h, "send", check_data_ex))
		return false;
	if (!rz_resize(&x->rz, x->c.scq, x->sq_depth, what))
		return false;
	return legacy ? reap_legacy(x, s + h, cnt - h) :
			reap_ex(x, s + h, cnt - h, "send", check_data_ex);
}

/*
 * Phases "send" and "legacy": the windows, the last ones legacy (with -r
 * "resize-send" too).
 */
static bool client_data(struct ctx *x)
{
	uint64_t W = x->p.window, nwin = (x->p.n + W - 1) / W;
	uint64_t nleg = nwin / 4 ? nwin / 4 : 1, s, cnt, first_leg, i;
	unsigned long before = tp_failures;
	bool legacy, last, resize = x->p.flags & P_RESIZE;

	first_leg = (nwin - nleg) * W;
	for (s = 0; s < x->p.n; s += cnt) {
		cnt = x->p.n - s < W ? x->p.n - s : W;
		legacy = s >= first_leg;
		last = s + cnt == x->p.n;
		if (s == first_leg && tp_failures == before)
			tp_log("ok: client: send: %" PRIu64 " completions "
			       "through start/next/end_poll (%" PRIu64
			       " batches): status, wr_id in posting order, "
			       "opcode, both timestamps as expected", s,
			       x->batches);
		for (i = s; i < s + cnt; i++)
			if (!post_msg(x, i))
				return false;
		if (resize) {
			if (!reap_resizing(x, s, cnt, legacy))
				return false;
		} else if (legacy ? !reap_legacy(x, s, cnt) :
				    !reap_ex(x, s, cnt, "send",
					     check_data_ex)) {
			return false;
		}
		if (tp_failures != before)
			return false;
		if (!recv_msg(x, last ? MSG_FINAL : MSG_WINDOW, s + cnt))
			return false;
	}
	if (tp_failures == before)
		tp_log("ok: client: legacy: %" PRIu64 " completions through "
		       "ibv_poll_cq() on the extended send CQ as expected; "
		       "the server verified all %" PRIu64 " messages (%" PRIu64
		       " Sends, %" PRIu64 " 4-octet and %" PRIu64 " 8-octet "
		       "write-with-imm, %" PRIu64 " bytes)", x->p.n - first_leg,
		       x->p.n, x->nsend, x->nimm4, x->nimm8, x->bytes);
	if (resize && tp_failures == before)
		tp_log("ok: client: resize-send: %u ibv_resize_cq of the "
		       "extended SINGLE_THREADED send CQ, after posting each "
		       "window and with half of it reaped (cqe %d..%d, %u "
		       "grew, %u shrank, cq->cqe the size rounded up to a "
		       "power of two); every completion as the send and legacy"
		       " checks expect (none lost, duplicated or reordered)",
		       x->rz.count, x->rz.min, x->rz.max, x->rz.grew,
		       x->rz.shrank);
	return tp_failures == before;
}

/* The error phase's WRs: what each is and must complete with. */
static const struct {
	const char *what;
	enum ibv_wc_status st;
} errs[] = {
	{ "RDMA Read from an invalid rkey", IBV_WC_REM_ACCESS_ERR },
	{ "fenced RDMA Write behind it", IBV_WC_WR_FLUSH_ERR },
	{ "Send behind it", IBV_WC_WR_FLUSH_ERR },
	{ "8-octet write-with-imm behind it", IBV_WC_WR_FLUSH_ERR },
	{ "4-octet write-with-imm behind it", IBV_WC_WR_FLUSH_ERR },
	/* posted once the error was polled: the QP is in ERROR then */
	{ "Send after the error", IBV_WC_WR_FLUSH_ERR },
	{ "8-octet write-with-imm after the error", IBV_WC_WR_FLUSH_ERR },
};

#define NERRS (sizeof(errs) / sizeof(errs[0]))
#define NERRS_BEHIND 5u			/* posted before the first reap */

static struct stamp err_posted[NERRS];

static void check_err(struct ctx *x, const struct xwc *w, uint64_t k)
{
	char what[80];

	snprintf(what, sizeof(what), "errors: %s", errs[k].what);
	tp_vlog("%s: wr_id 0x%" PRIx64 " status %s", what, w->wr_id,
		tp_wc_status_name(w->status));
	check_sq(x, w, ERR_ID + k, errs[k].st, -1, &err_posted[k], what);
}

static bool post_err(struct ctx *x, uint32_t k)
{
	uint8_t *src = x->data.addr;
	uint8_t imm[IMM8_LEN] = { 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7,
				  0xe8 };
	uint64_t id = ERR_ID + k;
	int r;

	stamp_now(&err_posted[k]);
	switch (k) {
	case 0:
		r = post_verbs(x, id, IBV_WR_RDMA_READ, src, 64, x->raddr,
			       x->rkey ^ BAD_RKEY_XOR, 0, 0);
		break;
	case 1:
		/*
		 * An RDMA Write completes once sent (a refused one has no
		 * response to carry the error), so the error goes on the
		 * Read; the fence holds everything behind it until the
		 * Read's answer, which is the Terminate.
		 */
		r = post_verbs(x, id, IBV_WR_RDMA_WRITE, src, 64, x->raddr,
			       x->rkey, 0, IBV_SEND_FENCE);
		break;
	case 2:
	case 5:
		r = post_verbs(x, id, IBV_WR_SEND, src, 16, 0, 0, 0, 0);
		break;
	case 4:
		r = post_verbs(x, id, IBV_WR_RDMA_WRITE_WITH_IMM, src, 0,
			       x->raddr, x->rkey, 0xe4e4, 0);
		break;
	default:
		r = post_imm8(x, id, src, 32, x->raddr, imm);
		break;
	}
	if (r)
		tp_fail("errors: posting the %s: %s", errs[k].what,
			strerror(r));
	return !r;
}

/*
 * Phase "errors". Verbs complete a failed WR with its error and flush
 * everything behind it, also what is posted to the QP in ERROR later.
 */
static bool client_errors(struct ctx *x)
{
	unsigned long before = tp_failures;
	struct xwc w;
	uint32_t k;

	for (k = 0; k < NERRS_BEHIND; k++)
		if (!post_err(x, k))
			return false;
	if (!reap_ex(x, 0, NERRS_BEHIND, "errors", check_err))
		return false;
	for (k = NERRS_BEHIND; k < NERRS; k++)
		if (!post_err(x, k))
			return false;
	if (!reap_ex(x, NERRS_BEHIND, NERRS - NERRS_BEHIND,
		     "errors (posted in ERROR)", check_err))
		return false;
	/* Exactly once: nothing may follow. */
	usleep(QUIET_MS * 1000);
	if (xcq_drain(x, &w, 1) > 0)
		tp_fail("errors: a completion after all %zu WRs completed "
			"(wr_id 0x%" PRIx64 ", status %s)", NERRS, w.wr_id,
			tp_wc_status_name(w.status));
	if (tp_failures == before)
		tp_log("ok: client: errors: RDMA Read from an invalid rkey -> "
		       "IBV_WC_REM_ACCESS_ERR; the %u WRs behind it and %zu "
		       "posted after it -> IBV_WC_WR_FLUSH_ERR, each once, in "
		       "order, through start/next/end_poll, timestamps in "
		       "order", NERRS_BEHIND - 1, NERRS - NERRS_BEHIND);
	return tp_failures == before;
}

/*
 * The QP (ibv_create_qp_ex through rdma_create_qp_ex, with the ibv_wr_*
 * operations siwxdv_wr_rdma_write_imm8 needs): sends complete on an
 * extended CQ with the timestamps, the acknowledgements on a plain CQ.
 */
static bool client_qp(struct ctx *x)
{
	struct ibv_context *ctx = x->c.id->verbs;
	uint32_t sq = x->p.window + NERRS + 1;
	struct ibv_qp_init_attr_ex qa;

	x->sq_depth = sq;
	/* One thread polls it: no lock needed */
	x->cqx = create_cq_ex(ctx, sq, WC_SEND, IBV_CQ_INIT_ATTR_MASK_FLAGS,
			      IBV_CREATE_CQ_ATTR_SINGLE_THREADED, NULL);
	if (!x->cqx) {
		tp_fail("ibv_create_cq_ex(completion timestamps, "
			"SINGLE_THREADED): %s", strerror(errno));
		return false;
	}
	x->cqx_flags = WC_SEND;
	x->c.scq = ibv_cq_ex_to_cq(x->cqx);
	x->c.rcq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!x->c.rcq) {
		tp_fail("ibv_create_cq: %s", strerror(errno));
		return false;
	}
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RC;
	qa.send_cq = x->c.scq;
	qa.recv_cq = x->c.rcq;
	qa.cap.max_send_wr = sq;
	qa.cap.max_recv_wr = 2;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.pd = x->pd;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND |
			    IBV_QP_EX_WITH_RDMA_READ;
	if (rdma_create_qp_ex(x->c.id, &qa)) {
		tp_fail("rdma_create_qp_ex (send_ops_flags): %s",
			strerror(errno));
		return false;
	}
	x->c.qp = x->c.id->qp;
	x->c.qpx = ibv_qp_to_qp_ex(x->c.qp);
	if (!x->c.qpx) {
		tp_fail("ibv_qp_to_qp_ex returned NULL");
		return false;
	}
	return true;
}

static bool client_setup(struct ctx *x)
{
	uint8_t pd[TP_CONNECT_PDATA_MAX];
	uint64_t w[5] = { CQX_MAGIC, x->p.n, x->p.window, x->p.seed,
			  x->p.flags };

	if (!tp_buf_alloc(&x->data, x->pd, (size_t)x->p.window * SRC_STRIDE,
			  (size_t)x->p.window * SRC_STRIDE,
			  IBV_ACCESS_LOCAL_WRITE) ||
	    !tp_buf_alloc(&x->rbuf, x->pd, 4096, 4096,
			  IBV_ACCESS_LOCAL_WRITE) ||
	    !client_qp(x) || !post_ack_recv(x, 0) || !post_ack_recv(x, 1))
		return false;
	tp_pdata_put(pd, w, x->p.flags ? 5 : 4);
	if (!tp_connect_qp(&x->c, pd, x->p.flags ? 40 : 32, x->o.r.timeout_ms))
		return false;
	if (!tp_pdata_get(x->c.peer_pdata, x->c.peer_pdata_len, w, 5) ||
	    w[0] != CQX_MAGIC || w[4] != x->p.window) {
		tp_fail("the server's accept carries no usable private data");
		return false;
	}
	x->raddr = w[1];
	x->rkey = (uint32_t)w[2];
	x->stride = w[3];
	return true;
}

/*
 * -r: a second connection to the server, phases "resize-below" and
 * "resize-load", then we disconnect it.
 */
static bool client_resize(struct ctx *x)
{
	uint8_t pd[TP_CONNECT_PDATA_MAX];
	struct rl *l = calloc(1, sizeof(*l));
	bool ok = false;

	if (!l)
		tp_die("out of memory");
	if (!tp_resolve(&l->c, tp_channel(), x->o.r.host, x->o.r.port,
			x->o.r.timeout_ms)) {
		l->c.own_ec = true;
		goto out;
	}
	l->c.own_ec = true;
	if (!rl_setup(x, l))
		goto out;
	rl_pdata(l, pd);
	if (!tp_connect_qp(&l->c, pd, 24, x->o.r.timeout_ms) ||
	    !rl_peer_pdata(l))
		goto out;
	ok = rl_run(x, l, "client");
	tp_close(&l->c, 5000);
out:
	tp_destroy(&l->c);
	rl_free(l);
	free(l);
	return ok;
}

static int run_client(struct ctx *x)
{
	uint64_t t0;
	bool ok;

	x->p = (struct params){ x->o.n, x->o.window, x->o.seed,
				x->o.resize ? P_RESIZE : 0 };
	if (!tp_resolve(&x->c, x->ec, x->o.r.host, x->o.r.port,
			x->o.r.timeout_ms))
		return 1;
	x->pd = ibv_alloc_pd(x->c.id->verbs);
	if (!x->pd)
		tp_die("ibv_alloc_pd: %s", strerror(errno));
	x->c.pd = x->pd;
	tp_print_device(x->c.id->verbs, "client");
	if (!dv_open(x))
		return TP_EXIT_SKIP;
	/* Before any memory is registered: count_cqs() runs a program. */
	phase_device(x, "client");
	phase_clock(x, "client");
	if (!client_setup(x))
		return 1;
	t0 = tp_now_ms();
	ok = client_data(x) &&
	     (!(x->p.flags & P_RESIZE) || client_resize(x)) &&
	     client_errors(x);
	ok = ok && !tp_failures;
	if (ok)
		tp_log("PASS: client: %" PRIu64 " messages, window %" PRIu64
		       ", seed %" PRIu64 ", %.1f s", x->p.n, x->p.window,
		       x->p.seed, (tp_now_ms() - t0) / 1000.0);
	else
		tp_log("FAILED: client: %lu failed check(s)", tp_failures);
	tp_close(&x->c, 5000);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	static struct ctx x;

	tp_prog = "siwx-cq-ex";
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv, &x.o);
	x.ec = tp_channel();
	return x.o.r.server ? run_server(&x) : run_client(&x);
}
