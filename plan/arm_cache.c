/* The bit-exact store of arm_cache.h: a ring of entries (the oldest replaced first) indexed by
 * the key's hash in chained buckets, so a lookup compares a few keys whatever the capacity. */
#include "arm_cache.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct arm_cache {
  int n, value_len, capacity, used, next;   /* next: the ring's slot the next insertion takes */
  int nbucket;                              /* a power of two >= capacity */
  int *head, *chain;                        /* per bucket its first entry, per entry the next (-1: none) */
  uint64_t *hash;
  double *key, *value;                      /* per entry 2 n, value_len */
  long hits, misses;
};

/* FNV-1a over the key's bytes (q's, then v's): equal bits give equal hashes. */
static uint64_t key_hash(int n, const double *q, const double *v) {
  uint64_t h = 1469598103934665603u;
  const unsigned char *b[2] = {(const unsigned char *)q, (const unsigned char *)v};
  for (int part = 0; part < 2; part++)
    for (size_t i = 0; i < sizeof(double) * (size_t)n; i++) h = (h ^ b[part][i]) * 1099511628211u;
  return h;
}

static int key_equal(const arm_cache *c, int e, const double *q, const double *v) {
  const double *k = c->key + (size_t)e * 2 * c->n;
  return !memcmp(k, q, sizeof(double) * c->n) && !memcmp(k + c->n, v, sizeof(double) * c->n);
}

arm_cache *arm_cache_create(int n, int value_len, int capacity) {
  if (n < 1 || value_len < 1 || capacity < 1) return NULL;
  arm_cache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->n = n;
  c->value_len = value_len;
  c->capacity = capacity;
  c->nbucket = 1;
  while (c->nbucket < capacity) c->nbucket *= 2;
  c->head = malloc(sizeof(int) * (size_t)c->nbucket);
  c->chain = malloc(sizeof(int) * (size_t)capacity);
  c->hash = malloc(sizeof(uint64_t) * (size_t)capacity);
  c->key = malloc(sizeof(double) * 2 * (size_t)n * capacity);
  c->value = malloc(sizeof(double) * (size_t)value_len * capacity);
  if (!c->head || !c->chain || !c->hash || !c->key || !c->value) {
    arm_cache_free(c);
    return NULL;
  }
  arm_cache_clear(c);
  return c;
}

void arm_cache_free(arm_cache *c) {
  if (!c) return;
  free(c->head);
  free(c->chain);
  free(c->hash);
  free(c->key);
  free(c->value);
  free(c);
}

void arm_cache_clear(arm_cache *c) {
  for (int b = 0; b < c->nbucket; b++) c->head[b] = -1;
  c->used = c->next = 0;
  c->hits = c->misses = 0;
}

double *arm_cache_find(arm_cache *c, const double *q, const double *v) {
  uint64_t h = key_hash(c->n, q, v);
  for (int e = c->head[h & (uint64_t)(c->nbucket - 1)]; e >= 0; e = c->chain[e])
    if (c->hash[e] == h && key_equal(c, e, q, v)) {
      c->hits++;
      return c->value + (size_t)e * c->value_len;
    }
  c->misses++;
  return NULL;
}

/* Takes entry e out of its bucket's chain. */
static void unlink_entry(arm_cache *c, int e) {
  int *at = &c->head[c->hash[e] & (uint64_t)(c->nbucket - 1)];
  while (*at != e) at = &c->chain[*at];
  *at = c->chain[e];
}

double *arm_cache_insert(arm_cache *c, const double *q, const double *v) {
  int e = c->next;
  if (c->used == c->capacity) unlink_entry(c, e);
  else c->used++;
  c->next = (e + 1) % c->capacity;
  uint64_t h = key_hash(c->n, q, v);
  c->hash[e] = h;
  double *k = c->key + (size_t)e * 2 * c->n;
  memcpy(k, q, sizeof(double) * c->n);
  memcpy(k + c->n, v, sizeof(double) * c->n);
  int *head = &c->head[h & (uint64_t)(c->nbucket - 1)];
  c->chain[e] = *head;
  *head = e;
  return c->value + (size_t)e * c->value_len;
}

void arm_cache_counts(const arm_cache *c, long *hits, long *misses) {
  if (hits) *hits = c->hits;
  if (misses) *misses = c->misses;
}
