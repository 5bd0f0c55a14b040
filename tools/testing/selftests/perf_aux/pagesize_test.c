// SPDX-License-Identifier: GPL-2.0
/*
 * The page sizes an AUX buffer's vmap uses (vmallocinfo, page-table dump,
 * lib/test_aux_pmu.c's report): chunks as large as a PMD must map with
 * fewer entries than pages, never more than the chunks allow.  Base pages
 * only skip (fail with PERF_AUX_STRICT=1); nohugevmalloc asks for them.
 */
#include "../kselftest_harness.h"
#include "aux_common.h"
#include "aux_report.h"
#include "aux_vmap.h"

#define NO_PTDUMP "no kernel page-table dump"
#define KPTR_RESTRICT "/proc/sys/kernel/kptr_restrict"

static const char * const ptdump_paths[] = {
	ARM64_PTDUMP,					/* arm64 */
	"/sys/kernel/debug/page_tables/kernel",		/* x86 */
};

/* The start of the vmap made by @caller of @size bytes, or 0. */
static unsigned long vmallocinfo_find(const char *caller, unsigned long size)
{
	char line[512], *at;
	unsigned long start, end, sz;
	FILE *f = fopen("/proc/vmallocinfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		at = strstr(line, caller);
		if (!at || sscanf(line, "0x%lx-0x%lx %lu", &start, &end, &sz) != 3)
			continue;
		/* vmallocinfo sizes include the guard page. */
		if (sz == size || sz == size + page_size()) {
			fclose(f);
			return start;
		}
	}
	fclose(f);
	return 0;
}

/* Pages of [start, start + size) per granule, from the page-table dump. */
struct granules {
	unsigned long pmd, cont, pte;
};

static int ptdump_granules(unsigned long start, unsigned long size,
			   struct granules *g)
{
	unsigned long lo, hi, from, to, pages;
	char line[512];
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
		pages = (to - from) / page_size();
		if (strstr(line, " PMD ") || strstr(line, " pmd"))
			g->pmd += pages;
		else if (strstr(line, " CON "))
			g->cont += pages;
		else
			g->pte += pages;
	}
	fclose(f);
	return 0;
}

FIXTURE(aux_pagesize) {
	int fd;
	long kptr;		/* kptr_restrict as found */
	bool kptr_set;		/* changed by setup: teardown restores it */
	struct aux_buffer buf;
	struct aux_report report;
	unsigned long size;
};

FIXTURE_VARIANT(aux_pagesize) {
	enum aux_caps caps;
	int pmds;		/* buffer size in PMDs; 0: half a PMD */
	int mib;		/* or in MiB, when set */
	bool snapshot;
	enum aux_chunk chunk;	/* what the rule gives each chunk */
};

/* clang-format off */
FIXTURE_VARIANT_ADD(aux_pagesize, large_rw_half_pmd) {
	.caps = CAPS_LARGE, .pmds = 0, .chunk = CHUNK_HALF,
};

FIXTURE_VARIANT_ADD(aux_pagesize, large_rw_2pmd) {
	.caps = CAPS_LARGE, .pmds = 2, .chunk = CHUNK_HALF,
};

FIXTURE_VARIANT_ADD(aux_pagesize, large_rw_4pmd) {
	.caps = CAPS_LARGE, .pmds = 4, .chunk = CHUNK_HALF,
};

/* The largest buffer a 1 GiB guest maps comfortably. */
FIXTURE_VARIANT_ADD(aux_pagesize, large_rw_256m) {
	.caps = CAPS_LARGE, .mib = 256, .chunk = CHUNK_HALF,
};

FIXTURE_VARIANT_ADD(aux_pagesize, large_snapshot_pmd) {
	.caps = CAPS_LARGE, .pmds = 1, .snapshot = true, .chunk = CHUNK_WHOLE,
};

FIXTURE_VARIANT_ADD(aux_pagesize, large_snapshot_2pmd) {
	.caps = CAPS_LARGE, .pmds = 2, .snapshot = true, .chunk = CHUNK_WHOLE,
};

FIXTURE_VARIANT_ADD(aux_pagesize, nosg_snapshot_pmd) {
	.caps = CAPS_NOSG, .pmds = 1, .snapshot = true, .chunk = CHUNK_WHOLE,
};

FIXTURE_VARIANT_ADD(aux_pagesize, none_rw_2pmd) {
	.caps = CAPS_NONE, .pmds = 2, .chunk = CHUNK_PAGE,
};

/* clang-format on */

/* kptr_restrict back to @kptr, if the setup changed it (@set). */
static void kptr_restore(long kptr, bool *set)
{
	if (*set && !sysctl_write(KPTR_RESTRICT, kptr))
		*set = false;
}

FIXTURE_SETUP(aux_pagesize)
{
	int type = pmu_type(aux_pmu_names[variant->caps]), ret, top, room;
	FILE *f;

	if (type < 0)
		SKIP(return, NO_TEST_PMU);
	self->size = variant->pmds ? variant->pmds * pmd_bytes() :
		     pmd_bytes() / 2;
	if (variant->mib)
		self->size = (unsigned long)variant->mib << 20;
	if (self->size / 1024 > (unsigned long)mem_available_kb() / 2)
		SKIP(return, NO_MEMORY);
	if (variant->caps == CAPS_NOSG &&
	    ilog2_ul(self->size / page_size()) > max_page_order())
		SKIP(return, "one chunk of this size is above MAX_PAGE_ORDER");
	/* Real addresses in vmallocinfo and the report, for root only. */
	if (geteuid())
		SKIP(return, NOT_ROOT);
	if (access(AUX_REPORT, R_OK))
		SKIP(return, NO_REPORT);
	self->fd = aux_event_open(type, 0);
	ASSERT_LE(0, self->fd);
	/* A guest short of blocks of the rule's first order: as map_test. */
	top = aux_chunk_order(variant->chunk, self->size / page_size());
	room = buddy_room_order_compact(self->size / page_size(), top);
	ret = aux_buffer_map(&self->buf, self->fd, self->size / page_size(),
			     variant->snapshot);
	if (ret == -ENOMEM && room < top)
		SKIP(return, NO_FREE_BLOCK);
	ASSERT_EQ(0, ret)
		TH_LOG("mapping %lu bytes of AUX: %s", self->size,
		       strerror(-ret));
	/* kptr_restrict=1; no teardown after a failed setup: restore here. */
	f = fopen(KPTR_RESTRICT, "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%ld", &self->kptr));
	fclose(f);
	ASSERT_EQ(0, sysctl_write(KPTR_RESTRICT, 1));
	self->kptr_set = true;
	ret = aux_report_read(self->buf.id, &self->report);
	if (ret || aux_setup_failure_forced()) {
		kptr_restore(self->kptr, &self->kptr_set);
		ASSERT_EQ(0, ret);
		ASSERT_FALSE(aux_setup_failure_forced())
			TH_LOG("setup failure forced after kptr_restrict=1");
	}
}

/* In the parent: kptr_restrict is put back whatever failed in the test. */
FIXTURE_TEARDOWN_PARENT(aux_pagesize)
{
	kptr_restore(self->kptr, &self->kptr_set);
}

/* The fewest entries for @pages: PMDs, then cont-PTE blocks, then PTEs. */
static unsigned long least_entries(unsigned long pages, unsigned long pmd_pages,
				   unsigned long cont_pages)
{
	unsigned long n = pages / pmd_pages;

	pages %= pmd_pages;
	if (cont_pages > 1) {
		n += pages / cont_pages;
		pages %= cont_pages;
	}
	return n + pages;
}

/* One line per buffer: the granule of each page, for tools to draw. */
#define GRANULE_MAP \
	"granule_map pmu=%s pages=%d snapshot=%d page_size=%ld pmd_pages=%lu cont_pages=%lu map=%s"

TEST_F(aux_pagesize, vmap_in_vmallocinfo)
{
	unsigned long start = vmallocinfo_find(AUX_VMAP_CALLER, self->size);

	ASSERT_NE(0, start);
	EXPECT_EQ(self->report.base, start);
	/* The figures a reviewer asks for: entries used and the least. */
	TH_LOG("entries %lu for %lu pages (PMD %lu, cont %lu, PTE %lu), at least %lu",
	       self->report.entries, self->size / page_size(), self->report.pmd,
	       self->report.cont, self->report.pte,
	       least_entries(self->size / page_size(), pmd_bytes() / page_size(),
			     self->report.cont_pages));
	if (self->report.map[0])
		TH_LOG(GRANULE_MAP, self->report.pmu, self->report.pages,
		       self->report.snapshot, page_size(),
		       self->report.pmd_pages, self->report.cont_pages,
		       self->report.map);
}

TEST_F(aux_pagesize, granules_agree_with_page_tables)
{
	struct granules g;

	if (ptdump_granules(self->report.base, self->size, &g))
		SKIP(return, NO_PTDUMP);
	EXPECT_EQ(self->report.pmd, g.pmd);
	EXPECT_EQ(self->report.cont, g.cont);
	EXPECT_EQ(self->report.pte, g.pte);
}

/* Where a chunk is as large as a PMD, the mapping must be large too. */
TEST_F(aux_pagesize, large_chunks_mapped_large)
{
	unsigned long pages = self->size / page_size();
	int *orders = calloc(pages, sizeof(*orders)), n, i, largest = 0;

	/* A buffer has no more chunks than pages. */
	ASSERT_NE(NULL, orders);
	n = aux_report_orders(self->report.chunks, orders, pages);
	ASSERT_LE(0, n)
		TH_LOG("chunks %s: %s", self->report.chunks, strerror(-n));
	for (i = 0; i < n; i++)
		if (orders[i] > largest)
			largest = orders[i];
	if (variant->caps == CAPS_NONE) {
		/* Order-0 pages: nothing is promised, so expect no chunk. */
		EXPECT_EQ(0, largest);
		return;
	}
	if (page_size() << largest < pmd_bytes())
		SKIP(return, "no chunk as large as a PMD");
	if (huge_vmap_off()) {
		/* Base pages were asked for: one entry per page. */
		if (self->report.entries < self->size / page_size() &&
		    !aux_strict())
			SKIP(return, NOHUGE_IGNORED);
		EXPECT_EQ(self->size / page_size(), self->report.entries);
		return;
	}
	if (self->report.entries == self->size / page_size() && !aux_strict())
		SKIP(return, BASE_PAGES_ONLY);
	EXPECT_GT(self->size / page_size(), self->report.entries)
		TH_LOG("chunks %s mapped with %lu entries for %lu pages",
		       self->report.chunks, self->report.entries,
		       self->size / page_size());
}

/* No more entries than the chunks allow (batching, cont-PTE blocks). */
TEST_F(aux_pagesize, entries_within_chunks_allowance)
{
	unsigned long pages = self->size / page_size(), most, sum = 0;
	int *orders = calloc(pages, sizeof(*orders)), n, i;

	if (variant->caps == CAPS_NONE)
		SKIP(return, "order-0 chunks, nothing to map large");
	if (huge_vmap_off())
		SKIP(return, HUGE_VMAP_OFF);
	ASSERT_NE(NULL, orders);
	n = aux_report_orders(self->report.chunks, orders, pages);
	ASSERT_LE(0, n)
		TH_LOG("chunks %s: %s", self->report.chunks, strerror(-n));
	for (i = 0; i < n; i++)
		sum += 1UL << orders[i];
	ASSERT_EQ(pages, sum)
		TH_LOG("chunks %s: not the buffer's pages", self->report.chunks);
	most = chunk_entries(orders, n, vmap_pmd_pages(),
			     self->report.cont_pages);
	if (self->report.entries == pages && pages > most && !aux_strict()) {
		/* An exclusive PMU: one event at a time. */
		aux_buffer_unmap(&self->buf);
		close(self->fd);
		if (!vmap_maps_large())
			SKIP(return, BASE_PAGES_ONLY);
	}
	EXPECT_GE(most, self->report.entries)
		TH_LOG("chunks %s: %lu translation entries where %lu do",
		       self->report.chunks, self->report.entries, most);
}

/* Arm SPE and the TRBE sink of cs_etm, where the board has them. */
FIXTURE(hw_pagesize) {
	int fd;
	struct aux_buffer buf;
};

FIXTURE_VARIANT(hw_pagesize) {
	const char *pmu;
	const char *caller;	/* the driver's vmap() call site */
	const char *skip;
};

FIXTURE_VARIANT_ADD(hw_pagesize, arm_spe) {
	.pmu = "arm_spe_0",
	.caller = "arm_spe_pmu_setup_aux",
	.skip = "no arm_spe_0 PMU",
};

FIXTURE_VARIANT_ADD(hw_pagesize, trbe) {
	.pmu = "cs_etm",
	.caller = "arm_trbe_alloc_buffer",
	.skip = "no cs_etm PMU with a TRBE sink",
};

FIXTURE_SETUP(hw_pagesize)
{
	int type = pmu_type(variant->pmu);

	if (type < 0 || (!strcmp(variant->pmu, "cs_etm") &&
			 access(PMU_DIR "/cs_etm/sinks/trbe0", F_OK)))
		SKIP(return, "%s", variant->skip);
	self->fd = aux_event_open(type, 0);
	ASSERT_LE(0, self->fd)
		TH_LOG("perf_event_open(%s): %s", variant->pmu,
		       strerror(errno));
	ASSERT_EQ(0, aux_buffer_map(&self->buf, self->fd,
				    2 * pmd_bytes() / page_size(), false));
}

FIXTURE_TEARDOWN(hw_pagesize)
{
	aux_buffer_unmap(&self->buf);
	close(self->fd);
}

TEST_F(hw_pagesize, driver_vmap_granules)
{
	unsigned long size = 2 * pmd_bytes(), start;
	struct granules g;

	start = vmallocinfo_find(variant->caller, size);
	ASSERT_NE(0, start);
	if (ptdump_granules(start, size, &g))
		SKIP(return, NO_PTDUMP);
	TH_LOG("%s: PMD %lu, cont-PTE %lu, PTE %lu pages", variant->pmu,
	       g.pmd, g.cont, g.pte);
	if (huge_vmap_off()) {
		if (g.pmd + g.cont && !aux_strict())
			SKIP(return, NOHUGE_IGNORED);
		EXPECT_EQ(0UL, g.pmd + g.cont);
		return;
	}
	if (!g.pmd && !g.cont && !aux_strict())
		SKIP(return, BASE_PAGES_ONLY);
	EXPECT_NE(0, g.pmd + g.cont);
}

TEST_HARNESS_MAIN
