// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the perf_aux selftests; PMUs of lib/test_aux_pmu.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "../kselftest.h"
#include "aux_common.h"

const char * const aux_pmu_names[] = {
	[CAPS_NONE] = "test_aux_none",
	[CAPS_LARGE] = "test_aux_large",
	[CAPS_NOSG] = "test_aux_nosg",
};

/* The perf type of PMU @name, or -1 when there is no such PMU. */
int pmu_type(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), PMU_DIR "/%s/type", name);
	return sysctl_read(path);
}

/*
 * Puts @value into @field of PMU @pmu where sysfs format/ says ("config:8-15").
 * 0, -ENOENT without the field, -EINVAL bad format, -ERANGE if it won't fit.
 */
int pmu_format_set(const char *pmu, const char *field, __u64 value,
		   struct perf_event_attr *attr)
{
	char path[256], word[16];
	unsigned int lo, hi;
	__u64 *cfg, mask;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), PMU_DIR "/%s/format/%s", pmu, field);
	f = fopen(path, "r");
	if (!f)
		return -ENOENT;
	n = fscanf(f, "%15[a-z0-9]:%u-%u", word, &lo, &hi);
	fclose(f);
	if (n == 2)
		hi = lo;
	else if (n != 3)
		return -EINVAL;
	cfg = !strcmp(word, "config") ? (__u64 *)&attr->config :
	      !strcmp(word, "config1") ? (__u64 *)&attr->config1 :
	      !strcmp(word, "config2") ? (__u64 *)&attr->config2 : NULL;
	if (!cfg || hi < lo || hi > 63)
		return -EINVAL;
	mask = hi - lo == 63 ? ~0ULL : ((1ULL << (hi - lo + 1)) - 1);
	if (value & ~mask)
		return -ERANGE;
	*cfg = (*cfg & ~(mask << lo)) | value << lo;
	return 0;
}

/*
 * Each program loads test_aux_pmu (CONFIG_TEST_AUX_PMU=m) if needed and
 * unloads it at exit; without it the tests skip with NO_TEST_PMU.
 */
static bool aux_pmu_module_loaded;

static void __attribute__((constructor)) aux_pmu_module_load(void)
{
	if (pmu_type(aux_pmu_names[CAPS_NONE]) >= 0)
		return;
	/* Said at the end: nothing may come before the TAP header. */
	if (system("modprobe -q test_aux_pmu 2>/dev/null") == 0 &&
	    pmu_type(aux_pmu_names[CAPS_NONE]) >= 0)
		aux_pmu_module_loaded = true;
}

static void __attribute__((destructor)) aux_pmu_module_unload(void)
{
	if (!aux_pmu_module_loaded)
		return;
	ksft_print_msg("test_aux_pmu: module loaded for this program\n");
	if (system("modprobe -q -r test_aux_pmu 2>/dev/null"))
		ksft_print_msg("test_aux_pmu: modprobe -r failed\n");
}

/* A one-number file (sysctl) read: the value, or -1. */
long sysctl_read(const char *path)
{
	long v = -1;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* @v written to a sysctl: 0 or -errno. */
int sysctl_write(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fprintf(f, "%ld\n", v) < 0 ? -EIO : 0;
	return fclose(f) ? -errno : ret;
}

/* PERF_AUX_FAIL_SETUP=1: setups fail after changing a sysctl (restore test). */
bool aux_setup_failure_forced(void)
{
	const char *v = getenv("PERF_AUX_FAIL_SETUP");

	return v && !strcmp(v, "1");
}

/* MAX_PAGE_ORDER of the running kernel: buddyinfo's last column. */
int max_page_order(void)
{
	unsigned long nr[MAX_ORDERS];
	int n = buddy_free(nr);

	return n > 0 ? n - 1 : -1;
}

/* Field @field of /proc/meminfo in kB ("MemFree"), or -1. */
long meminfo_kb(const char *field)
{
	size_t n = strlen(field), len = 0;
	char *line = NULL, *end;
	long kb = -1, v;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (getline(&line, &len, f) > 0)
		if (!strncmp(line, field, n) && line[n] == ':') {
			v = strtol(line + n + 1, &end, 10);
			if (end != line + n + 1 && !strcmp(end, " kB\n"))
				kb = v;
			break;
		}
	free(line);
	fclose(f);
	return kb;
}

/* The order of the chunks @chunk names for a buffer of @nr_pages pages. */
int aux_chunk_order(enum aux_chunk chunk, unsigned long nr_pages)
{
	int order = ilog2_ul(nr_pages) - (chunk == CHUNK_HALF);
	int max = max_page_order();

	if (chunk == CHUNK_PAGE || order < 0)
		return 0;
	return order < max ? order : max;
}

/* A number from the synthetic PMUs' sysfs vmap/ directory, or -1. */
long aux_vmap_attr(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), PMU_DIR "/%s/vmap/%s",
		 aux_pmu_names[CAPS_NONE], name);
	return sysctl_read(path);
}

/* PMD_SIZE of the running kernel, as the module reports it; 0 without. */
unsigned long pmd_bytes(void)
{
	static long pages;

	if (pages <= 0)
		pages = aux_vmap_attr("pmd_pages");
	return pages > 0 ? pages * page_size() : 0;
}

unsigned long aux_pages(enum aux_size size)
{
	switch (size) {
	case TWO_PAGES:
		return 2;
	case SIXTEEN_PAGES:
		return 16;
	case PMD_BYTES:
		return pmd_bytes() / page_size();
	case TWICE_PMD:
		return 2 * pmd_bytes() / page_size();
	default:
		return (64UL << 20) / page_size();
	}
}

/* perf_event_open() of an AUX event of PMU @type on this task. */
int aux_event_open(int type, unsigned long watermark)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = type,
		.disabled = 1,
		.exclude_kernel = 1,
		.aux_watermark = watermark,
	};

	return sys_perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Maps the data area of @fd: 1 + AUX_DATA_PAGES pages.  0 or -errno. */
int aux_data_map(struct aux_buffer *b, int fd)
{
	memset(b, 0, sizeof(*b));
	b->fd = fd;
	b->data_size = (1 + AUX_DATA_PAGES) * page_size();
	b->base = mmap(NULL, b->data_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);
	if (b->base == MAP_FAILED) {
		b->base = NULL;
		return -errno;
	}
	return 0;
}

/* Maps @aux_pages of AUX after the data area (read-only for snapshot). */
int aux_area_map(struct aux_buffer *b, unsigned long aux_pages, bool snapshot)
{
	struct perf_event_mmap_page *up = b->base;
	int prot = PROT_READ | (snapshot ? 0 : PROT_WRITE);

	b->aux_size = aux_pages * page_size();
	up->aux_offset = b->data_size;
	up->aux_size = b->aux_size;
	b->aux = mmap(NULL, b->aux_size, prot, MAP_SHARED, b->fd, b->data_size);
	if (b->aux == MAP_FAILED) {
		b->aux = NULL;
		return -errno;
	}
	if (ioctl(b->fd, PERF_EVENT_IOC_ID, &b->id))
		return -errno;
	return 0;
}

void aux_buffer_unmap(struct aux_buffer *b)
{
	if (b->aux)
		munmap(b->aux, b->aux_size);
	if (b->base)
		munmap(b->base, b->data_size);
	b->aux = NULL;
	b->base = NULL;
}

/*
 * Consumes the data area, calling @fn(ctx, offset, size, flags) per
 * PERF_RECORD_AUX.  Returns their count, -ENOSPC on PERF_RECORD_LOST,
 * -EBADMSG for a malformed record, or @fn's error.
 */
int aux_records_read(struct aux_buffer *b,
		     int (*fn)(void *ctx, __u64 off, __u64 size, __u64 flags),
		     void *ctx)
{
	struct perf_event_mmap_page *up = b->base;
	const unsigned char *data = (unsigned char *)b->base + up->data_offset;
	__u64 head, tail = up->data_tail, *f, rec[32];
	unsigned char *bytes = (unsigned char *)rec;
	struct perf_event_header *hdr;
	size_t i;
	int n = 0, ret;

	head = __atomic_load_n(&up->data_head, __ATOMIC_ACQUIRE);
	while (tail < head) {
		/* A record may wrap around the end of the data area. */
		for (i = 0; i < sizeof(*hdr); i++)
			bytes[i] = data[(tail + i) % up->data_size];
		hdr = (struct perf_event_header *)rec;
		if (hdr->size < sizeof(*hdr) || hdr->size > sizeof(rec))
			return -EBADMSG;
		for (; i < hdr->size; i++)
			bytes[i] = data[(tail + i) % up->data_size];
		f = (__u64 *)(hdr + 1);
		if (hdr->type == PERF_RECORD_LOST)
			return -ENOSPC;
		if (hdr->type == PERF_RECORD_AUX) {
			ret = fn(ctx, f[0], f[1], f[2]);
			if (ret)
				return ret;
			n++;
		}
		tail += hdr->size;
		__atomic_store_n(&up->data_tail, tail, __ATOMIC_RELEASE);
	}
	return n;
}

/* Free blocks per order, all zones, from /proc/buddyinfo; orders read. */
int buddy_free(unsigned long *nr)
{
	char *line = NULL, *tok, *save;
	size_t len = 0;
	int order, n = 0;
	FILE *f;

	memset(nr, 0, MAX_ORDERS * sizeof(*nr));
	f = fopen("/proc/buddyinfo", "r");
	if (!f)
		return -1;
	while (getline(&line, &len, f) > 0) {
		/* "Node 0, zone   Normal  n0 n1 ... nMAX" */
		strtok_r(line, "\n ", &save);
		for (order = 0; order < 3 && strtok_r(NULL, "\n ", &save);
		     order++)
			;
		for (order = 0; (tok = strtok_r(NULL, "\n ", &save)); order++) {
			/* More orders than MAX_ORDERS: not a column cut off. */
			if (order == MAX_ORDERS) {
				n = -1;
				break;
			}
			nr[order] += strtoul(tok, NULL, 10);
		}
		if (n < 0)
			break;
		n = order;
	}
	free(line);
	fclose(f);
	return n;
}

/* Pages free in blocks of @order or more. */
unsigned long buddy_free_from(const unsigned long *nr, int n, int order)
{
	unsigned long pages = 0;

	for (; order < n; order++)
		pages += nr[order] << order;
	return pages;
}

/*
 * The highest order up to @top with twice @pages free in blocks of it or
 * larger; -1 if none.  Below @top a buffer may fall back, as the rule allows.
 */
int buddy_room_order(unsigned long pages, int top)
{
	unsigned long nr[MAX_ORDERS];
	int n = buddy_free(nr), order;

	if (n <= 0)
		return -1;
	for (order = top < n ? top : n - 1; order >= 0; order--)
		if (buddy_free_from(nr, n, order) >= 2 * pages)
			return order;
	return -1;
}

/* buddy_room_order(), compacting once first if short of @top. */
int buddy_room_order_compact(unsigned long pages, int top)
{
	int room = buddy_room_order(pages, top);

	if (room < top && !sysctl_write(COMPACT_MEMORY, 1))
		room = buddy_room_order(pages, top);
	return room;
}
