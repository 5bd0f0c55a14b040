// SPDX-License-Identifier: GPL-2.0
/*
 * The synthetic AUX PMUs' report: "key=value" fields in any order, unknown
 * keys skipped.  Builds alone (no perf event), for tests on the host.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aux_report.h"

enum report_key {
	KEY_EVENT, KEY_PMU, KEY_PAGES, KEY_SNAPSHOT, KEY_BASE, KEY_CHUNKS,
	NR_REPORT_KEYS
};

/* The fields a line must have, each once. */
static const char * const report_keys[NR_REPORT_KEYS] = {
	[KEY_EVENT] = "event",		[KEY_PMU] = "pmu",
	[KEY_PAGES] = "pages",		[KEY_SNAPSHOT] = "snapshot",
	[KEY_BASE] = "base",		[KEY_CHUNKS] = "chunks",
};

/* A decimal value @s into *@v; false if it is not one, or exceeds @max. */
static bool report_number(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return !*end && !errno && *v <= max;
}

/*
 * Parses r->line in place (strings point into it): 0, or -EBADMSG (and no
 * field taken) for a bad field, a key missing, empty or twice, a bad number.
 */
int aux_report_parse(struct aux_report *r)
{
	const char *v[NR_REPORT_KEYS] = {};
	unsigned long n[NR_REPORT_KEYS] = {};
	char *tok, *save, *eq, *end;
	int k;

	r->line[strcspn(r->line, "\n")] = '\0';
	for (tok = strtok_r(r->line, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		eq = strchr(tok, '=');
		if (!eq || eq == tok)
			return -EBADMSG;
		*eq = '\0';
		for (k = 0; k < NR_REPORT_KEYS; k++) {
			if (strcmp(tok, report_keys[k]))
				continue;
			if (v[k] || !eq[1])
				return -EBADMSG;
			v[k] = eq + 1;
		}
	}
	for (k = 0; k < NR_REPORT_KEYS; k++) {
		if (!v[k])
			return -EBADMSG;
		switch (k) {
		case KEY_PMU:
		case KEY_BASE:
		case KEY_CHUNKS:
			break;
		case KEY_PAGES:
		case KEY_SNAPSHOT:
			if (!report_number(v[k], INT_MAX, &n[k]))
				return -EBADMSG;
			break;
		default:
			if (!report_number(v[k], ~0UL, &n[k]))
				return -EBADMSG;
		}
	}
	if (strlen(v[KEY_PMU]) >= sizeof(r->pmu) || n[KEY_SNAPSHOT] > 1)
		return -EBADMSG;
	/* %pK: the address (kptr_restrict=1), a hash or "(____ptrval____)". */
	r->base = strtoul(v[KEY_BASE], &end, 16);
	if (*end)
		r->base = 0;
	r->event = n[KEY_EVENT];
	snprintf(r->pmu, sizeof(r->pmu), "%s", v[KEY_PMU]);
	r->pages = n[KEY_PAGES];
	r->snapshot = n[KEY_SNAPSHOT];
	r->chunks = v[KEY_CHUNKS];
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
