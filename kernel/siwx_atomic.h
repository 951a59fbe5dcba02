/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* RFC 7306 atomics on registered memory (siwx_atomic.c) */
#ifndef SIWX_ATOMIC_H
#define SIWX_ATOMIC_H

#include <siwx/proto/rfc7306.h>
#include <siwx/proto/term.h>

#include "siwx.h"

int siwx_atomic_execute(struct siwx_qp *qp,
			const struct siwx_atomic_req *req, u64 *orig,
			struct siwx_term *err);
int siwx_atomic_result(struct siwx_qp *qp, const struct siwx_sge *sink,
		       u64 value);

#endif /* SIWX_ATOMIC_H */
