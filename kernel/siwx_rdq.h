/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A connection's outstanding Read and Atomic Requests (siwx_rdq.c): the
 * ORQ of those we sent, the IRQ of those we owe a response.
 */
#ifndef SIWX_RDQ_H
#define SIWX_RDQ_H

#include "siwx_conn.h"

bool siwx_orq_stalls(struct siwx_conn *conn, bool takes_slot,
		     bool waits_empty);
int siwx_orq_push(struct siwx_conn *conn, u32 pos,
		  const struct siwx_read_req *read,
		  const struct siwx_atomic_req *atomic,
		  const struct siwx_sge *sink);
bool siwx_orq_read_response(struct siwx_conn *conn,
			    const struct siwx_ddp_hdr *ddp, u32 len,
			    bool *complete, struct siwx_term *err);
bool siwx_orq_atomic_response(struct siwx_conn *conn,
			      const struct siwx_atomic_resp *r, u64 *cookie,
			      struct siwx_sge *sink, struct siwx_term *err);
void siwx_orq_pop(struct siwx_conn *conn);
bool siwx_orq_pop_oldest(struct siwx_conn *conn, u64 *cookie);

int siwx_irq_accept(struct siwx_conn *conn, const struct siwx_ddp_hdr *ddp,
		    const struct siwx_read_req *read,
		    const struct siwx_atomic_req *atomic,
		    struct siwx_term *err);
void siwx_irq_set_ready(struct siwx_conn *conn, int idx, u64 orig);
bool siwx_irq_ready(struct siwx_conn *conn);
bool siwx_irq_take_ready(struct siwx_conn *conn, struct siwx_rdq_entry *ent,
			 u64 *orig);

#endif /* SIWX_RDQ_H */
