// SPDX-License-Identifier: GPL-2.0
/*
 * Synthetic AUX trace PMUs for the perf_aux selftests.
 *
 * Like Arm SPE and TRBE, which QEMU does not emulate, they get their pages
 * from rb_alloc_aux() and vmap() them in setup_aux(), keeping each page's
 * chunk order.  test_aux_none has no AUX capability, test_aux_large
 * PERF_PMU_CAP_AUX_PREFER_LARGE, test_aux_nosg PERF_PMU_CAP_AUX_NO_SG.
 *
 * sysfs vmap/: pmd_pages and cont_pages (0: none), the pages of a PMD block
 * and of an arm64 cont-PTE block.
 *
 * debugfs test_aux_pmu/buffers: a line per live buffer, "event=<id>
 * pmu=<name> pages=<n> snapshot=<0|1> base=<vmap, %pK>
 * chunks=<order>x<count>,..." (runs in page order).
 *
 * With CAP_PERFMON, an event bound to a CPU gets trace written through the
 * vmap as the drivers do, by a softirq hrtimer pinned to that CPU.
 * attr.config: mode (0 none, 1 SPE-like, 2 TRBE-like), words (k), align
 * (log2, SPE), burst (records per tick); config1: period in ns (0: 1 ms).
 * Record seq has words w(seq, i) = seq * GEN_WORD_MUL + i and csum =
 * ~(seq + sum of w), little endian:
 *  - SPE-like: packets 0xb0 seq, k x 0xb2 w, 0x71 csum; padding, limits,
 *    TRUNCATED and snapshot wrap as in arm_spe_pmu.c;
 *  - TRBE-like: frames of A-Sync (11 x 0x00, 0x80), seq, k words, csum, cut
 *    anywhere; CORESIGHT_FORMAT_RAW, TRUNCATED as in coresight-trbe.c.
 * The event count is the number of records generated.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/pgtable.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/unaligned.h>

/* attr.config fields, as format/ in sysfs gives them; config1 the period. */
#define CFG_MODE	GENMASK_ULL(1, 0)
#define CFG_WORDS	GENMASK_ULL(15, 8)
#define CFG_ALIGN	GENMASK_ULL(19, 16)
#define CFG_BURST	GENMASK_ULL(47, 32)

struct aux_test_pmu {
	struct pmu pmu;
	const char *name;
};

struct aux_test_buf {
	struct list_head node;
	struct aux_test_pmu *tp;
	u64 event_id;
	void *base;
	int nr_pages;
	bool snapshot;
	u8 *orders;		/* chunk order of each page, as received */
};

static LIST_HEAD(aux_test_bufs);
static DEFINE_MUTEX(aux_test_lock);

static struct aux_test_pmu *to_test_pmu(struct pmu *pmu)
{
	return container_of(pmu, struct aux_test_pmu, pmu);
}

enum aux_gen_mode { GEN_NONE, GEN_SPE, GEN_TRBE, GEN_NR_MODES };

#define GEN_WORD_MUL		0x9e3779b97f4a7c15ULL
#define GEN_MIN_PERIOD_NS	(100 * NSEC_PER_USEC)
#define GEN_PERIOD_NS		NSEC_PER_MSEC
#define GEN_MAX_TICK_BYTES	SZ_256K
#define SPE_PKT_BYTES		9	/* header + 8-byte payload */
#define ETE_ASYNC_BYTES		12

/* The trace generator of one event. */
struct aux_gen {
	struct hrtimer timer;
	struct perf_event *event;
	struct perf_output_handle handle;
	enum aux_gen_mode mode;
	unsigned int words;
	unsigned int align;
	unsigned int burst;
	u64 period;
	size_t rec_bytes;
	u64 seq;		/* next record to generate */
	u64 pos;		/* TRBE-like: stream offset of the next byte */
	u64 frame_seq;		/* frame[] holds this frame */
	u8 frame[];
};

static u64 gen_word(u64 seq, unsigned int i)
{
	return seq * GEN_WORD_MUL + i;
}

static void gen_put(u8 *p, u8 header, u64 payload)
{
	p[0] = header;
	put_unaligned_le64(payload, p + 1);
}

static void gen_spe_record(struct aux_gen *g, u8 *p, u64 seq)
{
	u64 sum = seq;
	unsigned int i;

	gen_put(p, 0xb0, seq);
	for (i = 0; i < g->words; i++) {
		sum += gen_word(seq, i);
		gen_put(p + SPE_PKT_BYTES * (i + 1), 0xb2, gen_word(seq, i));
	}
	gen_put(p + SPE_PKT_BYTES * (i + 1), 0x71, ~sum);
}

static void gen_trbe_frame(struct aux_gen *g, u64 seq)
{
	u8 *p = g->frame + ETE_ASYNC_BYTES;
	u64 sum = seq;
	unsigned int i;

	memset(g->frame, 0, ETE_ASYNC_BYTES - 1);
	g->frame[ETE_ASYNC_BYTES - 1] = 0x80;
	put_unaligned_le64(seq, p);
	for (i = 0; i < g->words; i++) {
		sum += gen_word(seq, i);
		put_unaligned_le64(gen_word(seq, i), p + 8 * (i + 1));
	}
	put_unaligned_le64(~sum, p + 8 * (i + 1));
	g->frame_seq = seq;
}

static size_t gen_buf_size(struct aux_test_buf *buf)
{
	return (size_t)buf->nr_pages << PAGE_SHIFT;
}

/* End of the room from @head, as arm_spe_pmu_next_off(). */
static size_t gen_limit(struct perf_output_handle *h, struct aux_test_buf *buf,
			size_t head)
{
	size_t size = gen_buf_size(buf);
	size_t tail = (h->head + h->size) & (size - 1);

	if (head < tail)
		return round_down(tail, PAGE_SIZE);
	return size;
}

/* Zero padding the consumer never gets a record for. */
static void gen_pad(struct perf_output_handle *h, struct aux_test_buf *buf,
		    size_t head, size_t len)
{
	memset(buf->base + head, 0, len);
	if (!buf->snapshot)
		perf_aux_output_skip(h, len);
}

static void gen_spe_snapshot(struct perf_event *event, struct aux_gen *g,
			     struct aux_test_buf *buf)
{
	struct perf_output_handle *h = &g->handle;
	size_t size = gen_buf_size(buf), head, limit, start;
	unsigned int n = 0;

	head = h->head & (size - 1);
	/* As arm_spe_pmu_next_snapshot_off(): stop at each half buffer. */
	limit = head < size / 2 ? size / 2 : size;
	if (limit - head < g->rec_bytes) {
		gen_pad(h, buf, head, limit - head);
		head = limit & (size - 1);
		limit = head + size / 2;
	}
	for (start = head; n < g->burst && limit - head >= g->rec_bytes; n++) {
		gen_spe_record(g, buf->base + head, g->seq++);
		head += g->rec_bytes;
	}
	h->head = head & (size - 1);
	perf_aux_output_end(h, head - start);
	local64_add(n, &event->count);
}

/*
 * One SPE-like session: writes what fits of @want records, returns how many.
 * *@more: the rest may follow after the wrap; else it is lost (TRUNCATED).
 */
static unsigned int gen_spe_session(struct aux_gen *g, struct aux_test_buf *buf,
				    unsigned int want, bool *more)
{
	struct perf_output_handle *h = &g->handle;
	size_t size = gen_buf_size(buf), head, limit, start;
	unsigned int n = 0;

	for (;;) {
		head = h->head & (size - 1);
		if (!IS_ALIGNED(head, g->align)) {
			gen_pad(h, buf, head,
				min(ALIGN(head, g->align) - head, h->size));
			head = h->head & (size - 1);
		}
		limit = h->size ? gen_limit(h, buf, head) : head;
		if (limit == size && limit - head < g->rec_bytes) {
			/* No record fits before the end: pad to it, go on at 0. */
			gen_pad(h, buf, head, min(limit - head, h->size));
			continue;
		}
		break;
	}
	for (start = head; n < want && limit >= head + g->rec_bytes; n++) {
		gen_spe_record(g, buf->base + head, g->seq++);
		head += g->rec_bytes;
	}
	/* Stopped at the buffer end with room beyond: go on at 0. */
	*more = n < want && limit == size &&
		h->size - (head - start) >= (want - n + 1) * g->rec_bytes + g->align;
	if (n < want && !*more) {
		/* The consumer lags: what did not fit is lost. */
		perf_aux_output_flag(h, PERF_AUX_FLAG_TRUNCATED);
		g->seq += want - n;
	}
	perf_aux_output_end(h, head - start);
	return n;
}

static void gen_spe(struct perf_event *event, struct aux_gen *g)
{
	struct aux_test_buf *buf;
	unsigned int want = g->burst;
	bool more = true;

	/* Nothing is generated while there is no room at all. */
	while (want && more) {
		buf = perf_aux_output_begin(&g->handle, event);
		if (!buf)
			break;
		if (buf->snapshot)
			return gen_spe_snapshot(event, g, buf);
		want -= gen_spe_session(g, buf, want, &more);
		if (!more)
			want = 0;
	}
	local64_add(g->burst - want, &event->count);
}

/* Copies @len bytes of the frame stream from g->pos to @dst. */
static void gen_trbe_copy(struct aux_gen *g, u8 *dst, size_t len)
{
	size_t chunk;
	u64 seq, off;

	while (len) {
		seq = div64_u64_rem(g->pos, g->rec_bytes, &off);
		if (seq != g->frame_seq)
			gen_trbe_frame(g, seq);
		chunk = min_t(u64, len, g->rec_bytes - off);
		memcpy(dst, g->frame + off, chunk);
		dst += chunk;
		len -= chunk;
		g->pos += chunk;
	}
}

static void gen_trbe(struct perf_event *event, struct aux_gen *g)
{
	struct perf_output_handle *h = &g->handle;
	u64 begin = g->pos, end = (g->seq + g->burst) * g->rec_bytes;
	struct aux_test_buf *buf;
	size_t size, head, limit, len;

	while (g->pos < end) {
		buf = perf_aux_output_begin(h, event);
		if (!buf)
			break;
		perf_aux_output_flag(h, PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW);
		size = gen_buf_size(buf);
		/* A snapshot keeps the last buffer of the stream, no more. */
		if (buf->snapshot && end - g->pos > size)
			g->pos = end - size;
		head = h->head & (size - 1);
		limit = buf->snapshot ? size : gen_limit(h, buf, head);
		len = limit > head ? min_t(u64, end - g->pos, limit - head) : 0;
		gen_trbe_copy(g, buf->base + head, len);
		if (buf->snapshot) {
			h->head = (head + len) & (size - 1);
		} else if (g->pos < end &&
			   (limit < size || h->size - len < end - g->pos)) {
			/* Stopped short of the consumer: the rest is lost. */
			perf_aux_output_flag(h, PERF_AUX_FLAG_TRUNCATED);
			g->pos = end;
		}
		perf_aux_output_end(h, len);
	}
	/* Nothing is generated while there is no room at all. */
	if (g->pos == begin)
		return;
	g->pos = end;
	g->seq += g->burst;
	local64_add(g->burst, &event->count);
}

/*
 * Softirq, writing with interrupts off as pmu::stop() and pmu::start() run
 * on the event's CPU: nothing once the event stopped or started again.
 */
static enum hrtimer_restart aux_gen_tick(struct hrtimer *timer)
{
	struct aux_gen *g = container_of(timer, struct aux_gen, timer);
	struct perf_event *event = g->event;
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	unsigned long flags;
	ktime_t start;

	local_irq_save(flags);
	if (!(event->hw.state & PERF_HES_STOPPED) && !hrtimer_is_queued(timer)) {
		start = ktime_get();
		if (g->mode == GEN_SPE)
			gen_spe(event, g);
		else
			gen_trbe(event, g);
		/* A tick takes about a quarter of the CPU at most, however slow. */
		hrtimer_forward_now(timer, max(ns_to_ktime(g->period),
					       4 * ktime_sub(ktime_get(), start)));
		ret = HRTIMER_RESTART;
	}
	local_irq_restore(flags);
	return ret;
}

static void aux_test_destroy(struct perf_event *event)
{
	struct aux_gen *g = event->pmu_private;

	hrtimer_cancel(&g->timer);
	kfree(g);
}

static int aux_test_event_init(struct perf_event *event)
{
	struct perf_event_attr *attr = &event->attr;
	u64 mode = FIELD_GET(CFG_MODE, attr->config);
	u64 period = attr->config1;
	struct aux_gen *g;
	unsigned int words;
	size_t rec;

	if (attr->type != event->pmu->type)
		return -ENOENT;
	if (mode == GEN_NONE)
		return 0;
	/* Trace comes from a kernel timer: only for those who may profile. */
	if (!perfmon_capable())
		return -EACCES;
	if (event->cpu < 0 || mode >= GEN_NR_MODES ||
	    (attr->config & ~(CFG_MODE | CFG_WORDS | CFG_ALIGN | CFG_BURST)) ||
	    FIELD_GET(CFG_ALIGN, attr->config) > 11 ||
	    (period && (period < GEN_MIN_PERIOD_NS || period > NSEC_PER_SEC)))
		return -EINVAL;
	words = FIELD_GET(CFG_WORDS, attr->config);
	if (mode == GEN_SPE)
		rec = SPE_PKT_BYTES * (words + 2);
	else
		rec = ETE_ASYNC_BYTES + 8 * (words + 2);
	/* Bounded work per tick, whatever the buffer. */
	if (FIELD_GET(CFG_BURST, attr->config) * rec > GEN_MAX_TICK_BYTES)
		return -EINVAL;
	g = kzalloc(struct_size(g, frame, rec), GFP_KERNEL);
	if (!g)
		return -ENOMEM;
	g->mode = mode;
	g->words = words;
	g->align = 1U << FIELD_GET(CFG_ALIGN, attr->config);
	g->burst = max_t(u64, FIELD_GET(CFG_BURST, attr->config), 1);
	g->period = period ?: GEN_PERIOD_NS;
	g->rec_bytes = rec;
	g->frame_seq = U64_MAX;
	g->event = event;
	hrtimer_setup(&g->timer, aux_gen_tick, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_SOFT);
	event->pmu_private = g;
	event->destroy = aux_test_destroy;
	return 0;
}

static void aux_test_start(struct perf_event *event, int flags)
{
	struct aux_gen *g = event->pmu_private;

	event->hw.state = 0;
	if (g)
		hrtimer_start(&g->timer, ns_to_ktime(g->period),
			      HRTIMER_MODE_REL_PINNED_SOFT);
}

static void aux_test_stop(struct perf_event *event, int flags)
{
	struct aux_gen *g = event->pmu_private;

	event->hw.state = PERF_HES_STOPPED;
	/* Not hrtimer_cancel(): this may interrupt the tick it would wait for. */
	if (g)
		hrtimer_try_to_cancel(&g->timer);
}

static int aux_test_add(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
	if (flags & PERF_EF_START)
		aux_test_start(event, flags);
	return 0;
}

static void aux_test_read(struct perf_event *event)
{
}

/* As arm_spe_pmu_setup_aux() and arm_trbe_alloc_buffer(). */
static void *aux_test_setup_aux(struct perf_event *event, void **pages,
				int nr_pages, bool snapshot)
{
	struct aux_test_buf *buf;
	struct page **pglist;
	int i, order = 0, left = 0;

	if (nr_pages < 2)
		return NULL;
	buf = kzalloc_obj(*buf);
	if (!buf)
		return NULL;
	buf->orders = kcalloc(nr_pages, sizeof(*buf->orders), GFP_KERNEL);
	pglist = kcalloc(nr_pages, sizeof(*pglist), GFP_KERNEL);
	if (!buf->orders || !pglist)
		goto out_free;
	for (i = 0; i < nr_pages; i++) {
		pglist[i] = virt_to_page(pages[i]);
		/* A chunk's order is on its first page only. */
		if (!left) {
			order = PagePrivate(pglist[i]) ? page_private(pglist[i]) : 0;
			left = 1 << order;
		}
		buf->orders[i] = order;
		left--;
	}
	buf->base = vmap(pglist, nr_pages, VM_MAP, PAGE_KERNEL);
	if (!buf->base)
		goto out_free;
	kfree(pglist);
	buf->tp = to_test_pmu(event->pmu);
	buf->event_id = event->id;
	buf->nr_pages = nr_pages;
	buf->snapshot = snapshot;
	mutex_lock(&aux_test_lock);
	list_add_tail(&buf->node, &aux_test_bufs);
	mutex_unlock(&aux_test_lock);
	return buf;

out_free:
	kfree(pglist);
	kfree(buf->orders);
	kfree(buf);
	return NULL;
}

static void aux_test_free_aux(void *aux)
{
	struct aux_test_buf *buf = aux;

	mutex_lock(&aux_test_lock);
	list_del(&buf->node);
	mutex_unlock(&aux_test_lock);
	vunmap(buf->base);
	kfree(buf->orders);
	kfree(buf);
}

static unsigned long aux_test_cont_pages(void)
{
#ifdef CONFIG_ARM64
	return CONT_PTES;
#else
	return 0;
#endif
}

static void aux_test_show_chunks(struct seq_file *m, struct aux_test_buf *buf)
{
	int i = 0, order, chunks;
	const char *sep = "";

	while (i < buf->nr_pages) {
		order = buf->orders[i];
		for (chunks = 0; i < buf->nr_pages && buf->orders[i] == order;
		     chunks++)
			i += 1 << order;
		seq_printf(m, "%s%dx%d", sep, order, chunks);
		sep = ",";
	}
}

static int aux_test_buffers_show(struct seq_file *m, void *v)
{
	struct aux_test_buf *buf;

	mutex_lock(&aux_test_lock);
	list_for_each_entry(buf, &aux_test_bufs, node) {
		seq_printf(m, "event=%llu pmu=%s pages=%d snapshot=%d base=%pK chunks=",
			   buf->event_id, buf->tp->name, buf->nr_pages,
			   buf->snapshot, buf->base);
		aux_test_show_chunks(m, buf);
		seq_putc(m, '\n');
	}
	mutex_unlock(&aux_test_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(aux_test_buffers);

PMU_FORMAT_ATTR(mode, "config:0-1");
PMU_FORMAT_ATTR(words, "config:8-15");
PMU_FORMAT_ATTR(align, "config:16-19");
PMU_FORMAT_ATTR(burst, "config:32-47");
PMU_FORMAT_ATTR(period, "config1:0-63");

static struct attribute *aux_test_format_attrs[] = {
	&format_attr_mode.attr,
	&format_attr_words.attr,
	&format_attr_align.attr,
	&format_attr_burst.attr,
	&format_attr_period.attr,
	NULL,
};

static const struct attribute_group aux_test_format_group = {
	.name = "format",
	.attrs = aux_test_format_attrs,
};

static ssize_t pmd_pages_show(struct device *dev,
			      struct device_attribute *attr, char *page)
{
	return sysfs_emit(page, "%lu\n", PMD_SIZE >> PAGE_SHIFT);
}

static ssize_t cont_pages_show(struct device *dev,
			       struct device_attribute *attr, char *page)
{
	return sysfs_emit(page, "%lu\n", aux_test_cont_pages());
}

static DEVICE_ATTR_RO(pmd_pages);
static DEVICE_ATTR_RO(cont_pages);

static struct attribute *aux_test_vmap_attrs[] = {
	&dev_attr_pmd_pages.attr,
	&dev_attr_cont_pages.attr,
	NULL,
};

static const struct attribute_group aux_test_vmap_group = {
	.name = "vmap",
	.attrs = aux_test_vmap_attrs,
};

static const struct attribute_group *aux_test_attr_groups[] = {
	&aux_test_format_group,
	&aux_test_vmap_group,
	NULL,
};

static struct aux_test_pmu aux_test_pmus[] = {
	{ .name = "test_aux_none" },
	{ .name = "test_aux_large",
	  .pmu.capabilities = PERF_PMU_CAP_AUX_PREFER_LARGE },
	{ .name = "test_aux_nosg", .pmu.capabilities = PERF_PMU_CAP_AUX_NO_SG },
};

static struct dentry *aux_test_dir;

static int aux_test_register(struct aux_test_pmu *tp)
{
	struct pmu *pmu = &tp->pmu;
	int ret;

	pmu->module = THIS_MODULE;
	pmu->task_ctx_nr = perf_sw_context;
	pmu->capabilities |= PERF_PMU_CAP_EXCLUSIVE | PERF_PMU_CAP_ITRACE;
	pmu->attr_groups = aux_test_attr_groups;
	pmu->event_init = aux_test_event_init;
	pmu->add = aux_test_add;
	pmu->del = aux_test_stop;
	pmu->start = aux_test_start;
	pmu->stop = aux_test_stop;
	pmu->read = aux_test_read;
	pmu->setup_aux = aux_test_setup_aux;
	pmu->free_aux = aux_test_free_aux;
	ret = perf_pmu_register(pmu, tp->name, -1);
	if (ret)
		pr_err("registering %s failed: %d\n", tp->name, ret);
	return ret;
}

static void aux_test_unregister(int n)
{
	while (n--)
		perf_pmu_unregister(&aux_test_pmus[n].pmu);
}

static int __init test_aux_pmu_init(void)
{
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(aux_test_pmus); i++) {
		ret = aux_test_register(&aux_test_pmus[i]);
		if (ret) {
			aux_test_unregister(i);
			return ret;
		}
	}
	aux_test_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("buffers", 0400, aux_test_dir, NULL,
			    &aux_test_buffers_fops);
	return 0;
}

static void __exit test_aux_pmu_exit(void)
{
	debugfs_remove_recursive(aux_test_dir);
	aux_test_unregister(ARRAY_SIZE(aux_test_pmus));
}

module_init(test_aux_pmu_init);
module_exit(test_aux_pmu_exit);

MODULE_INFO(test, "Y");
MODULE_DESCRIPTION("Synthetic AUX trace PMUs for the perf_aux kselftests");
MODULE_LICENSE("GPL");
