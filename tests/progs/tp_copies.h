/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * siwx's payload counters (kernel/siwx_copies.c, debugfs siwx/copies):
 * how often the octets a program moved were copied and checksummed, and
 * a check of them against what the program knows it sent and received.
 */
#ifndef SIWX_TESTS_PROGS_TP_COPIES_H
#define SIWX_TESTS_PROGS_TP_COPIES_H

#include <stdbool.h>
#include <stdint.h>

struct tp_copies {
	uint64_t tx_payload;
	uint64_t tx_copied_siwx;
	uint64_t tx_copied_tcp;
	uint64_t tx_crc;
	uint64_t tx_crc_fused;
	uint64_t tx_zerocopy;
	uint64_t tx_zerocopy_copied;
	uint64_t rx_payload;
	uint64_t rx_copied_siwx;
	uint64_t rx_crc;
	uint64_t rx_crc_fused;
	uint64_t tx_stage_new;		/* pages, not octets */
	uint64_t tx_stage_reused;
	uint64_t tx_fpdus;
};

/* The counters now; false (after tp_fail()) when siwx has none here. */
bool tp_copies_read(struct tp_copies *c);

/*
 * Since @before this machine's siwx sent exactly @tx payload octets and
 * received exactly @rx (no other program used it meanwhile); each received
 * octet was copied once, the CRC read each octet once when MPA CRCs are on
 * (the siwx module's mpa_crc, the same on both sides) and never when off,
 * in the same pass as the octet's copy, and sending copied each octet at
 * most once: into the stage, whose pages TCP takes by reference (with
 * CRCs, and without them while the stage keeps its pages, tx_pool), or
 * by TCP, or by reference from the application's memory (zero-copy WRs
 * and Read Responses, zc_min; never with CRCs; the network stack may
 * still copy a zero-copy WR after all, which counts as a copy). Without
 * CRCs exactly @zc_tx of the octets sent went by reference. A staged
 * send of 16 MiB or more without zero-copy WRs reused some stage pages.
 * Logs the figures; tp_fail() for each that does not hold.
 */
void tp_copies_check(const struct tp_copies *before, uint64_t tx, uint64_t rx,
		     uint64_t zc_tx, const char *who);

/*
 * Every connection of this machine's siwx idle (none sends), open or not:
 * the stage's page pools give their budget back within a few seconds
 * (debugfs siwx/objects, tx_pool_taken). tp_fail() when they do not.
 */
void tp_pool_idle_check(const char *who);

/* The siwx module's zc_min: the smallest WR payload sent zero-copy. */
uint64_t tp_zc_min(void);

/*
 * Whether siwx sends a payload of @len octets (a Send's, Write's or Read
 * Response's) by reference without CRCs: from zc_min on
 * (docs/performance.md, "Read Responses: copied").
 */
bool tp_sent_by_ref(uint64_t len);

#endif /* SIWX_TESTS_PROGS_TP_COPIES_H */
