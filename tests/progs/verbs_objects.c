// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Exercises siwx.ko's verbs object layer from user space, through
 * libibverbs and the siwx provider: device and port attributes, PD, MR
 * (STags), CQ, SRQ, RC QPs and their state machine, the refusals, and
 * the doorbell. Runs in a test guest (tests/vm/scenarios/siwx-device).
 *
 *   siwx-verbs-objects DEV       check, clean up, exit 0 if all passed
 *   siwx-verbs-objects DEV hold  create objects, print "holding", then
 *                                wait (the device is removed under it)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static int failures;

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (cond) {                                                \
			printf("ok: ");                                    \
		} else {                                                   \
			printf("FAIL: ");                                  \
			failures++;                                        \
		}                                                          \
		printf(__VA_ARGS__);                                       \
		printf("\n");                                              \
	} while (0)

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

static void check_attrs(struct ibv_context *ctx)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	static const unsigned char zero[6];

	CHECK(!ibv_query_device(ctx, &da), "query_device");
	CHECK(da.atomic_cap == IBV_ATOMIC_GLOB, "atomic_cap GLOB (%d)",
	      da.atomic_cap);
	CHECK(da.max_sge == 6, "max_sge 6 (%d)", da.max_sge);
	CHECK(da.max_qp_rd_atom == 16 && da.max_qp_init_rd_atom == 16,
	      "IRD/ORD 16 (%d/%d)", da.max_qp_rd_atom, da.max_qp_init_rd_atom);
	/* kernel/siwx.h: SIWX_VENDOR_ID, no IEEE OUI; no part ids */
	CHECK(da.vendor_id == 0x025358 && da.vendor_part_id == 0,
	      "vendor id 0x025358, part id 0 (%#x, %#x)", da.vendor_id,
	      da.vendor_part_id);
	CHECK(ctx->device->transport_type == IBV_TRANSPORT_IWARP,
	      "transport iWARP");
	CHECK(!ibv_query_port(ctx, 1, &pa), "query_port");
	CHECK(pa.state == IBV_PORT_ACTIVE, "port active (%d)", pa.state);
	CHECK(pa.gid_tbl_len == 1, "gid_tbl_len 1");
	CHECK(!ibv_query_gid(ctx, 1, 0, &gid) && memcmp(gid.raw, zero, 6),
	      "gid 0 carries the MAC");
}

static void check_mr(struct ibv_pd *pd)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ;
	char *buf = malloc(1 << 20);
	struct ibv_mr *a, *b;

	a = ibv_reg_mr(pd, buf + 100, (1 << 20) - 100, acc);
	b = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(a && b, "reg_mr x2");
	if (a && b) {
		CHECK(a->lkey == a->rkey && a->lkey, "lkey == rkey != 0 (%x)",
		      a->lkey);
		CHECK(a->lkey != b->lkey && (a->lkey >> 8) != (b->lkey >> 8),
		      "distinct STag indices (%x, %x)", a->lkey, b->lkey);
	}
	if (a)
		CHECK(!ibv_dereg_mr(a), "dereg_mr");
	if (b)
		CHECK(!ibv_dereg_mr(b), "dereg_mr");
	free(buf);
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      struct ibv_srq *srq, enum ibv_qp_type type,
			      int wr, int sge, int inl)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.qp_type = type,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr,
			 .max_send_sge = sge, .max_recv_sge = sge,
			 .max_inline_data = inl },
	};

	return ibv_create_qp(pd, &a);
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state s, int extra)
{
	struct ibv_qp_attr a = {
		.qp_state = s,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
		.port_num = 1,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | extra);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &i))
		return -1;
	return a.qp_state;
}

/*
 * Remote Flush rights (IBV_ACCESS_FLUSH_GLOBAL and _PERSISTENT, bits 8 and
 * 9; not in Debian 12's verbs.h) are accepted and dropped: iWARP has no
 * Flush. rdma-core 56.1's tests (test_qpex.py) grant them to RC QPs.
 */
static void check_qp_flush_rights(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | 1 << 8 | 1 << 9,
	};
	struct ibv_qp_init_attr i;

	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS),
	      "INIT -> INIT with Flush rights");
	memset(&a, 0, sizeof(a));
	CHECK(!ibv_query_qp(qp, &a, IBV_QP_ACCESS_FLAGS, &i) &&
		      a.qp_access_flags == (IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ),
	      "Flush rights dropped (%#x)", a.qp_access_flags);
}

static void check_qp(struct ibv_pd *pd, struct ibv_cq *cq,
		     struct ibv_srq *srq)
{
	struct ibv_qp *qp, *bad;
	char msg[16] = "doorbell";
	struct ibv_sge sge = { .addr = (uintptr_t)msg, .length = 8 };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED,
	}, *bad_wr;

	qp = make_qp(pd, cq, NULL, IBV_QPT_RC, 60, 6, 64);
	CHECK(qp, "create RC QP");
	if (!qp)
		return;
	/* iWARP's one initial state (Idle) reads as INIT, as on siw */
	CHECK(qp_state(qp) == IBV_QPS_INIT, "new QP in INIT");
	CHECK(to_state(qp, IBV_QPS_RTS, 0), "INIT -> RTS refused");
	CHECK(!to_state(qp, IBV_QPS_RESET, 0), "INIT -> RESET");
	CHECK(qp_state(qp) == IBV_QPS_RESET, "query_qp says RESET");
	CHECK(to_state(qp, IBV_QPS_RTS, 0), "RESET -> RTS refused");
	CHECK(!to_state(qp, IBV_QPS_INIT, IBV_QP_ACCESS_FLAGS |
			IBV_QP_PORT | IBV_QP_PKEY_INDEX), "RESET -> INIT");
	check_qp_flush_rights(qp);
	CHECK(!to_state(qp, IBV_QPS_RTR, 0), "INIT -> RTR");
	/* Only the connection manager moves an iWARP QP to RTS */
	CHECK(to_state(qp, IBV_QPS_RTS, 0), "RTR -> RTS refused (no connection)");
	CHECK(qp_state(qp) == IBV_QPS_RTR, "query_qp says RTR");
	CHECK(to_state(qp, IBV_QPS_INIT, 0), "RTR -> INIT refused");
	CHECK(!ibv_post_send(qp, &wr, &bad_wr), "post_send + doorbell");
	CHECK(!to_state(qp, IBV_QPS_ERR, 0), "RTR -> ERROR");
	{
		/* ERROR flushes what was posted: one flush-error CQE */
		struct ibv_wc wc;
		int n = 0, tries = 0;

		while (n == 0 && tries++ < 1000) {
			n = ibv_poll_cq(cq, 1, &wc);
			if (!n)
				usleep(1000);
		}
		CHECK(n == 1 && wc.wr_id == 1 &&
		      wc.status == IBV_WC_WR_FLUSH_ERR,
		      "posted send flushed on ERROR");
	}
	/*
	 * librdmacm's rdma_disconnect() asks an iWARP QP for SQD even when
	 * the peer's close has put it in ERROR already: that succeeds and
	 * changes nothing; other ways out of ERROR but RESET are refused.
	 */
	CHECK(!to_state(qp, IBV_QPS_SQD, 0), "ERROR -> SQD (disconnect) accepted");
	CHECK(qp_state(qp) == IBV_QPS_ERR, "query_qp still says ERROR");
	CHECK(to_state(qp, IBV_QPS_INIT, 0), "ERROR -> INIT refused");
	CHECK(to_state(qp, IBV_QPS_RTS, 0), "ERROR -> RTS refused");
	CHECK(!ibv_destroy_qp(qp), "destroy QP");

	qp = make_qp(pd, cq, srq, IBV_QPT_RC, 16, 2, 0);
	CHECK(qp, "create RC QP on the SRQ");
	if (qp)
		CHECK(!ibv_destroy_qp(qp), "destroy QP on the SRQ");

	bad = make_qp(pd, cq, NULL, IBV_QPT_UD, 16, 1, 0);
	CHECK(!bad, "UD QP refused");
	bad = bad ? bad : make_qp(pd, cq, NULL, IBV_QPT_RC, 100000, 1, 0);
	CHECK(!bad, "max_send_wr above max_qp_wr refused");
	bad = bad ? bad : make_qp(pd, cq, NULL, IBV_QPT_RC, 16, 7, 0);
	CHECK(!bad, "7 SGEs refused");
	bad = bad ? bad : make_qp(pd, cq, NULL, IBV_QPT_RC, 16, 1, 200);
	CHECK(!bad, "200 bytes inline refused");
	if (bad)
		ibv_destroy_qp(bad);
}

static struct ibv_srq *check_srq(struct ibv_pd *pd)
{
	struct ibv_srq_init_attr ia = { .attr = { .max_wr = 100,
						  .max_sge = 2 } };
	struct ibv_srq_attr a;
	struct ibv_srq *srq = ibv_create_srq(pd, &ia);

	CHECK(srq, "create SRQ");
	if (!srq)
		return NULL;
	CHECK(!ibv_query_srq(srq, &a) && a.max_wr >= 100, "query SRQ (%u)",
	      a.max_wr);
	a.srq_limit = 10;
	CHECK(!ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), "arm SRQ limit");
	CHECK(!ibv_query_srq(srq, &a) && a.srq_limit == 10, "limit is 10");
	a.max_wr = 1000;
	CHECK(ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR), "SRQ resize refused");
	return srq;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_wc wc;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DEV [hold]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ctx = open_dev(argv[1]);
	CHECK(ctx, "open %s", argv[1]);
	if (!ctx)
		return 1;
	check_attrs(ctx);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd");
	cq = ibv_create_cq(ctx, 100, NULL, NULL, 0);
	CHECK(cq && cq->cqe >= 100, "create CQ of 100 (%d)", cq ? cq->cqe : 0);
	if (!pd || !cq)
		return 1;
	CHECK(ibv_poll_cq(cq, 1, &wc) == 0, "empty CQ polls nothing");
	CHECK(!ibv_req_notify_cq(cq, 0), "arm CQ");
	check_mr(pd);
	srq = check_srq(pd);

	if (argc > 2 && !strcmp(argv[2], "hold")) {
		char *buf = malloc(65536);
		struct ibv_mr *mr = ibv_reg_mr(pd, buf, 65536,
					       IBV_ACCESS_LOCAL_WRITE);
		struct ibv_qp *qp = make_qp(pd, cq, NULL, IBV_QPT_RC, 16, 1,
					    0);

		CHECK(mr && qp && !to_state(qp, IBV_QPS_INIT,
					    IBV_QP_ACCESS_FLAGS),
		      "objects to hold");
		printf("holding\n");
		for (;;)
			pause();
	}

	check_qp(pd, cq, srq);
	if (srq)
		CHECK(!ibv_destroy_srq(srq), "destroy SRQ");
	CHECK(!ibv_destroy_cq(cq), "destroy CQ");
	CHECK(!ibv_dealloc_pd(pd), "dealloc_pd");
	CHECK(!ibv_close_device(ctx), "close");
	printf("%s: %d failures\n", argv[0], failures);
	return failures ? 1 : 0;
}
