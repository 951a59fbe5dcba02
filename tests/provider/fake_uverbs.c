// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The fake uverbs device (see fake_uverbs.h). Test code only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>
#include <linux/netlink.h>

#include "fake_uverbs.h"

struct fake_uverbs fake;

#define FAKE_DEV_DIR "/dev/infiniband/"

static void *fake_alloc_queue(size_t len, __u64 *key)
{
	struct fake_queue *q = &fake.q[fake.nq];
	void *mem;

	mem = (void *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		abort();
	q->key = 0x10000ULL * (uint64_t)(fake.nq + 1);
	q->mem = mem;
	q->len = len;
	fake.nq++;
	*key = q->key;
	return mem;
}

/* Copy a response to where the request's response field points. */
static int respond(const struct ib_uverbs_cmd_hdr *hdr, uint64_t response,
		   const void *resp, size_t len)
{
	if ((size_t)hdr->out_words * 4 < len || !response) {
		fake.bad++;
		errno = EINVAL;
		return -1;
	}
	memcpy((void *)(uintptr_t)response, resp, len);
	return 0;
}

static ssize_t fake_write(const void *buf, size_t n)
{
	const struct ib_uverbs_cmd_hdr *hdr = buf;
	const void *req = hdr + 1;
	uint32_t cmd = hdr->command;
	uint64_t response = 0;
	int rv = 0;

	if (n >= sizeof(*hdr) && (cmd & IB_USER_VERBS_CMD_FLAG_EXTENDED)) {
		/* like a kernel without the extended commands: libibverbs
		 * falls back to the legacy ones */
		errno = ENOSYS;
		return -1;
	}
	if (n < sizeof(*hdr) || (size_t)hdr->in_words * 4 != n || cmd >= 64) {
		fake.bad++;
		errno = EINVAL;
		return -1;
	}
	fake.ncmd[cmd]++;
	fake.in_bytes[cmd] = n;
	fake.out_bytes[cmd] = hdr->out_words * 4;
	/* every request with a response starts with the response pointer */
	memcpy(&response, req, sizeof(response));

	switch (cmd) {
	case IB_USER_VERBS_CMD_GET_CONTEXT: {
		struct {
			struct ib_uverbs_get_context_resp core;
			struct siwx_uresp_alloc_ctx drv;
		} r = { { (uint32_t)-1, 1 }, { 7, FAKE_MAX_INLINE } };

		rv = respond(hdr, response, &r, sizeof(r));
		break;
	}
	case IB_USER_VERBS_CMD_QUERY_DEVICE: {
		struct ib_uverbs_query_device_resp r = {};

		r.fw_ver = (1ULL << 32) | (2 << 16) | 3;
		r.atomic_cap = IBV_ATOMIC_HCA;
		r.max_qp = 100;
		r.phys_port_cnt = 1;
		rv = respond(hdr, response, &r, sizeof(r));
		break;
	}
	case IB_USER_VERBS_CMD_QUERY_PORT: {
		struct ib_uverbs_query_port_resp r = {};

		r.state = IBV_PORT_ACTIVE;
		r.max_mtu = IBV_MTU_4096;
		r.active_mtu = IBV_MTU_1024;
		r.gid_tbl_len = 1;
		r.link_layer = IBV_LINK_LAYER_ETHERNET;
		rv = respond(hdr, response, &r, sizeof(r));
		break;
	}
	case IB_USER_VERBS_CMD_ALLOC_PD: {
		struct ib_uverbs_alloc_pd_resp r = { .pd_handle = 0x10 };

		rv = respond(hdr, response, &r, sizeof(r));
		break;
	}
	case IB_USER_VERBS_CMD_REG_MR: {
		struct ib_uverbs_reg_mr_resp r = { 0x20, 0x1111, 0x2222 };

		memcpy(&fake.last_reg_mr, req, sizeof(fake.last_reg_mr));
		rv = respond(hdr, response, &r, sizeof(r));
		break;
	}
	case IB_USER_VERBS_CMD_ALLOC_MW: {
		/* each window its own STag index, key 1 */
		struct ib_uverbs_alloc_mw_resp r = {
			.mw_handle = 0x50 + fake.ncmd[cmd],
			.rkey = (0x32 + fake.ncmd[cmd]) << 8 | 1,
		};

		memcpy(&fake.last_alloc_mw, req, sizeof(fake.last_alloc_mw));
		rv = respond(hdr, response, &r, sizeof(r));
		break;
	}
	case IB_USER_VERBS_CMD_CREATE_CQ: {
		struct {
			struct ib_uverbs_create_cq_resp core;
			struct siwx_uresp_create_cq drv;
		} r = {};
		void *mem;

		mem = fake_alloc_queue(FAKE_NUM_CQE * sizeof(struct siwx_cqe) +
					       sizeof(struct siwx_cq_ctrl),
				       &r.drv.cq_key);
		fake.cq = mem;
		fake.cq_ctrl = (void *)(fake.cq + FAKE_NUM_CQE);
		r.core.cq_handle = 0x30;
		r.core.cqe = FAKE_NUM_CQE;
		r.drv.cq_id = 3;
		r.drv.num_cqe = FAKE_NUM_CQE;
		rv = respond(hdr, response, &r, sizeof(r));
		break;
	}
	case IB_USER_VERBS_CMD_CREATE_QP: {
		struct {
			struct ib_uverbs_create_qp_resp core;
			struct siwx_uresp_create_qp drv;
		} r = {};
		const struct ib_uverbs_create_qp *c = req;

		memcpy(&fake.last_create_qp, req, sizeof(fake.last_create_qp));
		fake.sq = fake_alloc_queue(FAKE_NUM_SQE *
						   sizeof(struct siwx_sqe) +
					   sizeof(struct siwx_sq_ctrl),
					   &r.drv.sq_key);
		fake.sq_ctrl = (void *)(fake.sq + FAKE_NUM_SQE);
		if (!c->is_srq) {
			fake.rq = fake_alloc_queue(FAKE_NUM_RQE *
						   sizeof(struct siwx_rqe),
						   &r.drv.rq_key);
			r.drv.num_rqe = FAKE_NUM_RQE;
		}
		r.core.qp_handle = 0x40;
		r.core.qpn = 0x41;
		r.core.max_send_wr = FAKE_NUM_SQE;
		r.core.max_recv_wr = FAKE_NUM_RQE;
		r.core.max_send_sge = c->max_send_sge;
		r.core.max_recv_sge = c->max_recv_sge;
		r.core.max_inline_data = c->max_inline_data;
		r.drv.qp_id = 4;
		r.drv.num_sqe = FAKE_NUM_SQE;
		rv = respond(hdr, response, &r, sizeof(r));
		break;
	}
	case IB_USER_VERBS_CMD_CREATE_SRQ: {
		struct {
			struct ib_uverbs_create_srq_resp core;
			struct siwx_uresp_create_srq drv;
		} r = {};

		fake.srq = fake_alloc_queue(FAKE_NUM_RQE *
					    sizeof(struct siwx_rqe),
					    &r.drv.srq_key);
		r.core.srq_handle = 0x50;
		r.core.max_wr = FAKE_NUM_RQE;
		r.core.max_sge = 2;
		r.drv.num_rqe = FAKE_NUM_RQE;
		rv = respond(hdr, response, &r, sizeof(r));
		break;
	}
	case IB_USER_VERBS_CMD_MODIFY_QP:
		memcpy(&fake.last_modify_qp, req, sizeof(fake.last_modify_qp));
		break;
	case IB_USER_VERBS_CMD_POST_SEND: {
		const struct ib_uverbs_post_send *c = req;
		struct ib_uverbs_post_send_resp r = {};

		/* siwx only ever sends the zero-WR doorbell */
		if (c->wr_count || c->sge_count ||
		    c->wqe_size < sizeof(struct ib_uverbs_send_wr))
			fake.bad++;
		fake.doorbells++;
		fake.last_db_qp_handle = c->qp_handle;
		rv = respond(hdr, response, &r, sizeof(r));
		break;
	}
	case IB_USER_VERBS_CMD_POST_RECV: {
		const struct ib_uverbs_post_recv *c = req;
		struct ib_uverbs_post_recv_resp r = {};

		/* siwx only ever sends the zero-WR receive doorbell */
		if (c->wr_count || c->sge_count ||
		    c->wqe_size < sizeof(struct ib_uverbs_recv_wr))
			fake.bad++;
		fake.last_rdb_qp_handle = c->qp_handle;
		rv = respond(hdr, response, &r, sizeof(r));
		break;
	}
	case IB_USER_VERBS_CMD_RESIZE_CQ: {
		struct {
			struct ib_uverbs_resize_cq_resp core;
			struct siwx_uresp_create_cq drv;
		} r = {};
		const struct ib_uverbs_resize_cq *c = req;
		void *mem;

		fake.last_resize_cqe = c->cqe;
		mem = fake_alloc_queue(FAKE_RESIZED_CQE *
					       sizeof(struct siwx_cqe) +
					       sizeof(struct siwx_cq_ctrl),
				       &r.drv.cq_key);
		fake.cq = mem;
		fake.cq_ctrl = (void *)(fake.cq + FAKE_RESIZED_CQE);
		r.core.cqe = FAKE_RESIZED_CQE;
		r.drv.cq_id = 3;
		r.drv.num_cqe = FAKE_RESIZED_CQE;
		rv = respond(hdr, response, &r, sizeof(r));
		break;
	}
	case IB_USER_VERBS_CMD_DESTROY_CQ: {
		struct ib_uverbs_destroy_cq_resp r = {};

		rv = respond(hdr, response, &r, sizeof(r));
		break;
	}
	case IB_USER_VERBS_CMD_DESTROY_QP: {
		struct ib_uverbs_destroy_qp_resp r = {};

		rv = respond(hdr, response, &r, sizeof(r));
		break;
	}
	case IB_USER_VERBS_CMD_DESTROY_SRQ: {
		struct ib_uverbs_destroy_srq_resp r = {};

		rv = respond(hdr, response, &r, sizeof(r));
		break;
	}
	case IB_USER_VERBS_CMD_DEALLOC_PD:
	case IB_USER_VERBS_CMD_DEREG_MR:
	case IB_USER_VERBS_CMD_DEALLOC_MW:
		break;
	default:
		errno = ENOSYS;
		return -1;
	}
	return rv ? -1 : (ssize_t)n;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	if (fd == FAKE_UVERBS_FD)
		return fake_write(buf, n);
	return syscall(SYS_write, fd, buf, n);
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd == FAKE_UVERBS_FD) {
		errno = ENOTTY;	/* "no ioctl framework": use write() */
		return -1;
	}
	return syscall(SYS_ioctl, fd, req, arg);
}

/*
 * A mapping at a fixed address: the queue's memory moves there (it is the
 * one copy the "kernel" and the provider share), and so do the fake's
 * pointers into it.
 */
static void *fake_move_queue(struct fake_queue *q, void *addr)
{
	char *old = q->mem;
	void *mem;

	mem = (void *)syscall(SYS_mremap, old, q->len, q->len,
			      MREMAP_MAYMOVE | MREMAP_FIXED, addr);
	if (mem == MAP_FAILED)
		abort();
	q->mem = mem;
	if ((char *)fake.cq == old) {
		fake.cq_ctrl = (void *)((char *)mem +
					((char *)fake.cq_ctrl - old));
		fake.cq = mem;
	}
	return mem;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	int i;

	if (fd != FAKE_UVERBS_FD || (flags & MAP_ANONYMOUS))
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd,
				       off);
	for (i = 0; i < fake.nq; i++) {
		if (fake.q[i].key == (uint64_t)off) {
			/* the provider must map exactly what abi.h lays out */
			if (fake.q[i].len != len || fake.q[i].mapped) {
				fake.bad++;
				break;
			}
			fake.q[i].mapped = 1;
			if (flags & MAP_FIXED)
				return fake_move_queue(&fake.q[i], addr);
			return fake.q[i].mem;
		}
	}
	errno = EINVAL;
	return MAP_FAILED;
}

/* libibverbs checks that the device node exists before offering it. */
int stat(const char *path, struct stat *st)
{
	if (!strcmp(path, FAKE_DEV_DIR "uverbs9") ||
	    !strcmp(path, FAKE_DEV_DIR "uverbs8") ||
	    !strcmp(path, FAKE_DEV_DIR "uverbs7")) {
		memset(st, 0, sizeof(*st));
		st->st_mode = S_IFCHR | 0666;
		return 0;
	}
	return fstatat(AT_FDCWD, path, st, 0);
}

/* No RDMA netlink: libibverbs then discovers devices through SYSFS_PATH. */
int socket(int domain, int type, int protocol)
{
	if (domain == AF_NETLINK && protocol == NETLINK_RDMA) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return syscall(SYS_socket, domain, type, protocol);
}

static void put_file(const char *dir, const char *name, const char *text)
{
	char path[1024];
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path))
		abort();
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static void fake_dev(const char *root, const char *uverbs, const char *ibdev,
		     const char *abi)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/class/infiniband_verbs/%s", root,
		 uverbs);
	mkdir(dir, 0755);
	put_file(dir, "ibdev", ibdev);
	put_file(dir, "dev", "231:201\n");
	put_file(dir, "abi_version", abi);
	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s", root, ibdev);
	mkdir(dir, 0755);
	put_file(dir, "node_type", "4: RNIC\n");
}

const char *fake_sysfs_create(void)
{
	static char root[] = "/tmp/siwx-fake-sysfs-XXXXXX";
	char dir[512], ours[16], old[16];

	if (!mkdtemp(root))
		abort();
	snprintf(dir, sizeof(dir), "%s/class", root);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/class/infiniband", root);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/class/infiniband_verbs", root);
	mkdir(dir, 0755);
	put_file(dir, "abi_version", "6\n");
	snprintf(ours, sizeof(ours), "%d\n", SIWX_ABI_VERSION);
	/* A module of the previous layout: what a half-done upgrade leaves */
	snprintf(old, sizeof(old), "%d\n", SIWX_ABI_VERSION - 1);
	fake_dev(root, "uverbs9", "siwx9", ours);
	fake_dev(root, "uverbs8", "siwx8", old);	/* ours, wrong ABI */
	fake_dev(root, "uverbs7", "other7", ours);	/* not ours */
	return root;
}
