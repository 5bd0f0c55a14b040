// SPDX-License-Identifier: GPL-2.0
/*
 * Real trace through a large AUX mapping, on boards with Arm SPE or TRBE.
 *
 * SPE and TRBE write trace through the driver's vmap() of the AUX pages;
 * with PERF_PMU_CAP_AUX_PREFER_LARGE and a large-vmap kernel that mapping
 * uses PMD blocks or cont-PTEs.  While this task walks memory under a 4 MiB
 * AUX buffer (perf record's default for root):
 *  - arm_spe_0: every PERF_RECORD_AUX holds whole SPE records (packet
 *    headers as the SPE packet decoder knows them, each record ending in END
 *    or TIMESTAMP) with only zero padding between them;
 *  - cs_etm with a TRBE sink: every record is flagged FORMAT_RAW and the
 *    stream carries A-Sync packets;
 * and the kernel logs neither a warning nor "Unexpected buffer fault" (a
 * stage-1 fault of the trace unit on its own buffer mapping).
 * Without the PMU the tests skip.
 */
#include <glob.h>

#include "../kselftest_harness.h"
#include "aux_common.h"
#include "trace_check.h"

#define AUX_BYTES (4UL << 20)

struct hw_seen {
	struct aux_buffer *b;
	bool trbe;
	unsigned long long bytes, records, async, aux_records;
	char err[160];
};

FIXTURE(hw_trace) {
	int fd;
	int kmsg;
	struct aux_buffer buf;
	struct hw_seen seen;
};

FIXTURE_VARIANT(hw_trace) {
	const char *pmu;
	bool trbe;
	const char *skip;
};

/* clang-format off */
FIXTURE_VARIANT_ADD(hw_trace, arm_spe) {
	.pmu = "arm_spe_0",
	.skip = "no arm_spe_0 PMU",
};

FIXTURE_VARIANT_ADD(hw_trace, trbe) {
	.pmu = "cs_etm",
	.trbe = true,
	.skip = "no cs_etm PMU with a TRBE sink",
};

/* clang-format on */

/*
 * Whether cs_etm has a TRBE sink.  Each CPU has its own (trbe0, trbe1, ...),
 * so the event names none (config2 0) and the driver takes each CPU's
 * default sink: naming trbe0 would trace on CPU 0 only.
 */
static bool have_trbe_sink(void)
{
	glob_t g;
	bool found;

	found = !glob(PMU_DIR "/cs_etm/sinks/trbe*", 0, NULL, &g);
	if (found)
		globfree(&g);
	return found;
}

FIXTURE_SETUP(hw_trace)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	int type = pmu_type(variant->pmu);

	self->fd = -1;
	self->kmsg = -1;
	if (type < 0 || (variant->trbe && !have_trbe_sink()))
		SKIP(return, "%s", variant->skip);
	attr.type = type;
	if (!variant->trbe) {
		attr.config = 1;		/* ts_enable */
		attr.sample_period = 4096;	/* SPE takes no frequency */
	}
	self->kmsg = kmsg_open_at_end();
	self->fd = sys_perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	ASSERT_LE(0, self->fd)
	{
		TH_LOG("perf_event_open(%s): %s", variant->pmu,
		       strerror(errno));
	}
	ASSERT_EQ(0, aux_buffer_map(&self->buf, self->fd,
				    AUX_BYTES / page_size(), false));
	self->seen.b = &self->buf;
	self->seen.trbe = variant->trbe;
}

FIXTURE_TEARDOWN(hw_trace)
{
	aux_buffer_unmap(&self->buf);
	if (self->fd >= 0)
		close(self->fd);
	/* After the free: the driver's vunmap() must not warn either. */
	EXPECT_EQ(0, kmsg_warnings(self->kmsg));
	if (self->kmsg >= 0)
		close(self->kmsg);
}

static int hw_record(void *ctx, __u64 off, __u64 size, __u64 flags)
{
	struct hw_seen *s = ctx;
	const unsigned char *p = (unsigned char *)s->b->aux + off % s->b->aux_size;
	bool partial = flags & (PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL);
	struct trace_check res = { 0 };
	int ret;

	s->aux_records++;
	if (off % s->b->aux_size + size > s->b->aux_size) {
		snprintf(s->err, sizeof(s->err),
			 "AUX record %llu+%llu crosses the buffer end", off, size);
		return -1;
	}
	if (s->trbe) {
		if ((flags & PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK) !=
		    PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW) {
			snprintf(s->err, sizeof(s->err),
				 "AUX record at %llu not FORMAT_RAW", off);
			return -1;
		}
		/*
		 * A-Sync comes at trace start and then every few KiB: a short
		 * record may have none, the session as a whole must.
		 */
		ete_count_async(p, size, &res);
		ret = 0;
	} else {
		ret = spe_check_stream(p, size, partial, &res);
	}
	if (ret) {
		snprintf(s->err, sizeof(s->err), "AUX record at %llu: %s at byte %zu",
			 off, res.error, res.bad_offset);
		return -1;
	}
	s->bytes += size;
	s->records += res.records;
	s->async += res.async;
	__atomic_store_n(&((struct perf_event_mmap_page *)s->b->base)->aux_tail,
			 off + size, __ATOMIC_RELEASE);
	return 0;
}

/* Loads and stores over 16 MiB, for SPE to sample and ETE to trace. */
static unsigned long hw_workload(void)
{
	size_t len = 16UL << 20, i;
	unsigned char *m = calloc(1, len);
	unsigned long sum = 0;
	int round;

	if (!m)
		return 0;
	for (round = 0; round < 8; round++)
		for (i = 0; i < len; i += 64) {
			m[i] += i;
			sum += m[(i * 7919) % len];
		}
	free(m);
	return sum;
}

TEST_F_TIMEOUT(hw_trace, records_parse, 120)
{
	unsigned long sum = 0;
	int round, n;

	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	for (round = 0; round < 4; round++) {
		sum += hw_workload();
		n = aux_records_read(&self->buf, hw_record, &self->seen);
		ASSERT_LE(0, n)
		{
			TH_LOG("%s", self->seen.err);
		}
	}
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_DISABLE, 0));
	n = aux_records_read(&self->buf, hw_record, &self->seen);
	ASSERT_LE(0, n)
	{
		TH_LOG("%s", self->seen.err);
	}
	TH_LOG("%s: %llu bytes in %llu AUX records, %llu SPE records, %llu A-Sync (workload %lx)",
	       variant->pmu, self->seen.bytes, self->seen.aux_records,
	       self->seen.records, self->seen.async, sum);
	ASSERT_LT(0, self->seen.bytes);
	/* A-Sync for the ETE stream, whole records for SPE. */
	EXPECT_LT(0, variant->trbe ? self->seen.async : self->seen.records);
}

TEST_HARNESS_MAIN
