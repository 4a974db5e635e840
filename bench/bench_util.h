/* Helpers shared by the benchmark programs: JSON strings and the CPU name. */
#ifndef CUSP_BENCH_UTIL_H
#define CUSP_BENCH_UTIL_H

#include <stdio.h>
#include <string.h>

/* Writes s as a JSON string (escaping quotes, backslashes, control chars). */
static inline void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

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

#endif
