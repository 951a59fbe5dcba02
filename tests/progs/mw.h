/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * siwx-mw (see mw.c's top comment): what the server and the client agree
 * on. The server drives: for each case it binds, invalidates and
 * deallocates windows, then sends the client a plan, the operations to
 * run through them with the completion each must get. The parts:
 *   mw.c         main, options, connections, the client
 *   mw_server.c  the server: memory, windows, the cases and their checks
 */
#ifndef SIWX_TESTS_PROGS_MW_H
#define SIWX_TESTS_PROGS_MW_H

#include "tp_common.h"

#define MW_MAGIC 0x534957584d573031ULL	/* "SIWX" "MW01" */
#define MEM_LEN 65536u			/* the server's MR */
#define WIN_OFF 4096u			/* the windows' usual place in it */
#define WIN_LEN 512u
#define MAX_OPS 6
#define EXPECT_ANY 0xffffu		/* a Write refused by the responder
					 * completes as sent */
/*
 * The WR after such a Write: the Terminate fails it with a remote access
 * error if it is in flight, or it is flushed if the QP is in error
 * before it goes; either, never success.
 */
#define EXPECT_ERROR 0xfffeu
#define OPS_CQE 16

/* Cases, in the order the client runs them. */
enum mw_case {
	MC_T1_OPS,		/* type 1: Write, Read, FetchAdd, CmpSwap */
	MC_T2_OPS,		/* type 2 (ibv_wr_bind_mw): the same */
	MC_T1_REBIND,		/* the new key and bounds; the old key dead */
	MC_T1_UNBOUND,		/* after a zero-length bind */
	MC_T2_LOCAL_INV,	/* after IBV_WR_LOCAL_INV */
	MC_T2_REMOTE_INV,	/* the client's Send with Invalidate */
	MC_OOB_WRITE,		/* a Write running past the window's end */
	MC_OOB_READ,		/* a Read running past it */
	MC_OOB_BELOW,		/* an atomic just before the window */
	MC_RIGHTS_WRITE,	/* a Write through a read-only window */
	MC_RIGHTS_ATOMIC,	/* an atomic through a window without it */
	MC_MR_RKEY,		/* the MR's own STag: no remote rights */
	MC_OTHER_QP,		/* a type 2 window of another connection */
	MC_OTHER_PD,		/* a type 1 window of another PD */
	MC_BIND_OOB,		/* binds the server's kernel must refuse */
	MC_BIND_OTHER_PD,
	MC_BIND_NO_MW_BIND,
	MC_BIND_T2_BOUND,
	MC_BIND_ZERO_BASED,
	MC_DEREG_BUSY,		/* dereg with a window bound; dealloc */
	NCASES
};

extern const char *const mw_case_name[NCASES];

enum mw_op_kind { OP_WRITE = 1, OP_READ, OP_FADD, OP_CAS, OP_SEND_INV };

/*
 * One operation of a plan. WRITE: @len octets of pattern @a. READ: @len
 * octets, which hold pattern @a when @a is not 0. FADD: add @a. CAS:
 * compare @a, swap @b. Atomics return @want. SEND_INV: an 8-octet Send
 * with Invalidate of @rkey. @expect: the completion status, or EXPECT_ANY.
 */
struct mw_op {
	uint32_t kind, expect;
	uint32_t rkey, len;
	uint64_t addr, a, b, want;
};

enum { PLAN_SECOND = 1,		/* open a second connection for the ops */
       PLAN_SERVER_ONLY = 2 };	/* no ops: wait for the server's close */

/* The server's Send at the start of each connection. */
struct mw_plan {
	uint64_t magic;
	uint32_t mcase, flags;
	uint32_t nops, reserved;
	struct mw_op op[MAX_OPS];
};

/* The client's Send after a plan whose operations all succeeded. */
struct mw_done {
	uint64_t magic;
	uint64_t mcase;
};

struct mw_opts {
	struct tp_role r;
};

int mw_server(const struct mw_opts *o, struct rdma_event_channel *ec);
/* Both sides' QPs: room for a plan, binds and Local Invalidate. */
struct tp_qp_opts mw_qp_opts(void);

#endif
