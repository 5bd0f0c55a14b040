// SPDX-License-Identifier: GPL-2.0
/*
 * Everything at once, for a while.  A generator writes trace at its
 * highest rate on every CPU (SPE-like and TRBE-like in turn), each buffer
 * consumed through four wraps and then replaced by a new one, while two
 * threads map and unmap buffers of every capability with the kernel's
 * fault injection failing some of the page allocations and kmallocs of
 * their AUX mmap()s (where CONFIG_FAIL_PAGE_ALLOC and CONFIG_FAILSLAB are
 * built).
 * Every byte of trace must check out, every refusal be EBUSY or ENOMEM;
 * afterwards nothing may be left mapped and the log hold no warning.
 *
 * PERF_AUX_SOAK_SECONDS sets the time: 10 s by default, the short soak of
 * every run, at most an hour; make soak DURATION=... runs this alone,
 * longer, under the sanitize variant and counts the kernel's reports in
 * the console.  It runs only with PERF_AUX_DESTRUCTIVE=1.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>

#include "../kselftest_harness.h"
#include "aux_extended.h"
#include "aux_trace.h"
#include "aux_fault.h"

#define SOAK_SECONDS 10
/* The longest soak one run takes, within its harness timeout. */
#define SOAK_MAX_SECONDS 3600
/* Injected failures the counters start from (times counts down). */
#define SOAK_TIMES 100000000L

static double soak_seconds(void)
{
	const char *s = getenv("PERF_AUX_SOAK_SECONDS");

	return s && atoi(s) > 0 ? atoi(s) : SOAK_SECONDS;
}

struct soak_tracer {
	pthread_t thread;
	int cpu;
	unsigned long pages;
	double until;
	uint64_t bytes, wraps, buffers, busy;
	int failed;		/* -errno of an undocumented refusal, or 1 */
	char err[256];
};

/* Buffers on one CPU, one after the other, each checked to the byte. */
static void *soak_trace(void *p)
{
	struct soak_tracer *t = p;
	struct trace_consumer tc;
	struct gen_config cfg = {
		.words = 6, .align_log2 = 6, .period_ns = 500000,
	};
	int ret;

	while (now_s() < t->until && !t->failed) {
		cfg.mode = t->buffers % 2 ? GEN_TRBE : GEN_SPE;
		cfg.burst = gen_quarter_burst(&cfg, t->pages * page_size());
		ret = trace_open(&tc, CAPS_LARGE, &cfg, t->pages, false,
				 t->cpu);
		/* A churning thread may hold this CPU's PMU, or the memory. */
		if (ret == -EBUSY || ret == -ENOMEM) {
			t->busy++;
			usleep(1000);
			continue;
		}
		if (ret) {
			t->failed = ret;
			break;
		}
		if (ioctl(tc.b.fd, PERF_EVENT_IOC_ENABLE, 0))
			t->failed = -errno;
		else if (trace_finish(&tc, trace_consume(&tc, 0, 4, 120)))
			t->failed = 1;
		memcpy(t->err, tc.err, sizeof(t->err));
		t->bytes += tc.bytes;
		t->wraps += tc.wraps;
		t->buffers++;
		trace_close(&tc);
	}
	return NULL;
}

/* Injected failures so far: what times counted down from SOAK_TIMES. */
static long injected(const char *dir)
{
	char path[128];
	long left;

	snprintf(path, sizeof(path), "%s/times", dir);
	left = sysctl_read(path);
	return left < 0 ? 0 : SOAK_TIMES - left;
}

FIXTURE(soak) {
	int kmsg;
	int vmaps;
	bool inject;
};

FIXTURE_SETUP(soak)
{
	const char *why;

	self->kmsg = -1;
	self->inject = false;
	if (!aux_destructive())
		SKIP(return, NOT_DESTRUCTIVE);
	why = generators_unavailable(&self->vmaps);
	if (why)
		SKIP(return, "%s", why);
	self->kmsg = kmsg_open_at_end();
	if (access(FAIL_PAGE_ALLOC, F_OK) || access(FAILSLAB, F_OK))
		return;		/* the soak without injection */
	/* Last: the harness runs no teardown after a failed setup. */
	self->inject = true;
	if (fault_injection_setup() ?:
	    fault_attr(FAIL_PAGE_ALLOC, "min-order", 0) ?:
	    fault_inject(FAIL_PAGE_ALLOC, SOAK_TIMES, 20) ?:
	    fault_inject(FAILSLAB, SOAK_TIMES, 2)) {
		fault_injection_restore();
		ASSERT_TRUE(false)
			TH_LOG("cannot set up fault injection in debugfs");
	}
}

FIXTURE_TEARDOWN(soak)
{
	if (self->inject)
		fault_injection_restore();
	EXPECT_EQ(self->vmaps, module_vmaps_settled(self->vmaps));
	EXPECT_EQ(0, kmsg_warnings(self->kmsg));
	if (self->kmsg >= 0)
		close(self->kmsg);
}

TEST_F_TIMEOUT(soak, trace_churn_and_faults, SOAK_MAX_SECONDS + 600)
{
	static struct soak_tracer tr[CPU_SETSIZE];
	double until = now_s() + soak_seconds();
	int i, cpu[CPU_SETSIZE], cpus = 0, maps = 0, refused = 0;
	uint64_t bytes = 0, wraps = 0, buffers = 0;
	struct aux_churn ch[2];
	pthread_t churn[2];
	long pages_failed, slabs_failed;
	cpu_set_t set;

	ASSERT_GE(SOAK_MAX_SECONDS, (int)soak_seconds())
	{
		TH_LOG("PERF_AUX_SOAK_SECONDS above %d s, the harness timeout's bound",
		       SOAK_MAX_SECONDS);
	}
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			cpu[cpus++] = i;
	for (i = 0; i < cpus; i++) {
		/* A PMD, or 2 MiB where a PMD is hundreds of MiB. */
		tr[i] = (struct soak_tracer){
			.cpu = cpu[i], .until = until,
			.pages = aux_pages(PMD_BYTES),
		};
		if (pmd_bytes() > 32UL << 20)
			tr[i].pages = (2UL << 20) / page_size();
		ASSERT_EQ(0, pthread_create(&tr[i].thread, NULL, soak_trace,
					    &tr[i]));
	}
	for (i = 0; i < 2; i++) {
		ch[i] = (struct aux_churn){
			.cpu = cpu, .cpus = cpus, .until = until,
			.seed = i + 1, .inject = self->inject,
		};
		ASSERT_EQ(0, pthread_create(&churn[i], NULL, aux_churn, &ch[i]));
	}
	for (i = 0; i < 2; i++) {
		pthread_join(churn[i], NULL);
		maps += ch[i].maps;
		refused += ch[i].refused;
		EXPECT_EQ(0, ch[i].bad_errno)
			TH_LOG("churn %d: %s", i, strerror(ch[i].bad_errno));
	}
	pages_failed = self->inject ? injected(FAIL_PAGE_ALLOC) : 0;
	slabs_failed = self->inject ? injected(FAILSLAB) : 0;
	for (i = 0; i < cpus; i++) {
		pthread_join(tr[i].thread, NULL);
		bytes += tr[i].bytes;
		wraps += tr[i].wraps;
		buffers += tr[i].buffers;
		EXPECT_EQ(0, tr[i].failed)
			TH_LOG("CPU %d: %s", tr[i].cpu, tr[i].failed < 0 ?
			       strerror(-tr[i].failed) : tr[i].err);
		/* Every CPU traced, the churn notwithstanding. */
		EXPECT_LT(0, tr[i].wraps)
			TH_LOG("CPU %d: no buffer traced through (%llu busy)",
			       tr[i].cpu, (unsigned long long)tr[i].busy);
	}
	/* One line each, for a summary of the run. */
	TH_LOG("soak: %.0f s, %d CPUs, %llu bytes checked, %llu wraps",
	       soak_seconds(), cpus, (unsigned long long)bytes,
	       (unsigned long long)wraps);
	TH_LOG("soak: %llu buffers traced, %d mapped and %d refused by churn",
	       (unsigned long long)buffers, maps, refused);
	if (self->inject)
		TH_LOG("soak: injected failures: %ld page allocations, %ld kmallocs",
		       pages_failed, slabs_failed);
	else
		TH_LOG("soak: no fault injection");
	EXPECT_LT(0, maps);
}

TEST_HARNESS_MAIN
