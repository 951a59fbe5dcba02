/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Shared helpers of the siwx verbs test programs (tests/progs): rdma_cm
 * connection setup with private data, posting through either the classic
 * (ibv_post_send) or the extended (ibv_wr_*) API, completion polling with
 * time limits, and a deterministic pseudo-random generator.
 *
 * Everything here reports failures loudly; the programs decide what a
 * failure means for their verdict.
 */
#ifndef SIWX_TESTS_PROGS_TP_COMMON_H
#define SIWX_TESTS_PROGS_TP_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* Exit status of a program that refuses a test it cannot judge fairly. */
#define TP_EXIT_SKIP 77

/* rdma_cm private data limits: IB CM REQ (56) and REP (196) bytes. */
#define TP_CONNECT_PDATA_MAX 56
#define TP_ACCEPT_PDATA_MAX 196

extern const char *tp_prog;	/* program name used in messages */
extern int tp_verbose;
/* -6: tp_listen() takes IPv6 connections only, on [::] */
extern int tp_listen_ipv6;
extern unsigned long tp_failures;

void tp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tp_vlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A failed check: counted, printed as "<prog>: FAIL: ..." on stderr. */
void tp_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A setup error that makes going on pointless: print and exit(1). */
void tp_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

uint64_t tp_now_ms(void);
uint64_t tp_rand(uint64_t *state);	/* splitmix64 */
uint64_t tp_mix(uint64_t a, uint64_t b);

/*
 * The payload pattern of message seq: a hash of (seq, word index) per
 * 4-octet word, so that both ends know every octet without sending it.
 * tp_pat_check() gives the first offset that differs, or -1.
 */
/*
 * The path of the libsiwx provider module libibverbs has loaded (named for
 * its private ABI, libsiwx-rdmav<N>.so), or NULL: the programs dlopen()
 * that very copy for the siwxdv calls, as they are built where libsiwx is
 * not installed.
 */
const char *tp_loaded_siwx_provider(void);

void tp_pat_fill(uint8_t *p, uint32_t len, uint64_t seq);
uint8_t tp_pat_byte(uint64_t seq, uint32_t off);
int64_t tp_pat_check(const uint8_t *p, uint32_t len, uint64_t seq);
/* Strict number parsing for options; dies with the option's name. */
uint64_t tp_parse_u64(const char *s, const char *what, uint64_t min,
		      uint64_t max);

/*
 * The options every client/server program takes: -s (serve) or -c HOST,
 * -p PORT, -t SEC (each wait's limit), -v, and -6: a server listens on
 * [::] (IPv6 only) instead of 0.0.0.0. HOST may be an IPv4 or IPv6
 * address or a name. A program sets its defaults, hands each getopt
 * character to tp_role_opt() before its own, and checks the outcome with
 * tp_role_ok().
 */
#define TP_ROLE_OPTS "sc:p:t:v6"
struct tp_role {
	bool server;
	const char *host;
	uint16_t port;
	int timeout_ms;
};
/* True when @ch was one of TP_ROLE_OPTS (and is now taken into @r). */
bool tp_role_opt(struct tp_role *r, int ch, const char *arg);
/* Exactly one of -s and -c, and no operands left (optind == argc). */
bool tp_role_ok(const struct tp_role *r, int optind, int argc);
/*
 * All of a program's options when it has no others than TP_ROLE_OPTS and
 * -h/--help: @r holds the defaults; a usage error prints @usage on stderr
 * and exits 2, -h prints it on stdout and exits 0.
 */
void tp_role_parse(int argc, char **argv, struct tp_role *r,
		   void (*usage)(FILE *f));
/*
 * The same for a program with options of its own: @optstring lists them
 * (getopt syntax); each is handed to @opt with @ctx, which returns false
 * for one it does not take (a usage error).
 */
void tp_role_parse_opts(int argc, char **argv, struct tp_role *r,
			const char *optstring,
			bool (*opt)(int ch, const char *arg, void *ctx),
			void *ctx, void (*usage)(FILE *f));

const char *tp_wc_status_name(enum ibv_wc_status st);
/* Name (with or without the IBV_WC_ prefix) to status; -1 if unknown. */
int tp_wc_status_parse(const char *name);
const char *tp_wc_opcode_name(enum ibv_wc_opcode op);
const char *tp_atomic_cap_name(enum ibv_atomic_cap cap);
const char *tp_qp_state_name(enum ibv_qp_state st);
/* IBV_EVENT_QP_FATAL, _QP_REQ_ERR, _QP_ACCESS_ERR by name (-1: other) */
int tp_qp_event_parse(const char *name);
const char *tp_qp_event_name(enum ibv_event_type type);
/*
 * Exactly one asynchronous event on @qp, of @type, within @timeout_ms
 * (events on other objects are skipped); every event read is acked.
 */
bool tp_expect_qp_event(struct ibv_qp *qp, enum ibv_event_type type,
			int timeout_ms, const char *who);
/* The same for any object of @ctx (@obj: the QP, SRQ or CQ pointer). */
bool tp_expect_async_event(struct ibv_context *ctx, const void *obj,
			   const char *obj_name, enum ibv_event_type type,
			   int timeout_ms, const char *who);
/*
 * Asynchronous events of @type on @obj until @want came (or @timeout_ms
 * passed), then whatever else is already due: how many of @type came.
 * An event of another type on @obj fails; every event read is acked.
 */
unsigned long tp_count_async_events(struct ibv_context *ctx, const void *obj,
				    const char *obj_name,
				    enum ibv_event_type type, unsigned long want,
				    int timeout_ms, const char *who);

/* Private data travels as big-endian 64-bit words. */
void tp_pdata_put(uint8_t *buf, const uint64_t *w, size_t nwords);
/* Returns false (and fills zeros) when fewer than nwords arrived. */
bool tp_pdata_get(const void *buf, size_t len, uint64_t *w, size_t nwords);

struct tp_qp_opts {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_sge;
	uint64_t send_ops_flags;	/* 0: classic API, else ibv_qp_ex */
	bool recv_channel;		/* completion channel on the recv CQ */
	/*
	 * Sends and receives complete on one CQ (scq == rcq), which then
	 * carries the channel: a program that waits for either kind.
	 */
	bool one_cq;
	uint8_t rd_atomic;		/* wanted IRD/ORD (0: none) */
	/*
	 * A receive to post before connecting (addr NULL: none). On iWARP
	 * a Send that finds no posted receive ends the connection (there is
	 * no RNR retry as on InfiniBand; siwx waits recv_wait_ms first, siw
	 * not at all), so a peer that sends right after the connection is
	 * established needs it.
	 */
	void *pre_recv_addr;
	/*
	 * Receives from this SRQ instead of a receive queue of its own
	 * (max_recv_wr then only sizes the receive CQ).
	 */
	struct ibv_srq *srq;
	uint32_t pre_recv_len;
	uint32_t pre_recv_lkey;
	uint64_t pre_recv_id;
	/* Entries of the send CQ (0: max_send_wr + 1; not with one_cq) */
	uint32_t send_cqe;
	/*
	 * A receive CQ the QP shares with others (not with one_cq): it
	 * belongs to the caller, tp_destroy() leaves it.
	 */
	struct ibv_cq *rcq;
};

struct tp_conn {
	struct rdma_event_channel *ec;
	bool own_ec;				/* tp_own_channel(): destroy it */
	struct rdma_cm_id *id;
	struct ibv_pd *pd;			/* not owned */
	struct ibv_comp_channel *rch;		/* recv CQ channel, or NULL */
	struct ibv_cq *scq;
	struct ibv_cq *rcq;
	bool rcq_shared;			/* tp_qp_opts.rcq: not owned */
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;			/* extended API, or NULL */
	uint8_t rd_atomic;			/* negotiated ORD/IRD */
	uint8_t peer_pdata[TP_ACCEPT_PDATA_MAX];
	size_t peer_pdata_len;
	/*
	 * Server side: the connect request's bounds, as rdma_cm gives them
	 * to a listener (the InfiniBand CM's convention, iWARP's too): the
	 * most Reads we may issue (the peer's IRD) and serve (its ORD).
	 */
	uint8_t req_initiator_depth;
	uint8_t req_responder_resources;
};

struct rdma_event_channel *tp_channel(void);
/*
 * Next rdma_cm event of @type (for @id, or any id when NULL) within
 * @timeout_ms; anything else is reported and fails (NULL). The caller
 * acks the returned event.
 */
struct rdma_cm_event *tp_expect_event(struct rdma_event_channel *ec,
				      struct rdma_cm_id *id,
				      enum rdma_cm_event_type type,
				      int timeout_ms);
/*
 * The next rdma_cm event on @ec, whatever it is (a program that takes
 * the events of many ids from one channel); NULL after tp_fail() when
 * none came within @timeout_ms (@waiting: what for, in the message).
 */
struct rdma_cm_event *tp_next_event(struct rdma_event_channel *ec,
				    int timeout_ms, const char *waiting);
/* Fail on @ev, unexpected while @waiting: its name and status. */
void tp_bad_event(const struct rdma_cm_event *ev, const char *waiting);
struct rdma_cm_id *tp_listen(struct rdma_event_channel *ec, uint16_t port);
/*
 * The same with room for @backlog connect requests not yet taken (the
 * kernel's rdma_ucm caps it at its max_backlog, 1024 by default; iw_cm
 * drops requests beyond it that its work queue has not yet handed on).
 */
struct rdma_cm_id *tp_listen_backlog(struct rdma_event_channel *ec,
				     uint16_t port, int backlog);
/* The private data of a connect request or an accept (@p) into @c. */
void tp_save_pdata(struct tp_conn *c, const struct rdma_conn_param *p);
/*
 * Fill @c from a CONNECT_REQUEST event @ev on @ec (id, private data,
 * requested depths), for a server that takes its events itself.
 */
void tp_request_conn(struct tp_conn *c, struct rdma_event_channel *ec,
		     const struct rdma_cm_event *ev);
/*
 * Server: wait for a connect request on @listen, fill @c (id, private
 * data, requested depths). Returns false on timeout or error.
 */
bool tp_get_request(struct rdma_event_channel *ec, struct rdma_cm_id *listen,
		    struct tp_conn *c, int timeout_ms);
/*
 * Server: tp_get_request() for the program's own clients, whose private
 * data is @nwords words starting with @magic (into @w); then the id gets
 * an event channel of its own and c->pd a PD of its own. Dies on a
 * request of another program; false on timeout or error.
 */
bool tp_take_request(struct rdma_event_channel *ec, struct rdma_cm_id *listen,
		     struct tp_conn *c, uint64_t magic, uint64_t *w,
		     size_t nwords, int timeout_ms);
/*
 * Move a requested connection's id to an event channel of its own (freed
 * by tp_destroy): a server otherwise may find the next CONNECT_REQUEST on
 * the listener's channel before this connection's ESTABLISHED or
 * DISCONNECTED (the CM orders events per id, not across ids).
 */
void tp_own_channel(struct tp_conn *c);
/* CQs and the QP on c->id with c->pd. */
bool tp_setup_qp(struct tp_conn *c, const struct tp_qp_opts *o);
bool tp_accept(struct tp_conn *c, const void *pdata, size_t len,
	       uint8_t rd_atomic, int timeout_ms);
/* tp_accept() without waiting for ESTABLISHED (the caller takes it). */
bool tp_accept_start(struct tp_conn *c, const void *pdata, size_t len,
		     uint8_t rd_atomic);
/*
 * Client: resolve @host:@port, use/alloc *pd (allocated on the device the
 * route resolves to when *pd is NULL), make the QP, connect with @pdata
 * and wait for ESTABLISHED; the accept's private data lands in
 * c->peer_pdata. The same in steps, for a client that registers memory
 * on the resolved device before it connects: tp_resolve(), c->pd,
 * tp_setup_qp(), tp_connect_qp().
 */
bool tp_connect(struct tp_conn *c, struct rdma_event_channel *ec,
		const char *host, uint16_t port, struct ibv_pd **pd,
		const struct tp_qp_opts *o, const void *pdata, size_t len,
		int timeout_ms);
/* A new id on @ec, resolved to @host:@port (c->id->verbs: its device). */
bool tp_resolve(struct tp_conn *c, struct rdma_event_channel *ec,
		const char *host, uint16_t port, int timeout_ms);
struct addrinfo;
/* @host:@port as an IPv4 address for rdma_resolve_addr; dies if none. */
struct addrinfo *tp_dest(const char *host, uint16_t port);
/*
 * Many connects from one event channel: a new id on @ec for @c (its
 * context, so events find their connection), its address resolution
 * started towards @dst; the caller takes ADDR_RESOLVED and goes on.
 */
bool tp_resolve_start(struct tp_conn *c, struct rdma_event_channel *ec,
		      const struct sockaddr *dst);
/* Connect the QP of a resolved @c with @pdata; wait for ESTABLISHED. */
bool tp_connect_qp(struct tp_conn *c, const void *pdata, size_t len,
		   int timeout_ms);
/* tp_connect_qp() without waiting for ESTABLISHED (the caller takes it). */
bool tp_connect_start(struct tp_conn *c, const void *pdata, size_t len);
/* Disconnect, wait (briefly) for DISCONNECTED, destroy everything. */
void tp_close(struct tp_conn *c, int timeout_ms);
/*
 * Close @n connections (one event channel) that the peer closes first:
 * wait for every DISCONNECTED, then disconnect each, which must succeed
 * as an application's cleanup expects; false after tp_fail().
 */
bool tp_close_after_peer(struct tp_conn *c, unsigned int n, int timeout_ms);
/* The same without destroying: the QPs' flushed WRs are still to reap. */
bool tp_disconnect_after_peer(struct tp_conn *c, unsigned int n,
			      int timeout_ms);
/*
 * Close @n connections (one event channel) ourselves: disconnect each,
 * then wait for every DISCONNECTED and destroy them all; false after
 * tp_fail().
 */
bool tp_close_leading(struct tp_conn *c, unsigned int n, int timeout_ms);
/* Destroy without the disconnect handshake. */
void tp_destroy(struct tp_conn *c);

/* Posting; @flags are IBV_SEND_* flags. Returns 0 or an errno. */
int tp_post_recv(struct tp_conn *c, uint64_t wr_id, void *addr, uint32_t len,
		 uint32_t lkey);
int tp_post_send(struct tp_conn *c, uint64_t wr_id, void *addr, uint32_t len,
		 uint32_t lkey, unsigned int flags);
int tp_post_write_imm(struct tp_conn *c, uint64_t wr_id, void *addr,
		      uint32_t len, uint32_t lkey, uint64_t raddr,
		      uint32_t rkey, uint32_t imm_host, unsigned int flags);
int tp_post_write(struct tp_conn *c, uint64_t wr_id, void *addr, uint32_t len,
		  uint32_t lkey, uint64_t raddr, uint32_t rkey,
		  unsigned int flags);
int tp_post_read(struct tp_conn *c, uint64_t wr_id, void *addr, uint32_t len,
		 uint32_t lkey, uint64_t raddr, uint32_t rkey,
		 unsigned int flags);
int tp_post_fadd(struct tp_conn *c, uint64_t wr_id, uint64_t *result,
		 uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t add,
		 unsigned int flags);
int tp_post_cas(struct tp_conn *c, uint64_t wr_id, uint64_t *result,
		uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t compare,
		uint64_t swap, unsigned int flags);

/* 1: a completion in *wc; 0: none within @timeout_ms; -1: poll error. */
int tp_poll(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms);
/*
 * Wait for one completion and check it succeeded with @opcode and @wr_id;
 * @what names the operation in the failure message.
 */
bool tp_wait_ok(struct ibv_cq *cq, enum ibv_wc_opcode opcode, uint64_t wr_id,
		const char *what, int timeout_ms, struct ibv_wc *out);

/* How a stream of signaled WRs completed. */
struct tp_tally {
	uint64_t ok;		/* IBV_WC_SUCCESS */
	uint64_t flushed;	/* IBV_WC_WR_FLUSH_ERR */
	uint64_t failed;	/* anything else, each reported by tp_fail() */
};
/*
 * Take every completion @cq holds into @t (@who names the side in
 * messages); false on a poll error.
 */
bool tp_reap(struct ibv_cq *cq, struct tp_tally *t, const char *who);

/* A registered buffer. */
struct tp_buf {
	void *addr;
	size_t len;
	struct ibv_mr *mr;
};

bool tp_buf_alloc(struct tp_buf *b, struct ibv_pd *pd, size_t len,
		  size_t reg_len, int access);
void tp_buf_free(struct tp_buf *b);

void tp_print_device(struct ibv_context *ctx, const char *role);

#endif /* SIWX_TESTS_PROGS_TP_COMMON_H */
