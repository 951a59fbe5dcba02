// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* siwx's payload counters, read and checked (tp_copies.h). */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp_common.h"
#include "tp_copies.h"

#define COPIES_PATH "/sys/kernel/debug/siwx/copies"
#define MPA_CRC_PATH "/sys/module/siwx/parameters/mpa_crc"
#define ZC_MIN_PATH "/sys/module/siwx/parameters/zc_min"
#define TX_POOL_PATH "/sys/module/siwx/parameters/tx_pool"
#define FPDU_SEGS_PATH "/sys/module/siwx/parameters/mpa_fpdu_segs"
#define OBJECTS_PATH "/sys/kernel/debug/siwx/objects"
/*
 * A connection gives its stage pages back after 2 s without a page in or
 * out, seen by a check every 2 s (kernel/siwx_tx_pool.c): 4 s, and room
 */
#define TP_POOL_IDLE_MS 8000
/* A send this long reuses stage pages if the pool works at all */
#define TP_POOL_STREAM (16ULL << 20)

static const struct {
	const char *name;
	size_t off;
} fields[] = {
#define F(n) { #n, offsetof(struct tp_copies, n) }
	F(tx_payload), F(tx_copied_siwx), F(tx_copied_tcp), F(tx_crc),
	F(tx_crc_fused), F(tx_zerocopy), F(tx_zerocopy_copied), F(rx_payload), F(rx_copied_siwx), F(rx_crc),
	F(rx_crc_fused), F(tx_stage_new), F(tx_stage_reused), F(tx_fpdus),
#undef F
};

static uint64_t *field(struct tp_copies *c, unsigned int i)
{
	return (uint64_t *)((char *)c + fields[i].off);
}

static uint64_t value(const struct tp_copies *c, unsigned int i)
{
	return *(const uint64_t *)((const char *)c + fields[i].off);
}

bool tp_copies_read(struct tp_copies *c)
{
	FILE *f = fopen(COPIES_PATH, "r");
	unsigned int seen = 0, i;
	char name[64];
	uint64_t v;

	memset(c, 0, sizeof(*c));
	if (!f) {
		tp_fail("%s: %s (siwx loaded, debugfs mounted?)", COPIES_PATH,
			strerror(errno));
		return false;
	}
	while (fscanf(f, "%63s %" SCNu64, name, &v) == 2)
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			if (!strcmp(name, fields[i].name)) {
				*field(c, i) = v;
				seen |= 1u << i;
			}
	fclose(f);
	if (seen != (1u << (sizeof(fields) / sizeof(fields[0]))) - 1) {
		tp_fail("%s lacks counters (0x%x of them read)", COPIES_PATH,
			seen);
		return false;
	}
	return true;
}

/* A siwx module parameter's value, "" when there is none */
static void read_param(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)n, f))
		buf[0] = '\0';
	fclose(f);
}

static bool mpa_crc_on(void)
{
	char v[8];

	read_param(MPA_CRC_PATH, v, sizeof(v));
	return v[0] == 'Y' || v[0] == '1';
}

static void expect(const char *who, const char *what, uint64_t got,
		   uint64_t want)
{
	if (got != want)
		tp_fail("%s: %s: %" PRIu64 " octets, expected %" PRIu64, who,
			what, got, want);
}

uint64_t tp_zc_min(void)
{
	char v[24];

	read_param(ZC_MIN_PATH, v, sizeof(v));
	return strtoull(v, NULL, 10);
}

/*
 * With the stage keeping its pages (tx_pool), siwx copies what it does
 * not send by reference, CRCs or not, and TCP takes the copy by reference
 */
static bool tx_pool_on(void)
{
	char v[24];

	read_param(TX_POOL_PATH, v, sizeof(v));
	return strtoull(v, NULL, 10) != 0;
}

bool tp_sent_by_ref(uint64_t len)
{
	uint64_t zc_min = tp_zc_min();

	return zc_min && len >= zc_min;
}

void tp_copies_check(const struct tp_copies *before, uint64_t tx, uint64_t rx,
		     uint64_t zc_tx, const char *who)
{
	struct tp_copies a, d;
	bool crc = mpa_crc_on();
	bool staged = crc || tx_pool_on();
	uint64_t tx_copies;
	unsigned int i;
	char segs[24];

	if (!tp_copies_read(&a))
		return;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		*field(&d, i) = value(&a, i) - value(before, i);
	tx_copies = d.tx_copied_siwx + d.tx_copied_tcp + d.tx_zerocopy_copied;
	tp_log("%s: copies per payload octet: TX %.2f (siwx %.2f, TCP %.2f), "
	       "RX %.2f; CRC passes: TX %.2f, RX %.2f; of them fused with "
	       "the copy: TX %.2f, RX %.2f; by reference TX %.2f, of it copied "
	       "by the stack %.2f (mpa_crc %s)", who,
	       tx ? (double)tx_copies / (double)tx : 0.0,
	       tx ? (double)d.tx_copied_siwx / (double)tx : 0.0,
	       tx ? (double)d.tx_copied_tcp / (double)tx : 0.0,
	       rx ? (double)d.rx_copied_siwx / (double)rx : 0.0,
	       tx ? (double)d.tx_crc / (double)tx : 0.0,
	       rx ? (double)d.rx_crc / (double)rx : 0.0,
	       tx ? (double)d.tx_crc_fused / (double)tx : 0.0,
	       rx ? (double)d.rx_crc_fused / (double)rx : 0.0,
	       tx ? (double)d.tx_zerocopy / (double)tx : 0.0,
	       tx ? (double)d.tx_zerocopy_copied / (double)tx : 0.0,
	       crc ? "on" : "off");
	expect(who, "payload sent", d.tx_payload, tx);
	expect(who, "payload received", d.rx_payload, rx);
	expect(who, "received octets copied", d.rx_copied_siwx, rx);
	expect(who, "sent octets the CRC read", d.tx_crc, crc ? tx : 0);
	expect(who, "received octets the CRC read", d.rx_crc, crc ? rx : 0);
	/* One pass over each octet for its copy and its CRC, not two */
	expect(who, "sent octets the CRC read as they were copied",
	       d.tx_crc_fused, crc ? tx : 0);
	expect(who, "received octets the CRC read as they were placed",
	       d.rx_crc_fused, crc ? rx : 0);
	if (tx_copies > tx)
		tp_fail("%s: %" PRIu64 " octets copied to send %" PRIu64
			", more than one copy a payload octet", who, tx_copies,
			tx);
	if (crc)
		expect(who, "sent octets TCP took from the application's "
		       "memory, with CRCs", d.tx_zerocopy, 0);
	else if (staged)
		expect(who, "sent octets siwx copied or TCP took by reference",
		       d.tx_copied_siwx + d.tx_zerocopy, tx);
	else
		expect(who, "sent octets TCP copied or took by reference",
		       d.tx_copied_tcp + d.tx_zerocopy, tx);
	if (!crc && d.tx_zerocopy != zc_tx)
		tp_fail("%s: %" PRIu64 " octets sent by reference, expected "
			"%" PRIu64, who, d.tx_zerocopy, zc_tx);
	if (d.tx_zerocopy_copied > d.tx_zerocopy)
		tp_fail("%s: %" PRIu64 " octets sent by reference copied, of %"
			PRIu64, who, d.tx_zerocopy_copied, d.tx_zerocopy);
	tp_log("%s: stage pages: %" PRIu64 " new, %" PRIu64 " reused", who,
	       d.tx_stage_new, d.tx_stage_reused);
	read_param(FPDU_SEGS_PATH, segs, sizeof(segs));
	segs[strcspn(segs, "\n")] = '\0';
	/* Scenarios judge the size against the link's MSS (siwx-lossy-link) */
	tp_log("%s: FPDUs sent: %" PRIu64 ", %" PRIu64 " payload octets "
	       "each (mpa_fpdu_segs %s)", who, d.tx_fpdus,
	       d.tx_fpdus ? d.tx_payload / d.tx_fpdus : 0, segs);
	/*
	 * A stream of 16 MiB staged into pages that the pool keeps must have
	 * found some of them let go of by TCP (95% on an idle link)
	 */
	if (staged && tx_pool_on() && !zc_tx && tx >= TP_POOL_STREAM &&
	    !d.tx_stage_reused)
		tp_fail("%s: %" PRIu64 " octets sent through %" PRIu64
			" new stage pages, none reused (tx_pool)", who, tx,
			d.tx_stage_new);
	if (staged && d.tx_copied_tcp)
		tp_fail("%s: TCP copied %" PRIu64 " octets of the stage, "
			"which it takes by reference", who, d.tx_copied_tcp);
}

/* The stage's budget held (debugfs siwx/objects, "tx_pool_taken N") */
static bool pool_taken(uint64_t *taken)
{
	FILE *f = fopen(OBJECTS_PATH, "r");
	char name[64];
	uint64_t v;
	bool seen = false;

	if (!f) {
		tp_fail("%s: %s (siwx loaded, debugfs mounted?)", OBJECTS_PATH,
			strerror(errno));
		return false;
	}
	while (fscanf(f, "%63s %" SCNu64, name, &v) == 2)
		if (!strcmp(name, "tx_pool_taken")) {
			*taken = v;
			seen = true;
		}
	fclose(f);
	if (!seen)
		tp_fail("%s has no tx_pool_taken", OBJECTS_PATH);
	return seen;
}

void tp_pool_idle_check(const char *who)
{
	uint64_t t0 = tp_now_ms(), held, taken;

	if (!pool_taken(&held))
		return;
	for (taken = held; taken;) {
		if (tp_now_ms() - t0 > TP_POOL_IDLE_MS) {
			tp_fail("%s: the stage's pools still hold %" PRIu64
				" pages of budget after %d ms idle", who,
				taken, TP_POOL_IDLE_MS);
			return;
		}
		usleep(100 * 1000);
		if (!pool_taken(&taken))
			return;
	}
	tp_log("%s: stage page budget held when idle: %" PRIu64
	       " pages, given back within %" PRIu64 " ms", who, held,
	       tp_now_ms() - t0);
}
