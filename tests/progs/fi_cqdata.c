// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-fi-cqdata: remote CQ data over libfabric's verbs provider (MSG
 * endpoints) as our libfabric patches carry it on iWARP
 * (docs/libfabric.md): RFC 7306 Immediate Data when both sides agreed at
 * connection set-up, refused before it is posted when they did not.
 *
 *   siwx-fi-cqdata -s [-p PORT] [-t SEC] -e agreed|refused|none
 *   siwx-fi-cqdata -c HOST [-p PORT] [-t SEC] -e agreed|refused|none
 *
 * -e is what this side's libfabric must do with remote CQ data:
 *   agreed   cq_data_size 4, and the peer agreed: RDMA writes and empty
 *            sends carry it, a send with payload is refused;
 *   refused  cq_data_size 4, the peer did not agree (stock libfabric, a
 *            device without RFC 7306): every use refused with
 *            -FI_EOPNOTSUPP, and the connection goes on;
 *   none     cq_data_size 0 (stock libfabric on iWARP, or a device that
 *            fails the probe): nothing is tried.
 * The client writes 4 KiB with CQ data (agreed, refused), tries a send
 * with payload and CQ data (refused on iWARP either way), an empty send
 * with CQ data (agreed), then writes 4 KiB plainly and sends "done" with
 * what it did. The server checks the completions and its buffer against
 * that: what carried CQ data arrived with it, the rest arrived plainly,
 * nothing else arrived. The server's -e is its own side's view (a server
 * that did not agree sees no CQ data whatever its peer tries).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "tp_common.h"

#define REGION 4096		/* each write's octets */
#define MSG_LEN 64		/* a receive buffer */
#define NRECV 8
#define DATA_WRITE 0x51ca7aU	/* the CQ data of each use */
#define DATA_SEND 0x5e5eU
#define DATA_EMPTY 0xe0e0U

enum expect { EXPECT_AGREED, EXPECT_REFUSED, EXPECT_NONE };

struct fi {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_eq *eq;
	struct fid_domain *domain;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_mr *mr;
	void *desc;
	uint8_t *buf;	/* 2 regions, then NRECV receive buffers */
	int timeout_ms;
};

/* What the client did, in its "done" message: a bit each */
#define DID_WRITEDATA 1u
#define DID_EMPTY 2u

static enum expect expect = EXPECT_NONE;
static bool expect_set;

static void usage(FILE *f)
{
	fprintf(f, "usage: siwx-fi-cqdata -s|-c HOST [-p PORT] [-t SEC] [-v] -e agreed|refused|none\n");
}

static bool take_opt(int ch, const char *arg, void *ctx)
{
	(void)ctx;
	if (ch != 'e')
		return false;
	if (!strcmp(arg, "agreed"))
		expect = EXPECT_AGREED;
	else if (!strcmp(arg, "refused"))
		expect = EXPECT_REFUSED;
	else if (!strcmp(arg, "none"))
		expect = EXPECT_NONE;
	else
		return false;
	expect_set = true;
	return true;
}

static void check(int ret, const char *what)
{
	if (ret)
		tp_die("%s: %s (%d)", what, fi_strerror(-ret), ret);
}

static struct fi_info *hints_new(void)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		tp_die("fi_allocinfo failed");
	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG | FI_RMA;
	/* FI_RX_CQ_DATA: without it the provider reports cq_data_size 0.
	 * No FI_CONTEXT: a receive's context is its buffer. */
	h->mode = FI_RX_CQ_DATA;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				  FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	h->addr_format = FI_SOCKADDR_IN;
	h->fabric_attr->prov_name = strdup("verbs");
	return h;
}

/* Fabric, EQ; domain, CQ and MR once the info is known */
static void open_domain(struct fi *f)
{
	struct fi_cq_attr cq_attr = {
		.size = 64,
		.format = FI_CQ_FORMAT_DATA,
		.wait_obj = FI_WAIT_NONE,
	};
	size_t len = 2 * REGION + NRECV * MSG_LEN;

	check(fi_domain(f->fabric, f->info, &f->domain, NULL), "fi_domain");
	check(fi_cq_open(f->domain, &cq_attr, &f->cq, NULL), "fi_cq_open");
	f->buf = calloc(1, len);
	if (!f->buf)
		tp_die("out of memory");
	check(fi_mr_reg(f->domain, f->buf, len, FI_SEND | FI_RECV | FI_WRITE |
			FI_REMOTE_WRITE, 0, 0, 0, &f->mr, NULL), "fi_mr_reg");
	f->desc = fi_mr_desc(f->mr);
}

static void open_ep(struct fi *f, struct fi_info *info)
{
	check(fi_endpoint(f->domain, info, &f->ep, NULL), "fi_endpoint");
	check(fi_ep_bind(f->ep, &f->eq->fid, 0), "fi_ep_bind(eq)");
	check(fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV),
	      "fi_ep_bind(cq)");
	check(fi_enable(f->ep), "fi_enable");
}

/* One CM event of @want; its connection data into @data (up to @len) */
static void wait_event(struct fi *f, uint32_t want, void *data, size_t len)
{
	struct {
		struct fi_eq_cm_entry e;
		uint8_t data[256];
	} ev;
	struct fi_eq_err_entry err = { 0 };
	uint32_t event;
	ssize_t n;

	n = fi_eq_sread(f->eq, &event, &ev, sizeof(ev), f->timeout_ms, 0);
	if (n == -FI_EAVAIL) {
		fi_eq_readerr(f->eq, &err, 0);
		tp_die("connection event: error %s (provider %d)",
		       fi_strerror(err.err), err.prov_errno);
	}
	if (n < 0)
		tp_die("connection event: %s", fi_strerror((int)-n));
	if (event != want)
		tp_die("connection event %u, not %u", event, want);
	if (event == FI_CONNREQ)
		f->info = ev.e.info;
	if (data)
		tp_pdata_get(ev.data, (size_t)n - sizeof(ev.e), data,
			     len / sizeof(uint64_t));
}

/* The next completion, within the time limit; false on an error one */
static bool next_comp(struct fi *f, struct fi_cq_data_entry *c)
{
	uint64_t end = tp_now_ms() + (uint64_t)f->timeout_ms;
	struct fi_cq_err_entry err = { 0 };
	ssize_t n;

	do {
		n = fi_cq_read(f->cq, c, 1);
		if (n == 1)
			return true;
		if (n == -FI_EAVAIL) {
			fi_cq_readerr(f->cq, &err, 0);
			tp_fail("error completion: %s (provider %d)",
				fi_strerror(err.err), err.prov_errno);
			return false;
		}
		if (n != -FI_EAGAIN)
			tp_die("fi_cq_read: %s", fi_strerror((int)-n));
	} while (tp_now_ms() < end);
	tp_die("no completion within %d ms", f->timeout_ms);
}

/* @ret of a post that must succeed and complete; whether it went */
static bool posted(struct fi *f, ssize_t ret, const char *what)
{
	struct fi_cq_data_entry c;

	if (ret) {
		tp_fail("%s: %s (%zd), expected success", what,
			fi_strerror((int)-ret), ret);
		return false;
	}
	if (next_comp(f, &c))
		tp_log("%s: completed", what);
	return true;
}

/* @ret of a post that must be refused before it is posted */
static void refused(ssize_t ret, const char *what)
{
	if (ret == -FI_EOPNOTSUPP)
		tp_log("%s: refused (-FI_EOPNOTSUPP), as it must be", what);
	else
		tp_fail("%s: %s (%zd), expected -FI_EOPNOTSUPP", what,
			fi_strerror((int)-ret), ret);
}

static void check_cq_data_size(const struct fi *f)
{
	size_t n = f->info->domain_attr->cq_data_size;

	tp_log("%s, cq_data_size %zu", f->info->domain_attr->name, n);
	if ((expect == EXPECT_NONE) != (n == 0))
		tp_die("cq_data_size %zu does not fit -e %s", n,
		       expect == EXPECT_NONE ? "none" : "agreed/refused");
}

static void client(struct fi *f, const struct tp_role *r)
{
	struct fi_info *hints = hints_new();
	uint8_t *region, *msg;
	uint64_t peer[2], did = 0;
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	char port[8];
	ssize_t ret;

	snprintf(port, sizeof(port), "%u", r->port);
	check(fi_getinfo(FI_VERSION(1, 17), r->host, port, 0, hints, &f->info),
	      "fi_getinfo");
	check_cq_data_size(f);
	check(fi_fabric(f->info->fabric_attr, &f->fabric, NULL), "fi_fabric");
	check(fi_eq_open(f->fabric, &eq_attr, &f->eq, NULL), "fi_eq_open");
	open_domain(f);
	region = f->buf;
	msg = f->buf + 2 * REGION;
	open_ep(f, f->info);
	check(fi_connect(f->ep, f->info->dest_addr, NULL, 0), "fi_connect");
	wait_event(f, FI_CONNECTED, peer, sizeof(peer));
	tp_log("connected: the server's region at 0x%" PRIx64, peer[0]);

	tp_pat_fill(region, 2 * REGION, 1);
	if (expect != EXPECT_NONE) {
		ret = fi_writedata(f->ep, region, REGION, f->desc, DATA_WRITE,
				   0, peer[0], peer[1], NULL);
		if (expect == EXPECT_AGREED) {
			if (posted(f, ret, "write with CQ data"))
				did |= DID_WRITEDATA;
		} else {
			refused(ret, "write with CQ data");
		}
		ret = fi_senddata(f->ep, msg, MSG_LEN, f->desc, DATA_SEND, 0,
				  NULL);
		refused(ret, "send of 64 octets with CQ data");
		ret = fi_senddata(f->ep, msg, 0, f->desc, DATA_EMPTY, 0, NULL);
		if (expect == EXPECT_AGREED) {
			if (posted(f, ret, "empty send with CQ data"))
				did |= DID_EMPTY;
		} else {
			refused(ret, "empty send with CQ data");
		}
	}
	posted(f, fi_write(f->ep, region + REGION, REGION, f->desc, 0,
			   peer[0] + REGION, peer[1], NULL), "plain write");
	tp_pdata_put(msg, &did, 1);
	posted(f, fi_send(f->ep, msg, MSG_LEN, f->desc, 0, NULL), "done");
	fi_freeinfo(hints);
}

/* The server's completions: what the client said it did, nothing else */
static void server_check(struct fi *f)
{
	static const uint8_t zeros[REGION];
	static uint8_t want[2 * REGION];
	uint64_t seen = 0, did = ~0ull;
	struct fi_cq_data_entry c;

	while (did == ~0ull && next_comp(f, &c)) {
		bool data = c.flags & FI_REMOTE_CQ_DATA;

		if (data && c.data == DATA_WRITE && (c.flags & FI_RMA)) {
			seen |= DID_WRITEDATA;
			tp_log("write with CQ data 0x%" PRIx64, c.data);
		} else if (data && c.data == DATA_EMPTY && c.len == 0) {
			seen |= DID_EMPTY;
			tp_log("empty send with CQ data 0x%" PRIx64, c.data);
		} else if (!data && (c.flags & FI_RECV) && c.len == MSG_LEN) {
			tp_pdata_get(c.op_context, MSG_LEN, &did, 1);
		} else {
			tp_fail("unexpected completion: flags 0x%" PRIx64
				", len %zu, data 0x%" PRIx64,
				(uint64_t)c.flags, c.len, c.data);
		}
	}
	if (did == ~0ull)
		return;
	if (expect != EXPECT_AGREED && did)
		tp_fail("the client sent CQ data (0x%" PRIx64 ") this side did not agree to",
			did);
	if (expect == EXPECT_AGREED && did != (DID_WRITEDATA | DID_EMPTY))
		tp_fail("agreed, yet the client sent CQ data only as 0x%" PRIx64,
			did);
	if (seen != did)
		tp_fail("CQ data seen 0x%" PRIx64 ", the client sent 0x%" PRIx64,
			seen, did);
	/* Both regions as the client filled them (pattern 1), the first
	 * only if its write went */
	tp_pat_fill(want, sizeof(want), 1);
	if (memcmp(f->buf + REGION, want + REGION, REGION))
		tp_fail("the plain write's region differs");
	if ((did & DID_WRITEDATA) && memcmp(f->buf, want, REGION))
		tp_fail("the write with CQ data's region differs");
	if (!(did & DID_WRITEDATA) && memcmp(f->buf, zeros, REGION))
		tp_fail("the refused write's region was written");
	tp_log("server: %s", tp_failures ? "FAILED" : "all as expected");
}

static void server(struct fi *f, const struct tp_role *r)
{
	struct fi_info *hints = hints_new(), *pinfo;
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fid_pep *pep;
	uint64_t mine[2];
	uint8_t cm[16];
	char port[8];
	int i;

	snprintf(port, sizeof(port), "%u", r->port);
	check(fi_getinfo(FI_VERSION(1, 17), NULL, port, FI_SOURCE, hints,
			 &pinfo), "fi_getinfo");
	check(fi_fabric(pinfo->fabric_attr, &f->fabric, NULL), "fi_fabric");
	check(fi_eq_open(f->fabric, &eq_attr, &f->eq, NULL), "fi_eq_open");
	check(fi_passive_ep(f->fabric, pinfo, &pep, NULL), "fi_passive_ep");
	check(fi_pep_bind(pep, &f->eq->fid, 0), "fi_pep_bind");
	check(fi_listen(pep), "fi_listen");
	tp_log("listening on port %s", port);
	wait_event(f, FI_CONNREQ, NULL, 0);
	check_cq_data_size(f);
	open_domain(f);
	open_ep(f, f->info);
	for (i = 0; i < NRECV; i++) {
		uint8_t *b = f->buf + 2 * REGION + i * MSG_LEN;

		check((int)fi_recv(f->ep, b, MSG_LEN, f->desc, 0, b),
		      "fi_recv");
	}
	mine[0] = (uintptr_t)f->buf;
	mine[1] = fi_mr_key(f->mr);
	tp_pdata_put(cm, mine, 2);
	check(fi_accept(f->ep, cm, sizeof(cm)), "fi_accept");
	wait_event(f, FI_CONNECTED, NULL, 0);
	tp_log("connected");
	server_check(f);
	fi_close(&pep->fid);
	fi_freeinfo(pinfo);
	fi_freeinfo(hints);
}

int main(int argc, char **argv)
{
	struct tp_role r = { .port = 7471, .timeout_ms = 30000 };
	struct fi f = { 0 };

	tp_prog = "siwx-fi-cqdata";
	tp_role_parse_opts(argc, argv, &r, "e:", take_opt, NULL, usage);
	if (!expect_set) {
		usage(stderr);
		return 2;
	}
	f.timeout_ms = r.timeout_ms;
	if (r.server)
		server(&f, &r);
	else
		client(&f, &r);
	/* Children before their parents */
	struct fid *fids[] = {
		f.ep ? &f.ep->fid : NULL, f.mr ? &f.mr->fid : NULL,
		f.cq ? &f.cq->fid : NULL, f.domain ? &f.domain->fid : NULL,
		f.eq ? &f.eq->fid : NULL, f.fabric ? &f.fabric->fid : NULL,
	};
	for (size_t i = 0; i < sizeof(fids) / sizeof(fids[0]); i++)
		if (fids[i])
			fi_close(fids[i]);
	fi_freeinfo(f.info);
	free(f.buf);
	return tp_failures ? 1 : 0;
}
