/* Counts malloc/calloc/realloc calls from the objects linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (cusp's own code; shared
 * libraries call the real ones). Include in one test file only. */
#ifndef CUSP_ALLOC_COUNT_H
#define CUSP_ALLOC_COUNT_H

#include <stddef.h>

static long allocs;
void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n) { allocs++; return __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { allocs++; return __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { allocs++; return __real_realloc(p, n); }

#endif
