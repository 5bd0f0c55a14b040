/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What rb_alloc_aux() must give, for the perf_aux_alloc KUnit suite
 * (ring_buffer_kunit.c): the chunk orders of every order case and the
 * order-by-order fallback of every fallback case, as literal tables
 * written from the rule, kept apart from the code that checks them so that
 * the rule can be reviewed on its own.
 */
#ifndef _KERNEL_EVENTS_RING_BUFFER_KUNIT_ORDERS_H
#define _KERNEL_EVENTS_RING_BUFFER_KUNIT_ORDERS_H

#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/mmzone.h>
#include <linux/perf_event.h>

/* The watermarks of normal mode: perf's default (0), a page, half, all. */
enum aux_wm { WM_DEFAULT, WM_PAGE, WM_HALF, WM_WHOLE, NR_WM };

/*
 * The chunk orders of every order case, written down from the rule as
 * commit 18049c8cff9c ("perf/aux: Allocate non-contiguous AUX pages by
 * default") states it, not computed: order 0 unless the PMU has
 * PERF_PMU_CAP_AUX_PREFER_LARGE or _AUX_NO_SG; otherwise chunks no larger
 * than get_order(watermark) in normal mode (the watermark defaults to half
 * the buffer) and than the buffer in snapshot mode, none above
 * MAX_PAGE_ORDER; a NO_SG snapshot buffer is one chunk or -ENOMEM.
 *
 * Sizes and orders are in pages and orders of the running kernel: MP(d)
 * is 2^(MAX_PAGE_ORDER + d) pages, MO(d) the order MAX_PAGE_ORDER + d.
 * RUN(p, o): p pages in chunks of order o; DOWN(o): one chunk of each
 * order from o down to 0.  A fixed size's order that may exceed
 * MAX_PAGE_ORDER on some kernel is written MIN(order, MAX_PAGE_ORDER).
 *
 * perf_mmap() takes power-of-two AUX sizes only; the two that are not
 * (max_minus1, max_plus1) cannot be one chunk, and rb_alloc_aux() lets a
 * NO_SG snapshot buffer through when its first chunk is of order
 * ilog2(nr_pages): their NO_SG snapshot rows say 0, the weaker rule.
 */
#define MO(d)		(MAX_PAGE_ORDER + (d))
#define MP(d)		(1 << MO(d))
#define AUX_DOWN	(-1)
#define RUN(p, o)	{ .pages = (p), .order = (o) }
#define DOWN(o)		{ .pages = AUX_DOWN, .order = (o) }
/* A NO_SG snapshot buffer of 2^o pages: one chunk, if the order exists. */
#define NOSG_RET(o)	((o) > MAX_PAGE_ORDER ? -ENOMEM : 0)

#define AUX_PAGES_1p		1
#define AUX_PAGES_2p		2
#define AUX_PAGES_16p		16
#define AUX_PAGES_512p		512
#define AUX_PAGES_1024p		1024
#define AUX_PAGES_2048p		2048
#define AUX_PAGES_max_half	MP(-1)
#define AUX_PAGES_max_minus1	(MP(0) - 1)
#define AUX_PAGES_max		MP(0)
#define AUX_PAGES_max_plus1	(MP(0) + 1)
#define AUX_PAGES_max_twice	MP(1)

#define AUX_CAPS_none		0
#define AUX_CAPS_large		PERF_PMU_CAP_AUX_PREFER_LARGE
#define AUX_CAPS_nosg		PERF_PMU_CAP_AUX_NO_SG
#define AUX_CAPS_large_nosg	(PERF_PMU_CAP_AUX_NO_SG | \
				 PERF_PMU_CAP_AUX_PREFER_LARGE)

#define AUX_RW(caps, size, wm, ...)					\
	{ #caps "_rw_" #size "_" #wm, AUX_CAPS_##caps, false,		\
	  AUX_PAGES_##size, WM_##wm, 0, { __VA_ARGS__ } }
#define AUX_SNAP(caps, size, ret, ...)					\
	{ #caps "_snapshot_" #size, AUX_CAPS_##caps, true,		\
	  AUX_PAGES_##size, WM_wm_default, ret, { __VA_ARGS__ } }

/* The watermark names of the rows, as the order cases spell them. */
#define WM_wm_default	WM_DEFAULT
#define WM_wm_page	WM_PAGE
#define WM_wm_half	WM_HALF
#define WM_wm_whole	WM_WHOLE

struct aux_run {
	int pages;		/* AUX_DOWN: see DOWN() */
	int order;
};

struct aux_table_row {
	const char *name;
	unsigned int caps;
	bool overwrite;
	int nr_pages;
	enum aux_wm wm;
	int ret;
	struct aux_run runs[2];	/* .pages 0 ends them */
};

static const struct aux_table_row aux_table[] = {
	AUX_RW(none, 1p, wm_default, RUN(1, 0)),
	AUX_RW(none, 1p, wm_page, RUN(1, 0)),
	AUX_RW(none, 1p, wm_half, RUN(1, 0)),
	AUX_RW(none, 1p, wm_whole, RUN(1, 0)),
	AUX_SNAP(none, 1p, 0, RUN(1, 0)),
	AUX_RW(none, 2p, wm_default, RUN(2, 0)),
	AUX_RW(none, 2p, wm_page, RUN(2, 0)),
	AUX_RW(none, 2p, wm_half, RUN(2, 0)),
	AUX_RW(none, 2p, wm_whole, RUN(2, 0)),
	AUX_SNAP(none, 2p, 0, RUN(2, 0)),
	AUX_RW(none, 16p, wm_default, RUN(16, 0)),
	AUX_RW(none, 16p, wm_page, RUN(16, 0)),
	AUX_RW(none, 16p, wm_half, RUN(16, 0)),
	AUX_RW(none, 16p, wm_whole, RUN(16, 0)),
	AUX_SNAP(none, 16p, 0, RUN(16, 0)),
	AUX_RW(none, 512p, wm_default, RUN(512, 0)),
	AUX_RW(none, 512p, wm_page, RUN(512, 0)),
	AUX_RW(none, 512p, wm_half, RUN(512, 0)),
	AUX_RW(none, 512p, wm_whole, RUN(512, 0)),
	AUX_SNAP(none, 512p, 0, RUN(512, 0)),
	AUX_RW(none, 1024p, wm_default, RUN(1024, 0)),
	AUX_RW(none, 1024p, wm_page, RUN(1024, 0)),
	AUX_RW(none, 1024p, wm_half, RUN(1024, 0)),
	AUX_RW(none, 1024p, wm_whole, RUN(1024, 0)),
	AUX_SNAP(none, 1024p, 0, RUN(1024, 0)),
	AUX_RW(none, 2048p, wm_default, RUN(2048, 0)),
	AUX_RW(none, 2048p, wm_page, RUN(2048, 0)),
	AUX_RW(none, 2048p, wm_half, RUN(2048, 0)),
	AUX_RW(none, 2048p, wm_whole, RUN(2048, 0)),
	AUX_SNAP(none, 2048p, 0, RUN(2048, 0)),
	AUX_RW(none, max_half, wm_default, RUN(MP(-1), 0)),
	AUX_RW(none, max_half, wm_page, RUN(MP(-1), 0)),
	AUX_RW(none, max_half, wm_half, RUN(MP(-1), 0)),
	AUX_RW(none, max_half, wm_whole, RUN(MP(-1), 0)),
	AUX_SNAP(none, max_half, 0, RUN(MP(-1), 0)),
	AUX_RW(none, max_minus1, wm_default, RUN(MP(0) - 1, 0)),
	AUX_RW(none, max_minus1, wm_page, RUN(MP(0) - 1, 0)),
	AUX_RW(none, max_minus1, wm_half, RUN(MP(0) - 1, 0)),
	AUX_RW(none, max_minus1, wm_whole, RUN(MP(0) - 1, 0)),
	AUX_SNAP(none, max_minus1, 0, RUN(MP(0) - 1, 0)),
	AUX_RW(none, max, wm_default, RUN(MP(0), 0)),
	AUX_RW(none, max, wm_page, RUN(MP(0), 0)),
	AUX_RW(none, max, wm_half, RUN(MP(0), 0)),
	AUX_RW(none, max, wm_whole, RUN(MP(0), 0)),
	AUX_SNAP(none, max, 0, RUN(MP(0), 0)),
	AUX_RW(none, max_plus1, wm_default, RUN(MP(0) + 1, 0)),
	AUX_RW(none, max_plus1, wm_page, RUN(MP(0) + 1, 0)),
	AUX_RW(none, max_plus1, wm_half, RUN(MP(0) + 1, 0)),
	AUX_RW(none, max_plus1, wm_whole, RUN(MP(0) + 1, 0)),
	AUX_SNAP(none, max_plus1, 0, RUN(MP(0) + 1, 0)),
	AUX_RW(none, max_twice, wm_default, RUN(MP(1), 0)),
	AUX_RW(none, max_twice, wm_page, RUN(MP(1), 0)),
	AUX_RW(none, max_twice, wm_half, RUN(MP(1), 0)),
	AUX_RW(none, max_twice, wm_whole, RUN(MP(1), 0)),
	AUX_SNAP(none, max_twice, 0, RUN(MP(1), 0)),
	AUX_RW(large, 1p, wm_default, RUN(1, 0)),
	AUX_RW(large, 1p, wm_page, RUN(1, 0)),
	AUX_RW(large, 1p, wm_half, RUN(1, 0)),
	AUX_RW(large, 1p, wm_whole, RUN(1, 0)),
	AUX_SNAP(large, 1p, 0, RUN(1, 0)),
	AUX_RW(large, 2p, wm_default, RUN(2, 0)),
	AUX_RW(large, 2p, wm_page, RUN(2, 0)),
	AUX_RW(large, 2p, wm_half, RUN(2, 0)),
	AUX_RW(large, 2p, wm_whole, RUN(2, 1)),
	AUX_SNAP(large, 2p, 0, RUN(2, 1)),
	AUX_RW(large, 16p, wm_default, RUN(16, 3)),
	AUX_RW(large, 16p, wm_page, RUN(16, 0)),
	AUX_RW(large, 16p, wm_half, RUN(16, 3)),
	AUX_RW(large, 16p, wm_whole, RUN(16, 4)),
	AUX_SNAP(large, 16p, 0, RUN(16, 4)),
	AUX_RW(large, 512p, wm_default, RUN(512, MIN(8, MAX_PAGE_ORDER))),
	AUX_RW(large, 512p, wm_page, RUN(512, 0)),
	AUX_RW(large, 512p, wm_half, RUN(512, MIN(8, MAX_PAGE_ORDER))),
	AUX_RW(large, 512p, wm_whole, RUN(512, MIN(9, MAX_PAGE_ORDER))),
	AUX_SNAP(large, 512p, 0, RUN(512, MIN(9, MAX_PAGE_ORDER))),
	AUX_RW(large, 1024p, wm_default, RUN(1024, MIN(9, MAX_PAGE_ORDER))),
	AUX_RW(large, 1024p, wm_page, RUN(1024, 0)),
	AUX_RW(large, 1024p, wm_half, RUN(1024, MIN(9, MAX_PAGE_ORDER))),
	AUX_RW(large, 1024p, wm_whole, RUN(1024, MIN(10, MAX_PAGE_ORDER))),
	AUX_SNAP(large, 1024p, 0, RUN(1024, MIN(10, MAX_PAGE_ORDER))),
	AUX_RW(large, 2048p, wm_default, RUN(2048, MIN(10, MAX_PAGE_ORDER))),
	AUX_RW(large, 2048p, wm_page, RUN(2048, 0)),
	AUX_RW(large, 2048p, wm_half, RUN(2048, MIN(10, MAX_PAGE_ORDER))),
	AUX_RW(large, 2048p, wm_whole, RUN(2048, MIN(11, MAX_PAGE_ORDER))),
	AUX_SNAP(large, 2048p, 0, RUN(2048, MIN(11, MAX_PAGE_ORDER))),
	AUX_RW(large, max_half, wm_default, RUN(MP(-1), MO(-2))),
	AUX_RW(large, max_half, wm_page, RUN(MP(-1), 0)),
	AUX_RW(large, max_half, wm_half, RUN(MP(-1), MO(-2))),
	AUX_RW(large, max_half, wm_whole, RUN(MP(-1), MO(-1))),
	AUX_SNAP(large, max_half, 0, RUN(MP(-1), MO(-1))),
	AUX_RW(large, max_minus1, wm_default, DOWN(MO(-1))),
	AUX_RW(large, max_minus1, wm_page, RUN(MP(0) - 1, 0)),
	AUX_RW(large, max_minus1, wm_half, DOWN(MO(-1))),
	AUX_RW(large, max_minus1, wm_whole, DOWN(MO(-1))),
	AUX_SNAP(large, max_minus1, 0, DOWN(MO(-1))),
	AUX_RW(large, max, wm_default, RUN(MP(0), MO(-1))),
	AUX_RW(large, max, wm_page, RUN(MP(0), 0)),
	AUX_RW(large, max, wm_half, RUN(MP(0), MO(-1))),
	AUX_RW(large, max, wm_whole, RUN(MP(0), MO(0))),
	AUX_SNAP(large, max, 0, RUN(MP(0), MO(0))),
	AUX_RW(large, max_plus1, wm_default, RUN(MP(0), MO(0)), RUN(1, 0)),
	AUX_RW(large, max_plus1, wm_page, RUN(MP(0) + 1, 0)),
	AUX_RW(large, max_plus1, wm_half, RUN(MP(0), MO(0)), RUN(1, 0)),
	AUX_RW(large, max_plus1, wm_whole, RUN(MP(0), MO(0)), RUN(1, 0)),
	AUX_SNAP(large, max_plus1, 0, RUN(MP(0), MO(0)), RUN(1, 0)),
	AUX_RW(large, max_twice, wm_default, RUN(MP(1), MO(0))),
	AUX_RW(large, max_twice, wm_page, RUN(MP(1), 0)),
	AUX_RW(large, max_twice, wm_half, RUN(MP(1), MO(0))),
	AUX_RW(large, max_twice, wm_whole, RUN(MP(1), MO(0))),
	AUX_SNAP(large, max_twice, 0, RUN(MP(1), MO(0))),
	AUX_RW(nosg, 1p, wm_default, RUN(1, 0)),
	AUX_RW(nosg, 1p, wm_page, RUN(1, 0)),
	AUX_RW(nosg, 1p, wm_half, RUN(1, 0)),
	AUX_RW(nosg, 1p, wm_whole, RUN(1, 0)),
	AUX_SNAP(nosg, 1p, 0, RUN(1, 0)),
	AUX_RW(nosg, 2p, wm_default, RUN(2, 0)),
	AUX_RW(nosg, 2p, wm_page, RUN(2, 0)),
	AUX_RW(nosg, 2p, wm_half, RUN(2, 0)),
	AUX_RW(nosg, 2p, wm_whole, RUN(2, 1)),
	AUX_SNAP(nosg, 2p, 0, RUN(2, 1)),
	AUX_RW(nosg, 16p, wm_default, RUN(16, 3)),
	AUX_RW(nosg, 16p, wm_page, RUN(16, 0)),
	AUX_RW(nosg, 16p, wm_half, RUN(16, 3)),
	AUX_RW(nosg, 16p, wm_whole, RUN(16, 4)),
	AUX_SNAP(nosg, 16p, 0, RUN(16, 4)),
	AUX_RW(nosg, 512p, wm_default, RUN(512, MIN(8, MAX_PAGE_ORDER))),
	AUX_RW(nosg, 512p, wm_page, RUN(512, 0)),
	AUX_RW(nosg, 512p, wm_half, RUN(512, MIN(8, MAX_PAGE_ORDER))),
	AUX_RW(nosg, 512p, wm_whole, RUN(512, MIN(9, MAX_PAGE_ORDER))),
	AUX_SNAP(nosg, 512p, NOSG_RET(9), RUN(512, MIN(9, MAX_PAGE_ORDER))),
	AUX_RW(nosg, 1024p, wm_default, RUN(1024, MIN(9, MAX_PAGE_ORDER))),
	AUX_RW(nosg, 1024p, wm_page, RUN(1024, 0)),
	AUX_RW(nosg, 1024p, wm_half, RUN(1024, MIN(9, MAX_PAGE_ORDER))),
	AUX_RW(nosg, 1024p, wm_whole, RUN(1024, MIN(10, MAX_PAGE_ORDER))),
	AUX_SNAP(nosg, 1024p, NOSG_RET(10), RUN(1024, MIN(10, MAX_PAGE_ORDER))),
	AUX_RW(nosg, 2048p, wm_default, RUN(2048, MIN(10, MAX_PAGE_ORDER))),
	AUX_RW(nosg, 2048p, wm_page, RUN(2048, 0)),
	AUX_RW(nosg, 2048p, wm_half, RUN(2048, MIN(10, MAX_PAGE_ORDER))),
	AUX_RW(nosg, 2048p, wm_whole, RUN(2048, MIN(11, MAX_PAGE_ORDER))),
	AUX_SNAP(nosg, 2048p, NOSG_RET(11), RUN(2048, MIN(11, MAX_PAGE_ORDER))),
	AUX_RW(nosg, max_half, wm_default, RUN(MP(-1), MO(-2))),
	AUX_RW(nosg, max_half, wm_page, RUN(MP(-1), 0)),
	AUX_RW(nosg, max_half, wm_half, RUN(MP(-1), MO(-2))),
	AUX_RW(nosg, max_half, wm_whole, RUN(MP(-1), MO(-1))),
	AUX_SNAP(nosg, max_half, 0, RUN(MP(-1), MO(-1))),
	AUX_RW(nosg, max_minus1, wm_default, DOWN(MO(-1))),
	AUX_RW(nosg, max_minus1, wm_page, RUN(MP(0) - 1, 0)),
	AUX_RW(nosg, max_minus1, wm_half, DOWN(MO(-1))),
	AUX_RW(nosg, max_minus1, wm_whole, DOWN(MO(-1))),
	AUX_SNAP(nosg, max_minus1, 0, DOWN(MO(-1))),
	AUX_RW(nosg, max, wm_default, RUN(MP(0), MO(-1))),
	AUX_RW(nosg, max, wm_page, RUN(MP(0), 0)),
	AUX_RW(nosg, max, wm_half, RUN(MP(0), MO(-1))),
	AUX_RW(nosg, max, wm_whole, RUN(MP(0), MO(0))),
	AUX_SNAP(nosg, max, 0, RUN(MP(0), MO(0))),
	AUX_RW(nosg, max_plus1, wm_default, RUN(MP(0), MO(0)), RUN(1, 0)),
	AUX_RW(nosg, max_plus1, wm_page, RUN(MP(0) + 1, 0)),
	AUX_RW(nosg, max_plus1, wm_half, RUN(MP(0), MO(0)), RUN(1, 0)),
	AUX_RW(nosg, max_plus1, wm_whole, RUN(MP(0), MO(0)), RUN(1, 0)),
	AUX_SNAP(nosg, max_plus1, 0, RUN(MP(0), MO(0)), RUN(1, 0)),
	AUX_RW(nosg, max_twice, wm_default, RUN(MP(1), MO(0))),
	AUX_RW(nosg, max_twice, wm_page, RUN(MP(1), 0)),
	AUX_RW(nosg, max_twice, wm_half, RUN(MP(1), MO(0))),
	AUX_RW(nosg, max_twice, wm_whole, RUN(MP(1), MO(0))),
	AUX_SNAP(nosg, max_twice, -ENOMEM, RUN(MP(1), MO(0))),
	AUX_RW(large_nosg, 1p, wm_default, RUN(1, 0)),
	AUX_RW(large_nosg, 1p, wm_page, RUN(1, 0)),
	AUX_RW(large_nosg, 1p, wm_half, RUN(1, 0)),
	AUX_RW(large_nosg, 1p, wm_whole, RUN(1, 0)),
	AUX_SNAP(large_nosg, 1p, 0, RUN(1, 0)),
	AUX_RW(large_nosg, 2p, wm_default, RUN(2, 0)),
	AUX_RW(large_nosg, 2p, wm_page, RUN(2, 0)),
	AUX_RW(large_nosg, 2p, wm_half, RUN(2, 0)),
	AUX_RW(large_nosg, 2p, wm_whole, RUN(2, 1)),
	AUX_SNAP(large_nosg, 2p, 0, RUN(2, 1)),
	AUX_RW(large_nosg, 16p, wm_default, RUN(16, 3)),
	AUX_RW(large_nosg, 16p, wm_page, RUN(16, 0)),
	AUX_RW(large_nosg, 16p, wm_half, RUN(16, 3)),
	AUX_RW(large_nosg, 16p, wm_whole, RUN(16, 4)),
	AUX_SNAP(large_nosg, 16p, 0, RUN(16, 4)),
	AUX_RW(large_nosg, 512p, wm_default, RUN(512, MIN(8, MAX_PAGE_ORDER))),
	AUX_RW(large_nosg, 512p, wm_page, RUN(512, 0)),
	AUX_RW(large_nosg, 512p, wm_half, RUN(512, MIN(8, MAX_PAGE_ORDER))),
	AUX_RW(large_nosg, 512p, wm_whole, RUN(512, MIN(9, MAX_PAGE_ORDER))),
	AUX_SNAP(large_nosg, 512p, NOSG_RET(9), RUN(512, MIN(9, MAX_PAGE_ORDER))),
	AUX_RW(large_nosg, 1024p, wm_default, RUN(1024, MIN(9, MAX_PAGE_ORDER))),
	AUX_RW(large_nosg, 1024p, wm_page, RUN(1024, 0)),
	AUX_RW(large_nosg, 1024p, wm_half, RUN(1024, MIN(9, MAX_PAGE_ORDER))),
	AUX_RW(large_nosg, 1024p, wm_whole, RUN(1024, MIN(10, MAX_PAGE_ORDER))),
	AUX_SNAP(large_nosg, 1024p, NOSG_RET(10), RUN(1024, MIN(10, MAX_PAGE_ORDER))),
	AUX_RW(large_nosg, 2048p, wm_default, RUN(2048, MIN(10, MAX_PAGE_ORDER))),
	AUX_RW(large_nosg, 2048p, wm_page, RUN(2048, 0)),
	AUX_RW(large_nosg, 2048p, wm_half, RUN(2048, MIN(10, MAX_PAGE_ORDER))),
	AUX_RW(large_nosg, 2048p, wm_whole, RUN(2048, MIN(11, MAX_PAGE_ORDER))),
	AUX_SNAP(large_nosg, 2048p, NOSG_RET(11), RUN(2048, MIN(11, MAX_PAGE_ORDER))),
	AUX_RW(large_nosg, max_half, wm_default, RUN(MP(-1), MO(-2))),
	AUX_RW(large_nosg, max_half, wm_page, RUN(MP(-1), 0)),
	AUX_RW(large_nosg, max_half, wm_half, RUN(MP(-1), MO(-2))),
	AUX_RW(large_nosg, max_half, wm_whole, RUN(MP(-1), MO(-1))),
	AUX_SNAP(large_nosg, max_half, 0, RUN(MP(-1), MO(-1))),
	AUX_RW(large_nosg, max_minus1, wm_default, DOWN(MO(-1))),
	AUX_RW(large_nosg, max_minus1, wm_page, RUN(MP(0) - 1, 0)),
	AUX_RW(large_nosg, max_minus1, wm_half, DOWN(MO(-1))),
	AUX_RW(large_nosg, max_minus1, wm_whole, DOWN(MO(-1))),
	AUX_SNAP(large_nosg, max_minus1, 0, DOWN(MO(-1))),
	AUX_RW(large_nosg, max, wm_default, RUN(MP(0), MO(-1))),
	AUX_RW(large_nosg, max, wm_page, RUN(MP(0), 0)),
	AUX_RW(large_nosg, max, wm_half, RUN(MP(0), MO(-1))),
	AUX_RW(large_nosg, max, wm_whole, RUN(MP(0), MO(0))),
	AUX_SNAP(large_nosg, max, 0, RUN(MP(0), MO(0))),
	AUX_RW(large_nosg, max_plus1, wm_default, RUN(MP(0), MO(0)), RUN(1, 0)),
	AUX_RW(large_nosg, max_plus1, wm_page, RUN(MP(0) + 1, 0)),
	AUX_RW(large_nosg, max_plus1, wm_half, RUN(MP(0), MO(0)), RUN(1, 0)),
	AUX_RW(large_nosg, max_plus1, wm_whole, RUN(MP(0), MO(0)), RUN(1, 0)),
	AUX_SNAP(large_nosg, max_plus1, 0, RUN(MP(0), MO(0)), RUN(1, 0)),
	AUX_RW(large_nosg, max_twice, wm_default, RUN(MP(1), MO(0))),
	AUX_RW(large_nosg, max_twice, wm_page, RUN(MP(1), 0)),
	AUX_RW(large_nosg, max_twice, wm_half, RUN(MP(1), MO(0))),
	AUX_RW(large_nosg, max_twice, wm_whole, RUN(MP(1), MO(0))),
	AUX_SNAP(large_nosg, max_twice, -ENOMEM, RUN(MP(1), MO(0))),
};

/*
 * What each fallback case must give, from the rule: the first chunk asks
 * for the ceiling (get_order() of the default watermark, half the 512
 * pages, in normal mode; the whole buffer in snapshot mode) and walks
 * down to the injected limit, where every chunk settles; a NO_SG snapshot
 * buffer, no longer one chunk, is refused.  FB_RW and FB_SNAP are those
 * ceilings: orders 8 and 9 of the 512 pages, where the kernel has them.
 */
#define FB_RW		MIN(8, MAX_PAGE_ORDER)
#define FB_SNAP		MIN(9, MAX_PAGE_ORDER)
static const struct {
	const char *name;
	int first_ask;		/* the order the first chunk asks for first */
	int settle;		/* the order every chunk gets */
	int ret;
} aux_fallback_table[] = {
	{ "large_rw_order0_only", FB_RW, 0, 0 },
	{ "large_rw_half_ceiling", FB_RW, FB_RW / 2, 0 },
	{ "large_rw_below_ceiling", FB_RW, FB_RW - 1, 0 },
	{ "large_snapshot_order0_only", FB_SNAP, 0, 0 },
	{ "large_snapshot_half_ceiling", FB_SNAP, FB_SNAP / 2, 0 },
	{ "large_snapshot_below_ceiling", FB_SNAP, FB_SNAP - 1, 0 },
	{ "nosg_rw_order0_only", FB_RW, 0, 0 },
	{ "nosg_rw_half_ceiling", FB_RW, FB_RW / 2, 0 },
	{ "nosg_rw_below_ceiling", FB_RW, FB_RW - 1, 0 },
	{ "nosg_snapshot_order0_only", FB_SNAP, 0, -ENOMEM },
	{ "nosg_snapshot_half_ceiling", FB_SNAP, FB_SNAP / 2, -ENOMEM },
	{ "nosg_snapshot_below_ceiling", FB_SNAP, FB_SNAP - 1, -ENOMEM },
	{ "large_nosg_rw_order0_only", FB_RW, 0, 0 },
	{ "large_nosg_rw_half_ceiling", FB_RW, FB_RW / 2, 0 },
	{ "large_nosg_rw_below_ceiling", FB_RW, FB_RW - 1, 0 },
	{ "large_nosg_snapshot_order0_only", FB_SNAP, 0, -ENOMEM },
	{ "large_nosg_snapshot_half_ceiling", FB_SNAP, FB_SNAP / 2, -ENOMEM },
	{ "large_nosg_snapshot_below_ceiling", FB_SNAP, FB_SNAP - 1, -ENOMEM },
};

#endif /* _KERNEL_EVENTS_RING_BUFFER_KUNIT_ORDERS_H */
