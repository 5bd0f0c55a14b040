// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's fault injection, set up for the tasks that ask and put back
 * to its documented defaults, and kmemleak's suspects under a function.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aux_common.h"
#include "aux_fault.h"

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
