/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Packet decode of a raw ETE stream (what TRBE writes) with OpenCSD's
 * trc_pkt_lister, when it is installed (Debian: libopencsd-bin).
 *
 * trace_check.c only finds A-Sync; this runs the ETE packet processor over
 * the whole stream, so a byte that the trace unit never wrote (a stale or
 * misplaced page under the large AUX mapping) shows as a reserved header or
 * a bad packet sequence.  There is no image of the traced program on the
 * board, so this lists packets (trc_pkt_lister's default) and does not
 * decode instructions.
 *
 * trc_pkt_lister reads a "snapshot" directory: snapshot.ini names the
 * devices and trace.ini, a core device gives the architecture, the trace
 * source device its registers, and trace.ini the buffer file.  TRBE output
 * carries no CoreSight frame formatter (PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW),
 * which a snapshot says with "format=source_data": one source, no trace IDs
 * in the data.  perf decodes such buffers the same way (OCSD_TRC_SRC_SINGLE).
 *
 * The code is in ete_decode.c, linked into hw_trace_test; it builds on the
 * host too.
 */
#ifndef PERF_AUX_ETE_DECODE_H
#define PERF_AUX_ETE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The trace unit of CPU N, as the cs_etm PMU links it. */
#define ETE_SYSFS_CPU_FMT "/sys/bus/event_source/devices/cs_etm/cpu%d"

/* ete_decode() results besides 0 (clean) and -errno (could not run). */
#define ETE_DECODE_BAD		1	/* bad packets, or none at all */
#define ETE_DECODE_NO_TOOL	2	/* trc_pkt_lister is not installed */

/* Paths: the snapshot directory and the files in it. */
#define ETE_DIR_MAX	256
#define ETE_PATH_MAX	(ETE_DIR_MAX + 32)

/*
 * The registers OpenCSD's ETE decoder reads: those perf records for an ETE
 * (tools/perf/arch/arm/util/cs-etm.c) under the snapshot key names.
 */
struct ete_regs {
	uint32_t trcidr0, trcidr1, trcidr2, trcidr8;
	uint32_t trcdevarch, trcauthstatus;
	uint32_t trcconfigr, trctraceidr;
};

struct ete_decode_result {
	size_t packets;		/* well-formed packets after the first A-Sync */
	size_t errors;		/* bad packets and decoder error messages */
	size_t processed;	/* bytes the decoder reported done */
	char error[160];	/* the first error line, or why there was none */
};

int ete_regs_read(const char *cpu_dir, uint32_t trcconfigr,
		  struct ete_regs *regs);
int ete_lister_find(char *path, size_t size);
int ete_decode(const struct ete_regs *regs, const void *buf, size_t len,
	       bool cut, unsigned int timeout_s, struct ete_decode_result *res);

#endif /* PERF_AUX_ETE_DECODE_H */
