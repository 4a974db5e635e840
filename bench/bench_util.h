/* Helpers shared by the benchmark programs: the CPU name, clocks (JSON and
 * quantiles: apps/cli_util.h). */
#ifndef CUSP_BENCH_UTIL_H
#define CUSP_BENCH_UTIL_H

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../apps/cli_util.h"

static inline void cpu_model(char *buf, size_t size) {
  snprintf(buf, size, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) == 0) {
      char *p = strchr(line, ':');
      if (p) {
        p++;
        while (*p == ' ' || *p == '\t') p++;
        p[strcspn(p, "\n")] = 0;
        snprintf(buf, size, "%s", p);
      }
      break;
    }
  }
  fclose(f);
}

static inline double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline double now_s(void) { return clock_s(CLOCK_MONOTONIC); }

#endif
