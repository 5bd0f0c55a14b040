// SPDX-License-Identifier: GPL-2.0
/*
 * perf itself as the consumer of a large AUX buffer.
 *
 * perf record drives the synthetic PMU in its Arm SPE form (arm_spe_0, the
 * spe_form parameter of lib/test_aux_pmu.c) through perf's own Arm SPE code:
 * the AUX area mapped beside the data area, the data extent taken from the
 * user page's aux_head, aux_tail written back, poll() woken at the
 * watermark.  perf report -D then decodes what perf saved with perf's SPE
 * packet decoder.  What must hold: perf saved every byte the kernel
 * reported written (the sizes of the PERF_RECORD_AUX records), the decoder
 * splits all of it into packets with no bad one, and the packets are the
 * generator's records byte for byte, in order (a record is missing only
 * where the kernel flagged one TRUNCATED), through at least four wraps of a
 * buffer the kernel may map with large blocks.
 *
 * perf is the machine's (PATH).  The PMU's SPE form is switched on for each
 * test and off after it, so that no other program meets an arm_spe_0.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kselftest_harness.h"
#include "aux_trace.h"

#define SPE_FORM "/sys/module/test_aux_pmu/parameters/spe_form"
#define NO_PERF "no perf program"
#define NO_SPE_FORM "test_aux_pmu has no spe_form"
#define SPE_EXISTS "arm_spe_0 exists: a real SPE"
#define NO_BLOCK "no large block in a buffer of at most 8 MiB"
/*
 * Four wraps of the buffer go through perf.data and perf report's text in a
 * guest of a few hundred MiB free.
 */
#define MAX_BUFFER_BYTES	(8UL << 20)
#define WRAPS			4
/* perf record -S: a snapshot per SIGUSR2. */
#define SNAPSHOTS		4
/*
 * The generator writes a 96th of the buffer per 1 ms tick: about eight
 * wraps in RECORD_SECONDS on a TCG guest, whose timers tick 250 times a
 * second; perf report -D decodes some 300 KB a second there.
 */
#define TICKS_PER_WRAP		96
#define RECORD_SECONDS		3
#define RECORD_LOG		"record.log"
/* The lines of perf report -D shown with a failure. */
#define CONTEXT_LINES		24
/* A line of perf report -D: a packet is at most 16 bytes, 3 columns each. */
#define LINE_MAX_BYTES		4096

FIXTURE(perf_tool) {
	char dir[32];
	bool spe_on;
	unsigned long pages;
	struct gen_config cfg;
};

static int spe_form_write(bool on)
{
	int fd = open(SPE_FORM, O_WRONLY);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Two of the smallest large block vmap() may map an AUX buffer with (the
 * contiguous-PTE block where the architecture has one, else the PMD
 * block), within MAX_BUFFER_BYTES: perf's buffer is allocated in chunks of
 * half of it (the default watermark), and a chunk of a block's size is what
 * lets the kernel map it with one.  0 where no block fits.
 */
static unsigned long buffer_pages(void)
{
	long blocks[] = { aux_vmap_attr("cont_pages"),
			  aux_vmap_attr("pmd_pages") };
	unsigned long max = MAX_BUFFER_BYTES / page_size();
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(blocks); i++)
		if (blocks[i] > 0 && 2UL * blocks[i] <= max)
			return 2UL * blocks[i];
	return 0;
}

FIXTURE_SETUP(perf_tool)
{
	int ret;

	if (pmu_type(aux_pmu_names[CAPS_NONE]) < 0)
		SKIP(return, NO_TEST_PMU);
	if (geteuid())
		SKIP(return, NO_PERFMON);
	if (system("perf --version > /dev/null 2>&1"))
		SKIP(return, NO_PERF);
	self->pages = buffer_pages();
	if (!self->pages)
		SKIP(return, NO_BLOCK);
	ret = spe_form_write(true);
	if (ret == -ENOENT)
		SKIP(return, NO_SPE_FORM);
	if (ret == -EEXIST)
		SKIP(return, SPE_EXISTS);
	ASSERT_EQ(0, ret);
	self->spe_on = true;
	snprintf(self->dir, sizeof(self->dir), "/tmp/perf_tool.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	self->cfg.mode = GEN_SPE;
	self->cfg.words = 6;
	self->cfg.align_log2 = 6;
	self->cfg.burst = self->pages * page_size() / TICKS_PER_WRAP /
			  gen_record_bytes(&self->cfg) ?: 1;
}

FIXTURE_TEARDOWN(perf_tool)
{
	char cmd[96];
	int ret;

	if (self->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
		if (system(cmd))
			ksft_print_msg("%s failed\n", cmd);
	}
	ret = self->spe_on ? spe_form_write(false) : 0;
	if (ret)
		ksft_print_msg("spe_form stays 1: %s\n", strerror(-ret));
}

/*
 * What perf report -D showed.  A snapshot (perf record -S) is the buffer as
 * it was at a moment, its oldest bytes the rest of a record the generator
 * has since written over: the decoder may take them for any packets, and
 * the check starts at the snapshot's first whole record.
 */
struct dump {
	const struct gen_config *cfg;
	size_t rec_bytes;
	bool snapshot;
	uint64_t aux_bytes;	/* sizes of the PERF_RECORD_AUX records */
	uint64_t truncated;	/* of them flagged TRUNCATED */
	uint64_t spe_bytes;	/* sizes of the ARM SPE data perf decoded */
	uint64_t dumps;	/* ARM SPE data: one per snapshot */
	uint64_t packets, bad, pads, records, lost, skipped;
	uint64_t next_seq, first_seq;	/* this dump's */
	bool synced;	/* a whole record seen in this dump */
	bool in_spe;	/* in the packets of ARM SPE data */
	uint8_t rec[GEN_MAX_RECORD];	/* the record being put together */
	size_t rec_len;
	char err[160];
	char seen[CONTEXT_LINES][128];	/* the last lines, for a failure */
	unsigned int lines;
};

/* The first failure, with the lines of perf report -D that led to it. */
static void dump_fail(struct dump *d, const char *what, unsigned long long n)
{
	unsigned int i;

	if (d->err[0])
		return;
	snprintf(d->err, sizeof(d->err), "%s %llu", what, n);
	for (i = d->lines > CONTEXT_LINES ? d->lines - CONTEXT_LINES : 0;
	     i < d->lines; i++)
		ksft_print_msg("%s", d->seen[i % CONTEXT_LINES]);
}

static void dump_record(struct dump *d)
{
	uint8_t want[GEN_MAX_RECORD];
	uint64_t seq = 0;
	int i;

	d->rec_len = 0;
	for (i = 8; i >= 1; i--)
		seq = seq << 8 | d->rec[i];
	gen_record(d->cfg, seq, want);
	if (d->snapshot && !d->synced) {
		/* Not a record yet: the decoder started inside one. */
		if (memcmp(d->rec, want, d->rec_bytes)) {
			d->skipped++;
			return;
		}
		d->synced = true;
		if (d->dumps > 1 && seq <= d->first_seq)
			dump_fail(d, "a snapshot does not start after the last, at record",
				  seq);
		d->first_seq = seq;
		d->next_seq = seq;
	}
	if (memcmp(d->rec, want, d->rec_bytes))
		dump_fail(d, "not the generator's bytes: record", seq);
	if (seq < d->next_seq)
		dump_fail(d, "out of order: record", seq);
	else
		d->lost += seq - d->next_seq;
	d->next_seq = seq + 1;
	d->records++;
}

/* ".  <offset>: <byte> <byte> ...  <description>" */
static void dump_packet(struct dump *d, const char *line, int at)
{
	uint8_t bytes[16];
	char hex[3] = "";
	int i, n = 0;

	/* The columns of the bytes: " xx" each, then blanks, then words. */
	while (n < 16 && line[at] == ' ' && isxdigit(line[at + 1]) &&
	       isxdigit(line[at + 2]) && isspace(line[at + 3])) {
		memcpy(hex, line + at + 1, 2);
		bytes[n++] = strtoul(hex, NULL, 16);
		at += 3;
	}
	d->packets++;
	if (!n) {
		dump_fail(d, "a packet line without bytes, packet", d->packets);
		return;
	}
	if (d->snapshot && !d->synced && !d->rec_len &&
	    (n != SPE_PKT_BYTES || bytes[0] != 0xb0)) {
		d->skipped++;
		return;
	}
	if (strstr(line + at, "Bad packet")) {
		d->bad++;
		return;
	}
	/* PAD: perf's decoder takes up to 16 zero bytes as one packet. */
	for (i = 0; i < n && !bytes[i]; i++)
		;
	if (i == n) {
		d->pads += n;
		if (d->rec_len)
			dump_fail(d, "padding in a record after byte", d->rec_len);
		return;
	}
	if (d->rec_len + n > d->rec_bytes) {
		dump_fail(d, "a packet past a record's end, at byte", d->rec_len);
		d->rec_len = 0;
		return;
	}
	memcpy(d->rec + d->rec_len, bytes, n);
	d->rec_len += n;
	if (d->rec_len == d->rec_bytes)
		dump_record(d);
}

static void dump_line(struct dump *d, const char *line)
{
	unsigned long long size, flags;
	const char *p;
	int at = 0;

	snprintf(d->seen[d->lines++ % CONTEXT_LINES], sizeof(d->seen[0]), "%s",
		 line);
	p = strstr(line, "PERF_RECORD_AUX offset: ");
	if (p && sscanf(p, "PERF_RECORD_AUX offset: %*x size: %llx flags: %llx",
			&size, &flags) == 2) {
		d->aux_bytes += size;
		d->truncated += !!(flags & PERF_AUX_FLAG_TRUNCATED);
		return;
	}
	if (sscanf(line, ". ... ARM SPE data: size %llx", &size) == 1) {
		if (d->rec_len)
			dump_fail(d, "a record cut short after byte", d->rec_len);
		d->spe_bytes += size;
		d->dumps++;
		d->synced = false;
		d->in_spe = true;
		d->rec_len = 0;
		return;
	}
	/* A packet: its offset (8 digits), ": ", its bytes, its words. */
	if (d->in_spe && sscanf(line, ".  %*8x:%n", &at) == 0 &&
	    at == 12 && line[at] == ' ')
		dump_packet(d, line, at + 1);
	else
		d->in_spe = false;
}

/* perf report -D of DIR/perf.data, read line by line: 0 or an errno. */
static int dump_read(struct dump *d, const char *dir)
{
	double start = now_s();
	char *line = malloc(LINE_MAX_BYTES);
	char cmd[96];
	FILE *f;
	int ret;

	if (!line)
		return -ENOMEM;
	snprintf(cmd, sizeof(cmd), "perf report -D -i %s/perf.data 2>&1", dir);
	f = popen(cmd, "r");
	if (!f) {
		free(line);
		return -errno;
	}
	while (fgets(line, LINE_MAX_BYTES, f)) {
		if (!strchr(line, '\n') && !feof(f)) {
			dump_fail(d, "a line over the bytes", LINE_MAX_BYTES);
			break;
		}
		dump_line(d, line);
	}
	ret = pclose(f);
	free(line);
	ksft_print_msg("perf report -D: %.0f s\n", now_s() - start);
	if (d->rec_len)
		dump_fail(d, "the last record cut short after byte", d->rec_len);
	return ret;
}

static void dump_show(struct dump *d, unsigned long pages)
{
	ksft_print_msg("buffer %lu pages; PERF_RECORD_AUX %llu bytes, %llu truncated\n",
		       pages, (unsigned long long)d->aux_bytes,
		       (unsigned long long)d->truncated);
	ksft_print_msg("decoded %llu bytes in %llu parts: %llu packets\n",
		       (unsigned long long)d->spe_bytes,
		       (unsigned long long)d->dumps,
		       (unsigned long long)d->packets);
	ksft_print_msg("%llu records, %llu padding, %llu bad, %llu skipped, %llu records lost\n",
		       (unsigned long long)d->records,
		       (unsigned long long)d->pads, (unsigned long long)d->bad,
		       (unsigned long long)d->skipped,
		       (unsigned long long)d->lost);
}

/* CMD, a shell command running perf record; DIR's log shown if it fails. */
static int run_logged(const char *dir, const char *cmd)
{
	char show[64];
	int ret = system(cmd);

	if (ret) {
		snprintf(show, sizeof(show), "cat %s/%s >&2", dir, RECORD_LOG);
		if (system(show))
			ksft_print_msg("no %s/%s\n", dir, RECORD_LOG);
	}
	return ret;
}

/*
 * perf record of the generator's trace on CPU 0 (per-CPU mmaps, as perf
 * record -a takes them) into DIR/perf.data, its output to DIR/record.log.
 */
static void perf_record(char *cmd, size_t size, const char *dir,
			unsigned long pages, const struct gen_config *c,
			const char *opts)
{
	snprintf(cmd, size,
		 "perf record -q -o %s/perf.data -C 0 -m ,%lu -e arm_spe_0/mode=%d,words=%u,align=%u,burst=%u/ %s > %s/%s 2>&1",
		 dir, pages, c->mode, c->words, c->align_log2, c->burst, opts,
		 dir, RECORD_LOG);
}

/*
 * A guest whose timers run late (TCG, the sanitizers) may tick too few
 * times for four wraps: a short recording is made again, twice as long.
 */
TEST_F_TIMEOUT(perf_tool, record_decodes_every_record, 270)
{
	struct dump d;
	char cmd[512], opts[32];
	int secs;

	for (secs = RECORD_SECONDS; ; secs *= 2) {
		memset(&d, 0, sizeof(d));
		d.cfg = &self->cfg;
		d.rec_bytes = gen_record_bytes(&self->cfg);
		snprintf(opts, sizeof(opts), "-- sleep %d", secs);
		perf_record(cmd, sizeof(cmd), self->dir, self->pages,
			    &self->cfg, opts);
		ASSERT_EQ(0, run_logged(self->dir, cmd))
			TH_LOG("perf record failed");
		ASSERT_EQ(0, dump_read(&d, self->dir))
			TH_LOG("perf report -D failed");
		dump_show(&d, self->pages);
		if (d.spe_bytes >= WRAPS * self->pages * page_size() ||
		    secs >= 2 * RECORD_SECONDS)
			break;
		ksft_print_msg("fewer than %d wraps in %d s: again\n", WRAPS,
			       secs);
	}
	ASSERT_EQ('\0', d.err[0]) TH_LOG("%s", d.err);
	EXPECT_EQ(0ULL, d.bad);
	/*
	 * Every byte the records report is a whole record's; the rest perf
	 * saved is the padding the driver skips, as arm_spe_pmu.c pads a
	 * session's head to its alignment.
	 */
	EXPECT_EQ(d.aux_bytes, d.records * d.rec_bytes);
	EXPECT_EQ(d.spe_bytes, d.aux_bytes + d.pads);
	EXPECT_GE(d.spe_bytes, WRAPS * self->pages * page_size())
		TH_LOG("fewer than %d wraps", WRAPS);
	if (d.lost)
		EXPECT_NE(0ULL, d.truncated) TH_LOG("records lost, none truncated");
}

/*
 * perf record -S takes a snapshot at each SIGUSR2: four signals, a second
 * apart, once perf has started writing its file (before, SIGUSR2 would end
 * it).  The signals go to perf itself, so no timeout(1) stands between
 * (coreutils' would die of the first one): the workload bounds the
 * recording, as in the test above.
 */
TEST_F_TIMEOUT(perf_tool, snapshots_decode_every_record, 240)
{
	struct dump d = { .cfg = &self->cfg, .snapshot = true };
	char cmd[512], shell[768];

	d.rec_bytes = gen_record_bytes(&self->cfg);
	perf_record(cmd, sizeof(cmd), self->dir, self->pages, &self->cfg,
		    "-S -- sleep 8");
	snprintf(shell, sizeof(shell),
		 "%s & p=$!; while kill -0 $p && [ ! -e %s/perf.data ]; do sleep 1; done; for i in $(seq %d); do sleep 1; kill -USR2 $p; done; wait $p",
		 cmd, self->dir, SNAPSHOTS);
	ASSERT_EQ(0, run_logged(self->dir, shell))
		TH_LOG("perf record -S failed");
	ASSERT_EQ(0, dump_read(&d, self->dir)) TH_LOG("perf report -D failed");
	dump_show(&d, self->pages);
	ASSERT_EQ('\0', d.err[0]) TH_LOG("%s", d.err);
	EXPECT_GE(d.dumps, SNAPSHOTS);
	EXPECT_EQ(0ULL, d.bad);
	EXPECT_EQ(0ULL, d.lost);
	EXPECT_LE(d.spe_bytes, d.dumps * self->pages * page_size());
	EXPECT_GE(d.records, d.dumps);
	EXPECT_GE(d.aux_bytes, WRAPS * self->pages * page_size())
		TH_LOG("fewer than %d wraps", WRAPS);
}

TEST_HARNESS_MAIN
