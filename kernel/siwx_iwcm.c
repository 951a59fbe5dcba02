// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The iWARP CM's view of the device: QP lookup and the references iwcm
 * holds on a QP. Connection setup itself is in siwx_cm.c.
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
