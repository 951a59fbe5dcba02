// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-connect-burst: connect requests beyond a listener's backlog are
 * refused at once, and refusing them leaks nothing.
 *
 * The server listens with backlog B (-b) and takes no rdma_cm event for
 * DELAY ms (-d) after listening; then it accepts every connect request it
 * is given (a QP each, accepted at once). The client, started once the
 * server listens (the harness waits for the listener), connects K times
 * at once (-n: address, route, QP and rdma_connect of all from one event
 * channel, none waited for). Most requests find the backlog full, at one
 * of two places: rdma_ucm's count of requests the application has not
 * fetched (rdma_ucm's handler fails, iw_cm rejects the request), and
 * iw_cm's work entries of the listener, B of them, each taken by a
 * request until iw_cm's (ordered) work queue hands it on to rdma_cm: a
 * request that finds none makes iw_cm's event handler fail, and the
 * iWARP device has to refuse it itself. siwx once ignored that: the
 * request was never answered, the client's connect ended only with
 * siwx's MPA timeout (10 s, REJECTED with ECONNRESET) and the server's
 * connection and socket leaked.
 *
 * Checked, client:
 *  - each connect ends in exactly one of ESTABLISHED and REJECTED (any
 *    other event fails, with its name and status);
 *  - a REJECTED is a refusal: status ECONNREFUSED, an MPA Reply with the
 *    Reject bit (or, on InfiniBand, a reject reason); ECONNRESET is an
 *    MPA Reply that never came (or a closed socket);
 *  - each outcome came within DELAY + LIMIT ms (-d, -l) of the client's
 *    first rdma_connect: the server takes events at most DELAY ms after
 *    that (it started sleeping before the client started), so LIMIT is
 *    what a connect may take once the server serves: far above a slow
 *    guest's delays, below the MPA Reply wait (DELAY + LIMIT too);
 *  - at least one connection was established.
 * Then the client tells the server its counts in one more connect
 * request, which the server rejects, and disconnects all it has.
 * Checked, server:
 *  - each request it accepted becomes ESTABLISHED, then DISCONNECTED;
 *  - it accepted exactly as many as the client counts established.
 * Both, once everything is destroyed: siwx's count of connections
 * (debugfs siwx/objects, "conns N") returns to 0 within 5 s; skipped
 * when there is no such file (another device than siwx).
 *
 *   siwx-connect-burst -s [-n K] [-b B] [-d MS] [-p PORT] [-t SEC] [-v]
 *   siwx-connect-burst -c HOST [-n K] [-b B] [-d MS] [-l MS] [-p PORT]
 *                      [-t SEC] [-v]
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/mount.h>

#include "tp_common.h"

#define MAGIC UINT64_C(0x5349575842555253)	/* "SIWXBURS" */
#define PDATA_WORDS 4		/* MAGIC, kind, index or K, E */
#define OBJECTS "/sys/kernel/debug/siwx/objects"
#define OBJECTS_WAIT_MS 5000
#define MAX_REPORTED 5		/* late or wrong outcomes shown one by one */

enum kind { KIND_BURST, KIND_DONE };

struct opts {
	struct tp_role r;
	unsigned int conns;	/* -n */
	unsigned int backlog;	/* -b */
	unsigned int delay_ms;	/* -d */
	unsigned int limit_ms;	/* -l */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-connect-burst -s [-n K] [-b B] [-d MS] [-p PORT] [-t SEC] [-v]\n"
"       siwx-connect-burst -c HOST [-n K] [-b B] [-d MS] [-l MS] [-p PORT]\n"
"                          [-t SEC] [-v]\n"
"  -s | -c HOST  server or client\n"
"  -n K          connects at once (default 64; the same on both sides)\n"
"  -b B          the server's listen backlog (default 1; the client only\n"
"                prints it)\n"
"  -d MS         the server takes no event for MS ms after listening\n"
"                (default 1500; the same on both sides)\n"
"  -l MS         client: each connect's outcome within -d + MS ms of the\n"
"                first rdma_connect (default 6000; keep -d + -l below\n"
"                siwx's MPA Reply wait, 60 s)\n"
"  -p PORT       rdma_cm port (default 18527)\n"
"  -t SEC        time limit of each wait (default 30)\n"
"  -6            server: listen on [::], IPv6 only\n"
"Exit 0 when every check held.\n");
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* "conns N" of siwx's objects into *@conns, the file as one line. */
static bool objects_read(long *conns, char *line, size_t len)
{
	char buf[128];
	size_t at = 0;
	FILE *f = fopen(OBJECTS, "r");

	if (!f)
		return false;
	*conns = -1;
	line[0] = 0;
	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		sscanf(buf, "conns %ld", conns);
		at += (size_t)snprintf(line + at, at < len ? len - at : 0,
				       "%s%s", at ? ", " : "", buf);
	}
	fclose(f);
	return true;
}

/* After the teardown: siwx counts no connection (closes are async). */
static void check_objects(const char *who)
{
	uint64_t deadline = tp_now_ms() + OBJECTS_WAIT_MS;
	char line[256];
	long conns = -1;

	if (access(OBJECTS, F_OK) &&
	    mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) &&
	    errno != EBUSY)
		tp_vlog("mounting debugfs: %s", strerror(errno));
	if (!objects_read(&conns, line, sizeof(line))) {
		tp_log("%s: no %s (not siwx, or no debugfs): connections not "
		       "counted", who, OBJECTS);
		return;
	}
	while (conns && tp_now_ms() < deadline) {
		sleep_ms(100);
		objects_read(&conns, line, sizeof(line));
	}
	tp_log("%s: after the teardown, siwx objects: %s", who, line);
	if (conns)
		tp_fail("%s: siwx counts %ld connections %u ms after all were "
			"destroyed (leaked)", who, conns, OBJECTS_WAIT_MS);
}

static void pdata_make(uint8_t *p, enum kind k, uint64_t a, uint64_t b)
{
	uint64_t w[PDATA_WORDS] = { MAGIC, k, a, b };

	tp_pdata_put(p, w, PDATA_WORDS);
}

static bool setup_qp(struct tp_conn *c)
{
	struct tp_qp_opts q = { .max_send_wr = 1, .max_recv_wr = 1,
				.max_sge = 1 };

	return tp_setup_qp(c, &q);
}

/* Client. */

enum outcome { OUT_NONE, OUT_ESTABLISHED, OUT_REJECTED, OUT_OTHER };

struct client {
	const struct opts *o;
	struct rdma_event_channel *ec;
	struct addrinfo *dst;
	struct ibv_pd *pd;	/* on the device the first route took */
	struct tp_conn *c;
	enum outcome *out;
	uint64_t t0;		/* the first rdma_connect */
	uint64_t last;		/* the last outcome, ms after t0 */
	unsigned int ended, est, rej, late, refused_not;
};

static unsigned int idx(const struct client *cl, const struct tp_conn *c)
{
	return (unsigned int)(c - cl->c);
}

static bool connect_one(struct client *cl, struct tp_conn *c)
{
	uint8_t pdata[PDATA_WORDS * 8];

	if (!cl->pd) {
		cl->pd = ibv_alloc_pd(c->id->verbs);
		if (!cl->pd)
			tp_die("ibv_alloc_pd: %s", strerror(errno));
		tp_print_device(c->id->verbs, "client");
	}
	if (c->id->verbs != cl->pd->context) {
		tp_fail("connection %u resolved to another device", idx(cl, c));
		return false;
	}
	c->pd = cl->pd;
	pdata_make(pdata, KIND_BURST, idx(cl, c), 0);
	if (!setup_qp(c) || !tp_connect_start(c, pdata, sizeof(pdata)))
		return false;
	if (!cl->t0)
		cl->t0 = tp_now_ms();
	return true;
}

/* A REJECTED must be a refusal (a negative status is an errno). */
static void check_rejected(struct client *cl, unsigned int i, int status,
			   uint64_t ms)
{
	if (status > 0 || status == -ECONNREFUSED)
		return;
	if (cl->refused_not++ < MAX_REPORTED)
		tp_fail("connection %u: REJECTED after %" PRIu64 " ms with "
			"status %d (%s), not ECONNREFUSED: no MPA Reply with "
			"the Reject bit", i, ms, status, strerror(-status));
}

/* ESTABLISHED, REJECTED or another end: the connect's one outcome. */
static void outcome(struct client *cl, const struct rdma_cm_event *ev)
{
	struct tp_conn *c = ev->id->context;
	unsigned int i = idx(cl, c);
	uint64_t ms = tp_now_ms() - cl->t0;
	uint64_t limit = (uint64_t)cl->o->delay_ms + cl->o->limit_ms;

	if (cl->out[i] != OUT_NONE) {
		tp_fail("connection %u: %s after its outcome", i,
			rdma_event_str(ev->event));
		return;
	}
	cl->ended++;
	cl->last = ms > cl->last ? ms : cl->last;
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED) {
		cl->out[i] = OUT_ESTABLISHED;
		cl->est++;
	} else if (ev->event == RDMA_CM_EVENT_REJECTED) {
		cl->out[i] = OUT_REJECTED;
		cl->rej++;
		check_rejected(cl, i, ev->status, ms);
	} else {
		cl->out[i] = OUT_OTHER;
		tp_bad_event(ev, "connecting");
	}
	if (ms > limit && cl->late++ < MAX_REPORTED)
		tp_fail("connection %u: %s after %" PRIu64 " ms, more than "
			"-d + -l = %" PRIu64 " ms", i,
			rdma_event_str(ev->event), ms, limit);
}

static bool burst_event(struct client *cl, struct rdma_cm_event *ev)
{
	struct tp_conn *c = ev->id->context;
	bool ok = true;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ok = !rdma_resolve_route(c->id, 5000);
		if (!ok)
			tp_fail("connection %u: rdma_resolve_route: %s",
				idx(cl, c), strerror(errno));
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ok = connect_one(cl, c);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		tp_bad_event(ev, "resolving");
		ok = false;
		break;
	default:
		outcome(cl, ev);
		break;
	}
	rdma_ack_cm_event(ev);
	return ok;
}

/* All K started at once, then every event until each has its outcome. */
static bool burst(struct client *cl)
{
	struct rdma_cm_event *ev;
	unsigned int i;

	for (i = 0; i < cl->o->conns; i++)
		if (!tp_resolve_start(&cl->c[i], cl->ec, cl->dst->ai_addr))
			return false;
	while (cl->ended < cl->o->conns) {
		ev = tp_next_event(cl->ec, cl->o->r.timeout_ms, "connecting");
		if (!ev || !burst_event(cl, ev)) {
			tp_fail("%u of %u connects ended", cl->ended,
				cl->o->conns);
			return false;
		}
	}
	tp_log("connect burst: %u connects with backlog %u: %u established, "
	       "%u rejected, last outcome after %" PRIu64 " ms", cl->o->conns,
	       cl->o->backlog, cl->est, cl->rej, cl->last);
	if (cl->late > MAX_REPORTED || cl->refused_not > MAX_REPORTED)
		tp_fail("in all: %u outcomes late, %u rejections not "
			"refusals", cl->late, cl->refused_not);
	if (!cl->est)
		tp_fail("no connection established");
	return true;
}

/* One more connect request with our counts; the server rejects it. */
static bool tell_server(struct client *cl)
{
	uint8_t pdata[PDATA_WORDS * 8];
	struct rdma_cm_event *ev;
	struct tp_conn d;
	bool ok;

	ok = tp_resolve(&d, cl->ec, cl->o->r.host, cl->o->r.port,
			cl->o->r.timeout_ms);
	d.pd = cl->pd;
	pdata_make(pdata, KIND_DONE, cl->o->conns, cl->est);
	ok = ok && setup_qp(&d) &&
	     tp_connect_start(&d, pdata, sizeof(pdata));
	ev = ok ? tp_expect_event(cl->ec, d.id, RDMA_CM_EVENT_REJECTED,
				  cl->o->r.timeout_ms) : NULL;
	if (ev)
		rdma_ack_cm_event(ev);
	else
		tp_fail("the server did not reject our final request");
	tp_destroy(&d);
	return ev != NULL;
}

/* Disconnect the established, destroy everything. */
static void client_close(struct client *cl)
{
	struct tp_conn *est = calloc(cl->est + 1, sizeof(*est));
	unsigned int i, n = 0;

	if (!est)
		tp_die("out of memory");
	for (i = 0; i < cl->o->conns; i++) {
		if (cl->out[i] == OUT_ESTABLISHED) {
			est[n++] = cl->c[i];
			cl->c[i].id = NULL;
		} else if (cl->c[i].id) {
			tp_destroy(&cl->c[i]);
		}
	}
	if (n && !tp_close_leading(est, n, cl->o->r.timeout_ms))
		tp_fail("closing the %u established connections", n);
	free(est);
	if (cl->pd && ibv_dealloc_pd(cl->pd))
		tp_fail("ibv_dealloc_pd: %s", strerror(errno));
	rdma_destroy_event_channel(cl->ec);
	freeaddrinfo(cl->dst);
	free(cl->c);
	free(cl->out);
}

static int client(const struct opts *o)
{
	struct client cl = { .o = o };

	cl.ec = tp_channel();
	cl.dst = tp_dest(o->r.host, o->r.port);
	cl.c = calloc(o->conns, sizeof(*cl.c));
	cl.out = calloc(o->conns, sizeof(*cl.out));
	if (!cl.c || !cl.out)
		tp_die("out of memory");
	if (burst(&cl) && cl.pd)
		tell_server(&cl);
	client_close(&cl);
	check_objects("client");
	if (tp_failures) {
		tp_log("FAILED: client: %lu failed check(s)", tp_failures);
		return 1;
	}
	tp_log("PASS: client: every connect of the burst established or "
	       "refused in time; done");
	return 0;
}

/* Server. */

enum state { ST_NONE, ST_ACCEPTED, ST_ESTABLISHED, ST_DISCONNECTED };

struct server {
	const struct opts *o;
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen;
	struct ibv_pd *pd;
	struct tp_conn *c;	/* by the client's index */
	enum state *st;
	unsigned int accepted, established, disconnected;
	bool done;		/* the client's final request came */
	uint64_t client_k, client_e;
};

/* A connect request of the burst: QP, accept at once. */
static bool accept_one(struct server *sv, const struct rdma_cm_event *ev,
		       uint64_t i)
{
	struct tp_conn *c = &sv->c[i];

	if (i >= sv->o->conns || sv->st[i] != ST_NONE) {
		tp_fail("a connect request for connection %" PRIu64 " (of %u)"
			", or twice", i, sv->o->conns);
		return false;
	}
	tp_request_conn(c, sv->ec, ev);
	c->id->context = c;
	if (!sv->pd) {
		sv->pd = ibv_alloc_pd(c->id->verbs);
		if (!sv->pd)
			tp_die("ibv_alloc_pd: %s", strerror(errno));
		tp_print_device(c->id->verbs, "server");
	}
	c->pd = sv->pd;
	sv->st[i] = ST_ACCEPTED;
	sv->accepted++;
	return setup_qp(c) && tp_accept_start(c, NULL, 0, 0);
}

/*
 * A connect request: the burst's, or the client's last (its counts),
 * which is rejected; *@drop: the id to destroy once the event is acked.
 */
static bool request(struct server *sv, const struct rdma_cm_event *ev,
		    struct rdma_cm_id **drop)
{
	uint64_t w[PDATA_WORDS];

	if (!tp_pdata_get(ev->param.conn.private_data,
			  ev->param.conn.private_data_len, w, PDATA_WORDS) ||
	    w[0] != MAGIC || w[1] > KIND_DONE || (w[1] == KIND_DONE &&
						  sv->done)) {
		tp_fail("a connect request not of our client's burst");
		rdma_reject(ev->id, NULL, 0);
		*drop = ev->id;
		return false;
	}
	if (w[1] == KIND_BURST)
		return accept_one(sv, ev, w[2]);
	sv->done = true;
	sv->client_k = w[2];
	sv->client_e = w[3];
	if (rdma_reject(ev->id, NULL, 0))
		tp_fail("rdma_reject of the final request: %s",
			strerror(errno));
	*drop = ev->id;
	return true;
}

/* ESTABLISHED, then DISCONNECTED, on a connection we accepted. */
static bool progress(struct server *sv, const struct rdma_cm_event *ev)
{
	struct tp_conn *c = ev->id->context;
	unsigned int i = c ? (unsigned int)(c - sv->c) : 0;
	enum state from = ev->event == RDMA_CM_EVENT_ESTABLISHED ?
			  ST_ACCEPTED : ST_ESTABLISHED;

	if (!c || sv->st[i] != from) {
		tp_bad_event(ev, "serving");
		return false;
	}
	if (from == ST_ACCEPTED) {
		sv->st[i] = ST_ESTABLISHED;
		sv->established++;
	} else {
		sv->st[i] = ST_DISCONNECTED;
		sv->disconnected++;
	}
	return true;
}

static bool serve_event(struct server *sv, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *drop = NULL;
	bool ok;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		ok = request(sv, ev, &drop);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
	case RDMA_CM_EVENT_DISCONNECTED:
		ok = progress(sv, ev);
		break;
	default:
		tp_bad_event(ev, "serving");
		ok = false;
		break;
	}
	rdma_ack_cm_event(ev);
	if (drop)
		rdma_destroy_id(drop);
	return ok;
}

/* Until the client's last request came and all we accepted are gone. */
static bool serve(struct server *sv)
{
	struct rdma_cm_event *ev;

	while (!sv->done || sv->disconnected < sv->accepted) {
		ev = tp_next_event(sv->ec, sv->o->r.timeout_ms, "serving");
		if (!ev || !serve_event(sv, ev)) {
			tp_fail("accepted %u, established %u, disconnected %u"
				"%s", sv->accepted, sv->established,
				sv->disconnected, sv->done ? "" :
				"; the client's last request did not come");
			return false;
		}
	}
	tp_log("server: accepted %u connect requests (the client: %" PRIu64
	       " connects, %" PRIu64 " established); all established and "
	       "disconnected", sv->accepted, sv->client_k, sv->client_e);
	if (sv->client_e != sv->accepted)
		tp_fail("we accepted %u connect requests, the client has %"
			PRIu64 " connections established", sv->accepted,
			sv->client_e);
	return true;
}

static int server(const struct opts *o)
{
	struct server sv = { .o = o };
	unsigned int i;

	sv.ec = tp_channel();
	sv.c = calloc(o->conns, sizeof(*sv.c));
	sv.st = calloc(o->conns, sizeof(*sv.st));
	if (!sv.c || !sv.st)
		tp_die("out of memory");
	sv.listen = tp_listen_backlog(sv.ec, o->r.port, (int)o->backlog);
	tp_log("server: backlog %u; taking no event for %u ms", o->backlog,
	       o->delay_ms);
	sleep_ms(o->delay_ms);
	serve(&sv);
	for (i = 0; i < o->conns; i++)
		if (sv.c[i].id)
			tp_destroy(&sv.c[i]);
	rdma_destroy_id(sv.listen);
	if (sv.pd && ibv_dealloc_pd(sv.pd))
		tp_fail("ibv_dealloc_pd: %s", strerror(errno));
	rdma_destroy_event_channel(sv.ec);
	free(sv.c);
	free(sv.st);
	check_objects("server");
	if (tp_failures) {
		tp_log("FAILED: server: %lu failed check(s)", tp_failures);
		return 1;
	}
	tp_log("PASS: server: every connection accepted, established and "
	       "closed, none left; done");
	return 0;
}

static bool opt(int ch, const char *arg, void *ctx)
{
	struct opts *o = ctx;

	switch (ch) {
	case 'n':
		o->conns = (unsigned int)tp_parse_u64(arg, "-n", 1, 4096);
		return true;
	case 'b':
		o->backlog = (unsigned int)tp_parse_u64(arg, "-b", 1, 1024);
		return true;
	case 'd':
		o->delay_ms = (unsigned int)tp_parse_u64(arg, "-d", 0, 60000);
		return true;
	case 'l':
		o->limit_ms = (unsigned int)tp_parse_u64(arg, "-l", 1, 600000);
		return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	struct opts o = { .r = { .port = 18527, .timeout_ms = 30000 },
			  .conns = 64, .backlog = 1, .delay_ms = 1500,
			  .limit_ms = 6000 };

	tp_prog = "siwx-connect-burst";
	setvbuf(stdout, NULL, _IOLBF, 0);
	tp_role_parse_opts(argc, argv, &o.r, "n:b:d:l:", opt, &o, usage);
	return o.r.server ? server(&o) : client(&o);
}
