// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the page-table granules vmap() maps pages with.
 *
 * With large vmap, vmap() maps each physically contiguous run of its pages
 * (compound or not: perf AUX chunks are split high-order pages) with the
 * largest granule that the run's length and the alignment of both its
 * physical and virtual addresses allow: a PMD block where
 * arch_vmap_pmd_supported(), a PTE-level block where the architecture
 * declares one (arm64 cont-PTE, arch_vmap_pte_supported_shift()), else PTEs;
 * it aligns the area so that such runs can use them, and maps nothing large
 * when huge vmap is off (nohugevmalloc).
 *
 * Each case vmap()s one shape of pages[] and checks one property: the
 * granule of every page against a model computed from the running kernel's
 * constants and hooks; that every address resolves to its page; that data
 * written through either mapping reads back through the other; that the
 * mapping is not executable; that nothing is left mapped after vunmap(); that
 * a partial permission change splits the mapping or is refused, with the
 * data intact.
 *
 * On a kernel whose vmap() maps base pages only the granule cases are
 * skipped with one constant reason; vmap_granule_kunit.strict=1 turns that
 * into failures that name the granule found and the one expected.  Two
 * other differences are strict only, as they cost perf AUX buffers
 * nothing: generated shapes no AUX buffer has (trimmed or reversed
 * pieces), and large mappings after nohugevmalloc.
 */

#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pagewalk.h>
#include <linux/pgtable.h>
#include <linux/prandom.h>
#include <linux/set_memory.h>
#include <linux/vmalloc.h>

#include "../internal.h"

static bool strict;
module_param(strict, bool, 0444);
MODULE_PARM_DESC(strict,
		 "Fail instead of skip where vmap() maps base pages only");

/*
 * The generated shapes come from this seed: fixed by default, so that every
 * run (and a board farm comparing runs) sees the same cases; another seed
 * explores others and replays them.
 */
static ulong seed = 20261130;
module_param(seed, ulong, 0444);
MODULE_PARM_DESC(seed, "Seed of the generated shapes of pages[]");

#define BASE_PAGES_ONLY "vmap() maps base pages only"
#define BEYOND_AUX "not an AUX buffer shape, strict only"
#define NOHUGE_IGNORED "vmap() maps large after nohugevmalloc, strict only"

enum granule { G_NONE, G_PTE, G_CONT, G_PMD, G_PUD, NR_GRANULES };

static const char * const granule_names[NR_GRANULES] = {
	"none", "PTE", "cont-PTE", "PMD", "PUD",
};

/* Whether vmap() may map PMD blocks on this kernel. */
static bool model_pmd(void)
{
	return vmap_allow_huge && arch_vmap_pmd_supported(PAGE_KERNEL);
}

/*
 * The shift of the PTE-level block the architecture offers vmap(), 0 for
 * none.  Only arm64's cont bit can be read back here.
 */
static unsigned int model_cont_shift(void)
{
#ifdef CONFIG_ARM64
	unsigned int shift = arch_vmap_pte_supported_shift(PMD_SIZE);

	if (vmap_allow_huge && shift > PAGE_SHIFT && shift < PMD_SHIFT)
		return shift;
#endif
	return 0;
}

/*
 * What the architecture itself can map vmap() areas with, from its own
 * constants, not from the hooks under test: arm64 PMD sections and cont-PTE
 * blocks of CONT_PTE_SHIFT at every page size, x86-64 2M pages where the CPU
 * has PSE.  A hook may refuse only for a documented reason: nohugevmalloc,
 * and arm64 PTDUMP_DEBUGFS, which turned PMD vmap off before 6.18.
 */
static bool arch_wants_pmd(void)
{
#if defined(CONFIG_ARM64)
	return !IS_ENABLED(CONFIG_PTDUMP_DEBUGFS);
#elif defined(CONFIG_X86_64)
	return boot_cpu_has(X86_FEATURE_PSE);
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

/*
 * The smallest block the architecture offers, as a shift; 0 for none, and
 * after nohugevmalloc: then the model expects base pages wherever the area
 * lands, and a kernel that maps them is checked, not skipped.
 */
static unsigned int arch_block_shift(void)
{
	if (!vmap_allow_huge)
		return 0;
	if (arch_cont_shift())
		return arch_cont_shift();
	return arch_wants_pmd() ? PMD_SHIFT : 0;
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

/* A kernel page-table leaf: its granule, value and protection. */
struct leaf {
	enum granule granule;
	bool nx;
	bool writable;
};

static bool leaf_nx(u64 val, bool block)
{
#if defined(CONFIG_ARM64)
	return val & (block ? PMD_SECT_PXN : PTE_PXN);
#elif defined(CONFIG_X86)
	return val & _PAGE_NX;
#else
	return true;
#endif
}

/*
 * The leaf that maps one address, found with the kernel's own page-table
 * walker (lib/test_aux_pmu.c uses it too): a PUD or PMD block ends the walk
 * at its level, a PTE may belong to an arm64 cont-PTE block.
 */
static int leaf_pud_entry(pud_t *pud, unsigned long addr, unsigned long next,
			  struct mm_walk *walk)
{
	struct leaf *leaf = walk->private;
	pud_t v = READ_ONCE(*pud);

	if (pud_leaf(v)) {
		leaf->granule = G_PUD;
		leaf->nx = leaf_nx(pud_val(v), true);
		leaf->writable = pud_write(v);
		walk->action = ACTION_CONTINUE;
	}
	return 0;
}

static int leaf_pmd_entry(pmd_t *pmd, unsigned long addr, unsigned long next,
			  struct mm_walk *walk)
{
	struct leaf *leaf = walk->private;
	pmd_t v = READ_ONCE(*pmd);

	if (pmd_leaf(v)) {
		leaf->granule = G_PMD;
		leaf->nx = leaf_nx(pmd_val(v), true);
		leaf->writable = pmd_write(v);
		walk->action = ACTION_CONTINUE;
	}
	return 0;
}

static int leaf_pte_entry(pte_t *ptep, unsigned long addr, unsigned long next,
			  struct mm_walk *walk)
{
	struct leaf *leaf = walk->private;
	pte_t pte = ptep_get(ptep);

	if (pte_none(pte) || !pte_present(pte))
		return 0;
	leaf->granule = G_PTE;
#ifdef CONFIG_ARM64
	if (pte_cont(pte))
		leaf->granule = G_CONT;
#endif
	leaf->nx = leaf_nx(pte_val(pte), false);
	leaf->writable = pte_write(pte);
	return 0;
}

static const struct mm_walk_ops leaf_ops = {
	.pud_entry = leaf_pud_entry,
	.pmd_entry = leaf_pmd_entry,
	.pte_entry = leaf_pte_entry,
};

/*
 * Lockless: the tests own the areas they walk, nothing changes or frees
 * those page tables meanwhile (and init_mm is not there for modules).
 */
static struct leaf walk_kernel(unsigned long va)
{
	struct leaf leaf = { G_NONE };

	va &= PAGE_MASK;
	walk_kernel_page_table_range_lockless(va, va + PAGE_SIZE, &leaf_ops,
					      NULL, &leaf);
	return leaf;
}

/*
 * Shapes of pages[]: a list of pieces, each taken from one allocation.
 * Orders are symbolic and resolved against the running kernel.
 */
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
	/*
	 * Pages no AUX buffer is made of (trimmed or reversed pieces): the
	 * rules still hold for them, but a vmap() that relies on its callers
	 * giving whole chunks in ascending order may differ; strict only.
	 */
	bool beyond_aux;
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
	/*
	 * Holds an aligned PMD physically, so the area is PMD aligned, but
	 * every VA-aligned PMD of it is one page off in physical memory.
	 */
	{ "pfn_misaligned_two_pmd", { { SPLIT, O_TWO_PMD, 1 } } },
	{ "pfn_misaligned_cont", { { SPLIT, O_CONT, 1 } } },
	{ "one_short_of_cont", { { SPLIT, O_CONT, 0, 1 } }, true },
	{ "one_short_of_pmd", { { SPLIT, O_PMD, 0, 1 } }, true },
	{ "several_pmd", { SPLIT_PMD, SPLIT_PMD, SPLIT_PMD, SPLIT_PMD }, true },
	{ "reversed_pmd", { { SPLIT, O_PMD, 0, 0, true } } },
	/*
	 * An AUX buffer whose second chunk fell back one order: rb_alloc_aux()
	 * asks the highest order again for the next, so every later chunk sits
	 * half a PMD off and can have cont-PTE blocks, not PMDs.  A scan that
	 * gives up at the first run shorter than a PMD maps them with PTEs.
	 */
	{ "aux_fallback_once",
	  { SPLIT_PMD, { SPLIT, O_HALF_PMD }, SPLIT_PMD, SPLIT_PMD }, true },
	/* Two such chunks: the one after them is on a PMD boundary again. */
	{ "aux_fallback_realigned",
	  { SPLIT_PMD, { SPLIT, O_HALF_PMD }, { SPLIT, O_HALF_PMD }, SPLIT_PMD },
	  true },
};

KUNIT_ARRAY_PARAM_DESC(vmap_shape, vmap_shapes, name);

/*
 * Generated shapes: pieces of every kind and order (up to two PMDs), trimmed
 * at either end, reversed, in any order.  Scattered pieces are runs of
 * single pages, so a large run after them may start at an aligned index
 * again: where a scan that gives up at the first small page would miss it.
 */
#define NR_GEN_SHAPES 200

static struct vmap_shape gen_shapes[NR_GEN_SHAPES];
static char gen_names[NR_GEN_SHAPES][KUNIT_PARAM_DESC_SIZE];

KUNIT_ARRAY_PARAM_DESC(gen_shape, gen_shapes, name);

static u32 pick(struct rnd_state *rnd, u32 n)
{
	return prandom_u32_state(rnd) % n;
}

static void gen_piece(struct rnd_state *rnd, struct piece *p)
{
	static const enum piece_kind kinds[] = {
		ORDER0, SPLIT, SPLIT, SPLIT, COMPOUND, SCATTERED, SCATTERED,
	};
	static const enum piece_order orders[] = {
		O_CONT, O_CONT, O_PMD, O_PMD, O_TWO_PMD,
	};

	p->kind = kinds[pick(rnd, ARRAY_SIZE(kinds))];
	p->order = p->kind == ORDER0 ? O_ZERO :
		   orders[pick(rnd, ARRAY_SIZE(orders) - (p->kind == SCATTERED))];
	/*
	 * Where two PMDs are more than the page allocator hands out at once
	 * (16K pages: a PMD is MAX_PAGE_ORDER), a PMD: a shape that can never
	 * be built tests nothing.
	 */
	if (p->order == O_TWO_PMD && pmd_order() + 1 > MAX_PAGE_ORDER)
		p->order = O_PMD;
	if (p->kind != SPLIT)
		return;
	p->trim_head = !pick(rnd, 6);
	p->trim_tail = !pick(rnd, 6);
	p->reversed = !pick(rnd, 10);
}

/* The shape as a name: kind.order[h][t][r] for each piece. */
static void gen_name(char *buf, unsigned int i, const struct vmap_shape *shape)
{
	static const char kind[] = { '-', '0', 's', 'c', 'x' };
	static const char order[] = { '0', 'c', 'p', 'P' };
	const struct piece *p;
	int n = scnprintf(buf, KUNIT_PARAM_DESC_SIZE, "gen%03u", i);

	for (p = shape->pieces; p < shape->pieces + MAX_PIECES && p->kind; p++)
		n += scnprintf(buf + n, KUNIT_PARAM_DESC_SIZE - n, "_%c%c%s%s%s",
			       kind[p->kind], order[p->order],
			       p->trim_head ? "h" : "", p->trim_tail ? "t" : "",
			       p->reversed ? "r" : "");
}

static void gen_build_shapes(void)
{
	struct rnd_state rnd;
	unsigned int i, k, nr;

	prandom_seed_state(&rnd, seed);
	for (i = 0; i < NR_GEN_SHAPES; i++) {
		struct vmap_shape *shape = &gen_shapes[i];

		memset(shape, 0, sizeof(*shape));
		nr = 1 + pick(&rnd, MAX_PIECES);
		shape->aligned_runs = true;
		for (k = 0; k < nr; k++) {
			struct piece *p = &shape->pieces[k];

			gen_piece(&rnd, p);
			if (p->trim_head || p->trim_tail)
				shape->aligned_runs = false;
			if (p->trim_head || p->trim_tail || p->reversed)
				shape->beyond_aux = true;
		}
		gen_name(gen_names[i], i, shape);
		shape->name = gen_names[i];
	}
}

/* One vmap()ed shape and what it was made of. */
struct vmap_case {
	const struct vmap_shape *shape;
	struct page **pages;
	unsigned int nr;
	struct page *heads[MAX_PIECES];	/* compound allocations */
	unsigned int head_orders[MAX_PIECES];
	unsigned int nr_heads;
	void *addr;
};

static unsigned int piece_order(const struct piece *p)
{
	switch (p->order) {
	case O_CONT:
		return cont_order();
	case O_PMD:
		return pmd_order();
	case O_TWO_PMD:
		return pmd_order() + 1;
	case O_HALF_PMD:
		return pmd_order() - 1;
	default:
		return 0;
	}
}

static unsigned long shape_max_pages(const struct vmap_shape *shape)
{
	unsigned long total = 0;
	int i;

	for (i = 0; i < MAX_PIECES && shape->pieces[i].kind; i++)
		total += 1UL << piece_order(&shape->pieces[i]);
	return total;
}

static void vmap_case_release(void *data)
{
	struct vmap_case *vc = data;
	unsigned int i;

	if (vc->addr)
		vunmap(vc->addr);
	for (i = 0; i < vc->nr; i++)
		if (!PageCompound(vc->pages[i]))
			__free_page(vc->pages[i]);
	for (i = 0; i < vc->nr_heads; i++)
		__free_pages(vc->heads[i], vc->head_orders[i]);
	kvfree(vc->pages);
}

/* Allocates one piece and appends the pages it contributes to vc->pages. */
static int add_piece(struct vmap_case *vc, const struct piece *p)
{
	unsigned int order = piece_order(p), n = 1U << order, i;
	gfp_t gfp = GFP_KERNEL | __GFP_NOWARN;
	struct page *page;

	if (p->kind == ORDER0) {
		page = alloc_page(GFP_KERNEL);
		if (!page)
			return -ENOMEM;
		vc->pages[vc->nr++] = page;
		return 0;
	}
	if (p->kind == COMPOUND) {
		page = alloc_pages(gfp | __GFP_COMP, order);
		if (!page)
			return -ENOMEM;
		vc->heads[vc->nr_heads] = page;
		vc->head_orders[vc->nr_heads++] = order;
		for (i = 0; i < n; i++)
			vc->pages[vc->nr++] = page + i;
		return 0;
	}
	/* SCATTERED: every other page of a chunk, so no two are adjacent. */
	if (p->kind == SCATTERED)
		n = 1U << ++order;
	page = alloc_pages(gfp, order);
	if (!page)
		return -ENOMEM;
	/* Split, not compound: the way rb_alloc_aux_page() makes AUX chunks. */
	split_page(page, order);
	for (i = 0; i < n; i++) {
		unsigned int k = p->reversed ? n - 1 - i : i;
		bool use = p->kind == SCATTERED ? !(k & 1) :
			   k >= p->trim_head && k < n - p->trim_tail;

		if (use)
			vc->pages[vc->nr++] = page + k;
		else
			__free_page(page + k);
	}
	return 0;
}

/*
 * Builds the shape of the current parameter and vmap()s it.  Skips when the
 * guest has too little memory or no free chunk of the order the shape needs.
 */
static struct vmap_case *vmap_case_create(struct kunit *test)
{
	const struct vmap_shape *shape = test->param_value;
	unsigned long max_pages = shape_max_pages(shape);
	struct vmap_case *vc;
	int i;

	for (i = 0; i < MAX_PIECES && shape->pieces[i].kind; i++)
		if (piece_order(&shape->pieces[i]) > MAX_PAGE_ORDER)
			kunit_skip(test, "a piece above MAX_PAGE_ORDER");
	if (max_pages * 2 > totalram_pages() / 4)
		kunit_skip(test, "not enough memory for this shape");

	vc = kunit_kzalloc(test, sizeof(*vc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, vc);
	vc->shape = shape;
	vc->pages = kvcalloc(max_pages * 2, sizeof(*vc->pages), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, vc->pages);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, vmap_case_release, vc));

	for (i = 0; i < MAX_PIECES && shape->pieces[i].kind; i++)
		if (add_piece(vc, &shape->pieces[i]))
			kunit_skip(test, "no free chunk of the order needed");

	vc->addr = vmap(vc->pages, vc->nr, VM_MAP, PAGE_KERNEL);
	KUNIT_ASSERT_NOT_NULL_MSG(test, vc->addr, "vmap() of %u pages failed",
				  vc->nr);
	return vc;
}

static unsigned long page_va(struct vmap_case *vc, unsigned int i)
{
	return (unsigned long)vc->addr + ((unsigned long)i << PAGE_SHIFT);
}

/* Length of the physically contiguous run of vc->pages from @i. */
static unsigned int run_length(struct vmap_case *vc, unsigned int i)
{
	unsigned long pfn = page_to_pfn(vc->pages[i]);
	unsigned int n = 1;

	while (i + n < vc->nr && page_to_pfn(vc->pages[i + n]) == pfn + n)
		n++;
	return n;
}

/*
 * Whether page @i of the run [@start, @start + @len) lies in a block of
 * 1 << @shift bytes that is aligned in both address spaces and inside the run.
 */
static bool in_block(struct vmap_case *vc, unsigned int start, unsigned int len,
		     unsigned int i, unsigned int shift)
{
	unsigned long size = 1UL << shift, va = page_va(vc, i);
	unsigned long into = (va & (size - 1)) >> PAGE_SHIFT, first;
	phys_addr_t pa;

	/* The block would begin before pages[0]: not in this run. */
	if (into > i)
		return false;
	first = i - into;
	if (first < start || first + (size >> PAGE_SHIFT) > start + len)
		return false;
	pa = PFN_PHYS(page_to_pfn(vc->pages[start]) + (first - start));
	return IS_ALIGNED(pa, size);
}

/* The granule the rules give page @i of run [@start, @start + @len). */
static enum granule model_granule(struct vmap_case *vc, unsigned int start,
				  unsigned int len, unsigned int i)
{
	unsigned int cont = model_cont_shift();

	if (model_pmd() && in_block(vc, start, len, i, PMD_SHIFT))
		return G_PMD;
	if (cont && in_block(vc, start, len, i, cont))
		return G_CONT;
	return G_PTE;
}

/* Whether a run of @len pages from @pfn holds an aligned 1 << @shift block. */
static bool run_fits(unsigned long pfn, unsigned int len, unsigned int shift)
{
	phys_addr_t start = PFN_PHYS(pfn), end = PFN_PHYS(pfn + len);

	return shift && ALIGN(start, 1UL << shift) + (1UL << shift) <= end;
}

/* The largest granule a run of @len pages from @pfn fits, as a shift. */
static unsigned int run_best_shift(unsigned long pfn, unsigned int len)
{
	unsigned int cont = model_cont_shift();

	if (model_pmd() && run_fits(pfn, len, PMD_SHIFT))
		return PMD_SHIFT;
	if (run_fits(pfn, len, cont))
		return cont;
	return PAGE_SHIFT;
}

static bool feature_present;

/*
 * Whether vmap() maps one naturally aligned chunk of 1 << @order pages with
 * anything larger than PTEs; -ENOMEM where no such chunk is free.
 */
static int probe_maps_large(unsigned int order)
{
	unsigned int i, n = 1U << order;
	struct page **pages;
	struct page *chunk;
	bool large = false;
	void *addr;

	if (order > MAX_PAGE_ORDER)
		return -ENOMEM;
	pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL);
	chunk = alloc_pages(GFP_KERNEL | __GFP_NOWARN, order);
	if (!pages || !chunk) {
		if (chunk)
			__free_pages(chunk, order);
		kvfree(pages);
		return -ENOMEM;
	}
	split_page(chunk, order);
	for (i = 0; i < n; i++)
		pages[i] = chunk + i;
	addr = vmap(pages, n, VM_MAP, PAGE_KERNEL);
	for (i = 0; addr && i < n && !large; i++)
		large = walk_kernel((unsigned long)addr +
				    ((unsigned long)i << PAGE_SHIFT)).granule > G_PTE;
	if (addr)
		vunmap(addr);
	for (i = 0; i < n; i++)
		__free_page(chunk + i);
	kvfree(pages);
	return large;
}

/*
 * Whether this kernel's vmap() maps anything large at all: vmap() one
 * naturally aligned chunk of each granule the model expects.  A granule
 * whose chunk is not free tells nothing: at 64K pages a PMD is 512 MiB,
 * seldom free in a test guest, and taking that for the feature's absence
 * skipped the cases the cont-PTE blocks decide.
 */
static int vmap_granule_suite_init(struct kunit_suite *suite)
{
	unsigned int shifts[] = { model_pmd() ? PMD_SHIFT : 0, model_cont_shift() };
	unsigned int i;

	gen_build_shapes();
	pr_info("vmap_granule: %u generated shapes, seed %lu (vmap_granule_kunit.seed= replays)\n",
		NR_GEN_SHAPES, seed);
	feature_present = false;
	for (i = 0; i < ARRAY_SIZE(shifts) && !feature_present; i++)
		if (shifts[i])
			feature_present = probe_maps_large(shifts[i] - PAGE_SHIFT) > 0;
	return 0;
}

/* Every page is mapped with the granule the rules give it. */
/* Translation entries of pages counted per granule. */
static unsigned int granule_entries(const unsigned int *pages)
{
	return (pages[G_PUD] >> (PUD_SHIFT - PAGE_SHIFT)) +
	       (pages[G_PMD] >> pmd_order()) + (pages[G_CONT] >> cont_order()) +
	       pages[G_PTE];
}

static void vmap_granule_map_test(struct kunit *test)
{
	struct vmap_case *vc = vmap_case_create(test);
	unsigned int start, len, i, bad = 0, first_bad = 0, best = PAGE_SHIFT;
	unsigned int seen[NR_GRANULES] = {}, rule[NR_GRANULES] = {}, larger = 0;
	enum granule found = G_NONE, expected = G_NONE;
	bool any_large = false, arch_block = false, misaligned;

	for (start = 0; start < vc->nr; start += len) {
		len = run_length(vc, start);
		best = max(best, run_best_shift(page_to_pfn(vc->pages[start]), len));
		arch_block |= run_fits(page_to_pfn(vc->pages[start]), len,
				       arch_block_shift());
		for (i = start; i < start + len; i++) {
			enum granule g = walk_kernel(page_va(vc, i)).granule;
			enum granule m = model_granule(vc, start, len, i);

			any_large |= g > G_PTE;
			larger += g > m;
			seen[g]++;
			rule[m]++;
			if (g != m && !bad++) {
				first_bad = i;
				found = g;
				expected = m;
			}
		}
	}
	/*
	 * The translation entries used (one per block, one per PTE) and as
	 * many as the rule allows for these pages: what a mapping costs.
	 */
	kunit_info(test, "pages %u: PMD %u cont-PTE %u PTE %u: entries %u, by the rule %u\n",
		   vc->nr, seen[G_PMD], seen[G_CONT], seen[G_PTE],
		   granule_entries(seen), granule_entries(rule));
	misaligned = vc->shape->aligned_runs &&
		     !IS_ALIGNED((unsigned long)vc->addr, 1UL << best);
	/*
	 * Where vmap() maps base pages only, a shape with a run that permits
	 * a block is skipped whether or not its area happened to land where
	 * the model expects PTEs: where the VA allocator puts an area is luck,
	 * and two boots of one kernel must give one result.  The block is the
	 * architecture's, not the hooks': 6.12's arm64 had no cont-PTE hook,
	 * and its stock kernel must skip what a later stock kernel skips.
	 */
	if (!strict && !feature_present && !any_large &&
	    (bad || misaligned || arch_block))
		kunit_skip(test, BASE_PAGES_ONLY);
	if (!bad && !misaligned)
		return;
	/* The shape as it came (its first runs), so that it can be rebuilt. */
	kunit_info(test, "%u pages, in runs:\n", vc->nr);
	for (start = 0, i = 0; start < vc->nr; start += len, i++) {
		len = run_length(vc, start);
		if (i < 16)
			kunit_info(test, "  pages[%u..%u]: pfn %#lx\n", start,
				   start + len - 1, page_to_pfn(vc->pages[start]));
	}
	if (i > 16)
		kunit_info(test, "  and %u runs more\n", i - 16);
	/*
	 * rb_alloc_aux() gives whole, naturally aligned chunks in ascending
	 * page order, and after a fallback asks the highest order again: a
	 * difference on such pages costs real trace buffers translation
	 * entries.  Other shapes hold vmap() to the rule beyond what AUX
	 * callers need (the posted series relies on descending orders).
	 */
	if (!strict && vc->shape->beyond_aux)
		kunit_skip(test, BEYOND_AUX);
	/*
	 * nohugevmalloc is documented for huge vmalloc mappings; mapping
	 * caller pages larger all the same costs no entries: strict only.
	 */
	if (!strict && !vmap_allow_huge && !misaligned && larger == bad)
		kunit_skip(test, NOHUGE_IGNORED);
	KUNIT_EXPECT_FALSE_MSG(test, misaligned,
			       "area starts %#lx into the %lu-byte block its runs can use",
			       (unsigned long)vc->addr & ((1UL << best) - 1),
			       1UL << best);
	KUNIT_EXPECT_EQ_MSG(test, 0, bad,
			    "page %u of %u: found %s, expected %s (%u pages differ): %u translation entries where %u do",
			    first_bad, vc->nr, granule_names[found],
			    granule_names[expected], bad,
			    granule_entries(seen), granule_entries(rule));
}

#define HOOKS_OFFER_LESS "hooks offer less than the architecture"

/*
 * The hooks offer vmap() what the architecture can map (arch_wants_pmd(),
 * arch_cont_shift()).  Less than that is reported (skipped with one
 * reason) by default and fails when strict.
 */
static void vmap_granule_arch_test(struct kunit *test)
{
	bool want_pmd = arch_wants_pmd(), pmd = arch_vmap_pmd_supported(PAGE_KERNEL);
	unsigned int want_cont = arch_cont_shift(), cont = 0;

	if (!vmap_allow_huge)
		kunit_skip(test, "nohugevmalloc");
	if (!IS_ENABLED(CONFIG_ARM64) && !IS_ENABLED(CONFIG_X86_64))
		kunit_skip(test, "no granules stated for this architecture");
#ifdef CONFIG_ARM64
	cont = arch_vmap_pte_supported_shift(PMD_SIZE);
#endif
	kunit_info(test, "PMD: architecture %s, hook %s; PTE-level block shift: architecture %u, hook %u\n",
		   want_pmd ? "yes" : "not required", pmd ? "yes" : "no",
		   want_cont, cont);
	if ((pmd || !want_pmd) && cont == want_cont)
		return;
	if (!strict)
		kunit_skip(test, feature_present ? HOOKS_OFFER_LESS : BASE_PAGES_ONLY);
	KUNIT_EXPECT_TRUE_MSG(test, pmd || !want_pmd,
			      "arch_vmap_pmd_supported() refuses PMD blocks");
	KUNIT_EXPECT_EQ_MSG(test, want_cont, cont,
			    "arch_vmap_pte_supported_shift() offers shift %u, the architecture %u",
			    cont, want_cont);
}

/* Every address of the area resolves to its own page. */
static void vmap_granule_lookup_test(struct kunit *test)
{
	struct vmap_case *vc = vmap_case_create(test);
	unsigned int i;

	for (i = 0; i < vc->nr; i++)
		if (vmalloc_to_page((void *)page_va(vc, i)) != vc->pages[i])
			break;
	KUNIT_EXPECT_EQ_MSG(test, vc->nr, i, "page %u resolves elsewhere", i);
}

/* Data written through the vmap reads back through the linear map and back. */
static void vmap_granule_data_test(struct kunit *test)
{
	struct vmap_case *vc = vmap_case_create(test);
	unsigned int i, bad = 0;

	for (i = 0; i < vc->nr; i++) {
		u64 *alias = (u64 *)page_va(vc, i);
		u64 *lin = page_address(vc->pages[i]);
		u64 tag = ((u64)page_to_pfn(vc->pages[i]) << 16) | i;

		WRITE_ONCE(alias[0], tag);
		WRITE_ONCE(lin[PAGE_SIZE / sizeof(u64) - 1], ~tag);
		if (READ_ONCE(lin[0]) != tag ||
		    READ_ONCE(alias[PAGE_SIZE / sizeof(u64) - 1]) != ~tag)
			bad++;
	}
	KUNIT_EXPECT_EQ_MSG(test, 0, bad, "pages whose data differ between mappings");
}

/* vmap() maps with pgprot_nx(): no page of the area is executable. */
static void vmap_granule_nx_test(struct kunit *test)
{
	struct vmap_case *vc;
	unsigned int i;

	if (!IS_ENABLED(CONFIG_ARM64) && !IS_ENABLED(CONFIG_X86))
		kunit_skip(test, "no NX check for this architecture");
#ifdef CONFIG_X86
	if (!(__supported_pte_mask & _PAGE_NX))
		kunit_skip(test, "no NX on this CPU");
#endif
	vc = vmap_case_create(test);
	for (i = 0; i < vc->nr; i++)
		if (!walk_kernel(page_va(vc, i)).nx)
			break;
	KUNIT_EXPECT_EQ_MSG(test, vc->nr, i, "page %u is executable", i);
}

/* vunmap() leaves no valid entry anywhere in the area. */
static void vmap_granule_unmap_test(struct kunit *test)
{
	struct vmap_case *vc = vmap_case_create(test);
	unsigned long start = (unsigned long)vc->addr;
	unsigned int i;

	vunmap(vc->addr);
	vc->addr = NULL;
	for (i = 0; i < vc->nr; i++)
		if (walk_kernel(start + ((unsigned long)i << PAGE_SHIFT)).granule != G_NONE)
			break;
	KUNIT_EXPECT_EQ_MSG(test, vc->nr, i, "page %u still mapped", i);
}

/*
 * A permission change on one page inside a block either splits the block,
 * leaving that page changed and the rest as before, or is refused with the
 * mapping untouched.  The data must survive either way.
 */
static void vmap_granule_set_memory_test(struct kunit *test)
{
	struct vmap_case *vc = vmap_case_create(test);
	unsigned int target = min(vc->nr - 1, 1U), i, bad = 0;
	unsigned long va = page_va(vc, target);
	struct leaf before, after;
	int ret;

	for (i = 0; i < vc->nr; i++)
		*(u64 *)page_va(vc, i) = i;
	before = walk_kernel(va);
	ret = set_memory_ro(va, 1);
	after = walk_kernel(va);
	if (ret) {
		KUNIT_EXPECT_EQ_MSG(test, before.granule, after.granule,
				    "refused (%d) but the mapping changed", ret);
	} else {
		KUNIT_EXPECT_FALSE_MSG(test, after.writable,
				       "set_memory_ro() left the page writable");
		KUNIT_EXPECT_LE_MSG(test, after.granule, G_CONT,
				    "set_memory_ro() of one page left a %s",
				    granule_names[after.granule]);
	}
	for (i = 0; i < vc->nr; i++)
		if (vmalloc_to_page((void *)page_va(vc, i)) != vc->pages[i] ||
		    READ_ONCE(*(u64 *)page_va(vc, i)) != i)
			bad++;
	KUNIT_EXPECT_EQ_MSG(test, 0, bad, "pages changed by set_memory_ro()");
	if (!ret) {
		KUNIT_ASSERT_EQ(test, 0, set_memory_rw(va, 1));
		KUNIT_EXPECT_TRUE(test, walk_kernel(va).writable);
	}
	ret = set_memory_nx(va, 1);
	KUNIT_EXPECT_TRUE(test, walk_kernel(va).nx);
	for (i = 0; i < vc->nr; i++)
		if (READ_ONCE(*(u64 *)page_va(vc, i)) != i)
			bad++;
	KUNIT_EXPECT_EQ_MSG(test, 0, bad, "pages changed by set_memory_nx() (%d)",
			    ret);
}

/*
 * Not asserted: the time of vmap() for about 100 MiB of order-8 chunks and
 * for a single page, for comparing kernels (scripts/ print the ratios).
 */
#define BENCH_ORDER	8
#define BENCH_ROUNDS	5
#define BENCH_SINGLE	1000

static void vmap_granule_bench_test(struct kunit *test)
{
	unsigned int chunks = (SZ_1M * 100UL >> PAGE_SHIFT) >> BENCH_ORDER;
	unsigned int n = chunks << BENCH_ORDER, i, r;
	struct vmap_case *vc;
	u64 t, big = U64_MAX, single;
	void *addr;

	if (n > totalram_pages() / 4)
		kunit_skip(test, "not enough memory for this shape");
	vc = kunit_kzalloc(test, sizeof(*vc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, vc);
	vc->pages = kvcalloc(n, sizeof(*vc->pages), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, vc->pages);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, vmap_case_release, vc));
	for (i = 0; i < chunks; i++) {
		struct page *page = alloc_pages(GFP_KERNEL | __GFP_NOWARN,
						BENCH_ORDER);
		unsigned int k;

		if (!page)
			kunit_skip(test, "no free chunk of the order needed");
		split_page(page, BENCH_ORDER);
		for (k = 0; k < (1U << BENCH_ORDER); k++)
			vc->pages[vc->nr++] = page + k;
	}
	for (r = 0; r < BENCH_ROUNDS; r++) {
		t = ktime_get_ns();
		addr = vmap(vc->pages, n, VM_MAP, PAGE_KERNEL);
		t = ktime_get_ns() - t;
		KUNIT_ASSERT_NOT_NULL(test, addr);
		vunmap(addr);
		big = min(big, t);
	}
	t = ktime_get_ns();
	for (r = 0; r < BENCH_SINGLE; r++) {
		addr = vmap(vc->pages, 1, VM_MAP, PAGE_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, addr);
		vunmap(addr);
	}
	single = (ktime_get_ns() - t) / BENCH_SINGLE;
	kunit_info(test, "vmap_bench: order8_mib=%u vmap_order8_ns=%llu vmap_vunmap_1page_ns=%llu\n",
		   n >> (20 - PAGE_SHIFT), big, single);
}

static struct kunit_case vmap_granule_test_cases[] = {
	KUNIT_CASE_PARAM(vmap_granule_map_test, vmap_shape_gen_params),
	KUNIT_CASE_PARAM(vmap_granule_lookup_test, vmap_shape_gen_params),
	KUNIT_CASE_PARAM(vmap_granule_data_test, vmap_shape_gen_params),
	KUNIT_CASE_PARAM(vmap_granule_nx_test, vmap_shape_gen_params),
	KUNIT_CASE_PARAM(vmap_granule_unmap_test, vmap_shape_gen_params),
	KUNIT_CASE_PARAM(vmap_granule_set_memory_test, vmap_shape_gen_params),
	KUNIT_CASE_PARAM(vmap_granule_map_test, gen_shape_gen_params),
	KUNIT_CASE(vmap_granule_arch_test),
	KUNIT_CASE_SLOW(vmap_granule_bench_test),
	{}
};

static struct kunit_suite vmap_granule_test_suite = {
	.name = "vmap_granule",
	.suite_init = vmap_granule_suite_init,
	.test_cases = vmap_granule_test_cases,
};

kunit_test_suite(vmap_granule_test_suite);

MODULE_DESCRIPTION("KUnit tests for the page-table granules of vmap()");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");
