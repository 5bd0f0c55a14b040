// SPDX-License-Identifier: GPL-2.0
/*
 * Trace written through the AUX vmap (lib/test_aux_pmu.c's generator) reads
 * back exactly and in order, whatever the granules; sequence numbers jump
 * only after a TRUNCATED, PARTIAL or COLLISION record, never back.  At least
 * four wraps per buffer.
 */
#include <sys/ioctl.h>

#include "../kselftest_harness.h"
#include "aux_trace.h"

FIXTURE(integrity) {
	struct trace_consumer tc;
};

FIXTURE_VARIANT(integrity) {
	enum aux_caps caps;
	enum gen_mode mode;
	enum aux_size size;
	unsigned int words;
	unsigned int align_log2;
};

/* clang-format off */
FIXTURE_VARIANT_ADD(integrity, none_spe_16p) {
	.caps = CAPS_NONE, .mode = GEN_SPE, .size = SIXTEEN_PAGES,
	.words = 6, .align_log2 = 6,
};

FIXTURE_VARIANT_ADD(integrity, none_trbe_16p) {
	.caps = CAPS_NONE, .mode = GEN_TRBE, .size = SIXTEEN_PAGES,
	.words = 6, .align_log2 = 6,
};

FIXTURE_VARIANT_ADD(integrity, large_spe_2pmd) {
	.caps = CAPS_LARGE, .mode = GEN_SPE, .size = TWICE_PMD,
	.words = 6, .align_log2 = 6,
};

FIXTURE_VARIANT_ADD(integrity, large_trbe_2p) {
	.caps = CAPS_LARGE, .mode = GEN_TRBE, .size = TWO_PAGES,
	.words = 6, .align_log2 = 6,
};

FIXTURE_VARIANT_ADD(integrity, large_trbe_2pmd) {
	.caps = CAPS_LARGE, .mode = GEN_TRBE, .size = TWICE_PMD,
	.words = 6, .align_log2 = 6,
};

FIXTURE_VARIANT_ADD(integrity, nosg_spe_pmd) {
	.caps = CAPS_NOSG, .mode = GEN_SPE, .size = PMD_BYTES,
	.words = 6, .align_log2 = 6,
};

/* Shortest SPE-like records behind the largest alignment SPE allows. */
FIXTURE_VARIANT_ADD(integrity, large_spe_pmd_align2k) {
	.caps = CAPS_LARGE, .mode = GEN_SPE, .size = PMD_BYTES,
	.words = 0, .align_log2 = 11,
};

/* Longest records: 2313 bytes, across page and cont-PTE boundaries. */
FIXTURE_VARIANT_ADD(integrity, large_spe_pmd_words255) {
	.caps = CAPS_LARGE, .mode = GEN_SPE, .size = PMD_BYTES,
	.words = 255, .align_log2 = 0,
};

/* clang-format on */

FIXTURE_SETUP(integrity)
{
	unsigned long pages = aux_pages(variant->size);
	size_t bytes = pages * page_size();
	struct gen_config cfg = {
		.mode = variant->mode, .words = variant->words,
		.align_log2 = variant->align_log2, .period_ns = 500000,
	};
	int ret, top, room = 0;

	self->tc.b.fd = -1;
	if (pmu_type(aux_pmu_names[variant->caps]) < 0)
		SKIP(return, NO_TEST_PMU);
	if (bytes / 1024 > mem_available_kb() / 2)
		SKIP(return, NO_MEMORY);
	if (!cpu_events_allowed())
		SKIP(return, NO_PERFMON);
	cfg.burst = gen_quarter_burst(&cfg, bytes);
	/* NO_SG needs chunks of the rule's order: memory may have none left. */
	top = aux_chunk_order(variant->caps == CAPS_NONE ? CHUNK_PAGE :
			      CHUNK_HALF, pages);
	if (variant->caps == CAPS_NOSG)
		room = buddy_room_order_compact(pages, top);
	ret = trace_open(&self->tc, variant->caps, &cfg, pages, false,
			 trace_pick_cpus());
	if (ret == -ENOMEM && variant->caps == CAPS_NOSG && room < top)
		SKIP(return, NO_FREE_BLOCK);
	ASSERT_EQ(0, ret)
		TH_LOG("opening and mapping the generator: %s", strerror(-ret));
}

FIXTURE_TEARDOWN(integrity)
{
	trace_close(&self->tc);
}

TEST_F_TIMEOUT(integrity, bytes_in_order, 180)
{
	struct trace_consumer *tc = &self->tc;
	uint64_t count;
	int ret;

	ASSERT_EQ(0, ioctl(tc->b.fd, PERF_EVENT_IOC_ENABLE, 0));
	ret = trace_finish(tc, trace_consume(tc, 0, 4, 120));
	count = trace_count(tc);
	TH_LOG("%llu bytes, %llu records, %llu wraps, %llu truncated, %llu lost, %llu generated",
	       (unsigned long long)tc->bytes, (unsigned long long)tc->records,
	       (unsigned long long)tc->wraps, (unsigned long long)tc->truncated,
	       (unsigned long long)tc->lost, (unsigned long long)count);
	ASSERT_EQ(0, ret)
		TH_LOG("%s", tc->err);
	EXPECT_LE(4, tc->wraps);
	/* Nothing checked that was not generated. */
	if (variant->mode == GEN_TRBE)
		count *= tc->rec;
	EXPECT_LE(variant->mode == GEN_SPE ? tc->seq : tc->pos, count);
}

TEST_HARNESS_MAIN
