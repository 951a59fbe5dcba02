/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* RX ends the stream with a Terminate (siwx_rx_term.c) */
#ifndef SIWX_RX_TERM_H
#define SIWX_RX_TERM_H

#include "siwx_conn.h"

void siwx_rx_terminate(struct siwx_conn *conn, struct siwx_term cause,
		       bool echo, bool read_req);
void siwx_rx_fault(struct siwx_conn *conn, enum siwx_access_kind kind,
		   enum siwx_access_fault fault, bool read_req);
void siwx_term_event(struct siwx_qp *qp, struct siwx_term cause);

#endif /* SIWX_RX_TERM_H */
