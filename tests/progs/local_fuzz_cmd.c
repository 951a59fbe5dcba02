// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-local-fuzz: the uverbs file itself. mmap() of offsets and lengths
 * the kernel never gave out must fail; raw write() commands with random
 * numbers, sizes, handles and udata (on a context of their own, whose
 * objects nothing else uses) must fail cleanly or make objects that the
 * context's close then destroys. Pointers in them name a scratch buffer,
 * NULL or kernel addresses, so that a command the kernel accepts cannot
 * scribble over this process.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "local_fuzz.h"

static bool lf_mmap_ok(int fd, size_t len, uint64_t off, int prot, int flags)
{
	void *p = mmap(NULL, len, prot, flags, fd, (off_t)off);

	if (p == MAP_FAILED)
		return false;
	munmap(p, len);
	return true;
}

/* Is @off where one of this context's rings starts (mapped already)? */
static bool lf_given_out(const struct lf_maps *m, uint64_t off)
{
	unsigned int i;

	for (i = 0; i < m->n; i++)
		if (m->m[i].pgoff == off)
			return true;
	return false;
}

void lf_mmap_probes(struct ibv_context *ctx, const struct lf_ring *r)
{
	const int rw = PROT_READ | PROT_WRITE;
	const uint64_t off = r->pgoff * 4096;
	struct ibv_context *other;
	struct lf_maps given;
	unsigned int i;

	lf_maps_read(&given);
	if (!lf_mmap_ok(ctx->cmd_fd, r->len, off, rw, MAP_SHARED))
		tp_fail("mmap of the SQ ring's own offset and length failed");
	if (lf_mmap_ok(ctx->cmd_fd, r->len + 4096, off, rw, MAP_SHARED))
		tp_fail("mmap of the SQ ring one page longer succeeded");
	if (lf_mmap_ok(ctx->cmd_fd, 4096, off + 4096, rw, MAP_SHARED))
		tp_fail("mmap of the SQ ring's second page alone succeeded");
	for (i = 0; i < 64; i++) {
		uint64_t o = (off + 4096 * (1 + i * 977ULL)) & ~4095ULL;

		if (!lf_given_out(&given, o) &&
		    lf_mmap_ok(ctx->cmd_fd, 4096, o, rw, MAP_SHARED))
			tp_fail("mmap of offset 0x%" PRIx64 ", never given out,"
				" succeeded", o);
	}
	if (lf_mmap_ok(ctx->cmd_fd, 4096, ~4095ULL >> 1, rw, MAP_SHARED))
		tp_fail("mmap of a huge offset succeeded");
	/* Another context of the same process is another user to siwx */
	other = ibv_open_device(ctx->device);
	if (!other) {
		tp_fail("ibv_open_device: %s", strerror(errno));
		return;
	}
	if (lf_mmap_ok(other->cmd_fd, r->len, off, rw, MAP_SHARED))
		tp_fail("another context mapped this context's SQ ring");
	ibv_close_device(other);
	tp_log("ok: mmap probes: only the ring's own offset and length map");
}

/* ---- raw commands ------------------------------------------------------ */

static uint8_t scratch[8192] __attribute__((aligned(4096)));

static uint64_t lf_pointer(uint64_t *rng)
{
	switch (tp_rand(rng) % 4) {
	case 0:
		return 0;
	case 1:
		return 0xffff888000000000ULL + (tp_rand(rng) % 4096) * 4096;
	default:
		return (uintptr_t)scratch + (tp_rand(rng) % 4096);
	}
}

/*
 * The commands whose objects siwx makes, with a plausible core part:
 * sizes and handles of the context's own first objects (handle 0), and
 * random udata behind.
 */
static const uint32_t lf_cmds[] = {
	IB_USER_VERBS_CMD_ALLOC_PD,	IB_USER_VERBS_CMD_REG_MR,
	IB_USER_VERBS_CMD_DEREG_MR,	IB_USER_VERBS_CMD_ALLOC_MW,
	IB_USER_VERBS_CMD_DEALLOC_MW,	IB_USER_VERBS_CMD_CREATE_CQ,
	IB_USER_VERBS_CMD_RESIZE_CQ,	IB_USER_VERBS_CMD_DESTROY_CQ,
	IB_USER_VERBS_CMD_CREATE_QP,	IB_USER_VERBS_CMD_MODIFY_QP,
	IB_USER_VERBS_CMD_DESTROY_QP,	IB_USER_VERBS_CMD_POST_SEND,
	IB_USER_VERBS_CMD_POST_RECV,	IB_USER_VERBS_CMD_CREATE_SRQ,
	IB_USER_VERBS_CMD_MODIFY_SRQ,	IB_USER_VERBS_CMD_DESTROY_SRQ,
	IB_USER_VERBS_CMD_QUERY_QP,	IB_USER_VERBS_CMD_REQ_NOTIFY_CQ,
	IB_USER_VERBS_CMD_POLL_CQ,	IB_USER_VERBS_CMD_DEALLOC_PD,
};

static void lf_one_command(int fd, uint64_t *rng, unsigned long *accepted)
{
	uint32_t words[128];
	struct ib_uverbs_cmd_hdr *hdr = (void *)words;
	unsigned int i, n = 2 + tp_rand(rng) % 100;
	uint64_t p;

	for (i = 0; i < n; i++)
		words[i] = (uint32_t)tp_rand(rng);
	/* Small numbers are handles and sizes that may mean something */
	for (i = 4; i < n; i++)
		if (tp_rand(rng) % 2)
			words[i] %= 8;
	hdr->command = tp_rand(rng) % 8 ? lf_cmds[tp_rand(rng) %
						  (sizeof(lf_cmds) /
						   sizeof(lf_cmds[0]))] :
					  (uint32_t)(tp_rand(rng) % 64);
	hdr->in_words = tp_rand(rng) % 8 ? n : (uint16_t)tp_rand(rng);
	hdr->out_words = tp_rand(rng) % 64;
	/* Every core request with a response starts with its pointer */
	p = lf_pointer(rng);
	if (n >= 4)
		memcpy(&words[2], &p, sizeof(p));
	/* REG_MR: the start address of memory that may be pinned */
	if (hdr->command == IB_USER_VERBS_CMD_REG_MR && n >= 8) {
		p = tp_rand(rng) % 2 ? (uintptr_t)scratch : lf_pointer(rng);
		memcpy(&words[4], &p, sizeof(p));
	}
	if (write(fd, words, 4 * n) >= 0)
		(*accepted)++;
}

void lf_raw_commands(struct ibv_context *ctx, uint64_t *rng, unsigned int n)
{
	struct ibv_context *own = ibv_open_device(ctx->device);
	unsigned long accepted = 0;
	unsigned int i;

	if (!own) {
		tp_fail("ibv_open_device: %s", strerror(errno));
		return;
	}
	for (i = 0; i < n; i++)
		lf_one_command(own->cmd_fd, rng, &accepted);
	/* Whatever they made goes with the context */
	ibv_close_device(own);
	tp_log("ok: %u raw commands (%lu accepted), the context closed", n,
	       accepted);
}
