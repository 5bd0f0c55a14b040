// SPDX-License-Identifier: GPL-2.0
/* The page sizes a vmap() is mapped with, from the kernel page-table dump. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aux_common.h"
#include "aux_report.h"
#include "aux_vmap.h"

static const char * const ptdump_paths[] = {
	ARM64_PTDUMP,					/* arm64 */
	"/sys/kernel/debug/page_tables/kernel",		/* x86 */
};

/* PERF_AUX_STRICT=1: a vmap() of base pages only fails rather than skips. */
bool aux_strict(void)
{
	const char *s = getenv("PERF_AUX_STRICT");

	return s && *s == '1';
}

/* Booted with nohugevmalloc: vmap() is asked for base pages only. */
bool huge_vmap_off(void)
{
	char line[4096] = " ";
	FILE *f = fopen("/proc/cmdline", "r");

	if (f) {
		if (!fgets(line + 1, sizeof(line) - 2, f))
			line[1] = '\0';
		fclose(f);
	}
	line[strcspn(line, "\n")] = ' ';
	return strstr(line, " nohugevmalloc ");
}

/* kptr_restrict=1, so that root reads kernel addresses; *@was: as found. */
int kptr_show(long *was)
{
	*was = sysctl_read(KPTR_RESTRICT);
	if (*was < 0)
		return -ENOENT;
	return sysctl_write(KPTR_RESTRICT, 1);
}

/*
 * Appends a run of @pages of granule @tag ('P', 'C', 'T') to @g; @cont:
 * the pages of a cont-PTE block.
 */
static void granules_add(struct vmap_granules *g, char tag,
			 unsigned long pages, long cont)
{
	unsigned long pmd = pmd_bytes() / page_size();

	if (tag == 'P') {
		g->pmd += pages;
		g->entries += pages / pmd;
	} else if (tag == 'C') {
		g->cont += pages;
		g->entries += pages / (cont > 1 ? cont : 1);
	} else {
		g->pte += pages;
		g->entries += pages;
	}
}

/* The granules of [@start, @start + @size): 0, or -ENOENT without a dump. */
int vmap_granules(unsigned long start, unsigned long size,
		  struct vmap_granules *g)
{
	unsigned long lo, hi, from, to, run = 0;
	long cont = aux_vmap_attr("cont_pages");
	char line[512], tag, run_tag = 0;
	FILE *f = NULL;
	int i;

	for (i = 0; i < 2 && !f; i++)
		f = fopen(ptdump_paths[i], "r");
	if (!f)
		return -ENOENT;
	memset(g, 0, sizeof(*g));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "0x%lx-0x%lx", &lo, &hi) != 2)
			continue;
		from = lo > start ? lo : start;
		to = hi < start + size ? hi : start + size;
		if (from >= to)
			continue;
		tag = strstr(line, " PMD ") || strstr(line, " pmd") ? 'P' :
		      strstr(line, " CON ") ? 'C' : 'T';
		if (run && tag != run_tag) {
			granules_add(g, run_tag, run, cont);
			run = 0;
		}
		run_tag = tag;
		run += (to - from) / page_size();
	}
	if (run)
		granules_add(g, run_tag, run, cont);
	fclose(f);
	/* Not all mapped: not a vmap, or not its address (kptr_restrict). */
	return g->pmd + g->cont + g->pte == size / page_size() ? 0 : -ENXIO;
}

/*
 * The granules of AUX event @id's vmap: 0 or -errno.  Its address is read
 * with kptr_restrict=1, which is put back at once.
 */
int aux_granules(unsigned long long id, struct vmap_granules *g)
{
	struct aux_report r = {};
	long kptr;
	int ret;

	ret = kptr_show(&kptr);
	if (!ret)
		ret = aux_report_read(id, &r);
	if (kptr >= 0 && kptr != 1)
		sysctl_write(KPTR_RESTRICT, kptr);
	if (!ret)
		ret = vmap_granules(r.base, (unsigned long)r.pages * page_size(),
				    g);
	aux_report_free(&r);
	return ret;
}

/* Whether vmap() maps a two-PMD PREFER_LARGE buffer with any large block. */
bool vmap_maps_large(void)
{
	struct vmap_granules g;
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
		large = !aux_granules(buf.id, &g) && g.pmd + g.cont;
		aux_buffer_unmap(&buf);
	}
	close(fd);
	return large;
}
