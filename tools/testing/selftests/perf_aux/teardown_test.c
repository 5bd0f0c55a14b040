// SPDX-License-Identifier: GPL-2.0
/*
 * Tearing down while trace is being written, where syzbot finds perf AUX
 * bugs: the AUX area unmapped (the first of two mappings, or the only
 * one), the event closed, the mapping process gone or forking, the traced
 * CPU taken offline, and many threads mapping and
 * unmapping buffers of every capability at once.  Afterwards the kernel
 * must be clean: no WARN or BUG in the log, and no vmap of the synthetic
 * AUX PMUs left in /proc/vmallocinfo.  Errors are the documented ones.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "aux_extended.h"
#include "aux_trace.h"

#define NO_HOTPLUG "no CPU that can go offline"
#define ROUNDS 20

static const struct gen_config gen_spe = {
	.mode = GEN_SPE, .words = 6, .align_log2 = 6, .burst = 64,
	.period_ns = 500000,
};

FIXTURE(teardown) {
	int kmsg;
	int vmaps;	/* module vmaps before the test */
	int cpu;	/* where the generators run */
	unsigned long pages;
};

FIXTURE_SETUP(teardown)
{
	const char *why;

	self->kmsg = -1;
	why = generators_unavailable(&self->vmaps);
	if (why)
		SKIP(return, "%s", why);
	/*
	 * A PMD of PREFER_LARGE buffer, or where a PMD is hundreds of MiB
	 * (64K pages), 2 MiB: a cont-PTE block there.
	 */
	self->pages = aux_pages(PMD_BYTES);
	if (pmd_bytes() > 32UL << 20)
		self->pages = (2UL << 20) / page_size();
	if (self->pages * page_size() / 1024 >
	    (unsigned long)mem_available_kb() / 4)
		SKIP(return, NO_MEMORY);
	self->cpu = trace_pick_cpus();
	self->kmsg = kmsg_open_at_end();
}

/* What every test must leave: a clean log, nothing left mapped. */
FIXTURE_TEARDOWN(teardown)
{
	EXPECT_EQ(self->vmaps, module_vmaps_settled(self->vmaps));
	EXPECT_EQ(0, kmsg_warnings(self->kmsg));
	if (self->kmsg >= 0)
		close(self->kmsg);
}

/*
 * A generator writing into a fresh PREFER_LARGE buffer on @cpu, a quarter
 * of it per tick (gen_quarter_burst()).
 */
static int writing(struct trace_consumer *tc, unsigned long pages, int cpu)
{
	struct gen_config cfg = gen_spe;
	int ret;

	cfg.burst = gen_quarter_burst(&cfg, pages * page_size());
	ret = trace_open(tc, CAPS_LARGE, &cfg, pages, false, cpu);

	if (!ret && ioctl(tc->b.fd, PERF_EVENT_IOC_ENABLE, 0))
		ret = -errno;
	if (!ret)
		usleep(2000);
	return ret;
}

TEST_F(teardown, munmap_aux_while_writing)
{
	struct trace_consumer tc;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		ASSERT_EQ(0, writing(&tc, self->pages, self->cpu));
		ASSERT_EQ(0, munmap(tc.b.aux, tc.b.aux_size));
		tc.b.aux = NULL;
		/* The event lives on without its AUX area. */
		ASSERT_EQ(0, ioctl(tc.b.fd, PERF_EVENT_IOC_DISABLE, 0));
		trace_close(&tc);
	}
}

/*
 * The AUX area and the data area each mapped twice: the first mapping of
 * each unmapped, the buffer's vmap is still there and trace still reads
 * back through the second ones; it goes with the last mapping.
 */
TEST_F(teardown, second_mappings_outlive_the_first)
{
	struct trace_consumer tc;
	void *aux, *data;

	ASSERT_EQ(0, writing(&tc, self->pages, self->cpu));
	aux = mmap(NULL, tc.b.aux_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   tc.b.fd, tc.b.data_size);
	ASSERT_NE(MAP_FAILED, aux);
	data = mmap(NULL, tc.b.data_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    tc.b.fd, 0);
	ASSERT_NE(MAP_FAILED, data);
	ASSERT_EQ(0, munmap(tc.b.aux, tc.b.aux_size));
	tc.b.aux = aux;
	ASSERT_EQ(0, munmap(tc.b.base, tc.b.data_size));
	tc.b.base = data;
	EXPECT_EQ(self->vmaps + 1, module_vmaps());
	EXPECT_EQ(0, trace_consume(&tc, 4 * tc.size, 0, 60))
		TH_LOG("%s", tc.err);
	EXPECT_EQ(0, trace_finish(&tc, 0))
		TH_LOG("%s", tc.err);
	trace_close(&tc);
}

TEST_F(teardown, close_while_writing)
{
	struct trace_consumer tc;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		ASSERT_EQ(0, writing(&tc, self->pages, self->cpu));
		/* The mappings hold the buffer after the file is gone. */
		ASSERT_EQ(0, close(tc.b.fd));
		tc.b.fd = -1;
		usleep(1000);
		trace_close(&tc);
	}
}

TEST_F(teardown, exit_while_writing)
{
	struct trace_consumer tc;
	int i, status;
	pid_t pid;

	for (i = 0; i < ROUNDS; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(writing(&tc, self->pages, self->cpu) ? 1 : 0);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
}

/* Children come and go while the parent's trace is written and read. */
TEST_F_TIMEOUT(teardown, fork_while_writing, 180)
{
	struct trace_consumer tc;
	int i, status, ret;
	pid_t pid;

	ASSERT_EQ(0, writing(&tc, self->pages, self->cpu));
	for (i = 0; i < ROUNDS; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(0);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ret = trace_consume(&tc, tc.bytes + 1, 0, 30);
		ASSERT_EQ(0, ret)
			TH_LOG("%s", tc.err);
	}
	ret = trace_finish(&tc, trace_consume(&tc, 0, 2, 60));
	TH_LOG("%llu bytes checked across %d forks, %llu wraps",
	       (unsigned long long)tc.bytes, ROUNDS,
	       (unsigned long long)tc.wraps);
	EXPECT_EQ(0, ret)
		TH_LOG("%s", tc.err);
	trace_close(&tc);
}

/* A CPU that may go offline: not the first, with an online file. */
static int hotplug_cpu(void)
{
	cpu_set_t set;
	char path[64];
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (cpu = CPU_SETSIZE - 1; cpu > 0; cpu--) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/online", cpu);
		if (CPU_ISSET(cpu, &set) && !access(path, W_OK))
			return cpu;
	}
	return -1;
}

static int cpu_online(int cpu, long on)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online",
		 cpu);
	return sysctl_write(path, on);
}

/*
 * Brings @cpu back online once this process is gone, however it ends (a
 * failed assertion, the harness's timeout, a kill): a child of its own
 * session that waits for the end of a pipe only this process writes to.
 * Made before any event is opened, so that it holds none.  The pipe's
 * write end, or -1.
 */
static int cpu_online_guard(int cpu)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (!pid) {
		close(fds[1]);
		setsid();
		while (read(fds[0], &c, 1) > 0)
			;
		cpu_online(cpu, 1);
		_exit(0);
	}
	close(fds[0]);
	if (pid < 0) {
		close(fds[1]);
		return -1;
	}
	return fds[1];
}

/*
 * The traced CPU goes offline while its buffer is written: perf detaches
 * the CPU's events for good, so generation stops there, and what was
 * written up to then checks out.  Back online, a new event on the CPU
 * traces as before.
 */
TEST_F_TIMEOUT(teardown, cpu_offline_while_writing, 180)
{
	struct trace_consumer tc, again;
	uint64_t before, after;
	int cpu = hotplug_cpu(), guard, ret;

	if (cpu < 0)
		SKIP(return, NO_HOTPLUG);
	guard = cpu_online_guard(cpu);
	ASSERT_LE(0, guard);
	ASSERT_EQ(0, writing(&tc, self->pages, cpu));
	ASSERT_EQ(0, trace_consume(&tc, 0, 1, 60))
		TH_LOG("%s", tc.err);
	ASSERT_EQ(0, cpu_online(cpu, 0));
	before = trace_count(&tc);
	usleep(100000);
	after = trace_count(&tc);
	ret = trace_finish(&tc, trace_drain(&tc));
	ASSERT_EQ(0, cpu_online(cpu, 1));
	EXPECT_LT(0, before);
	EXPECT_EQ(before, after)
		TH_LOG("records generated on CPU %d while it was offline", cpu);
	TH_LOG("CPU %d: %llu bytes checked, %llu wraps, %llu truncated", cpu,
	       (unsigned long long)tc.bytes, (unsigned long long)tc.wraps,
	       (unsigned long long)tc.truncated);
	EXPECT_EQ(0, ret)
		TH_LOG("%s", tc.err);
	trace_close(&tc);

	ASSERT_EQ(0, writing(&again, self->pages, cpu));
	ret = trace_finish(&again, trace_consume(&again, 0, 2, 60));
	EXPECT_EQ(0, ret)
		TH_LOG("CPU %d back online: %s", cpu, again.err);
	trace_close(&again);
	close(guard);
}

TEST_F(teardown, threads_map_and_unmap)
{
	struct aux_churn c[8];
	pthread_t t[8];
	int i, cpu[CPU_SETSIZE], cpus = 0, maps = 0, refused = 0;
	cpu_set_t set;

	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			cpu[cpus++] = i;
	for (i = 0; i < 8; i++) {
		c[i] = (struct aux_churn){
			.cpu = cpu, .cpus = cpus,
			.until = now_s() + 2, .seed = i + 1,
		};
		ASSERT_EQ(0, pthread_create(&t[i], NULL, aux_churn, &c[i]));
	}
	for (i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < 8; i++) {
		maps += c[i].maps;
		refused += c[i].refused;
		EXPECT_EQ(0, c[i].bad_errno)
			TH_LOG("thread %d: %s", i, strerror(c[i].bad_errno));
	}
	TH_LOG("%d buffers mapped, %d refused (EBUSY, ENOMEM)", maps, refused);
	EXPECT_LT(0, maps);
}

TEST_HARNESS_MAIN
