/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers of the machine-wide programs: stress, fault injection, soak. */
#ifndef PERF_AUX_EXTENDED_H
#define PERF_AUX_EXTENDED_H

#include "aux_common.h"
#include "aux_trace.h"

#define NO_FAULT_INJECTION "no fail_page_alloc and failslab in debugfs"
#define NO_KMEMLEAK "no kmemleak in debugfs"
/* The synthetic PMUs' vmap() call site, as /proc/vmallocinfo names it. */
#define AUX_VMAP_CALLER "aux_test_setup_aux"
#define NOT_DESTRUCTIVE "destructive, PERF_AUX_DESTRUCTIVE=1 runs it"

/* Machine-wide tests run only with PERF_AUX_DESTRUCTIVE=1. */
bool aux_destructive(void);
int get_order_ul(unsigned long bytes);
int module_vmaps(void);
int module_vmaps_settled(int want);

struct aux_churn {
	const int *cpu;		/* the CPUs to open events on */
	int cpus;
	double until;		/* now_s() to stop at */
	unsigned int seed;
	bool inject;
	int maps, refused, bad_errno;
};

const char *generators_unavailable(int *vmaps);
int aux_chunks_check(const char *chunks, unsigned long pages, int ceiling,
		     int below, int floor, int *orders, int max, int *fallbacks,
		     char *why, size_t len);
void *aux_churn(void *arg);
int kmsg_open_at_end(void);
int kmsg_warnings(int fd);
unsigned long vmallocinfo_find(const char *caller, unsigned long size);
long trace_check_snapshot_records(struct trace_consumer *tc, uint64_t head,
				  uint64_t count);
long trace_check_snapshot_stream(struct trace_consumer *tc, uint64_t head,
				 uint64_t count);

#endif /* PERF_AUX_EXTENDED_H */
