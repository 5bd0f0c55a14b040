// SPDX-License-Identifier: GPL-2.0
/*
 * Stream checkers for the trace that Arm SPE and TRBE write into a perf AUX
 * buffer (see trace_check.h).
 */
#include <string.h>

#include "trace_check.h"

static size_t tc_spe_payload_len(uint8_t hdr)
{
	return (size_t)1 << ((hdr >> 4) & 0x3);
}

static bool tc_spe_is_addr_or_counter(uint8_t hdr)
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
static enum tc_spe_class tc_spe_classify(const uint8_t *p, size_t avail,
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

static int tc_fail(struct trace_check *res, size_t offset, const char *error)
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
 * inside one: recorded SPE data pads before the TIMESTAMP of a record.  A
 * record cut short by the end of the buffer is accepted only when @partial
 * is set: data was lost, or the buffer filled, in the middle of a record.
 *
 * Return: 0 when the stream is valid, -1 otherwise (see @res->error).
 */
int spe_check_stream(const uint8_t *buf, size_t len, bool partial,
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
int ete_count_async(const uint8_t *buf, size_t len, struct trace_check *res)
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
