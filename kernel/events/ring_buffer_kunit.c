// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the perf AUX buffer page allocator, rb_alloc_aux().
 *
 * An AUX PMU receives its buffer as an array of pages, and the orders those
 * pages come in follow rules of kernel/events/ring_buffer.c:
 *
 *  - a PMU with neither PERF_PMU_CAP_AUX_PREFER_LARGE nor _AUX_NO_SG gets
 *    order-0 pages only;
 *  - otherwise the order ceiling is get_order(watermark) in normal mode (the
 *    watermark defaults to half the buffer) and ilog2(nr_pages) in overwrite
 *    (snapshot) mode;
 *  - each chunk asks for min(ceiling, ilog2(pages still missing)), clamped
 *    to MAX_PAGE_ORDER, and falls back one order at a time when the page
 *    allocator says no;
 *  - a chunk's order reaches the driver in page_private() of its first page;
 *  - a NO_SG PMU in overwrite mode needs the whole buffer in one chunk.
 *
 * The tests call rb_alloc_aux() with a test PMU and see every page taken and
 * given back through the static stubs on rb_aux_get_pages() and
 * rb_aux_put_page().  The same stubs fail orders above a limit on demand, so
 * the fallback is tested deterministically instead of by fragmentation luck.
 * Expectations are computed from PAGE_SHIFT and MAX_PAGE_ORDER of the kernel
 * under test; a real allocation failure is followed, not assumed away.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/panic.h>
#include <linux/perf_event.h>
#include <linux/prandom.h>
#include <linux/xarray.h>

#include "internal.h"
#include "ring_buffer_kunit_orders.h"

#define AUX_CAPS_LARGE	(PERF_PMU_CAP_AUX_NO_SG | PERF_PMU_CAP_AUX_PREFER_LARGE)
/* What ctx->live holds per pfn: the order of its chunk, whether it heads it. */
#define AUX_LIVE(order, head)	(((unsigned long)(order) << 1) | (head))
#define AUX_LIVE_ORDER(v)	((v) >> 1)
#define AUX_LIVE_HEAD(v)	((v) & 1)
#define NO_INJECTION	INT_MAX
/* Chunks whose highest order that succeeds a generated case chooses. */
#define GEN_CHUNKS	8

/*
 * The generated failure patterns come from this seed: fixed by default, so
 * that every run sees the same cases; another seed explores and replays.
 */
static ulong seed = 20261130;
module_param(seed, ulong, 0444);
MODULE_PARM_DESC(seed, "Seed of the generated allocation failure patterns");

/* A buffer size, either fixed or relative to MAX_PAGE_ORDER. */
struct aux_size {
	const char *name;
	int pages;		/* used when rel_order is 0 */
	int rel_order;		/* 1 << (MAX_PAGE_ORDER + rel_order - 1) ... */
	int delta;		/* ... plus delta pages */
};

static const struct aux_size aux_sizes[] = {
	{ "1p", 1 }, { "2p", 2 }, { "16p", 16 }, { "512p", 512 },
	{ "1024p", 1024 }, { "2048p", 2048 },
	{ "max_half", 0, 0 }, { "max_minus1", 0, 1, -1 }, { "max", 0, 1 },
	{ "max_plus1", 0, 1, 1 }, { "max_twice", 0, 2 },
};

static int aux_size_pages(const struct aux_size *s)
{
	if (!s->pages)
		return (1 << (MAX_PAGE_ORDER + s->rel_order - 1)) + s->delta;
	return s->pages;
}

static const struct {
	const char *name;
	unsigned int caps;
} aux_caps[] = {
	{ "none", 0 },
	{ "large", PERF_PMU_CAP_AUX_PREFER_LARGE },
	{ "nosg", PERF_PMU_CAP_AUX_NO_SG },
	{ "large_nosg", PERF_PMU_CAP_AUX_NO_SG | PERF_PMU_CAP_AUX_PREFER_LARGE },
};

static const char * const aux_wm_names[NR_WM] = {
	"wm_default", "wm_page", "wm_half", "wm_whole",
};

/* Inputs of one rb_alloc_aux() call plus the failures to inject. */
struct aux_alloc_case {
	char name[64];
	unsigned int caps;
	bool overwrite;
	int nr_pages;
	long watermark;
	int fail_above;		/* orders above this fail; NO_INJECTION: none */
	int fail_chunk;		/* this chunk fails at every order; -1: none */
	bool fail_setup;	/* setup_aux() returns NULL */
	/* Generated: chunk k gets no order above ceil[k] (-1: none at all). */
	bool per_chunk;
	s8 ceil[GEN_CHUNKS];
};

/* What the stubs and the test PMU saw during one case. */
struct aux_request {
	int order;
	struct page *page;	/* NULL: the request failed */
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
	if (order <= c->fail_above && ctx->chunks != c->fail_chunk &&
	    (!c->per_chunk || ctx->chunks >= GEN_CHUNKS ||
	     order <= c->ceil[ctx->chunks]))
		page = alloc_pages_node(node, gfp, order);
	ctx->req[ctx->nr_req].order = order;
	ctx->req[ctx->nr_req++].page = page;
	if (!page)
		return NULL;

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
 * What a page given back must look like.  rb_alloc_aux_page() split each
 * chunk into order-0 pages of one reference each and marked its head with
 * PagePrivate and the order in page_private(); rb_free_aux_page() must
 * clear PagePrivate before the page goes back, as the page allocator's
 * free checks demand (they run with CONFIG_DEBUG_VM only, so a default
 * build would not notice).  It may leave the order in the head's
 * page_private(): that word means nothing without PagePrivate and the
 * allocator resets it.  AUX pages are never put in a page cache, and the
 * test PMU takes no reference, so mapping is NULL and the count is one.
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

/* The order ceiling rb_alloc_aux() must use for @c. */
static int aux_model_ceiling(const struct aux_alloc_case *c)
{
	unsigned long wm = c->watermark;

	if (!(c->caps & AUX_CAPS_LARGE))
		return 0;
	if (c->overwrite)
		return ilog2(c->nr_pages);
	if (!wm)
		wm = min_t(unsigned long, U32_MAX,
			   (unsigned long)c->nr_pages << (PAGE_SHIFT - 1));
	return get_order(wm);
}

/* Memory the test itself needs besides the buffer: the request log. */
static bool aux_too_big(int nr_pages)
{
	return nr_pages > totalram_pages() / 4;
}

/*
 * Runs rb_alloc_aux() for ctx->c and checks everything that follows from the
 * rules: the requests of each chunk, the pages the PMU got, the return value.
 * Returns what rb_alloc_aux() returned.
 */
static int aux_alloc_and_check(struct kunit *test)
{
	struct aux_alloc_ctx *ctx = test->priv;
	const struct aux_alloc_case *c = ctx->c;
	int flags = c->overwrite ? 0 : RING_BUFFER_WRITABLE;
	int ceiling = aux_model_ceiling(c);
	int remaining = c->nr_pages, idx = 0, i = 0, chunk = 0;
	int first_order = -1, ret;
	bool reach_setup;

	if (aux_too_big(c->nr_pages))
		kunit_skip(test, "buffer larger than a quarter of memory");

	ctx->max_req = c->nr_pages * (MAX_PAGE_ORDER + 2);
	ctx->req = kvcalloc(ctx->max_req, sizeof(*ctx->req), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->req);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, aux_kvfree, ctx->req));
	ctx->pmu.capabilities = c->caps;

	ret = rb_alloc_aux(ctx->rb, ctx->event, 0, c->nr_pages, c->watermark,
			   flags);
	ctx->ret = ret;
	KUNIT_EXPECT_FALSE(test, ctx->req_overflow);
	KUNIT_EXPECT_FALSE(test, ctx->xa_failed);

	/*
	 * Replay the walk the rules prescribe against the requests seen, up to
	 * the first chunk that breaks them: the rest would only repeat it.
	 */
	while (remaining > 0 && i < ctx->nr_req &&
	       test->status != KUNIT_FAILURE) {
		int want = min3(ceiling, ilog2(remaining), MAX_PAGE_ORDER);
		struct page *head;
		int order, j;

		KUNIT_EXPECT_EQ_MSG(test, want, ctx->req[i].order,
				    "chunk %d, %d of %d pages missing, ceiling %d",
				    chunk, remaining, c->nr_pages, ceiling);
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
		if (first_order < 0)
			first_order = order;
		remaining -= 1 << order;
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

	/*
	 * setup_aux() is reached when every chunk was had and, for a NO_SG
	 * snapshot buffer, the first chunk is the whole buffer.
	 */
	reach_setup = remaining <= 0 &&
		      !((c->caps & PERF_PMU_CAP_AUX_NO_SG) && c->overwrite &&
			first_order != ceiling);
	KUNIT_EXPECT_EQ(test, reach_setup && !c->fail_setup ? 0 : -ENOMEM, ret);
	KUNIT_EXPECT_EQ(test, reach_setup ? 1 : 0, ctx->setup_calls);

	if (!ret) {
		KUNIT_EXPECT_EQ(test, c->nr_pages, idx);
		KUNIT_EXPECT_EQ(test, c->nr_pages, ctx->rb->aux_nr_pages);
		KUNIT_EXPECT_PTR_EQ(test, ctx->rb->aux_pages, ctx->setup_pages);
		KUNIT_EXPECT_EQ(test, c->nr_pages, ctx->setup_nr_pages);
		KUNIT_EXPECT_EQ(test, c->overwrite, ctx->setup_overwrite);
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

/*
 * Cross product of capabilities, modes, sizes and watermarks.  The watermark
 * only matters in normal mode, so snapshot mode gets one case per size.
 */
#define NR_ORDER_CASES (ARRAY_SIZE(aux_caps) * ARRAY_SIZE(aux_sizes) * (NR_WM + 1))
static struct aux_alloc_case order_cases[NR_ORDER_CASES];

static long aux_watermark(enum aux_wm wm, int nr_pages)
{
	long size = (long)nr_pages << PAGE_SHIFT;

	switch (wm) {
	case WM_PAGE:
		return PAGE_SIZE;
	case WM_HALF:
		return size / 2;
	case WM_WHOLE:
		return size;
	default:
		return 0;
	}
}

/* The order of chunk @k of @r, -1 past the last. */
static int aux_row_order(const struct aux_table_row *r, int k)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(r->runs) && r->runs[i].pages; i++) {
		const struct aux_run *run = &r->runs[i];
		int n = run->pages == AUX_DOWN ? run->order + 1 :
			run->pages >> run->order;

		if (k < n)
			return run->pages == AUX_DOWN ? run->order - k :
			       run->order;
		k -= n;
	}
	return -1;
}

static void aux_table_desc(const struct aux_table_row *r, char *desc)
{
	strscpy(desc, r->name, KUNIT_PARAM_DESC_SIZE);
}

static void aux_build_order_cases(void)
{
	struct aux_alloc_case *c = order_cases;
	int ci, si, wm;

	for (ci = 0; ci < ARRAY_SIZE(aux_caps); ci++) {
		for (si = 0; si < ARRAY_SIZE(aux_sizes); si++) {
			for (wm = 0; wm <= NR_WM; wm++, c++) {
				bool snap = wm == NR_WM;

				c->caps = aux_caps[ci].caps;
				c->overwrite = snap;
				c->nr_pages = aux_size_pages(&aux_sizes[si]);
				c->watermark = snap ? 0 : aux_watermark(wm, c->nr_pages);
				c->fail_above = NO_INJECTION;
				c->fail_chunk = -1;
				snprintf(c->name, sizeof(c->name), "%s_%s_%s%s%s",
					 aux_caps[ci].name, snap ? "snapshot" : "rw",
					 aux_sizes[si].name, snap ? "" : "_",
					 snap ? "" : aux_wm_names[wm]);
			}
		}
	}
}

/*
 * Fallback: orders above a limit fail.  Each chunk must walk down from its
 * ceiling one order at a time and settle at the limit; a NO_SG snapshot
 * buffer must fail as a whole instead.
 */
#define FALLBACK_PAGES	512
enum aux_limit { LIMIT_ORDER0, LIMIT_HALF, LIMIT_BELOW_CEILING, NR_LIMITS };

static const char * const aux_limit_names[NR_LIMITS] = {
	"order0_only", "half_ceiling", "below_ceiling",
};

#define NR_FALLBACK_CASES (3 * 2 * NR_LIMITS)

static struct aux_alloc_case fallback_cases[NR_FALLBACK_CASES];

static void aux_build_fallback_cases(void)
{
	struct aux_alloc_case *c = fallback_cases;
	int ci, snap, lim;

	for (ci = 1; ci < ARRAY_SIZE(aux_caps); ci++) {
		for (snap = 0; snap < 2; snap++) {
			for (lim = 0; lim < NR_LIMITS; lim++, c++) {
				int ceiling;

				c->caps = aux_caps[ci].caps;
				c->overwrite = snap;
				c->nr_pages = FALLBACK_PAGES;
				c->fail_chunk = -1;
				ceiling = min(aux_model_ceiling(c), MAX_PAGE_ORDER);
				c->fail_above = lim == LIMIT_ORDER0 ? 0 :
						lim == LIMIT_HALF ? ceiling / 2 :
						ceiling - 1;
				snprintf(c->name, sizeof(c->name), "%s_%s_%s",
					 aux_caps[ci].name, snap ? "snapshot" : "rw",
					 aux_limit_names[lim]);
			}
		}
	}
}

/*
 * Generated: for each of the first GEN_CHUNKS chunks, the highest order that
 * succeeds (none, any, or one at random: -1 fails the chunk outright), on a
 * random capability, mode, size and watermark.  The checks replay the rule
 * against whatever the stubs refused, so any pattern is judged.
 */
#define NR_GEN_CASES 100
static struct aux_alloc_case gen_cases[NR_GEN_CASES];

static void aux_build_gen_cases(void)
{
	static const int sizes[] = { 2, 16, 100, 512, 1000, 2048 };
	struct rnd_state rnd;
	int i, k, n;

	prandom_seed_state(&rnd, seed);
	for (i = 0; i < NR_GEN_CASES; i++) {
		struct aux_alloc_case *c = &gen_cases[i];
		int ci = prandom_u32_state(&rnd) % ARRAY_SIZE(aux_caps);

		memset(c, 0, sizeof(*c));
		c->caps = aux_caps[ci].caps;
		c->overwrite = prandom_u32_state(&rnd) % 2;
		c->nr_pages = sizes[prandom_u32_state(&rnd) % ARRAY_SIZE(sizes)];
		c->watermark = c->overwrite ? 0 :
			aux_watermark(prandom_u32_state(&rnd) % NR_WM, c->nr_pages);
		c->fail_above = NO_INJECTION;
		c->fail_chunk = -1;
		c->per_chunk = true;
		n = scnprintf(c->name, sizeof(c->name), "gen%03d_%s_%s_%dp_", i,
			      aux_caps[ci].name, c->overwrite ? "snap" : "rw",
			      c->nr_pages);
		for (k = 0; k < GEN_CHUNKS; k++) {
			u32 r = prandom_u32_state(&rnd) % 8;

			/* Mostly whatever order is asked, as on a quiet system. */
			c->ceil[k] = r < 4 ? MAX_PAGE_ORDER : r == 4 ? -1 :
				     (int)(prandom_u32_state(&rnd) % (MAX_PAGE_ORDER + 1));
			n += scnprintf(c->name + n, sizeof(c->name) - n, "%c",
				       c->ceil[k] < 0 ? 'x' :
				       c->ceil[k] == MAX_PAGE_ORDER ? '*' :
				       'a' + c->ceil[k]);
		}
	}
}

static int perf_aux_alloc_suite_init(struct kunit_suite *suite)
{
	aux_build_order_cases();
	aux_build_fallback_cases();
	aux_build_gen_cases();
	pr_info("perf_aux_alloc: %d generated failure patterns, seed %lu (ring_buffer_kunit.seed= replays)\n",
		NR_GEN_CASES, seed);
	return 0;
}

KUNIT_ARRAY_PARAM(aux_orders, aux_table, aux_table_desc);
KUNIT_ARRAY_PARAM_DESC(aux_fallback, fallback_cases, name);
KUNIT_ARRAY_PARAM_DESC(aux_gen, gen_cases, name);

/*
 * The model's chunk @k for @c, -1 past the last: what aux_alloc_and_check()
 * replays when no request fails.
 */
static int aux_model_order(const struct aux_alloc_case *c, int k)
{
	int ceiling = aux_model_ceiling(c), remaining = c->nr_pages, order;

	for (;;) {
		if (remaining <= 0)
			return -1;
		order = min3(ceiling, ilog2(remaining), MAX_PAGE_ORDER);
		if (!k--)
			return order;
		remaining -= 1 << order;
	}
}

static int aux_model_ret(const struct aux_alloc_case *c)
{
	bool nosg_snapshot = (c->caps & PERF_PMU_CAP_AUX_NO_SG) && c->overwrite;

	return nosg_snapshot && aux_model_order(c, 0) != aux_model_ceiling(c) ?
	       -ENOMEM : 0;
}

/*
 * Chunk orders, page_private() and coverage follow the rules: the model's
 * replay of each request, then the row of the literal table against both
 * what rb_alloc_aux() gave and what the model expects, so that a fault the
 * model shares with the code still fails, and a model that strays from the
 * rule fails naming both.
 */
static void aux_alloc_orders_test(struct kunit *test)
{
	const struct aux_table_row *r = test->param_value;
	struct aux_alloc_ctx *ctx = test->priv;
	struct aux_alloc_case c = {
		.caps = r->caps, .overwrite = r->overwrite,
		.nr_pages = r->nr_pages, .fail_above = NO_INJECTION,
		.fail_chunk = -1,
	};
	int i, k, want, model, got;
	bool refused = false;

	strscpy(c.name, r->name, sizeof(c.name));
	c.watermark = r->overwrite ? 0 : aux_watermark(r->wm, r->nr_pages);

	aux_run_case(test, &c);

	for (k = 0; ; k++) {
		want = aux_row_order(r, k);
		model = aux_model_order(&c, k);
		KUNIT_EXPECT_EQ_MSG(test, want, model,
				    "chunk %d: table says order %d, model %d",
				    k, want, model);
		if (want < 0 || want != model)
			break;
	}
	KUNIT_EXPECT_EQ_MSG(test, r->ret, aux_model_ret(&c),
			    "table says %d, model %d", r->ret, aux_model_ret(&c));

	for (i = 0; i < ctx->nr_req; i++)
		refused |= !ctx->req[i].page;
	/*
	 * Nothing was injected: a refusal is a real allocation failure,
	 * which the model's replay judged; the table holds for a quiet
	 * system only.
	 */
	if (refused) {
		kunit_info(test, "an order was not had: the table is not compared\n");
		return;
	}
	for (i = 0, k = 0; i <= ctx->nr_req; i++, k++) {
		want = aux_row_order(r, k);
		got = i < ctx->nr_req ? ctx->req[i].order : -1;
		KUNIT_EXPECT_EQ_MSG(test, want, got,
				    "chunk %d: table says order %d, rb_alloc_aux() gave %d",
				    k, want, got);
		if (want != got)
			break;
	}
	KUNIT_EXPECT_EQ_MSG(test, r->ret, ctx->ret,
			    "table says %d, rb_alloc_aux() returned %d",
			    r->ret, ctx->ret);
}

/* Every order case of the cross product has exactly one row. */
static void aux_alloc_table_complete_test(struct kunit *test)
{
	int i, j, found;

	KUNIT_EXPECT_EQ(test, ARRAY_SIZE(order_cases), ARRAY_SIZE(aux_table));
	for (i = 0; i < ARRAY_SIZE(order_cases); i++) {
		const struct aux_alloc_case *c = &order_cases[i];

		for (j = 0, found = 0; j < ARRAY_SIZE(aux_table); j++) {
			const struct aux_table_row *r = &aux_table[j];

			if (strcmp(r->name, c->name))
				continue;
			found++;
			KUNIT_EXPECT_EQ_MSG(test, c->caps, r->caps, "%s", c->name);
			KUNIT_EXPECT_EQ_MSG(test, c->overwrite, r->overwrite,
					    "%s", c->name);
			KUNIT_EXPECT_EQ_MSG(test, c->nr_pages, r->nr_pages,
					    "%s", c->name);
			KUNIT_EXPECT_EQ_MSG(test, c->watermark,
					    r->overwrite ? 0 :
					    aux_watermark(r->wm, r->nr_pages),
					    "%s", c->name);
		}
		KUNIT_EXPECT_EQ_MSG(test, 1, found, "rows of %s", c->name);
	}
}

/*
 * Generated failure patterns: each chunk falls back from its ceiling one
 * order at a time to what the pattern lets it have, the next chunk starts
 * at the ceiling again, and every page comes back.
 */
static void aux_alloc_generated_test(struct kunit *test)
{
	aux_run_case(test, test->param_value);
}

/*
 * The literal row of fallback case @c against what rb_alloc_aux() did, and
 * against the model's ceiling and the limit injected from it.
 */
static void aux_fallback_against_table(struct kunit *test,
				       const struct aux_alloc_case *c,
				       int ceiling)
{
	struct aux_alloc_ctx *ctx = test->priv;
	int i, row, chunks = 0;

	for (row = 0; row < ARRAY_SIZE(aux_fallback_table); row++)
		if (!strcmp(aux_fallback_table[row].name, c->name))
			break;
	KUNIT_ASSERT_LT_MSG(test, row, ARRAY_SIZE(aux_fallback_table),
			    "no row for %s", c->name);
	KUNIT_EXPECT_EQ_MSG(test, aux_fallback_table[row].first_ask, ceiling,
			    "ceiling: table says %d, model %d",
			    aux_fallback_table[row].first_ask, ceiling);
	KUNIT_EXPECT_EQ_MSG(test, aux_fallback_table[row].settle, c->fail_above,
			    "limit: table says %d, model %d",
			    aux_fallback_table[row].settle, c->fail_above);
	KUNIT_ASSERT_GT(test, ctx->nr_req, 0);
	/* An order the stub let through and still not had: a real failure. */
	for (i = 0; i < ctx->nr_req; i++)
		if (!ctx->req[i].page && ctx->req[i].order <= c->fail_above) {
			kunit_info(test, "order %d not had: the table is not compared\n",
				   ctx->req[i].order);
			return;
		}
	KUNIT_EXPECT_EQ_MSG(test, aux_fallback_table[row].first_ask,
			    ctx->req[0].order,
			    "first request: table says order %d, rb_alloc_aux() asked %d",
			    aux_fallback_table[row].first_ask, ctx->req[0].order);
	for (i = 0; i < ctx->nr_req; i++) {
		if (!ctx->req[i].page)
			continue;
		chunks++;
		KUNIT_EXPECT_EQ_MSG(test, aux_fallback_table[row].settle,
				    ctx->req[i].order,
				    "chunk %d: table says order %d, rb_alloc_aux() gave %d",
				    chunks - 1, aux_fallback_table[row].settle,
				    ctx->req[i].order);
		if (ctx->req[i].order != aux_fallback_table[row].settle)
			break;
	}
	KUNIT_EXPECT_EQ(test, FALLBACK_PAGES >> aux_fallback_table[row].settle,
			chunks);
	KUNIT_EXPECT_EQ_MSG(test, aux_fallback_table[row].ret, ctx->ret,
			    "table says %d, rb_alloc_aux() returned %d",
			    aux_fallback_table[row].ret, ctx->ret);
}

/* Orders above a limit fail: the walk goes down one order at a time. */
static void aux_alloc_fallback_test(struct kunit *test)
{
	const struct aux_alloc_case *c = test->param_value;
	struct aux_alloc_ctx *ctx = test->priv;
	int ceiling = min(aux_model_ceiling(c), MAX_PAGE_ORDER);

	KUNIT_ASSERT_LT_MSG(test, c->fail_above, ceiling,
			    "nothing to fall back from on this kernel");
	aux_run_case(test, c);
	/* The first chunk must have asked for every order down to the limit. */
	KUNIT_EXPECT_GE(test, ctx->nr_req, ceiling - c->fail_above + 1);
	aux_fallback_against_table(test, c, ceiling);
}

/* The second chunk cannot be had at any order: all pages go back. */
static void aux_alloc_chunk_fails_test(struct kunit *test)
{
	struct aux_alloc_case c = {
		.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .nr_pages = 64,
		.fail_above = NO_INJECTION, .fail_chunk = 1,
	};

	aux_run_case(test, &c);
}

/*
 * The first chunk cannot be had at any order: rb_alloc_aux() allocated the
 * page-pointer array before it, and its error path must free that too,
 * although __rb_free_aux() finds no page to give back.  Freed, the array
 * must not be left in rb->aux_pages either: the next rb_alloc_aux() of the
 * buffer overwrites the pointer, the next __rb_free_aux() would free it
 * again.
 * A pointer left behind is not freed here: the test cannot tell a leaked
 * array from a freed one, and freeing the latter would be a double free.
 */
static void aux_alloc_first_page_fails_test(struct kunit *test)
{
	struct aux_alloc_ctx *ctx = test->priv;
	struct aux_alloc_case c = {
		.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .nr_pages = 64,
		.fail_above = NO_INJECTION, .fail_chunk = 0,
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
 * The pointer array must fit one MAX_PAGE_ORDER allocation, and a larger
 * one is refused before it is tried: the page allocator warns (and taints)
 * when asked for an order above MAX_PAGE_ORDER.  The whole taint mask is
 * compared, not TAINT_WARN alone when it was clear: a kernel already
 * tainted otherwise (a module, an earlier warning) still fails on any new
 * flag.  Only a TAINT_WARN set before the call hides another warning.
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

/*
 * perf_mmap() maps the AUX area a page at a time through
 * perf_mmap_to_page(): each page offset of the area gives its AUX page,
 * and the first offset past the area none of them.
 */
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
	ctx->max_req = c.nr_pages * (MAX_PAGE_ORDER + 2);
	ctx->req = kvcalloc(ctx->max_req, sizeof(*ctx->req), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->req);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, aux_kvfree, ctx->req));
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
	KUNIT_CASE(aux_alloc_table_complete_test),
	KUNIT_CASE_PARAM(aux_alloc_fallback_test, aux_fallback_gen_params),
	KUNIT_CASE_PARAM(aux_alloc_generated_test, aux_gen_gen_params),
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
