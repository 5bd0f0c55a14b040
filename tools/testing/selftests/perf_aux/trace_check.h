/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stream checkers for the trace that Arm SPE and TRBE write into a perf AUX
 * buffer. A large vmap() of the AUX pages changes only the translation the
 * trace unit uses to write, so whatever it writes must still parse: these
 * checkers say whether the bytes of one PERF_RECORD_AUX do.
 *
 * Plain C (no libc beyond <string.h>) so that any selftest can link
 * trace_check.c, and so can tests built for the host.
 */
#ifndef PERF_AUX_TRACE_CHECK_H
#define PERF_AUX_TRACE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trace_check {
	size_t records;		/* SPE: complete records seen */
	size_t packets;		/* SPE: packets parsed, padding not included */
	size_t pad_bytes;	/* SPE: padding bytes; TRBE: 0x70 ignore bytes not counted here */
	size_t async;		/* TRBE/ETE: A-Sync packets found */
	size_t bad_offset;	/* offset of the first error */
	const char *error;	/* NULL when the stream is valid */
};

/*
 * SPE packet headers. Values from the Arm ARM SPE packet formats, the same
 * as tools/perf/util/arm-spe-decoder/arm-spe-pkt-decoder.h. A short header
 * is one byte; the extended header is 0b001000xx followed by a second
 * header byte, and only address and counter packets have that form.
 */
#define TC_SPE_PAD		0x00
#define TC_SPE_END		0x01
#define TC_SPE_TIMESTAMP	0x71
#define TC_SPE_EVENTS		0x42	/* under TC_SPE_MASK_SZ */
#define TC_SPE_DATA_SOURCE	0x43	/* under TC_SPE_MASK_SZ */
#define TC_SPE_CONTEXT		0x64	/* under TC_SPE_MASK_IDX2 */
#define TC_SPE_OP_TYPE		0x48	/* under TC_SPE_MASK_IDX2 */
#define TC_SPE_EXTENDED		0x20	/* under TC_SPE_MASK_IDX2 */
#define TC_SPE_ADDRESS		0xb0	/* under TC_SPE_MASK_IDX3 */
#define TC_SPE_COUNTER		0x98	/* under TC_SPE_MASK_IDX3 */
#define TC_SPE_ALIGNMENT	0x00	/* second byte of an extended header */
#define TC_SPE_MASK_SZ		0xcf	/* size in bits [5:4] */
#define TC_SPE_MASK_IDX2	0xfc	/* index in bits [1:0] */
#define TC_SPE_MASK_IDX3	0xf8	/* index in bits [2:0] */

/* ETE/ETMv4 A-Sync: TC_ETE_ASYNC_ZEROS bytes of 0x00, then 0x80. */
#define TC_ETE_ASYNC_ZEROS	11
#define TC_ETE_ASYNC_END	0x80

enum tc_spe_class {
	TC_SPE_BAD,
	TC_SPE_IS_PAD,		/* 0x00, or the extended alignment packet */
	TC_SPE_IS_END,		/* END or TIMESTAMP: the last packet of a record */
	TC_SPE_IS_DATA,		/* any other packet of a record */
};

int spe_check_stream(const uint8_t *buf, size_t len, bool partial,
		     struct trace_check *res);
int ete_count_async(const uint8_t *buf, size_t len, struct trace_check *res);

#endif /* PERF_AUX_TRACE_CHECK_H */
