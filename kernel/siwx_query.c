// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * What the device and its one port report. The device attributes say
 * only what siwx does: RFC 7306 atomics executed as CPU atomics
 * (IB_ATOMIC_GLOB; the masked forms only through siwxdv.h, so not
 * advertised to verbs), fast registration, completion timestamps, no
 * memory windows.
 */
#include <linux/netdevice.h>
#include <rdma/ib_mad.h>

#include "siwx.h"

/* ib_core caches this in ibdev->attrs at registration */
int siwx_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata)
{
	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = (u64)SIWX_ABI_VERSION << 32;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = U64_MAX;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = SIWX_VENDOR_ID;
	attr->vendor_part_id = 0;
	attr->hw_ver = 0;
	attr->max_qp = SIWX_MAX_QP;
	attr->max_qp_wr = SIWX_MAX_QP_WR;
	/*
	 * Fast registration, Local and Send with Invalidate (kernel ULPs);
	 * memory windows of both types, type 2 checked by QP and PD (2B).
	 */
	attr->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B;
	/* rdma link delete may remove a siwx device */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->max_send_sge = SIWX_MAX_SGE;
	attr->max_recv_sge = SIWX_MAX_SGE;
	attr->max_sge_rd = SIWX_MAX_SGE_RD;
	attr->max_cq = SIWX_MAX_CQ;
	attr->max_cqe = SIWX_MAX_CQE;
	attr->max_mr = SIWX_MAX_MR;
	attr->max_mw = SIWX_MAX_MW;
	attr->max_pd = SIWX_MAX_PD;
	attr->max_qp_rd_atom = SIWX_MAX_IRD;
	attr->max_qp_init_rd_atom = SIWX_MAX_ORD;
	attr->max_res_rd_atom = SIWX_MAX_QP * SIWX_MAX_IRD;
	/* Real CPU atomics on the registered page (siwx_atomic.c) */
	attr->atomic_cap = IB_ATOMIC_GLOB;
	attr->masked_atomic_cap = IB_ATOMIC_NONE;
	attr->max_srq = SIWX_MAX_SRQ;
	attr->max_srq_wr = SIWX_MAX_SRQ_WR;
	attr->max_srq_sge = SIWX_MAX_SGE;
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = 0;
	attr->max_fast_reg_page_list_len = SIWX_MAX_FR_PAGES;
	/*
	 * Completion timestamps: CLOCK_MONOTONIC ns in every CQE (abi.h),
	 * reported as a 64-bit clock of 1 GHz (in kHz).
	 */
	attr->timestamp_mask = U64_MAX;
	attr->hca_core_clock = 1000000;
	return 0;
}

/* Up means administratively up with carrier. */
enum ib_port_state siwx_port_state(struct net_device *netdev)
{
	return netif_running(netdev) && netif_carrier_ok(netdev) ?
		       IB_PORT_ACTIVE : IB_PORT_DOWN;
}

/*
 * For iWARP ports ib_query_port() fills state and phys_state from the
 * carrier and the IPv4 addresses before calling us; it ignores whether
 * the link is administratively up, which we add.
 */
int siwx_query_port(struct ib_device *ibdev, u32 port,
		    struct ib_port_attr *attr)
{
	struct net_device *netdev = to_siwx_dev(ibdev)->netdev;

	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = ib_mtu_int_to_enum(netdev->mtu);
	if (siwx_port_state(netdev) != IB_PORT_ACTIVE) {
		attr->state = IB_PORT_DOWN;
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	} else if (attr->state != IB_PORT_INIT) {
		attr->state = IB_PORT_ACTIVE;
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	}

	attr->gid_tbl_len = 1;
	attr->pkey_tbl_len = 1;
	attr->max_msg_sz = SIWX_MAX_MSG_SIZE;
	attr->port_cap_flags = IB_PORT_CM_SUP | IB_PORT_DEVICE_MGMT_SUP;
	attr->lid = 0;
	attr->sm_lid = 0;
	attr->lmc = 0;
	/* Speed and width as the netdev reports them (ethtool) */
	if (ib_get_eth_speed(ibdev, port, &attr->active_speed,
			     &attr->active_width)) {
		/* The netdev is going away; the port is down anyway */
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

int siwx_get_port_immutable(struct ib_device *ibdev, u32 port,
			    struct ib_port_immutable *imm)
{
	imm->core_cap_flags = RDMA_CORE_PORT_IWARP;
	imm->gid_tbl_len = 1;
	imm->pkey_tbl_len = 1;
	imm->max_mad_size = 0;
	return 0;
}

/* As iWARP RNICs do: the MAC in the first six octets, zeros after. */
int siwx_query_gid(struct ib_device *ibdev, u32 port, int index,
		   union ib_gid *gid)
{
	struct siwx_dev *dev = to_siwx_dev(ibdev);

	if (index != 0)
		return -EINVAL;
	memset(gid, 0, sizeof(*gid));
	memcpy(gid->raw, dev->mac, ETH_ALEN);
	return 0;
}

/* iWARP has no partitions; the one entry is the default full key. */
int siwx_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index != 0)
		return -EINVAL;
	*pkey = 0xffff;
	return 0;
}

void siwx_get_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%u.0.0", SIWX_ABI_VERSION);
}
