// SPDX-License-Identifier: GPL-2.0
/*
 * The AUX buffer in fragmented memory, as SPE and TRBE get it after days
 * of uptime: large free blocks are scarce and rb_alloc_aux() falls back.
 *
 * Each test fragments the guest's memory for real.  It fills free memory,
 * down to some room above the watermarks, with the pages of a memfd, locks
 * them, then punches out every page but the first of each naturally
 * aligned group of 2^FRAG_ORDER page frames (frame numbers from
 * /proc/self/pagemap).  The page kept in each group stops any free block
 * of FRAG_ORDER or more from forming there, and compaction is kept off:
 * it may not move locked pages (vm.compact_unevictable_allowed=0), skips
 * costly orders (vm.extfrag_threshold=1000) and does not run on its own
 * (vm.compaction_proactiveness=0).  Nor do the watermarks rise when the
 * tests' own allocations fragment memory further
 * (vm.watermark_boost_factor=0): a boost would wake kswapd to compact, and
 * put the fill below the raised minimum.  What stays free in larger blocks is
 * read from /proc/buddyinfo; a buffer of twice that must fall back.
 *
 * Under that, PREFER_LARGE buffers map; their chunks (from the module's
 * report, never assumed) follow the fallback rule: each as large as the
 * pages left allow, falling back one order at a time, so never below an
 * order that stayed free for the whole buffer; their vmap takes no more
 * translation entries than those mixed chunks allow; trace written through
 * them checks out over four wraps; a NO_SG snapshot buffer that needs a
 * block no longer free fails with ENOMEM.  Nothing is left mapped and the
 * log holds no warning.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "aux_extended.h"
#include "aux_trace.h"
#include "aux_report.h"
#include "aux_vmap.h"

/* Groups of 64 page frames: free blocks of at most 32 pages in them. */
#define FRAG_ORDER 6
/* What the fill leaves free above what the kernel keeps for itself. */
#define FRAG_ROOM_KB (8L << 10)
/*
 * Each test's time, its setup's fill included: the fill of 1.5 GiB took
 * 107 to 154 s under KASAN and lockdep on 4 emulated CPUs (2 GiB guest,
 * 7.2) and 185 to 197 s with 6.12's stack erasing too; the trace cases
 * trace for up to 2 minutes more.  The five add up to the program's
 * timeout in settings.
 */
#define FRAG_TIMEOUT 300
/* Times a NO_SG buffer larger than any free block is tried. */
#define NOSG_TRIES 3
/*
 * Buffers that take the large blocks the fill left over, at most: each
 * takes what its pointer arrays allow (64 MiB at 4K), and memory freed
 * after the fill can leave more than half of a 2 GiB guest in them.
 */
#define FRAG_HOGS 16
#define NO_LARGE_LEFT "no free block of the groups' order left"
#define PAGEMAP_PFN ((1ULL << 55) - 1)
#define PAGEMAP_PRESENT 0x8000000000000000ULL

static const char * const frag_sysctls[] = {
	"/proc/sys/vm/compact_unevictable_allowed",
	"/proc/sys/vm/extfrag_threshold",
	"/proc/sys/vm/compaction_proactiveness",
	"/proc/sys/vm/watermark_boost_factor",
};

static const long frag_values[] = { 0, 1000, 0, 0 };

#define NR_SYSCTLS ARRAY_SIZE(frag_sysctls)

/*
 * What the kernel keeps free beyond anyone's reach, in kB, from
 * /proc/zoneinfo: the zones' high watermarks, and what the per-CPU page
 * lists may hold (their "high:"), pages MemFree does not count that are
 * not in the buddy lists either (30 MiB over four CPUs under KASAN).
 */
static long kernel_reserve_kb(void)
{
	unsigned long v, pages = 0;
	char line[256];
	FILE *f = fopen("/proc/zoneinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " high %lu", &v) == 1 ||
		    sscanf(line, " high: %lu", &v) == 1)
			pages += v;
	fclose(f);
	return pages * (page_size() / 1024);
}

struct frag {
	long sysctl[NR_SYSCTLS];	/* as found; -1: absent or not set */
	int memfd;
	void *fill;
	size_t fill_bytes;
	unsigned long kept;		/* pages left in the memfd */
	int group_order;
	int max_order;
	unsigned long large_free;	/* pages in blocks of group_order up */
	unsigned long pages;		/* the buffer that must fall back */
	int floor;			/* an order free for all of it */
	bool maps_large;		/* vmap() maps large, before the fill */
	pid_t hogs[FRAG_HOGS];		/* what took large blocks left over */
	int nr_hogs;
	unsigned long hogged;		/* their pages */
	int vmaps;
	int kmsg;
	double start;			/* now_s() at the setup's start */
};

FIXTURE(fragment) {
	struct frag f;
};

/*
 * Fills free memory down to @floor_kb with locked pages of a memfd, a step
 * at a time, each locked (its page tables allocated) before the next.
 */
static int fill_memory(struct frag *self, long floor_kb)
{
	size_t room = (size_t)meminfo_kb("MemTotal") * 1024, step;
	long free_kb;

	self->memfd = memfd_create("perf_aux_fragment", 0);
	if (self->memfd < 0 || ftruncate(self->memfd, room))
		return -errno;
	self->fill = mmap(NULL, room, PROT_READ, MAP_SHARED, self->memfd, 0);
	if (self->fill == MAP_FAILED) {
		self->fill = NULL;
		return -errno;
	}
	while ((free_kb = meminfo_kb("MemFree")) > floor_kb + 1024) {
		/* Half of what is left each time: never past the floor. */
		step = (size_t)(free_kb - floor_kb) / 2 * 1024;
		if (step > 64UL << 20)
			step = 64UL << 20;
		step -= step % page_size();
		if (self->fill_bytes + step > room)
			return -ENOSPC;
		if (fallocate(self->memfd, 0, self->fill_bytes, step) ||
		    mlock((char *)self->fill + self->fill_bytes, step))
			return -errno;
		self->fill_bytes += step;
	}
	return self->fill_bytes ? 0 : -ENOMEM;
}

static int punch(int fd, size_t first, size_t pages)
{
	if (!pages)
		return 0;
	return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			 first * page_size(), pages * page_size()) ? -errno : 0;
}

/*
 * Frees every filled page but those that begin a group of page frames.
 * -EPERM where pagemap gives no frame numbers.
 */
static int punch_all_but_group_heads(struct frag *self)
{
	size_t pages = self->fill_bytes / page_size(), i, run = 0, got = 0;
	uint64_t mask = (1ULL << self->group_order) - 1, ent[512];
	off_t at = (uintptr_t)self->fill / page_size() * sizeof(ent[0]);
	int pm = open("/proc/self/pagemap", O_RDONLY), ret = 0;
	uint64_t e;

	if (pm < 0)
		return -errno;
	for (i = 0; i < pages && !ret; i++) {
		if (i == got) {
			size_t n = pages - i < 512 ? pages - i : 512;

			if (pread(pm, ent, n * sizeof(ent[0]),
				  at + i * sizeof(ent[0])) !=
			    (ssize_t)(n * sizeof(ent[0]))) {
				ret = -EIO;
				break;
			}
			got += n;
		}
		e = ent[i % 512];
		if (!(e & PAGEMAP_PRESENT) || !(e & PAGEMAP_PFN)) {
			ret = -EPERM;
			break;
		}
		if (e & PAGEMAP_PFN & mask) {
			run++;
			continue;
		}
		self->kept++;
		ret = punch(self->memfd, i - run, run);
		run = 0;
	}
	if (!ret)
		ret = punch(self->memfd, pages - run, run);
	close(pm);
	return ret;
}

static void sysctls_restore(struct frag *self)
{
	unsigned int i;

	for (i = 0; i < NR_SYSCTLS; i++)
		if (self->sysctl[i] >= 0 &&
		    !sysctl_write(frag_sysctls[i], self->sysctl[i]))
			self->sysctl[i] = -1;
}

/*
 * The most pages a buffer may have whose pointer arrays (perf's and the
 * driver's, a kcalloc() of a pointer per page) fit the free blocks of the
 * groups, the large blocks aside.
 */
static unsigned long array_pages(const struct frag *self)
{
	return (page_size() << (self->group_order - 1)) / sizeof(void *);
}

/*
 * A read-write buffer of the NO_SG PMU (its chunks as large as any, largest
 * first), held by a child of its own: the test PMUs are exclusive, one
 * event each per task, and what the fill left over may take more than one
 * power of two of pages.  At most array_pages(): the driver allocates its
 * array after the chunks took the large blocks.  The child dies with the
 * test.
 */
static int take_large_blocks(struct frag *self, unsigned long pages)
{
	int pipefd[2], ret;
	struct aux_buffer b;
	pid_t pid;

	if (pages > array_pages(self))
		pages = array_pages(self);
	if (pipe(pipefd))
		return -errno;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return ret;
	}
	if (!pid) {
		close(pipefd[0]);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
			_exit(1);
		ret = aux_event_open(pmu_type(aux_pmu_names[CAPS_NOSG]),
				     pages * page_size());
		ret = ret < 0 ? -errno : aux_buffer_map(&b, ret, pages, false);
		if (write(pipefd[1], &ret, sizeof(ret)) != sizeof(ret) || ret)
			_exit(1);
		for (;;)
			pause();	/* until release_large_blocks() */
	}
	close(pipefd[1]);
	if (read(pipefd[0], &ret, sizeof(ret)) != sizeof(ret))
		ret = -EIO;
	close(pipefd[0]);
	if (ret) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return ret;
	}
	self->hogs[self->nr_hogs++] = pid;
	self->hogged += pages;
	return 0;
}

/* Their buffers are gone once the children are: exit unmaps and closes. */
static void release_large_blocks(struct frag *self)
{
	while (self->nr_hogs > 0) {
		kill(self->hogs[--self->nr_hogs], SIGKILL);
		waitpid(self->hogs[self->nr_hogs], NULL, 0);
	}
	self->hogged = 0;
}

/*
 * Compaction kept off, memory filled and punched, and the buffer that must
 * fall back sized from what stayed free in large blocks.  0, -errno, 1
 * when the buffer is more than memory holds, 2 when large blocks hold more
 * than it.
 */
static int fragment_memory(struct __test_metadata *_metadata,
			   struct frag *self, long floor_kb)
{
	unsigned long nr[MAX_ORDERS], most, hog;
	unsigned int i;
	int n, ret;
	long v;

	for (i = 0; i < NR_SYSCTLS; i++) {
		v = sysctl_read(frag_sysctls[i]);
		if (v < 0)
			continue;	/* !CONFIG_COMPACTION: none to keep off */
		ret = sysctl_write(frag_sysctls[i], frag_values[i]);
		if (ret) {
			TH_LOG("%s: %s", frag_sysctls[i], strerror(-ret));
			return ret;
		}
		self->sysctl[i] = v;
	}
	if (aux_setup_failure_forced()) {
		TH_LOG("setup failure forced after the compaction sysctls");
		return -ECANCELED;
	}
	ret = fill_memory(self, floor_kb);
	if (ret) {
		TH_LOG("filling memory: %s", strerror(-ret));
		return ret;
	}
	ret = punch_all_but_group_heads(self);
	if (ret) {
		TH_LOG("punching the fill: %s", strerror(-ret));
		return ret;
	}
	/*
	 * The buffer is at most array_pages(), or the AUX mmap() fails with
	 * ENOMEM whatever the chunks did (SPE's arrays are as ours).  Large
	 * blocks left over beyond half of it (the fill ends before every free
	 * went back) are taken by NO_SG buffers, a power of two of pages each,
	 * until a quarter of it is left.
	 */
	most = array_pages(self);
	/* And a quarter of what is available (16K pages: the arrays allow 1 GiB). */
	while (most > 1 && most * page_size() / 1024 >
	       (unsigned long)mem_available_kb() / 4)
		most /= 2;
	n = buddy_free(nr);
	if (n <= self->group_order)
		return -EIO;
	self->large_free = buddy_free_from(nr, n, self->group_order);
	while (2 * self->large_free > most && self->nr_hogs < FRAG_HOGS) {
		hog = 1UL << ilog2_ul(self->large_free - most / 4);
		ret = take_large_blocks(self, hog);
		if (ret) {
			TH_LOG("taking %lu pages of large blocks: %s", hog,
			       strerror(-ret));
			return ret;
		}
		n = buddy_free(nr);
		self->large_free = buddy_free_from(nr, n, self->group_order);
	}
	/* Twice what large blocks hold, and chunks above the groups' size. */
	self->pages = 1UL << (self->group_order + 2);
	while (self->pages < 2 * self->large_free && self->pages < most)
		self->pages *= 2;
	if (self->pages <= self->large_free) {
		TH_LOG("free in blocks of order %d up: %lu pages, a buffer at most %lu",
		       self->group_order, self->large_free, most);
		return 2;
	}
	if (self->pages * page_size() / 1024 >
	    (unsigned long)mem_available_kb() / 2)
		return 1;
	/* The largest order whose free blocks could hold the buffer twice. */
	self->floor = buddy_room_order(self->pages, n - 1);
	if (self->floor < 0)
		self->floor = 0;
	/* The fill's cost grows with memory: it decides the tests' timeouts. */
	TH_LOG("fill %zu MiB in %.0f s, %lu pages kept; free in blocks of order %d up: %lu pages",
	       self->fill_bytes >> 20, now_s() - self->start, self->kept,
	       self->group_order, self->large_free);
	if (self->nr_hogs)
		TH_LOG("%lu pages of large blocks taken first, %d buffers",
		       self->hogged, self->nr_hogs);
	TH_LOG("buffer %lu pages; order %d free for it twice", self->pages,
	       self->floor);
	return 0;
}

FIXTURE_SETUP(fragment)
{
	struct frag *fr = &self->f;
	unsigned int i;
	long wmark;
	int ret;

	fr->start = now_s();
	for (i = 0; i < NR_SYSCTLS; i++)
		fr->sysctl[i] = -1;
	fr->memfd = -1;
	fr->kmsg = -1;
	if (!aux_destructive())
		SKIP(return, NOT_DESTRUCTIVE);
	if (pmu_type(aux_pmu_names[CAPS_LARGE]) < 0)
		SKIP(return, NO_TEST_PMU);
	/* Page frame numbers and the vm sysctls: root only. */
	if (geteuid())
		SKIP(return, NOT_ROOT);
	fr->vmaps = module_vmaps();
	ASSERT_LE(0, fr->vmaps);
	fr->max_order = max_page_order();
	ASSERT_LT(0, fr->max_order);
	fr->group_order = fr->max_order > FRAG_ORDER ? FRAG_ORDER :
			  fr->max_order;
	/* Asked while memory is whole: a two-PMD buffer. */
	fr->maps_large = vmap_maps_large();
	wmark = kernel_reserve_kb();
	ASSERT_LT(0, wmark);
	/*
	 * The harness runs no teardown after a failed setup: the sysctls go
	 * back here when anything from their change on fails.
	 */
	ret = fragment_memory(_metadata, fr, wmark + FRAG_ROOM_KB);
	if (ret) {
		release_large_blocks(fr);
		sysctls_restore(fr);
	}
	if (ret == 1)
		SKIP(return, NO_MEMORY);
	if (ret == 2)
		SKIP(return, "large blocks left beyond what a buffer may take");
	ASSERT_EQ(0, ret);
	fr->kmsg = kmsg_open_at_end();
}

/*
 * In the parent: the sysctls go back whatever happened to the test's
 * process (self is shared); the fill went with that process, and its
 * children holding large blocks die with it (PR_SET_PDEATHSIG): their
 * buffers are gone when the module's vmaps are back to what they were, as
 * the next test's fill, sized from what is free, needs.
 */
FIXTURE_TEARDOWN_PARENT(fragment)
{
	sysctls_restore(&self->f);
	if (self->f.nr_hogs)
		module_vmaps_settled(self->f.vmaps);
}

/*
 * What every test ends with, once what the setup took is back: nothing
 * left mapped, a clean log.
 */
static void check_clean(struct __test_metadata *_metadata,
			struct frag *self)
{
	release_large_blocks(self);
	EXPECT_EQ(self->vmaps, module_vmaps_settled(self->vmaps));
	EXPECT_EQ(0, kmsg_warnings(self->kmsg));
}

/* The buffer that must fall back, of the PREFER_LARGE PMU, and its report. */
static int map_fragmented(struct __test_metadata *_metadata,
			  struct frag *self, struct aux_buffer *b,
			  struct aux_report *r)
{
	int fd = aux_event_open(pmu_type(aux_pmu_names[CAPS_LARGE]), 0), ret;

	if (fd < 0)
		return -errno;
	ret = aux_buffer_map(b, fd, self->pages, false);
	TH_LOG("buffer mapped %.0f s into the test", now_s() - self->start);
	if (!ret)
		ret = aux_report_read(b->id, r);
	if (ret) {
		aux_buffer_unmap(b);
		close(fd);
	}
	return ret;
}

TEST_F_TIMEOUT(fragment, prefer_large_falls_back_order_by_order, FRAG_TIMEOUT)
{
	struct frag *fr = &self->f;
	/* A chunk per page at most. */
	int *orders = calloc(fr->pages, sizeof(*orders));
	int n, fallbacks, ceiling;
	struct aux_buffer b;
	struct aux_report r = {};
	char why[256];
	int ret;

	ASSERT_NE(NULL, orders);
	ret = map_fragmented(_metadata, fr, &b, &r);
	ASSERT_EQ(0, ret)
		TH_LOG("mapping %lu pages: %s", fr->pages, strerror(-ret));
	ceiling = aux_chunk_order(CHUNK_HALF, fr->pages);
	n = aux_chunks_check(r.chunks, fr->pages, ceiling,
			     fr->max_order + 1, fr->floor, orders,
			     fr->pages, &fallbacks, why, sizeof(why));
	EXPECT_LT(0, n)
		TH_LOG("%s", why);
	/* Large blocks hold half the buffer at most: chunks fell back. */
	EXPECT_LT(0, fallbacks)
		TH_LOG("chunks %s: none fell back, %lu pages free in large blocks",
		       r.chunks, fr->large_free);
	TH_LOG("chunks %s: %d below their ceiling", r.chunks, fallbacks);
	aux_buffer_unmap(&b);
	close(b.fd);
	check_clean(_metadata, fr);
}

/*
 * The mixed chunks keep every granule their offsets allow: PMD and
 * cont-PTE blocks for the large ones, PTE-level blocks for what fell back
 * far enough, PTEs for single pages.
 */
TEST_F_TIMEOUT(fragment, mixed_chunks_within_entries_allowance, FRAG_TIMEOUT)
{
	struct frag *fr = &self->f;
	/* A chunk per page at most. */
	int *orders = calloc(fr->pages, sizeof(*orders));
	struct vmap_granules g;
	struct aux_buffer b;
	struct aux_report r = {};
	unsigned long most;
	int n, ret;

	ASSERT_NE(NULL, orders);
	ret = map_fragmented(_metadata, fr, &b, &r);
	ASSERT_EQ(0, ret)
		TH_LOG("mapping %lu pages: %s", fr->pages, strerror(-ret));
	n = aux_report_orders(r.chunks, orders, fr->pages);
	ASSERT_LE(0, n)
		TH_LOG("chunks %s: %s", r.chunks, strerror(-n));
	ret = aux_granules(b.id, &g);
	most = chunk_entries(orders, n, pmd_bytes() / page_size(),
			     aux_vmap_attr("cont_pages"));
	TH_LOG("chunks %s: %lu translation entries, the chunks allow %lu",
	       r.chunks, g.entries, most);
	TH_LOG("PMD %lu, cont %lu, PTE %lu", g.pmd, g.cont, g.pte);
	aux_buffer_unmap(&b);
	close(b.fd);
	if (ret == -ENOENT)
		SKIP(return, NO_PTDUMP);
	ASSERT_EQ(0, ret);
	if (huge_vmap_off())
		SKIP(return, HUGE_VMAP_OFF);
	if (g.entries == fr->pages && fr->pages > most && !aux_strict() &&
	    !fr->maps_large)
		SKIP(return, BASE_PAGES_ONLY);
	EXPECT_GE(most, g.entries)
		TH_LOG("chunks %s: %lu translation entries where %lu do",
		       r.chunks, g.entries, most);
	check_clean(_metadata, fr);
}

/*
 * The largest order with a free block, once the blocks of MAX_PAGE_ORDER
 * that memory freed since the setup's count formed (the last test's
 * buffers go after a grace period) are taken, as the setup took its own.
 */
static int largest_free_order(struct frag *self)
{
	unsigned long nr[MAX_ORDERS], pages;
	int n, largest;

	for (;;) {
		n = buddy_free(nr);
		for (largest = n - 1; largest > 0 && !nr[largest]; largest--)
			;
		if (largest < self->max_order || self->nr_hogs == FRAG_HOGS)
			return largest;
		pages = buddy_free_from(nr, n, self->max_order);
		if (take_large_blocks(self, 1UL << ilog2_ul(pages)))
			return largest;
	}
}

/*
 * With the large blocks taken by a buffer that fell back, a NO_SG snapshot
 * buffer needing one block larger than any free gets ENOMEM, and leaves
 * nothing behind.  Memory freed elsewhere (a sanitizer's quarantine) can
 * merge into such a block between the count and the mapping: a mapping
 * is tried again, a few times, each against a fresh count.
 */
TEST_F_TIMEOUT(fragment, nosg_without_contiguous_memory, FRAG_TIMEOUT)
{
	struct frag *fr = &self->f;
	int type = pmu_type(aux_pmu_names[CAPS_NOSG]), largest, fd, ret;
	struct aux_buffer hog, b;
	int tries;
	struct aux_report r = {};

	ASSERT_LE(0, type);
	/*
	 * The large blocks the setup took stay taken: their buffers are
	 * other tasks' events, which the exclusive PMU allows beside ours.
	 */
	ret = map_fragmented(_metadata, fr, &hog, &r);
	ASSERT_EQ(0, ret)
		TH_LOG("mapping %lu pages: %s", fr->pages, strerror(-ret));
	for (tries = 0; tries < NOSG_TRIES && ret != -ENOMEM; tries++) {
		largest = largest_free_order(fr);
		if (largest >= fr->max_order) {
			aux_buffer_unmap(&hog);
			close(hog.fd);
			SKIP(return, "a block of MAX_PAGE_ORDER still free");
		}
		fd = aux_event_open(type, 0);
		ASSERT_LE(0, fd);
		ret = aux_buffer_map(&b, fd, 2UL << largest, true);
		aux_buffer_unmap(&b);
		close(fd);
	}
	EXPECT_EQ(-ENOMEM, ret)
		TH_LOG("one chunk of order %d, the largest free block %d: %s",
		       largest + 1, largest, ret ? strerror(-ret) : "mapped");
	aux_buffer_unmap(&hog);
	close(hog.fd);
	check_clean(_metadata, fr);
}

/* Trace through a buffer of mixed chunks checks out over four wraps. */
static void trace_through_mixed_chunks(struct __test_metadata *_metadata,
				       struct frag *self,
				       enum gen_mode mode)
{
	struct gen_config cfg = {
		.mode = mode, .words = 6, .align_log2 = 6,
		.period_ns = 500000,
	};
	struct trace_consumer tc;
	struct aux_report r = {};
	int *orders, ret, n;

	if (!cpu_events_allowed())
		SKIP(return, NO_PERFMON);
	/*
	 * Nothing free in blocks of the groups' order or more (64K pages: the
	 * earlier cases' kernel objects took the last ones): every chunk is
	 * of the one order below, and there is no mix to trace through.
	 */
	if (!self->large_free)
		SKIP(return, NO_LARGE_LEFT);
	cfg.burst = gen_quarter_burst(&cfg, self->pages * page_size());
	ret = trace_open(&tc, CAPS_LARGE, &cfg, self->pages, false,
			 trace_pick_cpus());
	ASSERT_EQ(0, ret)
		TH_LOG("mapping %lu pages: %s", self->pages, strerror(-ret));
	ASSERT_EQ(0, aux_report_read(tc.b.id, &r));
	/* What this is about: chunks of more than one order. */
	orders = calloc(r.pages, sizeof(*orders));
	ASSERT_NE(NULL, orders);
	n = aux_report_orders(r.chunks, orders, r.pages);
	ASSERT_LE(0, n)
		TH_LOG("chunks %s: %s", r.chunks, strerror(-n));
	while (n > 1 && orders[n - 1] == orders[0])
		n--;
	EXPECT_LT(1, n)
		TH_LOG("chunks %s: one order", r.chunks);
	ASSERT_EQ(0, ioctl(tc.b.fd, PERF_EVENT_IOC_ENABLE, 0));
	ret = trace_finish(&tc, trace_consume(&tc, 0, 4, 150));
	TH_LOG("chunks %s: %llu bytes checked, %llu wraps", r.chunks,
	       (unsigned long long)tc.bytes, (unsigned long long)tc.wraps);
	EXPECT_EQ(0, ret)
		TH_LOG("%s", tc.err);
	trace_close(&tc);
	check_clean(_metadata, self);
}

TEST_F_TIMEOUT(fragment, spe_trace_through_mixed_chunks, FRAG_TIMEOUT + 120)
{
	trace_through_mixed_chunks(_metadata, &self->f, GEN_SPE);
}

TEST_F_TIMEOUT(fragment, trbe_trace_through_mixed_chunks, FRAG_TIMEOUT + 120)
{
	trace_through_mixed_chunks(_metadata, &self->f, GEN_TRBE);
}

TEST_HARNESS_MAIN
