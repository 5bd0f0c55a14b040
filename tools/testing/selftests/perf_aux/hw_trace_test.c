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
 *  - cs_etm with a TRBE sink: every record is flagged FORMAT_RAW, the
 *    stream carries A-Sync packets and, where OpenCSD's trc_pkt_lister is
 *    installed, its packets decode without error (ete_decode.c);
 * and the kernel logs neither a warning nor "Unexpected buffer fault" (a
 * stage-1 fault of the trace unit on its own buffer mapping); the driver's
 * vmap() of the buffer uses PMD or cont-PTE blocks (the page-table dump).
 * Without the PMU the tests skip.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* sched_getcpu(), CPU_SET() */
#endif
#include <glob.h>
#include <sched.h>
#include <sys/ioctl.h>

#include "../kselftest_harness.h"
#include "aux_extended.h"
#include "aux_vmap.h"
#include "ete_decode.h"
#include "trace_check.h"

#define AUX_BYTES (4UL << 20)

/*
 * The ETE stream kept for OpenCSD.  trc_pkt_lister prints a line of about
 * 50 bytes per packet, and most ETE packets are one byte, so 1 MiB of trace
 * is a 50 MB listing and a few seconds: enough trace to find a bad page,
 * not enough to fill a board's /tmp.
 */
#define ETE_KEEP_BYTES (1024UL * 1024)
#define ETE_DECODE_SECONDS 60

struct hw_seen {
	struct aux_buffer *b;
	bool trbe;
	unsigned long long bytes, records, async, aux_records;
	char err[160];
	/* TRBE: the stream from its start, as long as it is continuous. */
	unsigned char *kept;
	size_t kept_len;
	bool kept_cut;		/* may end inside a packet */
	bool kept_done;
};

FIXTURE(hw_trace) {
	int fd;
	int kmsg;
	struct aux_buffer buf;
	struct hw_seen seen;
	int cpu;		/* TRBE: the CPU the test runs on */
	bool pinned;
	cpu_set_t cpus;		/* the affinity before pinning */
};

FIXTURE_VARIANT(hw_trace) {
	const char *pmu;
	const char *caller;	/* the driver's vmap() call site */
	bool trbe;
	const char *skip;
};

/* clang-format off */
FIXTURE_VARIANT_ADD(hw_trace, arm_spe) {
	.pmu = "arm_spe_0",
	.caller = "arm_spe_pmu_setup_aux",
	.skip = "no arm_spe_0 PMU",
};

FIXTURE_VARIANT_ADD(hw_trace, trbe) {
	.pmu = "cs_etm",
	.caller = "arm_trbe_alloc_buffer",
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

static bool cpu_has_ete(int cpu)
{
	char path[128];

	snprintf(path, sizeof(path), ETE_SYSFS_CPU_FMT "/trcidr/trcidr0", cpu);
	return !access(path, R_OK);
}

/*
 * Keeps the task on one CPU with a trace unit, this one if it has.  A raw
 * TRBE stream names no trace unit (no formatter, no trace IDs), and CPUs
 * of different types have different ID registers, which the decoder needs
 * to read packets right: on one CPU, that CPU's registers describe all of
 * the trace.  Perf likewise decodes raw trace per CPU.  Returns the CPU or
 * -1.
 */
static int pin_to_ete_cpu(cpu_set_t *old)
{
	int cpu = sched_getcpu(), i;
	cpu_set_t one;

	if (sched_getaffinity(0, sizeof(*old), old))
		return -1;
	if (cpu < 0 || !CPU_ISSET(cpu, old) || !cpu_has_ete(cpu))
		for (cpu = -1, i = 0; i < CPU_SETSIZE && cpu < 0; i++)
			if (CPU_ISSET(i, old) && cpu_has_ete(i))
				cpu = i;
	if (cpu < 0)
		return -1;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one) ? -1 : cpu;
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
	self->pinned = false;
	if (type < 0 || (variant->trbe && !have_trbe_sink()))
		SKIP(return, "%s", variant->skip);
	attr.type = type;
	if (variant->trbe) {
		self->cpu = pin_to_ete_cpu(&self->cpus);
		ASSERT_LE(0, self->cpu)
		{
			TH_LOG("cannot run on a CPU with a trace unit");
		}
		self->pinned = true;
		self->seen.kept = malloc(ETE_KEEP_BYTES);
		ASSERT_NE(NULL, self->seen.kept);
	} else {
		ASSERT_EQ(0, pmu_format_set(variant->pmu, "ts_enable", 1,
					    &attr));
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
	free(self->seen.kept);
	if (self->pinned)
		sched_setaffinity(0, sizeof(self->cpus), &self->cpus);
	aux_buffer_unmap(&self->buf);
	if (self->fd >= 0)
		close(self->fd);
	/* After the free: the driver's vunmap() must not warn either. */
	EXPECT_EQ(0, kmsg_warnings(self->kmsg));
	if (self->kmsg >= 0)
		close(self->kmsg);
}

/*
 * Appends a TRBE record to the kept stream.  Records follow each other in
 * the stream until one says trace was lost after it: TRUNCATED (buffer
 * full) or COLLISION (a wrap: the TRBE stopped while the ETE went on).
 * That one is kept, ending the copy, and as the ETE was not stopped there
 * it may end inside a packet.
 */
static void hw_keep(struct hw_seen *s, const unsigned char *p, size_t size,
		    __u64 flags)
{
	size_t room = ETE_KEEP_BYTES - s->kept_len;

	if (!s->kept || s->kept_done)
		return;
	if (size >= room) {
		size = room;
		s->kept_cut = true;
	}
	memcpy(s->kept + s->kept_len, p, size);
	s->kept_len += size;
	if (flags & (PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL |
		     PERF_AUX_FLAG_COLLISION))
		s->kept_cut = true;
	s->kept_done = s->kept_cut;
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
		hw_keep(s, p, size, flags);
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

/*
 * OpenCSD's packet decode of the kept stream, where trc_pkt_lister is
 * installed; without it the other checks stand alone.  TRCCONFIGR is what
 * the driver programs for attr.config 0: no option bit set.
 */
static void hw_decode_ete(struct __test_metadata *_metadata, int cpu,
			  const struct hw_seen *s)
{
	struct ete_decode_result dec;
	char dir[64], tool[ETE_PATH_MAX];
	struct ete_regs regs;
	int ret;

	if (ete_lister_find(tool, sizeof(tool))) {
		TH_LOG("OpenCSD not installed: ETE stream not decoded");
		return;
	}
	snprintf(dir, sizeof(dir), ETE_SYSFS_CPU_FMT, cpu);
	ret = ete_regs_read(dir, 0, &regs);
	ASSERT_EQ(0, ret)
	{
		TH_LOG("ETE registers of CPU %d: %s", cpu, strerror(-ret));
	}
	ret = ete_decode(&regs, s->kept, s->kept_len, s->kept_cut,
			 ETE_DECODE_SECONDS, &dec);
	TH_LOG("OpenCSD: %zu ETE packets in %zu bytes%s, %zu errors",
	       dec.packets, s->kept_len, s->kept_cut ? " (cut)" : "",
	       dec.errors);
	ASSERT_EQ(0, ret)
	{
		TH_LOG("decode: %s", ret < 0 ? strerror(-ret) : dec.error);
	}
	ASSERT_LT(0, dec.packets);
}

TEST_F_TIMEOUT(hw_trace, records_parse, 200)
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
	if (variant->trbe)
		hw_decode_ete(_metadata, self->cpu, &self->seen);
}

/* The driver's vmap() of large chunks uses PMD or cont-PTE blocks. */
TEST_F(hw_trace, driver_vmap_granules)
{
	unsigned long start = 0;
	struct vmap_granules g;
	long kptr;
	int ret;

	if (geteuid())
		SKIP(return, NOT_ROOT);
	/* Real addresses in vmallocinfo and the dump, for this read only. */
	ret = kptr_show(&kptr);
	if (!ret) {
		start = vmallocinfo_find(variant->caller, AUX_BYTES);
		ret = start ? vmap_granules(start, AUX_BYTES, &g) : 0;
		sysctl_write(KPTR_RESTRICT, kptr);
	}
	ASSERT_NE(0, start);
	if (ret == -ENOENT)
		SKIP(return, NO_PTDUMP);
	ASSERT_EQ(0, ret);
	TH_LOG("%s: PMD %lu, cont-PTE %lu, PTE %lu pages", variant->pmu,
	       g.pmd, g.cont, g.pte);
	if (huge_vmap_off()) {
		if (g.pmd + g.cont && !aux_strict())
			SKIP(return, NOHUGE_IGNORED);
		EXPECT_EQ(0UL, g.pmd + g.cont);
		return;
	}
	if (!g.pmd && !g.cont && !aux_strict())
		SKIP(return, BASE_PAGES_ONLY);
	EXPECT_NE(0, g.pmd + g.cont);
}

TEST_HARNESS_MAIN
