/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The private provider interface of libibverbs as far as libsiwx uses it,
 * for every private ABI libsiwx supports (34, 57, 59, 64, 65). Included
 * only by verbs_private<N>.h, which defines IBVP_PABI_VERSION first and
 * then adds what is specific to its ABI: the ops-table pins.
 *
 * rdma-core does not install its provider headers (driver.h, kern-abi.h),
 * so an out-of-tree provider has to declare the interface itself. Every
 * declaration here describes memory that libibverbs reads or writes, so a
 * mistake is not a compile error but a corrupted object at run time. Three
 * things guard against that:
 *  - static_asserts pin sizes and offsets to values measured on the
 *    matching rdma-core release's own headers (x86_64, LP64): the shared
 *    ones at the end of this file, the ops table in verbs_private<N>.h;
 *  - tests/provider/pabi_layout_test.c hands these structures to the real
 *    libibverbs of each ABI and checks that it reads and writes the fields
 *    we think it does;
 *  - CMake refuses to configure against any other private ABI version.
 *
 * What changed between the ABIs (rdma-core's driver.h, v34.0 to v65.0):
 *  - 57: ibv_cmd_get_context() takes an fd array (ibvp_get_context()
 *    hides it). Every structure libsiwx shares with libibverbs kept its
 *    layout.
 *  - 59: three new op slots (alloc_dmah, dealloc_dmah, reg_mr_ex).
 *  - 64: four new op slots (alloc_buf, dm_export_dmabuf_fd, free_buf,
 *    query_port_speed).
 *  - 65: ten new op slots for completion counters (*_comp_cntr).
 * Helpers whose signature changed but which libsiwx does not call
 * (create_cq_ex, create_qp_ex2, reg_dmabuf_mr) are not declared at all.
 * The device, sysfs, match, MR, QP, CQ, SRQ and XRCD wrappers and the
 * write() command layouts (kern-abi.h) are the same in all five.
 *
 * The type names are ours (prefix ibvp_); only the function names and the
 * memory layouts have to agree with libibverbs. Structures that embed a
 * public verbs object (ibv_qp_ex, ibv_cq_ex, ...) take that object's size
 * from the <infiniband/verbs.h> we build against, which always matches the
 * libibverbs we link, so they stay right across releases even where
 * public objects grew (ibv_qp_ex gained wr_atomic_write in v43).
 */
#ifndef SIWX_VERBS_PRIVATE_BASE_H
#define SIWX_VERBS_PRIVATE_BASE_H

#if !defined(IBVP_PABI_VERSION)
#error "include verbs_private.h, which picks verbs_private<N>.h"
#endif

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

/* rdma-core's intrusive list node (ccan/list.h): two pointers. */
struct ibvp_list_node {
	struct ibvp_list_node *next;
	struct ibvp_list_node *prev;
};

/* ---- device matching and registration -------------------------------- */

/* ibvp_match_ent.kind */
enum {
	IBVP_MATCH_END = 0,	/* table terminator */
	IBVP_MATCH_PCI = 1,
	IBVP_MATCH_MODALIAS = 2,	/* fnmatch pattern against a modalias */
	IBVP_MATCH_DRIVER_ID = 3,	/* kernel enum rdma_driver_id */
};

/*
 * One row of a provider's match table. For a device without an upstream
 * driver id, libibverbs 44 first formats "rdma_device:N<ibdev name>" and
 * fnmatch()es every MODALIAS row against it, then tries device/modalias.
 */
struct ibvp_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/* What libibverbs found in sysfs/netlink about one uverbs device. */
struct ibvp_sysfs_dev {
	struct ibvp_list_node entry;
	void *provider_data;
	const struct ibvp_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;	/* the uverbs ABI version the driver reports */
	struct timespec time_created;
};

struct ibvp_device;

/* The provider's entry table, handed to verbs_register_driver_<N>(). */
struct ibvp_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct ibvp_match_ent *match_table;
	const struct ibvp_device_ops **static_providers;
	bool (*match_device)(struct ibvp_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct ibvp_device *(*alloc_device)(struct ibvp_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct ibvp_device *device);
};

/* libibverbs' per-device object; the provider allocates it (alloc_device). */
struct ibvp_device {
	struct ibv_device device;	/* first: ibv_device * is cast back */
	const struct ibvp_device_ops *ops;
	atomic_int refcount;
	struct ibvp_list_node entry;
	struct ibvp_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* ---- wrappers around public objects ---------------------------------- */

struct ibvp_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

/* ibvp_mr.mr_type */
enum {
	IBVP_MR_TYPE_MR = 0,
	IBVP_MR_TYPE_NULL_MR = 1,
	IBVP_MR_TYPE_IMPORTED_MR = 2,
	IBVP_MR_TYPE_DMABUF_MR = 3,
};

struct ibvp_mr {
	struct ibv_mr ibv_mr;
	int mr_type;		/* an enum in rdma-core: int-sized */
	int access;
};

/* ibvp_qp.comp_mask, written by ibv_cmd_create_qp_ex(); VERBS_QP_EX is
 * what ibv_qp_to_qp_ex() tests before handing out the ibv_qp_ex.
 */
enum {
	IBVP_QP_XRCD = 1 << 0,
	IBVP_QP_EX = 1 << 1,
};

struct ibvp_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct ibvp_xrcd *xrcd;
};

struct ibvp_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

struct ibvp_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct ibvp_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/*
 * Every operation a provider can implement, in libibverbs' order
 * (alphabetical). A NULL entry keeps libibverbs' default, which fails with
 * EOPNOTSUPP (verbs_init_context() installs those defaults before the
 * provider's verbs_set_ops() overlays its own). Slots are only ever
 * inserted, in alphabetical place, never removed: the #if blocks say from
 * which ABI on a slot exists (34 and 57 have the same 76).
 */
struct ibvp_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
#if IBVP_PABI_VERSION >= 64
	void *(*alloc_buf)(struct ibv_pd *pd, size_t size,
			   struct ibv_buf **buf);
#endif
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
#if IBVP_PABI_VERSION >= 59
	struct ibv_dmah *(*alloc_dmah)(struct ibv_context *context,
				       struct ibv_dmah_init_attr *attr);
#endif
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(
		struct ibv_context *context,
		struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd,
				    struct ibv_ah_attr *attr);
#if IBVP_PABI_VERSION >= 65
	struct ibv_comp_cntr *(*create_comp_cntr)(
		struct ibv_context *context,
		struct ibv_comp_cntr_init_attr *attr);
#endif
	struct ibv_counters *(*create_counters)(
		struct ibv_context *context,
		struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(
		struct ibv_context *context,
		struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
#if IBVP_PABI_VERSION >= 59
	int (*dealloc_dmah)(struct ibv_dmah *dmah);
#endif
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct ibvp_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
#if IBVP_PABI_VERSION >= 65
	int (*destroy_comp_cntr)(struct ibv_comp_cntr *cntr);
#endif
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
#if IBVP_PABI_VERSION >= 64
	int (*dm_export_dmabuf_fd)(struct ibv_dm *dm);
	void (*free_buf)(struct ibv_buf *buf);
#endif
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
#if IBVP_PABI_VERSION >= 65
	int (*inc_comp_cntr)(struct ibv_comp_cntr *cntr, uint64_t amount);
	int (*inc_err_comp_cntr)(struct ibv_comp_cntr *cntr, uint64_t amount);
#endif
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
#if IBVP_PABI_VERSION >= 65
	int (*qp_attach_comp_cntr)(struct ibv_qp *qp,
				   struct ibv_comp_cntr *cntr,
				   struct ibv_qp_attach_comp_cntr_attr *attr);
	int (*query_comp_cntr_caps)(struct ibv_context *context,
				    struct ibv_comp_cntr_caps *caps,
				    size_t caps_size);
#endif
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
#if IBVP_PABI_VERSION >= 64
	int (*query_port_speed)(struct ibv_context *context,
				uint32_t port_num, uint64_t *speed);
#endif
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp,
				      enum ibv_wr_opcode op, uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
#if IBVP_PABI_VERSION >= 65
	int (*read_comp_cntr)(struct ibv_comp_cntr *cntr, uint64_t *value);
#endif
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
#if IBVP_PABI_VERSION >= 65
	int (*read_err_comp_cntr)(struct ibv_comp_cntr *cntr, uint64_t *value);
#endif
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
#if IBVP_PABI_VERSION >= 59
	struct ibv_mr *(*reg_mr_ex)(struct ibv_pd *pd,
				    struct ibv_mr_init_attr *attr);
#endif
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct ibvp_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
#if IBVP_PABI_VERSION >= 65
	int (*set_comp_cntr)(struct ibv_comp_cntr *cntr, uint64_t value);
#endif
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
#if IBVP_PABI_VERSION >= 65
	int (*set_err_comp_cntr)(struct ibv_comp_cntr *cntr, uint64_t value);
#endif
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* ---- legacy write() command buffers ----------------------------------- */

/*
 * The ibv_cmd_* helpers take "header + core request [+ driver request]" and
 * "core response [+ driver response]" buffers. libibverbs fills the header
 * and core part; the size arguments tell it where driver data starts and
 * ends. siwx sends no driver request data, so each request buffer is just
 * the uverbs header followed by the kernel's core request.
 */
#define IBVP_DECLARE_CMD(name, core_type)                                     \
	struct ibvp_cmd_##name {                                               \
		struct ib_uverbs_cmd_hdr hdr;                                  \
		struct core_type core;                                         \
	}

IBVP_DECLARE_CMD(get_context, ib_uverbs_get_context);
IBVP_DECLARE_CMD(query_port, ib_uverbs_query_port);
IBVP_DECLARE_CMD(alloc_pd, ib_uverbs_alloc_pd);
IBVP_DECLARE_CMD(reg_mr, ib_uverbs_reg_mr);
IBVP_DECLARE_CMD(alloc_mw, ib_uverbs_alloc_mw);
IBVP_DECLARE_CMD(create_cq, ib_uverbs_create_cq);
IBVP_DECLARE_CMD(resize_cq, ib_uverbs_resize_cq);
IBVP_DECLARE_CMD(create_qp, ib_uverbs_create_qp);
IBVP_DECLARE_CMD(modify_qp, ib_uverbs_modify_qp);
IBVP_DECLARE_CMD(query_qp, ib_uverbs_query_qp);
IBVP_DECLARE_CMD(create_srq, ib_uverbs_create_srq);
IBVP_DECLARE_CMD(modify_srq, ib_uverbs_modify_srq);
IBVP_DECLARE_CMD(query_srq, ib_uverbs_query_srq);
/* Written to cmd_fd by the provider itself (the SQ and RQ doorbells). */
IBVP_DECLARE_CMD(post_send, ib_uverbs_post_send);
IBVP_DECLARE_CMD(post_recv, ib_uverbs_post_recv);

/* ---- functions exported by libibverbs as IBVERBS_PRIVATE_<N> ----------- */

/*
 * verbs_register_driver_<N>() carries the ABI in its name, so a provider
 * built for another ABI fails to load instead of corrupting memory:
 * ibvp_register_driver is verbs_register_driver_34, _57, ... as the
 * including verbs_private<N>.h set IBVP_PABI_VERSION.
 */
#define IBVP_PASTE_(a, b) a##b
#define IBVP_PASTE(a, b) IBVP_PASTE_(a, b)
#define ibvp_register_driver                                                   \
	IBVP_PASTE(verbs_register_driver_, IBVP_PABI_VERSION)
void ibvp_register_driver(const struct ibvp_device_ops *ops);

/*
 * Allocates alloc_size zeroed bytes, initialises the verbs_context found
 * context_offset bytes into them (default ops, cmd_fd, device reference)
 * and returns the start. On failure it closes cmd_fd and returns NULL.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct ibvp_context_ops *ops);
struct ibv_context *verbs_open_device(struct ibv_device *device,
				      void *private_data);

/*
 * From 57 on, ibv_cmd_get_context() can pass file descriptors to the driver
 * (an ibv_fd_arr, on the ioctl path); siwx has none, and NULL means none.
 * ibvp_get_context() is the one call the provider makes, for every ABI.
 */
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibvp_cmd_get_context *cmd, size_t cmd_size,
#if IBVP_PABI_VERSION >= 57
			struct ibv_fd_arr *fd_arr,
#endif
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);

static inline int ibvp_get_context(struct verbs_context *context,
				   struct ibvp_cmd_get_context *cmd,
				   size_t cmd_size,
				   struct ib_uverbs_get_context_resp *resp,
				   size_t resp_size)
{
#if IBVP_PABI_VERSION >= 57
	return ibv_cmd_get_context(context, cmd, cmd_size, NULL, resp,
				   resp_size);
#else
	return ibv_cmd_get_context(context, cmd, cmd_size, resp, resp_size);
#endif
}
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibvp_cmd_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibvp_cmd_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct ibvp_mr *vmr,
		   struct ibvp_cmd_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct ibvp_mr *vmr);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibvp_cmd_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibvp_cmd_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe,
		      struct ibvp_cmd_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
/*
 * What ibv_create_cq() does after the provider's create_cq (context,
 * channel and its reference, cq_context, event counters, mutex and
 * condition); a provider's create_cq_ex calls it itself.
 */
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct ibvp_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibvp_cmd_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibvp_cmd_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibvp_cmd_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibvp_cmd_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibvp_cmd_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibvp_cmd_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);

/* ---- layout pins ------------------------------------------------------- */

/*
 * Values measured by compiling rdma-core v44.0's libibverbs/driver.h and
 * kern-abi.h (x86_64, gcc) and printing sizeof/offsetof; they also follow by
 * hand from the member lists above with LP64 alignment, e.g. ibvp_sysfs_dev:
 * 16 (list) + 8 + 8 + 4 -> sysfs_name at 36, +64 = 100 -> dev_t aligned to
 * 104, +8 -> ibdev_name 112, +64 -> ibdev_path 176, +256 -> modalias 432,
 * +512 -> node_guid 944, then five 4-byte fields 952..968, timespec at 976,
 * size 992. Objects that embed public verbs structures are pinned relative
 * to those, since their absolute size follows the verbs.h we build against.
 * The definitions of these structures in driver.h are identical, member
 * for member, in v57.0, v59.0, v64.0 and 65.0 (compared release by
 * release), so the same numbers hold for every supported ABI; the ops
 * table is what differs, pinned in verbs_private<N>.h.
 */
#define IBVP_STR_(x) #x
#define IBVP_STR(x) IBVP_STR_(x)
#define IBVP_PIN(type, member, off)                                            \
	static_assert(offsetof(type, member) == (off),                         \
		      #type "." #member " is not where libibverbs private " \
		      "ABI " IBVP_STR(IBVP_PABI_VERSION) " has it")
#define IBVP_PIN_SIZE(type, size)                                              \
	static_assert(sizeof(type) == (size),                                  \
		      "sizeof(" #type ") differs from libibverbs private ABI " \
		      IBVP_STR(IBVP_PABI_VERSION))

/*
 * The ops table of one ABI: its number of slots and the slot index of ops
 * spread across the alphabet (the ones siwx sets, and the last), counted
 * in that release's struct verbs_context_ops. One line per ABI keeps the
 * numbers side by side in verbs_private<N>.h.
 */
#define IBVP_PIN_OP(name, slot)                                                \
	IBVP_PIN(struct ibvp_context_ops, name, (slot) * sizeof(void *))
#define IBVP_PIN_OPS(nops, pd, cq, qpx, dereg, freectx, modqp, poll, send,    \
		     qdev, qport, reg, notify, last)                           \
	IBVP_PIN_SIZE(struct ibvp_context_ops, (nops) * sizeof(void *));      \
	IBVP_PIN_OP(alloc_pd, pd);                                             \
	IBVP_PIN_OP(create_cq, cq);                                            \
	IBVP_PIN_OP(create_qp_ex, qpx);                                        \
	IBVP_PIN_OP(dereg_mr, dereg);                                          \
	IBVP_PIN_OP(free_context, freectx);                                    \
	IBVP_PIN_OP(modify_qp, modqp);                                         \
	IBVP_PIN_OP(poll_cq, poll);                                            \
	IBVP_PIN_OP(post_send, send);                                          \
	IBVP_PIN_OP(query_device_ex, qdev);                                    \
	IBVP_PIN_OP(query_port, qport);                                        \
	IBVP_PIN_OP(reg_mr, reg);                                              \
	IBVP_PIN_OP(req_notify_cq, notify);                                    \
	IBVP_PIN_OP(unimport_pd, last)

#if defined(__LP64__)
IBVP_PIN_SIZE(struct ibvp_match_ent, 24);
IBVP_PIN(struct ibvp_match_ent, u, 8);
IBVP_PIN(struct ibvp_match_ent, vendor, 16);
IBVP_PIN(struct ibvp_match_ent, device, 18);
IBVP_PIN(struct ibvp_match_ent, kind, 20);

IBVP_PIN_SIZE(struct ibvp_sysfs_dev, 992);
IBVP_PIN(struct ibvp_sysfs_dev, provider_data, 16);
IBVP_PIN(struct ibvp_sysfs_dev, match, 24);
IBVP_PIN(struct ibvp_sysfs_dev, flags, 32);
IBVP_PIN(struct ibvp_sysfs_dev, sysfs_name, 36);
IBVP_PIN(struct ibvp_sysfs_dev, sysfs_cdev, 104);
IBVP_PIN(struct ibvp_sysfs_dev, ibdev_name, 112);
IBVP_PIN(struct ibvp_sysfs_dev, ibdev_path, 176);
IBVP_PIN(struct ibvp_sysfs_dev, modalias, 432);
IBVP_PIN(struct ibvp_sysfs_dev, node_guid, 944);
IBVP_PIN(struct ibvp_sysfs_dev, driver_id, 952);
IBVP_PIN(struct ibvp_sysfs_dev, node_type, 956);
IBVP_PIN(struct ibvp_sysfs_dev, ibdev_idx, 960);
IBVP_PIN(struct ibvp_sysfs_dev, num_ports, 964);
IBVP_PIN(struct ibvp_sysfs_dev, abi_ver, 968);
IBVP_PIN(struct ibvp_sysfs_dev, time_created, 976);

IBVP_PIN_SIZE(struct ibvp_device_ops, 72);
IBVP_PIN(struct ibvp_device_ops, match_min_abi_version, 8);
IBVP_PIN(struct ibvp_device_ops, match_max_abi_version, 12);
IBVP_PIN(struct ibvp_device_ops, match_table, 16);
IBVP_PIN(struct ibvp_device_ops, static_providers, 24);
IBVP_PIN(struct ibvp_device_ops, match_device, 32);
IBVP_PIN(struct ibvp_device_ops, alloc_context, 40);
IBVP_PIN(struct ibvp_device_ops, import_context, 48);
IBVP_PIN(struct ibvp_device_ops, alloc_device, 56);
IBVP_PIN(struct ibvp_device_ops, uninit_device, 64);

/* ibv_device is 664 bytes on LP64 in every release (public, frozen). */
IBVP_PIN_SIZE(struct ibv_device, 664);
IBVP_PIN_SIZE(struct ibvp_device, 712);
IBVP_PIN(struct ibvp_device, ops, 664);
IBVP_PIN(struct ibvp_device, refcount, 672);
IBVP_PIN(struct ibvp_device, entry, 680);
IBVP_PIN(struct ibvp_device, sysfs, 696);
IBVP_PIN(struct ibvp_device, core_support, 704);

IBVP_PIN_SIZE(struct ibvp_xrcd, sizeof(struct ibv_xrcd) + 8);
IBVP_PIN_SIZE(struct ibvp_mr, sizeof(struct ibv_mr) + 8);
IBVP_PIN(struct ibvp_mr, mr_type, sizeof(struct ibv_mr));
IBVP_PIN(struct ibvp_mr, access, sizeof(struct ibv_mr) + 4);
IBVP_PIN(struct ibvp_qp, comp_mask, sizeof(struct ibv_qp_ex));
IBVP_PIN(struct ibvp_qp, xrcd, sizeof(struct ibv_qp_ex) + 8);
IBVP_PIN_SIZE(struct ibvp_qp, sizeof(struct ibv_qp_ex) + 16);
IBVP_PIN_SIZE(struct ibvp_cq, sizeof(struct ibv_cq_ex));
IBVP_PIN(struct ibvp_srq, srq_type, sizeof(struct ibv_srq));
IBVP_PIN(struct ibvp_srq, xrcd, sizeof(struct ibv_srq) + 8);
IBVP_PIN(struct ibvp_srq, cq, sizeof(struct ibv_srq) + 16);
IBVP_PIN(struct ibvp_srq, srq_num, sizeof(struct ibv_srq) + 24);
IBVP_PIN_SIZE(struct ibvp_srq, sizeof(struct ibv_srq) + 32);
#endif /* __LP64__ */

/* The command buffers: header, then the core request right behind it. */
IBVP_PIN(struct ibvp_cmd_get_context, core, 8);
IBVP_PIN_SIZE(struct ibvp_cmd_get_context, 16);
IBVP_PIN_SIZE(struct ibvp_cmd_query_port, 24);
IBVP_PIN_SIZE(struct ibvp_cmd_alloc_pd, 16);
IBVP_PIN_SIZE(struct ibvp_cmd_reg_mr, 48);
IBVP_PIN_SIZE(struct ibvp_cmd_alloc_mw, 24);
IBVP_PIN_SIZE(struct ibvp_cmd_create_cq, 40);
IBVP_PIN_SIZE(struct ibvp_cmd_create_qp, 64);
IBVP_PIN_SIZE(struct ibvp_cmd_modify_qp, 120);
IBVP_PIN_SIZE(struct ibvp_cmd_query_qp, 24);
IBVP_PIN_SIZE(struct ibvp_cmd_create_srq, 40);
IBVP_PIN_SIZE(struct ibvp_cmd_modify_srq, 24);
IBVP_PIN_SIZE(struct ibvp_cmd_query_srq, 24);
IBVP_PIN_SIZE(struct ibvp_cmd_post_send, 32);
IBVP_PIN(struct ibvp_cmd_post_send, core.qp_handle, 16);
IBVP_PIN_SIZE(struct ibvp_cmd_post_recv, 32);
IBVP_PIN(struct ibvp_cmd_post_recv, core.qp_handle, 16);

#endif /* SIWX_VERBS_PRIVATE_BASE_H */
