/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * An in-process stand-in for the uverbs character device, so the provider
 * can run against the real libibverbs without siwx.ko. The test binary
 * defines write(), ioctl(), mmap(), stat() and socket(); calls on
 * FAKE_UVERBS_FD (the cmd_fd libibverbs hands a device without a sysfs
 * node: -1) or on the fake device paths are served here, everything else
 * goes straight to the kernel.
 *
 * The fake answers the legacy write() commands the way ib_uverbs does:
 * the response (core struct + siwx udata) is written to the address in
 * the request's response field, whose size out_words gives. The ioctl()
 * interface reports ENOTTY, so libibverbs uses write() throughout.
 */
#ifndef FAKE_UVERBS_H
#define FAKE_UVERBS_H

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <siwx/abi.h>
#include <stddef.h>
#include <stdint.h>

#define FAKE_UVERBS_FD (-1)
#define FAKE_NUM_SQE 4
#define FAKE_NUM_RQE 4
#define FAKE_NUM_CQE 8
#define FAKE_RESIZED_CQE 32 /* what the fake kernel resizes every CQ to */
#define FAKE_MAX_INLINE 64

struct fake_queue {
    uint64_t key;
    void* mem;
    size_t len;
    int mapped;
};

struct fake_uverbs {
    unsigned int ncmd[64];     /* per IB_USER_VERBS_CMD_* */
    unsigned int in_bytes[64]; /* of the last command */
    unsigned int out_bytes[64];
    unsigned int doorbells;
    unsigned int bad; /* malformed commands seen */
    struct ib_uverbs_reg_mr last_reg_mr;
    struct ib_uverbs_alloc_mw last_alloc_mw;
    struct ib_uverbs_modify_qp last_modify_qp;
    struct ib_uverbs_create_qp last_create_qp;
    uint32_t last_resize_cqe;
    uint32_t last_db_qp_handle;
    uint32_t last_rdb_qp_handle; /* of the last receive doorbell */
    struct fake_queue q[16];
    int nq;
    /* the most recently created rings */
    struct siwx_cqe* cq;
    struct siwx_cq_ctrl* cq_ctrl;
    struct siwx_sqe* sq;
    struct siwx_sq_ctrl* sq_ctrl;
    struct siwx_rqe* rq;
    struct siwx_rqe* srq;
};

extern struct fake_uverbs fake;

/* Build a throw-away sysfs tree with a device that libsiwx must claim
 * (siwx9), one with the wrong ABI (siwx8) and one of another name
 * (rxe7); returns the tree's path for SYSFS_PATH. */
const char* fake_sysfs_create(void);

#endif /* FAKE_UVERBS_H */
