// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../kselftest.h"
#include "aux_extended.h"
#include "aux_report.h"

bool aux_destructive(void)
{
	const char *s = getenv("PERF_AUX_DESTRUCTIVE");

	return s && *s == '1';
}

/* get_order(): the smallest block of pages holding @bytes. */
int get_order_ul(unsigned long bytes)
{
	unsigned long pages = (bytes + page_size() - 1) / page_size();

	return pages <= 1 ? 0 : ilog2_ul(pages - 1) + 1;
}

/* Frees are done by the time close() returns; a bound all the same. */
int module_vmaps_settled(int want)
{
	int n, tries = 100;

	while ((n = module_vmaps()) != want && --tries)
		usleep(10000);
	return n;
}

/* Why generators cannot be tested (skip reason), or NULL and @vmaps. */
const char *generators_unavailable(int *vmaps)
{
	if (pmu_type(aux_pmu_names[CAPS_LARGE]) < 0)
		return NO_TEST_PMU;
	if (!cpu_events_allowed())
		return NO_PERFMON;
	*vmaps = module_vmaps();
	return *vmaps < 0 ? NOT_ROOT : NULL;
}

/*
 * Thread: random generating events mapped and closed until c->until; only
 * EBUSY and ENOMEM may refuse.  @inject: make-it-fail around the AUX map
 * (file opened once: turning it off must not allocate).
 */
void *aux_churn(void *arg)
{
	static const enum aux_size sizes[] = {
		TWO_PAGES, SIXTEEN_PAGES, PMD_BYTES,
	};
	const struct gen_config cfg = {
		.mode = GEN_SPE, .words = 6, .align_log2 = 6, .burst = 64,
		.period_ns = 500000,
	};
	struct aux_churn *c = arg;
	struct trace_consumer tc;
	unsigned long pages;
	int ret, fail = -1;

	if (c->inject) {
		fail = open("/proc/thread-self/make-it-fail", O_WRONLY);
		if (fail < 0)
			c->bad_errno = errno;
	}
	while (now_s() < c->until && !c->bad_errno) {
		pages = aux_pages(sizes[rand_r(&c->seed) % 3]);
		ret = trace_open_event(&tc, rand_r(&c->seed) % 3, &cfg, pages,
				       false, c->cpu[rand_r(&c->seed) % c->cpus],
				       0);
		if (!ret) {
			if (fail >= 0 && pwrite(fail, "1", 1, 0) != 1)
				c->bad_errno = errno;
			ret = aux_area_map(&tc.b, pages, false);
			if (fail >= 0 && pwrite(fail, "0", 1, 0) != 1)
				c->bad_errno = errno;
		}
		if (!ret && ioctl(tc.b.fd, PERF_EVENT_IOC_ENABLE, 0))
			ret = -errno;
		if (!ret) {
			c->maps++;
			usleep(rand_r(&c->seed) % 2000);
		} else if (ret == -EBUSY || ret == -ENOMEM) {
			c->refused++;
		} else {
			c->bad_errno = -ret;
		}
		trace_close(&tc);
	}
	if (fail >= 0)
		close(fail);
	return NULL;
}

/* vmaps of the synthetic AUX PMUs in /proc/vmallocinfo; -1: unreadable. */
int module_vmaps(void)
{
	FILE *f = fopen("/proc/vmallocinfo", "r");
	char *line = NULL;
	size_t len = 0;
	int n = 0;

	if (!f)
		return -1;
	while (getline(&line, &len, f) > 0)
		n += !!strstr(line, AUX_VMAP_CALLER);
	free(line);
	fclose(f);
	return n;
}

/* ilog2() of @v, which is not 0. */
static int report_ilog2(unsigned long v)
{
	return (int)(8 * sizeof(v)) - 1 - __builtin_clzl(v);
}

/*
 * @chunks of a @pages buffer against rb_alloc_aux()'s rule: chunk i is at
 * most its bound, the least of @ceiling, ilog2(pages left) and @below - 1
 * (@below: known to fail), and at least min(bound, @floor) (@floor: known
 * free, 0: none); together they cover the buffer.  Returns the count
 * (fallbacks in *@fallbacks), or -1 and the violation in @why.
 */
int aux_chunks_check(const char *chunks, unsigned long pages, int ceiling,
		     int below, int floor, int *orders, int max, int *fallbacks,
		     char *why, size_t len)
{
	int n = aux_report_orders(chunks, orders, max), i, bound;
	unsigned long left = pages;

	*fallbacks = 0;
	for (i = 0; i < n && left; i++) {
		bound = report_ilog2(left);
		if (bound > ceiling)
			bound = ceiling;
		if (bound >= below)
			bound = below - 1;
		if (orders[i] > bound ||
		    orders[i] < (floor < bound ? floor : bound)) {
			snprintf(why, len,
				 "chunk %d of %s: order %d, the rule allows %d down to %d",
				 i, chunks, orders[i], bound,
				 floor < bound ? floor : bound);
			return -1;
		}
		*fallbacks += orders[i] < bound;
		left -= 1UL << orders[i];
	}
	if (left || i < n) {
		snprintf(why, len, "chunks %s are not the buffer's %lu pages",
			 chunks, pages);
		return -1;
	}
	return n;
}

/* Kernel log: remembers where it ended, then finds warnings after that. */
int kmsg_open_at_end(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* Above PRINTK_MESSAGE_MAX: /dev/kmsg fails reads shorter than a record. */
#define KMSG_RECORD_MAX 8192

int kmsg_warnings(int fd)
{
	static char rec[KMSG_RECORD_MAX];
	ssize_t n;
	int warnings = 0;

	if (fd < 0) {
		/* Not a pass in disguise: say that nothing was looked at. */
		ksft_print_msg("cannot read /dev/kmsg: kernel warnings not checked\n");
		return 0;
	}
	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records */
		if (n < 0 && errno == EINVAL) {
			/* A record not read is a warning not looked at. */
			ksft_print_msg("/dev/kmsg record longer than %d bytes\n",
				       KMSG_RECORD_MAX - 1);
			warnings++;
			break;
		}
		if (n <= 0)
			break;
		rec[n] = '\0';
		/* SPE's report of a fault on its own buffer mapping, too. */
		if (strstr(rec, "WARNING:") || strstr(rec, "BUG:") ||
		    strstr(rec, "Unexpected buffer fault"))
			warnings++;
	}
	return warnings;
}

/* The start of the vmap made by @caller of @size bytes, or 0. */
unsigned long vmallocinfo_find(const char *caller, unsigned long size)
{
	unsigned long start, end, sz;
	FILE *f = fopen("/proc/vmallocinfo", "r");
	char line[512];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, caller) ||
		    sscanf(line, "0x%lx-0x%lx %lu", &start, &end, &sz) != 3)
			continue;
		/* vmallocinfo sizes include the guard page. */
		if (sz == size || sz == size + page_size()) {
			fclose(f);
			return start;
		}
	}
	fclose(f);
	return 0;
}

static bool trace_record_at(struct trace_consumer *tc, uint64_t off,
			    uint64_t seq)
{
	const uint8_t *want = trace_expect(tc, seq);
	size_t i;

	for (i = 0; i < tc->rec; i++)
		if (*trace_aux(tc, off + i) != want[i])
			return false;
	return true;
}

/*
 * SPE-like snapshot, stopped: the newest record ends at the head, each
 * earlier one before it, with at most a record of zero padding between.
 * Returns the bytes of newest data found in sequence, or -1.
 */
long trace_check_snapshot_records(struct trace_consumer *tc, uint64_t head,
				  uint64_t count)
{
	uint64_t p = head, seq = count - 1;
	long covered = 0;
	size_t pad;

	while (count && covered + tc->rec <= tc->size) {
		for (pad = 0; pad < tc->rec; pad++) {
			/* The record ends @pad zero bytes before p. */
			if (pad && *trace_aux(tc, p + tc->size - pad))
				pad = tc->rec;
			else if (trace_record_at(tc, p + 2 * tc->size - pad -
						 tc->rec, seq))
				break;
		}
		if (pad >= tc->rec)
			break;
		covered += pad + tc->rec;
		p = (p + 2 * tc->size - pad - tc->rec) % tc->size;
		if (!seq--)
			break;
	}
	if (!covered)
		return trace_fail(tc, "newest record %llu not before head %llu",
				  (unsigned long long)(count - 1),
				  (unsigned long long)head);
	return covered;
}

/* TRBE-like snapshot: the whole buffer is the newest stream, up to head. */
long trace_check_snapshot_stream(struct trace_consumer *tc, uint64_t head,
				 uint64_t count)
{
	uint64_t end = count * tc->rec;

	if (end < tc->size)
		return trace_fail(tc, "only %llu bytes generated",
				  (unsigned long long)end);
	tc->pos = end - tc->size;
	if (trace_check_stream(tc, trace_aux(tc, head), tc->size - head) ||
	    trace_check_stream(tc, trace_aux(tc, 0), head))
		return -1;
	return tc->size;
}
