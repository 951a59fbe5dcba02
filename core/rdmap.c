// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* RDMAP opcode table and the RDMA Read Request header (RFC 5040 4.4). */
#include <siwx/proto/bytes.h>
#include <siwx/proto/rdmap.h>
#include <siwx/proto/rfc7306.h>

/*
 * RFC 5040 figures 4/5 and RFC 7306 figures 2/3. The Terminate header is
 * 4 bytes of Terminate Control plus, optionally, the segment length and
 * the echoed DDP and RDMA headers (section 4.8).
 */
const struct siwx_opinfo siwx_opinfo_table[SIWX_OP_COUNT] = {
	[SIWX_OP_WRITE] = { .tagged = true },
	[SIWX_OP_READ_REQ] = { .qn = SIWX_QN_READ, .hdr_only = true,
			       .hdr_min = SIWX_READ_REQ_LEN,
			       .hdr_max = SIWX_READ_REQ_LEN },
	[SIWX_OP_READ_RESP] = { .tagged = true },
	[SIWX_OP_SEND] = { .qn = SIWX_QN_SEND },
	[SIWX_OP_SEND_INVAL] = { .qn = SIWX_QN_SEND, .invalidate = true },
	[SIWX_OP_SEND_SE] = { .qn = SIWX_QN_SEND, .solicited = true },
	[SIWX_OP_SEND_SE_INVAL] = { .qn = SIWX_QN_SEND, .solicited = true,
				    .invalidate = true },
	[SIWX_OP_TERMINATE] = { .qn = SIWX_QN_TERM, .hdr_only = true,
				.hdr_min = SIWX_TERM_CTRL_LEN,
				.hdr_max = SIWX_TERM_MAX_LEN },
	[SIWX_OP_IMM] = { .qn = SIWX_QN_SEND, .hdr_only = true,
			  .hdr_min = SIWX_IMM_LEN, .hdr_max = SIWX_IMM_LEN },
	[SIWX_OP_IMM_SE] = { .qn = SIWX_QN_SEND, .hdr_only = true,
			     .hdr_min = SIWX_IMM_LEN, .hdr_max = SIWX_IMM_LEN,
			     .solicited = true },
	[SIWX_OP_ATOMIC_REQ] = { .qn = SIWX_QN_READ, .hdr_only = true,
				 .hdr_min = SIWX_ATOMIC_REQ_LEN,
				 .hdr_max = SIWX_ATOMIC_REQ_LEN },
	[SIWX_OP_ATOMIC_RESP] = { .qn = SIWX_QN_ATOMIC_RESP, .hdr_only = true,
				  .hdr_min = SIWX_ATOMIC_RESP_LEN,
				  .hdr_max = SIWX_ATOMIC_RESP_LEN },
};

size_t siwx_read_req_encode(const struct siwx_read_req *r, u8 *buf)
{
	siwx_put_be32(buf, r->sink_stag);
	siwx_put_be64(buf + 4, r->sink_to);
	siwx_put_be32(buf + 12, r->size);
	siwx_put_be32(buf + 16, r->src_stag);
	siwx_put_be64(buf + 20, r->src_to);
	return SIWX_READ_REQ_LEN;
}

void siwx_read_req_decode(const u8 *buf, struct siwx_read_req *r)
{
	r->sink_stag = siwx_get_be32(buf);
	r->sink_to = siwx_get_be64(buf + 4);
	r->size = siwx_get_be32(buf + 12);
	r->src_stag = siwx_get_be32(buf + 16);
	r->src_to = siwx_get_be64(buf + 20);
}
