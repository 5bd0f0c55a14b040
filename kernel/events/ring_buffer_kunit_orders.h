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
 * The chunk orders of every named case, written down from the rule as
 * commit 18049c8cff9c ("perf/aux: Allocate non-contiguous AUX pages by
 * default") states it, not computed: order 0 unless the PMU has
 * PERF_PMU_CAP_AUX_PREFER_LARGE or _AUX_NO_SG; otherwise chunks no larger
 * than get_order(watermark) in normal mode (the watermark defaults to half
 * the buffer) and than the buffer in snapshot mode, none above
 * MAX_PAGE_ORDER; a NO_SG snapshot buffer is one chunk or -ENOMEM.
 *
 * Sizes are the power-of-two page counts perf_mmap() takes for an AUX
 * area, in pages of the running kernel, as are the orders: MP(d) is
 * 2^(MAX_PAGE_ORDER + d) pages, MO(d) the order MAX_PAGE_ORDER + d.  Every
 * chunk of a buffer has the row's order here; a fixed size's order that may
 * exceed MAX_PAGE_ORDER on some kernel is written MIN(order, MAX_PAGE_ORDER).
 */
#define MO(d)		(MAX_PAGE_ORDER + (d))
#define MP(d)		(1 << MO(d))
/* A NO_SG snapshot buffer of 2^o pages: one chunk, if the order exists. */
#define NOSG_RET(o)	((o) > MAX_PAGE_ORDER ? -ENOMEM : 0)

#define AUX_PAGES_1p		1
#define AUX_PAGES_2p		2
#define AUX_PAGES_16p		16
#define AUX_PAGES_512p		512
#define AUX_PAGES_1024p		1024
#define AUX_PAGES_2048p		2048
#define AUX_PAGES_max_half	MP(-1)
#define AUX_PAGES_max		MP(0)
#define AUX_PAGES_max_twice	MP(1)

#define AUX_CAPS_none		0
#define AUX_CAPS_large		PERF_PMU_CAP_AUX_PREFER_LARGE
#define AUX_CAPS_nosg		PERF_PMU_CAP_AUX_NO_SG
#define AUX_CAPS_large_nosg	(PERF_PMU_CAP_AUX_NO_SG | \
				 PERF_PMU_CAP_AUX_PREFER_LARGE)

#define AUX_RW(caps, size, wm, order)					\
	{ #caps "_rw_" #size "_" #wm, AUX_CAPS_##caps, false,		\
	  AUX_PAGES_##size, WM_##wm, 0, order }
#define AUX_SNAP(caps, size, ret, order)				\
	{ #caps "_snapshot_" #size, AUX_CAPS_##caps, true,		\
	  AUX_PAGES_##size, WM_wm_default, ret, order }

/* The watermark names of the rows. */
#define WM_wm_default	WM_DEFAULT
#define WM_wm_page	WM_PAGE
#define WM_wm_half	WM_HALF
#define WM_wm_whole	WM_WHOLE

struct aux_table_row {
	const char *name;
	unsigned int caps;
	bool overwrite;
	int nr_pages;
	enum aux_wm wm;
	int ret;
	int order;		/* of every chunk */
};

static const struct aux_table_row aux_table[] = {
	AUX_RW(none, 1p, wm_default, 0),
	AUX_RW(none, 1p, wm_page, 0),
	AUX_RW(none, 1p, wm_half, 0),
	AUX_RW(none, 1p, wm_whole, 0),
	AUX_SNAP(none, 1p, 0, 0),
	AUX_RW(none, 2p, wm_default, 0),
	AUX_RW(none, 2p, wm_page, 0),
	AUX_RW(none, 2p, wm_half, 0),
	AUX_RW(none, 2p, wm_whole, 0),
	AUX_SNAP(none, 2p, 0, 0),
	AUX_RW(none, 16p, wm_default, 0),
	AUX_RW(none, 16p, wm_page, 0),
	AUX_RW(none, 16p, wm_half, 0),
	AUX_RW(none, 16p, wm_whole, 0),
	AUX_SNAP(none, 16p, 0, 0),
	AUX_RW(none, 512p, wm_default, 0),
	AUX_RW(none, 512p, wm_page, 0),
	AUX_RW(none, 512p, wm_half, 0),
	AUX_RW(none, 512p, wm_whole, 0),
	AUX_SNAP(none, 512p, 0, 0),
	AUX_RW(none, 1024p, wm_default, 0),
	AUX_RW(none, 1024p, wm_page, 0),
	AUX_RW(none, 1024p, wm_half, 0),
	AUX_RW(none, 1024p, wm_whole, 0),
	AUX_SNAP(none, 1024p, 0, 0),
	AUX_RW(none, 2048p, wm_default, 0),
	AUX_RW(none, 2048p, wm_page, 0),
	AUX_RW(none, 2048p, wm_half, 0),
	AUX_RW(none, 2048p, wm_whole, 0),
	AUX_SNAP(none, 2048p, 0, 0),
	AUX_RW(none, max_half, wm_default, 0),
	AUX_RW(none, max_half, wm_page, 0),
	AUX_RW(none, max_half, wm_half, 0),
	AUX_RW(none, max_half, wm_whole, 0),
	AUX_SNAP(none, max_half, 0, 0),
	AUX_RW(none, max, wm_default, 0),
	AUX_RW(none, max, wm_page, 0),
	AUX_RW(none, max, wm_half, 0),
	AUX_RW(none, max, wm_whole, 0),
	AUX_SNAP(none, max, 0, 0),
	AUX_RW(none, max_twice, wm_default, 0),
	AUX_RW(none, max_twice, wm_page, 0),
	AUX_RW(none, max_twice, wm_half, 0),
	AUX_RW(none, max_twice, wm_whole, 0),
	AUX_SNAP(none, max_twice, 0, 0),
	AUX_RW(large, 1p, wm_default, 0),
	AUX_RW(large, 1p, wm_page, 0),
	AUX_RW(large, 1p, wm_half, 0),
	AUX_RW(large, 1p, wm_whole, 0),
	AUX_SNAP(large, 1p, 0, 0),
	AUX_RW(large, 2p, wm_default, 0),
	AUX_RW(large, 2p, wm_page, 0),
	AUX_RW(large, 2p, wm_half, 0),
	AUX_RW(large, 2p, wm_whole, 1),
	AUX_SNAP(large, 2p, 0, 1),
	AUX_RW(large, 16p, wm_default, 3),
	AUX_RW(large, 16p, wm_page, 0),
	AUX_RW(large, 16p, wm_half, 3),
	AUX_RW(large, 16p, wm_whole, 4),
	AUX_SNAP(large, 16p, 0, 4),
	AUX_RW(large, 512p, wm_default, MIN(8, MAX_PAGE_ORDER)),
	AUX_RW(large, 512p, wm_page, 0),
	AUX_RW(large, 512p, wm_half, MIN(8, MAX_PAGE_ORDER)),
	AUX_RW(large, 512p, wm_whole, MIN(9, MAX_PAGE_ORDER)),
	AUX_SNAP(large, 512p, 0, MIN(9, MAX_PAGE_ORDER)),
	AUX_RW(large, 1024p, wm_default, MIN(9, MAX_PAGE_ORDER)),
	AUX_RW(large, 1024p, wm_page, 0),
	AUX_RW(large, 1024p, wm_half, MIN(9, MAX_PAGE_ORDER)),
	AUX_RW(large, 1024p, wm_whole, MIN(10, MAX_PAGE_ORDER)),
	AUX_SNAP(large, 1024p, 0, MIN(10, MAX_PAGE_ORDER)),
	AUX_RW(large, 2048p, wm_default, MIN(10, MAX_PAGE_ORDER)),
	AUX_RW(large, 2048p, wm_page, 0),
	AUX_RW(large, 2048p, wm_half, MIN(10, MAX_PAGE_ORDER)),
	AUX_RW(large, 2048p, wm_whole, MIN(11, MAX_PAGE_ORDER)),
	AUX_SNAP(large, 2048p, 0, MIN(11, MAX_PAGE_ORDER)),
	AUX_RW(large, max_half, wm_default, MO(-2)),
	AUX_RW(large, max_half, wm_page, 0),
	AUX_RW(large, max_half, wm_half, MO(-2)),
	AUX_RW(large, max_half, wm_whole, MO(-1)),
	AUX_SNAP(large, max_half, 0, MO(-1)),
	AUX_RW(large, max, wm_default, MO(-1)),
	AUX_RW(large, max, wm_page, 0),
	AUX_RW(large, max, wm_half, MO(-1)),
	AUX_RW(large, max, wm_whole, MO(0)),
	AUX_SNAP(large, max, 0, MO(0)),
	AUX_RW(large, max_twice, wm_default, MO(0)),
	AUX_RW(large, max_twice, wm_page, 0),
	AUX_RW(large, max_twice, wm_half, MO(0)),
	AUX_RW(large, max_twice, wm_whole, MO(0)),
	AUX_SNAP(large, max_twice, 0, MO(0)),
	AUX_RW(nosg, 1p, wm_default, 0),
	AUX_RW(nosg, 1p, wm_page, 0),
	AUX_RW(nosg, 1p, wm_half, 0),
	AUX_RW(nosg, 1p, wm_whole, 0),
	AUX_SNAP(nosg, 1p, 0, 0),
	AUX_RW(nosg, 2p, wm_default, 0),
	AUX_RW(nosg, 2p, wm_page, 0),
	AUX_RW(nosg, 2p, wm_half, 0),
	AUX_RW(nosg, 2p, wm_whole, 1),
	AUX_SNAP(nosg, 2p, 0, 1),
	AUX_RW(nosg, 16p, wm_default, 3),
	AUX_RW(nosg, 16p, wm_page, 0),
	AUX_RW(nosg, 16p, wm_half, 3),
	AUX_RW(nosg, 16p, wm_whole, 4),
	AUX_SNAP(nosg, 16p, 0, 4),
	AUX_RW(nosg, 512p, wm_default, MIN(8, MAX_PAGE_ORDER)),
	AUX_RW(nosg, 512p, wm_page, 0),
	AUX_RW(nosg, 512p, wm_half, MIN(8, MAX_PAGE_ORDER)),
	AUX_RW(nosg, 512p, wm_whole, MIN(9, MAX_PAGE_ORDER)),
	AUX_SNAP(nosg, 512p, NOSG_RET(9), MIN(9, MAX_PAGE_ORDER)),
	AUX_RW(nosg, 1024p, wm_default, MIN(9, MAX_PAGE_ORDER)),
	AUX_RW(nosg, 1024p, wm_page, 0),
	AUX_RW(nosg, 1024p, wm_half, MIN(9, MAX_PAGE_ORDER)),
	AUX_RW(nosg, 1024p, wm_whole, MIN(10, MAX_PAGE_ORDER)),
	AUX_SNAP(nosg, 1024p, NOSG_RET(10), MIN(10, MAX_PAGE_ORDER)),
	AUX_RW(nosg, 2048p, wm_default, MIN(10, MAX_PAGE_ORDER)),
	AUX_RW(nosg, 2048p, wm_page, 0),
	AUX_RW(nosg, 2048p, wm_half, MIN(10, MAX_PAGE_ORDER)),
	AUX_RW(nosg, 2048p, wm_whole, MIN(11, MAX_PAGE_ORDER)),
	AUX_SNAP(nosg, 2048p, NOSG_RET(11), MIN(11, MAX_PAGE_ORDER)),
	AUX_RW(nosg, max_half, wm_default, MO(-2)),
	AUX_RW(nosg, max_half, wm_page, 0),
	AUX_RW(nosg, max_half, wm_half, MO(-2)),
	AUX_RW(nosg, max_half, wm_whole, MO(-1)),
	AUX_SNAP(nosg, max_half, 0, MO(-1)),
	AUX_RW(nosg, max, wm_default, MO(-1)),
	AUX_RW(nosg, max, wm_page, 0),
	AUX_RW(nosg, max, wm_half, MO(-1)),
	AUX_RW(nosg, max, wm_whole, MO(0)),
	AUX_SNAP(nosg, max, 0, MO(0)),
	AUX_RW(nosg, max_twice, wm_default, MO(0)),
	AUX_RW(nosg, max_twice, wm_page, 0),
	AUX_RW(nosg, max_twice, wm_half, MO(0)),
	AUX_RW(nosg, max_twice, wm_whole, MO(0)),
	AUX_SNAP(nosg, max_twice, -ENOMEM, MO(0)),
	AUX_RW(large_nosg, 1p, wm_default, 0),
	AUX_RW(large_nosg, 1p, wm_page, 0),
	AUX_RW(large_nosg, 1p, wm_half, 0),
	AUX_RW(large_nosg, 1p, wm_whole, 0),
	AUX_SNAP(large_nosg, 1p, 0, 0),
	AUX_RW(large_nosg, 2p, wm_default, 0),
	AUX_RW(large_nosg, 2p, wm_page, 0),
	AUX_RW(large_nosg, 2p, wm_half, 0),
	AUX_RW(large_nosg, 2p, wm_whole, 1),
	AUX_SNAP(large_nosg, 2p, 0, 1),
	AUX_RW(large_nosg, 16p, wm_default, 3),
	AUX_RW(large_nosg, 16p, wm_page, 0),
	AUX_RW(large_nosg, 16p, wm_half, 3),
	AUX_RW(large_nosg, 16p, wm_whole, 4),
	AUX_SNAP(large_nosg, 16p, 0, 4),
	AUX_RW(large_nosg, 512p, wm_default, MIN(8, MAX_PAGE_ORDER)),
	AUX_RW(large_nosg, 512p, wm_page, 0),
	AUX_RW(large_nosg, 512p, wm_half, MIN(8, MAX_PAGE_ORDER)),
	AUX_RW(large_nosg, 512p, wm_whole, MIN(9, MAX_PAGE_ORDER)),
	AUX_SNAP(large_nosg, 512p, NOSG_RET(9), MIN(9, MAX_PAGE_ORDER)),
	AUX_RW(large_nosg, 1024p, wm_default, MIN(9, MAX_PAGE_ORDER)),
	AUX_RW(large_nosg, 1024p, wm_page, 0),
	AUX_RW(large_nosg, 1024p, wm_half, MIN(9, MAX_PAGE_ORDER)),
	AUX_RW(large_nosg, 1024p, wm_whole, MIN(10, MAX_PAGE_ORDER)),
	AUX_SNAP(large_nosg, 1024p, NOSG_RET(10), MIN(10, MAX_PAGE_ORDER)),
	AUX_RW(large_nosg, 2048p, wm_default, MIN(10, MAX_PAGE_ORDER)),
	AUX_RW(large_nosg, 2048p, wm_page, 0),
	AUX_RW(large_nosg, 2048p, wm_half, MIN(10, MAX_PAGE_ORDER)),
	AUX_RW(large_nosg, 2048p, wm_whole, MIN(11, MAX_PAGE_ORDER)),
	AUX_SNAP(large_nosg, 2048p, NOSG_RET(11), MIN(11, MAX_PAGE_ORDER)),
	AUX_RW(large_nosg, max_half, wm_default, MO(-2)),
	AUX_RW(large_nosg, max_half, wm_page, 0),
	AUX_RW(large_nosg, max_half, wm_half, MO(-2)),
	AUX_RW(large_nosg, max_half, wm_whole, MO(-1)),
	AUX_SNAP(large_nosg, max_half, 0, MO(-1)),
	AUX_RW(large_nosg, max, wm_default, MO(-1)),
	AUX_RW(large_nosg, max, wm_page, 0),
	AUX_RW(large_nosg, max, wm_half, MO(-1)),
	AUX_RW(large_nosg, max, wm_whole, MO(0)),
	AUX_SNAP(large_nosg, max, 0, MO(0)),
	AUX_RW(large_nosg, max_twice, wm_default, MO(0)),
	AUX_RW(large_nosg, max_twice, wm_page, 0),
	AUX_RW(large_nosg, max_twice, wm_half, MO(0)),
	AUX_RW(large_nosg, max_twice, wm_whole, MO(0)),
	AUX_SNAP(large_nosg, max_twice, -ENOMEM, MO(0)),
};

/*
 * What each fallback case must give, from the rule: with orders above a
 * limit refused, the first chunk asks for the ceiling (get_order() of the
 * default watermark, half the 512 pages, in normal mode; the whole buffer
 * in snapshot mode) and walks down to the limit, where every chunk
 * settles; a NO_SG snapshot buffer, no longer one chunk, is refused.
 * FB_RW and FB_SNAP are those ceilings: orders 8 and 9 of the 512 pages,
 * where the kernel has them.
 */
#define FALLBACK_PAGES	512
#define FB_RW		MIN(8, MAX_PAGE_ORDER)
#define FB_SNAP		MIN(9, MAX_PAGE_ORDER)
#define FB(caps, mode, limit, first, settle, ret)			\
	{ #caps "_" #mode "_" #limit, AUX_CAPS_##caps,			\
	  FB_OVERWRITE_##mode, first, settle, ret }
#define FB_OVERWRITE_rw		false
#define FB_OVERWRITE_snapshot	true

struct aux_fallback_row {
	const char *name;
	unsigned int caps;
	bool overwrite;
	int first_ask;		/* the order the first chunk asks for first */
	int settle;		/* the limit, and the order every chunk gets */
	int ret;
};

static const struct aux_fallback_row aux_fallback_table[] = {
	FB(large, rw, order0_only, FB_RW, 0, 0),
	FB(large, rw, half_ceiling, FB_RW, FB_RW / 2, 0),
	FB(large, rw, below_ceiling, FB_RW, FB_RW - 1, 0),
	FB(large, snapshot, order0_only, FB_SNAP, 0, 0),
	FB(large, snapshot, half_ceiling, FB_SNAP, FB_SNAP / 2, 0),
	FB(large, snapshot, below_ceiling, FB_SNAP, FB_SNAP - 1, 0),
	FB(nosg, rw, order0_only, FB_RW, 0, 0),
	FB(nosg, rw, half_ceiling, FB_RW, FB_RW / 2, 0),
	FB(nosg, rw, below_ceiling, FB_RW, FB_RW - 1, 0),
	FB(nosg, snapshot, order0_only, FB_SNAP, 0, -ENOMEM),
	FB(nosg, snapshot, half_ceiling, FB_SNAP, FB_SNAP / 2, -ENOMEM),
	FB(nosg, snapshot, below_ceiling, FB_SNAP, FB_SNAP - 1, -ENOMEM),
	FB(large_nosg, rw, order0_only, FB_RW, 0, 0),
	FB(large_nosg, rw, half_ceiling, FB_RW, FB_RW / 2, 0),
	FB(large_nosg, rw, below_ceiling, FB_RW, FB_RW - 1, 0),
	FB(large_nosg, snapshot, order0_only, FB_SNAP, 0, -ENOMEM),
	FB(large_nosg, snapshot, half_ceiling, FB_SNAP, FB_SNAP / 2, -ENOMEM),
	FB(large_nosg, snapshot, below_ceiling, FB_SNAP, FB_SNAP - 1, -ENOMEM),
};

#endif /* _KERNEL_EVENTS_RING_BUFFER_KUNIT_ORDERS_H */
