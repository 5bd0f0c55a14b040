/* SPDX-License-Identifier: GPL-2.0 */
/* What the running kernel's vmap() may map an AUX buffer with. */
#ifndef PERF_AUX_VMAP_H
#define PERF_AUX_VMAP_H

#include <stdbool.h>

bool vmap_maps_large(void);
bool aux_strict(void);
bool huge_vmap_off(void);
unsigned long vmap_pmd_pages(void);

#endif /* PERF_AUX_VMAP_H */
