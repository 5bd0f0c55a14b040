// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the page-table granules vmap() maps pages with: each
 * physically contiguous run (compound or split, as perf AUX chunks) with the
 * largest block its length and alignment allow.  Each case vmap()s a shape of
 * vmap_granule_kunit.h and checks its granules against the literal table, or
 * lookup, data, NX, vunmap() and set_memory_*().  Where vmap() maps base
 * pages only, granule cases skip unless vmap_granule_kunit.strict=1.
 */

#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pagewalk.h>
#include <linux/pgtable.h>
#include <linux/set_memory.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "../internal.h"
#include "vmap_granule_kunit.h"

/*
 * A tree whose vmap() maps contiguous runs large: fail, not skip, where
 * vmap() maps smaller than the rules say.
 */
static bool strict;
module_param(strict, bool, 0444);
MODULE_PARM_DESC(strict, "Fail, not skip, where vmap() maps smaller than a run allows");

#define BASE_PAGES_ONLY "vmap() maps base pages only"
#define NO_ARCH_RULES "no granules stated for this architecture"
#define NOHUGE_IGNORED "vmap() maps large after nohugevmalloc, strict only"

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

/* The leaf mapping an address: a PUD/PMD block, or a PTE (maybe cont). */
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

/* Lockless: the test owns the area, nothing frees its page tables. */
static struct leaf walk_kernel(unsigned long va)
{
	struct leaf leaf = { G_NONE };

	va &= PAGE_MASK;
	walk_kernel_page_table_range_lockless(va, va + PAGE_SIZE, &leaf_ops,
					      NULL, &leaf);
	return leaf;
}

KUNIT_ARRAY_PARAM_DESC(vmap_shape, vmap_shapes, name);
KUNIT_ARRAY_PARAM_DESC(vmap_table, vmap_table, shape);

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

/* Builds and vmap()s @shape; skips when its memory is not to be had. */
static struct vmap_case *vmap_shape_create(struct kunit *test,
					   const struct vmap_shape *shape)
{
	unsigned long max_pages = shape_max_pages(shape);
	struct vmap_case *vc;
	struct page **pages;
	unsigned int order;
	int i;

	for (i = 0; i < MAX_PIECES && shape->pieces[i].kind; i++) {
		order = piece_order(&shape->pieces[i]);
		/* A scattered piece: every other page of twice its order. */
		if (shape->pieces[i].kind == SCATTERED)
			order++;
		if (order > MAX_PAGE_ORDER)
			kunit_skip(test, "a piece above MAX_PAGE_ORDER");
	}
	if (max_pages * 2 > totalram_pages() / 4)
		kunit_skip(test, "not enough memory for this shape");
	vc = kunit_kzalloc(test, sizeof(*vc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, vc);
	vc->shape = shape;
	vc->pages = kvcalloc(max_pages, sizeof(*vc->pages), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, vc->pages);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, vmap_case_release, vc));
	for (i = 0; i < MAX_PIECES && shape->pieces[i].kind; i++) {
		vc->piece_start[i] = vc->nr;
		if (add_piece(vc, &shape->pieces[i]))
			kunit_skip(test, "no free chunk of the order needed");
	}
	/* Exactly as long as its pages: vmap() may read no slot past them. */
	pages = kvmalloc_array(vc->nr, sizeof(*pages), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	memcpy(pages, vc->pages, vc->nr * sizeof(*pages));
	kvfree(vc->pages);
	vc->pages = pages;
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

/*
 * Whether two chunks, each smaller than a PMD and together as large, sit
 * physically end to end: they could share a PMD the table counts apart.
 */
static bool chunks_touch(struct vmap_case *vc)
{
	const struct piece *p = vc->shape->pieces;
	unsigned int k, i, a, b;

	for (k = 1; k < MAX_PIECES && p[k].kind; k++) {
		i = vc->piece_start[k];
		a = piece_order(&p[k - 1]);
		b = piece_order(&p[k]);
		if (p[k - 1].kind != ORDER0 && p[k].kind != ORDER0 &&
		    a < pmd_order() && b < pmd_order() &&
		    (1UL << a) + (1UL << b) >= (1UL << pmd_order()) &&
		    i && i < vc->nr &&
		    page_to_pfn(vc->pages[i]) == page_to_pfn(vc->pages[i - 1]) + 1)
			return true;
	}
	return false;
}

static bool feature_present;
/* Whether vmap() maps an aligned 1 << @order chunk larger than PTEs. */
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
 * Probes whether vmap() maps anything large, one chunk per expected granule;
 * a chunk not free (a 512 MiB PMD at 64K pages) tells nothing.
 */
static int vmap_granule_suite_init(struct kunit_suite *suite)
{
	unsigned int shifts[] = { arch_states_granules() ? PMD_SHIFT : 0,
				  arch_cont_shift() };
	unsigned int i;

	feature_present = false;
	for (i = 0; i < ARRAY_SIZE(shifts) && !feature_present; i++)
		if (shifts[i])
			feature_present = probe_maps_large(shifts[i] - PAGE_SHIFT) > 0;
	return 0;
}

/* A named shape, aligned as its row assumes, maps the row's entries. */
static void vmap_granule_table_test(struct kunit *test)
{
	const struct vmap_table_row *row = test->param_value;
	const struct vmap_shape *shape = shape_named(row->shape);
	char table[ENTRIES_LEN], kernel[ENTRIES_LEN];
	unsigned int i, tries, nt, nk;
	int config = table_config();
	struct vmap_case *vc;
	enum granule *g;
	bool any_large = false, touch = false, misaligned;

	KUNIT_ASSERT_NOT_NULL_MSG(test, shape, "no shape %s", row->shape);
	if (!arch_states_granules())
		kunit_skip(test, NO_ARCH_RULES);
	if (config < 0)
		kunit_skip(test, "no table for this page size");
	if (!row->entries[config])
		kunit_skip(test, "a piece above MAX_PAGE_ORDER");
	/* Retry while chunks touch physically: rows count them apart. */
	for (tries = 0; tries < 3; tries++) {
		vc = vmap_shape_create(test, shape);
		touch = chunks_touch(vc);
		if (!touch)
			break;
	}
	if (touch)
		kunit_skip(test, "pieces physically adjacent in every try");
	g = kunit_kcalloc(test, vc->nr, sizeof(*g), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, g);
	for (i = 0; i < vc->nr; i++) {
		g[i] = walk_kernel(page_va(vc, i)).granule;
		any_large |= g[i] > G_PTE;
	}
	nk = entries_string(kernel, g, vc->nr, (unsigned long)vc->addr);
	/* nohugevmalloc asks for base pages: a PTE each. */
	if (vmap_allow_huge)
		strscpy(table, row->entries[config], sizeof(table));
	else
		snprintf(table, sizeof(table), "T%u", vc->nr);
	nt = table_entries(table);
	kunit_info(test, "table %s (%u entries), kernel %s (%u)\n",
		   table, nt, kernel, nk);
	/* The area is aligned to the largest block a run can use. */
	misaligned = vmap_allow_huge &&
		     !IS_ALIGNED((unsigned long)vc->addr, granule_size(row->align));
	if (!strcmp(table, kernel) && !misaligned)
		return;
	if (!strict && !feature_present && !any_large)
		kunit_skip(test, BASE_PAGES_ONLY);
	/* Larger mappings after nohugevmalloc cost nothing: strict only. */
	if (!strict && !vmap_allow_huge)
		kunit_skip(test, NOHUGE_IGNORED);
	/* Runs not naturally aligned, unlike AUX chunks: strict only. */
	if (!strict && misaligned && !shape->aligned_runs)
		kunit_skip(test, "area not aligned as the table assumes");
	KUNIT_EXPECT_FALSE_MSG(test, misaligned,
			       "area starts %#lx into the %lu-byte block its runs can use",
			       (unsigned long)vc->addr &
			       (granule_size(row->align) - 1),
			       granule_size(row->align));
	KUNIT_EXPECT_STREQ_MSG(test, table, kernel,
			       "%s: the table has %u entries, the kernel maps %u",
			       row->shape, nt, nk);
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
 * A permission change on one page: arm64 refuses non-VM_ALLOC areas with
 * -EINVAL, leaving the mapping; x86 splits the block, keeping the data.
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

static struct kunit_case vmap_granule_test_cases[] = {
	KUNIT_CASE_PARAM(vmap_granule_lookup_test, vmap_shape_gen_params),
	KUNIT_CASE_PARAM(vmap_granule_data_test, vmap_shape_gen_params),
	KUNIT_CASE_PARAM(vmap_granule_nx_test, vmap_shape_gen_params),
	KUNIT_CASE_PARAM(vmap_granule_unmap_test, vmap_shape_gen_params),
	KUNIT_CASE_PARAM(vmap_granule_set_memory_test, vmap_shape_gen_params),
	KUNIT_CASE_PARAM(vmap_granule_table_test, vmap_table_gen_params),
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
