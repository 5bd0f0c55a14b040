/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the perf_aux selftests; PMUs of lib/test_aux_pmu.c. */
#ifndef PERF_AUX_COMMON_H
#define PERF_AUX_COMMON_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#define PMU_DIR "/sys/bus/event_source/devices"
#define ARM64_PTDUMP "/sys/kernel/debug/kernel_page_tables"
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
#define NO_FREE_BLOCK "no free block of the order the rule asks"

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
	return (int)(8 * sizeof(v)) - 1 - __builtin_clzl(v);
}

int pmu_type(const char *name);
int max_page_order(void);
int pmu_format_set(const char *pmu, const char *field, __u64 value,
		   struct perf_event_attr *attr);
bool aux_setup_failure_forced(void);

long sysctl_read(const char *path);
int sysctl_write(const char *path, long v);
long meminfo_kb(const char *field);

static inline long mem_available_kb(void)
{
	return meminfo_kb("MemAvailable");
}

/* /proc/buddyinfo: a column per order, at most this many. */
#define MAX_ORDERS 32
int buddy_free(unsigned long *nr);
unsigned long buddy_free_from(const unsigned long *nr, int n, int order);
int buddy_room_order(unsigned long pages, int top);
int buddy_room_order_compact(unsigned long pages, int top);

/*
 * rb_alloc_aux()'s rule, commit 18049c8cff9c ("perf/aux: Allocate
 * non-contiguous AUX pages by default"): single pages without PREFER_LARGE
 * or NO_SG, else chunks of the watermark (default half the buffer), or the
 * whole buffer in snapshot mode; none above MAX_PAGE_ORDER.
 */
enum aux_chunk { CHUNK_PAGE, CHUNK_HALF, CHUNK_WHOLE };
int aux_chunk_order(enum aux_chunk chunk, unsigned long nr_pages);

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
enum aux_size { TWO_PAGES, SIXTEEN_PAGES, PMD_BYTES, TWICE_PMD, SIZE_64M };

long aux_vmap_attr(const char *name);
unsigned long pmd_bytes(void);
unsigned long aux_pages(enum aux_size size);
int aux_event_open(int type, unsigned long watermark);

/* Data pages after the user page: room for thousands of PERF_RECORD_AUX. */
#define AUX_DATA_PAGES 16

int aux_data_map(struct aux_buffer *b, int fd);
int aux_area_map(struct aux_buffer *b, unsigned long aux_pages, bool snapshot);
void aux_buffer_unmap(struct aux_buffer *b);
int aux_records_read(struct aux_buffer *b,
		     int (*fn)(void *ctx, __u64 off, __u64 size, __u64 flags),
		     void *ctx);

/* Both areas of @fd.  Returns 0 or -errno of the failing step. */
static inline int aux_buffer_map(struct aux_buffer *b, int fd,
				 unsigned long aux_pages, bool snapshot)
{
	return aux_data_map(b, fd) ?: aux_area_map(b, aux_pages, snapshot);
}

#endif /* PERF_AUX_COMMON_H */
