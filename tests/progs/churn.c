// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-churn: many short connections, each ended a different way, one
 * after the other; what each one made (PD, CQs, QP, MRs, cm_id) is
 * destroyed before the next, so that a leak of any of them per
 * connection shows in the device's and the module's counts afterwards
 * (the scenario compares them).
 *
 * Connection i: the client registers fresh buffers, RDMA Writes 4 KiB of
 * a pattern of i into a fresh buffer of the server's and Sends i; the
 * server checks both and answers with a Send. Then, by i % 5:
 *   0  the client disconnects; the server follows
 *   1  the server disconnects; the client follows
 *   2  the client destroys its QP and id without disconnecting (abortive)
 *   3  the server does
 *   4  a process the client starts (this program again, -K) connects,
 *      writes on and on, and is killed (SIGKILL): its kernel tears the
 *      connection down. A new program, not a fork: a forked child would
 *      share the parent's open device, and its QP would outlive it.
 * The side that did not end it must see DISCONNECTED.
 *
 *   siwx-churn -s -n CYCLES [-p PORT] [-t SEC] [-v]
 *   siwx-churn -c HOST -n CYCLES [-p PORT] [-t SEC] [-v]
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp_common.h"

#define MAGIC UINT64_C(0x5349575843485552)	/* "SIWXCHUR" */
#define DATA 4096u		/* octets each connection writes */

enum end {
	END_CLIENT_CLOSE,
	END_SERVER_CLOSE,
	END_CLIENT_ABORT,
	END_SERVER_ABORT,
	END_CLIENT_KILLED,
	END_KINDS
};

static const char *const end_name[END_KINDS] = {
	"client disconnects", "server disconnects", "client aborts",
	"server aborts", "client killed",
};

struct opts {
	struct tp_role r;
	uint64_t cycles;
	int64_t killed;		/* -K CYCLE: be connection CYCLE's victim */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-churn -s -n CYCLES [-p PORT] [-t SEC] [-v]\n"
"       siwx-churn -c HOST -n CYCLES [-p PORT] [-t SEC] [-v]\n"
"  -s | -c HOST  server or client\n"
"  -n CYCLES     connections, one after the other (both sides alike)\n"
"  -p PORT       rdma_cm port (default 18525)\n"
"  -t SEC        time limit of each wait (default 30)\n"
"  -6            server: listen on [::], IPv6 only\n"
"Exit 0 when every connection moved its data exactly and ended as its\n"
"kind says, seen by both sides.\n");
}

static uint64_t pattern(uint64_t cycle, uint64_t i)
{
	return tp_mix(MAGIC ^ cycle, i);
}

/* What one side makes for a connection, and destroys after it. */
struct side {
	struct tp_conn c;
	struct ibv_pd *pd;
	struct tp_buf data;	/* server: the Write's sink; client: source */
	struct tp_buf ctl;	/* 8 octets to receive, 8 to send */
	uint64_t raddr;		/* client: the server's sink */
	uint32_t rkey;
};

static bool side_buffers(struct side *s, int data_access)
{
	return tp_buf_alloc(&s->data, s->pd, DATA, DATA, data_access) &&
	       tp_buf_alloc(&s->ctl, s->pd, 16, 16, IBV_ACCESS_LOCAL_WRITE);
}

static void side_free(struct side *s)
{
	tp_destroy(&s->c);
	tp_buf_free(&s->data);
	tp_buf_free(&s->ctl);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	s->pd = NULL;
}

static bool send_word(struct side *s, uint64_t v, int tmo)
{
	uint64_t *slot = (uint64_t *)s->ctl.addr + 1;

	*slot = v;
	return !tp_post_send(&s->c, 2, slot, 8, s->ctl.mr->lkey,
			     IBV_SEND_SIGNALED) &&
	       tp_wait_ok(s->c.scq, IBV_WC_SEND, 2, "a Send", tmo, NULL);
}

static bool recv_word(struct side *s, uint64_t want, int tmo)
{
	uint64_t got;

	if (!tp_wait_ok(s->c.rcq, IBV_WC_RECV, 1, "a receive", tmo, NULL))
		return false;
	got = *(uint64_t *)s->ctl.addr;
	if (got != want)
		tp_fail("received %#llx, expected %#llx",
			(unsigned long long)got, (unsigned long long)want);
	return got == want;
}

/* End a connection that the peer ends: DISCONNECTED, then destroy. */
static bool follow_peer(struct side *s, int tmo)
{
	return tp_disconnect_after_peer(&s->c, 1, tmo);
}

/*
 * End it ourselves: disconnect and take DISCONNECTED (acked, or
 * rdma_destroy_id() would wait for it forever).
 */
static bool lead(struct side *s, int tmo)
{
	struct rdma_cm_event *ev;

	if (rdma_disconnect(s->c.id)) {
		tp_fail("rdma_disconnect: %s", strerror(errno));
		return false;
	}
	ev = tp_expect_event(s->c.ec, s->c.id, RDMA_CM_EVENT_DISCONNECTED, tmo);
	if (ev)
		rdma_ack_cm_event(ev);
	return ev;
}

/* The verdict on one connection, which is destroyed now. */
static bool finish(struct side *s, bool ok, const char *who, uint64_t cycle,
		   enum end end)
{
	if (!ok)
		tp_fail("%s: connection %llu (%s) failed", who,
			(unsigned long long)cycle, end_name[end]);
	else
		tp_vlog("%s: connection %llu (%s) done", who,
			(unsigned long long)cycle, end_name[end]);
	side_free(s);
	return ok;
}

static bool serve_one(struct rdma_event_channel *ec,
		      struct rdma_cm_id *listen, uint64_t cycle, int tmo)
{
	struct tp_qp_opts q = { .max_send_wr = 2, .max_recv_wr = 1,
				.max_sge = 1 };
	struct side s = {};
	uint64_t w[3], i;
	uint8_t pdata[16];
	enum end end;
	bool ok = false;

	if (!tp_take_request(ec, listen, &s.c, MAGIC, w, 3, tmo)) {
		tp_fail("connection %llu: no request", (unsigned long long)cycle);
		return false;
	}
	s.pd = s.c.pd;
	if (w[1] >= END_KINDS || w[2] != cycle) {
		tp_fail("connection %llu: request for connection %llu, kind %llu",
			(unsigned long long)cycle, (unsigned long long)w[2],
			(unsigned long long)w[1]);
		side_free(&s);
		return false;
	}
	end = (enum end)w[1];
	if (!side_buffers(&s, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE))
		tp_die("connection %llu: PD or buffers",
		       (unsigned long long)cycle);
	w[0] = (uintptr_t)s.data.addr;
	w[1] = s.data.mr->rkey;
	tp_pdata_put(pdata, w, 2);
	if (!tp_setup_qp(&s.c, &q) ||
	    tp_post_recv(&s.c, 1, s.ctl.addr, 8, s.ctl.mr->lkey) ||
	    !tp_accept(&s.c, pdata, sizeof(pdata), 0, tmo) ||
	    !recv_word(&s, cycle, tmo))
		goto out;
	for (i = 0; i < DATA / 8; i++) {
		if (((uint64_t *)s.data.addr)[i] != pattern(cycle, i)) {
			tp_fail("connection %llu: written word %llu wrong",
				(unsigned long long)cycle,
				(unsigned long long)i);
			goto out;
		}
	}
	if (!send_word(&s, ~cycle, tmo))
		goto out;
	switch (end) {
	case END_SERVER_CLOSE:
		ok = lead(&s, tmo);
		break;
	case END_SERVER_ABORT:
		ok = true;	/* side_free() destroys without a word */
		break;
	default:
		ok = follow_peer(&s, tmo);
		break;
	}
out:
	return finish(&s, ok, "server", cycle, end);
}

static int run_server(const struct opts *o)
{
	struct rdma_event_channel *ec = tp_channel();
	struct rdma_cm_id *listen = tp_listen(ec, o->r.port);
	uint64_t i;

	for (i = 0; i < o->cycles; i++) {
		if (!serve_one(ec, listen, i, o->r.timeout_ms))
			return 1;
	}
	rdma_destroy_id(listen);
	rdma_destroy_event_channel(ec);
	tp_log("PASS: server: %llu connections", (unsigned long long)i);
	return 0;
}

/*
 * Connect, write, send and take the answer. @s->c's channel is made here:
 * a killed child must not share one with its parent.
 */
static bool client_exchange(struct side *s, const struct opts *o,
			    uint64_t cycle, enum end end)
{
	struct tp_qp_opts q = { .max_send_wr = 8, .max_recv_wr = 1,
				.max_sge = 1 };
	uint64_t w[3] = { MAGIC, end, cycle }, i;
	uint8_t pdata[24];
	int tmo = o->r.timeout_ms;

	tp_pdata_put(pdata, w, 3);
	if (!tp_connect(&s->c, tp_channel(), o->r.host, o->r.port, &s->pd, &q,
			pdata, sizeof(pdata), tmo))
		return false;
	s->c.own_ec = true;
	if (!side_buffers(s, 0) ||
	    !tp_pdata_get(s->c.peer_pdata, s->c.peer_pdata_len, w, 2))
		tp_die("connection %llu: buffers or accept data",
		       (unsigned long long)cycle);
	s->raddr = w[0];
	s->rkey = (uint32_t)w[1];
	for (i = 0; i < DATA / 8; i++)
		((uint64_t *)s->data.addr)[i] = pattern(cycle, i);
	/* The answer comes only after our Send: its receive is in place. */
	return !tp_post_recv(&s->c, 1, s->ctl.addr, 8, s->ctl.mr->lkey) &&
	       !tp_post_write(&s->c, 3, s->data.addr, DATA, s->data.mr->lkey,
			      s->raddr, s->rkey, IBV_SEND_SIGNALED) &&
	       tp_wait_ok(s->c.scq, IBV_WC_RDMA_WRITE, 3, "the Write", tmo,
			  NULL) &&
	       send_word(s, cycle, tmo) && recv_word(s, ~cycle, tmo);
}

/*
 * -K: the victim of END_CLIENT_KILLED: exchange, tell the parent (one
 * octet on stdout, a pipe), write on until killed.
 */
static int killed_child(const struct opts *o, uint64_t cycle)
{
	struct side s = {};
	uint64_t n = 0;

	if (!client_exchange(&s, o, cycle, END_CLIENT_KILLED))
		return 1;
	if (write(STDOUT_FILENO, "x", 1) != 1)
		return 1;
	for (;;) {
		struct ibv_wc wc;

		if (n < 4 && !tp_post_write(&s.c, 4, s.data.addr, DATA,
					    s.data.mr->lkey, s.raddr, s.rkey,
					    IBV_SEND_SIGNALED))
			n++;
		while (ibv_poll_cq(s.c.scq, 1, &wc) > 0)
			n--;
	}
}

static bool client_killed(const struct opts *o, uint64_t cycle)
{
	char port[8], secs[16], cyc[24], x;
	struct pollfd pfd;
	int fds[2], status;
	pid_t pid;
	bool ok;

	snprintf(port, sizeof(port), "%u", o->r.port);
	snprintf(secs, sizeof(secs), "%d", o->r.timeout_ms / 1000);
	snprintf(cyc, sizeof(cyc), "%llu", (unsigned long long)cycle);
	if (pipe(fds))
		tp_die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		tp_die("fork: %s", strerror(errno));
	if (!pid) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execl("/proc/self/exe", tp_prog, "-c", o->r.host, "-p", port,
		      "-t", secs, "-K", cyc, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	pfd = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	ok = poll(&pfd, 1, o->r.timeout_ms) == 1 && read(fds[0], &x, 1) == 1;
	if (ok)
		usleep(20000);	/* let it write a while */
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(fds[0]);
	if (!ok)
		tp_fail("connection %llu: the child to be killed failed first",
			(unsigned long long)cycle);
	return ok;
}

static bool client_one(const struct opts *o, uint64_t cycle)
{
	enum end end = (enum end)(cycle % END_KINDS);
	int tmo = o->r.timeout_ms;
	struct side s = {};
	bool ok;

	if (end == END_CLIENT_KILLED)
		return client_killed(o, cycle);
	ok = client_exchange(&s, o, cycle, end);
	if (ok) {
		switch (end) {
		case END_CLIENT_CLOSE:
			ok = lead(&s, tmo);
			break;
		case END_CLIENT_ABORT:
			break;	/* side_free() destroys without a word */
		default:
			ok = follow_peer(&s, tmo);
			break;
		}
	}
	return finish(&s, ok, "client", cycle, end);
}

static int run_client(const struct opts *o)
{
	uint64_t i, t0 = tp_now_ms(), ms;

	for (i = 0; i < o->cycles; i++) {
		if (!client_one(o, i))
			return 1;
		if (tp_verbose && i % 100 == 99)
			tp_log("client: %llu connections", (unsigned long long)i + 1);
	}
	ms = tp_now_ms() - t0;
	tp_log("PASS: client: %llu connections (%d ways of ending them) in "
	       "%llu ms: %.1f connections/s", (unsigned long long)i,
	       END_KINDS, (unsigned long long)ms, ms ? i * 1000.0 / ms : 0.0);
	return 0;
}

static bool opt(int ch, const char *arg, void *ctx)
{
	struct opts *o = ctx;

	switch (ch) {
	case 'n':
		o->cycles = tp_parse_u64(arg, "-n", 1, 10000000);
		return true;
	case 'K':
		o->killed = (int64_t)tp_parse_u64(arg, "-K", 0, 10000000);
		return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	struct opts o = { .r = { .port = 18525, .timeout_ms = 30000 },
			  .killed = -1 };

	tp_prog = "siwx-churn";
	setvbuf(stdout, NULL, _IOLBF, 0);
	tp_role_parse_opts(argc, argv, &o.r, "n:K:", opt, &o, usage);
	if (!o.r.server && o.killed >= 0)
		return killed_child(&o, (uint64_t)o.killed);
	if (!o.cycles) {
		usage(stderr);
		return 2;
	}
	return o.r.server ? run_server(&o) : run_client(&o);
}
