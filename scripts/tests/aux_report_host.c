// SPDX-License-Identifier: GPL-2.0
/*
 * Host driver for tools/testing/selftests/perf_aux/aux_report.c, built and
 * run by scripts/tests/test_aux_report.py:
 *
 *	aux_report_host < LINES
 *
 * parses each line of stdin as a line of the synthetic PMUs' report and
 * prints one line of key=value pairs for it: ret=0 and the fields parsed,
 * with the chunk orders expanded, or ret=-errno alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aux_report.h"

#define MAX_CHUNKS 4096

int main(void)
{
	struct aux_report r = {};
	static int orders[MAX_CHUNKS];
	int ret, n, i;

	while (getline(&r.line, &r.line_len, stdin) > 0) {
		ret = aux_report_parse(&r);
		printf("ret=%d", ret);
		if (!ret) {
			printf(" event=%llu pmu=%s pages=%d snapshot=%d base=%lx",
			       r.event, r.pmu, r.pages, r.snapshot, r.base);
			printf(" chunks=%s", r.chunks);
			n = aux_report_orders(r.chunks, orders, MAX_CHUNKS);
			printf(" orders=");
			for (i = 0; i < n; i++)
				printf("%s%d", i ? "," : "", orders[i]);
			printf(" norders=%d", n);
		}
		printf("\n");
	}
	aux_report_free(&r);
	return 0;
}
