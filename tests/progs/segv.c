// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-segv: crashes (a store through a null pointer, SIGSEGV unhandled),
 * so that the guest's kernel logs "siwx-segv[PID]: segfault at 0 ...";
 * scenario harness-detects-failure shows that tests/vm/run fails a run on
 * such a report unless --judged-faults names the object.
 *
 *   siwx-segv
 */
#include <stdio.h>

int main(void)
{
	volatile int *volatile p = NULL;

	fflush(stdout);
	*p = 1;
	return 0;
}
