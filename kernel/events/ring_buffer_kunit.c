// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for rb_alloc_aux(), the perf AUX buffer page allocator, by
 * the rule ring_buffer_kunit_orders.h states: static stubs on
 * rb_aux_get_pages()/rb_aux_put_page() track every page and inject
 * failures.  Cases whose order the page allocator refuses are skipped.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/panic.h>
#include <linux/perf_event.h>
#include <linux/xarray.h>

#include "internal.h"
#include "ring_buffer_kunit_orders.h"

#define AUX_CAPS_LARGE	(PERF_PMU_CAP_AUX_NO_SG | PERF_PMU_CAP_AUX_PREFER_LARGE)
/* What ctx->live holds per pfn: the order of its chunk, whether it heads it. */
#define AUX_LIVE(order, head)	(((unsigned long)(order) << 1) | (head))
#define AUX_LIVE_ORDER(v)	((v) >> 1)
#define AUX_LIVE_HEAD(v)	((v) & 1)
#define NO_INJECTION	INT_MAX
#define AUX_POISON	0xa5

static const struct {
	const char *name;
	unsigned int caps;
} aux_caps[] = {
	{ "none", 0 },
	{ "large", PERF_PMU_CAP_AUX_PREFER_LARGE },
	{ "nosg", PERF_PMU_CAP_AUX_NO_SG },
	{ "large_nosg", PERF_PMU_CAP_AUX_NO_SG | PERF_PMU_CAP_AUX_PREFER_LARGE },
};

/* Inputs of one rb_alloc_aux() call plus the failures to inject. */
struct aux_alloc_case {
	char name[64];
	unsigned int caps;
	bool overwrite;
	int nr_pages;
	long watermark;
	int fail_above;		/* orders above this fail; NO_INJECTION: none */
	int fail_chunk;		/* this chunk (-1: none) fails above... */
	int chunk_max;		/* ...this order (-1: at every order) */
	bool fail_setup;	/* setup_aux() returns NULL */
	/* Named: what the table says. */
	int first_ask, order, ret;
};

struct aux_request {
	int order;
	struct page *page;	/* NULL: the request failed */
	bool injected;		/* failed by the case, not the page allocator */
};

struct aux_alloc_ctx {
	const struct aux_alloc_case *c;
	struct pmu pmu;
	struct perf_event *event;
	struct perf_buffer *rb;
	struct aux_request *req;
	int nr_req, max_req, chunks;
	bool req_overflow;
	struct xarray live;	/* pfns handed out and not yet given back */
	unsigned long pages_got, pages_put, bad_put, dirty_put;
	char dirt[128];		/* what was wrong with the first unclean page */
	bool xa_failed;
	int setup_calls, free_calls;
	int ret;		/* what rb_alloc_aux() returned */
	void **setup_pages;
	int setup_nr_pages;
	bool setup_overwrite;
};

static struct aux_alloc_ctx *aux_ctx(void)
{
	return kunit_get_current_test()->priv;
}

static struct page *aux_get_pages_stub(int node, gfp_t gfp, int order)
{
	struct aux_alloc_ctx *ctx = aux_ctx();
	const struct aux_alloc_case *c = ctx->c;
	struct page *page = NULL;
	unsigned long pfn, i;

	if (ctx->nr_req == ctx->max_req) {
		ctx->req_overflow = true;
		return NULL;
	}
	ctx->req[ctx->nr_req].injected = order > c->fail_above ||
		(ctx->chunks == c->fail_chunk && order > c->chunk_max);
	if (!ctx->req[ctx->nr_req].injected)
		page = alloc_pages_node(node, gfp & ~__GFP_ZERO, order);
	ctx->req[ctx->nr_req].order = order;
	ctx->req[ctx->nr_req++].page = page;
	if (!page)
		return NULL;
	/* As the page allocator: old contents unless asked to zero. */
	memset(page_address(page), gfp & __GFP_ZERO ? 0 : AUX_POISON,
	       PAGE_SIZE << order);
	ctx->chunks++;
	ctx->pages_got += 1UL << order;
	pfn = page_to_pfn(page);
	for (i = 0; i < (1UL << order); i++)
		if (xa_err(xa_store(&ctx->live, pfn + i,
				    xa_mk_value(AUX_LIVE(order, !i)),
				    GFP_KERNEL)))
			ctx->xa_failed = true;
	return page;
}

/*
 * A page given back must have PagePrivate cleared (only CONFIG_DEBUG_VM
 * checks it), no mapping and one reference; the head may keep its order.
 */
static const char *aux_page_dirt(struct page *page, unsigned long live)
{
	unsigned long private = page_private(page);

	if (PagePrivate(page))
		return "PagePrivate still set";
	if (page->mapping)
		return "mapping still set";
	if (page_ref_count(page) != 1)
		return "reference count is not one";
	if (private && !(AUX_LIVE_HEAD(live) && private == AUX_LIVE_ORDER(live)))
		return "page_private() holds what the kernel never put there";
	return NULL;
}

static void aux_put_page_stub(struct page *page)
{
	struct aux_alloc_ctx *ctx = aux_ctx();
	void *entry = xa_erase(&ctx->live, page_to_pfn(page));
	const char *dirt;

	if (!entry)
		ctx->bad_put++;
	dirt = entry ? aux_page_dirt(page, xa_to_value(entry)) : NULL;
	if (dirt && !ctx->dirty_put++)
		snprintf(ctx->dirt, sizeof(ctx->dirt),
			 "pfn %#lx given back unclean: %s (page_private %#lx, count %d)",
			 page_to_pfn(page), dirt, page_private(page),
			 page_ref_count(page));
	ctx->pages_put++;
	__free_page(page);
}

static void *aux_test_setup_aux(struct perf_event *event, void **pages,
				int nr_pages, bool overwrite)
{
	struct aux_alloc_ctx *ctx = aux_ctx();

	ctx->setup_calls++;
	ctx->setup_pages = pages;
	ctx->setup_nr_pages = nr_pages;
	ctx->setup_overwrite = overwrite;
	return ctx->c->fail_setup ? NULL : ctx;
}

static void aux_test_free_aux(void *priv)
{
	struct aux_alloc_ctx *ctx = aux_ctx();

	KUNIT_EXPECT_PTR_EQ(kunit_get_current_test(), priv, (void *)ctx);
	ctx->free_calls++;
}

KUNIT_DEFINE_ACTION_WRAPPER(aux_kvfree, kvfree, const void *);

static int perf_aux_alloc_test_init(struct kunit *test)
{
	struct aux_alloc_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->event = kunit_kzalloc(test, sizeof(*ctx->event), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->event);
	ctx->rb = kunit_kzalloc(test, sizeof(*ctx->rb), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->rb);
	ctx->pmu.setup_aux = aux_test_setup_aux;
	ctx->pmu.free_aux = aux_test_free_aux;
	ctx->event->pmu = &ctx->pmu;
	ctx->event->cpu = -1;
	xa_init(&ctx->live);
	test->priv = ctx;
	kunit_activate_static_stub(test, rb_aux_get_pages, aux_get_pages_stub);
	kunit_activate_static_stub(test, rb_aux_put_page, aux_put_page_stub);
	return 0;
}

static void perf_aux_alloc_test_exit(struct kunit *test)
{
	struct aux_alloc_ctx *ctx = test->priv;

	xa_destroy(&ctx->live);
}

/* Whether the rule allows @order with @left pages missing. */
static bool aux_order_allowed(const struct aux_alloc_case *c, int order,
			      int left)
{
	unsigned long wm = c->watermark ?:
			   ((unsigned long)c->nr_pages << PAGE_SHIFT) / 2;

	if (order > MAX_PAGE_ORDER || (1 << order) > left)
		return false;
	if (!(c->caps & AUX_CAPS_LARGE))
		return !order;
	return c->overwrite || !order || (PAGE_SIZE << (order - 1)) < wm;
}

/* Log of the page requests for @nr_pages, freed with the test. */
static void aux_req_log(struct kunit *test, int nr_pages)
{
	struct aux_alloc_ctx *ctx = test->priv;

	ctx->max_req = nr_pages * (MAX_PAGE_ORDER + 2);
	ctx->req = kvcalloc(ctx->max_req, sizeof(*ctx->req), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->req);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, aux_kvfree, ctx->req));
}

/* The first AUX page with a byte that is not zero, or -1. */
static int aux_first_unzeroed(struct perf_buffer *rb)
{
	int i;

	for (i = 0; i < rb->aux_nr_pages; i++)
		if (memchr_inv(rb->aux_pages[i], 0, PAGE_SIZE))
			return i;
	return -1;
}

/*
 * Runs rb_alloc_aux() for ctx->c and checks the rule, whatever was refused:
 * each chunk first asks the largest allowed order, then k - 1 after k fails;
 * chunks tile the buffer naturally aligned, order in the head's
 * page_private(); success iff all pages were had (NO_SG overwrite: in one
 * chunk) and setup_aux() succeeded.  Returns what rb_alloc_aux() returned.
 */
static int aux_alloc_and_check(struct kunit *test)
{
	struct aux_alloc_ctx *ctx = test->priv;
	const struct aux_alloc_case *c = ctx->c;
	int flags = c->overwrite ? 0 : RING_BUFFER_WRITABLE;
	int left = c->nr_pages, idx = 0, i = 0, chunk = 0;
	bool one_chunk, ok;
	int ret;

	if (c->nr_pages > totalram_pages() / 4)
		kunit_skip(test, "buffer larger than a quarter of memory");
	aux_req_log(test, c->nr_pages);
	ctx->pmu.capabilities = c->caps;
	ret = rb_alloc_aux(ctx->rb, ctx->event, 0, c->nr_pages, c->watermark,
			   flags);
	ctx->ret = ret;
	KUNIT_EXPECT_FALSE(test, ctx->req_overflow);
	KUNIT_EXPECT_FALSE(test, ctx->xa_failed);
	/* Chunk by chunk, up to the first that breaks a property. */
	while (left > 0 && i < ctx->nr_req && test->status != KUNIT_FAILURE) {
		int ask = ctx->req[i].order, order, j;
		struct page *head;

		KUNIT_EXPECT_TRUE_MSG(test, aux_order_allowed(c, ask, left) &&
				      !aux_order_allowed(c, ask + 1, left),
				      "chunk %d, %d of %d pages missing: asked for order %d, not the largest allowed",
				      chunk, left, c->nr_pages, ask);
		while (!ctx->req[i].page && ctx->req[i].order > 0 &&
		       i + 1 < ctx->nr_req) {
			KUNIT_EXPECT_EQ_MSG(test, ctx->req[i].order - 1,
					    ctx->req[i + 1].order,
					    "fallback of chunk %d", chunk);
			i++;
		}
		head = ctx->req[i].page;
		order = ctx->req[i++].order;
		if (!head) {
			KUNIT_EXPECT_EQ_MSG(test, 0, order,
					    "chunk %d gave up before order 0",
					    chunk);
			break;
		}
		left -= 1 << order;
		chunk++;
		if (ret)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, 0UL,
				    page_to_pfn(head) & ((1UL << order) - 1),
				    "chunk %d of order %d is misaligned",
				    chunk - 1, order);
		KUNIT_EXPECT_EQ_MSG(test, order > 0, !!PagePrivate(head),
				    "PagePrivate of the head of order-%d chunk %d",
				    order, chunk - 1);
		KUNIT_EXPECT_EQ_MSG(test, (unsigned long)order,
				    page_private(head),
				    "page_private of the head of chunk %d",
				    chunk - 1);
		for (j = 0; j < (1 << order) && idx < c->nr_pages &&
		     test->status != KUNIT_FAILURE; j++, idx++)
			KUNIT_EXPECT_EQ_MSG(test, page_to_pfn(head) + j,
					    page_to_pfn(virt_to_page(ctx->rb->aux_pages[idx])),
					    "aux page %d, chunk %d of order %d",
					    idx, chunk - 1, order);
	}
	KUNIT_EXPECT_EQ_MSG(test, i, ctx->nr_req, "requests after the last chunk");
	one_chunk = !((c->caps & PERF_PMU_CAP_AUX_NO_SG) && c->overwrite) ||
		    chunk == 1;
	ok = left <= 0 && one_chunk;
	KUNIT_EXPECT_EQ_MSG(test, ok && !c->fail_setup ? 0 : -ENOMEM, ret,
			    "%d of %d pages missing in %d chunks", max(left, 0),
			    c->nr_pages, chunk);
	KUNIT_EXPECT_EQ(test, ok ? 1 : 0, ctx->setup_calls);
	if (!ret) {
		KUNIT_EXPECT_EQ(test, c->nr_pages, idx);
		KUNIT_EXPECT_EQ(test, c->nr_pages, ctx->rb->aux_nr_pages);
		KUNIT_EXPECT_PTR_EQ(test, ctx->rb->aux_pages, ctx->setup_pages);
		KUNIT_EXPECT_EQ(test, c->nr_pages, ctx->setup_nr_pages);
		KUNIT_EXPECT_EQ(test, c->overwrite, ctx->setup_overwrite);
		/* They reach user space: stale contents would leak. */
		KUNIT_EXPECT_EQ_MSG(test, -1, aux_first_unzeroed(ctx->rb),
				    "AUX page not zeroed");
	} else {
		KUNIT_EXPECT_EQ(test, 0, ctx->rb->aux_nr_pages);
		KUNIT_EXPECT_EQ(test, 0, ctx->free_calls);
	}
	return ret;
}

/* Frees a buffer that rb_alloc_aux() gave and checks every page came back. */
static void aux_free_and_check(struct kunit *test, int ret)
{
	struct aux_alloc_ctx *ctx = test->priv;

	if (!ret) {
		rb_free_aux(ctx->rb);
		KUNIT_EXPECT_EQ(test, 1, ctx->free_calls);
	}
	KUNIT_EXPECT_EQ(test, ctx->pages_got, ctx->pages_put);
	KUNIT_EXPECT_EQ_MSG(test, 0UL, ctx->bad_put,
			    "pages given back twice or never handed out");
	KUNIT_EXPECT_EQ_MSG(test, 0UL, ctx->dirty_put, "%lu pages; the first: %s",
			    ctx->dirty_put, ctx->dirt);
	KUNIT_EXPECT_TRUE_MSG(test, xa_empty(&ctx->live), "pages leaked");
}

static void aux_run_case(struct kunit *test, const struct aux_alloc_case *c)
{
	struct aux_alloc_ctx *ctx = test->priv;

	ctx->c = c;
	aux_free_and_check(test, aux_alloc_and_check(test));
}

static long aux_watermark(enum aux_mode wm, int nr_pages)
{
	long size = (long)nr_pages << PAGE_SHIFT;

	return wm == WM_PAGE ? PAGE_SIZE : wm == WM_HALF ? size / 2 :
	       wm == WM_WHOLE ? size : 0;
}

/* Named: the tables' rows for each capability set (and mode). */
static struct aux_alloc_case order_cases[ARRAY_SIZE(aux_caps) *
					 ARRAY_SIZE(aux_order_rows) * NR_MODES];
static struct aux_alloc_case fallback_cases[(ARRAY_SIZE(aux_caps) - 1) *
					    ARRAY_SIZE(aux_fallback_rows)];

static void aux_build_named_cases(void)
{
	static const char * const wm[] = { "default", "page", "half", "whole" };
	struct aux_alloc_case *c = order_cases;
	int ci, i, m;

	for (ci = 0; ci < ARRAY_SIZE(aux_caps); ci++) {
		unsigned int caps = aux_caps[ci].caps;

		for (i = 0; i < ARRAY_SIZE(aux_order_rows); i++) {
			const struct aux_order_row *r = &aux_order_rows[i];

			for (m = 0; m < NR_MODES; m++, c++) {
				*c = (struct aux_alloc_case){
					.caps = caps, .overwrite = m == SNAPSHOT,
					.nr_pages = r->nr_pages,
					.watermark = aux_watermark(m, r->nr_pages),
					.fail_above = NO_INJECTION,
					.fail_chunk = -1,
					.order = caps ? r->order[m] : 0,
				};
				if (m == SNAPSHOT) {
					if (caps & PERF_PMU_CAP_AUX_NO_SG)
						c->ret = r->nosg_snapshot_ret;
					snprintf(c->name, sizeof(c->name), "%s_snapshot_%s",
						 aux_caps[ci].name, r->size);
				} else {
					snprintf(c->name, sizeof(c->name), "%s_rw_%s_wm_%s",
						 aux_caps[ci].name, r->size, wm[m]);
				}
			}
		}
	}
	/* Fallbacks need a capability: aux_caps[0] has none. */
	c = fallback_cases;
	for (ci = 1; ci < ARRAY_SIZE(aux_caps); ci++) {
		for (i = 0; i < ARRAY_SIZE(aux_fallback_rows); i++, c++) {
			const struct aux_fallback_row *r = &aux_fallback_rows[i];

			*c = (struct aux_alloc_case){
				.caps = aux_caps[ci].caps,
				.overwrite = r->overwrite,
				.nr_pages = FALLBACK_PAGES,
				.fail_above = r->settle, .fail_chunk = -1,
				.first_ask = r->first_ask, .order = r->settle,
			};
			if (aux_caps[ci].caps & PERF_PMU_CAP_AUX_NO_SG)
				c->ret = r->nosg_ret;
			snprintf(c->name, sizeof(c->name), "%s_%s",
				 aux_caps[ci].name, r->name);
		}
	}
}

static int perf_aux_alloc_suite_init(struct kunit_suite *suite)
{
	aux_build_named_cases();
	return 0;
}

KUNIT_ARRAY_PARAM_DESC(aux_orders, order_cases, name);
KUNIT_ARRAY_PARAM_DESC(aux_fallback, fallback_cases, name);

/* Whether the page allocator itself refused an order @c's stubs let through. */
static bool aux_refused_for_real(struct kunit *test)
{
	struct aux_alloc_ctx *ctx = test->priv;
	int i;

	for (i = 0; i < ctx->nr_req; i++)
		if (!ctx->req[i].page && !ctx->req[i].injected)
			return true;
	return false;
}

/* A named buffer gets its row's chunk order, each asked once, and return. */
static void aux_alloc_orders_test(struct kunit *test)
{
	const struct aux_alloc_case *c = test->param_value;
	struct aux_alloc_ctx *ctx = test->priv;
	int i;

	aux_run_case(test, c);
	if (aux_refused_for_real(test) && test->status != KUNIT_FAILURE)
		kunit_skip(test, "an order refused by the page allocator");
	KUNIT_EXPECT_EQ_MSG(test, c->nr_pages >> c->order, ctx->nr_req,
			    "chunks of order %d", c->order);
	for (i = 0; i < ctx->nr_req; i++)
		if (ctx->req[i].order != c->order)
			break;
	KUNIT_EXPECT_EQ_MSG(test, ctx->nr_req, i,
			    "chunk %d: table says order %d, rb_alloc_aux() gave %d",
			    i, c->order, i < ctx->nr_req ? ctx->req[i].order : -1);
	KUNIT_EXPECT_EQ_MSG(test, c->ret, ctx->ret,
			    "table says %d, rb_alloc_aux() returned %d",
			    c->ret, ctx->ret);
}

/*
 * The pages left bound a chunk: a 16-page snapshot buffer whose first chunk
 * gets no order above 2 (ceiling 4), then ilog2(12) = 3, then order 2.
 */
static void aux_alloc_pages_left_bound_test(struct kunit *test)
{
	static const int asked[] = { 4, 3, 2, 3, 2 };
	struct aux_alloc_ctx *ctx = test->priv;
	struct aux_alloc_case c = {
		.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .overwrite = true,
		.nr_pages = 16, .fail_above = NO_INJECTION, .fail_chunk = 0,
		.chunk_max = 2,
	};
	int i;

	if (MAX_PAGE_ORDER < 4)
		kunit_skip(test, "MAX_PAGE_ORDER below the buffer's order");
	aux_run_case(test, &c);
	if (aux_refused_for_real(test) && test->status != KUNIT_FAILURE)
		kunit_skip(test, "an order refused by the page allocator");
	KUNIT_ASSERT_EQ(test, ARRAY_SIZE(asked), ctx->nr_req);
	for (i = 0; i < ARRAY_SIZE(asked); i++)
		KUNIT_EXPECT_EQ_MSG(test, asked[i], ctx->req[i].order,
				    "request %d", i);
	KUNIT_EXPECT_EQ(test, 0, ctx->ret);
}

/* Orders above the row's limit refused: all chunks settle at the limit. */
static void aux_alloc_fallback_test(struct kunit *test)
{
	const struct aux_alloc_case *c = test->param_value;
	struct aux_alloc_ctx *ctx = test->priv;
	int i, chunks = 0;

	if (c->order >= c->first_ask)
		kunit_skip(test, "no order to fall back from");
	aux_run_case(test, c);
	if (aux_refused_for_real(test) && test->status != KUNIT_FAILURE)
		kunit_skip(test, "an order refused by the page allocator");
	KUNIT_ASSERT_GT(test, ctx->nr_req, 0);
	KUNIT_EXPECT_EQ_MSG(test, c->first_ask, ctx->req[0].order,
			    "first request: table says order %d, rb_alloc_aux() asked %d",
			    c->first_ask, ctx->req[0].order);
	for (i = 0; i < ctx->nr_req; i++) {
		if (!ctx->req[i].page)
			continue;
		chunks++;
		KUNIT_EXPECT_EQ_MSG(test, c->order, ctx->req[i].order,
				    "chunk %d: table says order %d, rb_alloc_aux() gave %d",
				    chunks - 1, c->order, ctx->req[i].order);
		if (ctx->req[i].order != c->order)
			break;
	}
	KUNIT_EXPECT_EQ(test, FALLBACK_PAGES >> c->order, chunks);
	KUNIT_EXPECT_EQ_MSG(test, c->ret, ctx->ret,
			    "table says %d, rb_alloc_aux() returned %d",
			    c->ret, ctx->ret);
}

/* The second chunk cannot be had at any order: all pages go back. */
static void aux_alloc_chunk_fails_test(struct kunit *test)
{
	struct aux_alloc_case c = {
		.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .nr_pages = 64,
		.fail_above = NO_INJECTION, .fail_chunk = 1, .chunk_max = -1,
	};

	aux_run_case(test, &c);
}

/*
 * The first chunk fails: the page-pointer array must be freed and not left
 * in rb->aux_pages.  A stale one is not freed here: it may be a double free.
 */
static void aux_alloc_first_page_fails_test(struct kunit *test)
{
	struct aux_alloc_ctx *ctx = test->priv;
	struct aux_alloc_case c = {
		.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .nr_pages = 64,
		.fail_above = NO_INJECTION, .fail_chunk = 0, .chunk_max = -1,
	};

	aux_run_case(test, &c);
	KUNIT_EXPECT_GT_MSG(test, ctx->nr_req, 0,
			    "no page was asked for: the array was never allocated");
	KUNIT_EXPECT_EQ(test, 0UL, ctx->pages_got);
	KUNIT_EXPECT_NULL_MSG(test, ctx->rb->aux_pages,
			      "the page-pointer array outlived the failed allocation (leaked)");
}

/* setup_aux() failing frees every page and does not call free_aux(). */
static void aux_alloc_setup_fails_test(struct kunit *test)
{
	struct aux_alloc_case c = {
		.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .nr_pages = 64,
		.overwrite = true, .fail_above = NO_INJECTION, .fail_chunk = -1,
		.fail_setup = true,
	};

	aux_run_case(test, &c);
}

/* The taint mask, read through test_taint(): get_taint() is not exported. */
static unsigned long taint_mask(void)
{
	unsigned long mask = 0;
	unsigned int flag;

	for (flag = 0; flag < TAINT_FLAGS_COUNT; flag++)
		if (test_taint(flag))
			mask |= BIT(flag);
	return mask;
}

/*
 * A pointer array above MAX_PAGE_ORDER is refused before the page allocator
 * would warn and taint; any new taint flag fails.
 */
static void aux_alloc_pointer_array_guard_test(struct kunit *test)
{
	struct aux_alloc_ctx *ctx = test->priv;
	struct aux_alloc_case c = { .fail_above = NO_INJECTION, .fail_chunk = -1 };
	unsigned long limit = (PAGE_SIZE << MAX_PAGE_ORDER) / sizeof(void *);
	unsigned long taint = taint_mask();

	ctx->c = &c;
	KUNIT_ASSERT_LE(test, limit, (unsigned long)INT_MAX - 1);
	KUNIT_EXPECT_EQ(test, -ENOMEM,
			rb_alloc_aux(ctx->rb, ctx->event, 0, limit + 1, 0,
				     RING_BUFFER_WRITABLE));
	KUNIT_EXPECT_EQ(test, 0, ctx->nr_req);
	KUNIT_EXPECT_EQ(test, 0, ctx->setup_calls);
	KUNIT_EXPECT_EQ_MSG(test, taint, taint_mask(),
			    "the refused request tainted the kernel (mask before and after)");
	if (taint & BIT(TAINT_WARN))
		kunit_info(test, "TAINT_WARN was set before: a new warning cannot show\n");
}

/* Bad sizes and a PMU without AUX support fail before any page is taken. */
static void aux_alloc_bad_input_test(struct kunit *test)
{
	struct aux_alloc_ctx *ctx = test->priv;
	struct aux_alloc_case c = { .fail_above = NO_INJECTION, .fail_chunk = -1 };

	ctx->c = &c;
	KUNIT_EXPECT_EQ(test, -EINVAL,
			rb_alloc_aux(ctx->rb, ctx->event, 0, 0, 0,
				     RING_BUFFER_WRITABLE));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			rb_alloc_aux(ctx->rb, ctx->event, 0, -1, 0, 0));
	ctx->pmu.setup_aux = NULL;
	KUNIT_EXPECT_EQ(test, -EOPNOTSUPP,
			rb_alloc_aux(ctx->rb, ctx->event, 0, 2, 0,
				     RING_BUFFER_WRITABLE));
	KUNIT_EXPECT_EQ(test, 0, ctx->nr_req);
}

/* perf_mmap_to_page() gives each AUX page, and none past the area. */
static void aux_mmap_to_page_bounds_test(struct kunit *test)
{
	struct aux_alloc_ctx *ctx = test->priv;
	struct aux_alloc_case c = {
		.nr_pages = 4, .fail_above = NO_INJECTION, .fail_chunk = -1,
	};
	/* Right after a data area of the user page alone (none here). */
	const unsigned long aux_pgoff = 1;
	struct page *past;
	int i, ret;

	ctx->c = &c;
	aux_req_log(test, c.nr_pages);
	ret = rb_alloc_aux(ctx->rb, ctx->event, aux_pgoff, c.nr_pages, 0,
			   RING_BUFFER_WRITABLE);
	if (ret == -ENOMEM)
		kunit_skip(test, "no AUX pages to be had");
	KUNIT_ASSERT_EQ(test, 0, ret);
	for (i = 0; i < c.nr_pages; i++)
		KUNIT_EXPECT_PTR_EQ(test, virt_to_page(ctx->rb->aux_pages[i]),
				    perf_mmap_to_page(ctx->rb, aux_pgoff + i));
	past = perf_mmap_to_page(ctx->rb, aux_pgoff + c.nr_pages);
	KUNIT_EXPECT_TRUE_MSG(test, !past,
			      "the page past the AUX area resolves to %s",
			      past && page_to_virt(past) == ctx->rb->aux_pages[0] ?
			      "AUX page 0" : "a page");
	aux_free_and_check(test, ret);
}

static struct kunit_case perf_aux_alloc_test_cases[] = {
	KUNIT_CASE_PARAM(aux_alloc_orders_test, aux_orders_gen_params),
	KUNIT_CASE_PARAM(aux_alloc_fallback_test, aux_fallback_gen_params),
	KUNIT_CASE(aux_alloc_pages_left_bound_test),
	KUNIT_CASE(aux_alloc_chunk_fails_test),
	KUNIT_CASE(aux_alloc_first_page_fails_test),
	KUNIT_CASE(aux_alloc_setup_fails_test),
	KUNIT_CASE(aux_alloc_pointer_array_guard_test),
	KUNIT_CASE(aux_alloc_bad_input_test),
	KUNIT_CASE(aux_mmap_to_page_bounds_test),
	{}
};

static struct kunit_suite perf_aux_alloc_test_suite = {
	.name = "perf_aux_alloc",
	.suite_init = perf_aux_alloc_suite_init,
	.init = perf_aux_alloc_test_init,
	.exit = perf_aux_alloc_test_exit,
	.test_cases = perf_aux_alloc_test_cases,
};

kunit_test_suite(perf_aux_alloc_test_suite);

MODULE_DESCRIPTION("KUnit tests for the perf AUX buffer page allocator");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");
