/* Counts the malloc/calloc/realloc calls made by code inside libcusp.so (the
 * plugin and the softbody core linked into it). cusp lives in a shared
 * library now, so a link-time --wrap of the test executable cannot see its
 * calls; instead the test executable defines malloc, calloc and realloc,
 * which the dynamic linker then binds for every library of the process, and
 * each call is forwarded to the next definition (the C library's, or
 * AddressSanitizer's in a sanitized build). A call counts when its return
 * address lies in an executable segment of libcusp.so, so MuJoCo's own
 * allocations (mj_makeData, its arena) and LAPACK's are not counted, as
 * before. Include in one test file only; link with ${CMAKE_DL_LIBS}. */
#ifndef CUSP_ALLOC_COUNT_H
#define CUSP_ALLOC_COUNT_H

#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before any include (RTLD_NEXT, dl_iterate_phdr)"
#endif
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CUSP_MAX_TEXT 8
static long allocs; /* calls from libcusp.so since counting started */
static int cusp_ntext;
static uintptr_t cusp_text[CUSP_MAX_TEXT][2]; /* [lo, hi) of libcusp.so's executable segments */
static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);

/* dlsym may allocate while it resolves: those few calls get static memory,
 * which is never freed (dlsym keeps what it allocates). */
static _Alignas(max_align_t) unsigned char bootstrap[4096];
static size_t bootstrap_used;
static int resolving;

static void *bootstrap_alloc(size_t n) {
  n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  if (bootstrap_used + n > sizeof bootstrap) return NULL;
  void *p = bootstrap + bootstrap_used;
  bootstrap_used += n;
  return p;
}

static void resolve_next(void) {
  resolving = 1;
  next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
  next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
  next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
  resolving = 0;
}

static int in_cusp(const void *ret) {
  uintptr_t a = (uintptr_t)ret;
  for (int i = 0; i < cusp_ntext; i++)
    if (a >= cusp_text[i][0] && a < cusp_text[i][1]) return 1;
  return 0;
}

void *malloc(size_t n) {
  if (!next_malloc) {
    if (resolving) return bootstrap_alloc(n);
    resolve_next();
  }
  if (in_cusp(__builtin_return_address(0))) allocs++;
  return next_malloc(n);
}

void *calloc(size_t a, size_t b) {
  if (!next_calloc) {
    if (resolving) {
      void *p = b && a > (size_t)-1 / b ? NULL : bootstrap_alloc(a * b);
      if (p) memset(p, 0, a * b);
      return p;
    }
    resolve_next();
  }
  if (in_cusp(__builtin_return_address(0))) allocs++;
  return next_calloc(a, b);
}

void *realloc(void *p, size_t n) {
  if (!next_realloc) {
    if (resolving) return NULL; /* dlsym does not grow blocks; refuse rather than recurse */
    resolve_next();
  }
  if (in_cusp(__builtin_return_address(0))) allocs++;
  return next_realloc(p, n);
}

static int find_cusp(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
  const char *base = slash ? slash + 1 : info->dlpi_name;
  if (!base || strncmp(base, "libcusp.so", 10)) return 0;
  for (int i = 0; i < info->dlpi_phnum && cusp_ntext < CUSP_MAX_TEXT; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    cusp_text[cusp_ntext][0] = info->dlpi_addr + ph->p_vaddr;
    cusp_text[cusp_ntext][1] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    cusp_ntext++;
  }
  return 1;
}

/* Finds libcusp.so's code in the process; returns its number of executable
 * segments (0: not found, so nothing would ever be counted). */
static int alloc_count_start(void) {
  if (!cusp_ntext) dl_iterate_phdr(find_cusp, NULL);
  return cusp_ntext;
}

#endif
