// SPDX-License-Identifier: GPL-2.0
/*
 * The page sizes an AUX buffer's vmap uses (the kernel page-table dump):
 * chunks as large as a PMD must map with fewer entries
 * than pages, never more than the chunks allow.  Base pages only skip (fail
 * with PERF_AUX_STRICT=1); nohugevmalloc asks for them.
 */
#include "../kselftest_harness.h"
#include "aux_common.h"
#include "aux_report.h"
#include "aux_vmap.h"

FIXTURE(aux_pagesize) {
	int fd;
	long kptr;		/* kptr_restrict as found */
	bool kptr_set;		/* changed by setup: teardown restores it */
	struct aux_buffer buf;
	struct aux_report report;
	struct vmap_granules g;
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

/* The largest buffer a 1 GiB guest maps comfortably. */
FIXTURE_VARIANT_ADD(aux_pagesize, large_rw_256m) {
	.caps = CAPS_LARGE, .mib = 256, .chunk = CHUNK_HALF,
};

FIXTURE_VARIANT_ADD(aux_pagesize, large_snapshot_pmd) {
	.caps = CAPS_LARGE, .pmds = 1, .snapshot = true, .chunk = CHUNK_WHOLE,
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
	/* Real addresses in the report, for root only. */
	if (geteuid())
		SKIP(return, NOT_ROOT);
	if (access(AUX_REPORT, R_OK))
		SKIP(return, NO_REPORT);
	self->fd = aux_event_open(type, 0);
	ASSERT_LE(0, self->fd);
	/* A guest short of blocks of the rule's first order skips. */
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
	ASSERT_EQ(0, kptr_show(&self->kptr));
	self->kptr_set = true;
	ret = aux_report_read(self->buf.id, &self->report);
	if (!ret)
		ret = vmap_granules(self->report.base, self->size, &self->g);
	if (ret == -ENOENT) {
		kptr_restore(self->kptr, &self->kptr_set);
		SKIP(return, NO_PTDUMP);
	}
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

/* Where a chunk is as large as a PMD, the mapping must be large too. */
TEST_F(aux_pagesize, large_chunks_mapped_large)
{
	unsigned long pages = self->size / page_size();
	int *orders = calloc(pages, sizeof(*orders)), n, i, largest = 0;

	/* The figures a reviewer asks for: the entries of each granule. */
	TH_LOG("entries %lu for %lu pages (PMD %lu, cont %lu, PTE %lu)",
	       self->g.entries, pages, self->g.pmd, self->g.cont, self->g.pte);
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
		if (self->g.entries < self->size / page_size() &&
		    !aux_strict())
			SKIP(return, NOHUGE_IGNORED);
		EXPECT_EQ(self->size / page_size(), self->g.entries);
		return;
	}
	if (self->g.entries == self->size / page_size() && !aux_strict())
		SKIP(return, BASE_PAGES_ONLY);
	EXPECT_GT(self->size / page_size(), self->g.entries)
		TH_LOG("chunks %s mapped with %lu entries for %lu pages",
		       self->report.chunks, self->g.entries,
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
	most = chunk_entries(orders, n, pmd_bytes() / page_size(),
			     aux_vmap_attr("cont_pages"));
	if (self->g.entries == pages && pages > most && !aux_strict()) {
		/* An exclusive PMU: one event at a time. */
		aux_buffer_unmap(&self->buf);
		close(self->fd);
		if (!vmap_maps_large())
			SKIP(return, BASE_PAGES_ONLY);
	}
	EXPECT_GE(most, self->g.entries)
		TH_LOG("chunks %s: %lu translation entries where %lu do",
		       self->report.chunks, self->g.entries, most);
}

TEST_HARNESS_MAIN
