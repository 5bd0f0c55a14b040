/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Expected rb_alloc_aux() chunk orders and fallbacks for ring_buffer_kunit.c,
 * written by hand from the rule so that they can be reviewed on their own.
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
 * Rule of commit 18049c8cff9c ("perf/aux: Allocate non-contiguous AUX pages
 * by default"): order 0 without PERF_PMU_CAP_AUX_PREFER_LARGE or _AUX_NO_SG;
 * else chunks up to get_order(watermark) (default half the buffer) in normal
 * mode, the buffer in snapshot mode, MAX_PAGE_ORDER at most; a NO_SG snapshot
 * buffer is one chunk or -ENOMEM.  Every chunk has the row's order.
 * MP(d): 2^(MAX_PAGE_ORDER + d) pages; MO(d): order MAX_PAGE_ORDER + d.
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
 * Orders above a limit refused: the first chunk asks the ceiling (FB_RW:
 * default watermark; FB_SNAP: whole buffer) and falls back to the limit,
 * where every chunk settles; a NO_SG snapshot buffer is then refused.
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
