/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What vmap_granule_kunit.c judges vmap() by, for review on its own: the
 * architecture's blocks, the shapes of pages[] and the hand-written tables
 * of the mappings the named shapes must get at each page size.
 */
#ifndef _MM_TESTS_VMAP_GRANULE_KUNIT_H
#define _MM_TESTS_VMAP_GRANULE_KUNIT_H

#include <kunit/test.h>
#include <linux/ctype.h>
#include <linux/string.h>
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <linux/vmalloc.h>

#include "../internal.h"

enum granule { G_NONE, G_PTE, G_CONT, G_PMD, G_PUD, NR_GRANULES };

static const char * const granule_names[NR_GRANULES] = {
	"none", "PTE", "cont-PTE", "PMD", "PUD",
};

/*
 * The blocks from the architecture's constants, not the hooks under test:
 * arm64 PMD and cont-PTE; x86-64 (not UML) 2M pages.
 */
static bool arch_states_granules(void)
{
#if defined(CONFIG_ARM64) || (defined(CONFIG_X86_64) && !defined(CONFIG_UML))
	return true;
#else
	return false;
#endif
}

static unsigned int arch_cont_shift(void)
{
#ifdef CONFIG_ARM64
	return CONT_PTE_SHIFT;
#else
	return 0;
#endif
}

/* A mid-sized chunk: the cont-PTE order, or half a PMD where there is none. */
static unsigned int cont_order(void)
{
#ifdef CONFIG_ARM64
	return CONT_PTE_SHIFT - PAGE_SHIFT;
#else
	return (PMD_SHIFT - PAGE_SHIFT) / 2;
#endif
}

static unsigned int pmd_order(void)
{
	return PMD_SHIFT - PAGE_SHIFT;
}

/* Shapes of pages[]: pieces of one allocation each, symbolic orders. */
enum piece_kind { NO_PIECE, ORDER0, SPLIT, COMPOUND, SCATTERED };
enum piece_order { O_ZERO, O_CONT, O_PMD, O_TWO_PMD, O_HALF_PMD };

struct piece {
	enum piece_kind kind;
	enum piece_order order;
	unsigned char trim_head;	/* pages left out at the start */
	unsigned char trim_tail;	/* pages left out at the end */
	bool reversed;			/* pages in descending order */
};

#define MAX_PIECES 6
struct vmap_shape {
	const char *name;
	struct piece pieces[MAX_PIECES];
	/* Every run naturally aligned, as AUX chunks are: so must the area be. */
	bool aligned_runs;
};

#define P0		{ ORDER0 }
#define SPLIT_CONT	{ SPLIT, O_CONT }
#define SPLIT_PMD	{ SPLIT, O_PMD }

static const struct vmap_shape vmap_shapes[] = {
	{ "single_page", { P0 } },
	{ "scattered", { { SCATTERED, O_CONT } } },
	{ "split_cont", { SPLIT_CONT }, true },
	{ "split_pmd", { SPLIT_PMD }, true },
	{ "compound_cont", { { COMPOUND, O_CONT } }, true },
	{ "compound_pmd", { { COMPOUND, O_PMD } }, true },
	{ "aux_like", { SPLIT_PMD, SPLIT_CONT, SPLIT_CONT, P0, P0 }, true },
	{ "order0_first", { P0, P0, SPLIT_PMD, SPLIT_CONT } },
	{ "large_between_order0",
	  { SPLIT_CONT, P0, SPLIT_PMD, P0, SPLIT_CONT } },
	{ "order0_interleaved", { P0, SPLIT_CONT, P0, SPLIT_CONT, P0 } },
	{ "pfn_misaligned_pmd", { { SPLIT, O_PMD, 1 } } },
	/* PMD-aligned area, but each VA-aligned PMD is one page off in PA. */
	{ "pfn_misaligned_two_pmd", { { SPLIT, O_TWO_PMD, 1 } } },
	{ "pfn_misaligned_cont", { { SPLIT, O_CONT, 1 } } },
	{ "one_short_of_cont", { { SPLIT, O_CONT, 0, 1 } }, true },
	{ "one_short_of_pmd", { { SPLIT, O_PMD, 0, 1 } }, true },
	{ "several_pmd", { SPLIT_PMD, SPLIT_PMD, SPLIT_PMD, SPLIT_PMD }, true },
	{ "reversed_pmd", { { SPLIT, O_PMD, 0, 0, true } } },
	/* Second AUX chunk fell back: later chunks sit half a PMD off. */
	{ "aux_fallback_once",
	  { SPLIT_PMD, { SPLIT, O_HALF_PMD }, SPLIT_PMD, SPLIT_PMD }, true },
	/* Two such chunks: the one after them is on a PMD boundary again. */
	{ "aux_fallback_realigned",
	  { SPLIT_PMD, { SPLIT, O_HALF_PMD }, { SPLIT, O_HALF_PMD }, SPLIT_PMD },
	  true },
	/* AUX chunks after order-0 fallbacks: single pages, then a block. */
	{ "cont_after_single_pages", { { SCATTERED, O_CONT }, SPLIT_CONT },
	  true },
	{ "pmd_after_single_pages", { { SCATTERED, O_PMD }, SPLIT_PMD }, true },
};

/*
 * Named shapes' entries per config: arm64 4K (PMD 512 pages, cont-PTE 16),
 * 16K (2048, 128), 64K (8192, 32); x86-64 (PMD 512, "cont" pieces 16 pages).
 * In address order, granule and count of consecutive entries: P PMD,
 * C cont-PTE, T PTE, for an area aligned to @align, the largest block some
 * run of the shape can use, as vmap() must align it.  NULL: cannot be built
 * (a piece above MAX_PAGE_ORDER).
 */
enum table_config { T_ARM64_4K, T_ARM64_16K, T_ARM64_64K, T_X86_64,
		    NR_TABLE_CONFIGS };

struct vmap_table_row {
	const char *shape;
	enum granule align;
	const char *entries[NR_TABLE_CONFIGS];
};

static const struct vmap_table_row vmap_table[] = {
	/*			4K		16K		64K		x86-64 */
	{ "single_page", G_PTE,
	  { "T1",	"T1",		"T1",		"T1" } },
	{ "scattered", G_PTE,
	  { "T16",	"T128",		"T32",		"T16" } },
	{ "split_cont", G_CONT,
	  { "C1",	"C1",		"C1",		"T16" } },
	{ "split_pmd", G_PMD,
	  { "P1",	"P1",		"P1",		"P1" } },
	{ "compound_cont", G_CONT,
	  { "C1",	"C1",		"C1",		"T16" } },
	{ "compound_pmd", G_PMD,
	  { "P1",	"P1",		"P1",		"P1" } },
	/* PMD, two cont chunks, two pages */
	{ "aux_like", G_PMD,
	  { "P1 C2 T2",	"P1 C2 T2",	"P1 C2 T2",	"P1 T34" } },
	/* the PMD chunk two pages into a PMD-aligned area: nothing aligned */
	{ "order0_first", G_PMD,
	  { "T530",	"T2178",	"T8226",	"T530" } },
	/* only the first cont chunk starts at an aligned address */
	{ "large_between_order0", G_PMD,
	  { "C1 T530",	"C1 T2178",	"C1 T8226",	"T546" } },
	{ "order0_interleaved", G_CONT,
	  { "T35",	"T259",		"T67",		"T35" } },
	/* every page one page off its physical alignment */
	{ "pfn_misaligned_pmd", G_CONT,
	  { "T511",	"T2047",	"T8191",	"T511" } },
	{ "pfn_misaligned_two_pmd", G_PMD,
	  { "T1023",	NULL,		NULL,		"T1023" } },
	{ "pfn_misaligned_cont", G_PTE,
	  { "T15",	"T127",		"T31",		"T15" } },
	{ "one_short_of_cont", G_PTE,
	  { "T15",	"T127",		"T31",		"T15" } },
	/* the cont blocks of a PMD but the last */
	{ "one_short_of_pmd", G_CONT,
	  { "C31 T15",	"C15 T127",	"C255 T31",	"T511" } },
	{ "several_pmd", G_PMD,
	  { "P4",	"P4",		"P4",		"P4" } },
	{ "reversed_pmd", G_PTE,
	  { "T512",	"T2048",	"T8192",	"T512" } },
	/* half a PMD, then two PMD chunks half a PMD off: cont blocks */
	{ "aux_fallback_once", G_PMD,
	  { "P1 C80",	"P1 C40",	"P1 C640",	"P1 T1280" } },
	/* two halves, and the last chunk on a PMD boundary again */
	{ "aux_fallback_realigned", G_PMD,
	  { "P1 C32 P1", "P1 C16 P1",	"P1 C256 P1",	"P1 T512 P1" } },
	/* a block's worth of single pages, then the block */
	{ "cont_after_single_pages", G_CONT,
	  { "T16 C1",	"T128 C1",	"T32 C1",	"T32" } },
	{ "pmd_after_single_pages", G_PMD,
	  { "T512 P1",	NULL,		NULL,		"T512 P1" } },
};

/* The table's column for the running kernel, or -1 where it has none. */
static int table_config(void)
{
#if defined(CONFIG_ARM64)
	switch (PAGE_SHIFT) {
	case 12:
		return T_ARM64_4K;
	case 14:
		return T_ARM64_16K;
	case 16:
		return T_ARM64_64K;
	}
#elif defined(CONFIG_X86_64) && !defined(CONFIG_UML)
	if (PAGE_SHIFT == 12)
		return T_X86_64;
#endif
	return -1;
}

static unsigned long granule_size(enum granule g)
{
	switch (g) {
	case G_PUD:
		return PUD_SIZE;
	case G_PMD:
		return PMD_SIZE;
	case G_CONT:
		return arch_cont_shift() ? 1UL << arch_cont_shift() : PAGE_SIZE;
	default:
		return PAGE_SIZE;
	}
}

#define ENTRIES_LEN 64
/* @g[0..@nr) of an area at @va0 in table notation; returns the entries. */
static unsigned int entries_string(char *buf, const enum granule *g,
				   unsigned int nr, unsigned long va0)
{
	static const char letter[NR_GRANULES] = { '-', 'T', 'C', 'P', 'U' };
	unsigned int i, run = 0, total = 0;
	int n = 0;

	buf[0] = '\0';
	for (i = 0; i < nr; i++) {
		unsigned long va = va0 + ((unsigned long)i << PAGE_SHIFT);
		bool starts = g[i] <= G_PTE || !i || g[i - 1] != g[i] ||
			      IS_ALIGNED(va, granule_size(g[i]));

		if (!starts)
			continue;
		total++;
		if (i && g[i - 1] != g[i]) {
			n += scnprintf(buf + n, ENTRIES_LEN - n, "%s%c%u",
				       n ? " " : "", letter[g[i - 1]], run);
			run = 0;
		}
		run++;
	}
	if (nr)
		scnprintf(buf + n, ENTRIES_LEN - n, "%s%c%u", n ? " " : "",
			  letter[g[nr - 1]], run);
	return total;
}

/* The entries a row's string counts: the sum of its numbers. */
static unsigned int table_entries(const char *row)
{
	unsigned int total = 0, n = 0;

	for (; *row; row++) {
		if (isdigit(*row)) {
			n = n * 10 + (*row - '0');
		} else {
			total += n;
			n = 0;
		}
	}
	return total + n;
}

static const struct vmap_shape *shape_named(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vmap_shapes); i++)
		if (!strcmp(vmap_shapes[i].name, name))
			return &vmap_shapes[i];
	return NULL;
}

#endif /* _MM_TESTS_VMAP_GRANULE_KUNIT_H */
