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
 * granule of every page against a model computed page by page from the
 * architecture's blocks (never from the hooks under test, which are checked
 * against the architecture on their own); for the named shapes, the
 * entries written out in a table per page size, which the model must agree
 * with too; that every address resolves to its page; that data written
 * through either mapping reads back through the other; that the mapping is
 * not executable; that nothing is left mapped after vunmap(); that a
 * permission change on one page is refused or splits, as the architecture
 * says, with the data intact.
 *
 * On a kernel whose vmap() maps base pages only the granule cases are
 * skipped with one constant reason; vmap_granule_kunit.strict=1 turns that
 * into failures that name the granule found and the one expected.  Two
 * other differences are strict only, as they cost perf AUX buffers
 * nothing: generated shapes no AUX buffer has (trimmed or reversed
 * pieces), and large mappings after nohugevmalloc.
 */

#include <kunit/test.h>
#include <linux/ctype.h>
#include <linux/gfp.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pagewalk.h>
#include <linux/pgtable.h>
#include <linux/prandom.h>
#include <linux/set_memory.h>
#include <linux/string.h>
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
#define NO_ARCH_RULES "no granules stated for this architecture"
#define BEYOND_AUX "not an AUX buffer shape, strict only"
#define NOHUGE_IGNORED "vmap() maps large after nohugevmalloc, strict only"

enum granule { G_NONE, G_PTE, G_CONT, G_PMD, G_PUD, NR_GRANULES };

static const char * const granule_names[NR_GRANULES] = {
	"none", "PTE", "cont-PTE", "PMD", "PUD",
};

/*
 * What the architecture itself can map vmap() areas with, from its own
 * constants, never from the hooks under test: arm64 PMD sections and
 * cont-PTE blocks of CONT_PTE_SHIFT at every page size; x86-64 2M pages,
 * which 4-level and 5-level paging always have (PSE is a 32-bit paging
 * feature; UML's CONFIG_X86_64 has no kernel page tables of its own here).
 */
static bool arch_states_granules(void)
{
#if defined(CONFIG_ARM64) || (defined(CONFIG_X86_64) && !defined(CONFIG_UML))
	return true;
#else
	return false;
#endif
}

static bool arch_offers_pmd(void)
{
	return arch_states_granules();
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
 * The one refusal of an offered block a hook may make: arm64 kernels whose
 * arch_vmap_pmd_supported() says no with PTDUMP_DEBUGFS, as their
 * asm/vmalloc.h documents ("SW table walks can't handle removal of
 * intermediate entries").  nohugevmalloc is the other, and vmap_allow_huge
 * says so.
 */
static bool pmd_refusal_documented(void)
{
	return IS_ENABLED(CONFIG_ARM64) && IS_ENABLED(CONFIG_PTDUMP_DEBUGFS) &&
	       !arch_vmap_pmd_supported(PAGE_KERNEL);
}

/*
 * The blocks the model expects vmap() to map with: what the architecture
 * offers, less what nohugevmalloc or a documented refusal turns off.  A
 * hook that refuses for no documented reason is not followed: the pages it
 * costs fail.
 */
static bool model_pmd(void)
{
	return vmap_allow_huge && arch_offers_pmd() && !pmd_refusal_documented();
}

static unsigned int model_cont_shift(void)
{
	return vmap_allow_huge ? arch_cont_shift() : 0;
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
	return arch_offers_pmd() ? PMD_SHIFT : 0;
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
	unsigned int piece_start[MAX_PIECES];	/* index of each piece's first page */
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
static struct vmap_case *vmap_shape_create(struct kunit *test,
					   const struct vmap_shape *shape)
{
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

	for (i = 0; i < MAX_PIECES && shape->pieces[i].kind; i++) {
		vc->piece_start[i] = vc->nr;
		if (add_piece(vc, &shape->pieces[i]))
			kunit_skip(test, "no free chunk of the order needed");
	}

	vc->addr = vmap(vc->pages, vc->nr, VM_MAP, PAGE_KERNEL);
	KUNIT_ASSERT_NOT_NULL_MSG(test, vc->addr, "vmap() of %u pages failed",
				  vc->nr);
	return vc;
}

static struct vmap_case *vmap_case_create(struct kunit *test)
{
	return vmap_shape_create(test, test->param_value);
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
 * contig[i]: how many pages from pages[i] on follow each other in physical
 * memory (with @apart, never past the end of the piece pages[i] came from).
 * The model asks it of single pages; it never splits pages[] into runs the
 * way a vmap() implementation may.
 */
static unsigned int *contig_of(struct kunit *test, struct vmap_case *vc,
			       bool apart)
{
	unsigned int *contig = kunit_kcalloc(test, vc->nr, sizeof(*contig),
					     GFP_KERNEL);
	unsigned int i, k;
	bool next;

	KUNIT_ASSERT_NOT_NULL(test, contig);
	for (i = vc->nr; i--; ) {
		next = i + 1 < vc->nr &&
		       page_to_pfn(vc->pages[i + 1]) == page_to_pfn(vc->pages[i]) + 1;
		for (k = 1; apart && k < MAX_PIECES; k++)
			if (vc->piece_start[k] == i + 1)
				next = false;
		contig[i] = next ? contig[i + 1] + 1 : 1;
	}
	return contig;
}

static unsigned int *contig_pages(struct kunit *test, struct vmap_case *vc)
{
	return contig_of(test, vc, false);
}

/*
 * Whether the naturally aligned block of 1 << @shift bytes around page @i,
 * the area starting at @va0, lies inside pages[] on physically contiguous
 * pages whose first is aligned the same: the condition for one entry to
 * map the whole block.
 */
static bool in_block(struct vmap_case *vc, const unsigned int *contig,
		     unsigned long va0, unsigned int i, unsigned int shift)
{
	unsigned long n = 1UL << (shift - PAGE_SHIFT);
	unsigned long into = ((va0 >> PAGE_SHIFT) + i) & (n - 1), first;

	if (into > i)
		return false;
	first = i - into;
	return first + n <= vc->nr && contig[first] >= n &&
	       IS_ALIGNED(PFN_PHYS(page_to_pfn(vc->pages[first])), 1UL << shift);
}

/*
 * The granule the rule gives page @i of an area at @va0: the largest block
 * the model offers whose aligned block around the page is in_block().
 */
static enum granule model_granule(struct vmap_case *vc,
				  const unsigned int *contig, unsigned long va0,
				  unsigned int i)
{
	unsigned int cont = model_cont_shift();

	if (model_pmd() && in_block(vc, contig, va0, i, PMD_SHIFT))
		return G_PMD;
	if (cont && in_block(vc, contig, va0, i, cont))
		return G_CONT;
	return G_PTE;
}

/*
 * Whether some page of pages[] starts a physically aligned, contiguous
 * block of 1 << @shift bytes: wherever the area lands, such pages permit a
 * block, and an area aligned for them gets it.
 */
static bool holds_block(struct vmap_case *vc, const unsigned int *contig,
			unsigned int shift)
{
	unsigned long n;
	unsigned int i;

	if (!shift)
		return false;
	n = 1UL << (shift - PAGE_SHIFT);
	for (i = 0; i < vc->nr; i++)
		if (contig[i] >= n &&
		    IS_ALIGNED(PFN_PHYS(page_to_pfn(vc->pages[i])), 1UL << shift))
			return true;
	return false;
}

/* The largest granule some page's block permits, as a shift. */
static unsigned int best_shift(struct vmap_case *vc, const unsigned int *contig)
{
	if (model_pmd() && holds_block(vc, contig, PMD_SHIFT))
		return PMD_SHIFT;
	if (holds_block(vc, contig, model_cont_shift()))
		return model_cont_shift();
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
	const unsigned int *contig = contig_pages(test, vc);
	unsigned long va0 = (unsigned long)vc->addr;
	unsigned int start, len, i, bad = 0, first_bad = 0, best;
	unsigned int seen[NR_GRANULES] = {}, rule[NR_GRANULES] = {}, larger = 0;
	enum granule found = G_NONE, expected = G_NONE;
	bool any_large = false, arch_block, misaligned;

	best = best_shift(vc, contig);
	arch_block = holds_block(vc, contig, arch_block_shift());
	for (i = 0; i < vc->nr; i++) {
		enum granule g = walk_kernel(page_va(vc, i)).granule;
		enum granule m = model_granule(vc, contig, va0, i);

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
	 * architecture's, not the hooks': a kernel without the cont-PTE hook
	 * must skip what a kernel with it skips.
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

/*
 * The hooks offer vmap() what the architecture can map (arch_offers_pmd(),
 * arch_cont_shift()), or refuse a PMD block for the documented reason.
 * Less than that fails where vmap() maps large at all: the model (which
 * never asks the hooks) then expects blocks the kernel does not map.  A
 * kernel whose vmap() maps base pages only skips, with the reason strict
 * turns into a failure.
 */
static void vmap_granule_arch_test(struct kunit *test)
{
	bool want_pmd = arch_offers_pmd(), pmd = arch_vmap_pmd_supported(PAGE_KERNEL);
	unsigned int want_cont = arch_cont_shift(), cont = 0;

	if (!arch_states_granules())
		kunit_skip(test, NO_ARCH_RULES);
	if (!vmap_allow_huge)
		kunit_skip(test, "nohugevmalloc");
#ifdef CONFIG_ARM64
	cont = arch_vmap_pte_supported_shift(PMD_SIZE);
#endif
	kunit_info(test, "PMD: architecture %s, hook %s%s; PTE-level block shift: architecture %u, hook %u\n",
		   want_pmd ? "yes" : "no", pmd ? "yes" : "no",
		   pmd_refusal_documented() ? " (documented refusal)" : "",
		   want_cont, cont);
	if ((pmd || !want_pmd || pmd_refusal_documented()) && cont == want_cont)
		return;
	if (!strict && !feature_present)
		kunit_skip(test, BASE_PAGES_ONLY);
	KUNIT_EXPECT_TRUE_MSG(test, pmd || !want_pmd || pmd_refusal_documented(),
			      "arch_vmap_pmd_supported() refuses PMD blocks");
	KUNIT_EXPECT_EQ_MSG(test, want_cont, cont,
			    "arch_vmap_pte_supported_shift() offers shift %u, the architecture %u",
			    cont, want_cont);
}

/*
 * The named shapes' mappings, written out from the architecture's blocks
 * for each configuration: arm64 at 4K (PMD 512 pages, cont-PTE 16), 16K
 * (2048, 128) and 64K (8192, 32), and x86-64 (PMD 512 pages, no PTE-level
 * block; its "cont" pieces are 16 pages).  Each string lists the entries in
 * address order, a letter for the granule and the count of entries in a
 * row: P PMD block, C cont-PTE block, T PTE.  A row holds for any area
 * aligned to @align (the shape's AUX-like runs require it; for the others
 * it is what the row assumes).  NULL: the shape cannot be built there (two
 * PMDs above MAX_PAGE_ORDER at 16K and 64K).
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
};

KUNIT_ARRAY_PARAM_DESC(vmap_table, vmap_table, shape);

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

/*
 * The entries that map @g[0..@nr) of an area at @va0, in the table's
 * notation; an entry starts at a PTE, or where a block's granule changes
 * or its address is aligned to the block.  Returns the number of entries.
 */
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

/*
 * A named shape against its row: the model (for an area at 0, aligned to
 * every block) must give the row's entries, and so must the kernel where
 * its area is aligned as the row assumes.  Rows state large vmap, so they
 * are not for nohugevmalloc or a documented PMD refusal.
 */
static void vmap_granule_table_test(struct kunit *test)
{
	const struct vmap_table_row *row = test->param_value;
	const struct vmap_shape *shape = shape_named(row->shape);
	char table[ENTRIES_LEN], model[ENTRIES_LEN], kernel[ENTRIES_LEN];
	unsigned int i, tries, nt, nm, nk;
	int config = table_config();
	const unsigned int *contig, *apart;
	struct vmap_case *vc;
	enum granule *g, *m;
	bool any_large = false, touch = false;

	KUNIT_ASSERT_NOT_NULL_MSG(test, shape, "no shape %s", row->shape);
	if (!arch_states_granules())
		kunit_skip(test, NO_ARCH_RULES);
	if (config < 0)
		kunit_skip(test, "no table for this page size");
	if (!row->entries[config])
		kunit_skip(test, "a piece above MAX_PAGE_ORDER");
	if (!vmap_allow_huge)
		kunit_skip(test, "nohugevmalloc");
	if (pmd_refusal_documented())
		kunit_skip(test, "PMD blocks refused as documented");
	strscpy(table, row->entries[config], sizeof(table));
	/*
	 * Rows count each piece apart: two pieces the page allocator put
	 * side by side may form a larger block.  The pages of a try stay
	 * held, so the next try gets others.
	 */
	for (tries = 0; tries < 3; tries++) {
		vc = vmap_shape_create(test, shape);
		contig = contig_pages(test, vc);
		apart = contig_of(test, vc, true);
		g = kunit_kcalloc(test, vc->nr, sizeof(*g), GFP_KERNEL);
		m = kunit_kcalloc(test, vc->nr, sizeof(*m), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, g);
		KUNIT_ASSERT_NOT_NULL(test, m);
		touch = false;
		for (i = 0; i < vc->nr; i++) {
			m[i] = model_granule(vc, apart, 0, i);
			touch |= m[i] != model_granule(vc, contig, 0, i);
		}
		if (!touch)
			break;
	}
	if (touch)
		kunit_skip(test, "pieces physically adjacent in every try");
	for (i = 0; i < vc->nr; i++) {
		g[i] = walk_kernel(page_va(vc, i)).granule;
		any_large |= g[i] > G_PTE;
	}
	nm = entries_string(model, m, vc->nr, 0);
	nk = entries_string(kernel, g, vc->nr, (unsigned long)vc->addr);
	nt = table_entries(table);
	kunit_info(test, "table %s (%u entries), model %s (%u), kernel %s (%u)\n",
		   table, nt, model, nm, kernel, nk);
	KUNIT_EXPECT_STREQ_MSG(test, table, model,
			       "the table and the model disagree on %s",
			       row->shape);
	if (!strcmp(table, kernel))
		return;
	if (!strict && !feature_present && !any_large)
		kunit_skip(test, BASE_PAGES_ONLY);
	if (!shape->aligned_runs &&
	    !IS_ALIGNED((unsigned long)vc->addr, granule_size(row->align)))
		kunit_skip(test, "area not aligned as the table assumes");
	KUNIT_EXPECT_STREQ_MSG(test, table, kernel,
			       "%s: the table has %u entries, the kernel maps %u",
			       row->shape, nt, nk);
}

/* Every named shape has its row, and every row its shape. */
static void vmap_granule_table_rows_test(struct kunit *test)
{
	unsigned int i, k, rows;

	for (i = 0; i < ARRAY_SIZE(vmap_shapes); i++) {
		for (k = 0, rows = 0; k < ARRAY_SIZE(vmap_table); k++)
			rows += !strcmp(vmap_table[k].shape, vmap_shapes[i].name);
		KUNIT_EXPECT_EQ_MSG(test, 1, rows, "rows for %s",
				    vmap_shapes[i].name);
	}
	for (k = 0; k < ARRAY_SIZE(vmap_table); k++)
		KUNIT_EXPECT_NOT_NULL_MSG(test, shape_named(vmap_table[k].shape),
					  "row %s names no shape",
					  vmap_table[k].shape);
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

	if (!arch_states_granules())
		kunit_skip(test, NO_ARCH_RULES);
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

/* Whether every page of the area still holds its index and its page. */
static unsigned int pages_changed(struct vmap_case *vc)
{
	unsigned int i, bad = 0;

	for (i = 0; i < vc->nr; i++)
		if (vmalloc_to_page((void *)page_va(vc, i)) != vc->pages[i] ||
		    READ_ONCE(*(u64 *)page_va(vc, i)) != i)
			bad++;
	return bad;
}

/*
 * A permission change on one page of a vmap() area, inside whatever block
 * maps it.  arm64 refuses every area that is not VM_ALLOC with -EINVAL
 * (change_memory_common(): splitting a live block could conflict in the
 * TLB), so the mapping must stay as it was.  x86 splits the block: the page
 * changes, the rest keeps its data.  Other architectures state nothing.
 */
static void vmap_granule_set_memory_test(struct kunit *test)
{
	bool refuses = IS_ENABLED(CONFIG_ARM64);
	struct vmap_case *vc;
	struct leaf before, after;
	unsigned int target, i;
	unsigned long va;
	int ret;

	if (!arch_states_granules())
		kunit_skip(test, NO_ARCH_RULES);
	/* set_memory_*() are not exported: only a built-in suite calls them. */
	if (!IS_BUILTIN(CONFIG_VMAP_GRANULE_KUNIT_TEST))
		kunit_skip(test, "set_memory_*() not exported to modules");
	vc = vmap_case_create(test);
	target = min(vc->nr - 1, 1U);
	va = page_va(vc, target);
	for (i = 0; i < vc->nr; i++)
		*(u64 *)page_va(vc, i) = i;
	before = walk_kernel(va);
	ret = set_memory_ro(va, 1);
	after = walk_kernel(va);
	if (refuses) {
		KUNIT_EXPECT_EQ_MSG(test, -EINVAL, ret,
				    "set_memory_ro() of a vmap() area");
		KUNIT_EXPECT_EQ(test, before.granule, after.granule);
		KUNIT_EXPECT_EQ(test, before.writable, after.writable);
	} else {
		KUNIT_EXPECT_EQ_MSG(test, 0, ret, "set_memory_ro()");
		KUNIT_EXPECT_FALSE_MSG(test, after.writable,
				       "set_memory_ro() left the page writable");
		KUNIT_EXPECT_LE_MSG(test, after.granule, G_PTE,
				    "set_memory_ro() of one page left a %s",
				    granule_names[after.granule]);
		KUNIT_EXPECT_EQ(test, 0, set_memory_rw(va, 1));
		KUNIT_EXPECT_TRUE(test, walk_kernel(va).writable);
	}
	KUNIT_EXPECT_EQ_MSG(test, 0, pages_changed(vc),
			    "pages changed by set_memory_ro()");
	before = walk_kernel(va);
	ret = set_memory_nx(va, 1);
	after = walk_kernel(va);
	KUNIT_EXPECT_EQ_MSG(test, refuses ? -EINVAL : 0, ret, "set_memory_nx()");
	KUNIT_EXPECT_EQ(test, before.granule, after.granule);
	KUNIT_EXPECT_TRUE(test, after.nx);
	KUNIT_EXPECT_EQ_MSG(test, 0, pages_changed(vc),
			    "pages changed by set_memory_nx()");
}

/*
 * Not asserted: the time of vmap() for about 100 MiB of order-8 chunks and
 * for a single page, for comparing kernels.
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
	KUNIT_CASE_PARAM(vmap_granule_table_test, vmap_table_gen_params),
	KUNIT_CASE(vmap_granule_table_rows_test),
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
