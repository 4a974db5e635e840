/* The fuzzed bytes as a file: the readers under test take a path (MuJoCo's
 * XML parser resolves includes and assets from it, the .dat reader opens
 * it), so each input is written to one temporary file per process. */
#ifndef CUSP_FUZZ_INPUT_H
#define CUSP_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The temporary file's path ("SUFFIX" ends it: MuJoCo picks the parser by
 * the extension); the file holds exactly data[0..size). Aborts when the
 * file cannot be written: the harness would test nothing. */
static char fuzz_input_path[256];

static void fuzz_input_remove(void) { unlink(fuzz_input_path); }

static const char *fuzz_input_file(const uint8_t *data, size_t size, const char *suffix) {
  char *path = fuzz_input_path;
  static int fd = -1;
  if (fd < 0) {
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof fuzz_input_path, "%s/cusp_fuzz_XXXXXX%s", dir && *dir ? dir : "/tmp", suffix);
    fd = mkstemps(path, (int)strlen(suffix));
    if (fd < 0) {
      perror("fuzz: mkstemps");
      abort();
    }
    atexit(fuzz_input_remove);
  }
  if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size) {
    perror("fuzz: writing the input file");
    abort();
  }
  return path;
}

/* Fails the input with a message: libFuzzer saves it as a crash. */
#define FUZZ_CHECK(cond, ...)                                                  \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "fuzz check failed at %s:%d: ", __FILE__, __LINE__);     \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
      abort();                                                                 \
    }                                                                          \
  } while (0)

#endif
