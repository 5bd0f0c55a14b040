// SPDX-License-Identifier: GPL-2.0
/*
 * AUX buffers of many sizes on lib/test_aux_pmu.c's PMUs: the chunk orders
 * follow rb_alloc_aux()'s rule, and every byte reaches user space zeroed.
 */
#include "../kselftest_harness.h"
#include "aux_common.h"
#include "aux_report.h"

FIXTURE(aux_map) {
	int fd;
	struct aux_buffer buf;
	unsigned long nr_pages;
	int map_err;
	int top;	/* the rule's first order for this buffer */
	int room;	/* the highest order free for all of it, before */
};

FIXTURE_VARIANT(aux_map) {
	enum aux_caps caps;
	enum aux_size size;
	bool snapshot;
	enum aux_chunk chunk;	/* what the rule gives each chunk */
};

/* clang-format off */
FIXTURE_VARIANT_ADD(aux_map, none_rw_2p) {
	.caps = CAPS_NONE, .size = TWO_PAGES, .chunk = CHUNK_PAGE,
};

FIXTURE_VARIANT_ADD(aux_map, none_rw_2pmd) {
	.caps = CAPS_NONE, .size = TWICE_PMD, .chunk = CHUNK_PAGE,
};

FIXTURE_VARIANT_ADD(aux_map, none_snapshot_pmd) {
	.caps = CAPS_NONE, .size = PMD_BYTES, .snapshot = true,
	.chunk = CHUNK_PAGE,
};

FIXTURE_VARIANT_ADD(aux_map, large_rw_2p) {
	.caps = CAPS_LARGE, .size = TWO_PAGES, .chunk = CHUNK_HALF,
};

FIXTURE_VARIANT_ADD(aux_map, large_rw_16p) {
	.caps = CAPS_LARGE, .size = SIXTEEN_PAGES, .chunk = CHUNK_HALF,
};

FIXTURE_VARIANT_ADD(aux_map, large_rw_2pmd) {
	.caps = CAPS_LARGE, .size = TWICE_PMD, .chunk = CHUNK_HALF,
};

FIXTURE_VARIANT_ADD(aux_map, large_rw_64m) {
	.caps = CAPS_LARGE, .size = SIZE_64M, .chunk = CHUNK_HALF,
};

FIXTURE_VARIANT_ADD(aux_map, large_snapshot_2p) {
	.caps = CAPS_LARGE, .size = TWO_PAGES, .snapshot = true,
	.chunk = CHUNK_WHOLE,
};

FIXTURE_VARIANT_ADD(aux_map, large_snapshot_pmd) {
	.caps = CAPS_LARGE, .size = PMD_BYTES, .snapshot = true,
	.chunk = CHUNK_WHOLE,
};

FIXTURE_VARIANT_ADD(aux_map, large_snapshot_64m) {
	.caps = CAPS_LARGE, .size = SIZE_64M, .snapshot = true,
	.chunk = CHUNK_WHOLE,
};

FIXTURE_VARIANT_ADD(aux_map, nosg_rw_2pmd) {
	.caps = CAPS_NOSG, .size = TWICE_PMD, .chunk = CHUNK_HALF,
};

FIXTURE_VARIANT_ADD(aux_map, nosg_snapshot_pmd) {
	.caps = CAPS_NOSG, .size = PMD_BYTES, .snapshot = true,
	.chunk = CHUNK_WHOLE,
};

FIXTURE_VARIANT_ADD(aux_map, nosg_snapshot_64m) {
	.caps = CAPS_NOSG, .size = SIZE_64M, .snapshot = true,
	.chunk = CHUNK_WHOLE,
};

/* clang-format on */

/* A NO_SG snapshot buffer is one chunk: it fails beyond MAX_PAGE_ORDER. */
static int expected_map_err(enum aux_caps caps, bool snapshot,
			    unsigned long nr_pages)
{
	if (caps == CAPS_NOSG && snapshot &&
	    ilog2_ul(nr_pages) > max_page_order())
		return -ENOMEM;
	return 0;
}

FIXTURE_SETUP(aux_map)
{
	int type = pmu_type(aux_pmu_names[variant->caps]);

	if (type < 0)
		SKIP(return, NO_TEST_PMU);
	self->nr_pages = aux_pages(variant->size);
	if (self->nr_pages * page_size() / 1024 > mem_available_kb() / 2)
		SKIP(return, NO_MEMORY);
	self->fd = aux_event_open(type, 0);
	ASSERT_LE(0, self->fd)
		TH_LOG("perf_event_open(%s): %s", aux_pmu_names[variant->caps],
		       strerror(errno));
	/* Memory may lack the rule's first order even after compaction. */
	self->top = aux_chunk_order(variant->chunk, self->nr_pages);
	self->room = buddy_room_order_compact(self->nr_pages, self->top);
	self->map_err = aux_buffer_map(&self->buf, self->fd, self->nr_pages,
				       variant->snapshot);
	/* The documented refusal for a user beyond the mlock limits. */
	if (self->map_err == -EPERM && geteuid())
		SKIP(return, NO_MLOCK_ROOM);
	/* One chunk (NO_SG snapshot) of an order memory did not have. */
	if (self->map_err == -ENOMEM && self->room < self->top &&
	    !expected_map_err(variant->caps, variant->snapshot,
			      self->nr_pages))
		SKIP(return, NO_FREE_BLOCK);
}

FIXTURE_TEARDOWN(aux_map)
{
	aux_buffer_unmap(&self->buf);
	close(self->fd);
}

TEST_F(aux_map, chunk_orders_follow_rule)
{
	/* A chunk per page at most. */
	int *got = calloc(self->nr_pages, sizeof(*got));
	unsigned long left = self->nr_pages;
	struct aux_report r = {};
	int n_got, i;

	ASSERT_NE(NULL, got);
	ASSERT_EQ(expected_map_err(variant->caps, variant->snapshot,
				   self->nr_pages), self->map_err)
		TH_LOG("mmap of %lu AUX pages: %s", self->nr_pages,
		       strerror(-self->map_err));
	if (self->map_err)
		return;
	if (access(AUX_REPORT, R_OK))
		SKIP(return, NO_REPORT);
	ASSERT_EQ(0, aux_report_read(self->buf.id, &r));
	EXPECT_EQ(self->nr_pages, r.pages);
	EXPECT_EQ(variant->snapshot, r.snapshot);
	n_got = aux_report_orders(r.chunks, got, self->nr_pages);
	ASSERT_LT(0, n_got)
		TH_LOG("chunks %s", r.chunks);
	/* Whatever memory held: no chunk above the rule's order or past the end. */
	for (i = 0; i < n_got; left -= 1UL << got[i++])
		ASSERT_TRUE(got[i] <= self->top && 1UL << got[i] <= left)
			TH_LOG("chunk %d of %s: order %d, the rule's is %d",
			       i, r.chunks, got[i], self->top);
	ASSERT_EQ(0, left)
		TH_LOG("chunks %s: not the buffer's %lu pages", r.chunks,
		       self->nr_pages);
	for (i = 0; i < n_got && got[i] == self->top; i++)
		;
	/* Short of blocks of the rule's order before the map: fallbacks. */
	if (i < n_got && self->room < self->top) {
		TH_LOG("order-%d blocks short before the map: chunks %s",
		       self->top, r.chunks);
		return;
	}
	/* Else every chunk of the rule's order. */
	ASSERT_EQ(n_got, i)
		TH_LOG("chunk %d of %d is not of order %d: received %s", i,
		       n_got, self->top, r.chunks);
}

TEST_F(aux_map, pages_zeroed_and_mapped)
{
	const unsigned long *p;
	size_t i, words;

	ASSERT_EQ(expected_map_err(variant->caps, variant->snapshot,
				   self->nr_pages), self->map_err);
	if (self->map_err)
		return;
	/* Every byte: kernel pages reach user space, stale data must not. */
	p = self->buf.aux;
	words = self->buf.aux_size / sizeof(*p);
	for (i = 0; i < words; i++)
		if (p[i])
			break;
	EXPECT_EQ(words, i)
		TH_LOG("AUX page %zu not zeroed at byte %zu",
		       i * sizeof(*p) / page_size(),
		       i * sizeof(*p) % page_size());
}

TEST_HARNESS_MAIN
