// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-scale: many connections at once, all of them busy.
 *
 * 1. Connect: the client opens CONNS connections (one RC QP and its own
 *    send CQ each) with at most WINDOW connects under way at a time (all
 *    resolved and connected from one event channel, the next started as
 *    one is established); the server takes them from one event channel
 *    too, its QPs all receiving from ONE SRQ into one shared receive CQ.
 *    Printed: the connect rate, and on both sides the memory per QP
 *    (MemAvailable, Slab, SUnreclaim, VmRSS since before the first
 *    connection) at 64, 128, 256, ... connections and at CONNS.
 * 2. Data and atomics: the server registers one large MR (-m MiB); every
 *    connection RDMA Writes 4 KiB of its own pattern into its slot (slots
 *    spread over the MR, the first at its first page), Reads it back and
 *    does FADDS FetchAdds of 1 on one shared counter; connection 0 also
 *    writes and reads the MR's last page. All posted before any polling.
 *    Checked: every WR completed with success, every read-back equals
 *    what was written, the counter ends at CONNS * FADDS and the values
 *    the FetchAdds returned are exactly 0 .. CONNS * FADDS - 1.
 * 3. SRQ: each connection Sends SENDS messages (its index, a sequence);
 *    the server counts them by qp_num and by payload: exactly SENDS from
 *    each connection, each sequence once, all successful, none extra.
 * 4. CQ overflow (client): one more connection whose send CQ is smaller
 *    than what is posted on it, unpolled: see overflow().
 * 5. Teardown: the client closes the extra connection, the server all
 *    the others; both destroy every QP, CQ, SRQ and MR.
 * If the device advertises fewer QPs or CQs than that needs, CONNS is
 * lowered to what fits and the reason printed.
 *
 *   siwx-scale -s [-n CONNS] [-m MIB] [-p PORT] [-t SEC] [-v]
 *   siwx-scale -c HOST [-n CONNS] [-w WINDOW] [-p PORT] [-t SEC] [-v]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scale.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: siwx-scale -s [-n CONNS] [-m MIB] [-p PORT] [-t SEC] [-v]\n"
"       siwx-scale -c HOST [-n CONNS] [-w WINDOW] [-p PORT] [-t SEC] [-v]\n"
"  -s | -c HOST  server (large MR, SRQ) or client\n"
"  -n CONNS      connections at once, one QP each (default 512; both\n"
"                sides alike)\n"
"  -m MIB        the server's large MR (default 1024)\n"
"  -w WINDOW     connects under way at a time (default 64; 0: all)\n"
"  -p PORT       rdma_cm port (default 18526)\n"
"  -t SEC        time limit of each wait (default 120)\n"
"  -6            server: listen on [::], IPv6 only\n"
"Exit 0 when every check of every phase held.\n");
}

/* Slot @i's offset in the server's MR; the counter and the last page. */
uint64_t scale_slot(const struct scale_remote *r, unsigned int n,
		    unsigned int i)
{
	return (uint64_t)i * ((r->len / n) & ~(uint64_t)(SCALE_SLOT - 1));
}

uint64_t scale_counter(const struct scale_remote *r)
{
	return r->len - 2 * SCALE_SLOT;
}

uint64_t scale_last(const struct scale_remote *r)
{
	return r->len - SCALE_SLOT;
}

/* The CONNS both sides use: what the device allows (why, if lower). */
static unsigned int fit_device(struct ibv_context *ctx, unsigned int want)
{
	struct ibv_device_attr a;
	unsigned int n = want, by;

	if (ibv_query_device(ctx, &a))
		tp_die("ibv_query_device: %s", strerror(errno));
	tp_log("device %s: max_qp %d, max_cq %d, max_cqe %d, max_srq_wr %d, "
	       "max_mr_size %#" PRIx64, ibv_get_device_name(ctx->device),
	       a.max_qp, a.max_cq, a.max_cqe, a.max_srq_wr, a.max_mr_size);
	/* n QPs and the extra one; a send CQ each, one receive CQ more */
	if ((unsigned int)a.max_qp < n + 1) {
		n = a.max_qp > 1 ? (unsigned int)a.max_qp - 1 : 0;
		tp_log("CONNS %u: the device advertises max_qp %d (and the "
		       "extra connection needs one): %u connections", want,
		       a.max_qp, n);
	}
	by = a.max_cq > 4 ? ((unsigned int)a.max_cq - 2) / 2 : 0;
	if (by < n) {
		tp_log("CONNS %u: max_cq %d allows %u connections", n,
		       a.max_cq, by);
		n = by;
	}
	by = a.max_srq_wr > (int)SCALE_SRQ_SLACK ?
	     ((unsigned int)a.max_srq_wr - SCALE_SRQ_SLACK) / SCALE_SENDS : 0;
	if (by < n) {
		tp_log("CONNS %u: max_srq_wr %d allows %u connections' Sends",
		       n, a.max_srq_wr, by);
		n = by;
	}
	if (!n)
		tp_die("the device cannot hold a single connection of ours");
	return n;
}

struct ibv_context *scale_device(unsigned int want, unsigned int *n)
{
	struct ibv_context **list, *ctx;
	int num = 0;

	list = rdma_get_devices(&num);
	if (!list || num < 1)
		tp_die("no RDMA device (rdma_get_devices)");
	if (num > 1)
		tp_log("%d RDMA devices: using %s", num,
		       ibv_get_device_name(list[0]->device));
	ctx = list[0];
	rdma_free_devices(list);
	*n = fit_device(ctx, want);
	return ctx;
}

/* Send @k of connection @i: its index and the sequence. */
void scale_msg(uint8_t *p, uint64_t i, uint64_t k)
{
	uint64_t w[2] = { i, k };

	memcpy(p, w, sizeof(w));
}

/* The 4 KiB connection @i writes (i == n: the last page's). */
void scale_pattern(uint8_t *p, uint64_t i)
{
	uint64_t st = SCALE_MAGIC ^ i, v;
	unsigned int k;

	for (k = 0; k < SCALE_SLOT; k += 8) {
		v = tp_rand(&st);
		memcpy(p + k, &v, 8);
	}
}

/* Memory, in KiB, from /proc. */
static long proc_kib(const char *path, const char *key)
{
	size_t klen = strlen(key);
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static void mem_read(struct scale_mem *m)
{
	m->avail = proc_kib("/proc/meminfo", "MemAvailable");
	m->slab = proc_kib("/proc/meminfo", "Slab");
	m->sunreclaim = proc_kib("/proc/meminfo", "SUnreclaim");
	m->rss = proc_kib("/proc/self/status", "VmRSS");
}

void scale_mem_start(struct scale_memtab *t)
{
	memset(t, 0, sizeof(*t));
	mem_read(&t->start);
}

/* After @conns of @total connections: at 64, 128, 256, ... and @total. */
void scale_mem_mark(struct scale_memtab *t, unsigned int conns,
		    unsigned int total)
{
	bool pow2 = conns >= 64 && !(conns & (conns - 1));

	if ((!pow2 && conns != total) || t->n == SCALE_MEM_POINTS)
		return;
	t->at[t->n] = conns;
	mem_read(&t->m[t->n]);
	t->n++;
}

void scale_mem_report(const struct scale_memtab *t, const char *who)
{
	char line[1024];
	size_t len = 0;
	unsigned int k;

	for (k = 0; k < t->n; k++) {
		const struct scale_mem *m = &t->m[k];

		tp_log("%s: memory at %u connections: MemAvailable -%ld KiB, "
		       "Slab +%ld KiB, SUnreclaim +%ld KiB, VmRSS +%ld KiB",
		       who, t->at[k], t->start.avail - m->avail,
		       m->slab - t->start.slab,
		       m->sunreclaim - t->start.sunreclaim,
		       m->rss - t->start.rss);
		len += (size_t)snprintf(line + len, sizeof(line) - len,
			"%s at %u: %.1f KiB/QP (slab %.1f, rss %.1f)",
			k ? "," : "", t->at[k],
			(double)(t->start.avail - m->avail) / t->at[k],
			(double)(m->slab - t->start.slab) / t->at[k],
			(double)(m->rss - t->start.rss) / t->at[k]);
		if (len >= sizeof(line))
			break;
	}
	tp_log("%s: memory per QP:%s", who, t->n ? line : " (no point)");
}

static bool opt(int ch, const char *arg, void *ctx)
{
	struct scale_opts *o = ctx;

	switch (ch) {
	case 'n':
		o->conns = (unsigned int)tp_parse_u64(arg, "-n", 1, 65536);
		return true;
	case 'm':
		o->mr_mib = tp_parse_u64(arg, "-m", 1, 65536);
		return true;
	case 'w':
		o->window = (unsigned int)tp_parse_u64(arg, "-w", 0, 65536);
		return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	struct scale_opts o = { .r = { .port = 18526, .timeout_ms = 120000 },
				.conns = 512, .mr_mib = 1024, .window = 64 };

	tp_prog = "siwx-scale";
	setvbuf(stdout, NULL, _IOLBF, 0);
	tp_role_parse_opts(argc, argv, &o.r, "n:m:w:", opt, &o, usage);
	return o.r.server ? scale_server(&o) : scale_client(&o);
}
