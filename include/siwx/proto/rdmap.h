/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * RDMAP opcodes and their use of DDP (RFC 5040 section 4.1, figures 4 and
 * 5; RFC 7306 section 4, figures 2 and 3), and the RDMA Read Request
 * header (RFC 5040 section 4.4).
 */
#ifndef SIWX_PROTO_RDMAP_H
#define SIWX_PROTO_RDMAP_H

#include "term.h"
#include "types.h"

#define SIWX_RDMAP_VERSION 1	/* RV 01b: RFC 5040 */

enum siwx_rdmap_opcode {
	SIWX_OP_WRITE = 0x0,
	SIWX_OP_READ_REQ = 0x1,
	SIWX_OP_READ_RESP = 0x2,
	SIWX_OP_SEND = 0x3,
	SIWX_OP_SEND_INVAL = 0x4,
	SIWX_OP_SEND_SE = 0x5,
	SIWX_OP_SEND_SE_INVAL = 0x6,
	SIWX_OP_TERMINATE = 0x7,
	/* RFC 7306 */
	SIWX_OP_IMM = 0x8,
	SIWX_OP_IMM_SE = 0x9,
	SIWX_OP_ATOMIC_REQ = 0xa,
	SIWX_OP_ATOMIC_RESP = 0xb,
};

#define SIWX_OP_COUNT 12

/* Untagged queue numbers (RFC 5040 figure 4, RFC 7306 section 4.1). */
enum siwx_qn {
	SIWX_QN_SEND = 0,	/* Sends and Immediate Data */
	SIWX_QN_READ = 1,	/* Read Requests and Atomic Requests */
	SIWX_QN_TERM = 2,	/* Terminate */
	SIWX_QN_ATOMIC_RESP = 3,	/* Atomic Responses */
};

#define SIWX_QN_COUNT 4

/* How an opcode uses DDP and which RDMAP header it carries. */
struct siwx_opinfo {
	bool tagged;
	u8 qn;		/* untagged only */
	/*
	 * Header-only messages carry exactly an RDMAP header and no ULP
	 * payload; its length must lie in [hdr_min, hdr_max] (equal except
	 * for the Terminate header, whose echoed headers are optional).
	 */
	bool hdr_only;
	u8 hdr_min;
	u8 hdr_max;
	bool solicited;	/* carries a Solicited Event */
	bool invalidate;	/* carries an Invalidate STag */
};

extern const struct siwx_opinfo siwx_opinfo_table[SIWX_OP_COUNT];

/*
 * NULL for an opcode that RFC 5040 and RFC 7306 do not define. Inline:
 * the receiver sizes and decodes every FPDU's headers with it.
 */
static inline const struct siwx_opinfo *siwx_opinfo(u8 opcode)
{
	return opcode < SIWX_OP_COUNT ? &siwx_opinfo_table[opcode] : NULL;
}

#define SIWX_READ_REQ_LEN 28

struct siwx_read_req {
	u32 sink_stag;
	u64 sink_to;
	u32 size;
	u32 src_stag;
	u64 src_to;
};

size_t siwx_read_req_encode(const struct siwx_read_req *r, u8 *buf);
void siwx_read_req_decode(const u8 *buf, struct siwx_read_req *r);

#endif /* SIWX_PROTO_RDMAP_H */
