// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the perf_aux selftests: opening an AUX event, mapping
 * its buffers, the allocation rule of rb_alloc_aux() and the report of the
 * synthetic AUX PMUs (lib/test_aux_pmu.c).
 */
#include <errno.h>
#include <fcntl.h>
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
	FILE *f;
	int type = -1;

	snprintf(path, sizeof(path), PMU_DIR "/%s/type", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &type) != 1)
		type = -1;
	fclose(f);
	return type;
}

/*
 * Puts @value into the field @field of PMU @pmu, where its format/ file in
 * sysfs says it lives ("config:8-15", "config1:0-63", "config:3"): the
 * layout is the kernel's, as perf reads it.  0, -ENOENT without such a
 * field, -EINVAL for a format not understood, -ERANGE if @value does not
 * fit.
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
	if (!strcmp(word, "config"))
		cfg = (__u64 *)&attr->config;
	else if (!strcmp(word, "config1"))
		cfg = (__u64 *)&attr->config1;
	else if (!strcmp(word, "config2"))
		cfg = (__u64 *)&attr->config2;
	else
		return -EINVAL;
	if (hi < lo || hi > 63)
		return -EINVAL;
	mask = hi - lo == 63 ? ~0ULL : ((1ULL << (hi - lo + 1)) - 1);
	if (value & ~mask)
		return -ERANGE;
	*cfg = (*cfg & ~(mask << lo)) | value << lo;
	return 0;
}

/*
 * With CONFIG_TEST_AUX_PMU=m (as the config of this directory asks), the
 * synthetic PMUs come with the module: each test program loads it before
 * its first test and unloads it after its last, as test_vmalloc.sh does
 * with test_vmalloc.  Built in, or where it cannot be loaded (no module,
 * not root), nothing happens and the tests that need it skip with
 * NO_TEST_PMU.
 */
static bool aux_pmu_module_loaded;

static void __attribute__((constructor)) aux_pmu_module_load(void)
{
	if (pmu_type(aux_pmu_names[CAPS_NONE]) >= 0)
		return;
	if (system("modprobe -q test_aux_pmu 2>/dev/null") == 0 &&
	    pmu_type(aux_pmu_names[CAPS_NONE]) >= 0) {
		aux_pmu_module_loaded = true;
		ksft_print_msg("test_aux_pmu: module loaded\n");
	}
}

static void __attribute__((destructor)) aux_pmu_module_unload(void)
{
	if (aux_pmu_module_loaded &&
	    system("modprobe -q -r test_aux_pmu 2>/dev/null"))
		ksft_print_msg("test_aux_pmu: modprobe -r failed\n");
}

/* A sysctl (or any one-number file) read: the value, or -1. */
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

/*
 * PERF_AUX_FAIL_SETUP=1: the fixtures that change a sysctl fail their setup
 * right after changing it, so that a run proves from outside that their
 * teardown puts the sysctl back whatever fails.
 */
bool aux_setup_failure_forced(void)
{
	const char *v = getenv("PERF_AUX_FAIL_SETUP");

	return v && !strcmp(v, "1");
}

/*
 * MAX_PAGE_ORDER of the running kernel: /proc/buddyinfo has a column per
 * order from 0 to it.
 */
int max_page_order(void)
{
	char *line = NULL, *tok, *save;
	size_t len = 0;
	int cols = -1;
	FILE *f = fopen("/proc/buddyinfo", "r");

	if (!f)
		return -1;
	if (getline(&line, &len, f) > 0) {
		/* "Node 0, zone   Normal  n0 n1 ... nMAX" */
		strtok_r(line, "\n ", &save);
		for (cols = -4; (tok = strtok_r(NULL, "\n ", &save)); cols++)
			;
	}
	free(line);
	fclose(f);
	return cols;
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

long mem_available_kb(void)
{
	return meminfo_kb("MemAvailable");
}

/* get_order(): the order of the smallest block of pages holding @bytes. */
int get_order_ul(unsigned long bytes)
{
	unsigned long pages = (bytes + page_size() - 1) / page_size();

	return pages <= 1 ? 0 : ilog2_ul(pages - 1) + 1;
}

/*
 * The chunk orders rb_alloc_aux() hands out when no allocation fails
 * (../shared upstream notes §A.3): order 0 without a large capability; else
 * up to get_order(watermark) in normal mode (the watermark defaults to half
 * the buffer) and ilog2(nr_pages) in snapshot mode, each chunk
 * min(ceiling, ilog2(pages missing)), at most MAX_PAGE_ORDER.  Returns the
 * number of chunks written to @orders.
 */
int aux_model_orders(enum aux_caps caps, bool snapshot, unsigned long nr_pages,
		     unsigned long watermark, int *orders, int max)
{
	int ceiling = 0, n = 0, order, max_order = max_page_order();
	unsigned long left = nr_pages;

	if (caps != CAPS_NONE) {
		if (snapshot)
			ceiling = ilog2_ul(nr_pages);
		else
			ceiling = get_order_ul(watermark ? watermark :
					       nr_pages * page_size() / 2);
	}
	while (left && n < max) {
		order = ilog2_ul(left);
		if (order > ceiling)
			order = ceiling;
		if (order > max_order)
			order = max_order;
		orders[n++] = order;
		left -= 1UL << order;
	}
	return n;
}

/*
 * The value after key @key at *@pos of a report line, NUL-terminated in
 * place, *@pos moved past it; NULL if the line does not go on so.
 */
static char *report_field(char **pos, const char *key)
{
	size_t n = strlen(key);
	char *v, *end;

	if (strncmp(*pos, key, n) || (*pos)[n] != ' ')
		return NULL;
	v = *pos + n + 1;
	/* Up to the next field, or the end of the line. */
	end = v + strcspn(v, "\n ");
	if (end == v)
		return NULL;
	*pos = end + (*end != '\0');
	*end = '\0';
	return v;
}

/* A decimal field of a report line into *@v; false if it is not one. */
static bool report_number(char **pos, const char *key, unsigned long *v)
{
	char *s = report_field(pos, key), *end;

	if (!s)
		return false;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return !*end && !errno;
}

/*
 * One report line, whole, parsed in place (the line stays in r->line, the
 * strings point into it): 0, or -EBADMSG for a line not in the module's
 * format, which no field is cut from.
 */
static int report_parse(struct aux_report *r)
{
	unsigned long event, pages, snapshot;
	char *pos = r->line, *pmu, *base;

	if (!report_number(&pos, "event", &event))
		return -EBADMSG;
	pmu = report_field(&pos, "pmu");
	if (!pmu || strlen(pmu) >= sizeof(r->pmu) ||
	    !report_number(&pos, "pages", &pages) ||
	    !report_number(&pos, "snapshot", &snapshot))
		return -EBADMSG;
	/*
	 * The base is %pK: the address with kptr_restrict=1, else a hash, or
	 * "(____ptrval____)" before the hash key is ready.
	 */
	base = report_field(&pos, "base");
	r->chunks = base ? report_field(&pos, "chunks") : NULL;
	if (!r->chunks || !report_number(&pos, "entries", &r->entries) ||
	    !report_number(&pos, "pmd", &r->pmd) ||
	    !report_number(&pos, "cont", &r->cont) ||
	    !report_number(&pos, "pte", &r->pte))
		return -EBADMSG;
	r->event = event;
	r->pages = pages;
	r->snapshot = snapshot;
	snprintf(r->pmu, sizeof(r->pmu), "%s", pmu);
	r->base = strtoul(base, NULL, 16);
	r->map = "";
	r->pmd_pages = 0;
	r->cont_pages = 0;
	/* Older modules end here. */
	if (!*pos)
		return 0;
	if (!report_number(&pos, "pmd_pages", &r->pmd_pages) ||
	    !report_number(&pos, "cont_pages", &r->cont_pages))
		return -EBADMSG;
	r->map = report_field(&pos, "map");
	return r->map && !*pos ? 0 : -EBADMSG;
}

/*
 * Finds the report line of event @id; 0 on success, -errno otherwise
 * (-EBADMSG: a line of the report is not in its format).  @r starts
 * zeroed or from an earlier read, whose line buffer it reuses.
 */
int aux_report_read(unsigned long long id, struct aux_report *r)
{
	FILE *f = fopen(AUX_REPORT, "r");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (getline(&r->line, &r->line_len, f) > 0) {
		ret = report_parse(r);
		if (ret)
			break;
		ret = -ENOENT;
		if (r->event == id) {
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

void aux_report_free(struct aux_report *r)
{
	free(r->line);
	memset(r, 0, sizeof(*r));
}

/*
 * Expands "9x2,0x3" into orders[] = { 9, 9, 0, 0, 0 }; returns the count,
 * -E2BIG when there are more than @max chunks (none is cut off) or
 * -EBADMSG when @chunks is not such a list.
 */
int aux_report_orders(const char *chunks, int *orders, int max)
{
	int order, count, n = 0, used;

	for (;;) {
		if (sscanf(chunks, "%dx%d%n", &order, &count, &used) != 2 ||
		    order < 0 || count < 1)
			return -EBADMSG;
		if (count > max - n)
			return -E2BIG;
		while (count--)
			orders[n++] = order;
		chunks += used;
		if (!*chunks)
			return n;
		if (*chunks++ != ',')
			return -EBADMSG;
	}
}

/*
 * A number of the synthetic PMUs' vmap/ directory in sysfs (see
 * lib/test_aux_pmu.c), or -1 without the module.  Readable by anyone.
 */
static long aux_vmap_attr(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), PMU_DIR "/%s/vmap/%s",
		 aux_pmu_names[CAPS_NONE], name);
	return sysctl_read(path);
}

/*
 * PMD_SIZE of the running kernel, as the module reports it; 0 without the
 * module (every test that sizes a buffer by it skips then, for want of
 * the PMUs).
 */
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
	case SIZE_64M:
		return (64UL << 20) / page_size();
	default:
		return (1UL << 30) / page_size();
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

/*
 * Maps an AUX area of @aux_pages right after the data area, read-only in
 * snapshot mode: where the kernel allocates and vmap()s the AUX pages.
 * 0 or -errno.
 */
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

/* Both areas of @fd.  Returns 0 or -errno of the failing step. */
int aux_buffer_map(struct aux_buffer *b, int fd, unsigned long aux_pages,
		   bool snapshot)
{
	return aux_data_map(b, fd) ?: aux_area_map(b, aux_pages, snapshot);
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
 * Calls @fn(ctx, aux_offset, aux_size, flags) for each PERF_RECORD_AUX in
 * the data area, consuming records up to the first that @fn fails.
 * Returns the number of AUX records, -ENOSPC when the kernel lost records
 * (PERF_RECORD_LOST), -EBADMSG for a malformed record, or what @fn
 * returned.
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

/* Kernel log: remembers where it ended, then finds warnings after that. */
int kmsg_open_at_end(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/*
 * /dev/kmsg hands out one record per read() and refuses (EINVAL) a buffer
 * shorter than the record: room for the longest one the kernel formats
 * (PRINTK_MESSAGE_MAX, 2048 bytes in 7.x), and more.
 */
#define KMSG_RECORD_MAX 8192

int kmsg_warnings(int fd)
{
	static char rec[KMSG_RECORD_MAX];
	ssize_t n;
	int warnings = 0;

	if (fd < 0) {
		/* Not a pass in disguise: say that nothing was looked at. */
		ksft_print_msg("cannot read /dev/kmsg: kernel warnings not checked\n");
		return 0;
	}
	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records */
		if (n < 0 && errno == EINVAL) {
			/* A record not read is a warning not looked at. */
			ksft_print_msg("/dev/kmsg record longer than %d bytes\n",
				       KMSG_RECORD_MAX - 1);
			warnings++;
			break;
		}
		if (n <= 0)
			break;
		rec[n] = '\0';
		/* SPE's report of a fault on its own buffer mapping, too. */
		if (strstr(rec, "WARNING:") || strstr(rec, "BUG:") ||
		    strstr(rec, "Unexpected buffer fault"))
			warnings++;
	}
	return warnings;
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
 * The highest order up to @top whose blocks and larger ones the buddy
 * lists hold twice @pages of (another task may take some first); -1 if
 * not even order 0, or buddyinfo is unreadable.  Below @top, a buffer of
 * @pages may fall back for want of memory, as the rule allows.
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

/*
 * buddy_room_order(), after one compaction if the buddy lists are short of
 * @top: a guest whose large blocks were split at boot (page cache, a LAVA
 * overlay unpacked into RAM) gets them back, so that a test skips for want
 * of memory only when there is none.  Without CONFIG_COMPACTION nothing
 * is compacted.
 */
int buddy_room_order_compact(unsigned long pages, int top)
{
	int room = buddy_room_order(pages, top);

	if (room < top && !sysctl_write(COMPACT_MEMORY, 1))
		room = buddy_room_order(pages, top);
	return room;
}

/*
 * kmemleak's suspects allocated on a path through @func (a symbol of their
 * backtraces): the addresses of the first @max in @addrs, the first one's
 * report in @first (if @len), their number returned; -1 without kmemleak.
 * It scans first, twice as the init does: a pointer that was only moving
 * between two places during one scan does not make a suspect.
 */
int kmemleak_suspects(const char *func, unsigned long *addrs, int max,
		      char *first, size_t len)
{
	static char text[1 << 20];
	char *obj, *next;
	int fd, n = 0;
	ssize_t got, total = 0;

	fd = open(KMEMLEAK, O_RDWR);
	if (fd < 0)
		return -1;
	if (write(fd, "scan", 4) != 4 || write(fd, "scan", 4) != 4) {
		close(fd);
		return -1;
	}
	lseek(fd, 0, SEEK_SET);
	while (total < (ssize_t)sizeof(text) - 1 &&
	       (got = read(fd, text + total, sizeof(text) - 1 - total)) > 0)
		total += got;
	close(fd);
	text[total] = '\0';
	if (first && len)
		first[0] = '\0';
	for (obj = strstr(text, "unreferenced object 0x"); obj; obj = next) {
		next = strstr(obj + 1, "unreferenced object 0x");
		if (next)
			next[-1] = '\0';
		if (!strstr(obj, func))
			continue;
		if (n < max)
			addrs[n] = strtoul(obj + strlen("unreferenced object "),
					   NULL, 16);
		if (!n && first && len)
			snprintf(first, len, "%s", obj);
		n++;
	}
	return n;
}

/*
 * The most translation entries the rules allow for AUX chunks of @orders,
 * in their order.  Each chunk is naturally aligned in physical memory, so
 * it can take a granule wherever its offset in an area aligned to the
 * largest granule is aligned to that granule too: after a fallback, later
 * chunks may be left with cont-PTE blocks, never fewer.  Chunks that
 * happen to be contiguous with each other may do better.  @pmd_pages 0:
 * no PMD blocks; @cont_pages 0: no PTE-level blocks.
 */
unsigned long chunk_entries(const int *orders, int n, unsigned long pmd_pages,
			    unsigned long cont_pages)
{
	unsigned long off = 0, entries = 0, pages, g;
	int i;

	for (i = 0; i < n; i++) {
		pages = 1UL << orders[i];
		g = 1;
		if (pmd_pages && pages >= pmd_pages && !(off % pmd_pages))
			g = pmd_pages;
		else if (cont_pages > 1 && pages >= cont_pages &&
			 !(off % cont_pages))
			g = cont_pages;
		entries += pages / g;
		off += pages;
	}
	return entries;
}

/*
 * PERF_AUX_STRICT=1 (VARIANT=strict): a vmap() that maps base pages only
 * fails the page-size checks instead of skipping them.
 */
bool aux_strict(void)
{
	const char *s = getenv("PERF_AUX_STRICT");

	return s && *s == '1';
}

/*
 * Whether the kernel was booted with nohugevmalloc: vmap() is then asked for
 * base pages, so a buffer mapped with them did as asked, and no allowance
 * of larger granules is promised.  Mapping larger all the same costs no
 * entries: the tests skip it (NOHUGE_IGNORED) unless strict, as the KUnit
 * vmap_granule suite does.
 */
bool huge_vmap_off(void)
{
	char *line = NULL, *tok, *save;
	FILE *f = fopen("/proc/cmdline", "r");
	size_t len = 0;
	bool off = false;

	if (!f)
		return false;
	if (getline(&line, &len, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		for (tok = strtok_r(line, " ", &save); tok;
		     tok = strtok_r(NULL, " ", &save))
			off |= !strcmp(tok, "nohugevmalloc");
	}
	free(line);
	fclose(f);
	return off;
}

/*
 * Pages per PMD block a vmap() may use: none where the running kernel's
 * arm64 hook refuses PMD blocks for the reason it documents (the kernel
 * page tables can be dumped), as the module reports; any other refusal
 * is no allowance.
 */
unsigned long vmap_pmd_pages(void)
{
	if (aux_vmap_attr("pmd_refused_ptdump") == 1)
		return 0;
	return pmd_bytes() / page_size();
}

/*
 * Chunk orders @chunks (a report's "9x2,0x3") of a buffer of @pages pages
 * against rb_alloc_aux()'s rule.  Chunk i's bound is the least of @ceiling,
 * ilog2(pages left) and @below - 1 (orders from @below known to fail): it
 * is at most that, and, falling back one order at a time, at least the
 * bound or @floor (an order known to be free for the whole buffer; 0:
 * none known), whichever is less.  The chunks cover the buffer.  Returns
 * the number of chunks, with those below their bound in *@fallbacks, or -1
 * and the first violation in @why.
 */
int aux_chunks_check(const char *chunks, unsigned long pages, int ceiling,
		     int below, int floor, int *orders, int max, int *fallbacks,
		     char *why, size_t len)
{
	int n = aux_report_orders(chunks, orders, max), i, bound;
	unsigned long left = pages;

	*fallbacks = 0;
	for (i = 0; i < n && left; i++) {
		bound = ilog2_ul(left);
		if (bound > ceiling)
			bound = ceiling;
		if (bound >= below)
			bound = below - 1;
		if (orders[i] > bound ||
		    orders[i] < (floor < bound ? floor : bound)) {
			snprintf(why, len,
				 "chunk %d of %s: order %d, the rule allows %d down to %d",
				 i, chunks, orders[i], bound,
				 floor < bound ? floor : bound);
			return -1;
		}
		*fallbacks += orders[i] < bound;
		left -= 1UL << orders[i];
	}
	if (left || i < n) {
		snprintf(why, len, "chunks %s are not the buffer's %lu pages",
			 chunks, pages);
		return -1;
	}
	return n;
}

/*
 * Whether this kernel's vmap() maps anything large: a two-PMD buffer of the
 * PREFER_LARGE PMU (chunks are at most half the default watermark's
 * buffer), its report read (kptr_restrict is 1 in the tests).  A buffer
 * mapped with base pages only means no feature, or a lost granule.
 */
bool vmap_maps_large(void)
{
	struct aux_report r = {};
	struct aux_buffer buf;
	bool large = false;
	int fd, tries = 100;

	if (pmd_bytes() / 512 > (unsigned long)mem_available_kb() / 2)
		return false;
	/* The test's own event, just closed, may hold the PMU a moment. */
	do {
		fd = aux_event_open(pmu_type(aux_pmu_names[CAPS_LARGE]), 0);
	} while (fd < 0 && errno == EBUSY && --tries && !usleep(10000));
	if (fd < 0)
		return false;
	if (!aux_buffer_map(&buf, fd, 2 * pmd_bytes() / page_size(), false)) {
		large = !aux_report_read(buf.id, &r) &&
			r.entries < 2 * pmd_bytes() / page_size();
		aux_report_free(&r);
		aux_buffer_unmap(&buf);
	}
	close(fd);
	return large;
}

/* Attribute @attr of the fault injection in debugfs @dir set to @v. */
int fault_attr(const char *dir, const char *attr, long v)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	return sysctl_write(path, v);
}

/*
 * fail_page_alloc and failslab for the tasks that ask (make-it-fail), none
 * failing yet.  Sleeping allocations are exempt by default
 * (ignore-gfp-wait): AUX pages are GFP_KERNEL.  Failures are quiet (verbose
 * 0): a stack dump for each would flood the log the tests read for
 * warnings.
 */
int fault_injection_setup(void)
{
	return fault_attr(FAIL_PAGE_ALLOC, "ignore-gfp-wait", 0) ?:
	       fault_attr(FAIL_PAGE_ALLOC, "verbose", 0) ?:
	       fault_attr(FAIL_PAGE_ALLOC, "task-filter", 1) ?:
	       fault_attr(FAILSLAB, "ignore-gfp-wait", 0) ?:
	       fault_attr(FAILSLAB, "verbose", 0) ?:
	       fault_attr(FAILSLAB, "task-filter", 1);
}

/*
 * The fault injection in debugfs @dir fails @probability % of the eligible
 * calls of the tasks that ask, every call eligible (interval 1, no space),
 * @times failures in all (-1: no limit).
 */
int fault_inject(const char *dir, long times, int probability)
{
	return fault_attr(dir, "times", times) ?:
	       fault_attr(dir, "interval", 1) ?:
	       fault_attr(dir, "space", 0) ?:
	       fault_attr(dir, "probability", probability);
}

/* The documented defaults back, whatever failed. */
void fault_injection_restore(void)
{
	fault_attr(FAIL_PAGE_ALLOC, "probability", 0);
	fault_attr(FAIL_PAGE_ALLOC, "times", 1);
	fault_attr(FAIL_PAGE_ALLOC, "min-order", 1);
	fault_attr(FAIL_PAGE_ALLOC, "ignore-gfp-wait", 1);
	fault_attr(FAIL_PAGE_ALLOC, "task-filter", 0);
	fault_attr(FAIL_PAGE_ALLOC, "verbose", 2);
	fault_attr(FAILSLAB, "probability", 0);
	fault_attr(FAILSLAB, "times", 1);
	fault_attr(FAILSLAB, "ignore-gfp-wait", 1);
	fault_attr(FAILSLAB, "task-filter", 0);
	fault_attr(FAILSLAB, "verbose", 2);
	sysctl_write("/proc/self/make-it-fail", 0);
}

/* vmaps of the synthetic AUX PMUs in /proc/vmallocinfo; -1: unreadable. */
int module_vmaps(void)
{
	FILE *f = fopen("/proc/vmallocinfo", "r");
	char *line = NULL;
	size_t len = 0;
	int n = 0;

	if (!f)
		return -1;
	while (getline(&line, &len, f) > 0)
		n += !!strstr(line, AUX_VMAP_CALLER);
	free(line);
	fclose(f);
	return n;
}

/* Frees are done by the time close() returns; a bound all the same. */
int module_vmaps_settled(int want)
{
	int n, tries = 100;

	while ((n = module_vmaps()) != want && --tries)
		usleep(10000);
	return n;
}
