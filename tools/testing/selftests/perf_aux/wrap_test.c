// SPDX-License-Identifier: GPL-2.0
/*
 * Wraps of SPE-like and TRBE-like trace (lib/test_aux_pmu.c) in a large
 * mapping: a consumer that keeps up loses nothing over 1000 wraps, each
 * PERF_RECORD_AUX contiguous and inside the buffer; one that stalls gets
 * TRUNCATED, a gap only there, then trace again; in snapshot mode the
 * newest trace ends at aux_head, as perf record -S reads it.
 */
#include <sys/ioctl.h>

#include "../kselftest_harness.h"
#include "aux_extended.h"

FIXTURE(wrap) {
	struct trace_consumer tc;
	int kmsg, cpu;
};

FIXTURE_VARIANT(wrap) {
	enum gen_mode mode;
};

/* clang-format off */
FIXTURE_VARIANT_ADD(wrap, spe) {
	.mode = GEN_SPE,
};

FIXTURE_VARIANT_ADD(wrap, trbe) {
	.mode = GEN_TRBE,
};

/* clang-format on */

FIXTURE_SETUP(wrap)
{
	self->tc.b.fd = -1;
	self->kmsg = -1;
	if (pmu_type(aux_pmu_names[CAPS_LARGE]) < 0)
		SKIP(return, NO_TEST_PMU);
	if (!cpu_events_allowed())
		SKIP(return, NO_PERFMON);
	self->kmsg = kmsg_open_at_end();
	self->cpu = trace_pick_cpus();
}

FIXTURE_TEARDOWN(wrap)
{
	trace_close(&self->tc);
	EXPECT_EQ(0, kmsg_warnings(self->kmsg));
	if (self->kmsg >= 0)
		close(self->kmsg);
}

/* The generator on @pages, a tick of 1/@parts of the room every @period_ns. */
static int wrap_open(struct trace_consumer *tc, enum gen_mode mode,
		     unsigned long pages, unsigned int parts,
		     unsigned long long period_ns, int cpu)
{
	struct gen_config cfg = {
		.mode = mode, .words = 6, .align_log2 = 6,
		.period_ns = period_ns,
	};

	/* The limit stays a page behind aux_tail: that page is no room. */
	cfg.burst = (pages - 1) * page_size() / parts /
		    gen_record_bytes(&cfg) ?: 1;
	return trace_open(tc, CAPS_LARGE, &cfg, pages, false, cpu);
}

static void wrap_log(struct __test_metadata *_metadata,
		     struct trace_consumer *tc, double secs)
{
	TH_LOG("%llu bytes checked in %.1f s: %llu records, %llu wraps",
	       (unsigned long long)tc->bytes, secs,
	       (unsigned long long)tc->records, (unsigned long long)tc->wraps);
	TH_LOG("%llu AUX records, %llu truncated, %llu gaps, %llu lost, at most %llu bytes unread",
	       (unsigned long long)tc->aux_records,
	       (unsigned long long)tc->truncated, (unsigned long long)tc->gaps,
	       (unsigned long long)tc->lost, (unsigned long long)tc->max_fill);
}

/* Stops the event, drains and logs what was seen; 0 or -1. */
static int wrap_finish(struct __test_metadata *_metadata,
		       struct trace_consumer *tc, int ret, double start)
{
	ret = trace_finish(tc, ret);
	wrap_log(_metadata, tc, now_s() - start);
	return ret;
}

/*
 * Whether the consumer fell so far behind that no tick may have fit (the
 * limit is within a page behind aux_tail, read up to a tick late): a
 * stalled or starved consumer.  Truncating with more room left is wrong.
 */
static bool wrap_starved(struct trace_consumer *tc, unsigned long pages)
{
	uint64_t room = (pages - 1) * page_size();
	uint64_t tick = (uint64_t)tc->cfg.burst * tc->rec;

	return tc->max_fill + 2 * tick + tc->rec + tc->align >= room;
}

#define WRAP_ATTEMPTS 3

TEST_F_TIMEOUT(wrap, keep_up_1000_wraps, 600)
{
	struct trace_consumer *tc = &self->tc;
	unsigned long pages = (64UL << 10) / page_size();
	int attempt, ret;
	double start;

	/* 64 KiB, at least 4 pages: ~7000 ticks, 5 (20 ms) to answer in. */
	pages = pages < 4 ? 4 : pages;
	for (attempt = 1; attempt <= WRAP_ATTEMPTS; attempt++) {
		trace_close(tc);
		ret = wrap_open(tc, variant->mode, pages, 6, 200000,
				self->cpu);
		ASSERT_EQ(0, ret);
		start = now_s();
		ASSERT_EQ(0, ioctl(tc->b.fd, PERF_EVENT_IOC_ENABLE, 0));
		ret = trace_consume(tc, 0, 1000, 180);
		ASSERT_EQ(0, wrap_finish(_metadata, tc, ret, start))
			TH_LOG("%s", tc->err);
		if (!tc->truncated && !tc->gaps && !tc->lost)
			break;
		TH_LOG("attempt %d lost trace; room %llu bytes", attempt,
		       (unsigned long long)(pages - 1) * page_size());
		/* Lost trace with room left is perf's or the driver's fault. */
		ASSERT_TRUE(wrap_starved(tc, pages));
	}
	if (attempt > WRAP_ATTEMPTS)
		SKIP(return, "consumer starved");
	EXPECT_LE(1000, tc->wraps);
}

TEST_F_TIMEOUT(wrap, stalled_consumer_truncated_then_resumed, 120)
{
	struct trace_consumer *tc = &self->tc;
	unsigned long pages = aux_pages(SIXTEEN_PAGES);
	uint64_t records, bytes;
	double start = now_s();
	int ret;

	ret = wrap_open(tc, variant->mode, pages, 8, 500000, self->cpu);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, ioctl(tc->b.fd, PERF_EVENT_IOC_ENABLE, 0));
	/* Stay away until more was generated than the buffer holds. */
	while (trace_count(tc) * tc->rec <= tc->size && now_s() - start < 30)
		usleep(10000);
	ret = trace_drain(tc);
	ASSERT_EQ(0, ret)
		TH_LOG("%s", tc->err);
	ASSERT_LE(1, tc->truncated)
		wrap_log(_metadata, tc, now_s() - start);
	/* Full before TRUNCATED: the unread trace then left no room. */
	ASSERT_TRUE(wrap_starved(tc, pages))
		wrap_log(_metadata, tc, now_s() - start);
	/* Caught up: trace_consume() enables the event again. */
	records = tc->records;
	bytes = tc->bytes;
	ret = trace_consume(tc, bytes + 2 * tc->size, 0, 60);
	ASSERT_EQ(0, wrap_finish(_metadata, tc, ret, start))
		TH_LOG("%s", tc->err);
	EXPECT_LE(1, tc->gaps);
	EXPECT_LT(0, tc->lost);
	EXPECT_LT(records, tc->records);
}

/*
 * perf record -S: read-only AUX; three times, after two overwrites, stop,
 * take the buffer up to aux_head (the newest trace), start again.
 */
TEST_F_TIMEOUT(wrap, snapshot_as_perf_record_S, 300)
{
	struct trace_consumer *tc = &self->tc;
	uint64_t count, head, want;
	long newest;
	double start;
	int snap;
	struct gen_config cfg = {
		.mode = variant->mode, .words = 6, .align_log2 = 6,
		.period_ns = 500000,
	};
	unsigned long pages = (64UL << 10) / page_size();

	/* 64 KiB, at least 16 pages, an eighth of it a tick. */
	pages = pages < 16 ? 16 : pages;
	cfg.burst = pages * page_size() / 8 / gen_record_bytes(&cfg) ?: 1;
	ASSERT_EQ(0, trace_open(tc, CAPS_LARGE, &cfg, pages, true, self->cpu));
	count = 0;
	for (snap = 0; snap < 3; snap++) {
		want = count * tc->rec + 2 * tc->size;
		start = now_s();
		ASSERT_EQ(0, ioctl(tc->b.fd, PERF_EVENT_IOC_ENABLE, 0));
		do {
			usleep(10000);
			count = trace_count(tc);
		} while (count * tc->rec < want && now_s() - start < 60);
		ASSERT_EQ(0, ioctl(tc->b.fd, PERF_EVENT_IOC_DISABLE, 0));
		count = trace_count(tc);
		ASSERT_LE(want, count * tc->rec);
		ASSERT_EQ(0, trace_drain(tc) < 0)
			TH_LOG("%s", tc->err);
		head = __atomic_load_n(&trace_user_page(tc)->aux_head,
				       __ATOMIC_ACQUIRE);
		ASSERT_GT(tc->size, head);
		if (variant->mode == GEN_SPE)
			newest = trace_check_snapshot_records(tc, head, count);
		else
			newest = trace_check_snapshot_stream(tc, head, count);
		TH_LOG("snapshot %d: aux_head %llu, %llu records, newest %ld bytes intact",
		       snap, (unsigned long long)head,
		       (unsigned long long)count, newest);
		ASSERT_LE(0, newest)
			TH_LOG("%s", tc->err);
		EXPECT_LE(tc->size / 2 - tc->rec, newest);
	}
	EXPECT_TRUE(tc->flags_seen & PERF_AUX_FLAG_OVERWRITE);
}

TEST_HARNESS_MAIN
