// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-cq-ex's device checks, before any connection carries data: the
 * provider's direct verbs resolved from the loaded libsiwx (or 77: not a
 * siwx device), phase "device" (what ibv_create_cq_ex accepts and
 * refuses, no CQ left behind) and phase "clock" (the device clock of the
 * completion timestamps).
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cq_ex.h"

/* The direct verbs. */

/*
 * libibverbs has loaded the provider, named for the private ABI of this
 * libibverbs (libsiwx-rdmav<N>.so): take that very copy. The programs are
 * built where libsiwx is not installed, so they cannot link with it.
 * False (after a message) when the device is not a siwx device.
 */
bool dv_open(struct ctx *x)
{
	const char *lib = getenv("SIWXDV_LIB");
	const char *loaded = NULL;
	void *h;

	if (!lib) {
		loaded = tp_loaded_siwx_provider();
		if (!loaded) {
			tp_log("libibverbs has loaded no libsiwx-rdmav*.so: "
			       "the device is not a siwx device");
			return false;
		}
		lib = loaded;
	}
	h = dlopen(lib, RTLD_NOW);
	if (!h)
		tp_die("dlopen(%s): %s", lib, dlerror());
	x->dv.sup = (dv_sup_t)dlsym(h, "siwxdv_is_supported");
	x->dv.write_imm8 = (dv_write_imm8_t)dlsym(h,
						  "siwxdv_wr_rdma_write_imm8");
	if (!x->dv.sup || !x->dv.write_imm8)
		tp_die("libsiwx lacks the siwxdv symbols: %s", dlerror());
	/* The version is part of the contract: SIWX_1.1 added it. */
	x->dv.read_imm8 = (dv_read_imm8_t)dlvsym(h, "siwxdv_wc_read_imm8",
						 "SIWX_1.1");
	if (!x->dv.read_imm8)
		tp_die("%s lacks siwxdv_wc_read_imm8@SIWX_1.1%s", lib,
		       dlsym(h, "siwxdv_wc_read_imm8") ?
		       " (exported, but not in version SIWX_1.1)" : "");
	if (!x->dv.sup(x->c.id->verbs->device)) {
		tp_log("%s is not a siwx device",
		       ibv_get_device_name(x->c.id->verbs->device));
		return false;
	}
	return true;
}

/* Phase "device": what ibv_create_cq_ex accepts and refuses. */

/*
 * This process's CQs on the device as the kernel's resource tracking
 * lists them (iproute2's rdma tool, in every guest); -1 when it cannot.
 * Only ours count: nothing else of this process makes CQs meanwhile, and
 * another process's (a peer on the same machine) must not disturb it.
 */
static long count_cqs(struct ibv_context *ctx)
{
	const char *dev = ibv_get_device_name(ctx->device);
	char line[1024], me[32];
	long n = 0;
	FILE *f;

	snprintf(me, sizeof(me), "%ld", (long)getpid());
	f = popen("PATH=$PATH:/usr/sbin:/sbin rdma resource show cq "
		  "2>/dev/null", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		bool on_dev = false, mine = false;
		char *save, *tok, *prev = NULL;

		for (tok = strtok_r(line, " \t\n", &save); tok;
		     prev = tok, tok = strtok_r(NULL, " \t\n", &save)) {
			if (prev && !strcmp(prev, "dev") && !strcmp(tok, dev))
				on_dev = true;
			if (prev && !strcmp(prev, "pid") && !strcmp(tok, me))
				mine = true;
		}
		n += on_dev && mine;
	}
	if (pclose(f))
		return -1;
	return n;
}

struct ibv_cq_ex *create_cq_ex(struct ibv_context *ctx, uint32_t cqe,
			       uint64_t wc_flags, uint32_t comp_mask,
			       uint32_t flags, struct ibv_pd *pd)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = cqe,
		.wc_flags = wc_flags,
		.comp_mask = comp_mask,
		.flags = flags,
		.parent_domain = pd,
	};

	return ibv_create_cq_ex(ctx, &a);
}

static const struct refusal {
	const char *what;
	uint64_t wc_flags;
	uint32_t comp_mask;
	uint32_t flags;
	bool pd;
} refusals[] = {
	{ "wc_flags IBV_WC_EX_WITH_CVLAN",
	  WC_ACCEPTED | IBV_WC_EX_WITH_CVLAN, 0, 0, false },
	{ "wc_flags IBV_WC_EX_WITH_FLOW_TAG",
	  WC_ACCEPTED | IBV_WC_EX_WITH_FLOW_TAG, 0, 0, false },
	{ "wc_flags IBV_WC_EX_WITH_TM_INFO",
	  WC_ACCEPTED | IBV_WC_EX_WITH_TM_INFO, 0, 0, false },
	{ "flags IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN", WC_ACCEPTED,
	  IBV_CQ_INIT_ATTR_MASK_FLAGS, IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN,
	  false },
	/*
	 * siwx makes no parent domains, so an ordinary PD stands in: the
	 * mask alone must be refused.
	 */
	{ "comp_mask IBV_CQ_INIT_ATTR_MASK_PD (a parent domain)", WC_ACCEPTED,
	  IBV_CQ_INIT_ATTR_MASK_PD, 0, true },
};

#define NREFUSALS (sizeof(refusals) / sizeof(refusals[0]))

void phase_device(struct ctx *x, const char *who)
{
	struct ibv_context *ctx = x->c.id->verbs;
	unsigned long before = tp_failures;
	struct ibv_poll_cq_attr pa = {};
	struct ibv_cq_ex *cq;
	long base, n;
	size_t i;
	int r;

	base = count_cqs(ctx);
	cq = create_cq_ex(ctx, 16, WC_ACCEPTED, IBV_CQ_INIT_ATTR_MASK_FLAGS,
			  IBV_CREATE_CQ_ATTR_SINGLE_THREADED, NULL);
	if (!cq) {
		tp_fail("%s: ibv_create_cq_ex(IBV_WC_STANDARD_FLAGS | both "
			"completion timestamps, SINGLE_THREADED) refused: %s",
			who, strerror(errno));
	} else {
		n = count_cqs(ctx);
		if (base < 0 || n != base + 1)
			tp_fail("%s: `rdma resource show cq` lists %ld CQs of "
				"this process with an extended CQ alive, %ld "
				"without (-1: cannot run it): cannot tell a "
				"leaked CQ", who, n, base);
		if (ibv_cq_ex_to_cq(cq)->cqe < 16)
			tp_fail("%s: extended CQ of %d entries, asked for 16",
				who, ibv_cq_ex_to_cq(cq)->cqe);
		r = ibv_start_poll(cq, &pa);
		if (r != ENOENT) {
			tp_fail("%s: ibv_start_poll on a new extended CQ "
				"returned %d, expected ENOENT", who, r);
			if (!r)
				ibv_end_poll(cq);
		}
		r = ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
		if (r)
			tp_fail("%s: ibv_destroy_cq of an extended CQ: %s", who,
				strerror(r));
	}
	for (i = 0; i < NREFUSALS; i++) {
		const struct refusal *f = &refusals[i];

		errno = 0;
		cq = create_cq_ex(ctx, 16, f->wc_flags, f->comp_mask, f->flags,
				  f->pd ? x->pd : NULL);
		if (cq) {
			tp_fail("%s: ibv_create_cq_ex accepted %s", who,
				f->what);
			ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
		} else if (errno != EOPNOTSUPP) {
			tp_fail("%s: ibv_create_cq_ex refused %s with errno %d"
				" (%s), expected EOPNOTSUPP", who, f->what,
				errno, strerror(errno));
		} else {
			tp_vlog("%s: %s refused: EOPNOTSUPP", who, f->what);
		}
	}
	n = count_cqs(ctx);
	if (n != base)
		tp_fail("%s: after the refusals `rdma resource show cq` lists "
			"%ld CQs of this process, before them %ld: a refused "
			"ibv_create_cq_ex left a CQ behind", who, n, base);
	if (tp_failures == before)
		tp_log("ok: %s: device: ibv_create_cq_ex accepts "
		       "IBV_WC_STANDARD_FLAGS, both completion timestamps and "
		       "SINGLE_THREADED; refuses CVLAN, FLOW_TAG, TM_INFO, "
		       "IGNORE_OVERRUN and a parent domain with EOPNOTSUPP, "
		       "leaving no CQ behind", who);
}

/* Phase "clock": the device clock of the completion timestamps. */
void phase_clock(struct ctx *x, const char *who)
{
	struct ibv_context *ctx = x->c.id->verbs;
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	unsigned long before = tp_failures;
	struct ibv_device_attr_ex a;
	uint64_t t0, t1, raw;
	int r;

	memset(&a, 0, sizeof(a));
	r = ibv_query_device_ex(ctx, NULL, &a);
	if (r) {
		tp_fail("%s: ibv_query_device_ex: %s", who, strerror(r));
	} else {
		if (a.completion_timestamp_mask != UINT64_MAX)
			tp_fail("%s: completion_timestamp_mask 0x%" PRIx64
				", expected 0x%" PRIx64 " (64-bit ns)", who,
				a.completion_timestamp_mask, UINT64_MAX);
		if (a.hca_core_clock != 1000000)
			tp_fail("%s: hca_core_clock %" PRIu64 " kHz, expected "
				"1000000 (one tick per ns)", who,
				a.hca_core_clock);
	}
	t0 = clock_ns(CLOCK_MONOTONIC);
	r = ibv_query_rt_values_ex(ctx, &v);
	t1 = clock_ns(CLOCK_MONOTONIC);
	if (r) {
		tp_fail("%s: ibv_query_rt_values_ex(IBV_VALUES_MASK_RAW_CLOCK):"
			" %s", who, strerror(r));
	} else if (!(v.comp_mask & IBV_VALUES_MASK_RAW_CLOCK)) {
		tp_fail("%s: ibv_query_rt_values_ex returned comp_mask 0x%x, "
			"without IBV_VALUES_MASK_RAW_CLOCK", who, v.comp_mask);
	} else {
		raw = (uint64_t)v.raw_clock.tv_nsec;
		if (v.raw_clock.tv_sec != 0)
			tp_fail("%s: raw_clock.tv_sec %lld, expected 0 (the "
				"count is in tv_nsec)", who,
				(long long)v.raw_clock.tv_sec);
		else if (raw < t0 || raw > t1)
			tp_fail("%s: raw clock %" PRIu64 " ns is not within the"
				" CLOCK_MONOTONIC readings around the call "
				"[%" PRIu64 ", %" PRIu64 "]", who, raw, t0, t1);
	}
	if (tp_failures == before)
		tp_log("ok: %s: clock: completion_timestamp_mask 0x%" PRIx64
		       ", hca_core_clock %" PRIu64 " kHz, raw clock within "
		       "CLOCK_MONOTONIC (%" PRIu64 " ns window)", who,
		       a.completion_timestamp_mask, a.hca_core_clock, t1 - t0);
}
