/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * siwx-cq-ex (see cq_ex.c's top comment): what its parts share, the limits
 * both sides agree on, the context of one run and the functions one part
 * calls in another. The parts:
 *   cq_ex.c         main, options, connection setup, the phase sequence
 *   cq_ex_device.c  the provider's direct verbs; phases "device", "clock"
 *   cq_ex_msgs.c    the messages, deterministic in (seed, seq): kinds,
 *                   sizes, immediates, payload pattern; the canary
 *   cq_ex_poll.c    host clock stamps; reading an extended CQ and checking
 *                   its completion timestamps against them
 *   cq_ex_recv.c    the server's extended receive CQ: phases "receive",
 *                   "resize-receive", "flush"
 *   cq_ex_send.c    the client's extended send CQ: phases "send", "legacy",
 *                   "resize-send", "errors"
 *   cq_ex_resize.c  the resize cycle; the second connection's phases
 *                   "resize-below", "resize-load"
 */
#ifndef SIWX_TESTS_PROGS_CQ_EX_H
#define SIWX_TESTS_PROGS_CQ_EX_H

#include <time.h>

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
#define P_RESIZE 1u			/* params.flags: the resize phases */

/* What the server's receive CQ reports: all that siwx accepts. */
#define WC_ACCEPTED (IBV_WC_STANDARD_FLAGS | \
		     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
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

/* cq_ex_device.c */
bool dv_open(struct ctx *x);
struct ibv_cq_ex *create_cq_ex(struct ibv_context *ctx, uint32_t cqe,
			       uint64_t wc_flags, uint32_t comp_mask,
			       uint32_t flags, struct ibv_pd *pd);
void phase_device(struct ctx *x, const char *who);
void phase_clock(struct ctx *x, const char *who);

/* cq_ex_msgs.c */
extern const char *const kind_name[];
enum kind msg_kind(uint64_t seed, uint64_t seq);
uint32_t msg_len(uint64_t seed, uint64_t seq);
uint32_t msg_imm(uint64_t seed, uint64_t seq);
void msg_imm8(uint64_t seed, uint64_t seq, uint8_t imm[IMM8_LEN]);
void want_imm8(uint64_t seed, uint64_t seq, uint8_t imm[IMM8_LEN]);
int64_t canary_check(const uint8_t *p, size_t len);

/* cq_ex_poll.c */
uint64_t clock_ns(clockid_t clk);
void stamp_now(struct stamp *s);
int xcq_drain(struct ctx *x, struct xwc *w, int max);
void check_ts(struct ctx *x, const struct xwc *w, const struct stamp *posted,
	      const char *what);

/* cq_ex_recv.c */
bool server_qp(struct ctx *x);
bool post_recv_slot(struct ctx *x, uint32_t slot);
bool server_data(struct ctx *x);
bool server_flush(struct ctx *x);

/* cq_ex_send.c */
bool client_qp(struct ctx *x);
bool post_ack_recv(struct ctx *x, uint32_t i);
bool client_data(struct ctx *x);
bool client_errors(struct ctx *x);

/* cq_ex_resize.c */
bool rz_resize(struct rz *z, struct ibv_cq *cq, uint32_t floor,
	       const char *what);
bool server_resize(struct ctx *x);
bool client_resize(struct ctx *x);

#endif
