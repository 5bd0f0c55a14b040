// SPDX-License-Identifier: GPL-2.0
/*
 * Trace on every CPU at once, as SPE and TRBE trace on a board: one
 * CPU-wide event with its own AUX buffer per online CPU, every generator
 * writing at the same time while one consumer thread per buffer reads.
 * Each CPU's trace must check out on its own: every byte as generated, in
 * order, sequence numbers jumping only after a flagged record, at least
 * four wraps.  Trace state that leaks between CPUs, or between buffers
 * mapped at the same time, shows here and not with one generator.
 *
 * Needs at least four CPUs (the pipeline boots four with VARIANT=smp).
 */
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>

#include "../kselftest_harness.h"
#include "aux_extended.h"

#define MIN_CPUS 4
#define MAX_CPUS 64
#define FEW_CPUS "fewer than 4 CPUs"

FIXTURE(smp) {
	int nr;
	int cpu[MAX_CPUS];
	struct trace_consumer *tc;
	int kmsg;
};

FIXTURE_VARIANT(smp) {
	enum aux_caps caps;
	enum gen_mode mode;
	enum aux_size size;
};

/* clang-format off */
FIXTURE_VARIANT_ADD(smp, large_spe_pmd) {
	.caps = CAPS_LARGE, .mode = GEN_SPE, .size = PMD_BYTES,
};

FIXTURE_VARIANT_ADD(smp, large_trbe_pmd) {
	.caps = CAPS_LARGE, .mode = GEN_TRBE, .size = PMD_BYTES,
};

FIXTURE_VARIANT_ADD(smp, nosg_spe_16p) {
	.caps = CAPS_NOSG, .mode = GEN_SPE, .size = SIXTEEN_PAGES,
};

FIXTURE_VARIANT_ADD(smp, none_trbe_16p) {
	.caps = CAPS_NONE, .mode = GEN_TRBE, .size = SIXTEEN_PAGES,
};

/* clang-format on */

FIXTURE_SETUP(smp)
{
	unsigned long pages = aux_pages(variant->size);
	size_t bytes = pages * page_size();
	struct gen_config cfg = {
		.mode = variant->mode,
		.words = 6,
		.align_log2 = 6,
		.period_ns = 500000,
	};
	cpu_set_t set;
	int i, ret;

	self->kmsg = -1;
	self->nr = 0;
	self->tc = NULL;
	if (pmu_type(aux_pmu_names[variant->caps]) < 0)
		SKIP(return, NO_TEST_PMU);
	if (!cpu_events_allowed())
		SKIP(return, NO_PERFMON);
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	for (i = 0; i < CPU_SETSIZE && self->nr < MAX_CPUS; i++)
		if (CPU_ISSET(i, &set))
			self->cpu[self->nr++] = i;
	if (self->nr < MIN_CPUS)
		SKIP(return, FEW_CPUS);
	if (self->nr * bytes / 1024 > (unsigned long)mem_available_kb() / 2)
		SKIP(return, NO_MEMORY);
	cfg.burst = gen_quarter_burst(&cfg, bytes);
	self->tc = calloc(self->nr, sizeof(*self->tc));
	ASSERT_NE(NULL, self->tc);
	for (i = 0; i < self->nr; i++)
		self->tc[i].b.fd = -1;
	self->kmsg = kmsg_open_at_end();
	for (i = 0; i < self->nr; i++) {
		ret = trace_open(&self->tc[i], variant->caps, &cfg, pages,
				 false, self->cpu[i]);
		ASSERT_EQ(0, ret)
		{
			TH_LOG("CPU %d: opening and mapping the generator: %s",
			       self->cpu[i], strerror(-ret));
		}
	}
}

FIXTURE_TEARDOWN(smp)
{
	int i;

	for (i = 0; self->tc && i < self->nr; i++)
		trace_close(&self->tc[i]);
	free(self->tc);
	EXPECT_EQ(0, kmsg_warnings(self->kmsg));
	if (self->kmsg >= 0)
		close(self->kmsg);
}

struct consumer_arg {
	struct trace_consumer *tc;
	int ret;
};

static void *consume(void *p)
{
	struct consumer_arg *a = p;

	a->ret = trace_finish(a->tc, trace_consume(a->tc, 0, 4, 150));
	return NULL;
}

TEST_F_TIMEOUT(smp, every_cpu_at_once, 240)
{
	struct consumer_arg arg[MAX_CPUS];
	pthread_t thread[MAX_CPUS];
	uint64_t bytes = 0, count;
	int i;

	/* Every generator runs before any consumer starts reading. */
	for (i = 0; i < self->nr; i++)
		ASSERT_EQ(0, ioctl(self->tc[i].b.fd, PERF_EVENT_IOC_ENABLE, 0));
	for (i = 0; i < self->nr; i++) {
		arg[i].tc = &self->tc[i];
		ASSERT_EQ(0, pthread_create(&thread[i], NULL, consume, &arg[i]));
	}
	for (i = 0; i < self->nr; i++)
		pthread_join(thread[i], NULL);
	for (i = 0; i < self->nr; i++) {
		struct trace_consumer *tc = &self->tc[i];

		count = trace_count(tc);
		TH_LOG("CPU %d: %llu bytes checked, %llu records, %llu wraps",
		       self->cpu[i], (unsigned long long)tc->bytes,
		       (unsigned long long)tc->records,
		       (unsigned long long)tc->wraps);
		TH_LOG("CPU %d: %llu truncated, %llu generated", self->cpu[i],
		       (unsigned long long)tc->truncated,
		       (unsigned long long)count);
		EXPECT_EQ(0, arg[i].ret)
		{
			TH_LOG("CPU %d: %s", self->cpu[i], tc->err);
		}
		EXPECT_LE(4, tc->wraps);
		/* Nothing checked that this CPU's generator did not write. */
		if (variant->mode == GEN_TRBE)
			count *= tc->rec;
		EXPECT_LE(variant->mode == GEN_SPE ? tc->seq : tc->pos, count);
		bytes += tc->bytes;
	}
	TH_LOG("%d CPUs, %llu bytes checked in all", self->nr,
	       (unsigned long long)bytes);
}

TEST_HARNESS_MAIN
