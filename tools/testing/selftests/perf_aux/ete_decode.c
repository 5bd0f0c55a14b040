// SPDX-License-Identifier: GPL-2.0
/*
 * Packet decode of a raw ETE stream with OpenCSD's trc_pkt_lister (see
 * ete_decode.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ete_decode.h"

#ifndef ARRAY_SIZE	/* as in kselftest.h, which this file does without */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* mkdtemp() template of the snapshot directory, under $TMPDIR or /tmp. */
#define ETE_DIR_TEMPLATE "%s/ete_decode.XXXXXX"

static int ete_read_reg(const char *cpu_dir, const char *name, uint32_t *val)
{
	char path[256];
	unsigned long v;
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/%s", cpu_dir, name);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	/* The driver prints "0x%x". */
	if (fscanf(f, "%lx", &v) == 1)
		*val = v;
	else
		ret = -EINVAL;
	fclose(f);
	return ret;
}

/*
 * ete_regs_read() - the ETE registers of one CPU
 * @cpu_dir: its trace unit in sysfs (ETE_SYSFS_CPU_FMT)
 * @trcconfigr: TRCCONFIGR of the session
 * @regs: filled in
 *
 * The ID registers come from sysfs (coresight-etm4x-sysfs.c: trcidr/ and
 * mgmt/).  TRCCONFIGR does not: mgmt/trcconfig reads the live register,
 * which says nothing once the session is over, so like perf the caller
 * derives it from the event's options.  Nor does the trace ID (reading
 * mgmt/trctraceid allocates one): a raw stream has a single source and no
 * IDs in it, so perf's legacy ID of CPU 0 serves as the label.
 *
 * Return: 0, or -errno of the first register that cannot be read.
 */
int ete_regs_read(const char *cpu_dir, uint32_t trcconfigr,
		  struct ete_regs *regs)
{
	const struct {
		const char *name;
		uint32_t *val;
	} from_sysfs[] = {
		{ "trcidr/trcidr0", &regs->trcidr0 },
		{ "trcidr/trcidr1", &regs->trcidr1 },
		{ "trcidr/trcidr2", &regs->trcidr2 },
		{ "trcidr/trcidr8", &regs->trcidr8 },
		{ "mgmt/trcdevarch", &regs->trcdevarch },
		{ "mgmt/trcauthstatus", &regs->trcauthstatus },
	};
	size_t i;
	int ret = 0;

	memset(regs, 0, sizeof(*regs));
	for (i = 0; !ret && i < ARRAY_SIZE(from_sysfs); i++)
		ret = ete_read_reg(cpu_dir, from_sysfs[i].name, from_sysfs[i].val);
	regs->trcconfigr = trcconfigr;
	regs->trctraceidr = 0x10;
	return ret;
}

/*
 * The trc_pkt_lister to run: $TRC_PKT_LISTER if set (the host tests point
 * it elsewhere), else the first in $PATH, else /usr/bin, which a minimal
 * test environment may leave out of $PATH.  Returns 0 when found.
 */
int ete_lister_find(char *path, size_t size)
{
	const char *env = getenv("TRC_PKT_LISTER");
	const char *dir = getenv("PATH");
	size_t n;

	if (env) {
		snprintf(path, size, "%s", env);
		return access(path, X_OK) ? -ENOENT : 0;
	}
	while (dir && *dir) {
		n = strcspn(dir, ":");
		snprintf(path, size, "%.*s/trc_pkt_lister", (int)n, dir);
		if (n && !access(path, X_OK))
			return 0;
		dir += n + (dir[n] == ':');
	}
	snprintf(path, size, "/usr/bin/trc_pkt_lister");
	return access(path, X_OK) ? -ENOENT : 0;
}

static int ete_write_file(const char *dir, const char *name, const void *data,
			  size_t len)
{
	char path[ETE_PATH_MAX];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	if (len && fwrite(data, len, 1, f) != 1)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -EIO;
	return ret;
}

static int ete_write_snapshot(const char *dir, const struct ete_regs *r,
			      const void *buf, size_t len)
{
	static const char snapshot[] =
		"[snapshot]\nversion=1.0\n\n"
		"[device_list]\ndevice0=cpu_0.ini\ndevice1=ete_0.ini\n\n"
		"[trace]\nmetadata=trace.ini\n";
	/*
	 * The decoder wants an architecture, not a CPU model: "ARMv9-A"
	 * (AArch64, A profile) fits any CPU with an ETE, and OpenCSD 1.3
	 * knows no Armv9 core by name.
	 */
	static const char cpu[] =
		"[device]\nname=cpu_0\nclass=core\ntype=ARMv9-A\n";
	static const char trace[] =
		"[trace_buffers]\nbuffers=buffer0\n\n"
		"[buffer0]\nname=trbe\nfile=trace.bin\nformat=source_data\n\n"
		"[source_buffers]\nete_0=trbe\n\n"
		"[core_trace_sources]\ncpu_0=ete_0\n";
	char ete[512];
	int n, ret;

	n = snprintf(ete, sizeof(ete),
		     "[device]\nname=ete_0\nclass=trace_source\ntype=ETE\n\n"
		     "[regs]\nTRCCONFIGR=0x%x\nTRCTRACEIDR=0x%x\n"
		     "TRCIDR0=0x%x\nTRCIDR1=0x%x\nTRCIDR2=0x%x\nTRCIDR8=0x%x\n"
		     "TRCDEVARCH=0x%x\nTRCAUTHSTATUS=0x%x\n",
		     r->trcconfigr, r->trctraceidr, r->trcidr0, r->trcidr1,
		     r->trcidr2, r->trcidr8, r->trcdevarch, r->trcauthstatus);
	ret = ete_write_file(dir, "snapshot.ini", snapshot, strlen(snapshot));
	if (!ret)
		ret = ete_write_file(dir, "cpu_0.ini", cpu, strlen(cpu));
	if (!ret)
		ret = ete_write_file(dir, "ete_0.ini", ete, n);
	if (!ret)
		ret = ete_write_file(dir, "trace.ini", trace, strlen(trace));
	if (!ret)
		ret = ete_write_file(dir, "trace.bin", buf, len);
	return ret;
}

/*
 * Runs @tool on the snapshot in @dir, its listing to listing.txt there.
 * -logfilename, as -logstdout also writes trc_pkt_lister.ppl in the working
 * directory (OpenCSD 1.3.3).  The time limit is an alarm() in the child,
 * which exec keeps: a stuck decoder dies of SIGALRM.
 */
static int ete_run_lister(const char *tool, const char *dir,
			  unsigned int timeout_s)
{
	char out[ETE_PATH_MAX];
	sigset_t all;
	int status, fd;
	pid_t pid;

	snprintf(out, sizeof(out), "%s/listing.txt", dir);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		fd = open("/dev/null", O_WRONLY);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		signal(SIGALRM, SIG_DFL);
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		alarm(timeout_s);
		/* Packet listing (no -decode), with the decoder's counts. */
		execl(tool, tool, "-ss_dir", dir, "-logfilename", out, "-stats",
		      (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		return -ETIMEDOUT;
	/* trc_pkt_lister exits 0 even for bad trace: the listing tells. */
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return -ECHILD;
	return 0;
}

static void ete_note_error(struct ete_decode_result *res, const char *line)
{
	if (!res->errors++)
		snprintf(res->error, sizeof(res->error), "%.*s",
			 (int)strcspn(line, "\n"), line);
}

/*
 * Reads a listing.  Packet lines are "Idx:<offset>; ID:<id>;\tI_<TYPE> : ...";
 * decoder errors are "<component> : 0x<code> (OCSD_ERR_<name>) ...".  Bad
 * packets are I_RESERVED (a header no ETE packet has, or none in this
 * configuration: I_RESERVED_CFG), I_BAD_SEQUENCE (e.g. a broken A-Sync)
 * and I_INCOMPLETE_EOT (the data ends inside a packet; accepted when @cut,
 * as a copy cut at a size or at a wrap ends anywhere).  I_NOT_SYNC covers
 * the bytes before the first A-Sync, such as TRBE's ignore padding: it is
 * no error, but not a packet either.
 */
static int ete_parse_listing(const char *dir, bool cut,
			     struct ete_decode_result *res)
{
	char path[ETE_PATH_MAX], *line = NULL;
	unsigned long done, hdr, seq;
	bool finished = false;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/listing.txt", dir);
	f = fopen(path, "r");
	if (!f) {
		ete_note_error(res, "trc_pkt_lister wrote no listing");
		return -EPROTO;
	}
	while (getline(&line, &cap, f) > 0) {
		if (strstr(line, "OCSD_ERR_")) {
			ete_note_error(res, line);
		} else if (!strncmp(line, "Idx:", 4)) {
			if (strstr(line, "\tI_NOT_SYNC"))
				continue;
			if (strstr(line, "\tI_RESERVED") ||
			    strstr(line, "\tI_BAD_SEQUENCE") ||
			    (!cut && strstr(line, "\tI_INCOMPLETE_EOT")))
				ete_note_error(res, line);
			else if (!strstr(line, "\tI_INCOMPLETE_EOT"))
				res->packets++;
		} else if (sscanf(line,
				  "Trace Packet Lister : Trace buffer done, processed %lu",
				  &done) == 1) {
			res->processed = done;
			finished = true;
		} else if (sscanf(line,
				  "Bad Header Errors: %lu; Bad Sequence Errors: %lu",
				  &hdr, &seq) == 2 && hdr + seq) {
			/* Counted by the packet processor, seen above too. */
			if (!res->errors)
				ete_note_error(res, line);
		}
	}
	free(line);
	fclose(f);
	if (!finished && !res->errors)
		ete_note_error(res, "trc_pkt_lister did not process the trace");
	return finished ? 0 : -EPROTO;
}

/*
 * ete_decode() - list the packets of a raw ETE stream with OpenCSD
 * @regs: the trace unit that wrote it (one: a raw stream has no trace IDs)
 * @buf: the stream, in order
 * @len: its length
 * @cut: the stream may end inside a packet
 * @timeout_s: time limit for trc_pkt_lister
 * @res: counts and the first error
 *
 * Works in a fresh directory under $TMPDIR or /tmp and removes it.
 *
 * Return: 0 when all @len bytes were listed with no bad packet and at least
 * one packet; ETE_DECODE_BAD when not (see @res->error); ETE_DECODE_NO_TOOL
 * when trc_pkt_lister is not installed; -errno when it could not be run, or
 * -ETIMEDOUT.
 */
int ete_decode(const struct ete_regs *regs, const void *buf, size_t len,
	       bool cut, unsigned int timeout_s, struct ete_decode_result *res)
{
	static const char * const files[] = {
		"snapshot.ini", "cpu_0.ini", "ete_0.ini", "trace.ini",
		"trace.bin", "listing.txt", NULL,
	};
	const char *tmp = getenv("TMPDIR");
	char tool[ETE_PATH_MAX], dir[ETE_DIR_MAX], path[ETE_PATH_MAX], msg[80];
	const char * const *f;
	int ret;

	memset(res, 0, sizeof(*res));
	if (ete_lister_find(tool, sizeof(tool)))
		return ETE_DECODE_NO_TOOL;
	if (snprintf(dir, sizeof(dir), ETE_DIR_TEMPLATE,
		     tmp && *tmp ? tmp : "/tmp") >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	if (!mkdtemp(dir))
		return -errno;

	ret = ete_write_snapshot(dir, regs, buf, len);
	if (!ret)
		ret = ete_run_lister(tool, dir, timeout_s);
	if (!ret)
		ret = ete_parse_listing(dir, cut, res);
	if (!ret && res->processed != len) {
		snprintf(msg, sizeof(msg), "decoder stopped after %zu of %zu bytes",
			 res->processed, len);
		ete_note_error(res, msg);
	}
	if (!ret && !res->packets)
		ete_note_error(res, "no ETE packet decoded");
	if (ret == -EPROTO)
		ret = 0;	/* the listing says why, in res->error */
	if (!ret && res->errors)
		ret = ETE_DECODE_BAD;

	for (f = files; *f; f++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *f);
		unlink(path);
	}
	if (rmdir(dir) && !ret)
		ret = -errno;
	return ret;
}
