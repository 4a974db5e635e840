/* cusp-expand: a scene's cusp.softbody instances expanded (disk bodies,
 * geoms, sites, actuators; DESIGN §5-6) and written as MJCF that any stock
 * MuJoCo tool opens once libcusp.so is loaded (mj_loadPluginLibrary, or
 * mujoco.mj_loadPluginLibrary from Python).
 *
 *   cusp-expand SCENE.xml [--set INSTANCE.KEY=VALUE ...] [-o OUT.xml]
 *
 * Writes to stdout unless -o is given. Paths of meshes and textures stay as
 * the scene wrote them (relative to its directory): put OUT.xml next to the
 * scene. A contact native arm deeper than MuJoCo's XML reader accepts (499
 * nested elements) is refused with a message; cusp_load has no such limit.
 * Exit status: 0 written, 1 the scene
 * does not load or expand (the message names the file, instance and key),
 * 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cusp.h"

#define MAX_SET 256

static void usage(FILE *f) {
  fprintf(f,
          "usage: cusp-expand SCENE.xml [--set INSTANCE.KEY=VALUE ...] [-o OUT.xml]\n"
          "  Writes SCENE.xml with its cusp.softbody instances expanded (disk bodies, geoms,\n"
          "  sites, actuators) as MJCF that stock MuJoCo tools load once libcusp.so is loaded.\n"
          "  --set INSTANCE.KEY=VALUE  override a key of an instance (repeatable)\n"
          "  -o OUT.xml                write to OUT.xml instead of stdout (next to SCENE.xml:\n"
          "                            mesh and texture paths stay relative to its directory)\n"
          "  exit status: 0 written, 1 the scene does not load, 2 usage\n");
}

/* "INSTANCE.KEY=VALUE" split in place into o; -1 when malformed. */
static int parse_set(char *arg, cusp_override *o) {
  char *eq = strchr(arg, '=');
  if (!eq) return -1;
  *eq = 0;
  char *dot = strchr(arg, '.');
  if (!dot || dot == arg || !dot[1]) return -1;
  *dot = 0;
  o->instance = arg;
  o->key = dot + 1;
  o->value = eq + 1;
  return 0;
}

int main(int argc, char **argv) {
  const char *scene = NULL, *out = NULL;
  static cusp_override ov[MAX_SET];
  int nov = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(a, "--set") || !strcmp(a, "-o")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "cusp-expand: %s needs a value\n", a);
        usage(stderr);
        return 2;
      }
      if (!strcmp(a, "-o")) {
        out = argv[++i];
        continue;
      }
      if (nov == MAX_SET) {
        fprintf(stderr, "cusp-expand: more than %d --set options\n", MAX_SET);
        return 2;
      }
      char *arg = argv[++i];
      char shown[256];
      snprintf(shown, sizeof shown, "%s", arg);
      if (parse_set(arg, &ov[nov])) {
        fprintf(stderr, "cusp-expand: --set \"%s\": expected INSTANCE.KEY=VALUE\n", shown);
        return 2;
      }
      nov++;
      continue;
    }
    if (a[0] == '-' && a[1]) {
      fprintf(stderr, "cusp-expand: unknown option \"%s\"\n", a);
      usage(stderr);
      return 2;
    }
    if (scene) {
      fprintf(stderr, "cusp-expand: more than one scene (\"%s\", \"%s\")\n", scene, a);
      usage(stderr);
      return 2;
    }
    scene = a;
  }
  if (!scene) {
    usage(stderr);
    return 2;
  }

  char error[2048];
  char *text = cusp_expand(scene, ov, nov, error, sizeof error);
  if (!text) {
    fprintf(stderr, "cusp-expand: %s\n", error);
    return 1;
  }
  FILE *f = out ? fopen(out, "w") : stdout;
  if (!f) {
    perror(out);
    free(text);
    return 1;
  }
  int ok = fputs(text, f) >= 0;
  if (out)
    ok &= fclose(f) == 0;
  else
    ok &= fflush(f) == 0;
  free(text);
  if (!ok) {
    fprintf(stderr, "cusp-expand: cannot write %s\n", out ? out : "stdout");
    return 1;
  }
  return 0;
}
