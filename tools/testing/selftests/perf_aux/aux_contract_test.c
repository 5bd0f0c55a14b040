// SPDX-License-Identifier: GPL-2.0
/*
 * The AUX consumer contract perf tools rely on (tools/perf/util/auxtrace.c),
 * on lib/test_aux_pmu.c's PMUs:
 *  - aux_head (acquire) is the extent the PERF_RECORD_AUX records cover,
 *    and where they end once stopped; aux_tail (release) hands it back;
 *  - poll() wakes at each aux_watermark: none lost, no storm.
 */
#include <poll.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "../kselftest_harness.h"
#include "aux_trace.h"

/* Polls of aux_head before a lag behind the records is a fault. */
#define HEAD_RETRIES	1000

/* 64 KiB, at least 16 pages: a quarter watermark, sixteenth ticks. */
static unsigned long contract_pages(void)
{
	unsigned long pages = (64UL << 10) / page_size();

	return pages < 16 ? 16 : pages;
}

FIXTURE(contract) {
	struct trace_consumer tc;
	uint64_t tail;		/* the aux_tail this consumer wrote */
	int cpu;
};

FIXTURE_VARIANT(contract) {
	enum gen_mode mode;
};

/* clang-format off */
FIXTURE_VARIANT_ADD(contract, spe) {
	.mode = GEN_SPE,
};

FIXTURE_VARIANT_ADD(contract, trbe) {
	.mode = GEN_TRBE,
};

/* clang-format on */

FIXTURE_SETUP(contract)
{
	self->tc.b.fd = -1;
	self->tail = 0;
	if (pmu_type(aux_pmu_names[CAPS_LARGE]) < 0)
		SKIP(return, NO_TEST_PMU);
	if (!cpu_events_allowed())
		SKIP(return, NO_PERFMON);
	self->cpu = trace_pick_cpus();
}

FIXTURE_TEARDOWN(contract)
{
	trace_close(&self->tc);
}

/*
 * A generator, @parts ticks per buffer every @period_ns, with @watermark
 * (0: default); the consumer writes aux_tail, as perf does.
 */
static int contract_open(struct trace_consumer *tc, enum gen_mode mode,
			 unsigned int parts, unsigned long long period_ns,
			 unsigned long watermark, int cpu)
{
	struct gen_config cfg = {
		.mode = mode, .words = 6, .align_log2 = 6,
		.period_ns = period_ns,
	};
	unsigned long pages = contract_pages();
	int ret;

	cfg.burst = pages * page_size() / parts / gen_record_bytes(&cfg) ?: 1;
	/* aux_watermark is read at the AUX mmap(), from the event's attr. */
	ret = trace_open_event(tc, CAPS_LARGE, &cfg, pages, false, cpu,
			       watermark);
	tc->tail_from_head = true;
	return ret ?: aux_area_map(&tc->b, pages, false);
}

/*
 * One read as auxtrace_mmap__read() does: aux_head (acquire) is the extent,
 * the records must reach it (a record may come before its head, never a
 * head before its record); aux_tail (release) returns it.  The new head,
 * or -1 with tc->err set.
 */
static int64_t contract_read(struct trace_consumer *tc, uint64_t *tail)
{
	struct perf_event_mmap_page *up = trace_user_page(tc);
	uint64_t head;
	int tries;

	head = __atomic_load_n(&up->aux_head, __ATOMIC_ACQUIRE);
	if (head < *tail) {
		snprintf(tc->err, sizeof(tc->err),
			 "aux_head %llu went back behind aux_tail %llu",
			 (unsigned long long)head, (unsigned long long)*tail);
		return -1;
	}
	if (head - *tail > tc->size) {
		snprintf(tc->err, sizeof(tc->err),
			 "aux_head %llu more than the buffer beyond aux_tail %llu",
			 (unsigned long long)head, (unsigned long long)*tail);
		return -1;
	}
	for (tries = 0; ; tries++) {
		if (trace_drain(tc) < 0)
			return -1;
		if (tc->next_off >= head ||
		    trace_padding(tc, tc->next_off, head))
			break;
		if (tries == HEAD_RETRIES) {
			snprintf(tc->err, sizeof(tc->err),
				 "aux_head %llu beyond the records, which end at %llu",
				 (unsigned long long)head,
				 (unsigned long long)tc->next_off);
			return -1;
		}
		usleep(100);
	}
	__atomic_store_n(&up->aux_tail, head, __ATOMIC_RELEASE);
	*tail = head;
	return head;
}

/* Stopped: the records end at aux_head but for padding; no lagging head. */
static int contract_settled(struct trace_consumer *tc, uint64_t *tail)
{
	if (contract_read(tc, tail) < 0)
		return -1;
	if (tc->next_off > *tail) {
		snprintf(tc->err, sizeof(tc->err),
			 "stopped: aux_head %llu lags the records, which end at %llu",
			 (unsigned long long)*tail,
			 (unsigned long long)tc->next_off);
		return -1;
	}
	return 0;
}

static void contract_log(struct __test_metadata *_metadata,
			 struct trace_consumer *tc, uint64_t tail)
{
	TH_LOG("aux_head %llu: %llu bytes checked, %llu records",
	       (unsigned long long)tail, (unsigned long long)tc->bytes,
	       (unsigned long long)tc->records);
	TH_LOG("%llu AUX records, %llu wraps, %llu truncated",
	       (unsigned long long)tc->aux_records,
	       (unsigned long long)tc->wraps,
	       (unsigned long long)tc->truncated);
}

/* Eight rounds read from aux_head, each stopped: aux_head and records agree. */
TEST_F_TIMEOUT(contract, aux_head_is_the_extent, 300)
{
	struct trace_consumer *tc = &self->tc;
	uint64_t enabled_at = 0, want;
	double start;
	int round;

	ASSERT_EQ(0, contract_open(tc, variant->mode, 8, 500000, 0, self->cpu));
	for (round = 0; round < 8; round++) {
		want = tc->bytes + 2 * tc->size;
		start = now_s();
		ASSERT_EQ(0, ioctl(tc->b.fd, PERF_EVENT_IOC_ENABLE, 0));
		while (tc->bytes < want) {
			ASSERT_LE(0, contract_read(tc, &self->tail))
				TH_LOG("round %d: %s", round, tc->err);
			/* TRUNCATED disables the event; perf enables again. */
			if (tc->truncated > enabled_at) {
				ioctl(tc->b.fd, PERF_EVENT_IOC_ENABLE, 0);
				enabled_at = tc->truncated;
			}
			ASSERT_GT(60, now_s() - start)
				contract_log(_metadata, tc, self->tail);
			usleep(200);
		}
		ASSERT_EQ(0, ioctl(tc->b.fd, PERF_EVENT_IOC_DISABLE, 0));
		ASSERT_EQ(0, contract_settled(tc, &self->tail))
			TH_LOG("round %d: %s", round, tc->err);
	}
	contract_log(_metadata, tc, self->tail);
	EXPECT_LE(16 * tc->size, tc->bytes);
}

#define WAKE_ATTEMPTS 3

/*
 * poll() as perf record does, 16 ticks per buffer, a watermark of 4 ticks:
 * a wakeup per watermark crossed.  So never asleep with a watermark unread
 * (a poll() timeout, or the buffer filling while asleep); at a wakeup at
 * most two watermarks unread and a tick each side (the consumer is a few
 * ms late; an attempt where it was later is run again, as is one the
 * buffer filled in); at least a wakeup per watermark crossed, less one in
 * eight a slow consumer may take two at once, and one; at most one per AUX
 * and data-area watermark crossed, plus one per TRUNCATED and one for the
 * end.
 */
TEST_F_TIMEOUT(contract, poll_wakes_at_aux_watermark, 300)
{
	struct trace_consumer *tc = &self->tc;
	unsigned long pages = contract_pages(), watermark, late;
	uint64_t data_head, most, least, want, wakeups, timeouts, prev, unread;
	struct perf_event_mmap_page *up;
	struct pollfd pfd;
	int attempt, ret;
	double start;

	watermark = pages * page_size() / 4;
	/* Two watermarks and a tick each side: a quarter watermark a tick. */
	late = 2 * watermark + watermark / 2;
	for (attempt = 1; attempt <= WAKE_ATTEMPTS; attempt++) {
		trace_close(tc);
		self->tail = 0;
		ASSERT_EQ(0, contract_open(tc, variant->mode, 16, 2000000,
					   watermark, self->cpu));
		up = trace_user_page(tc);
		wakeups = 0;
		timeouts = 0;
		unread = 0;
		want = 32 * watermark;
		pfd.fd = tc->b.fd;
		pfd.events = POLLIN;
		start = now_s();
		ASSERT_EQ(0, ioctl(tc->b.fd, PERF_EVENT_IOC_ENABLE, 0));
		while (self->tail < want && !tc->truncated &&
		       now_s() - start < 120) {
			ret = poll(&pfd, 1, 1000);
			ASSERT_LE(0, ret);
			ASSERT_EQ(0, pfd.revents & (POLLHUP | POLLERR));
			wakeups += ret > 0;
			prev = self->tail;
			ASSERT_LE(0, contract_read(tc, &self->tail))
				TH_LOG("%s", tc->err);
			/* Asleep a second: not a watermark past the last. */
			if (!ret && self->tail - prev >= watermark)
				timeouts++;
			if (ret > 0 && self->tail - prev > unread)
				unread = self->tail - prev;
		}
		ASSERT_EQ(0, ioctl(tc->b.fd, PERF_EVENT_IOC_DISABLE, 0));
		ASSERT_EQ(0, contract_settled(tc, &self->tail))
			TH_LOG("%s", tc->err);
		data_head = __atomic_load_n(&up->data_head, __ATOMIC_ACQUIRE);
		most = self->tail / watermark +
		       data_head / (AUX_DATA_PAGES * page_size() / 2) +
		       tc->truncated + 2;
		least = self->tail / watermark;
		least -= least / 8 + 1;
		TH_LOG("attempt %d: %llu wakeups for %llu bytes (watermark %lu)",
		       attempt, (unsigned long long)wakeups,
		       (unsigned long long)self->tail, watermark);
		TH_LOG("wakeups allowed %llu to %llu, %llu lost, at most %llu bytes unread",
		       (unsigned long long)least, (unsigned long long)most,
		       (unsigned long long)timeouts, (unsigned long long)unread);
		contract_log(_metadata, tc, self->tail);
		ASSERT_EQ(0, timeouts);
		ASSERT_GE(most, wakeups);
		if (!tc->truncated && unread <= late) {
			ASSERT_LE(want, self->tail);
			ASSERT_LE(least, wakeups);
			break;
		}
	}
	/* Each attempt filled the buffer, or woke late: wakeups lost. */
	ASSERT_GE(WAKE_ATTEMPTS, attempt)
		TH_LOG("buffer full, or %lu bytes waiting, at a wakeup %d times",
		       late, WAKE_ATTEMPTS);
}

TEST_HARNESS_MAIN
