// SPDX-License-Identifier: GPL-2.0
/*
 * The AUX buffer under the kernel's own fault injection, as SPE and TRBE
 * get it after days of uptime: high-order allocations fail.
 *
 * fail_page_alloc (CONFIG_FAIL_PAGE_ALLOC) fails every allocation of this
 * task from an order down (min-order), for each order from MAX_PAGE_ORDER
 * down to 1: PREFER_LARGE buffers still map, their chunks follow the
 * fallback rule under the injected ceiling (read from the module's report,
 * never assumed), their vmap takes no more translation entries than those
 * chunks allow, and trace written through a mixed-order buffer checks out.
 * NO_SG snapshot buffers that cannot get one chunk fail with ENOMEM.  Through
 * /proc/thread-self/fail-nth every fault point the AUX mmap() reaches fails
 * in turn (the pointer array's kmalloc included, CONFIG_FAILSLAB): the
 * mmap() fails with ENOMEM or copes, and, where kmemleak is built, a failed
 * one leaks nothing.  After each, nothing is left mapped and the kernel log
 * holds no warning.
 */
#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "../kselftest_harness.h"
#include "aux_fault.h"
#include "aux_report.h"
#include "aux_vmap.h"
#include "aux_extended.h"
#include "aux_trace.h"

/* Every page allocation of this task of @min_order or more fails. */
static int fail_orders_from(int min_order)
{
	return fault_attr(FAIL_PAGE_ALLOC, "min-order", min_order) ?:
	       fault_inject(FAIL_PAGE_ALLOC, -1, 100);
}

/*
 * The injection is switched off through a file opened before it was
 * switched on: with orders from 1 failing, opening one can fail itself
 * (under slab debugging a names_cache slab is order 1 at least, and the
 * path lookup needs one when none is free), which left the test injecting
 * and failing on a sound kernel (6.12, the sanitize variant).
 */
static int probability_fd = -1;

static int fail_orders_off(void)
{
	if (probability_fd < 0)
		return -EBADF;
	/* A debugfs attribute is not seekable; each write sets it anew. */
	return write(probability_fd, "0\n", 2) == 2 ? 0 : -errno;
}

FIXTURE(fault) {
	int kmsg;
	int vmaps;
	int type;
	unsigned long pages;	/* a buffer whose chunks may reach the top */
	unsigned long cont_pages;	/* of the module's sysfs vmap/ */
	bool injecting;
};

FIXTURE_SETUP(fault)
{
	int max = max_page_order();

	self->kmsg = -1;
	self->injecting = false;
	if (!aux_destructive())
		SKIP(return, NOT_DESTRUCTIVE);
	self->type = pmu_type(aux_pmu_names[CAPS_LARGE]);
	if (self->type < 0)
		SKIP(return, NO_TEST_PMU);
	if (geteuid())
		SKIP(return, NOT_ROOT);
	if (access(FAIL_PAGE_ALLOC, F_OK) || access(FAILSLAB, F_OK))
		SKIP(return, NO_FAULT_INJECTION);
	self->vmaps = module_vmaps();
	ASSERT_LE(0, self->vmaps);
	/* 2^MAX_PAGE_ORDER pages, or what a quarter of memory holds. */
	self->pages = 1UL << max;
	while (self->pages * page_size() / 1024 >
	       (unsigned long)mem_available_kb() / 4)
		self->pages /= 2;
	self->cont_pages = aux_vmap_attr("cont_pages");
	self->kmsg = kmsg_open_at_end();
	probability_fd = open(FAIL_PAGE_ALLOC "/probability", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, probability_fd)
		TH_LOG("%s/probability: %s", FAIL_PAGE_ALLOC, strerror(errno));
	/* Last: the harness runs no teardown after a failed setup. */
	self->injecting = true;
	if (fault_injection_setup() ?:
	    sysctl_write("/proc/self/make-it-fail", 1)) {
		fault_injection_restore();
		ASSERT_TRUE(false)
			TH_LOG("cannot set up fault injection in debugfs");
	}
}

FIXTURE_TEARDOWN(fault)
{
	if (self->injecting) {
		/* First, without a path lookup: a failed check may leave it on. */
		fail_orders_off();
		fault_injection_restore();
	}
	if (probability_fd >= 0) {
		close(probability_fd);
		probability_fd = -1;
	}
	EXPECT_EQ(self->vmaps, module_vmaps_settled(self->vmaps));
	EXPECT_EQ(0, kmsg_warnings(self->kmsg));
	if (self->kmsg >= 0)
		close(self->kmsg);
}

/*
 * The fallback rule on what the allocator gave, under the injected
 * ceiling: orders from @below fail.  The first chunk is exactly its bound
 * (nothing else fails in a fresh guest).  Returns the number of chunks,
 * -1 on a violation.
 */
static int check_fallback(struct __test_metadata *_metadata,
			  const struct aux_report *r, unsigned long pages,
			  int ceiling, int below, int *orders)
{
	int n, fallbacks, first = ilog2_ul(pages);
	char why[256];

	/* @orders has room for a chunk per page. */
	n = aux_chunks_check(r->chunks, pages, ceiling, below, 0, orders,
			     pages, &fallbacks, why, sizeof(why));
	if (n < 0) {
		TH_LOG("%s", why);
		return -1;
	}
	if (first > ceiling)
		first = ceiling;
	if (first >= below)
		first = below - 1;
	if (orders[0] != first) {
		TH_LOG("first chunk of %s: order %d, the rule gives %d",
		       r->chunks, orders[0], first);
		return -1;
	}
	return n;
}

/*
 * The buffer's pointer arrays (a kcalloc() of a pointer per page, in perf
 * and in the PMU) must not themselves be allocations of @order or more:
 * halve the buffer until not, with room for KASAN's redzones (twice).
 */
static unsigned long pages_below(unsigned long pages, int order)
{
	while (pages > 1 && get_order_ul(2 * pages * sizeof(void *)) >= order)
		pages /= 2;
	return pages;
}

TEST_F_TIMEOUT(fault, every_order_falls_back, 120)
{
	int max = max_page_order(), ceiling, order, n, fd, ret;
	/* No buffer below has more chunks than the largest has pages. */
	int *orders = calloc(self->pages, sizeof(*orders));
	struct vmap_granules g;
	unsigned long pages;
	struct aux_buffer b;
	struct aux_report r = {};

	ASSERT_NE(NULL, orders);
	for (order = max; order >= 1; order--) {
		pages = pages_below(self->pages, order);
		/* The watermark is the buffer: chunks may be as large. */
		ceiling = aux_chunk_order(CHUNK_WHOLE, pages);
		fd = aux_event_open(self->type, pages * page_size());
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, aux_data_map(&b, fd));
		ASSERT_EQ(0, fail_orders_from(order));
		ret = aux_area_map(&b, pages, false);
		ASSERT_EQ(0, fail_orders_off());
		/*
		 * With every allocation above order 0 failing, some other
		 * allocation of the path may be what fails: a clean ENOMEM
		 * (the teardown checks that nothing is left).
		 */
		if (order == 1 && ret == -ENOMEM) {
			TH_LOG("orders from 1 failing: ENOMEM");
			aux_buffer_unmap(&b);
			close(fd);
			continue;
		}
		ASSERT_EQ(0, ret)
			TH_LOG("orders from %d failing: %s", order, strerror(-ret));
		ASSERT_EQ(0, aux_report_read(b.id, &r));
		ASSERT_EQ(0, aux_granules(b.id, &g));
		n = check_fallback(_metadata, &r, pages, ceiling, order,
				   orders);
		EXPECT_LT(0, n);
		if (n > 0) {
			EXPECT_GE(chunk_entries(orders, n,
						pmd_bytes() / page_size(),
						self->cont_pages), g.entries)
				TH_LOG("chunks %s: %lu translation entries",
				       r.chunks, g.entries);
		}
		TH_LOG("orders from %d failing: chunks %s, entries %lu", order,
		       r.chunks, g.entries);
		aux_buffer_unmap(&b);
		close(fd);
	}
}

/*
 * A generating event whose AUX buffer's first chunks fell back to single
 * pages: as many failures as take @singles chunks down to order 0 (each
 * tries every order from the ceiling down), then none.  The AUX objects of
 * the path are allocated and freed once before, on the CPU the process is
 * held to, so that their kmallocs find free objects and take no failure.
 */
static int map_after_singles(struct trace_consumer *tc, unsigned long pages,
			     int singles)
{
	struct gen_config cfg = {
		.mode = GEN_SPE, .words = 6, .align_log2 = 6,
		.period_ns = 500000,
	};
	int cpu = trace_pick_cpus(), ceiling, ret;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	cfg.burst = gen_quarter_burst(&cfg, pages * page_size());
	ret = trace_open(tc, CAPS_LARGE, &cfg, pages, false, cpu);
	if (ret)
		return ret;
	trace_close(tc);
	ret = trace_open_event(tc, CAPS_LARGE, &cfg, pages, false, cpu, 0);
	if (ret)
		return ret;
	/* The default watermark, half the buffer, is the ceiling. */
	ceiling = aux_chunk_order(CHUNK_HALF, pages);
	ret = fault_attr(FAIL_PAGE_ALLOC, "min-order", 1) ?:
	      fault_attr(FAIL_PAGE_ALLOC, "times", singles * ceiling) ?:
	      fault_attr(FAIL_PAGE_ALLOC, "space", 0) ?:
	      fault_attr(FAIL_PAGE_ALLOC, "probability", 100);
	if (!ret)
		ret = aux_area_map(&tc->b, pages, false);
	if (fail_orders_off() && !ret)
		ret = -EIO;
	return ret;
}

/* At most 4 MiB, and a pointer array of order 0. */
static unsigned long mixed_pages(unsigned long pages)
{
	pages = pages_below(pages, 1);
	if (pages * page_size() > 4UL << 20)
		pages = (4UL << 20) / page_size();
	return pages;
}

/*
 * Single pages a cont-PTE block's worth, then large chunks: the shape
 * rb_alloc_aux() leaves after fallbacks.  The large chunks after them
 * keep the blocks their offsets allow; a vmap() that stops batching at
 * the first small page maps the whole buffer with PTEs.
 */
TEST_F_TIMEOUT(fault, large_chunks_after_singles_mapped_large, 120)
{
	struct trace_consumer tc;
	int *orders, n, i, largest = 0, ret;
	struct vmap_granules g;
	struct aux_report r = {};
	unsigned long most;

	/* A PTE-level block's worth of single pages (16 without one). */
	ret = map_after_singles(&tc, mixed_pages(self->pages),
				self->cont_pages > 1 ? self->cont_pages : 16);
	ASSERT_EQ(0, ret)
		TH_LOG("mapping with failures injected: %s", strerror(-ret));
	ASSERT_EQ(0, aux_report_read(tc.b.id, &r));
	ASSERT_EQ(0, aux_granules(tc.b.id, &g));
	/* A chunk per page at most. */
	orders = calloc(r.pages, sizeof(*orders));
	ASSERT_NE(NULL, orders);
	n = aux_report_orders(r.chunks, orders, r.pages);
	ASSERT_LE(0, n)
		TH_LOG("chunks %s: %s", r.chunks, strerror(-n));
	most = chunk_entries(orders, n, pmd_bytes() / page_size(),
			     self->cont_pages);
	TH_LOG("chunks %s: %lu translation entries, the chunks allow %lu",
	       r.chunks, g.entries, most);
	for (i = 0; i < n; i++)
		if (orders[i] > largest)
			largest = orders[i];
	/* The shape this is about: single pages first, large chunks after. */
	EXPECT_EQ(0, orders[0]);
	EXPECT_LT(0, largest);
	EXPECT_GE(most, g.entries);
	trace_close(&tc);
}

/*
 * A buffer whose first chunks fell back to single pages: trace written
 * through it checks out, over four wraps, as on any buffer.
 */
TEST_F_TIMEOUT(fault, mixed_orders_carry_trace, 180)
{
	struct trace_consumer tc;
	struct aux_report r = {};
	int ret;

	ret = map_after_singles(&tc, mixed_pages(self->pages), 16);
	ASSERT_EQ(0, ret)
		TH_LOG("mapping with failures injected: %s", strerror(-ret));
	ASSERT_EQ(0, aux_report_read(tc.b.id, &r));
	TH_LOG("chunks %s", r.chunks);
	ASSERT_EQ(0, ioctl(tc.b.fd, PERF_EVENT_IOC_ENABLE, 0));
	ret = trace_finish(&tc, trace_consume(&tc, 0, 4, 120));
	TH_LOG("%llu bytes checked, %llu wraps", (unsigned long long)tc.bytes,
	       (unsigned long long)tc.wraps);
	EXPECT_EQ(0, ret)
		TH_LOG("%s", tc.err);
	trace_close(&tc);
}

/*
 * A snapshot (overwrite) buffer of a NO_SG PMU must be one chunk: without
 * it, ENOMEM and nothing left behind.
 */
TEST_F(fault, nosg_without_one_chunk)
{
	int type = pmu_type(aux_pmu_names[CAPS_NOSG]), order, fd, ret;
	unsigned long pages = pages_below(self->pages, 1);
	struct aux_buffer b;

	ASSERT_LE(0, type);
	for (order = ilog2_ul(pages); order >= 1; order--) {
		fd = aux_event_open(type, 0);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, aux_data_map(&b, fd));
		ASSERT_EQ(0, fail_orders_from(order));
		ret = aux_area_map(&b, pages, true);
		ASSERT_EQ(0, fail_orders_off());
		EXPECT_EQ(-ENOMEM, ret)
			TH_LOG("orders from %d failing", order);
		aux_buffer_unmap(&b);
		close(fd);
		EXPECT_EQ(self->vmaps, module_vmaps_settled(self->vmaps));
	}
}

static int fail_nth(long n)
{
	return sysctl_write("/proc/thread-self/fail-nth", n);
}

/*
 * Every fault point the AUX mmap() of @pages on PMU @type reaches fails
 * once, in turn, until one past the last: ENOMEM, or a fallback that
 * copes; never another errno, never a vmap left (beyond @vmaps).
 * fail-nth reads 0 after the call when it was used.  Returns the number
 * of fault points.
 */
static int fail_each_point(struct __test_metadata *_metadata, int vmaps,
			   int type, unsigned long pages, int *failed,
			   int *coped)
{
	struct aux_buffer b;
	int nth, fd, ret;

	for (nth = 1; nth < 1000; nth++) {
		fd = aux_event_open(type, 0);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, aux_data_map(&b, fd));
		ASSERT_EQ(0, fail_nth(nth));
		ret = aux_area_map(&b, pages, false);
		if (sysctl_read("/proc/thread-self/fail-nth") != 0) {
			fail_nth(0);
			aux_buffer_unmap(&b);
			close(fd);
			break;
		}
		if (ret) {
			EXPECT_EQ(-ENOMEM, ret)
				TH_LOG("fault point %d: %s", nth, strerror(-ret));
			(*failed)++;
		} else {
			(*coped)++;
		}
		aux_buffer_unmap(&b);
		close(fd);
		EXPECT_EQ(vmaps, module_vmaps_settled(vmaps))
			TH_LOG("fault point %d: a vmap left behind", nth);
	}
	return nth - 1;
}

/* Each fault point of a two-PMD PREFER_LARGE buffer's mmap() in turn. */
TEST_F_TIMEOUT(fault, each_allocation_of_mmap_fails, 120)
{
	unsigned long pages = 2 * pmd_bytes() / page_size();
	int points, failed = 0, coped = 0;

	if (pages > self->pages)
		pages = self->pages;
	points = fail_each_point(_metadata, self->vmaps, self->type, pages,
				 &failed, &coped);
	TH_LOG("%d fault points: mmap() failed at %d, coped with %d", points,
	       failed, coped);
	EXPECT_LT(0, points);
	EXPECT_LT(0, failed);
}

/*
 * A failed AUX mmap() leaks nothing, as kmemleak (where built) sees it:
 * on each PMU, every fault point of a PTE-level block's mmap() fails in
 * turn, order-0 page allocations included, so that the pointer arrays,
 * the first AUX page (a leak of rb_alloc_aux()'s array up to 7.3-rc7) and
 * the PMU's setup_aux() and vmap() each fail once.  The fault points are
 * every allocation of the task, and slab refills change their number from
 * one mmap() to the next (25 in one boot, 27 in another, for the same
 * buffer), so that a sweep can step over a point its path has once: the
 * first AUX page's, whose failure alone leaks that array.  Each PMU is
 * swept LEAK_SWEEPS times.  Suspects are counted only if their backtrace
 * goes through perf_mmap() and kmemleak did not know them before; it
 * reports an object no younger than 5 s, so the scan waits that long.
 */
#define LEAK_SWEEPS 3

TEST_F_TIMEOUT(fault, failed_mmap_leaks_nothing, 120)
{
	unsigned long before[64], after[64];
	int n_before, n_after, i, j, leaked = 0, caps, sweep;
	int points, failed = 0, coped = 0;
	char first[2048], *line;

	n_before = kmemleak_suspects("perf_mmap", before, 64, NULL, 0);
	if (n_before < 0)
		SKIP(return, NO_KMEMLEAK);
	ASSERT_EQ(0, fault_attr(FAIL_PAGE_ALLOC, "min-order", 0));
	for (caps = CAPS_NONE; caps <= CAPS_NOSG; caps++) {
		int type = pmu_type(aux_pmu_names[caps]);

		ASSERT_LE(0, type);
		for (sweep = 1; sweep <= LEAK_SWEEPS; sweep++) {
			points = fail_each_point(_metadata, self->vmaps, type,
						 self->cont_pages, &failed,
						 &coped);
			TH_LOG("%s, sweep %d: %d fault points",
			       aux_pmu_names[caps], sweep, points);
			EXPECT_LT(0, points);
		}
	}
	ASSERT_EQ(0, fault_attr(FAIL_PAGE_ALLOC, "min-order", 1));
	sleep(6);
	n_after = kmemleak_suspects("perf_mmap", after, 64, first,
				    sizeof(first));
	ASSERT_LE(0, n_after);
	TH_LOG("kmemleak: %d suspects under perf_mmap() before, %d after",
	       n_before, n_after);
	/* New suspects: not among those listed before (the first 64). */
	n_before = n_before < 64 ? n_before : 64;
	for (i = 0; i < n_after && i < 64; i++) {
		for (j = 0; j < n_before && after[i] != before[j]; j++)
			;
		leaked += j == n_before;
	}
	TH_LOG("mmap() failed at %d fault points, coped with %d", failed,
	       coped);
	if (!leaked)
		return;
	TH_LOG("%d objects allocated under perf_mmap() leaked, the first:",
	       leaked);
	/* A line each: the report's own lines would break the KTAP. */
	for (line = strtok(first, "\n"); line; line = strtok(NULL, "\n"))
		TH_LOG("%s", line);
	EXPECT_EQ(0, leaked);
}

TEST_HARNESS_MAIN
