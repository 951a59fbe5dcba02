/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Data-sink bookkeeping that decides, not moves: where an untagged
 * message's octets land in the scatter list of its receive buffer, and
 * what an Immediate Data completion reports as its length.
 */
#ifndef SIWX_PROTO_RECV_H
#define SIWX_PROTO_RECV_H

#include "term.h"
#include "types.h"

/*
 * A position in a scatter list: element @idx, octet @off within it.
 * siwx_sgl_seek() finds the position of message offset @mo in a list of
 * @n element lengths; a slice of @len octets at @mo that does not fit in
 * the list's total is DDP's "message too long for available buffer".
 */
struct siwx_sgl_pos {
	u32 idx;
	u32 off;
};

bool siwx_sgl_seek(const u32 *lens, u32 n, u32 mo, u32 len,
		   struct siwx_sgl_pos *pos, struct siwx_term *err);

/*
 * RFC 7306 section 6: an RDMA Write followed by Immediate Data is an RDMA
 * Write with Immediate; the receive completion reports the Write's length
 * (as InfiniBand does). Immediate Data that does not directly follow a
 * Write reports 0. "Directly" is among the messages the peer's requester
 * issues (Writes, Sends, Read and Atomic Requests, Immediate Data); Read
 * and Atomic Responses travel in the same stream but belong to our own
 * requests and do not count.
 */
struct siwx_imm_len {
	u32 write_len;		/* octets of the Write in progress/last one */
	bool after_write;	/* the last requester message was a Write */
};

/* A complete requester message of @opcode and @len octets arrived. */
void siwx_imm_len_track(struct siwx_imm_len *t, u8 opcode, u32 len);
/* byte_len for an Immediate Data completion; then forget the Write. */
u32 siwx_imm_len_take(struct siwx_imm_len *t);

#endif /* SIWX_PROTO_RECV_H */
