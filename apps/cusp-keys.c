/* cusp-keys: the config keys of a cusp.softbody instance, from the one key
 * table of plugin/config.c.
 *
 *   cusp-keys --markdown   the key reference (docs/keys.md is this output)
 *   cusp-keys --list       the key names, one a line
 *
 * Exit status: 0, or 2 usage. */
#include <stdio.h>
#include <string.h>

#include "config.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: cusp-keys --markdown | --list\n"
          "  --markdown  the key reference as Markdown (key, value, unit, default per model,\n"
          "              range, plausible range, live, meaning): docs/keys.md\n"
          "  --list      the key names, one a line\n"
          "  exit status: 0, 2 usage\n");
}

int main(int argc, char **argv) {
  if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
    usage(stdout);
    return 0;
  }
  if (argc == 2 && !strcmp(argv[1], "--markdown")) {
    cusp_keys_markdown(stdout);
    return fflush(stdout) == 0 ? 0 : 1;
  }
  if (argc == 2 && !strcmp(argv[1], "--list")) {
    int n;
    const cusp_key *k = cusp_keys(&n);
    for (int i = 0; i < n; i++) printf("%s\n", k[i].name);
    return fflush(stdout) == 0 ? 0 : 1;
  }
  usage(stderr);
  return 2;
}
