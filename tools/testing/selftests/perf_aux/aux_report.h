/* SPDX-License-Identifier: GPL-2.0 */
/* The synthetic AUX PMUs' debugfs report: a line of fields per buffer. */
#ifndef PERF_AUX_REPORT_H
#define PERF_AUX_REPORT_H

#include <stddef.h>

#define AUX_REPORT "/sys/kernel/debug/test_aux_pmu/buffers"

/* One line of the report, parsed in place. */
struct aux_report {
	unsigned long long event;
	char pmu[32];
	int pages;
	int snapshot;
	unsigned long base;
	const char *chunks;	/* "9x2,0x3", into @line */
	char *line;		/* the whole line, as getline() read it */
	size_t line_len;
};

int aux_report_parse(struct aux_report *r);
int aux_report_read(unsigned long long id, struct aux_report *r);
void aux_report_free(struct aux_report *r);
int aux_report_orders(const char *chunks, int *orders, int max);
unsigned long chunk_entries(const int *orders, int n, unsigned long pmd_pages,
			    unsigned long cont_pages);

#endif /* PERF_AUX_REPORT_H */
