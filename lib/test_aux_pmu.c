// SPDX-License-Identifier: GPL-2.0
/*
 * Synthetic AUX trace PMUs for tools/testing/selftests/perf_aux.
 *
 * Arm SPE and TRBE exist on boards only, and QEMU emulates neither.  These
 * PMUs take the same kernel path as they do: the AUX pages come from
 * rb_alloc_aux(), and setup_aux() vmap()s them the way arm_spe_pmu_setup_aux()
 * and arm_trbe_alloc_buffer() do, keeping the chunk order each page arrived
 * in.  One PMU per capability set lets user space compare the rules:
 *
 *   test_aux_none    no AUX capability: order-0 pages
 *   test_aux_large   PERF_PMU_CAP_AUX_PREFER_LARGE, as SPE and TRBE want
 *   test_aux_nosg    PERF_PMU_CAP_AUX_NO_SG: one chunk in snapshot mode
 *
 * /sys/kernel/debug/test_aux_pmu/buffers has a line per live AUX buffer:
 *
 *   event <id> pmu <name> pages <n> snapshot <0|1> base <addr>
 *   chunks <order>x<count>,... entries <n> pmd <pages> cont <pages> pte <pages>
 *
 * (one line, split here) where the chunk orders are those rb_alloc_aux()
 * reported in page_private() and the granules come from a walk of the
 * kernel page tables of the vmap.  <addr> is printed with %pK.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/pgtable.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

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

static int aux_test_event_init(struct perf_event *event)
{
	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	return 0;
}

static int aux_test_add(struct perf_event *event, int flags)
{
	event->hw.state = flags & PERF_EF_START ? 0 : PERF_HES_STOPPED;
	return 0;
}

static void aux_test_del(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
}

static void aux_test_start(struct perf_event *event, int flags)
{
	event->hw.state = 0;
}

static void aux_test_stop(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
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

	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
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

enum aux_test_granule { AUX_PTE, AUX_CONT, AUX_PMD, AUX_NR_GRANULES };

/* The granule of the kernel mapping of @va, which must be mapped. */
static enum aux_test_granule aux_test_granule(unsigned long va)
{
	pgd_t *pgd = pgd_offset_k(va);
	p4d_t *p4d = p4d_offset(pgd, va);
	pud_t *pud = pud_offset(p4d, va);
	pmd_t *pmd = pmd_offset(pud, va);
	pmd_t pmdv = READ_ONCE(*pmd);

	if (pmd_leaf(pmdv))
		return AUX_PMD;
#ifdef CONFIG_ARM64
	if (pte_cont(ptep_get(pte_offset_kernel(pmd, va))))
		return AUX_CONT;
#endif
	return AUX_PTE;
}

/*
 * Pages per granule, and the translation entries they take: one per block
 * (PMD, cont-PTE), one per base page.
 */
static unsigned long aux_test_entries(struct aux_test_buf *buf,
				      unsigned long pages[AUX_NR_GRANULES])
{
	unsigned long entries = 0, va = (unsigned long)buf->base, end, step;
	enum aux_test_granule g;

	end = va + ((unsigned long)buf->nr_pages << PAGE_SHIFT);
	for (; va < end; va += step) {
		g = aux_test_granule(va);
		step = PAGE_SIZE;
		if (g == AUX_PMD)
			step = PMD_SIZE - (va & ~PMD_MASK);
#ifdef CONFIG_ARM64
		else if (g == AUX_CONT)
			step = CONT_PTE_SIZE - (va & ~CONT_PTE_MASK);
#endif
		step = min(step, end - va);
		pages[g] += step >> PAGE_SHIFT;
		entries++;
	}
	return entries;
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
	unsigned long pages[AUX_NR_GRANULES], entries;
	struct aux_test_buf *buf;

	mutex_lock(&aux_test_lock);
	list_for_each_entry(buf, &aux_test_bufs, node) {
		memset(pages, 0, sizeof(pages));
		entries = aux_test_entries(buf, pages);
		seq_printf(m, "event %llu pmu %s pages %d snapshot %d base %pK chunks ",
			   buf->event_id, buf->tp->name, buf->nr_pages,
			   buf->snapshot, buf->base);
		aux_test_show_chunks(m, buf);
		seq_printf(m, " entries %lu pmd %lu cont %lu pte %lu\n", entries,
			   pages[AUX_PMD], pages[AUX_CONT], pages[AUX_PTE]);
	}
	mutex_unlock(&aux_test_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(aux_test_buffers);

static struct aux_test_pmu aux_test_pmus[] = {
	{ .name = "test_aux_none" },
	{ .name = "test_aux_large",
	  .pmu.capabilities = PERF_PMU_CAP_AUX_PREFER_LARGE },
	{ .name = "test_aux_nosg", .pmu.capabilities = PERF_PMU_CAP_AUX_NO_SG },
};

static struct dentry *aux_test_dir;

static void aux_test_unregister(int n)
{
	while (n--)
		perf_pmu_unregister(&aux_test_pmus[n].pmu);
}

static int __init test_aux_pmu_init(void)
{
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(aux_test_pmus); i++) {
		struct pmu *pmu = &aux_test_pmus[i].pmu;

		pmu->module = THIS_MODULE;
		pmu->task_ctx_nr = perf_sw_context;
		pmu->capabilities |= PERF_PMU_CAP_EXCLUSIVE | PERF_PMU_CAP_ITRACE;
		pmu->event_init = aux_test_event_init;
		pmu->add = aux_test_add;
		pmu->del = aux_test_del;
		pmu->start = aux_test_start;
		pmu->stop = aux_test_stop;
		pmu->read = aux_test_read;
		pmu->setup_aux = aux_test_setup_aux;
		pmu->free_aux = aux_test_free_aux;
		ret = perf_pmu_register(pmu, aux_test_pmus[i].name, -1);
		if (ret) {
			pr_err("registering %s failed: %d\n",
			       aux_test_pmus[i].name, ret);
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
