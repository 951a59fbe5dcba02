// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Shared helpers of the siwx verbs test programs; see tp_common.h.
 */
#include <endian.h>
#include <link.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "tp_common.h"

const char *tp_prog = "siwx-test";
int tp_verbose;
int tp_listen_ipv6;
unsigned long tp_failures;

static void vprint(FILE *f, const char *tag, const char *fmt, va_list ap)
{
	fprintf(f, "%s: %s", tp_prog, tag);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fflush(f);
}

void tp_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint(stdout, "", fmt, ap);
	va_end(ap);
}

void tp_vlog(const char *fmt, ...)
{
	va_list ap;

	if (!tp_verbose)
		return;
	va_start(ap, fmt);
	vprint(stdout, "", fmt, ap);
	va_end(ap);
}

void tp_fail(const char *fmt, ...)
{
	va_list ap;

	__atomic_fetch_add(&tp_failures, 1, __ATOMIC_RELAXED);	/* threads */
	fflush(stdout);
	va_start(ap, fmt);
	vprint(stderr, "FAIL: ", fmt, ap);
	va_end(ap);
}

void tp_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	vprint(stderr, "ERROR: ", fmt, ap);
	va_end(ap);
	exit(1);
}

uint64_t tp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t tp_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t tp_mix(uint64_t a, uint64_t b)
{
	uint64_t s = a * 0x9e3779b97f4a7c15ULL ^ b;

	return tp_rand(&s);
}

uint64_t tp_parse_u64(const char *s, const char *what, uint64_t min,
		      uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		tp_die("%s: '%s' is not a number in [%" PRIu64 ", %" PRIu64 "]",
		       what, s, min, max);
	return v;
}

bool tp_role_opt(struct tp_role *r, int ch, const char *arg)
{
	switch (ch) {
	case 's':
		r->server = true;
		return true;
	case 'c':
		r->host = arg;
		return true;
	case 'p':
		r->port = tp_parse_u64(arg, "-p", 1, 65535);
		return true;
	case 't':
		r->timeout_ms = 1000 * tp_parse_u64(arg, "-t", 1, 3600);
		return true;
	case 'v':
		tp_verbose = 1;
		return true;
	case '6':
		tp_listen_ipv6 = 1;
		return true;
	default:
		return false;
	}
}

bool tp_role_ok(const struct tp_role *r, int optind, int argc)
{
	return optind == argc && r->server != !!r->host;
}

void tp_role_parse(int argc, char **argv, struct tp_role *r,
		   void (*usage)(FILE *f))
{
	tp_role_parse_opts(argc, argv, r, "", NULL, NULL, usage);
}

void tp_role_parse_opts(int argc, char **argv, struct tp_role *r,
			const char *optstring,
			bool (*opt)(int ch, const char *arg, void *ctx),
			void *ctx, void (*usage)(FILE *f))
{
	static const struct option lo[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char all[64];
	int ch;

	if (snprintf(all, sizeof(all), "%s%sh", TP_ROLE_OPTS, optstring) >=
	    (int)sizeof(all))
		tp_die("too many options");
	while ((ch = getopt_long(argc, argv, all, lo, NULL)) != -1) {
		if (tp_role_opt(r, ch, optarg))
			continue;
		if (ch == 'h') {
			usage(stdout);
			exit(0);
		}
		if (ch != '?' && opt && opt(ch, optarg, ctx))
			continue;
		usage(stderr);
		exit(2);
	}
	if (!tp_role_ok(r, optind, argc)) {
		usage(stderr);
		exit(2);
	}
}

static const char *const wc_status_names[] = {
	[IBV_WC_SUCCESS] = "IBV_WC_SUCCESS",
	[IBV_WC_LOC_LEN_ERR] = "IBV_WC_LOC_LEN_ERR",
	[IBV_WC_LOC_QP_OP_ERR] = "IBV_WC_LOC_QP_OP_ERR",
	[IBV_WC_LOC_EEC_OP_ERR] = "IBV_WC_LOC_EEC_OP_ERR",
	[IBV_WC_LOC_PROT_ERR] = "IBV_WC_LOC_PROT_ERR",
	[IBV_WC_WR_FLUSH_ERR] = "IBV_WC_WR_FLUSH_ERR",
	[IBV_WC_MW_BIND_ERR] = "IBV_WC_MW_BIND_ERR",
	[IBV_WC_BAD_RESP_ERR] = "IBV_WC_BAD_RESP_ERR",
	[IBV_WC_LOC_ACCESS_ERR] = "IBV_WC_LOC_ACCESS_ERR",
	[IBV_WC_REM_INV_REQ_ERR] = "IBV_WC_REM_INV_REQ_ERR",
	[IBV_WC_REM_ACCESS_ERR] = "IBV_WC_REM_ACCESS_ERR",
	[IBV_WC_REM_OP_ERR] = "IBV_WC_REM_OP_ERR",
	[IBV_WC_RETRY_EXC_ERR] = "IBV_WC_RETRY_EXC_ERR",
	[IBV_WC_RNR_RETRY_EXC_ERR] = "IBV_WC_RNR_RETRY_EXC_ERR",
	[IBV_WC_LOC_RDD_VIOL_ERR] = "IBV_WC_LOC_RDD_VIOL_ERR",
	[IBV_WC_REM_INV_RD_REQ_ERR] = "IBV_WC_REM_INV_RD_REQ_ERR",
	[IBV_WC_REM_ABORT_ERR] = "IBV_WC_REM_ABORT_ERR",
	[IBV_WC_INV_EECN_ERR] = "IBV_WC_INV_EECN_ERR",
	[IBV_WC_INV_EEC_STATE_ERR] = "IBV_WC_INV_EEC_STATE_ERR",
	[IBV_WC_FATAL_ERR] = "IBV_WC_FATAL_ERR",
	[IBV_WC_RESP_TIMEOUT_ERR] = "IBV_WC_RESP_TIMEOUT_ERR",
	[IBV_WC_GENERAL_ERR] = "IBV_WC_GENERAL_ERR",
	[IBV_WC_TM_ERR] = "IBV_WC_TM_ERR",
	[IBV_WC_TM_RNDV_INCOMPLETE] = "IBV_WC_TM_RNDV_INCOMPLETE",
};

#define NSTATUS (sizeof(wc_status_names) / sizeof(wc_status_names[0]))

const char *tp_wc_status_name(enum ibv_wc_status st)
{
	if ((unsigned int)st < NSTATUS && wc_status_names[st])
		return wc_status_names[st];
	return "IBV_WC_(unknown)";
}

int tp_wc_status_parse(const char *name)
{
	size_t i;

	if (!strncasecmp(name, "IBV_WC_", 7))
		name += 7;
	for (i = 0; i < NSTATUS; i++)
		if (wc_status_names[i] &&
		    !strcasecmp(wc_status_names[i] + 7, name))
			return (int)i;
	return -1;
}

const char *tp_wc_opcode_name(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return "IBV_WC_SEND";
	case IBV_WC_RDMA_WRITE: return "IBV_WC_RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "IBV_WC_RDMA_READ";
	case IBV_WC_COMP_SWAP: return "IBV_WC_COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "IBV_WC_FETCH_ADD";
	case IBV_WC_BIND_MW: return "IBV_WC_BIND_MW";
	case IBV_WC_LOCAL_INV: return "IBV_WC_LOCAL_INV";
	case IBV_WC_RECV: return "IBV_WC_RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "IBV_WC_RECV_RDMA_WITH_IMM";
	default: return "IBV_WC_(other opcode)";
	}
}

const char *tp_atomic_cap_name(enum ibv_atomic_cap cap)
{
	switch (cap) {
	case IBV_ATOMIC_NONE: return "IBV_ATOMIC_NONE";
	case IBV_ATOMIC_HCA: return "IBV_ATOMIC_HCA";
	case IBV_ATOMIC_GLOB: return "IBV_ATOMIC_GLOB";
	default: return "IBV_ATOMIC_(unknown)";
	}
}

const char *tp_qp_state_name(enum ibv_qp_state st)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS",
					 "SQD", "SQE", "ERR" };

	if ((unsigned int)st < sizeof(n) / sizeof(n[0]))
		return n[st];
	return "UNKNOWN";
}

/* The affiliated QP error events, by their IBV_EVENT_ names. */
static const struct {
	const char *name;
	enum ibv_event_type type;
} qp_events[] = {
	{ "QP_FATAL", IBV_EVENT_QP_FATAL },
	{ "QP_REQ_ERR", IBV_EVENT_QP_REQ_ERR },
	{ "QP_ACCESS_ERR", IBV_EVENT_QP_ACCESS_ERR },
};

int tp_qp_event_parse(const char *name)
{
	size_t i;

	if (!strncasecmp(name, "IBV_EVENT_", 10))
		name += 10;
	for (i = 0; i < sizeof(qp_events) / sizeof(qp_events[0]); i++)
		if (!strcasecmp(qp_events[i].name, name))
			return (int)qp_events[i].type;
	return -1;
}

const char *tp_qp_event_name(enum ibv_event_type type)
{
	size_t i;

	for (i = 0; i < sizeof(qp_events) / sizeof(qp_events[0]); i++)
		if (qp_events[i].type == type)
			return qp_events[i].name;
	return ibv_event_type_str(type);
}

bool tp_expect_async_event(struct ibv_context *ctx, const void *obj,
			   const char *obj_name, enum ibv_event_type type,
			   int timeout_ms, const char *who)
{
	unsigned long seen = tp_count_async_events(ctx, obj, obj_name, type, 1,
						   timeout_ms, who);

	if (seen == 1)
		tp_log("%s: asynchronous event %s on the %s", who,
		       tp_qp_event_name(type), obj_name);
	else if (!seen)
		tp_fail("%s: no asynchronous event on the %s within %d ms "
			"(expected %s)", who, obj_name, timeout_ms,
			tp_qp_event_name(type));
	else
		tp_fail("%s: %lu asynchronous events %s on the %s, expected "
			"one", who, seen, tp_qp_event_name(type), obj_name);
	return seen == 1;
}

unsigned long tp_count_async_events(struct ibv_context *ctx, const void *obj,
				    const char *obj_name,
				    enum ibv_event_type type, unsigned long want,
				    int timeout_ms, const char *who)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	uint64_t deadline = tp_now_ms() + (uint64_t)timeout_ms;
	struct ibv_async_event ev;
	unsigned long seen = 0;
	int wait;

	/* Until @want came or the deadline, then whatever is already due */
	for (;;) {
		wait = seen >= want ? 200 : (int)(deadline > tp_now_ms() ?
						  deadline - tp_now_ms() : 0);
		if (poll(&p, 1, wait) != 1 || ibv_get_async_event(ctx, &ev))
			break;
		/* element is a union of pointers: any member names the object */
		if ((const void *)ev.element.qp != obj)
			tp_vlog("%s: asynchronous event %s on another object",
				who, ibv_event_type_str(ev.event_type));
		else if (ev.event_type != type)
			tp_fail("%s: asynchronous event %s on the %s, expected "
				"only %s", who, tp_qp_event_name(ev.event_type),
				obj_name, tp_qp_event_name(type));
		else
			seen++;
		ibv_ack_async_event(&ev);
	}
	return seen;
}

bool tp_expect_qp_event(struct ibv_qp *qp, enum ibv_event_type type,
			int timeout_ms, const char *who)
{
	return tp_expect_async_event(qp->context, qp, "QP", type, timeout_ms,
				     who);
}

static int tp_find_provider(struct dl_phdr_info *info, size_t size,
			    void *data)
{
	const char **path = data;

	(void)size;
	if (!strstr(info->dlpi_name, "/libsiwx-rdmav"))
		return 0;
	*path = info->dlpi_name;
	return 1;
}

const char *tp_loaded_siwx_provider(void)
{
	const char *path = NULL;

	dl_iterate_phdr(tp_find_provider, &path);
	return path;
}

static uint32_t tp_pat_word(uint64_t seq, uint32_t i)
{
	uint32_t x = (uint32_t)seq * 0x9e3779b1u ^ i * 0x85ebca77u ^
		     (uint32_t)(seq >> 32);

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return htole32(x);
}

void tp_pat_fill(uint8_t *p, uint32_t len, uint64_t seq)
{
	uint32_t i, n = len / 4, w;

	for (i = 0; i < n; i++) {
		w = tp_pat_word(seq, i);
		memcpy(p + 4 * (size_t)i, &w, 4);
	}
	if (len % 4) {
		w = tp_pat_word(seq, n);
		memcpy(p + 4 * (size_t)n, &w, len % 4);
	}
}

uint8_t tp_pat_byte(uint64_t seq, uint32_t off)
{
	uint32_t w = tp_pat_word(seq, off / 4);

	return ((const uint8_t *)&w)[off % 4];
}

int64_t tp_pat_check(const uint8_t *p, uint32_t len, uint64_t seq)
{
	uint32_t i, n = len / 4, w;

	/* Word by word, then byte by byte from the first difference */
	for (i = 0; i < n; i++) {
		w = tp_pat_word(seq, i);
		if (memcmp(p + 4 * (size_t)i, &w, 4))
			break;
	}
	for (i *= 4; i < len; i++)
		if (p[i] != tp_pat_byte(seq, i))
			return i;
	return -1;
}

void tp_pdata_put(uint8_t *buf, const uint64_t *w, size_t nwords)
{
	size_t i;

	for (i = 0; i < nwords; i++) {
		uint64_t be = htobe64(w[i]);

		memcpy(buf + 8 * i, &be, 8);
	}
}

bool tp_pdata_get(const void *buf, size_t len, uint64_t *w, size_t nwords)
{
	size_t i;

	memset(w, 0, nwords * 8);
	if (!buf || len < nwords * 8)
		return false;
	for (i = 0; i < nwords; i++) {
		uint64_t be;

		memcpy(&be, (const uint8_t *)buf + 8 * i, 8);
		w[i] = be64toh(be);
	}
	return true;
}

struct rdma_event_channel *tp_channel(void)
{
	struct rdma_event_channel *ec = rdma_create_event_channel();

	if (!ec)
		tp_die("rdma_create_event_channel: %s (rdma_ucm loaded?)",
		       strerror(errno));
	return ec;
}

struct rdma_cm_event *tp_expect_event(struct rdma_event_channel *ec,
				      struct rdma_cm_id *id,
				      enum rdma_cm_event_type type,
				      int timeout_ms)
{
	struct pollfd p = { .fd = ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int r;

	r = poll(&p, 1, timeout_ms);
	if (r <= 0) {
		tp_fail("no rdma_cm event %s within %d ms%s",
			rdma_event_str(type), timeout_ms,
			r < 0 ? " (poll failed)" : "");
		return NULL;
	}
	if (rdma_get_cm_event(ec, &ev)) {
		tp_fail("rdma_get_cm_event: %s", strerror(errno));
		return NULL;
	}
	if (ev->event == type && (!id || ev->id == id))
		return ev;
	tp_fail("expected rdma_cm event %s, got %s (status %d%s%s)",
		rdma_event_str(type), rdma_event_str(ev->event), ev->status,
		ev->status < 0 ? ": " : "",
		ev->status < 0 ? strerror(-ev->status) : "");
	rdma_ack_cm_event(ev);
	return NULL;
}

struct rdma_cm_event *tp_next_event(struct rdma_event_channel *ec,
				    int timeout_ms, const char *waiting)
{
	struct pollfd p = { .fd = ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, timeout_ms) != 1) {
		tp_fail("%s: no rdma_cm event within %d ms", waiting,
			timeout_ms);
		return NULL;
	}
	if (rdma_get_cm_event(ec, &ev)) {
		tp_fail("rdma_get_cm_event: %s", strerror(errno));
		return NULL;
	}
	return ev;
}

void tp_bad_event(const struct rdma_cm_event *ev, const char *waiting)
{
	const struct tp_conn *c = ev->id ? ev->id->context : NULL;

	tp_fail("%s: unexpected rdma_cm event %s (status %d%s%s)%s", waiting,
		rdma_event_str(ev->event), ev->status,
		ev->status < 0 ? ": " : "",
		ev->status < 0 ? strerror(-ev->status) : "",
		c ? "" : " on an unknown id");
}

struct rdma_cm_id *tp_listen(struct rdma_event_channel *ec, uint16_t port)
{
	return tp_listen_backlog(ec, port, 16);
}

struct rdma_cm_id *tp_listen_backlog(struct rdma_event_channel *ec,
				     uint16_t port, int backlog)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(port),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	struct sockaddr *any = tp_listen_ipv6 ? (struct sockaddr *)&sin6 :
						(struct sockaddr *)&sin;
	int afonly = 1;
	struct rdma_cm_id *id;

	if (rdma_create_id(ec, &id, NULL, RDMA_PS_TCP))
		tp_die("rdma_create_id: %s", strerror(errno));
	if (tp_listen_ipv6 &&
	    rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &afonly,
			    sizeof(afonly)))
		tp_die("rdma_set_option AFONLY: %s", strerror(errno));
	if (rdma_bind_addr(id, any))
		tp_die("rdma_bind_addr port %u: %s", port, strerror(errno));
	if (rdma_listen(id, backlog))
		tp_die("rdma_listen: %s", strerror(errno));
	tp_log("listening on port %u", port);
	return id;
}

void tp_save_pdata(struct tp_conn *c, const struct rdma_conn_param *p)
{
	size_t n = p->private_data_len;

	if (n > sizeof(c->peer_pdata))
		n = sizeof(c->peer_pdata);
	if (p->private_data)
		memcpy(c->peer_pdata, p->private_data, n);
	else
		n = 0;
	c->peer_pdata_len = n;
}

bool tp_get_request(struct rdma_event_channel *ec, struct rdma_cm_id *listen,
		    struct tp_conn *c, int timeout_ms)
{
	struct rdma_cm_event *ev;

	memset(c, 0, sizeof(*c));
	ev = tp_expect_event(ec, NULL, RDMA_CM_EVENT_CONNECT_REQUEST,
			     timeout_ms);
	if (!ev)
		return false;
	if (ev->listen_id != listen)
		tp_fail("connect request for an unknown listener");
	tp_request_conn(c, ec, ev);
	rdma_ack_cm_event(ev);
	return true;
}

void tp_request_conn(struct tp_conn *c, struct rdma_event_channel *ec,
		     const struct rdma_cm_event *ev)
{
	memset(c, 0, sizeof(*c));
	c->ec = ec;
	c->id = ev->id;
	tp_save_pdata(c, &ev->param.conn);
	c->req_initiator_depth = ev->param.conn.initiator_depth;
	c->req_responder_resources = ev->param.conn.responder_resources;
}

bool tp_take_request(struct rdma_event_channel *ec, struct rdma_cm_id *listen,
		     struct tp_conn *c, uint64_t magic, uint64_t *w,
		     size_t nwords, int timeout_ms)
{
	if (!tp_get_request(ec, listen, c, timeout_ms))
		return false;
	if (!tp_pdata_get(c->peer_pdata, c->peer_pdata_len, w, nwords) ||
	    w[0] != magic)
		tp_die("a connect request without %s's private data", tp_prog);
	tp_own_channel(c);
	c->pd = ibv_alloc_pd(c->id->verbs);
	if (!c->pd) {
		tp_fail("ibv_alloc_pd: %s", strerror(errno));
		return false;
	}
	return true;
}

void tp_own_channel(struct tp_conn *c)
{
	struct rdma_event_channel *ec = tp_channel();

	if (rdma_migrate_id(c->id, ec))
		tp_die("rdma_migrate_id: %s", strerror(errno));
	c->ec = ec;
	c->own_ec = true;
}

static uint8_t clamp_rd_atomic(struct ibv_context *ctx, uint8_t want)
{
	struct ibv_device_attr a;
	int m;

	if (!want || ibv_query_device(ctx, &a))
		return want;
	m = a.max_qp_rd_atom < a.max_qp_init_rd_atom ? a.max_qp_rd_atom :
						       a.max_qp_init_rd_atom;
	return want < m ? want : (uint8_t)m;
}

bool tp_setup_qp(struct tp_conn *c, const struct tp_qp_opts *o)
{
	struct ibv_context *ctx = c->id->verbs;
	struct ibv_qp_init_attr_ex a;

	if (o->recv_channel) {
		c->rch = ibv_create_comp_channel(ctx);
		if (!c->rch) {
			tp_fail("ibv_create_comp_channel: %s", strerror(errno));
			return false;
		}
	}
	if (o->one_cq) {
		c->scq = ibv_create_cq(ctx,
				       (int)(o->max_send_wr + o->max_recv_wr) + 1,
				       NULL, c->rch, 0);
		c->rcq = c->scq;
	} else {
		c->scq = ibv_create_cq(ctx, o->send_cqe ? (int)o->send_cqe :
					    (int)o->max_send_wr + 1, NULL, NULL,
				       0);
		c->rcq_shared = o->rcq;
		c->rcq = o->rcq ? o->rcq :
			 ibv_create_cq(ctx, (int)o->max_recv_wr + 1, NULL,
				       c->rch, 0);
	}
	if (!c->scq || !c->rcq) {
		tp_fail("ibv_create_cq: %s", strerror(errno));
		return false;
	}
	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_RC;
	a.send_cq = c->scq;
	a.recv_cq = c->rcq;
	a.cap.max_send_wr = o->max_send_wr;
	a.cap.max_recv_wr = o->srq ? 0 : o->max_recv_wr;
	a.cap.max_send_sge = o->max_sge ? o->max_sge : 1;
	a.cap.max_recv_sge = o->srq ? 0 : o->max_sge ? o->max_sge : 1;
	a.srq = o->srq;
	a.pd = c->pd;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (o->send_ops_flags) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = o->send_ops_flags;
	}
	if (rdma_create_qp_ex(c->id, &a)) {
		tp_fail("rdma_create_qp_ex%s: %s",
			o->send_ops_flags ? " (extended API, send_ops_flags)" :
					    "", strerror(errno));
		return false;
	}
	c->qp = c->id->qp;
	if (o->send_ops_flags) {
		c->qpx = ibv_qp_to_qp_ex(c->qp);
		if (!c->qpx) {
			tp_fail("ibv_qp_to_qp_ex returned NULL");
			return false;
		}
	}
	c->rd_atomic = clamp_rd_atomic(ctx, o->rd_atomic);
	return true;
}

static uint8_t min_u8(uint8_t a, uint8_t b)
{
	return a < b ? a : b;
}

/* What both ends of a connection ask for: @pdata and the retry counts. */
static struct rdma_conn_param conn_param(const void *pdata, size_t len)
{
	struct rdma_conn_param p = { 0 };

	p.private_data = pdata;
	p.private_data_len = (uint8_t)len;
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	return p;
}

/*
 * ESTABLISHED on @c; the client (@save) keeps its private data, the
 * accept's (a server keeps the connect request's).
 */
static bool established(struct tp_conn *c, bool save, int timeout_ms)
{
	struct rdma_cm_event *ev;

	ev = tp_expect_event(c->ec, c->id, RDMA_CM_EVENT_ESTABLISHED,
			     timeout_ms);
	if (!ev)
		return false;
	if (save)
		tp_save_pdata(c, &ev->param.conn);
	rdma_ack_cm_event(ev);
	return true;
}

bool tp_accept_start(struct tp_conn *c, const void *pdata, size_t len,
		     uint8_t rd_atomic)
{
	struct rdma_conn_param p = conn_param(pdata, len);

	rd_atomic = clamp_rd_atomic(c->id->verbs, rd_atomic);
	p.responder_resources = min_u8(rd_atomic, c->req_responder_resources);
	p.initiator_depth = min_u8(rd_atomic, c->req_initiator_depth);
	if (rdma_accept(c->id, &p)) {
		tp_fail("rdma_accept: %s", strerror(errno));
		return false;
	}
	return true;
}

bool tp_accept(struct tp_conn *c, const void *pdata, size_t len,
	       uint8_t rd_atomic, int timeout_ms)
{
	return tp_accept_start(c, pdata, len, rd_atomic) &&
	       established(c, false, timeout_ms);
}

static bool resolve(struct tp_conn *c, const char *host, uint16_t port,
		    int timeout_ms)
{
	struct addrinfo *ai = tp_dest(host, port);
	struct rdma_cm_event *ev;
	int r;

	r = rdma_resolve_addr(c->id, NULL, ai->ai_addr, 5000);
	freeaddrinfo(ai);
	if (r) {
		tp_fail("rdma_resolve_addr %s: %s", host, strerror(errno));
		return false;
	}
	ev = tp_expect_event(c->ec, c->id, RDMA_CM_EVENT_ADDR_RESOLVED,
			     timeout_ms);
	if (!ev)
		return false;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(c->id, 5000)) {
		tp_fail("rdma_resolve_route: %s", strerror(errno));
		return false;
	}
	ev = tp_expect_event(c->ec, c->id, RDMA_CM_EVENT_ROUTE_RESOLVED,
			     timeout_ms);
	if (!ev)
		return false;
	rdma_ack_cm_event(ev);
	return true;
}

bool tp_resolve(struct tp_conn *c, struct rdma_event_channel *ec,
		const char *host, uint16_t port, int timeout_ms)
{
	memset(c, 0, sizeof(*c));
	c->ec = ec;
	if (rdma_create_id(ec, &c->id, c, RDMA_PS_TCP)) {
		tp_fail("rdma_create_id: %s", strerror(errno));
		return false;
	}
	return resolve(c, host, port, timeout_ms);
}

struct addrinfo *tp_dest(const char *host, uint16_t port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	char ps[8];
	int r;

	snprintf(ps, sizeof(ps), "%u", port);
	r = getaddrinfo(host, ps, &hints, &ai);
	if (r)
		tp_die("cannot resolve '%s': %s", host, gai_strerror(r));
	return ai;
}

bool tp_resolve_start(struct tp_conn *c, struct rdma_event_channel *ec,
		      const struct sockaddr *dst)
{
	memset(c, 0, sizeof(*c));
	c->ec = ec;
	if (rdma_create_id(ec, &c->id, c, RDMA_PS_TCP)) {
		tp_fail("rdma_create_id: %s", strerror(errno));
		return false;
	}
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)dst, 5000)) {
		tp_fail("rdma_resolve_addr: %s", strerror(errno));
		return false;
	}
	return true;
}

bool tp_connect_start(struct tp_conn *c, const void *pdata, size_t len)
{
	struct rdma_conn_param p = conn_param(pdata, len);

	p.initiator_depth = c->rd_atomic;
	p.responder_resources = c->rd_atomic;
	if (rdma_connect(c->id, &p)) {
		tp_fail("rdma_connect: %s", strerror(errno));
		return false;
	}
	return true;
}

bool tp_connect_qp(struct tp_conn *c, const void *pdata, size_t len,
		   int timeout_ms)
{
	return tp_connect_start(c, pdata, len) &&
	       established(c, true, timeout_ms);
}

bool tp_connect(struct tp_conn *c, struct rdma_event_channel *ec,
		const char *host, uint16_t port, struct ibv_pd **pd,
		const struct tp_qp_opts *o, const void *pdata, size_t len,
		int timeout_ms)
{
	if (!tp_resolve(c, ec, host, port, timeout_ms))
		return false;
	if (!*pd) {
		*pd = ibv_alloc_pd(c->id->verbs);
		if (!*pd) {
			tp_fail("ibv_alloc_pd: %s", strerror(errno));
			return false;
		}
	} else if ((*pd)->context != c->id->verbs) {
		tp_fail("connections resolved to different devices");
		return false;
	}
	c->pd = *pd;
	if (!tp_setup_qp(c, o))
		return false;
	if (o->pre_recv_addr &&
	    tp_post_recv(c, o->pre_recv_id, o->pre_recv_addr, o->pre_recv_len,
			 o->pre_recv_lkey)) {
		tp_fail("posting the receive before connecting failed");
		return false;
	}
	return tp_connect_qp(c, pdata, len, timeout_ms);
}

void tp_destroy(struct tp_conn *c)
{
	int rv;

	if (c->qp)
		rdma_destroy_qp(c->id);
	rv = c->scq ? ibv_destroy_cq(c->scq) : 0;
	if (rv)
		tp_fail("ibv_destroy_cq (send CQ): %s", strerror(rv));
	rv = c->rcq && c->rcq != c->scq && !c->rcq_shared ?
		     ibv_destroy_cq(c->rcq) : 0;
	if (rv)
		tp_fail("ibv_destroy_cq (receive CQ): %s", strerror(rv));
	/* EBUSY while the library still counts a CQ on the channel */
	rv = c->rch ? ibv_destroy_comp_channel(c->rch) : 0;
	if (rv)
		tp_fail("ibv_destroy_comp_channel: %s", strerror(rv));
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->own_ec)
		rdma_destroy_event_channel(c->ec);
	c->own_ec = false;
	c->qp = NULL;
	c->qpx = NULL;
	c->scq = c->rcq = NULL;
	c->rcq_shared = false;
	c->rch = NULL;
	c->id = NULL;
}

static int conn_index(const struct tp_conn *c, unsigned int n,
		      const struct rdma_cm_id *id)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (c[i].id == id)
			return (int)i;
	return -1;
}

/*
 * The next DISCONNECTED on @c[0]'s event channel for one of the @n
 * connections not yet @seen (NULL: none seen); its index, or -1 when none
 * came within @timeout_ms. Other events are acked and skipped.
 */
static int next_disconnected(struct tp_conn *c, unsigned int n,
			     const bool *seen, int timeout_ms)
{
	struct pollfd p = { .fd = c[0].ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int k;

	for (;;) {
		if (poll(&p, 1, timeout_ms) <= 0 ||
		    rdma_get_cm_event(c[0].ec, &ev))
			return -1;
		k = conn_index(c, n, ev->id);
		if (k >= 0 && ev->event == RDMA_CM_EVENT_DISCONNECTED &&
		    !(seen && seen[k])) {
			rdma_ack_cm_event(ev);
			return k;
		}
		tp_vlog("waiting for DISCONNECTED: rdma_cm event %s (ignored)",
			rdma_event_str(ev->event));
		rdma_ack_cm_event(ev);
	}
}

void tp_close(struct tp_conn *c, int timeout_ms)
{
	if (!c->id)
		return;
	rdma_disconnect(c->id);
	/* Both the peer's and our own disconnect end in one DISCONNECTED. */
	next_disconnected(c, 1, NULL, timeout_ms);
	tp_destroy(c);
}

bool tp_disconnect_after_peer(struct tp_conn *c, unsigned int n,
			      int timeout_ms)
{
	unsigned int left = n;
	bool seen[n], ok = true;

	memset(seen, 0, sizeof(seen));
	while (left) {
		int k = next_disconnected(c, n, seen, timeout_ms);

		if (k < 0) {
			tp_fail("%u of %u connections saw no DISCONNECTED from "
				"the peer within %d ms", left, n, timeout_ms);
			return false;
		}
		seen[k] = true;
		left--;
		/*
		 * At once, as an application does: on InfiniBand the peer's
		 * disconnect waits for ours (DREP). On iWARP librdmacm first
		 * asks the QP, in ERROR since the peer's close, for SQD:
		 * that must not fail either.
		 */
		if (rdma_disconnect(c[k].id)) {
			tp_fail("connection %d: rdma_disconnect after the "
				"peer's disconnect: %s", k, strerror(errno));
			ok = false;
		}
	}
	return ok;
}

bool tp_close_leading(struct tp_conn *c, unsigned int n, int timeout_ms)
{
	unsigned int i, left = n;
	bool seen[n], ok = true;

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < n; i++) {
		if (rdma_disconnect(c[i].id)) {
			tp_fail("connection %u: rdma_disconnect: %s", i,
				strerror(errno));
			ok = false;
			seen[i] = true;		/* no DISCONNECTED to wait for */
			left--;
		}
	}
	while (left) {
		int k = next_disconnected(c, n, seen, timeout_ms);

		if (k < 0) {
			tp_fail("%u of %u connections saw no DISCONNECTED "
				"after our disconnect within %d ms", left, n,
				timeout_ms);
			ok = false;
			break;
		}
		seen[k] = true;
		left--;
	}
	for (i = 0; i < n; i++)
		tp_destroy(&c[i]);
	return ok;
}

bool tp_close_after_peer(struct tp_conn *c, unsigned int n, int timeout_ms)
{
	bool ok = tp_disconnect_after_peer(c, n, timeout_ms);
	unsigned int i;

	for (i = 0; i < n; i++)
		tp_destroy(&c[i]);
	return ok;
}

/* Posting. */

static int post_wr(struct tp_conn *c, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	return ibv_post_send(c->qp, wr, &bad);
}

static void ex_sge(struct ibv_qp_ex *q, void *addr, uint32_t len, uint32_t lkey)
{
	if (len)
		ibv_wr_set_sge(q, lkey, (uintptr_t)addr, len);
	else
		ibv_wr_set_sge_list(q, 0, NULL);
}

static void ex_start(struct ibv_qp_ex *q, uint64_t wr_id, unsigned int flags)
{
	ibv_wr_start(q);
	q->wr_id = wr_id;
	q->wr_flags = flags;
}

int tp_post_recv(struct tp_conn *c, uint64_t wr_id, void *addr, uint32_t len,
		 uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = len ? 1 : 0 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(c->qp, &wr, &bad);
}

int tp_post_send(struct tp_conn *c, uint64_t wr_id, void *addr, uint32_t len,
		 uint32_t lkey, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = len ? 1 : 0,
				  .opcode = IBV_WR_SEND, .send_flags = flags };

	if (!c->qpx)
		return post_wr(c, &wr);
	ex_start(c->qpx, wr_id, flags);
	ibv_wr_send(c->qpx);
	ex_sge(c->qpx, addr, len, lkey);
	return ibv_wr_complete(c->qpx);
}

int tp_post_write_imm(struct tp_conn *c, uint64_t wr_id, void *addr,
		      uint32_t len, uint32_t lkey, uint64_t raddr,
		      uint32_t rkey, uint32_t imm_host, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = len ? 1 : 0,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = flags,
				  .imm_data = htonl(imm_host) };

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (!c->qpx)
		return post_wr(c, &wr);
	ex_start(c->qpx, wr_id, flags);
	ibv_wr_rdma_write_imm(c->qpx, rkey, raddr, htonl(imm_host));
	ex_sge(c->qpx, addr, len, lkey);
	return ibv_wr_complete(c->qpx);
}

static int post_rdma(struct tp_conn *c, enum ibv_wr_opcode op, uint64_t wr_id,
		     void *addr, uint32_t len, uint32_t lkey, uint64_t raddr,
		     uint32_t rkey, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = len ? 1 : 0, .opcode = op,
				  .send_flags = flags };

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (!c->qpx)
		return post_wr(c, &wr);
	ex_start(c->qpx, wr_id, flags);
	if (op == IBV_WR_RDMA_READ)
		ibv_wr_rdma_read(c->qpx, rkey, raddr);
	else
		ibv_wr_rdma_write(c->qpx, rkey, raddr);
	ex_sge(c->qpx, addr, len, lkey);
	return ibv_wr_complete(c->qpx);
}

int tp_post_write(struct tp_conn *c, uint64_t wr_id, void *addr, uint32_t len,
		  uint32_t lkey, uint64_t raddr, uint32_t rkey,
		  unsigned int flags)
{
	return post_rdma(c, IBV_WR_RDMA_WRITE, wr_id, addr, len, lkey, raddr,
			 rkey, flags);
}

int tp_post_read(struct tp_conn *c, uint64_t wr_id, void *addr, uint32_t len,
		 uint32_t lkey, uint64_t raddr, uint32_t rkey,
		 unsigned int flags)
{
	return post_rdma(c, IBV_WR_RDMA_READ, wr_id, addr, len, lkey, raddr,
			 rkey, flags);
}

static int post_atomic(struct tp_conn *c, enum ibv_wr_opcode op,
		       uint64_t wr_id, uint64_t *result, uint32_t lkey,
		       uint64_t raddr, uint32_t rkey, uint64_t compare_add,
		       uint64_t swap, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)result, 8, lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1, .opcode = op,
				  .send_flags = flags };

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	if (!c->qpx)
		return post_wr(c, &wr);
	ex_start(c->qpx, wr_id, flags);
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD)
		ibv_wr_atomic_fetch_add(c->qpx, rkey, raddr, compare_add);
	else
		ibv_wr_atomic_cmp_swp(c->qpx, rkey, raddr, compare_add, swap);
	ex_sge(c->qpx, result, 8, lkey);
	return ibv_wr_complete(c->qpx);
}

int tp_post_fadd(struct tp_conn *c, uint64_t wr_id, uint64_t *result,
		 uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t add,
		 unsigned int flags)
{
	return post_atomic(c, IBV_WR_ATOMIC_FETCH_AND_ADD, wr_id, result, lkey,
			   raddr, rkey, add, 0, flags);
}

int tp_post_cas(struct tp_conn *c, uint64_t wr_id, uint64_t *result,
		uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t compare,
		uint64_t swap, unsigned int flags)
{
	return post_atomic(c, IBV_WR_ATOMIC_CMP_AND_SWP, wr_id, result, lkey,
			   raddr, rkey, compare, swap, flags);
}

int tp_poll(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
	uint64_t deadline = tp_now_ms() + (uint64_t)timeout_ms;
	unsigned int spins = 0;
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return -1;
		if (n > 0)
			return 1;
		if (tp_now_ms() > deadline)
			return 0;
		/* One vCPU under TCG: leave the CPU to the soft device. */
		if (++spins > 32)
			usleep(100);
	}
}

bool tp_wait_ok(struct ibv_cq *cq, enum ibv_wc_opcode opcode, uint64_t wr_id,
		const char *what, int timeout_ms, struct ibv_wc *out)
{
	struct ibv_wc wc;
	int r = tp_poll(cq, &wc, timeout_ms);

	if (r <= 0) {
		tp_fail("%s: %s", what, r ? "ibv_poll_cq failed" :
			"no completion within the time limit");
		return false;
	}
	if (out)
		*out = wc;
	if (wc.status != IBV_WC_SUCCESS) {
		tp_fail("%s: completion status %s (%d, \"%s\"), vendor_err 0x%x",
			what, tp_wc_status_name(wc.status), wc.status,
			ibv_wc_status_str(wc.status), wc.vendor_err);
		return false;
	}
	if (wc.opcode != opcode) {
		tp_fail("%s: completion opcode %s (%d), expected %s", what,
			tp_wc_opcode_name(wc.opcode), wc.opcode,
			tp_wc_opcode_name(opcode));
		return false;
	}
	if (wc.wr_id != wr_id) {
		tp_fail("%s: completion wr_id %" PRIu64 ", expected %" PRIu64
			" (completion order)", what, (uint64_t)wc.wr_id, wr_id);
		return false;
	}
	return true;
}

bool tp_buf_alloc(struct tp_buf *b, struct ibv_pd *pd, size_t len,
		  size_t reg_len, int access)
{
	memset(b, 0, sizeof(*b));
	if (posix_memalign(&b->addr, 4096, len)) {
		tp_fail("cannot allocate %zu bytes", len);
		return false;
	}
	memset(b->addr, 0, len);
	b->len = len;
	b->mr = ibv_reg_mr(pd, b->addr, reg_len, access);
	if (!b->mr) {
		tp_fail("ibv_reg_mr(%zu bytes, access 0x%x): %s", reg_len,
			access, strerror(errno));
		free(b->addr);
		b->addr = NULL;
		return false;
	}
	return true;
}

bool tp_reap(struct ibv_cq *cq, struct tp_tally *t, const char *who)
{
	struct ibv_wc wc[16];
	int i, n;

	while ((n = ibv_poll_cq(cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].status == IBV_WC_SUCCESS) {
				t->ok++;
			} else if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
				t->flushed++;
			} else {
				tp_fail("%s: WR %llu completed with %s", who,
					(unsigned long long)wc[i].wr_id,
					tp_wc_status_name(wc[i].status));
				t->failed++;
			}
		}
	}
	if (n < 0)
		tp_fail("%s: ibv_poll_cq: %d", who, n);
	return n >= 0;
}

void tp_buf_free(struct tp_buf *b)
{
	if (b->mr)
		ibv_dereg_mr(b->mr);
	free(b->addr);
	memset(b, 0, sizeof(*b));
}

void tp_print_device(struct ibv_context *ctx, const char *role)
{
	struct ibv_device_attr a;

	if (ibv_query_device(ctx, &a)) {
		tp_fail("ibv_query_device: %s", strerror(errno));
		return;
	}
	tp_log("%s device %s: transport %s, atomic_cap %s, max_qp_rd_atom %d,"
	       " max_qp_init_rd_atom %d", role, ibv_get_device_name(ctx->device),
	       ctx->device->transport_type == IBV_TRANSPORT_IWARP ? "iWARP" :
	       ctx->device->transport_type == IBV_TRANSPORT_IB ? "IB" : "other",
	       tp_atomic_cap_name(a.atomic_cap), a.max_qp_rd_atom,
	       a.max_qp_init_rd_atom);
}
