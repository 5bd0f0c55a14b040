// SPDX-License-Identifier: GPL-2.0
/*
 * mmap() of the AUX area on lib/test_aux_pmu.c's PMUs: requests at the
 * bounds perf_mmap() checks get their documented errno and leave nothing
 * mapped; the mlock limits; an AUX area charged to locked_vm once however
 * often it is mapped; mapping loops leak nothing.
 */
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "../kselftest_harness.h"
#include "aux_common.h"
#include "aux_extended.h"

#define RW (PROT_READ | PROT_WRITE)

/*
 * AUX mmap()s at the boundaries perf_mmap() and perf_mmap_aux() check (no
 * privilege needed): each gets its errno (EINVAL unless said), leaves the
 * event's VMAs and the PMUs' vmaps as before, and the right request maps.
 */
struct bounds {
	int fd, kmsg;
	void *base;
	size_t data_size;
	int vmas, vmaps;
};

FIXTURE(bounds) {
	struct bounds b;
};

/* Mappings of perf event files in this process, or -1. */
static int event_vmas(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	size_t len = 0;
	char *line = NULL;
	int n = 0;

	if (!f)
		return -1;
	while (getline(&line, &len, f) > 0)
		n += !!strstr(line, "[perf_event]");
	free(line);
	fclose(f);
	return n;
}

/* The data area: the user page and 4 data pages. */
#define BOUNDS_DATA_PAGES 5
/* Pages of the AUX area the good requests map. */
#define AUX_AREA_PAGES 2

FIXTURE_SETUP(bounds)
{
	int type = pmu_type(aux_pmu_names[CAPS_LARGE]);

	self->b.fd = -1;
	self->b.base = MAP_FAILED;
	self->b.kmsg = -1;
	if (type < 0)
		SKIP(return, NO_TEST_PMU);
	self->b.kmsg = kmsg_open_at_end();
	self->b.fd = aux_event_open(type, 0);
	ASSERT_LE(0, self->b.fd);
	self->b.data_size = BOUNDS_DATA_PAGES * page_size();
	self->b.vmas = event_vmas();
	self->b.vmaps = module_vmaps();
}

FIXTURE_TEARDOWN(bounds)
{
	if (self->b.base != MAP_FAILED)
		munmap(self->b.base, self->b.data_size);
	if (self->b.fd >= 0)
		close(self->b.fd);
	EXPECT_EQ(0, kmsg_warnings(self->b.kmsg));
	if (self->b.kmsg >= 0)
		close(self->b.kmsg);
}

static void bounds_map_data(struct __test_metadata *_metadata,
			    struct bounds *self)
{
	self->base = mmap(NULL, self->data_size, RW, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->base);
}

/*
 * mmap() of @len at file offset @pgoff pages, the user page (if mapped)
 * saying aux_offset @offset and aux_size @size: the mapping, or MAP_FAILED.
 */
static void *bounds_mmap(struct bounds *self, unsigned long offset,
			 unsigned long size, unsigned long len,
			 unsigned long pgoff)
{
	struct perf_event_mmap_page *up = self->base;

	if (self->base != MAP_FAILED) {
		up->aux_offset = offset;
		up->aux_size = size;
	}
	return mmap(NULL, len, RW, MAP_SHARED, self->fd, pgoff * page_size());
}

/*
 * bounds_mmap() gets @err and leaves no VMA and no vmap behind (@extra:
 * the VMAs and vmaps of earlier good requests still mapped).
 */
static void bounds_refused(struct __test_metadata *_metadata,
			   struct bounds *self, unsigned long offset,
			   unsigned long size, size_t len, unsigned long pgoff,
			   int extra, int err)
{
	void *p = bounds_mmap(self, offset, size, len, pgoff);
	int vmaps;

	if (p != MAP_FAILED) {
		munmap(p, len);
		ASSERT_EQ(MAP_FAILED, p)
			TH_LOG("the request was mapped");
	}
	ASSERT_EQ(err, errno);
	EXPECT_EQ(self->vmas + (self->base != MAP_FAILED) + extra,
		  event_vmas());
	vmaps = module_vmaps();
	if (vmaps >= 0 && self->vmaps >= 0)
		EXPECT_EQ(self->vmaps + extra, vmaps);
}

/* The right request after a refused one: it maps, and unmaps clean. */
static void bounds_still_maps(struct __test_metadata *_metadata,
			      struct bounds *self)
{
	size_t len = AUX_AREA_PAGES * page_size();
	void *p = bounds_mmap(self, self->data_size, len, len,
			      BOUNDS_DATA_PAGES);

	ASSERT_NE(MAP_FAILED, p);
	munmap(p, len);
}

TEST_F(bounds, aux_before_data_area)
{
	size_t len = AUX_AREA_PAGES * page_size();

	bounds_refused(_metadata, &self->b, 0, 0, len, BOUNDS_DATA_PAGES, 0, EINVAL);
	bounds_map_data(_metadata, &self->b);
	bounds_still_maps(_metadata, &self->b);
}

TEST_F(bounds, aux_offset_on_user_page)
{
	size_t len = AUX_AREA_PAGES * page_size();

	bounds_map_data(_metadata, &self->b);
	/* Where the mapping asks for the AUX area, the user page says 0. */
	bounds_refused(_metadata, &self->b, 0, len, len, BOUNDS_DATA_PAGES, 0, EINVAL);
	/* At file offset 0 it is the data area again, of another size. */
	bounds_refused(_metadata, &self->b, 0, len, len, 0, 0, EINVAL);
	bounds_still_maps(_metadata, &self->b);
}

TEST_F(bounds, aux_offset_inside_data_area)
{
	size_t len = AUX_AREA_PAGES * page_size();

	bounds_map_data(_metadata, &self->b);
	bounds_refused(_metadata, &self->b, page_size(), len, len, 1, 0, EINVAL);
	bounds_still_maps(_metadata, &self->b);
}

/* The last data page, which "aux_offset < data pages" would let through. */
TEST_F(bounds, aux_offset_on_last_data_page)
{
	size_t len = AUX_AREA_PAGES * page_size();
	unsigned long last = BOUNDS_DATA_PAGES - 1;

	bounds_map_data(_metadata, &self->b);
	bounds_refused(_metadata, &self->b, last * page_size(), len, len, last,
		       0, EINVAL);
	bounds_still_maps(_metadata, &self->b);
}

/* One page short of the end of the data area, two pages long: overlaps. */
TEST_F(bounds, aux_area_overlaps_data_area)
{
	size_t len = 4 * page_size();
	unsigned long at = BOUNDS_DATA_PAGES - 2;

	bounds_map_data(_metadata, &self->b);
	bounds_refused(_metadata, &self->b, at * page_size(), len, len, at, 0, EINVAL);
	bounds_still_maps(_metadata, &self->b);
}

/* A second AUX area starting inside the first one. */
TEST_F(bounds, aux_area_overlaps_aux_area)
{
	size_t len = 4 * page_size();
	void *first;

	bounds_map_data(_metadata, &self->b);
	first = bounds_mmap(&self->b, self->b.data_size, len, len,
			    BOUNDS_DATA_PAGES);
	ASSERT_NE(MAP_FAILED, first);
	bounds_refused(_metadata, &self->b, self->b.data_size + 2 * page_size(),
		       len, len, BOUNDS_DATA_PAGES + 2, 1, EINVAL);
	munmap(first, len);
	bounds_still_maps(_metadata, &self->b);
}

/* The user page's aux_offset a byte past the page the mapping starts on. */
TEST_F(bounds, aux_offset_unaligned)
{
	size_t len = AUX_AREA_PAGES * page_size();

	bounds_map_data(_metadata, &self->b);
	bounds_refused(_metadata, &self->b, self->b.data_size + 1, len, len,
		       BOUNDS_DATA_PAGES, 0, EINVAL);
	bounds_still_maps(_metadata, &self->b);
}

TEST_F(bounds, aux_size_not_power_of_two_pages)
{
	size_t len = 3 * page_size();

	bounds_map_data(_metadata, &self->b);
	bounds_refused(_metadata, &self->b, self->b.data_size, len, len,
		       BOUNDS_DATA_PAGES, 0, EINVAL);
	bounds_still_maps(_metadata, &self->b);
}

/* aux_size a page and a byte: not whole pages, not the mapping. */
TEST_F(bounds, aux_size_unaligned)
{
	size_t len = AUX_AREA_PAGES * page_size();

	bounds_map_data(_metadata, &self->b);
	bounds_refused(_metadata, &self->b, self->b.data_size, page_size() + 1,
		       len, BOUNDS_DATA_PAGES, 0, EINVAL);
	bounds_still_maps(_metadata, &self->b);
}

TEST_F(bounds, aux_size_not_mapping_length)
{
	size_t len = AUX_AREA_PAGES * page_size();

	bounds_map_data(_metadata, &self->b);
	bounds_refused(_metadata, &self->b, self->b.data_size, 2 * len, len,
		       BOUNDS_DATA_PAGES, 0, EINVAL);
	bounds_refused(_metadata, &self->b, self->b.data_size, len, 2 * len,
		       BOUNDS_DATA_PAGES, 0, EINVAL);
	bounds_still_maps(_metadata, &self->b);
}

/* While an AUX area is mapped, one of another size at its offset. */
TEST_F(bounds, second_aux_mapping_other_size)
{
	size_t len = AUX_AREA_PAGES * page_size();
	void *first, *again;

	bounds_map_data(_metadata, &self->b);
	first = bounds_mmap(&self->b, self->b.data_size, len, len,
			    BOUNDS_DATA_PAGES);
	ASSERT_NE(MAP_FAILED, first);
	bounds_refused(_metadata, &self->b, self->b.data_size, 2 * len, 2 * len,
		       BOUNDS_DATA_PAGES, 1, EINVAL);
	/* The same size again is the same area, mapped twice. */
	again = bounds_mmap(&self->b, self->b.data_size, len, len,
			    BOUNDS_DATA_PAGES);
	ASSERT_NE(MAP_FAILED, again);
	munmap(again, len);
	munmap(first, len);
	bounds_still_maps(_metadata, &self->b);
}

TEST_F(bounds, aux_size_zero)
{
	bounds_map_data(_metadata, &self->b);
	bounds_refused(_metadata, &self->b, self->b.data_size, 0, page_size(),
		       BOUNDS_DATA_PAGES, 0, EINVAL);
	bounds_still_maps(_metadata, &self->b);
}

/* The synthetic PMU, like SPE and TRBE, wants at least two pages. */
TEST_F(bounds, aux_one_page_refused_by_pmu)
{
	bounds_map_data(_metadata, &self->b);
	bounds_refused(_metadata, &self->b, self->b.data_size, page_size(),
		       page_size(), BOUNDS_DATA_PAGES, 0, ENOMEM);
	bounds_still_maps(_metadata, &self->b);
}

TEST_F(bounds, data_area_not_power_of_two)
{
	bounds_refused(_metadata, &self->b, 0, 0, 4 * page_size(), 0, 0, EINVAL);
}

TEST_F(bounds, aux_mapping_private)
{
	size_t len = AUX_AREA_PAGES * page_size();
	struct perf_event_mmap_page *up;

	bounds_map_data(_metadata, &self->b);
	up = self->b.base;
	up->aux_offset = self->b.data_size;
	up->aux_size = len;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, len, RW, MAP_PRIVATE, self->b.fd,
				   self->b.data_size));
	EXPECT_EQ(EINVAL, errno);
	bounds_still_maps(_metadata, &self->b);
}

/* The AUX mapping cannot be split: perf_mmap_may_split() says no. */
TEST_F(bounds, aux_partial_munmap)
{
	size_t len = AUX_AREA_PAGES * page_size();
	char *p;

	bounds_map_data(_metadata, &self->b);
	p = bounds_mmap(&self->b, self->b.data_size, len, len,
			BOUNDS_DATA_PAGES);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, munmap(p + page_size(), page_size()));
	EXPECT_EQ(EINVAL, errno);
	munmap(p, len);
}

/* A per-task inherited event cannot be mapped at all. */
TEST(inherited_event_for_any_cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = pmu_type(aux_pmu_names[CAPS_LARGE]),
		.disabled = 1,
		.inherit = 1,
		.exclude_kernel = 1,	/* as any user may */
	};
	void *p;
	int fd;

	if ((int)attr.type < 0)
		SKIP(return, NO_TEST_PMU);
	fd = sys_perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	ASSERT_LE(0, fd);
	p = mmap(NULL, 3 * page_size(), RW, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

/* An event whose PMU has no setup_aux() has no AUX area. */
TEST(aux_on_pmu_without_aux)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.disabled = 1,
	};
	struct perf_event_mmap_page *up;
	size_t data = 3 * page_size(), sz = 4 * page_size();
	void *base, *p;
	int fd;

	fd = sys_perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM || errno == ENOENT))
		SKIP(return, "no software perf events here");
	ASSERT_LE(0, fd)
		TH_LOG("perf_event_open(task-clock): %s", strerror(errno));
	base = mmap(NULL, data, RW, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, base);
	up = base;
	up->aux_offset = data;
	up->aux_size = sz;
	p = mmap(NULL, sz, RW, MAP_SHARED, fd, data);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EOPNOTSUPP, errno);
	munmap(base, data);
	close(fd);
}

/*
 * Beyond perf_event_mlock_kb and RLIMIT_MEMLOCK, no CAP_IPC_LOCK: EPERM.  The
 * capability drop stays in the test's process; the parent restores the sysctl.
 */
static const char mlock_kb[] = "/proc/sys/kernel/perf_event_mlock_kb";

FIXTURE(aux_mlock) {
	long saved_kb;
};

FIXTURE_SETUP(aux_mlock)
{
	self->saved_kb = sysctl_read(mlock_kb);
	if (self->saved_kb < 0 || getuid())
		SKIP(return, "needs root to set perf_event_mlock_kb");
	ASSERT_EQ(0, sysctl_write(mlock_kb, 0));
	/* No teardown after a failed setup: put the sysctl back here. */
	if (aux_setup_failure_forced()) {
		sysctl_write(mlock_kb, self->saved_kb);
		ASSERT_FALSE(aux_setup_failure_forced())
			TH_LOG("setup failure forced after perf_event_mlock_kb=0");
	}
}

FIXTURE_TEARDOWN_PARENT(aux_mlock)
{
	EXPECT_EQ(0, sysctl_write(mlock_kb, self->saved_kb));
}

/* Drops CAP_IPC_LOCK from the effective set of this process. */
static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

TEST_F(aux_mlock, beyond_limit_without_privilege)
{
	int type = pmu_type(aux_pmu_names[CAPS_LARGE]), fd;
	struct rlimit none = { 0, 0 };
	struct perf_event_mmap_page *up;
	size_t data = 3 * page_size(), sz = 16 * page_size();
	void *base, *p;

	if (type < 0)
		SKIP(return, NO_TEST_PMU);
	fd = aux_event_open(type, 0);
	ASSERT_LE(0, fd);
	base = mmap(NULL, data, RW, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, base);
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &none));
	ASSERT_EQ(0, drop_ipc_lock());
	up = base;
	up->aux_offset = data;
	up->aux_size = sz;
	p = mmap(NULL, sz, RW, MAP_SHARED, fd, data);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);
	munmap(base, data);
	close(fd);
}

/* A user no process runs as: its locked_vm starts at 0 and dies with us. */
#define CHARGE_UID_BASE 1500000000u
/* The data area beside it: the user page and one data page. */
#define CHARGE_DATA_PAGES 2

/* Both areas of a new event of PMU @type, or -errno. */
static int charge_buffer_map(struct aux_buffer *b, int type,
			     unsigned long aux_pages)
{
	memset(b, 0, sizeof(*b));
	b->fd = aux_event_open(type, 0);
	if (b->fd < 0)
		return -errno;
	b->data_size = CHARGE_DATA_PAGES * page_size();
	b->base = mmap(NULL, b->data_size, RW, MAP_SHARED, b->fd, 0);
	if (b->base == MAP_FAILED) {
		b->base = NULL;
		return -errno;
	}
	return aux_area_map(b, aux_pages, false);
}

/*
 * An unprivileged user (RLIMIT_MEMLOCK 0) maps the AUX area again and again:
 * only the first mapping is charged, and all of it comes back at the last
 * unmap, so the buffer maps again after (a charge left behind: EPERM).
 */
TEST(aux_area_mapped_again_charged_once)
{
	struct rlimit none = { 0, 0 };
	uid_t uid = CHARGE_UID_BASE + getpid() % 1000000;
	int type = pmu_type(aux_pmu_names[CAPS_LARGE]);
	long kb = sysctl_read("/proc/sys/kernel/perf_event_mlock_kb");
	long limit, pages, i, rounds;
	struct aux_buffer b;
	void *again;
	int ret;

	if (type < 0)
		SKIP(return, NO_TEST_PMU);
	if (geteuid())
		SKIP(return, "needs root to run as a new unprivileged user");
	if (sysctl_read("/proc/sys/kernel/perf_event_paranoid") < 0)
		SKIP(return, "perf_event_paranoid below 0 lifts the limit");
	/* What perf_mmap() charges to locked_vm before RLIMIT_MEMLOCK. */
	limit = kb / (page_size() / 1024) * sysconf(_SC_NPROCESSORS_ONLN);
	/* The largest AUX area that fits beside the data area. */
	for (pages = 1; CHARGE_DATA_PAGES + 2 * pages <= limit; pages *= 2)
		;
	if (CHARGE_DATA_PAGES + pages > limit)
		SKIP(return, "perf_event_mlock_kb allows no AUX buffer");
	rounds = 2 * limit / pages + 2;
	ASSERT_EQ(0, setgroups(0, NULL));
	ASSERT_EQ(0, setgid(uid));
	ASSERT_EQ(0, setuid(uid));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &none));
	ret = charge_buffer_map(&b, type, pages);
	if (b.fd < 0 && (ret == -EACCES || ret == -EPERM))
		SKIP(return, "perf_event_paranoid forbids unprivileged events");
	ASSERT_EQ(0, ret);
	for (i = 0; i < rounds; i++) {
		again = mmap(NULL, b.aux_size, RW, MAP_SHARED, b.fd,
			     b.data_size);
		ASSERT_NE(MAP_FAILED, again);
		ASSERT_EQ(0, munmap(again, b.aux_size));
	}
	aux_buffer_unmap(&b);
	ASSERT_EQ(0, close(b.fd));
	/* Nothing is mapped: the whole allowance is the user's again. */
	ret = charge_buffer_map(&b, type, pages);
	ASSERT_EQ(0, ret)
		TH_LOG("a %ld-page AUX area after %ld extra mappings",
		       pages, rounds);
	aux_buffer_unmap(&b);
	ASSERT_EQ(0, close(b.fd));
}

TEST_HARNESS_MAIN
