// SPDX-License-Identifier: GPL-2.0
/* What the running kernel's vmap() may map an AUX buffer with. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aux_common.h"
#include "aux_report.h"
#include "aux_vmap.h"

/* PERF_AUX_STRICT=1: a vmap() of base pages only fails rather than skips. */
bool aux_strict(void)
{
	const char *s = getenv("PERF_AUX_STRICT");

	return s && *s == '1';
}

/* Booted with nohugevmalloc: vmap() is asked for base pages only. */
bool huge_vmap_off(void)
{
	char *line = NULL, *tok, *save;
	FILE *f = fopen("/proc/cmdline", "r");
	size_t len = 0;
	bool off = false;

	if (!f)
		return false;
	if (getline(&line, &len, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		for (tok = strtok_r(line, " ", &save); tok;
		     tok = strtok_r(NULL, " ", &save))
			off |= !strcmp(tok, "nohugevmalloc");
	}
	free(line);
	fclose(f);
	return off;
}

/* Pages per PMD block vmap() may use: 0 where arm64 refuses for ptdump. */
unsigned long vmap_pmd_pages(void)
{
	if (aux_vmap_attr("pmd_refused_ptdump") == 1)
		return 0;
	return pmd_bytes() / page_size();
}

/* Whether vmap() maps a two-PMD PREFER_LARGE buffer with fewer entries. */
bool vmap_maps_large(void)
{
	struct aux_report r = {};
	struct aux_buffer buf;
	bool large = false;
	int fd, tries = 100;

	if (pmd_bytes() / 512 > (unsigned long)mem_available_kb() / 2)
		return false;
	/* The test's own event, just closed, may hold the PMU a moment. */
	do {
		fd = aux_event_open(pmu_type(aux_pmu_names[CAPS_LARGE]), 0);
	} while (fd < 0 && errno == EBUSY && --tries && !usleep(10000));
	if (fd < 0)
		return false;
	if (!aux_buffer_map(&buf, fd, 2 * pmd_bytes() / page_size(), false)) {
		large = !aux_report_read(buf.id, &r) &&
			r.entries < 2 * pmd_bytes() / page_size();
		aux_report_free(&r);
		aux_buffer_unmap(&buf);
	}
	close(fd);
	return large;
}
