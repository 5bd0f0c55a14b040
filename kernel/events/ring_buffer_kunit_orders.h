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

/*
 * Rule of commit 18049c8cff9c ("perf/aux: Allocate non-contiguous AUX pages
 * by default"): order 0 without PERF_PMU_CAP_AUX_PREFER_LARGE or _AUX_NO_SG;
 * else chunks up to get_order(watermark) (default half the buffer) in normal
 * mode, the buffer in snapshot mode, MAX_PAGE_ORDER and the pages left at
 * most, falling back an order at a time; a NO_SG snapshot buffer is one chunk
 * or -ENOMEM.  A chunk's order is in its head's page_private(); pages zeroed.
 */
/* Normal mode by watermark (perf's default, a page, half, all); snapshot. */
enum aux_mode { WM_DEFAULT, WM_PAGE, WM_HALF, WM_WHOLE, SNAPSHOT, NR_MODES };

#define MO(d)		(MAX_PAGE_ORDER + (d))	/* MAX_PAGE_ORDER + d */
#define MP(d)		(1 << MO(d))		/* pages of order MO(d) */
#define M(o)		MIN(o, MAX_PAGE_ORDER)
/* A NO_SG snapshot buffer of 2^o pages: one chunk, if the order exists. */
#define NOSG_RET(o)	((o) > MAX_PAGE_ORDER ? -ENOMEM : 0)

/* The order of every chunk, with either capability, by mode. */
struct aux_order_row {
	const char *size;
	int nr_pages;
	int order[NR_MODES];
	int nosg_snapshot_ret;
};

static const struct aux_order_row aux_order_rows[] = {
	/*				default	page	half	whole	snapshot */
	{ "1p",		1,	{ 0,	0,	0,	0,	0 },	0 },
	{ "2p",		2,	{ 0,	0,	0,	1,	1 },	0 },
	{ "16p",	16,	{ 3,	0,	3,	4,	4 },	0 },
	{ "512p",	512,	{ M(8),	0,	M(8),	M(9),	M(9) },	NOSG_RET(9) },
	{ "1024p",	1024,	{ M(9),	0,	M(9),	M(10),	M(10) }, NOSG_RET(10) },
	{ "2048p",	2048,	{ M(10), 0,	M(10),	M(11),	M(11) }, NOSG_RET(11) },
	{ "max_half",	MP(-1),	{ MO(-2), 0,	MO(-2),	MO(-1),	MO(-1) }, 0 },
	{ "max",	MP(0),	{ MO(-1), 0,	MO(-1),	MO(0),	MO(0) }, 0 },
	{ "max_twice",	MP(1),	{ MO(0), 0,	MO(0),	MO(0),	MO(0) }, -ENOMEM },
};

/*
 * A buffer of 512 pages with orders above a limit refused: the first chunk
 * asks the ceiling (default watermark; snapshot: the buffer) and falls back
 * to the limit, where every chunk settles; a NO_SG snapshot buffer is then
 * refused.
 */
#define FALLBACK_PAGES	512
#define FB_RW		M(8)
#define FB_SNAP		M(9)

struct aux_fallback_row {
	const char *name;
	bool overwrite;
	int first_ask;		/* the order the first chunk asks for first */
	int settle;		/* the limit, and the order every chunk gets */
	int nosg_ret;
};

static const struct aux_fallback_row aux_fallback_rows[] = {
	{ "rw_order0_only",		false,	FB_RW,	 0,		0 },
	{ "rw_half_ceiling",		false,	FB_RW,	 FB_RW / 2,	0 },
	{ "rw_below_ceiling",		false,	FB_RW,	 FB_RW - 1,	0 },
	{ "snapshot_order0_only",	true,	FB_SNAP, 0,		-ENOMEM },
	{ "snapshot_half_ceiling",	true,	FB_SNAP, FB_SNAP / 2,	-ENOMEM },
	{ "snapshot_below_ceiling",	true,	FB_SNAP, FB_SNAP - 1,	-ENOMEM },
};

#endif /* _KERNEL_EVENTS_RING_BUFFER_KUNIT_ORDERS_H */
