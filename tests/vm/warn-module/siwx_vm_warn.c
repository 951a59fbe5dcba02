// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module for the harness-detects-warn scenario: loading it raises
 * one kernel WARN, which tests/vm/run must report as a failed run. Built at
 * test time against the guests' headers; never shipped.
 */
#include <linux/bug.h>
#include <linux/init.h>
#include <linux/module.h>

static int __init siwx_vm_warn_init(void)
{
	WARN(1, "siwx_vm_warn: deliberate warning, this run must fail\n");
	return 0;
}

static void __exit siwx_vm_warn_exit(void)
{
}

module_init(siwx_vm_warn_init);
module_exit(siwx_vm_warn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("siwx VM harness self-test: raises one WARN when loaded");
