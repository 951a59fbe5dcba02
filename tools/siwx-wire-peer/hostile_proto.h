/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What siwx-wire-peer (tools/siwx-wire-peer) and its verbs server
 * (tests/progs/hostile_target.c) agree on, in plain C for both.
 *
 * The server registers a target region between two guard areas and
 * fills it with a fixed pattern, so that the peer can say before it
 * connects which word a case changes and to what. Private data travels
 * as big-endian 64-bit words:
 *   MPA Request (peer):  magic, receives to post, flags, word, value
 *   MPA Reply (server):  magic, target address, length, rkey, ro_rkey
 * ro_rkey is a second registration of the same target with
 * REMOTE_READ only (no remote write, no atomic).
 */
#ifndef SIWX_HOSTILE_PROTO_H
#define SIWX_HOSTILE_PROTO_H

#include <stdint.h>

#define SIWX_HP_PORT 7471
#define SIWX_HP_REQ_MAGIC 0x5349575848505251ULL /* "SIWXHPRQ" */
#define SIWX_HP_ACC_MAGIC 0x5349575848504143ULL /* "SIWXHPAC" */
#define SIWX_HP_REQ_WORDS 5
#define SIWX_HP_ACC_WORDS 5

/* Flags of the request: one target word must hold @value afterwards. */
#define SIWX_HP_FLAG_CHANGE 0x1
/*
 * siwx-wire-fuzz: a page-aligned target of SIWX_HP_FUZZ_TARGET_LEN
 * between two canary pages, the receives of the request word 1 (up to
 * SIWX_HP_FUZZ_MAX_RECVS of SIWX_HP_FUZZ_RECV_LEN octets), contents
 * arbitrary; LAST: the run's last connection, the server stops after it.
 */
#define SIWX_HP_FLAG_FUZZ 0x2
#define SIWX_HP_FLAG_LAST 0x4
#define SIWX_HP_FUZZ_TARGET_LEN 4096
#define SIWX_HP_FUZZ_MAX_RECVS 64
#define SIWX_HP_FUZZ_RECV_LEN 128
#define SIWX_HP_CANARY_BYTE 0x5c

#define SIWX_HP_TARGET_LEN 256 /* registered, 32 words */
#define SIWX_HP_GUARD_LEN 64   /* unregistered, each side */
#define SIWX_HP_GUARD_BYTE 0xa5

/* The initial value of target word @i (an odd multiplier: all distinct). */
static inline uint64_t siwx_hp_pattern(uint32_t i) {
    return 0x0123456789abcdefULL ^ ((uint64_t)(i + 1) * 0x9e3779b97f4a7c15ULL);
}

#endif /* SIWX_HOSTILE_PROTO_H */
