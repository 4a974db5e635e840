#include "sb_util.h"

#include <stdarg.h>
#include <stdio.h>

void sb_errorf(char *buf, int size, const char *fmt, ...) {
  if (!buf || size <= 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, (size_t)size, fmt, ap);
  va_end(ap);
}
