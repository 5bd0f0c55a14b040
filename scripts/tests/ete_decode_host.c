// SPDX-License-Identifier: GPL-2.0
/*
 * Host driver for tools/testing/selftests/perf_aux/ete_decode.c, built and
 * run by scripts/tests/test_ete_decode.py:
 *
 *	ete_decode_host regs CPU_DIR
 *	ete_decode_host decode CPU_DIR FILE [cut] [TIMEOUT_S]
 *
 * CPU_DIR is laid out as /sys/bus/event_source/devices/cs_etm/cpuN (the
 * tests build one); "regs" prints the registers read from it, "decode" runs
 * ete_decode() on FILE (raw ETE bytes) with them.  One line of key=value
 * pairs on stdout; exit status 0 clean, 1 bad trace or not installed,
 * 2 usage, I/O or run error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ete_decode.h"

#define MAX_TRACE	(4 * 1024 * 1024)

/* TRCCONFIGR of the tests' streams: no cycle counts, no timestamps. */
#define HOST_TRCCONFIGR	0

static int cmd_regs(const char *cpu_dir)
{
	struct ete_regs r;
	int ret = ete_regs_read(cpu_dir, HOST_TRCCONFIGR, &r);

	printf("ret=%d trcidr0=0x%x trcidr1=0x%x trcidr2=0x%x trcidr8=0x%x",
	       ret, r.trcidr0, r.trcidr1, r.trcidr2, r.trcidr8);
	printf(" trcdevarch=0x%x trcauthstatus=0x%x trcconfigr=0x%x trctraceidr=0x%x\n",
	       r.trcdevarch, r.trcauthstatus, r.trcconfigr, r.trctraceidr);
	return ret ? 1 : 0;
}

static int cmd_decode(const char *cpu_dir, const char *file, bool cut,
		      unsigned int timeout_s)
{
	struct ete_decode_result res;
	struct ete_regs r;
	static unsigned char trace[MAX_TRACE];
	size_t len;
	FILE *f;
	int ret;

	if (ete_regs_read(cpu_dir, HOST_TRCCONFIGR, &r)) {
		fprintf(stderr, "%s: no ETE registers\n", cpu_dir);
		return 2;
	}
	f = fopen(file, "rb");
	if (!f) {
		perror(file);
		return 2;
	}
	len = fread(trace, 1, sizeof(trace), f);
	fclose(f);

	ret = ete_decode(&r, trace, len, cut, timeout_s, &res);
	printf("ret=%d packets=%zu errors=%zu processed=%zu error=%s\n",
	       ret, res.packets, res.errors, res.processed,
	       res.error[0] ? res.error : "none");
	if (ret < 0)
		return 2;
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "regs"))
		return cmd_regs(argv[2]);
	if (argc >= 4 && argc <= 6 && !strcmp(argv[1], "decode"))
		return cmd_decode(argv[2], argv[3],
				  argc > 4 && !strcmp(argv[4], "cut"),
				  argc > 5 ? atoi(argv[5]) : 60);
	fprintf(stderr, "usage: %s regs CPU_DIR | decode CPU_DIR FILE [cut|whole] [TIMEOUT_S]\n",
		argv[0]);
	return 2;
}
