// SPDX-License-Identifier: GPL-2.0
/*
 * The synthetic AUX PMUs' report, a line per buffer as the module prints it.
 * Builds alone (no perf event), for tests on the host.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aux_report.h"

/* Parses r->line in place (chunks points into it): 0, or -EBADMSG. */
int aux_report_parse(struct aux_report *r)
{
	char base[32];
	int chunks = 0;

	r->line[strcspn(r->line, "\n")] = '\0';
	if (sscanf(r->line,
		   "event=%llu pmu=%31s pages=%d snapshot=%d base=%31s chunks=%n",
		   &r->event, r->pmu, &r->pages, &r->snapshot, base,
		   &chunks) != 5 || !chunks || !r->line[chunks])
		return -EBADMSG;
	/* %pK: the address (kptr_restrict=1), a hash or "(____ptrval____)". */
	r->base = strtoul(base, NULL, 16);
	r->chunks = r->line + chunks;
	return 0;
}

/* The line of event @id into @r (zeroed or reused): 0 or -errno. */
int aux_report_read(unsigned long long id, struct aux_report *r)
{
	FILE *f = fopen(AUX_REPORT, "r");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (getline(&r->line, &r->line_len, f) > 0) {
		ret = aux_report_parse(r);
		if (ret)
			break;
		ret = -ENOENT;
		if (r->event == id) {
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

void aux_report_free(struct aux_report *r)
{
	free(r->line);
	memset(r, 0, sizeof(*r));
}

/* "9x2,0x3" into { 9, 9, 0, 0, 0 }: the count, -E2BIG over @max, -EBADMSG. */
int aux_report_orders(const char *chunks, int *orders, int max)
{
	int order, count, n = 0, used;

	for (;;) {
		if (sscanf(chunks, "%dx%d%n", &order, &count, &used) != 2 ||
		    order < 0 || count < 1)
			return -EBADMSG;
		if (count > max - n)
			return -E2BIG;
		while (count--)
			orders[n++] = order;
		chunks += used;
		if (!*chunks)
			return n;
		if (*chunks++ != ',')
			return -EBADMSG;
	}
}

/*
 * The most translation entries the rules allow for chunks of @orders: each
 * takes a granule where its offset is aligned to it (0 pages: no such block).
 */
unsigned long chunk_entries(const int *orders, int n, unsigned long pmd_pages,
			    unsigned long cont_pages)
{
	unsigned long off = 0, entries = 0, pages, g;
	int i;

	for (i = 0; i < n; i++) {
		pages = 1UL << orders[i];
		g = 1;
		if (pmd_pages && pages >= pmd_pages && !(off % pmd_pages))
			g = pmd_pages;
		else if (cont_pages > 1 && pages >= cont_pages &&
			 !(off % cont_pages))
			g = cont_pages;
		entries += pages / g;
		off += pages;
	}
	return entries;
}
