// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-imm-stream: RDMA Write with Immediate Data, checked byte by byte.
 *
 * Stream mode (default): the client streams N IBV_WR_RDMA_WRITE_WITH_IMM of
 * pseudo-random sizes from 0 B to the maximum (1 MiB by default; sizes 0, 1,
 * odd and exactly the maximum always occur) into W slots of the server's
 * buffer, imm_data = htonl(sequence number), the payload a function of
 * (sequence, offset). The server checks every completion: status, opcode
 * IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_WITH_IMM, imm in sequence order,
 * byte_len == the write's length (what InfiniBand and rxe report), every
 * placed byte, a guard zone after the write untouched, and that the receive
 * buffer the write consumed was not written. After each window of W writes
 * it acknowledges with a Send; the client reuses the slots only then.
 *
 * Solicited mode (--solicited-test): the server arms its receive CQ for
 * solicited completions only and waits on the completion channel:
 *   A. a write-with-imm without IBV_SEND_SOLICITED must NOT wake it (its
 *      completion must still be there when polled),
 *   B. one with IBV_SEND_SOLICITED must wake it (the CQ stays armed from A),
 *   C. re-armed for any completion, an unsolicited one must wake it.
 *
 * Interleaved mode (--interleave): the client mixes Sends with payload
 * (0 to RECV_BUF bytes) and write-with-imm (zero-length and with payload)
 * in a deterministic pattern of (seed, sequence), some with
 * IBV_SEND_SOLICITED. Both consume receives of the same RQ: RFC 7306
 * section 7 orders Immediate Data with the Sends as RFC 5040 section 5.5
 * orders Sends among themselves, so the server must see exactly the
 * posting order: each completion's opcode (IBV_WC_RECV or
 * IBV_WC_RECV_RDMA_WITH_IMM), byte_len, imm_data (and IBV_WC_WITH_IMM only
 * on the latter), the receive it consumed (the RQ's next one, in posting
 * order), a Send's payload byte by byte with the rest of its receive
 * buffer untouched, and a write's placed bytes.
 *
 * --ex posts through the extended API (ibv_qp_ex, ibv_wr_rdma_write_imm).
 * Both ends exit 0 only when every check passed on both sides.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "tp_common.h"

#define IMM_MAGIC 0x5349575849524d31ULL	/* "SIWXIRM1" */
#define MODE_STREAM 1
#define MODE_SOLICITED 2
#define MODE_INTERLEAVE 3
#define GUARD 4096u			/* checked bytes after each write */
#define CANARY 0xa5
#define RECV_BUF 64u			/* per receive; must stay untouched */
#define MSG_LEN 32u			/* server -> client messages */
#define MSG_WINDOW 1
#define MSG_PHASE 2
#define MSG_FINAL 3
#define SOL_LEN 64u			/* write size in the solicited test */
#define QUIET_MS 2000			/* "must not wake" window */

struct opts {
	struct tp_role r;		/* -s/-c, -p, -t */
	uint64_t n;
	uint32_t window;
	uint32_t max;
	uint64_t seed;
	bool ex;
	bool solicited;
	bool interleave;
};

/* What the client asks for in its connect private data. */
struct params {
	uint64_t mode, n, seed, window, max;
};

struct ctx {
	struct opts o;
	struct params p;
	struct rdma_event_channel *ec;
	struct ibv_pd *pd;
	struct tp_conn c;
	struct tp_buf data;		/* server: slots; client: sources */
	struct tp_buf rbuf;		/* receive buffers */
	struct tp_buf msg;		/* outgoing message */
	uint32_t nrecv;
	uint64_t stride;
	uint64_t raddr;			/* client: server's buffer */
	uint32_t rkey;
	unsigned int cq_events;		/* to ack before destroying */
	/* Statistics. */
	uint64_t bytes, nzero, none, nmax, nodd, nsend;
};

/* Sizes: deterministic in (seed, seq); 0, 1, odd and max always occur. */
static uint32_t write_size(uint64_t seed, uint64_t seq, uint32_t max)
{
	uint64_t r = tp_mix(seed, seq), v;

	switch (seq) {
	case 0: return 0;
	case 1: return 1;
	case 2: return max;
	case 3: return max > 3 ? 3 : max;
	}
	switch (r & 7) {
	case 0: v = 0; break;
	case 1: v = 1 + (r >> 8) % 16; break;
	case 2: v = max; break;
	case 3: v = ((r >> 8) % ((uint64_t)max + 1)) | 1; break;
	case 4: v = 4096 - 64 + (r >> 8) % 129; break;	/* around a page */
	case 5: v = (r >> 8) % 65537; break;
	default: v = (r >> 8) % ((uint64_t)max + 1); break;
	}
	return v > max ? max : (uint32_t)v;
}

/*
 * Interleaved mode: what message @seq is. The first eight cover every
 * neighbour pair of Send, write-with-imm and zero-length write-with-imm;
 * then the kind follows (seed, seq).
 */
enum il_kind { IL_SEND, IL_WIMM, IL_WIMM0 };

static enum il_kind il_kind(uint64_t seed, uint64_t seq)
{
	static const enum il_kind first[] = { IL_SEND, IL_WIMM, IL_SEND,
					      IL_SEND, IL_WIMM0, IL_WIMM,
					      IL_WIMM0, IL_SEND };

	if (seq < sizeof(first) / sizeof(first[0]))
		return first[seq];
	return (enum il_kind)(tp_mix(seed ^ 0x11, seq) % 3);
}

static uint32_t il_len(uint64_t seed, uint64_t seq, uint32_t max)
{
	uint64_t r = tp_mix(seed ^ 0x22, seq);

	switch (il_kind(seed, seq)) {
	case IL_SEND:
		return seq == 3 ? 0 : (uint32_t)(r % (RECV_BUF + 1));
	case IL_WIMM:
		return 1 + (uint32_t)(r % max);
	default:
		return 0;
	}
}

static bool il_solicited(uint64_t seed, uint64_t seq)
{
	return (tp_mix(seed ^ 0x33, seq) & 3) == 0;
}

static int64_t canary_check(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != CANARY)
			return (int64_t)i;
	return -1;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-imm-stream -s [-p PORT] [-t SEC] [--ex] [-v]\n"
"       siwx-imm-stream -c ADDR [-p PORT] [-n N] [-w W] [-m MAX] [-S SEED]\n"
"                       [-t SEC] [--ex] [--solicited-test | --interleave]\n"
"                       [-v]\n"
"RDMA Write with Immediate Data checked byte by byte (see the source).\n"
"  -s               server (one connection, then exit)\n"
"  -c ADDR          client, connecting to ADDR\n"
"  -p PORT          rdma_cm port (default 18515)\n"
"  -n N             writes (default 2000)\n"
"  -w W             window: writes per acknowledgement = slots (default 16)\n"
"  -m MAX           largest write in bytes (default 1048576)\n"
"  -S SEED          seed of sizes (default 1)\n"
"  -t SEC           time limit of each wait (default 60)\n"
"  -6               server: listen on [::], IPv6 only\n"
"  --ex             post with the extended API (ibv_wr_rdma_write_imm)\n"
"  --solicited-test solicited-event test instead of the stream\n"
"  --interleave     Sends with payload interleaved with the writes, checked\n"
"                   in posting order (-m: largest write)\n"
"  -v               verbose\n"
"The client chooses the mode and sizes; the server follows. Exit 0 only\n"
"when every check passed.\n");
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "ex", no_argument, NULL, 'x' },
		{ "solicited-test", no_argument, NULL, 'L' },
		{ "interleave", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	*o = (struct opts){ .r = { .port = 18515, .timeout_ms = 60000 },
			    .n = 2000, .window = 16, .max = 1 << 20, .seed = 1 };
	while ((ch = getopt_long(argc, argv, TP_ROLE_OPTS "n:w:m:S:h", lo,
				 NULL)) != -1) {
		if (tp_role_opt(&o->r, ch, optarg))
			continue;
		switch (ch) {
		case 'n': o->n = tp_parse_u64(optarg, "-n", 1, 1u << 30); break;
		case 'w':
			o->window = tp_parse_u64(optarg, "-w", 1, 64);
			break;
		case 'm':
			o->max = tp_parse_u64(optarg, "-m", 1, 1u << 24);
			break;
		case 'S': o->seed = tp_parse_u64(optarg, "-S", 0, UINT64_MAX); break;
		case 'x': o->ex = true; break;
		case 'L': o->solicited = true; break;
		case 'I': o->interleave = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (!tp_role_ok(&o->r, optind, argc) ||
	    (o->solicited && o->interleave)) {
		usage(stderr);
		exit(2);
	}
}

static struct tp_qp_opts qp_opts(const struct ctx *x, uint32_t nrecv)
{
	struct tp_qp_opts q = {
		.max_send_wr = x->p.window + 2,
		.max_recv_wr = nrecv,
		.max_sge = 1,
		.recv_channel = x->p.mode == MODE_SOLICITED && x->o.r.server,
	};

	if (x->o.ex)
		q.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				   IBV_QP_EX_WITH_SEND;
	return q;
}

static bool post_recv_slot(struct ctx *x, uint32_t i)
{
	uint8_t *b = (uint8_t *)x->rbuf.addr + (size_t)i * RECV_BUF;
	int r;

	memset(b, CANARY, RECV_BUF);
	r = tp_post_recv(&x->c, i, b, RECV_BUF, x->rbuf.mr->lkey);
	if (r)
		tp_fail("ibv_post_recv: %s", strerror(r));
	return !r;
}

static bool post_recvs(struct ctx *x)
{
	uint32_t i;

	if (!tp_buf_alloc(&x->rbuf, x->pd, (size_t)x->nrecv * RECV_BUF,
			  (size_t)x->nrecv * RECV_BUF, IBV_ACCESS_LOCAL_WRITE))
		return false;
	for (i = 0; i < x->nrecv; i++)
		if (!post_recv_slot(x, i))
			return false;
	return true;
}

static bool send_msg(struct ctx *x, uint64_t kind, uint64_t val)
{
	uint64_t w[4] = { IMM_MAGIC, kind, val, tp_failures };
	int r;

	tp_pdata_put(x->msg.addr, w, 4);
	r = tp_post_send(&x->c, 1000000 + kind, x->msg.addr, MSG_LEN,
			 x->msg.mr->lkey, IBV_SEND_SIGNALED);
	if (r) {
		tp_fail("posting the Send to the client: %s", strerror(r));
		return false;
	}
	return tp_wait_ok(x->c.scq, IBV_WC_SEND, 1000000 + kind,
			  "Send to the client", x->o.r.timeout_ms, NULL);
}

/* Client: the next server message must be (kind, val) with no failures. */
static bool recv_msg(struct ctx *x, uint64_t kind, uint64_t val,
		     const char *what)
{
	struct ibv_wc wc;
	uint64_t w[4];
	uint8_t *b;
	int r = tp_poll(x->c.rcq, &wc, x->o.r.timeout_ms + QUIET_MS);

	if (r <= 0) {
		tp_fail("%s: no message from the server within %d ms", what,
			x->o.r.timeout_ms + QUIET_MS);
		return false;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
	    wc.byte_len != MSG_LEN || wc.wr_id >= x->nrecv) {
		tp_fail("%s: server message completion: status %s, opcode %s,"
			" byte_len %u (expected IBV_WC_SUCCESS, IBV_WC_RECV, %u)",
			what, tp_wc_status_name(wc.status),
			tp_wc_opcode_name(wc.opcode), wc.byte_len, MSG_LEN);
		return false;
	}
	b = (uint8_t *)x->rbuf.addr + wc.wr_id * RECV_BUF;
	tp_pdata_get(b, MSG_LEN, w, 4);
	if (w[3]) {
		tp_fail("%s: the server reported %" PRIu64
			" failed check(s) (see its output)", what, w[3]);
		return false;
	}
	if (w[0] != IMM_MAGIC || w[1] != kind || w[2] != val) {
		tp_fail("%s: server message (kind %" PRIu64 ", value %" PRIu64
			"), expected (kind %" PRIu64 ", value %" PRIu64 ")",
			what, w[1], w[2], kind, val);
		return false;
	}
	return post_recv_slot(x, (uint32_t)wc.wr_id);
}

/* Server: check one write-with-imm completion and the bytes it placed. */
static bool check_imm(struct ctx *x, const struct ibv_wc *wc, uint64_t seq,
		      uint32_t len)
{
	uint8_t *slot = (uint8_t *)x->data.addr +
			(seq % x->p.window) * x->stride;
	unsigned long before = tp_failures;
	int64_t bad;

	if (wc->status != IBV_WC_SUCCESS) {
		tp_fail("write %" PRIu64 ": completion status %s (%d), "
			"vendor_err 0x%x", seq, tp_wc_status_name(wc->status),
			wc->status, wc->vendor_err);
		return false;
	}
	if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM)
		tp_fail("write %" PRIu64 ": opcode %s (%d), expected "
			"IBV_WC_RECV_RDMA_WITH_IMM", seq,
			tp_wc_opcode_name(wc->opcode), wc->opcode);
	if (!(wc->wc_flags & IBV_WC_WITH_IMM))
		tp_fail("write %" PRIu64 ": IBV_WC_WITH_IMM not set "
			"(wc_flags 0x%x)", seq, wc->wc_flags);
	else if (ntohl(wc->imm_data) != (uint32_t)seq)
		tp_fail("write %" PRIu64 ": imm_data %u (raw 0x%08x), expected"
			" %u: immediates out of order or wrong", seq,
			ntohl(wc->imm_data), wc->imm_data, (uint32_t)seq);
	if (wc->byte_len != len)
		tp_fail("write %" PRIu64 ": byte_len %u, expected the write's "
			"length %u", seq, wc->byte_len, len);
	if (wc->qp_num != x->c.qp->qp_num)
		tp_fail("write %" PRIu64 ": qp_num %u, expected %u", seq,
			wc->qp_num, x->c.qp->qp_num);
	if (wc->wr_id >= x->nrecv) {
		tp_fail("write %" PRIu64 ": unknown receive wr_id %" PRIu64,
			seq, (uint64_t)wc->wr_id);
		return false;
	}
	bad = canary_check((uint8_t *)x->rbuf.addr + wc->wr_id * RECV_BUF,
			   RECV_BUF);
	if (bad >= 0)
		tp_fail("write %" PRIu64 ": the consumed receive buffer was "
			"written at offset %" PRId64, seq, bad);
	bad = tp_pat_check(slot, len, seq);
	if (bad >= 0)
		tp_fail("write %" PRIu64 " (%u bytes): wrong byte at offset %"
			PRId64 ": 0x%02x, expected 0x%02x%s", seq, len, bad,
			slot[bad], tp_pat_byte(seq, (uint32_t)bad),
			slot[bad] == CANARY ? " (never written)" : "");
	bad = canary_check(slot + len, GUARD);
	if (bad >= 0)
		tp_fail("write %" PRIu64 " (%u bytes): byte %" PRId64
			" after its end was written (0x%02x)", seq, len, bad,
			slot[len + bad]);
	memset(slot, CANARY, (size_t)len + GUARD);
	x->bytes += len;
	if (!post_recv_slot(x, (uint32_t)wc->wr_id))
		return false;
	return tp_failures == before;
}

static bool server_stream(struct ctx *x)
{
	struct ibv_wc wc;
	uint64_t seq;
	int64_t bad;

	for (seq = 0; seq < x->p.n; seq++) {
		uint32_t len = write_size(x->p.seed, seq, (uint32_t)x->p.max);
		bool last = seq + 1 == x->p.n;
		int r = tp_poll(x->c.rcq, &wc, x->o.r.timeout_ms);

		if (r <= 0) {
			tp_fail("write %" PRIu64 ": no completion within %d ms",
				seq, x->o.r.timeout_ms);
			return false;
		}
		if (!check_imm(x, &wc, seq, len)) {
			send_msg(x, MSG_WINDOW, seq + 1);	/* tells the failures */
			return false;
		}
		if ((seq + 1) % x->p.window == 0 || last)
			if (!send_msg(x, MSG_WINDOW, seq + 1))
				return false;
	}
	/* Nothing may have been written anywhere else. */
	bad = canary_check(x->data.addr, x->data.len);
	if (bad >= 0)
		tp_fail("stray write: buffer offset %" PRId64 " (slot %" PRIu64
			", offset %" PRIu64 ") holds 0x%02x", bad,
			bad / x->stride, bad % x->stride,
			((uint8_t *)x->data.addr)[bad]);
	if (ibv_poll_cq(x->c.rcq, 1, &wc) > 0)
		tp_fail("an extra receive completion after the last write "
			"(opcode %s, status %s)", tp_wc_opcode_name(wc.opcode),
			tp_wc_status_name(wc.status));
	return send_msg(x, MSG_FINAL, x->p.n);
}

/* Interleaved mode: one Send's completion and the payload it delivered. */
static bool check_send(struct ctx *x, const struct ibv_wc *wc, uint64_t seq,
		       uint32_t len)
{
	uint8_t *b = (uint8_t *)x->rbuf.addr + wc->wr_id * RECV_BUF;
	unsigned long before = tp_failures;
	int64_t bad;

	if (wc->status != IBV_WC_SUCCESS) {
		tp_fail("message %" PRIu64 " (Send, %u bytes): completion "
			"status %s (%d)", seq, len,
			tp_wc_status_name(wc->status), wc->status);
		return false;
	}
	if (wc->opcode != IBV_WC_RECV)
		tp_fail("message %" PRIu64 " (Send, %u bytes): opcode %s (%d),"
			" expected IBV_WC_RECV: completions out of posting "
			"order?", seq, len, tp_wc_opcode_name(wc->opcode),
			wc->opcode);
	if (wc->wc_flags & IBV_WC_WITH_IMM)
		tp_fail("message %" PRIu64 " (Send): IBV_WC_WITH_IMM set "
			"(imm_data 0x%08x)", seq, wc->imm_data);
	if (wc->byte_len != len)
		tp_fail("message %" PRIu64 " (Send): byte_len %u, expected %u",
			seq, wc->byte_len, len);
	bad = tp_pat_check(b, len, seq);
	if (bad >= 0)
		tp_fail("message %" PRIu64 " (Send, %u bytes): wrong payload "
			"byte at offset %" PRId64 ": 0x%02x, expected 0x%02x",
			seq, len, bad, b[bad], tp_pat_byte(seq, (uint32_t)bad));
	bad = canary_check(b + len, RECV_BUF - len);
	if (bad >= 0)
		tp_fail("message %" PRIu64 " (Send, %u bytes): receive buffer "
			"written at offset %" PRId64 " past the payload", seq,
			len, len + bad);
	if (!post_recv_slot(x, (uint32_t)wc->wr_id))
		return false;
	return tp_failures == before;
}

/*
 * Interleaved mode: every completion must be the next message in posting
 * order (RFC 7306 section 7, RFC 5040 section 5.5), consuming the next
 * receive of the RQ (slots are reposted in the order they complete, so
 * message @seq takes slot seq % nrecv).
 */
static bool server_interleave(struct ctx *x)
{
	static const char *const kname[] = { "Send", "write-with-imm",
					     "zero-length write-with-imm" };
	uint64_t seq, nsend = 0;
	struct ibv_wc wc;
	int64_t bad;
	bool ok;

	for (seq = 0; seq < x->p.n; seq++) {
		enum il_kind k = il_kind(x->p.seed, seq);
		uint32_t len = il_len(x->p.seed, seq, (uint32_t)x->p.max);
		bool last = seq + 1 == x->p.n;
		int r = tp_poll(x->c.rcq, &wc, x->o.r.timeout_ms);

		if (r <= 0) {
			tp_fail("message %" PRIu64 " (%s): no completion "
				"within %d ms", seq, kname[k], x->o.r.timeout_ms);
			return false;
		}
		tp_vlog("message %" PRIu64 ": %s, %u bytes: opcode %s, "
			"byte_len %u", seq, kname[k], len,
			tp_wc_opcode_name(wc.opcode), wc.byte_len);
		if (wc.status == IBV_WC_SUCCESS &&
		    wc.wr_id != seq % x->nrecv)
			tp_fail("message %" PRIu64 " (%s) consumed receive %"
				PRIu64 ", expected %" PRIu64 " (RQ order)", seq,
				kname[k], (uint64_t)wc.wr_id, seq % x->nrecv);
		if (k == IL_SEND) {
			ok = check_send(x, &wc, seq, len);
			nsend++;
		} else {
			ok = check_imm(x, &wc, seq, len);
		}
		if (!ok) {
			send_msg(x, MSG_WINDOW, seq + 1);	/* tells the failures */
			return false;
		}
		x->bytes += k == IL_SEND ? len : 0;
		if ((seq + 1) % x->p.window == 0 || last)
			if (!send_msg(x, MSG_WINDOW, seq + 1))
				return false;
	}
	bad = canary_check(x->data.addr, x->data.len);
	if (bad >= 0)
		tp_fail("stray write: buffer offset %" PRId64 " holds 0x%02x",
			bad, ((uint8_t *)x->data.addr)[bad]);
	if (ibv_poll_cq(x->c.rcq, 1, &wc) > 0)
		tp_fail("an extra receive completion after the last message "
			"(opcode %s, status %s)", tp_wc_opcode_name(wc.opcode),
			tp_wc_status_name(wc.status));
	tp_log("interleaved: %" PRIu64 " Sends and %" PRIu64
	       " write-with-imm completed in posting order", nsend,
	       x->p.n - nsend);
	return send_msg(x, MSG_FINAL, x->p.n);
}

/* 1: a CQ event (acked, consumed); 0: none in @ms; -1: error. */
static int wait_cq_event(struct ctx *x, int ms)
{
	struct pollfd p = { .fd = x->c.rch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;
	int r = poll(&p, 1, ms);

	if (r <= 0)
		return r;
	if (ibv_get_cq_event(x->c.rch, &cq, &cq_ctx)) {
		tp_fail("ibv_get_cq_event: %s", strerror(errno));
		return -1;
	}
	ibv_ack_cq_events(cq, 1);
	return 1;
}

static bool poll_and_check(struct ctx *x, uint64_t seq, const char *phase)
{
	struct ibv_wc wc;
	int r = tp_poll(x->c.rcq, &wc, x->o.r.timeout_ms);

	if (r <= 0) {
		tp_fail("%s: no completion for write %" PRIu64 " in %d ms",
			phase, seq, x->o.r.timeout_ms);
		return false;
	}
	return check_imm(x, &wc, seq, SOL_LEN);
}

static bool arm(struct ctx *x, int solicited_only)
{
	if (ibv_req_notify_cq(x->c.rcq, solicited_only)) {
		tp_fail("ibv_req_notify_cq(solicited_only=%d) failed",
			solicited_only);
		return false;
	}
	return true;
}

static const char *PA = "phase A (write-with-imm WITHOUT IBV_SEND_SOLICITED,"
			" CQ armed solicited-only)";
static const char *PB = "phase B (write-with-imm WITH IBV_SEND_SOLICITED, "
			"CQ still armed solicited-only)";
static const char *PC = "phase C (write-with-imm without IBV_SEND_SOLICITED,"
			" CQ armed for any completion)";

static bool sol_phase_a(struct ctx *x)
{
	int r = wait_cq_event(x, QUIET_MS);

	if (r > 0)
		tp_fail("%s: the server woke up (CQ event) within %d ms; "
			"expected NO event", PA, QUIET_MS);
	else if (r == 0)
		tp_log("%s: no event within %d ms, as expected", PA, QUIET_MS);
	if (!poll_and_check(x, 0, PA))
		return false;
	tp_log("%s: the completion is there when polled", PA);
	/* Under a slow host the write may arrive after the quiet window. */
	if (wait_cq_event(x, 500) > 0)
		tp_fail("%s: a CQ event came after the unsolicited completion;"
			" expected none", PA);
	return send_msg(x, MSG_PHASE, 1);
}

static bool sol_phase_wake(struct ctx *x, uint64_t seq, const char *phase)
{
	struct ibv_wc wc;
	int r = wait_cq_event(x, x->o.r.timeout_ms);

	if (r == 0) {
		r = ibv_poll_cq(x->c.rcq, 1, &wc);
		tp_fail("%s: the server did NOT wake within %d ms (%s)", phase,
			x->o.r.timeout_ms, r > 0 ?
			"the completion is in the CQ but no event came" :
			"no completion arrived either");
		return false;
	}
	if (r < 0)
		return false;
	tp_log("%s: woke up, as expected", phase);
	return poll_and_check(x, seq, phase);
}

static bool server_solicited(struct ctx *x)
{
	if (!sol_phase_a(x))
		return false;
	/* The messages carry our failure count: the client stops on it. */
	if (!sol_phase_wake(x, 1, PB)) {
		send_msg(x, MSG_PHASE, 2);
		return false;
	}
	if (!arm(x, 0) || !send_msg(x, MSG_PHASE, 2))
		return false;
	sol_phase_wake(x, 2, PC);
	return send_msg(x, MSG_FINAL, 3);
}

static bool server_params(struct ctx *x)
{
	uint64_t w[6];

	if (!tp_pdata_get(x->c.peer_pdata, x->c.peer_pdata_len, w, 6) ||
	    w[0] != IMM_MAGIC) {
		tp_fail("connect request without siwx-imm-stream private data"
			" (%zu bytes)", x->c.peer_pdata_len);
		return false;
	}
	x->p = (struct params){ w[1], w[2], w[3], w[4], w[5] };
	if ((x->p.mode != MODE_STREAM && x->p.mode != MODE_SOLICITED &&
	     x->p.mode != MODE_INTERLEAVE) ||
	    !x->p.n || !x->p.window || x->p.window > 64 || !x->p.max ||
	    x->p.max > (1u << 24)) {
		tp_fail("unusable parameters from the client");
		return false;
	}
	if (x->p.mode == MODE_SOLICITED)
		x->p.max = SOL_LEN;
	return true;
}

static bool server_setup(struct ctx *x)
{
	struct tp_qp_opts q;
	uint8_t pd[TP_ACCEPT_PDATA_MAX];
	uint64_t w[5];
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	x->pd = ibv_alloc_pd(x->c.id->verbs);
	if (!x->pd)
		tp_die("ibv_alloc_pd: %s", strerror(errno));
	x->c.pd = x->pd;
	tp_print_device(x->c.id->verbs, "server");
	x->stride = ((uint64_t)x->p.max + GUARD + 4095) & ~4095ULL;
	if (!tp_buf_alloc(&x->data, x->pd, x->stride * x->p.window,
			  x->stride * x->p.window, acc) ||
	    !tp_buf_alloc(&x->msg, x->pd, 4096, 4096, IBV_ACCESS_LOCAL_WRITE))
		return false;
	memset(x->data.addr, CANARY, x->data.len);
	x->nrecv = 2 * (uint32_t)x->p.window + 2;
	q = qp_opts(x, x->nrecv);
	if (!tp_setup_qp(&x->c, &q) || !post_recvs(x))
		return false;
	if (x->p.mode == MODE_SOLICITED && !arm(x, 1))
		return false;
	w[0] = IMM_MAGIC;
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
	uint64_t t0;
	bool ok;

	if (!tp_get_request(x->ec, listen, &x->c, 600000) ||
	    !server_params(x) || !server_setup(x))
		return 1;
	tp_log("client connected: %s, n=%" PRIu64 ", window %" PRIu64
	       ", max %" PRIu64 " B, seed %" PRIu64 ", %s API",
	       x->p.mode == MODE_SOLICITED ? "solicited test" :
	       x->p.mode == MODE_INTERLEAVE ? "interleaved" : "stream",
	       x->p.n, x->p.window, x->p.max, x->p.seed,
	       x->o.ex ? "extended" : "classic");
	t0 = tp_now_ms();
	ok = x->p.mode == MODE_SOLICITED ? server_solicited(x) :
	     x->p.mode == MODE_INTERLEAVE ? server_interleave(x) :
					    server_stream(x);
	ok = ok && !tp_failures;
	if (ok)
		tp_log("PASS: server: %s: %" PRIu64 " receive completions"
		       " verified (status, opcode, imm order, byte_len, %" PRIu64
		       " data bytes, guards), %.1f s",
		       x->p.mode == MODE_SOLICITED ? "solicited test" :
		       x->p.mode == MODE_INTERLEAVE ? "interleaved" : "stream",
		       x->p.mode == MODE_SOLICITED ? 3 : x->p.n, x->bytes,
		       (tp_now_ms() - t0) / 1000.0);
	else
		tp_log("FAILED: server: %lu failed check(s)", tp_failures);
	tp_close(&x->c, 5000);
	rdma_destroy_id(listen);
	return ok ? 0 : 1;
}

/* Client. */

static bool client_write(struct ctx *x, uint64_t seq, uint32_t len,
			 unsigned int extra_flags)
{
	uint32_t slot = (uint32_t)(seq % x->p.window);
	uint8_t *src = (uint8_t *)x->data.addr + (size_t)slot * x->p.max;
	int r;

	tp_pat_fill(src, len, seq);
	r = tp_post_write_imm(&x->c, seq, src, len, x->data.mr->lkey,
			      x->raddr + slot * x->stride, x->rkey,
			      (uint32_t)seq, IBV_SEND_SIGNALED | extra_flags);
	if (r) {
		tp_fail("posting write %" PRIu64 " (%u bytes): %s", seq, len,
			strerror(r));
		return false;
	}
	x->bytes += len;
	x->nzero += len == 0;
	x->none += len == 1;
	x->nmax += len == x->p.max;
	x->nodd += len & 1;
	return true;
}

static bool client_window(struct ctx *x, uint64_t first, uint64_t cnt)
{
	char what[64];
	uint64_t s;

	for (s = first; s < first + cnt; s++)
		if (!client_write(x, s, write_size(x->p.seed, s,
						   (uint32_t)x->p.max), 0))
			return false;
	for (s = first; s < first + cnt; s++) {
		snprintf(what, sizeof(what), "write-with-imm %" PRIu64, s);
		if (!tp_wait_ok(x->c.scq, IBV_WC_RDMA_WRITE, s, what,
				x->o.r.timeout_ms, NULL))
			return false;
	}
	snprintf(what, sizeof(what), "acknowledgement of writes %" PRIu64
		 "..%" PRIu64, first, first + cnt - 1);
	return recv_msg(x, MSG_WINDOW, first + cnt, what);
}

static bool client_stream(struct ctx *x)
{
	uint64_t s, cnt;

	for (s = 0; s < x->p.n; s += cnt) {
		cnt = x->p.n - s < x->p.window ? x->p.n - s : x->p.window;
		if (!client_window(x, s, cnt))
			return false;
	}
	return recv_msg(x, MSG_FINAL, x->p.n, "final verdict");
}

/* Interleaved mode: one window of Sends and writes, in pattern order. */
static bool il_window(struct ctx *x, uint64_t first, uint64_t cnt)
{
	uint64_t s, stride = (uint64_t)x->p.max + RECV_BUF;
	char what[64];
	int r;

	for (s = first; s < first + cnt; s++) {
		enum il_kind k = il_kind(x->p.seed, s);
		uint32_t len = il_len(x->p.seed, s, (uint32_t)x->p.max);
		uint32_t slot = (uint32_t)(s % x->p.window);
		uint8_t *src = (uint8_t *)x->data.addr + slot * stride;
		unsigned int fl = IBV_SEND_SIGNALED;

		if (il_solicited(x->p.seed, s))
			fl |= IBV_SEND_SOLICITED;
		tp_pat_fill(src, len, s);
		if (k == IL_SEND)
			r = tp_post_send(&x->c, s, src, len, x->data.mr->lkey,
					 fl);
		else
			r = tp_post_write_imm(&x->c, s, src, len,
					      x->data.mr->lkey,
					      x->raddr + slot * x->stride,
					      x->rkey, (uint32_t)s, fl);
		if (r) {
			tp_fail("posting message %" PRIu64 " (%u bytes): %s", s,
				len, strerror(r));
			return false;
		}
		x->bytes += len;
		x->nzero += len == 0;
		x->nsend += k == IL_SEND;
	}
	for (s = first; s < first + cnt; s++) {
		bool send = il_kind(x->p.seed, s) == IL_SEND;

		snprintf(what, sizeof(what), "%s %" PRIu64,
			 send ? "Send" : "write-with-imm", s);
		if (!tp_wait_ok(x->c.scq, send ? IBV_WC_SEND : IBV_WC_RDMA_WRITE,
				s, what, x->o.r.timeout_ms, NULL))
			return false;
	}
	snprintf(what, sizeof(what), "acknowledgement of messages %" PRIu64
		 "..%" PRIu64, first, first + cnt - 1);
	return recv_msg(x, MSG_WINDOW, first + cnt, what);
}

static bool client_interleave(struct ctx *x)
{
	uint64_t s, cnt;

	for (s = 0; s < x->p.n; s += cnt) {
		cnt = x->p.n - s < x->p.window ? x->p.n - s : x->p.window;
		if (!il_window(x, s, cnt))
			return false;
	}
	return recv_msg(x, MSG_FINAL, x->p.n, "final verdict");
}

static bool client_sol_step(struct ctx *x, uint64_t seq, unsigned int flags,
			    uint64_t kind, const char *phase)
{
	if (!client_write(x, seq, SOL_LEN, flags) ||
	    !tp_wait_ok(x->c.scq, IBV_WC_RDMA_WRITE, seq, phase,
			x->o.r.timeout_ms, NULL))
		return false;
	return recv_msg(x, kind, kind == MSG_FINAL ? 3 : seq + 1, phase);
}

static bool client_solicited(struct ctx *x)
{
	return client_sol_step(x, 0, 0, MSG_PHASE, PA) &&
	       client_sol_step(x, 1, IBV_SEND_SOLICITED, MSG_PHASE, PB) &&
	       client_sol_step(x, 2, 0, MSG_FINAL, PC);
}

static bool client_setup(struct ctx *x)
{
	uint8_t pd[TP_CONNECT_PDATA_MAX];
	uint64_t w[6] = { IMM_MAGIC, x->p.mode, x->p.n, x->p.seed,
			  x->p.window, x->p.max };
	struct tp_qp_opts q;

	x->nrecv = 4;
	q = qp_opts(x, x->nrecv);
	tp_pdata_put(pd, w, 6);
	if (!tp_connect(&x->c, x->ec, x->o.r.host, x->o.r.port, &x->pd, &q, pd,
			48, x->o.r.timeout_ms))
		return false;
	tp_print_device(x->c.id->verbs, "client");
	if (!tp_pdata_get(x->c.peer_pdata, x->c.peer_pdata_len, w, 5) ||
	    w[0] != IMM_MAGIC || w[4] != x->p.window) {
		tp_fail("the server's accept carries no usable private data");
		return false;
	}
	x->raddr = w[1];
	x->rkey = (uint32_t)w[2];
	x->stride = w[3];
	/* RECV_BUF more per slot: a Send's payload may exceed -m. */
	if (!tp_buf_alloc(&x->data, x->pd,
			  ((size_t)x->p.max + RECV_BUF) * x->p.window,
			  ((size_t)x->p.max + RECV_BUF) * x->p.window,
			  IBV_ACCESS_LOCAL_WRITE))
		return false;
	return post_recvs(x);
}

static int run_client(struct ctx *x)
{
	uint64_t t0;
	bool ok;

	x->p = (struct params){ x->o.solicited ? MODE_SOLICITED :
				x->o.interleave ? MODE_INTERLEAVE : MODE_STREAM,
				x->o.n, x->o.seed, x->o.window, x->o.max };
	if (x->o.solicited) {
		x->p.n = 3;
		x->p.max = SOL_LEN;
	}
	if (!client_setup(x))
		return 1;
	t0 = tp_now_ms();
	ok = x->o.solicited ? client_solicited(x) :
	     x->o.interleave ? client_interleave(x) : client_stream(x);
	ok = ok && !tp_failures;
	if (ok && x->o.solicited)
		tp_log("PASS: client: solicited test (%s API): unsolicited did "
		       "not wake, solicited woke, re-armed any woke",
		       x->o.ex ? "extended" : "classic");
	else if (ok && x->o.interleave)
		tp_log("PASS: client: %" PRIu64 " messages interleaved (%s API):"
		       " %" PRIu64 " Sends, %" PRIu64 " write-with-imm, %" PRIu64
		       " zero-length, %" PRIu64 " bytes", x->p.n,
		       x->o.ex ? "extended" : "classic", x->nsend,
		       x->p.n - x->nsend, x->nzero, x->bytes);
	else if (ok)
		tp_log("PASS: client: %" PRIu64 " write-with-imm (%s API), %"
		       PRIu64 " bytes, sizes 0..%" PRIu64 " (%" PRIu64
		       " zero, %" PRIu64 " one-byte, %" PRIu64 " odd, %" PRIu64
		       " of max size), window %" PRIu64 ", %.1f s",
		       x->p.n, x->o.ex ? "extended" : "classic", x->bytes,
		       x->p.max, x->nzero, x->none, x->nodd, x->nmax,
		       x->p.window, (tp_now_ms() - t0) / 1000.0);
	else
		tp_log("FAILED: client: %lu failed check(s)", tp_failures);
	tp_close(&x->c, 5000);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	static struct ctx x;

	tp_prog = "siwx-imm-stream";
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv, &x.o);
	x.ec = tp_channel();
	return x.o.r.server ? run_server(&x) : run_client(&x);
}
