/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Consumer of lib/test_aux_pmu.c's trace generator: checks every byte the
 * PERF_RECORD_AUX records cover, and the records (flags, offsets, gaps).
 * The format is rebuilt from that file's description, not shared.
 */
#ifndef PERF_AUX_TRACE_H
#define PERF_AUX_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aux_common.h"

enum gen_mode { GEN_SPE = 1, GEN_TRBE = 2 };

struct gen_config {
	enum gen_mode mode;
	unsigned int words;	/* payload words per record */
	unsigned int align_log2;
	unsigned int burst;	/* records per tick */
	unsigned long long period_ns;
};

#define GEN_WORD_MUL	0x9e3779b97f4a7c15ULL
#define SPE_PKT_BYTES	9
#define ASYNC_BYTES	12
#define GEN_MAX_RECORD	(SPE_PKT_BYTES * (255 + 2))	/* > TRBE-like frames */
#define AUX_GAP_FLAGS	(PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL | \
			 PERF_AUX_FLAG_COLLISION)

size_t gen_record_bytes(const struct gen_config *c);
/* The bytes of record (SPE-like) or frame (TRBE-like) @seq. */
void gen_record(const struct gen_config *c, uint64_t seq, uint8_t *p);
unsigned int gen_quarter_burst(const struct gen_config *c, size_t bytes);

struct trace_consumer {
	struct aux_buffer b;
	struct gen_config cfg;
	size_t rec;		/* bytes per record or frame */
	size_t size;		/* AUX buffer bytes */
	size_t align;
	bool snapshot;
	bool tail_from_head;	/* aux_tail is the caller's to write */
	uint8_t expect[GEN_MAX_RECORD];
	uint64_t expect_seq;	/* expect[] holds this record */
	uint64_t next_off;	/* end of the last PERF_RECORD_AUX */
	uint64_t seq;		/* next record (SPE-like) expected */
	uint64_t pos;		/* next stream byte (TRBE-like) expected */
	bool gap_ok;		/* the last record was flagged TRUNCATED... */
	uint8_t sync[ASYNC_BYTES + 8];	/* TRBE-like: restart frame head */
	size_t sync_len;
	/* What was seen. */
	uint64_t bytes, records, aux_records, truncated, gaps, lost, wraps;
	uint64_t flags_seen;
	uint64_t max_fill;	/* most unread trace seen at a record */
	char err[256];
};

int trace_open(struct trace_consumer *tc, enum aux_caps caps,
	       const struct gen_config *cfg, unsigned long nr_pages,
	       bool snapshot, int cpu);
int trace_open_event(struct trace_consumer *tc, enum aux_caps caps,
		     const struct gen_config *cfg, unsigned long nr_pages,
		     bool snapshot, int cpu, unsigned long watermark);
void trace_close(struct trace_consumer *tc);

static inline struct perf_event_mmap_page *
trace_user_page(struct trace_consumer *tc)
{
	return tc->b.base;
}

uint64_t trace_count(struct trace_consumer *tc);
int trace_pick_cpus(void);
bool cpu_events_allowed(void);
int trace_drain(struct trace_consumer *tc);
int trace_finish(struct trace_consumer *tc, int ret);
double now_s(void);
int trace_consume(struct trace_consumer *tc, uint64_t bytes, uint64_t wraps,
		  double timeout);
uint8_t *trace_aux(struct trace_consumer *tc, uint64_t off);
const uint8_t *trace_expect(struct trace_consumer *tc, uint64_t seq);
int trace_fail(struct trace_consumer *tc, const char *fmt, ...);
bool trace_padding(struct trace_consumer *tc, uint64_t from, uint64_t to);
int trace_check_stream(struct trace_consumer *tc, const uint8_t *p,
		       uint64_t len);

#endif /* PERF_AUX_TRACE_H */
