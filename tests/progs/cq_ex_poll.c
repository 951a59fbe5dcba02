// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-cq-ex's extended CQ reading, common to both sides: the host clock
 * stamps taken around posting and polling, one start/next/end_poll batch
 * read field by field, and the completion timestamps checked against
 * those stamps.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "cq_ex.h"

uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Monotonic first, then real: taken before an event, both precede the
 * kernel's readings of it; taken after, both follow them.
 */
void stamp_now(struct stamp *s)
{
	s->mono = clock_ns(CLOCK_MONOTONIC);
	s->real = clock_ns(CLOCK_REALTIME);
}

/* Extended CQ polling. */

/* The current completion: only the fields the CQ was made with. */
static void xwc_read(struct ctx *x, struct xwc *w)
{
	struct ibv_cq_ex *cq = x->cqx;
	uint64_t fl = x->cqx_flags;

	stamp_now(&w->polled);
	w->wr_id = cq->wr_id;
	w->status = cq->status;
	w->opcode = ibv_wc_read_opcode(cq);
	w->vendor_err = ibv_wc_read_vendor_err(cq);
	w->wc_flags = ibv_wc_read_wc_flags(cq);
	if (fl & IBV_WC_EX_WITH_BYTE_LEN)
		w->byte_len = ibv_wc_read_byte_len(cq);
	if (fl & IBV_WC_EX_WITH_IMM) {
		w->imm_data = ibv_wc_read_imm_data(cq);
		x->dv.read_imm8(cq, w->imm8);
	}
	if (fl & IBV_WC_EX_WITH_QP_NUM)
		w->qp_num = ibv_wc_read_qp_num(cq);
	if (fl & IBV_WC_EX_WITH_SRC_QP)
		w->src_qp = ibv_wc_read_src_qp(cq);
	if (fl & IBV_WC_EX_WITH_SLID)
		w->slid = ibv_wc_read_slid(cq);
	if (fl & IBV_WC_EX_WITH_SL)
		w->sl = ibv_wc_read_sl(cq);
	if (fl & IBV_WC_EX_WITH_DLID_PATH_BITS)
		w->dlid_path_bits = ibv_wc_read_dlid_path_bits(cq);
	if (fl & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		w->ts = ibv_wc_read_completion_ts(cq);
	if (fl & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		w->wall = ibv_wc_read_completion_wallclock_ns(cq);
}

/*
 * Every completion the CQ holds now (at most @max) into @w, in one
 * start/next/end_poll batch; the checks come after ibv_end_poll, so the
 * batch holds the CQ no longer than reading takes. Count, or -1.
 */
int xcq_drain(struct ctx *x, struct xwc *w, int max)
{
	struct ibv_poll_cq_attr pa = {};
	int n = 0, r;

	r = ibv_start_poll(x->cqx, &pa);
	if (r == ENOENT)
		return 0;
	if (r) {
		tp_fail("ibv_start_poll: %d (%s)", r, strerror(r));
		return -1;
	}
	for (;;) {
		memset(&w[n], 0, sizeof(w[n]));
		xwc_read(x, &w[n++]);
		if (n == max)
			break;
		r = ibv_next_poll(x->cqx);
		if (r)
			break;
	}
	/* After an error of next_poll too: it ends the batch. */
	ibv_end_poll(x->cqx);
	if (r && r != ENOENT) {
		tp_fail("ibv_next_poll: %d (%s)", r, strerror(r));
		return -1;
	}
	x->batches++;
	return n;
}

/*
 * The timestamps of @w: not before @posted, not after the poll that read
 * it, not before the previous completion of this CQ. No slack: the kernel
 * stamps the CQE between the two readings (see stamp_now()), with the
 * same clocks; CLOCK_REALTIME must not be stepped meanwhile (the guests
 * run no time service).
 */
void check_ts(struct ctx *x, const struct xwc *w,
	      const struct stamp *posted, const char *what)
{
	struct ts_track *t = &x->tt;

	if (w->ts < posted->mono)
		tp_fail("%s: completion timestamp %" PRIu64 " is %" PRIu64
			" ns before the WR was posted (CLOCK_MONOTONIC %"
			PRIu64 ")", what, w->ts, posted->mono - w->ts,
			posted->mono);
	if (w->ts > w->polled.mono)
		tp_fail("%s: completion timestamp %" PRIu64 " is %" PRIu64
			" ns after the completion was polled (CLOCK_MONOTONIC"
			" %" PRIu64 ")", what, w->ts, w->ts - w->polled.mono,
			w->polled.mono);
	if (t->any && w->ts < t->ts)
		tp_fail("%s: completion timestamp %" PRIu64 " is %" PRIu64
			" ns before the previous completion's", what, w->ts,
			t->ts - w->ts);
	if (w->wall < posted->real)
		tp_fail("%s: wall-clock timestamp %" PRIu64 " is %" PRIu64
			" ns before the WR was posted (CLOCK_REALTIME %" PRIu64
			")", what, w->wall, posted->real - w->wall,
			posted->real);
	if (w->wall > w->polled.real)
		tp_fail("%s: wall-clock timestamp %" PRIu64 " is %" PRIu64
			" ns after the completion was polled (CLOCK_REALTIME %"
			PRIu64 ")", what, w->wall, w->wall - w->polled.real,
			w->polled.real);
	if (t->any && w->wall < t->wall)
		tp_fail("%s: wall-clock timestamp %" PRIu64 " is %" PRIu64
			" ns before the previous completion's", what, w->wall,
			t->wall - w->wall);
	t->any = true;
	t->ts = w->ts;
	t->wall = w->wall;
}
