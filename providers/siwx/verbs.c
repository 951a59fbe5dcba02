// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Device/port queries, protection domains and memory regions: pure
 * pass-through to the kernel, which holds all state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siwx.h"

int siwx_query_device_ex(struct ibv_context *ctx,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int rv;

	rv = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp,
				      &resp_size);
	if (rv)
		return rv;

	/* The kernel hands out fw_ver as a number; verbs shows a string. */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

int siwx_query_port(struct ibv_context *ctx, uint8_t port,
		    struct ibv_port_attr *attr)
{
	struct ibvp_cmd_query_port cmd = {};

	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *siwx_alloc_pd(struct ibv_context *ctx)
{
	struct ibvp_cmd_alloc_pd cmd = {};
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ibv_pd *pd;
	int rv;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	rv = ibv_cmd_alloc_pd(ctx, pd, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (rv) {
		free(pd);
		errno = rv;
		return NULL;
	}
	return pd;
}

int siwx_dealloc_pd(struct ibv_pd *pd)
{
	int rv = ibv_cmd_dealloc_pd(pd);

	if (rv)
		return rv;
	free(pd);
	return 0;
}

struct ibv_mr *siwx_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			   uint64_t hca_va, int access)
{
	struct ibvp_cmd_reg_mr cmd = {};
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ibvp_mr *vmr;
	int rv;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	rv = ibv_cmd_reg_mr(pd, addr, len, hca_va, access, vmr, &cmd,
			    sizeof(cmd), &resp, sizeof(resp));
	if (rv) {
		free(vmr);
		errno = rv;
		return NULL;
	}
	return &vmr->ibv_mr;
}

int siwx_dereg_mr(struct ibvp_mr *vmr)
{
	int rv = ibv_cmd_dereg_mr(vmr);

	if (rv)
		return rv;
	free(vmr);
	return 0;
}

struct ibv_mw *siwx_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibvp_cmd_alloc_mw cmd = {};
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_mw *mw;
	int rv;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	rv = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			      sizeof(resp));
	if (rv) {
		free(mw);
		errno = rv;
		return NULL;
	}
	return mw;
}

int siwx_dealloc_mw(struct ibv_mw *mw)
{
	int rv = ibv_cmd_dealloc_mw(mw);

	if (rv)
		return rv;
	free(mw);
	return 0;
}

/*
 * A type 1 bind is a Bind Memory Window work request on the QP's send
 * queue, as a type 2 bind is: it completes on the send CQ in order. The
 * window takes a new key with every bind that gives it memory, and the
 * application sees it at once in mw->rkey.
 */
int siwx_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *bind)
{
	struct ibv_send_wr wr = {
		.wr_id = bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = bind->send_flags,
	};
	struct ibv_send_wr *bad;
	int rv;

	wr.bind_mw.mw = mw;
	wr.bind_mw.bind_info = bind->bind_info;
	wr.bind_mw.rkey = bind->bind_info.length ? ibv_inc_rkey(mw->rkey) :
						   mw->rkey;
	rv = siwx_post_send(qp, &wr, &bad);
	if (rv)
		return rv;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
