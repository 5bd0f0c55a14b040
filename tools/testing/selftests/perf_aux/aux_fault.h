/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's fault injection (CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAILSLAB)
 * and kmemleak, for the perf_aux selftests that fail allocations.
 */
#ifndef PERF_AUX_FAULT_H
#define PERF_AUX_FAULT_H

#include <stddef.h>

#define FAIL_PAGE_ALLOC "/sys/kernel/debug/fail_page_alloc"
#define FAILSLAB "/sys/kernel/debug/failslab"
#define KMEMLEAK "/sys/kernel/debug/kmemleak"

int fault_attr(const char *dir, const char *attr, long v);
int fault_injection_setup(void);
int fault_inject(const char *dir, long times, int probability);
void fault_injection_restore(void);
int kmemleak_suspects(const char *func, unsigned long *addrs, int max,
		      char *first, size_t len);

#endif /* PERF_AUX_FAULT_H */
