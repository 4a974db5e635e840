/* A bounded store of values computed at arm states (q, v), found again only by a bit-exact match
 * of the key: a value served from it is the very bits a fresh computation at that state gave, so
 * reuse cannot change a result. Its capacity is fixed at creation (no allocation afterwards);
 * when full, an insertion replaces the oldest entry. Nothing expires but by replacement. */
#ifndef PLAN_ARM_CACHE_H
#define PLAN_ARM_CACHE_H

typedef struct arm_cache arm_cache;

/* n: the length of q and of v (the key is their 2 n doubles); value_len: doubles per entry;
   capacity: entries (>= 1). NULL when out of memory. */
arm_cache *arm_cache_create(int n, int value_len, int capacity);
void arm_cache_free(arm_cache *c);
/* The value stored at exactly (q, v) (memcmp of the doubles: -0.0 and 0.0 differ, a NaN matches
   its own bits), or NULL. Counts a hit or a miss. */
double *arm_cache_find(arm_cache *c, const double *q, const double *v);
/* A slot for the value at (q, v), which the caller fills before the next call on c: the oldest
   entry's, dropped. (q, v) must not be stored already (arm_cache_find first). */
double *arm_cache_insert(arm_cache *c, const double *q, const double *v);
/* Drops every entry and the counts. */
void arm_cache_clear(arm_cache *c);
void arm_cache_counts(const arm_cache *c, long *hits, long *misses);

#endif
