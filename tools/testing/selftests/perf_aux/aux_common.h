/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the perf_aux selftests: opening an AUX event, mapping
 * its buffers, the allocation rule of rb_alloc_aux() and the report of the
 * synthetic AUX PMUs (lib/test_aux_pmu.c).
 */
#ifndef PERF_AUX_COMMON_H
#define PERF_AUX_COMMON_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#define AUX_REPORT "/sys/kernel/debug/test_aux_pmu/buffers"
#define PMU_DIR "/sys/bus/event_source/devices"
#define ARM64_PTDUMP "/sys/kernel/debug/kernel_page_tables"
#define FAIL_PAGE_ALLOC "/sys/kernel/debug/fail_page_alloc"
#define FAILSLAB "/sys/kernel/debug/failslab"
#define KMEMLEAK "/sys/kernel/debug/kmemleak"
#define COMPACT_MEMORY "/proc/sys/vm/compact_memory"

/* Constant skip reasons: they end up in result names. */
#define NO_TEST_PMU "no synthetic AUX PMU (CONFIG_TEST_AUX_PMU)"
#define NO_MEMORY "buffer larger than half of available memory"
#define NO_PERFMON "CPU-wide events need CAP_PERFMON"
#define NOT_ROOT "needs root: kernel addresses of the vmap"
#define NO_REPORT "no test_aux_pmu report in debugfs"
#define NO_MLOCK_ROOM "buffer beyond perf_event_mlock_kb without CAP_IPC_LOCK"
#define BASE_PAGES_ONLY "vmap() maps base pages only"
#define HUGE_VMAP_OFF "nohugevmalloc"
#define NOHUGE_IGNORED "vmap() maps large after nohugevmalloc, strict only"
#define NO_FAULT_INJECTION "no fail_page_alloc and failslab in debugfs"
#define NO_KMEMLEAK "no kmemleak in debugfs"
#define NO_FREE_BLOCK "no free block of the order the rule asks"

/* The synthetic PMUs and the capability each stands for. */
enum aux_caps { CAPS_NONE, CAPS_LARGE, CAPS_NOSG };

extern const char * const aux_pmu_names[];

static inline long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

static inline int sys_perf_event_open(struct perf_event_attr *attr,
				      pid_t pid, int cpu, int group,
				      unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group, flags);
}

static inline int ilog2_ul(unsigned long v)
{
	return 63 - __builtin_clzl(v);
}

int pmu_type(const char *name);
int max_page_order(void);
int get_order_ul(unsigned long bytes);
int pmu_format_set(const char *pmu, const char *field, __u64 value,
		   struct perf_event_attr *attr);
bool aux_setup_failure_forced(void);
long sysctl_read(const char *path);
int sysctl_write(const char *path, long v);
long meminfo_kb(const char *field);
long mem_available_kb(void);

/* /proc/buddyinfo: a column per order, at most this many. */
#define MAX_ORDERS 32
int buddy_free(unsigned long *nr);
unsigned long buddy_free_from(const unsigned long *nr, int n, int order);
int buddy_room_order(unsigned long pages, int top);
int buddy_room_order_compact(unsigned long pages, int top);
int aux_model_orders(enum aux_caps caps, bool snapshot, unsigned long nr_pages,
		     unsigned long watermark, int *orders, int max);

/* One line of the synthetic PMUs' report, parsed in place. */
struct aux_report {
	unsigned long long event;
	char pmu[32];
	int pages;
	int snapshot;
	unsigned long base;
	const char *chunks;	/* "9x2,0x3", into @line */
	unsigned long entries, pmd, cont, pte;
	/* Pages per block, and the granule map; 0 and "" from older modules. */
	unsigned long pmd_pages, cont_pages;
	const char *map;
	char *line;		/* the whole line, as getline() read it */
	size_t line_len;
};

int aux_report_read(unsigned long long id, struct aux_report *r);
void aux_report_free(struct aux_report *r);
int aux_report_orders(const char *chunks, int *orders, int max);
unsigned long chunk_entries(const int *orders, int n, unsigned long pmd_pages,
			    unsigned long cont_pages);
int aux_chunks_check(const char *chunks, unsigned long pages, int ceiling,
		     int below, int floor, int *orders, int max, int *fallbacks,
		     char *why, size_t len);
bool vmap_maps_large(void);
bool aux_strict(void);
bool huge_vmap_off(void);
unsigned long vmap_pmd_pages(void);

/* The kernel's fault injection (CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAILSLAB). */
int fault_attr(const char *dir, const char *attr, long v);
int fault_injection_setup(void);
int fault_inject(const char *dir, long times, int probability);
void fault_injection_restore(void);

/* The synthetic PMUs' vmap() call site, as /proc/vmallocinfo names it. */
#define AUX_VMAP_CALLER "aux_test_setup_aux"
int module_vmaps(void);
int module_vmaps_settled(int want);

/* An open AUX event with its data and AUX areas mapped. */
struct aux_buffer {
	int fd;
	void *base;		/* data area: user page + data pages */
	size_t data_size;
	void *aux;
	size_t aux_size;
	unsigned long long id;
};

/* Buffer sizes, resolved against the running kernel's page size. */
enum aux_size { TWO_PAGES, SIXTEEN_PAGES, PMD_BYTES, TWICE_PMD, SIZE_64M,
		SIZE_1G };

unsigned long pmd_bytes(void);
unsigned long aux_pages(enum aux_size size);
int aux_event_open(int type, unsigned long watermark);

/*
 * Data pages after the user page: room for a few thousand PERF_RECORD_AUX
 * records, so a consumer that drains them between AUX reads loses none.
 */
#define AUX_DATA_PAGES 16

int aux_data_map(struct aux_buffer *b, int fd);
int aux_area_map(struct aux_buffer *b, unsigned long aux_pages, bool snapshot);
int aux_buffer_map(struct aux_buffer *b, int fd, unsigned long aux_pages,
		   bool snapshot);
void aux_buffer_unmap(struct aux_buffer *b);
int aux_records_read(struct aux_buffer *b,
		     int (*fn)(void *ctx, __u64 off, __u64 size, __u64 flags),
		     void *ctx);
int kmsg_open_at_end(void);
int kmsg_warnings(int fd);
int kmemleak_suspects(const char *func, unsigned long *addrs, int max,
		      char *first, size_t len);

#endif /* PERF_AUX_COMMON_H */
