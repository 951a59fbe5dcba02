// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Test-only module for siwx-verbs-ex: ib_resize_cq() as a kernel ULP
 * calls it, on a siwx device. Loading it runs the checks and fails
 * (-EIO, the reasons in the kernel log) when one does not hold; it is
 * built at test time against the guests' headers and never shipped.
 *
 * Completions come without a peer: receives posted to a QP in ERROR
 * complete at once with a flush error (verbs' rule), in order, into the
 * CQ. The checks:
 *   held      a resize below the completions held fails (EINVAL) and
 *             changes nothing; growing and shrinking above them keeps
 *             them, in order; sizes 0 and past max_cqe fail;
 *   armed     a CQ armed before a resize raises its event for the next
 *             completion after it;
 *   race      a kthread resizes the CQ without pause while batches of
 *             receives complete and are polled: each wr_id exactly once,
 *             in order.
 * ib_resize_cq() exists up to the 6.x kernels (7.x resizes user CQs
 * only); the scenario builds this module only where it does.
 */
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <rdma/ib_verbs.h>

/* Receives per batch at most, and the least size the CQ is given */
#define KR_RQ 64
#define KR_RACE_BATCHES 2000

static char *device = "siwx0";
module_param(device, charp, 0444);
MODULE_PARM_DESC(device, "the RDMA device to test (default siwx0)");

struct kr {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u64 next_post;		/* wr_id of the next receive */
	u64 next_poll;		/* wr_id the next completion must carry */
	atomic_t events;
	atomic_t resizes;
	int resize_error;	/* the resizer's first unexpected result */
	int failures;
};

#define kr_fail(k, fmt, ...)						\
	do {								\
		pr_err("siwx_vm_cq_resize: FAIL: " fmt "\n", ##__VA_ARGS__); \
		(k)->failures++;					\
	} while (0)

static void kr_comp(struct ib_cq *cq, void *ctx)
{
	struct kr *k = ctx;

	atomic_inc(&k->events);
}

/* @n receives, each completed at once (the QP is in ERROR) */
static int kr_post(struct kr *k, unsigned int n)
{
	struct ib_recv_wr wr = {};
	const struct ib_recv_wr *bad;
	int rv;

	while (n--) {
		wr.wr_id = k->next_post++;
		rv = ib_post_recv(k->qp, &wr, &bad);
		if (rv) {
			kr_fail(k, "ib_post_recv: %d", rv);
			return rv;
		}
	}
	return 0;
}

/* Exactly @n completions, the next wr_ids in order, then none */
static void kr_poll(struct kr *k, unsigned int n, const char *when)
{
	struct ib_wc wc[16];
	unsigned int got = 0;
	int i, r;

	while (got < n) {
		r = ib_poll_cq(k->cq, ARRAY_SIZE(wc), wc);
		if (r <= 0)
			break;
		for (i = 0; i < r; i++, got++) {
			if (wc[i].wr_id != k->next_poll ||
			    wc[i].status != IB_WC_WR_FLUSH_ERR) {
				kr_fail(k, "%s: got %llu (status %d), not %llu",
					when, wc[i].wr_id, wc[i].status,
					k->next_poll);
				return;
			}
			k->next_poll++;
		}
	}
	if (got != n)
		kr_fail(k, "%s: %u completions of %u", when, got, n);
	else if (ib_poll_cq(k->cq, 1, wc))
		kr_fail(k, "%s: a completion more than posted", when);
}

static void kr_resize(struct kr *k, int cqe, int want, const char *what)
{
	int rv = ib_resize_cq(k->cq, cqe);

	if (rv != want)
		kr_fail(k, "%s: ib_resize_cq(%d) returned %d, expected %d",
			what, cqe, rv, want);
	else if (!rv && k->cq->cqe < cqe)
		kr_fail(k, "%s: ib_resize_cq(%d) left %d entries", what, cqe,
			k->cq->cqe);
}

static void kr_held(struct kr *k)
{
	kr_post(k, 10);
	kr_resize(k, 4, -EINVAL, "below the 10 held");
	kr_resize(k, 256, 0, "growing with 10 held");
	kr_resize(k, 16, 0, "shrinking to 16 with 10 held");
	kr_resize(k, 0, -EINVAL, "size 0");
	kr_resize(k, k->dev->attrs.max_cqe + 1, -EINVAL, "past max_cqe");
	kr_poll(k, 10, "held across resizes");
	kr_resize(k, KR_RQ, 0, "back to the least size");
}

static void kr_armed(struct kr *k)
{
	int before;

	ib_req_notify_cq(k->cq, IB_CQ_NEXT_COMP);
	kr_resize(k, 1024, 0, "armed");
	before = atomic_read(&k->events);
	kr_post(k, 1);
	/* The flush completes it in this call; its event comes with it */
	if (atomic_read(&k->events) != before + 1)
		kr_fail(k, "armed: %d events for the completion after a resize",
			atomic_read(&k->events) - before);
	kr_poll(k, 1, "armed");
}

static int kr_resizer(void *arg)
{
	struct kr *k = arg;
	int rv;

	while (!kthread_should_stop()) {
		rv = ib_resize_cq(k->cq, KR_RQ + get_random_u32() % 4000);
		if (rv && !k->resize_error)
			k->resize_error = rv;
		atomic_inc(&k->resizes);
		cond_resched();
	}
	return 0;
}

static void kr_race(struct kr *k)
{
	struct task_struct *t;
	unsigned int i;

	t = kthread_run(kr_resizer, k, "siwx_vm_cq_resize");
	if (IS_ERR(t)) {
		kr_fail(k, "kthread_run: %ld", PTR_ERR(t));
		return;
	}
	for (i = 0; i < KR_RACE_BATCHES && !k->failures; i++) {
		if (kr_post(k, 1 + get_random_u32() % KR_RQ))
			break;
		kr_poll(k, k->next_post - k->next_poll, "race");
		cond_resched();
	}
	kthread_stop(t);
	if (k->resize_error)
		kr_fail(k, "race: a resize to at least %d entries returned %d",
			KR_RQ, k->resize_error);
	pr_info("siwx_vm_cq_resize: race: %llu completions in order under %d resizes\n",
		k->next_poll, atomic_read(&k->resizes));
}

static int kr_setup(struct kr *k)
{
	struct ib_cq_init_attr ca = { .cqe = KR_RQ };
	struct ib_qp_init_attr qa = {
		.cap = { .max_send_wr = 1, .max_recv_wr = KR_RQ,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };

	k->dev = ib_device_get_by_name(device, RDMA_DRIVER_UNKNOWN);
	if (!k->dev) {
		pr_err("siwx_vm_cq_resize: no RDMA device '%s'\n", device);
		return -ENODEV;
	}
	k->pd = ib_alloc_pd(k->dev, 0);
	if (IS_ERR(k->pd))
		return PTR_ERR(k->pd);
	k->cq = ib_create_cq(k->dev, kr_comp, NULL, k, &ca);
	if (IS_ERR(k->cq))
		return PTR_ERR(k->cq);
	qa.send_cq = k->cq;
	qa.recv_cq = k->cq;
	k->qp = ib_create_qp(k->pd, &qa);
	if (IS_ERR(k->qp))
		return PTR_ERR(k->qp);
	return ib_modify_qp(k->qp, &err, IB_QP_STATE);
}

static void kr_teardown(struct kr *k)
{
	if (!IS_ERR_OR_NULL(k->qp))
		ib_destroy_qp(k->qp);
	if (!IS_ERR_OR_NULL(k->cq))
		ib_destroy_cq(k->cq);
	if (!IS_ERR_OR_NULL(k->pd))
		ib_dealloc_pd(k->pd);
	if (k->dev)
		ib_device_put(k->dev);
}

static int __init siwx_vm_cq_resize_init(void)
{
	struct kr *k = kzalloc(sizeof(*k), GFP_KERNEL);
	int rv;

	if (!k)
		return -ENOMEM;
	rv = kr_setup(k);
	if (rv) {
		pr_err("siwx_vm_cq_resize: setup on %s failed: %d\n", device,
		       rv);
	} else {
		kr_held(k);
		kr_armed(k);
		if (!k->failures)
			kr_race(k);
		rv = k->failures ? -EIO : 0;
		if (!rv)
			pr_info("siwx_vm_cq_resize: PASS on %s\n", device);
	}
	kr_teardown(k);
	kfree(k);
	return rv;
}

static void __exit siwx_vm_cq_resize_exit(void)
{
}

module_init(siwx_vm_cq_resize_init);
module_exit(siwx_vm_cq_resize_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("siwx test: ib_resize_cq of a kernel ULP's CQ");
