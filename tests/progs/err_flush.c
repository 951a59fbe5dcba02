// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-err-flush: work requests posted to a QP in ERROR complete with
 * IBV_WC_WR_FLUSH_ERR (verbs: a QP in the Error state flushes what it
 * holds and what is posted to it), through both rings' doorbells: the
 * SQ's (a Send) and the RQ's (a receive, which a kernel-bypass provider
 * must make the kernel see; abi.h "rq_doorbell").
 *
 * No peer: a QP of the first device, taken RESET -> INIT -> ERROR. One
 * receive is posted before the transition (flushed by the transition
 * itself), then a receive and a Send after it, in several rounds, each
 * flushed within the time limit. Exit 0 when every WR came back once,
 * in order, with the flush status; 1 otherwise.
 *
 *   siwx-err-flush [-d DEV] [-n ROUNDS]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_common.h"

#define ERR_FLUSH_WAIT_MS 2000

struct ef_ctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char buf[64];
};

static void ef_open(struct ef_ctx *c, const char *name)
{
	struct ibv_qp_init_attr qa = {};
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list || !n)
		tp_die("no RDMA device");
	for (i = 0; i < n; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			break;
	if (i == n)
		tp_die("no device %s", name);
	c->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!c->ctx)
		tp_die("ibv_open_device failed");
	c->pd = ibv_alloc_pd(c->ctx);
	c->cq = c->pd ? ibv_create_cq(c->ctx, 64, NULL, NULL, 0) : NULL;
	c->mr = c->cq ? ibv_reg_mr(c->pd, c->buf, sizeof(c->buf),
				   IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!c->mr)
		tp_die("PD/CQ/MR setup failed");
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	c->qp = ibv_create_qp(c->pd, &qa);
	if (!c->qp)
		tp_die("ibv_create_qp failed");
}

static void ef_modify(struct ef_ctx *c, enum ibv_qp_state st)
{
	struct ibv_qp_attr a = { .qp_state = st };
	int mask = IBV_QP_STATE;

	if (st == IBV_QPS_INIT) {
		a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
		a.port_num = 1;
		mask |= IBV_QP_ACCESS_FLAGS | IBV_QP_PORT | IBV_QP_PKEY_INDEX;
	}
	if (ibv_modify_qp(c->qp, &a, mask))
		tp_die("modify_qp to %s failed", tp_qp_state_name(st));
}

static void ef_post_recv(struct ef_ctx *c, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->buf,
		.length = sizeof(c->buf),
		.lkey = c->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(c->qp, &wr, &bad))
		tp_fail("post_recv %llu refused", (unsigned long long)id);
}

static void ef_post_send(struct ef_ctx *c, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->buf,
		.length = 8,
		.lkey = c->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	if (ibv_post_send(c->qp, &wr, &bad))
		tp_fail("post_send %llu refused", (unsigned long long)id);
}

/* The next completion must be @id's flush, within the time limit. */
static void ef_expect_flush(struct ef_ctx *c, uint64_t id, const char *what)
{
	uint64_t end = tp_now_ms() + ERR_FLUSH_WAIT_MS;
	struct ibv_wc wc;
	int n;

	do {
		n = ibv_poll_cq(c->cq, 1, &wc);
	} while (n == 0 && tp_now_ms() < end);
	if (n < 0)
		tp_die("poll_cq failed");
	if (n == 0) {
		tp_fail("%s %llu: no completion within %d ms", what,
			(unsigned long long)id, ERR_FLUSH_WAIT_MS);
		return;
	}
	if (wc.wr_id != id || wc.status != IBV_WC_WR_FLUSH_ERR)
		tp_fail("%s %llu: got wr_id %llu status %s", what,
			(unsigned long long)id, (unsigned long long)wc.wr_id,
			tp_wc_status_name(wc.status));
	else
		tp_vlog("%s %llu flushed", what, (unsigned long long)id);
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	struct ef_ctx c = {};
	uint64_t rounds = 5, i, id = 1;
	struct ibv_wc wc;
	int opt;

	tp_prog = "siwx-err-flush";
	while ((opt = getopt(argc, argv, "d:n:v")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'n':
			rounds = tp_parse_u64(optarg, "-n", 1, 1000);
			break;
		case 'v':
			tp_verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-n ROUNDS] [-v]\n",
				tp_prog);
			return 2;
		}
	}
	ef_open(&c, dev);
	ef_modify(&c, IBV_QPS_INIT);
	ef_post_recv(&c, id);
	ef_modify(&c, IBV_QPS_ERR);
	ef_expect_flush(&c, id++, "receive posted before ERROR");
	for (i = 0; i < rounds; i++) {
		ef_post_recv(&c, id);
		ef_expect_flush(&c, id++, "receive posted in ERROR");
		ef_post_send(&c, id);
		ef_expect_flush(&c, id++, "send posted in ERROR");
	}
	if (ibv_poll_cq(c.cq, 1, &wc) != 0)
		tp_fail("a completion beyond the posted WRs");
	ibv_destroy_qp(c.qp);
	ibv_dereg_mr(c.mr);
	ibv_destroy_cq(c.cq);
	ibv_dealloc_pd(c.pd);
	ibv_close_device(c.ctx);
	if (tp_failures)
		return 1;
	tp_log("%llu WRs posted to a QP in ERROR, every one flushed",
	       (unsigned long long)(id - 1));
	return 0;
}
