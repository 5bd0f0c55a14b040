/* SPDX-License-Identifier: GPL-2.0 */
/* The page sizes a vmap() is mapped with, from the kernel page-table dump. */
#ifndef PERF_AUX_VMAP_H
#define PERF_AUX_VMAP_H

#include <stdbool.h>

#define NO_PTDUMP "no kernel page-table dump"
#define KPTR_RESTRICT "/proc/sys/kernel/kptr_restrict"

/* Pages of a vmap per granule, and the translation entries they take. */
struct vmap_granules {
	unsigned long pmd, cont, pte;
	unsigned long entries;
};

int vmap_granules(unsigned long start, unsigned long size,
		  struct vmap_granules *g);
int aux_granules(unsigned long long id, struct vmap_granules *g);
int kptr_show(long *was);
bool vmap_maps_large(void);
bool aux_strict(void);
bool huge_vmap_off(void);

#endif /* PERF_AUX_VMAP_H */
