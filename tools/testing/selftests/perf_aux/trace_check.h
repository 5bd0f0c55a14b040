/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stream checkers for the trace that Arm SPE and TRBE write into a perf AUX
 * buffer. A large vmap() of the AUX pages changes only the translation the
 * trace unit uses to write, so whatever it writes must still parse: these
 * checkers say whether the bytes of one PERF_RECORD_AUX do.
 *
 * Header only and plain C (no libc beyond <string.h>) so that any selftest
 * can include it, and so can the host tests in scripts/tests/.
 */
#ifndef PERF_AUX_TRACE_CHECK_H
#define PERF_AUX_TRACE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

static inline size_t tc_spe_payload_len(uint8_t hdr)
{
	return (size_t)1 << ((hdr >> 4) & 0x3);
}

static inline bool tc_spe_is_addr_or_counter(uint8_t hdr)
{
	return (hdr & TC_SPE_MASK_IDX3) == TC_SPE_ADDRESS ||
	       (hdr & TC_SPE_MASK_IDX3) == TC_SPE_COUNTER;
}

/*
 * Classify the packet at @p and store its length in @len, which may exceed
 * @avail (the bytes left): the caller decides what a truncated packet means.
 *
 * The extended alignment packet pads up to the next multiple of 2 << (h0 & 3)
 * bytes of the address, as perf's decoder does. That is the address in the
 * AUX buffer only if @p points into the AUX mapping or into a copy placed at
 * the same offset modulo 16, so pass the buffer that way.
 *
 * A header byte that matches no packet class is malformed: nothing that
 * architecture or perf define can follow it, so the stream cannot be
 * resynchronised and the checker stops there instead of guessing a length.
 */
static inline enum tc_spe_class tc_spe_classify(const uint8_t *p, size_t avail,
						size_t *len)
{
	uint8_t h0 = p[0];
	size_t align;

	if (h0 == TC_SPE_PAD) {
		*len = 1;
		return TC_SPE_IS_PAD;
	}
	if (h0 == TC_SPE_END) {
		*len = 1;
		return TC_SPE_IS_END;
	}
	if (h0 == TC_SPE_TIMESTAMP) {
		*len = 1 + tc_spe_payload_len(h0);
		return TC_SPE_IS_END;
	}
	if ((h0 & TC_SPE_MASK_SZ) == TC_SPE_EVENTS ||
	    (h0 & TC_SPE_MASK_SZ) == TC_SPE_DATA_SOURCE ||
	    (h0 & TC_SPE_MASK_IDX2) == TC_SPE_CONTEXT ||
	    (h0 & TC_SPE_MASK_IDX2) == TC_SPE_OP_TYPE ||
	    tc_spe_is_addr_or_counter(h0)) {
		*len = 1 + tc_spe_payload_len(h0);
		return TC_SPE_IS_DATA;
	}
	if ((h0 & TC_SPE_MASK_IDX2) != TC_SPE_EXTENDED)
		return TC_SPE_BAD;

	/* Extended header: its second byte says what follows. */
	if (avail < 2) {
		*len = 2;
		return TC_SPE_IS_DATA;
	}
	if (p[1] == TC_SPE_ALIGNMENT) {
		align = (size_t)2 << (h0 & 0x3);
		*len = align - ((uintptr_t)p & (align - 1));
		return TC_SPE_IS_PAD;
	}
	if (tc_spe_is_addr_or_counter(p[1])) {
		*len = 2 + tc_spe_payload_len(p[1]);
		return TC_SPE_IS_DATA;
	}
	return TC_SPE_BAD;
}

static inline int tc_fail(struct trace_check *res, size_t offset,
			  const char *error)
{
	res->bad_offset = offset;
	res->error = error;
	return -1;
}

/*
 * spe_check_stream() - check the bytes one PERF_RECORD_AUX reported for SPE
 * @buf: the data, in the AUX mapping or a copy aligned as it (see above)
 * @len: its length
 * @partial: the record carried PERF_AUX_FLAG_PARTIAL or _TRUNCATED
 * @res: counts, and the first error
 *
 * The stream must be whole records, each ending with END or TIMESTAMP.
 * Padding (0x00 or an alignment packet) may come between records and also
 * inside one: recorded SPE data pads before the TIMESTAMP of a record
 * (scripts/tests/test_data/trace/). A record cut short by the end of the
 * buffer is accepted only when @partial is set: data was lost, or the buffer
 * filled, in the middle of a record.
 *
 * Return: 0 when the stream is valid, -1 otherwise (see @res->error).
 */
static inline int spe_check_stream(const uint8_t *buf, size_t len, bool partial,
				   struct trace_check *res)
{
	size_t record_start = 0;
	bool in_record = false;
	size_t off = 0;
	size_t pkt_len;

	memset(res, 0, sizeof(*res));
	while (off < len) {
		enum tc_spe_class kind = tc_spe_classify(buf + off, len - off,
							 &pkt_len);

		if (kind == TC_SPE_BAD)
			return tc_fail(res, off, "unknown SPE packet header");
		if (pkt_len > len - off) {
			if (partial)
				return 0;
			return tc_fail(res, off, "truncated SPE packet");
		}
		switch (kind) {
		case TC_SPE_IS_PAD:
			res->pad_bytes += pkt_len;
			break;
		case TC_SPE_IS_END:
			res->packets++;
			res->records++;
			in_record = false;
			break;
		default:
			if (!in_record)
				record_start = off;
			in_record = true;
			res->packets++;
			break;
		}
		off += pkt_len;
	}
	if (in_record && !partial)
		return tc_fail(res, record_start, "SPE record not terminated");
	return 0;
}

/*
 * ete_count_async() - count the A-Sync packets of a raw ETE stream from TRBE
 * @buf: the data of PERF_RECORD_AUX records with
 *	 PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW (TRBE has no formatter frames)
 * @len: its length
 * @res: @res->async is the count
 *
 * A-Sync is eleven 0x00 bytes and 0x80. The zeros may follow zero bytes of
 * the previous packet's payload, so any run of at least eleven counts. A
 * decoder cannot start without an A-Sync, and the trace unit emits one when
 * tracing starts and periodically after that, so give this a whole session
 * rather than one small record.
 *
 * Return: 0 when @buf is empty or holds an A-Sync, -1 otherwise.
 */
static inline int ete_count_async(const uint8_t *buf, size_t len,
				  struct trace_check *res)
{
	size_t zeros = 0;
	size_t i;

	memset(res, 0, sizeof(*res));
	for (i = 0; i < len; i++) {
		if (buf[i] == 0x00) {
			zeros++;
			continue;
		}
		if (buf[i] == TC_ETE_ASYNC_END && zeros >= TC_ETE_ASYNC_ZEROS)
			res->async++;
		zeros = 0;
	}
	if (len && !res->async)
		return tc_fail(res, 0, "no ETE A-Sync packet");
	return 0;
}

#endif /* PERF_AUX_TRACE_CHECK_H */
