// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The iWARP CM's view of the device. QP lookup and references are real;
 * connection setup (MPA over kernel TCP) is the next step, so connect,
 * accept, reject and listen refuse for now.
 */
#include <rdma/iw_cm.h>

#include "siwx.h"

void siwx_iw_add_ref(struct ib_qp *ibqp)
{
	siwx_qp_get(to_siwx_qp(ibqp));
}

void siwx_iw_rem_ref(struct ib_qp *ibqp)
{
	siwx_qp_put(to_siwx_qp(ibqp));
}

/*
 * No reference is taken: the caller owns the QP (through its rdma_cm
 * id) and takes one with iw_add_ref before it lets go.
 */
struct ib_qp *siwx_iw_get_qp(struct ib_device *ibdev, int qpn)
{
	struct siwx_qp *qp = xa_load(&to_siwx_dev(ibdev)->qps, qpn);

	return qp ? &qp->ibqp : NULL;
}

static int siwx_iw_unsupported(struct iw_cm_id *id, const char *what)
{
	pr_info_ratelimited("siwx: %s: %s is not implemented yet\n",
			    dev_name(&id->device->dev), what);
	return -EOPNOTSUPP;
}

int siwx_iw_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	return siwx_iw_unsupported(id, "connect");
}

int siwx_iw_accept(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	return siwx_iw_unsupported(id, "accept");
}

int siwx_iw_reject(struct iw_cm_id *id, const void *pdata, u8 pdata_len)
{
	return siwx_iw_unsupported(id, "reject");
}

int siwx_iw_create_listen(struct iw_cm_id *id, int backlog)
{
	return siwx_iw_unsupported(id, "listen");
}

int siwx_iw_destroy_listen(struct iw_cm_id *id)
{
	/* Nothing was ever set up by create_listen */
	return 0;
}
