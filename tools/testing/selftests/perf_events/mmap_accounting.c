// SPDX-License-Identifier: GPL-2.0-only
/*
 * A perf buffer is charged to its user's locked_vm once, when it is first
 * mapped, and uncharged when its last mapping goes.  Mapping it again,
 * and unmapping that mapping, must leave the charge as it was.
 *
 * The test runs as an unprivileged user with RLIMIT_MEMLOCK at 0, so that
 * no buffer can be charged beyond perf_event_mlock_kb: a charge left
 * behind by the churn makes the next buffer fail with EPERM.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <linux/perf_event.h>

#include "kselftest_harness.h"

/* A user no process runs as: its locked_vm starts at 0 and dies with us. */
#define TEST_UID_BASE	1500000000u

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* The pages perf_mmap() charges to locked_vm before it needs RLIMIT_MEMLOCK. */
static long user_lock_pages(void)
{
	long kb = read_long("/proc/sys/kernel/perf_event_mlock_kb");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (kb < 0 || cpus < 1)
		return -1;
	return kb / (sysconf(_SC_PAGESIZE) / 1024) * cpus;
}

static int dummy_event_open(void)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.type		= PERF_TYPE_SOFTWARE,
		.config		= PERF_COUNT_SW_DUMMY,
		.disabled	= 1,
		.exclude_kernel	= 1,
		.exclude_hv	= 1,
	};

	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static void *buffer_map(int fd, size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
}

TEST(data_area_mapped_again_charged_once)
{
	struct rlimit none = { 0, 0 };
	uid_t uid = TEST_UID_BASE + getpid() % 1000000;
	long limit, pages, i, rounds;
	size_t len;
	void *base, *again;
	int fd;

	if (geteuid())
		SKIP(return, "needs root to run as a new unprivileged user");
	if (read_long("/proc/sys/kernel/perf_event_paranoid") < 0)
		SKIP(return, "perf_event_paranoid below 0 lifts the limit");
	limit = user_lock_pages();
	if (limit < 2)
		SKIP(return, "perf_event_mlock_kb allows no buffer");

	/* The largest buffer the allowance takes: a user page and 2^n. */
	for (pages = 1; 1 + 2 * pages <= limit; pages *= 2)
		;
	len = (1 + pages) * sysconf(_SC_PAGESIZE);
	/* Enough mappings to charge the allowance twice over, if charged. */
	rounds = 2 * limit / (1 + pages) + 2;

	ASSERT_EQ(0, setgroups(0, NULL));
	ASSERT_EQ(0, setgid(uid));
	ASSERT_EQ(0, setuid(uid));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &none));

	fd = dummy_event_open();
	if (fd < 0 && (errno == EACCES || errno == EPERM))
		SKIP(return, "perf_event_paranoid forbids unprivileged events");
	ASSERT_LE(0, fd);
	base = buffer_map(fd, len);
	ASSERT_NE(MAP_FAILED, base);

	for (i = 0; i < rounds; i++) {
		again = buffer_map(fd, len);
		ASSERT_NE(MAP_FAILED, again);
		ASSERT_EQ(0, munmap(again, len));
	}
	ASSERT_EQ(0, munmap(base, len));
	ASSERT_EQ(0, close(fd));

	/* Nothing is mapped: the whole allowance is the user's again. */
	fd = dummy_event_open();
	ASSERT_LE(0, fd);
	base = buffer_map(fd, len);
	ASSERT_NE(MAP_FAILED, base)
	{
		TH_LOG("a %ld-page buffer after %ld extra mappings: %s",
		       1 + pages, rounds, strerror(errno));
	}
	ASSERT_EQ(0, munmap(base, len));
	ASSERT_EQ(0, close(fd));
}

TEST_HARNESS_MAIN
