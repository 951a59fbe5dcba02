/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * siwx-scale (scale.c): what its client (scale_client.c) and server
 * (scale_server.c) share.
 */
#ifndef SIWX_TESTS_PROGS_SCALE_H
#define SIWX_TESTS_PROGS_SCALE_H

#include "tp_common.h"

#define SCALE_MAGIC UINT64_C(0x534957585343414c)	/* "SIWXSCAL" */
#define SCALE_SLOT 4096u	/* octets each connection writes, reads */
#define SCALE_FADDS 16u		/* FetchAdds per connection */
#define SCALE_SENDS 4u		/* Sends per connection, through the SRQ */
#define SCALE_MSG 16u		/* a Send: connection index, sequence */
#define SCALE_SRQ_SLACK 64u	/* receives beyond those due: extras show */
#define SCALE_RD_ATOMIC 16	/* ORD/IRD asked for */
#define SCALE_MEM_POINTS 16

struct scale_opts {
	struct tp_role r;
	unsigned int conns;	/* -n */
	uint64_t mr_mib;	/* -m (server) */
	unsigned int window;	/* -w (client): connects under way, 0: all */
};

/* The server's large MR, as its accept's private data gives it. */
struct scale_remote {
	uint64_t addr;
	uint64_t rkey;
	uint64_t len;
};

struct scale_mem {
	long avail, slab, sunreclaim, rss;	/* KiB */
};

struct scale_memtab {
	struct scale_mem start;
	unsigned int n;
	unsigned int at[SCALE_MEM_POINTS];
	struct scale_mem m[SCALE_MEM_POINTS];
};

/* Where connection @i of @n writes; the shared counter; the last page. */
uint64_t scale_slot(const struct scale_remote *r, unsigned int n,
		    unsigned int i);
uint64_t scale_counter(const struct scale_remote *r);
uint64_t scale_last(const struct scale_remote *r);

/*
 * librdmacm's context of the (first) device, the one rdma_cm ids resolve
 * to, and in *@n the connections it has room for (at most @want).
 */
struct ibv_context *scale_device(unsigned int want, unsigned int *n);

void scale_msg(uint8_t *p, uint64_t i, uint64_t k);
void scale_pattern(uint8_t *p, uint64_t i);

void scale_mem_start(struct scale_memtab *t);
void scale_mem_mark(struct scale_memtab *t, unsigned int conns,
		    unsigned int total);
void scale_mem_report(const struct scale_memtab *t, const char *who);

int scale_client(const struct scale_opts *o);
int scale_server(const struct scale_opts *o);

#endif /* SIWX_TESTS_PROGS_SCALE_H */
