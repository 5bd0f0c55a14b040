// SPDX-License-Identifier: GPL-2.0
/* Consumer of lib/test_aux_pmu.c's trace generator (see aux_trace.h). */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest.h"
#include "aux_trace.h"

/* Records per tick: a quarter of @bytes, at most 256 KiB per interrupt. */
unsigned int gen_quarter_burst(const struct gen_config *c, size_t bytes)
{
	size_t tick = bytes / 4;

	if (tick > 256 << 10)
		tick = 256 << 10;
	return tick / gen_record_bytes(c) ?: 1;
}

size_t gen_record_bytes(const struct gen_config *c)
{
	if (c->mode == GEN_SPE)
		return SPE_PKT_BYTES * (c->words + 2);
	return ASYNC_BYTES + 8 * (c->words + 2);
}

static void put_le64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

void gen_record(const struct gen_config *c, uint64_t seq, uint8_t *p)
{
	uint64_t sum = seq, w;
	unsigned int i;

	if (c->mode == GEN_SPE) {
		p[0] = 0xb0;
		put_le64(p + 1, seq);
		for (i = 0; i < c->words; i++) {
			w = seq * GEN_WORD_MUL + i;
			sum += w;
			p[SPE_PKT_BYTES * (i + 1)] = 0xb2;
			put_le64(p + SPE_PKT_BYTES * (i + 1) + 1, w);
		}
		p[SPE_PKT_BYTES * (i + 1)] = 0x71;
		put_le64(p + SPE_PKT_BYTES * (i + 1) + 1, ~sum);
		return;
	}
	memset(p, 0, ASYNC_BYTES - 1);
	p[ASYNC_BYTES - 1] = 0x80;
	p += ASYNC_BYTES;
	put_le64(p, seq);
	for (i = 0; i < c->words; i++) {
		w = seq * GEN_WORD_MUL + i;
		sum += w;
		put_le64(p + 8 * (i + 1), w);
	}
	put_le64(p + 8 * (i + 1), ~sum);
}

int trace_fail(struct trace_consumer *tc, const char *fmt, ...)
{
	va_list ap;

	if (!tc->err[0]) {
		va_start(ap, fmt);
		vsnprintf(tc->err, sizeof(tc->err), fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* A disabled generating event on @cpu with @nr_pages of AUX mapped. */
int trace_open(struct trace_consumer *tc, enum aux_caps caps,
	       const struct gen_config *cfg, unsigned long nr_pages,
	       bool snapshot, int cpu)
{
	int ret = trace_open_event(tc, caps, cfg, nr_pages, snapshot, cpu, 0);

	if (!ret)
		ret = aux_area_map(&tc->b, nr_pages, snapshot);
	if (ret)
		trace_close(tc);
	return ret;
}

/*
 * trace_open() up to the data area, with attr.aux_watermark @watermark (0:
 * the default); the caller maps the AUX area.
 */
int trace_open_event(struct trace_consumer *tc, enum aux_caps caps,
		     const struct gen_config *cfg, unsigned long nr_pages,
		     bool snapshot, int cpu, unsigned long watermark)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.disabled = 1,
		.aux_watermark = watermark,
	};
	const struct {
		const char *field;
		__u64 value;
	} fields[] = {
		{ "mode", cfg->mode }, { "words", cfg->words },
		{ "align", cfg->align_log2 }, { "burst", cfg->burst },
		{ "period", cfg->period_ns },
	};
	size_t i;
	int fd, ret;

	memset(tc, 0, sizeof(*tc));
	tc->b.fd = -1;
	tc->cfg = *cfg;
	tc->rec = gen_record_bytes(cfg);
	tc->size = nr_pages * page_size();
	tc->align = cfg->mode == GEN_SPE ? 1UL << cfg->align_log2 : 1;
	tc->snapshot = snapshot;
	tc->expect_seq = UINT64_MAX;
	attr.type = pmu_type(aux_pmu_names[caps]);
	if ((int)attr.type < 0)
		return -ENODEV;
	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		ret = pmu_format_set(aux_pmu_names[caps], fields[i].field,
				     fields[i].value, &attr);
		if (ret)
			return ret;
	}
	fd = sys_perf_event_open(&attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = aux_data_map(&tc->b, fd);
	if (ret)
		trace_close(tc);
	return ret;
}

void trace_close(struct trace_consumer *tc)
{
	aux_buffer_unmap(&tc->b);
	if (tc->b.fd >= 0)
		close(tc->b.fd);
	tc->b.fd = -1;
}

uint8_t *trace_aux(struct trace_consumer *tc, uint64_t off)
{
	return (uint8_t *)tc->b.aux + off % tc->size;
}

const uint8_t *trace_expect(struct trace_consumer *tc, uint64_t seq)
{
	if (tc->expect_seq != seq) {
		gen_record(&tc->cfg, seq, tc->expect);
		tc->expect_seq = seq;
	}
	return tc->expect;
}

/* Records generated so far: the event count. */
uint64_t trace_count(struct trace_consumer *tc)
{
	uint64_t count = 0;

	if (read(tc->b.fd, &count, sizeof(count)) != sizeof(count))
		return 0;
	return count;
}

/* Index of the first byte where @a and @b differ, or @n (memcmp() first). */
static size_t trace_first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i = 0;

	if (!memcmp(a, b, n))
		return n;
	while (a[i] == b[i])
		i++;
	return i;
}

/* SPE-like: whole records, in sequence except after a flagged gap. */
static int trace_check_records(struct trace_consumer *tc, uint64_t off,
			       uint64_t size)
{
	const uint8_t *p, *want;
	uint64_t seq, end = off + size;
	size_t i;

	if (size % tc->rec)
		return trace_fail(tc, "AUX record at %llu: %llu bytes, not whole %zu-byte records",
				  (unsigned long long)off,
				  (unsigned long long)size, tc->rec);
	for (; off < end; off += tc->rec) {
		p = trace_aux(tc, off);
		seq = p[0] == 0xb0 ? get_le64(p + 1) : UINT64_MAX;
		if (seq != tc->seq) {
			if (seq < tc->seq || !tc->gap_ok || seq == UINT64_MAX)
				return trace_fail(tc,
						  "offset %llu: record %llu where %llu was due%s",
						  (unsigned long long)off,
						  (unsigned long long)seq,
						  (unsigned long long)tc->seq,
						  tc->gap_ok ? "" : " (no flagged gap)");
			tc->gaps++;
			tc->lost += seq - tc->seq;
		}
		tc->gap_ok = false;
		want = trace_expect(tc, seq);
		i = trace_first_diff(p, want, tc->rec);
		if (i < tc->rec)
			return trace_fail(tc,
					  "offset %llu: record %llu byte %zu is %#x, not %#x",
					  (unsigned long long)off,
					  (unsigned long long)seq, i,
					  p[i], want[i]);
		tc->seq = seq + 1;
		tc->records++;
	}
	return 0;
}

/* TRBE-like: compares @len bytes at @p with the stream from tc->pos. */
int trace_check_stream(struct trace_consumer *tc, const uint8_t *p,
		       uint64_t len)
{
	const uint8_t *want;
	uint64_t frame, at, n, i;

	while (len) {
		frame = tc->pos / tc->rec;
		at = tc->pos % tc->rec;
		n = tc->rec - at < len ? tc->rec - at : len;
		want = trace_expect(tc, frame);
		i = trace_first_diff(p, want + at, n);
		if (i < n)
			return trace_fail(tc,
					  "stream byte %llu (frame %llu byte %llu) is %#x, not %#x",
					  (unsigned long long)(tc->pos + i),
					  (unsigned long long)frame,
					  (unsigned long long)(at + i),
					  p[i], want[at + i]);
		if (at + n == tc->rec)
			tc->records++;
		tc->pos += n;
		p += n;
		len -= n;
	}
	return 0;
}

/* After a flagged gap, the restart frame's A-Sync and number say where. */
static int trace_check_bytes(struct trace_consumer *tc, uint64_t off,
			     uint64_t size)
{
	const uint8_t *p = trace_aux(tc, off);
	uint64_t seq, n;

	if (tc->gap_ok && size) {
		n = sizeof(tc->sync) - tc->sync_len;
		n = n < size ? n : size;
		memcpy(tc->sync + tc->sync_len, p, n);
		tc->sync_len += n;
		p += n;
		size -= n;
		if (tc->sync_len < sizeof(tc->sync))
			return 0;
		seq = get_le64(tc->sync + ASYNC_BYTES);
		if (tc->sync[ASYNC_BYTES - 1] != 0x80 || seq * tc->rec < tc->pos)
			return trace_fail(tc, "stream restarts at frame %llu, before byte %llu",
					  (unsigned long long)seq,
					  (unsigned long long)tc->pos);
		if (seq * tc->rec != tc->pos) {
			tc->gaps++;
			tc->lost += seq * tc->rec - tc->pos;
		}
		tc->pos = seq * tc->rec;
		tc->gap_ok = false;
		tc->sync_len = 0;
		if (trace_check_stream(tc, tc->sync, sizeof(tc->sync)))
			return -1;
	}
	return trace_check_stream(tc, p, size);
}

/* Whether [@from, @to) may be SPE-like zero padding (empty: yes). */
bool trace_padding(struct trace_consumer *tc, uint64_t from, uint64_t to)
{
	uint64_t off;

	if (from == to)
		return true;
	if (tc->cfg.mode != GEN_SPE || to % tc->align ||
	    (to - from >= tc->align &&
	     !(to % tc->size == 0 && to - from < tc->rec + tc->align)))
		return false;
	for (off = from; off < to; off++)
		if (*trace_aux(tc, off))
			return false;
	return true;
}

static int trace_aux_record(void *ctx, __u64 off, __u64 size, __u64 flags)
{
	struct trace_consumer *tc = ctx;
	uint64_t format = flags & PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK;
	uint64_t want = tc->cfg.mode == GEN_TRBE ?
			PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW : 0;
	uint64_t head;
	int ret;

	tc->aux_records++;
	tc->flags_seen |= flags;
	if (format != want)
		return trace_fail(tc, "AUX record at %llu: format %#llx, not %#llx",
				  (unsigned long long)off,
				  (unsigned long long)format,
				  (unsigned long long)want);
	if (tc->snapshot) {
		if (!(flags & PERF_AUX_FLAG_OVERWRITE))
			return trace_fail(tc, "snapshot AUX record at %llu without OVERWRITE",
					  (unsigned long long)off);
		return off >= tc->size ? trace_fail(tc, "snapshot head %llu outside the buffer",
						   (unsigned long long)off) : 0;
	}
	if (flags & PERF_AUX_FLAG_OVERWRITE)
		return trace_fail(tc, "OVERWRITE in normal mode at %llu",
				  (unsigned long long)off);
	/* How far behind: tells a starved consumer apart (head may trail). */
	head = __atomic_load_n(&trace_user_page(tc)->aux_head, __ATOMIC_ACQUIRE);
	if ((int64_t)(head - tc->next_off) > (int64_t)tc->max_fill)
		tc->max_fill = head - tc->next_off;
	if (off % tc->size + size > tc->size)
		return trace_fail(tc, "AUX record %llu+%llu crosses the buffer end",
				  (unsigned long long)off,
				  (unsigned long long)size);
	if (off < tc->next_off)
		return trace_fail(tc, "AUX record at %llu overlaps data up to %llu",
				  (unsigned long long)off,
				  (unsigned long long)tc->next_off);
	if (off > tc->next_off && !trace_padding(tc, tc->next_off, off))
		return trace_fail(tc, "%llu bytes before offset %llu: not padding",
				  (unsigned long long)(off - tc->next_off),
				  (unsigned long long)off);
	if (size && off % tc->align)
		return trace_fail(tc, "AUX record at %llu: head not aligned to %zu",
				  (unsigned long long)off, tc->align);
	if (tc->cfg.mode == GEN_SPE)
		ret = trace_check_records(tc, off, size);
	else
		ret = trace_check_bytes(tc, off, size);
	if (ret)
		return ret;
	tc->bytes += size;
	tc->wraps += (off + size) / tc->size - tc->next_off / tc->size;
	tc->next_off = off + size;
	if (flags & AUX_GAP_FLAGS)
		tc->gap_ok = true;
	if (flags & PERF_AUX_FLAG_TRUNCATED)
		tc->truncated++;
	/* Consumed (a consumer reading to aux_head writes aux_tail itself). */
	if (!tc->tail_from_head)
		__atomic_store_n(&trace_user_page(tc)->aux_tail, tc->next_off,
				 __ATOMIC_RELEASE);
	return 0;
}

/* Handles the data area's records: how many AUX ones, or -1 and tc->err. */
static int trace_poll(struct trace_consumer *tc)
{
	int n = aux_records_read(&tc->b, trace_aux_record, tc);

	if (n == -ENOSPC)
		return trace_fail(tc, "the data area lost records");
	if (n < 0)
		return trace_fail(tc, "bad record in the data area");
	return n;
}

/* The generator's CPU; this task is pinned away from it if it can be. */
int trace_pick_cpus(void)
{
	cpu_set_t set;
	int first = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	while (first < CPU_SETSIZE - 1 && !CPU_ISSET(first, &set))
		first++;
	CPU_CLR(first, &set);
	if (CPU_COUNT(&set))
		sched_setaffinity(0, sizeof(set), &set);
	return first;
}

/* CPU-wide events need CAP_PERFMON unless perf_event_paranoid <= 0. */
bool cpu_events_allowed(void)
{
	return !geteuid() ||
	       sysctl_read("/proc/sys/kernel/perf_event_paranoid") <= 0;
}

/* Handles what is left after the event stopped; 0 or -1. */
int trace_drain(struct trace_consumer *tc)
{
	int n;

	while ((n = trace_poll(tc)) > 0)
		;
	return n;
}

/* Stops the event; what it wrote before must check out too.  0 or -1. */
int trace_finish(struct trace_consumer *tc, int ret)
{
	ioctl(tc->b.fd, PERF_EVENT_IOC_DISABLE, 0);
	return ret ? ret : trace_drain(tc);
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Consumes until @bytes were checked and the data wrapped @wraps times,
 * re-enabling the event after TRUNCATED (as perf does) or a quiet spell.
 */
int trace_consume(struct trace_consumer *tc, uint64_t bytes, uint64_t wraps,
		  double timeout)
{
	double start = now_s(), quiet = start, t;
	uint64_t enabled_at = 0;
	int n;

	while (tc->bytes < bytes || tc->wraps < wraps) {
		n = trace_poll(tc);
		if (n < 0)
			return -1;
		t = now_s();
		if (n)
			quiet = t;
		if (tc->truncated > enabled_at || t - quiet > 0.1) {
			ioctl(tc->b.fd, PERF_EVENT_IOC_ENABLE, 0);
			enabled_at = tc->truncated;
			quiet = t;
		}
		if (t - start > timeout)
			return trace_fail(tc, "timed out after %llu of %llu bytes",
					  (unsigned long long)tc->bytes,
					  (unsigned long long)bytes);
		if (!n)
			usleep(100);
	}
	return 0;
}
