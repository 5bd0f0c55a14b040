// SPDX-License-Identifier: GPL-2.0
/*
 * Host driver for tools/testing/selftests/perf_aux/trace_check.c, built and
 * run by scripts/tests/test_trace_check.py:
 *
 *	trace_check_host spe|spe-partial|ete FILE
 *
 * reads FILE (raw trace bytes), runs the checker and prints one line of
 * key=value pairs. Exit status: 0 valid, 1 invalid, 2 usage or I/O error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_check.h"

#define MAX_TRACE	(1024 * 1024)

/*
 * The SPE alignment packet is relative to the address of the data, as it is
 * in the AUX mapping; a page-aligned buffer makes file offsets those
 * addresses.
 */
static int read_trace(const char *path, unsigned char **trace, size_t *len)
{
	FILE *f;

	if (posix_memalign((void **)trace, 4096, MAX_TRACE)) {
		fprintf(stderr, "out of memory\n");
		return -1;
	}
	f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	*len = fread(*trace, 1, MAX_TRACE, f);
	if (ferror(f) || !feof(f)) {
		fprintf(stderr, "%s: read error or larger than %d bytes\n",
			path, MAX_TRACE);
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	struct trace_check res;
	unsigned char *trace;
	size_t len;
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: %s spe|spe-partial|ete FILE\n", argv[0]);
		return 2;
	}
	if (read_trace(argv[2], &trace, &len))
		return 2;

	if (!strcmp(argv[1], "spe")) {
		ret = spe_check_stream(trace, len, false, &res);
	} else if (!strcmp(argv[1], "spe-partial")) {
		ret = spe_check_stream(trace, len, true, &res);
	} else if (!strcmp(argv[1], "ete")) {
		ret = ete_count_async(trace, len, &res);
	} else {
		fprintf(stderr, "unknown checker %s\n", argv[1]);
		return 2;
	}

	printf("ret=%d records=%zu packets=%zu pad_bytes=%zu async=%zu bad_offset=%zu error=%s\n",
	       ret, res.records, res.packets, res.pad_bytes, res.async,
	       res.bad_offset, res.error ? res.error : "none");
	return ret ? 1 : 0;
}
