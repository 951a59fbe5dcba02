// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * perftest-pace.so: preloaded into Debian 12's perftest in the test guests
 * (tests/vm/guest/init puts wrappers for the ib_* programs first in PATH).
 *
 * With -R, a perftest client makes two rdma_cm connections: a control one,
 * then, right after a handshake over it, the data one. The server creates
 * its data listener only after that same handshake, so a client that is
 * quicker than its server is refused (REJECTED), and perftest 4.5-0.17's
 * retry of it then crashes in librdmacm (fixed upstream in 2025, perftest
 * 3d9d8d0). Waiting 300 ms before every rdma_connect() but the first lets
 * the server listen first; nothing that perftest measures includes it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unistd.h>

struct rdma_cm_id;
struct rdma_conn_param;

typedef int (*connect_fn)(struct rdma_cm_id *, struct rdma_conn_param *);

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	static connect_fn real;
	static int calls;

	if (!real)
		real = (connect_fn)dlsym(RTLD_NEXT, "rdma_connect");
	if (!real)
		return -1;
	if (calls++)
		usleep(300 * 1000);
	return real(id, param);
}
