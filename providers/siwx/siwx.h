/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * libsiwx objects: each wraps the libibverbs object it extends, so the
 * verbs handle an application holds converts back with container_of.
 */
#ifndef SIWX_H
#define SIWX_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <siwx/abi.h>

#include "ring.h"
#include "verbs_private.h"
#include "wqe.h"

#define siwx_container_of(ptr, type, member)                                   \
	((type *)((uint8_t *)(ptr) - offsetof(type, member)))

struct siwx_device {
	struct ibvp_device ibvp_dev;
};

struct siwx_context {
	struct verbs_context vctx;
	uint32_t dev_id;
	uint32_t max_inline;
};

struct siwx_cq {
	struct ibvp_cq vcq;
	pthread_spinlock_t lock;
	uint32_t id;
	struct siwx_ring ring;		/* consumer side */
	struct siwx_cq_ctrl *ctrl;
	void *map;			/* the reserved range (cq.c) */
	size_t map_len;			/* of the ring at its start */
	/* The extended CQ (cq_ex.c) */
	struct siwx_cqe *cur;		/* the completion start/next_poll gave */
	uint64_t wc_flags;
	bool single_threaded;
};

struct siwx_srq {
	struct ibvp_srq vsrq;
	pthread_spinlock_t lock;
	struct siwx_ring ring;		/* producer side */
	uint32_t max_sge;
	void *map;
	size_t map_len;
};

struct siwx_qp {
	struct ibvp_qp vqp;
	pthread_spinlock_t sq_lock;
	pthread_spinlock_t rq_lock;
	uint32_t id;
	bool sig_all;
	uint64_t send_ops;		/* ibv_qp_ex send_ops_flags enabled */
	struct siwx_sq_limits lim;
	uint32_t max_recv_sge;

	struct siwx_ring sq;		/* producer side */
	struct siwx_sq_ctrl *sq_ctrl;
	void *sq_map;
	size_t sq_map_len;

	struct siwx_ring rq;		/* producer side, unused with an SRQ */
	void *rq_map;
	size_t rq_map_len;
	struct siwx_srq *srq;

	/* ibv_qp_ex batch between wr_start and wr_complete/wr_abort */
	struct {
		uint32_t first;		/* ring position of the first WR */
		uint32_t count;		/* WRs staged, not yet published */
		bool open;		/* a WR is being built in .sqe */
		int err;		/* first error, for wr_complete */
		struct siwx_sqe sqe;
	} batch;

	/* zero-WR POST_SEND written to cmd_fd to wake the TX engine */
	struct ibvp_cmd_post_send db_cmd;
	struct ib_uverbs_post_send_resp db_resp;
	/* zero-WR POST_RECV: flush receives posted to a dead QP (abi.h) */
	struct ibvp_cmd_post_recv rdb_cmd;
	struct ib_uverbs_post_recv_resp rdb_resp;
};

static inline struct siwx_context *to_sctx(struct ibv_context *ctx)
{
	return siwx_container_of(ctx, struct siwx_context, vctx.context);
}

static inline struct siwx_cq *to_scq(struct ibv_cq *cq)
{
	return siwx_container_of(cq, struct siwx_cq, vcq.cq);
}

static inline struct siwx_qp *to_sqp(struct ibv_qp *qp)
{
	return siwx_container_of(qp, struct siwx_qp, vqp.qp);
}

static inline struct siwx_qp *qpx_to_sqp(struct ibv_qp_ex *qpx)
{
	return siwx_container_of(qpx, struct siwx_qp, vqp.qp_ex);
}

static inline struct siwx_srq *to_ssrq(struct ibv_srq *srq)
{
	return siwx_container_of(srq, struct siwx_srq, vsrq.srq);
}

/* The device entry table; siwxdv uses it to recognise siwx objects. */
extern const struct ibvp_device_ops siwx_dev_ops;

/* verbs.c */
int siwx_query_device_ex(struct ibv_context *ctx,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int siwx_query_port(struct ibv_context *ctx, uint8_t port,
		    struct ibv_port_attr *attr);
struct ibv_pd *siwx_alloc_pd(struct ibv_context *ctx);
int siwx_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *siwx_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			   uint64_t hca_va, int access);
int siwx_dereg_mr(struct ibvp_mr *vmr);
struct ibv_mw *siwx_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int siwx_dealloc_mw(struct ibv_mw *mw);
int siwx_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *bind);

/* cq.c */
struct siwx_cq *siwx_cq_new(struct ibv_context *ctx, int num_cqe,
			    struct ibv_comp_channel *channel, int comp_vector);
struct ibv_cq *siwx_create_cq(struct ibv_context *ctx, int num_cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector);
int siwx_resize_cq(struct ibv_cq *cq, int num_cqe);
int siwx_destroy_cq(struct ibv_cq *cq);
int siwx_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc);
int siwx_poll_cq_imm8(struct ibv_cq *cq, int num, struct ibv_wc *wc,
		      uint8_t (*imm)[SIWX_IMM_LEN]);
int siwx_req_notify_cq(struct ibv_cq *cq, int solicited_only);

/* cq_ex.c */
struct ibv_cq_ex *siwx_create_cq_ex(struct ibv_context *ctx,
				    struct ibv_cq_init_attr_ex *attr);
void siwx_cq_ex_read_imm8(struct ibv_cq_ex *cqx, uint8_t imm[SIWX_IMM_LEN]);
int siwx_query_rt_values(struct ibv_context *ctx, struct ibv_values_ex *values);

/* qp.c */
struct ibv_qp *siwx_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *siwx_create_qp_ex(struct ibv_context *ctx,
				 struct ibv_qp_init_attr_ex *attr);
int siwx_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
int siwx_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		  struct ibv_qp_init_attr *init_attr);
int siwx_destroy_qp(struct ibv_qp *qp);
int siwx_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int siwx_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);
int siwx_ring_recv(struct siwx_ring *ring, pthread_spinlock_t *lock,
		   uint32_t max_sge, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);

/* doorbell.c */
void siwx_qp_init_doorbell(struct siwx_qp *qp);
void siwx_sq_doorbell(struct siwx_qp *qp);
void siwx_rq_doorbell(struct siwx_qp *qp);

/* qp_ex.c */
void siwx_qp_ex_init(struct siwx_qp *qp);
/* Start a new WR of the current batch in qp->batch.sqe (false: refused). */
bool siwx_wr_begin(struct siwx_qp *qp, uint64_t op_flag);

/* srq.c */
struct ibv_srq *siwx_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr);
int siwx_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask);
int siwx_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int siwx_destroy_srq(struct ibv_srq *srq);
int siwx_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);

#endif /* SIWX_H */
