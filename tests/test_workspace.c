/* The contact workspaces are sized from the model: attaching a shipped
 * scene reserves little address space, a model whose workspaces would pass
 * the bound (half the physical memory) is refused naming the keys that size
 * them, and a live pyramid above the one the workspaces hold is refused
 * (docs/memory.md). */
#include <glob.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugin_testutil.h"

#define SCENES_DIR CUSP_SOURCE_DIR "/mjcf"
#define DEFAULT_SCENE SCENES_DIR "/default.xml"
#define MIB (1024.0 * 1024.0)
/* What loading and attaching any shipped scene, with any pyramid, may add
 * to the address space at its peak: the workspaces' least bound (1 GiB)
 * and room for MuJoCo's compiler and data. */
#define SCENE_VM_BOUND_MIB 1280.0

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

/* A field of /proc/self/status (VmSize, VmPeak, VmRSS) in kB, or -1. */
static long status_kb(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  size_t n = strlen(field);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, field, n) && line[n] == ':') {
      kb = strtol(line + n + 1, NULL, 10);
      break;
    }
  fclose(f);
  return kb;
}

/* Address space and resident memory mj_makeData (the plugin's init) and a
 * few steps add for one scene, in a process of its own (no memory a former
 * scene freed to reuse); prints a row of docs/memory.md's table. */
static void measure_scene(const char *path, const cusp_override *ov, int nov, const char *label, double bound_mib) {
  long vm0 = status_kb("VmSize"), rss0 = status_kb("VmRSS");
  mjModel *m = load(path, ov, nov);
  if (!m) return;
  mjData *d = attach(m);
  for (int i = 0; d && i < 50; i++) mj_step(m, d);
  long peak = status_kb("VmPeak"), hwm = status_kb("VmHWM");
  double dvm = (peak - vm0) / 1024.0, drss = (hwm - rss0) / 1024.0;
  printf("| %s | %.1f | %.1f |\n", label, dvm, drss);
  EXPECT(vm0 > 0 && peak > 0, "%s: /proc/self/status has no VmSize", label);
  EXPECT(dvm < bound_mib, "%s: loading and attaching reserved %.0f MiB of address space, more than %.0f MiB", label,
         dvm, bound_mib);
  finish(m, d);
}

static void attach_scene(const char *path, const cusp_override *ov, int nov, const char *label, double bound_mib) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    measure_scene(path, ov, nov, label, bound_mib);
    fflush(stdout);
    _exit(tu_fail ? 1 : 0);
  }
  int status = 0;
  EXPECT(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
         "%s: the measuring process failed (its messages above)", label);
}

static void test_shipped_scenes(void) {
  glob_t g;
  EXPECT(glob(SCENES_DIR "/*.xml", 0, NULL, &g) == 0 && g.gl_pathc >= 5, "shipped scenes in %s", SCENES_DIR);
  printf("| scene | VmPeak added (MiB) | VmHWM added (MiB) |\n|---|---|---|\n");
  for (size_t i = 0; i < g.gl_pathc; i++) attach_scene(g.gl_pathv[i], NULL, 0, strrchr(g.gl_pathv[i], '/') + 1, SCENE_VM_BOUND_MIB);
  globfree(&g);
  cusp_override pyr16[] = {{"arm", "pyramid", "16"}};
  attach_scene(DEFAULT_SCENE, pyr16, 1, "default.xml pyramid=16", SCENE_VM_BOUND_MIB);
}

/* Too large: refused at load (the compiler's init) with the instance, the
 * keys contact_capacity and pyramid, and the size it would need. */
static void expect_refused(const cusp_override *ov, int nov, const char *label) {
  char err[1024] = "";
  long vm0 = status_kb("VmPeak");
  mjModel *m = cusp_load_with(DEFAULT_SCENE, ov, nov, err, sizeof err);
  mjData *d = m ? mj_makeData(m) : NULL;
  const char *why = m ? cusp_last_error() : err;
  EXPECT(!d, "%s: attached", label);
  EXPECT(has(why, "\"arm\"") && has(why, "contact_capacity=") && has(why, "disks") && has(why, "pyramid=") &&
             has(why, "GiB") && has(why, "bound"),
         "%s: the refusal names the instance, the keys and the size: \"%s\"", label, why);
  long vm1 = status_kb("VmPeak");
  EXPECT(vm1 - vm0 < 1024 * 1024, "%s: refusing grew the peak address space by %ld MiB", label, (vm1 - vm0) / 1024);
  printf("%s: %s\n", label, why);
  finish(m, d);
}

/* Physical memory in GiB (the workspaces' bound is half of it). */
static double physical_gib(void) {
  return (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGE_SIZE) / (1024.0 * MIB);
}

static void test_large_models(void) {
  double ram = physical_gib();
  /* 196 disks, 1576 contacts: every contact in the LCP would take 5.3 GiB
   * (56 GiB before the pyramid and the rigid geoms sized it), beyond
   * CUSP_CONTACT_WORKSPACE_FULL, so the LCP holds the 15 dofs' worth: 0.67
   * GiB, most of it the contacts' own 3m x 3m matrices */
  cusp_override many[] = {{"arm", "disks", "64"}};
  attach_scene(DEFAULT_SCENE, many, 1, "default.xml disks=64", 1536.0);
  /* 497 disks, 3984 contacts: 34 GiB with pyramid 4 and 272 GiB with
   * pyramid 16 when the LCP held every contact; 4.3 GiB now (54 dofs) */
  cusp_override long_arm[] = {{"arm", "sections", "16"}, {"arm", "disks", "30"}, {"arm", "mass", "0.1"},
                              {"arm", "initial", "s1c1=0"}, {"arm", "pyramid", "16"}};
  if (ram / 2 > 4.5) {
    attach_scene(DEFAULT_SCENE, long_arm, 5, "16 sections x 30 disks, pyramid 16", 5.0 * 1024);
    attach_scene(DEFAULT_SCENE, long_arm, 4, "16 sections x 30 disks", 5.0 * 1024);
  } else {
    expect_refused(long_arm, 5, "16 sections x 30 disks, pyramid 16");
  }
  /* 1021 disks, 8176 contacts: 18 GiB, the contacts' own matrices alone */
  cusp_override longer[] = {{"arm", "sections", "20"}, {"arm", "disks", "50"}, {"arm", "mass", "0.1"},
                            {"arm", "initial", "s1c1=0"}};
  if (ram / 2 < 18)
    expect_refused(longer, 4, "20 sections x 50 disks");
}

/* pyramid is live: below or at the loaded value it switches and the arm
 * still steps; above it the switch is refused and the value stays. */
static void test_live_pyramid(void) {
  cusp_override ov[] = {{"arm", "pyramid", "6"}};
  mjModel *m = load(DEFAULT_SCENE, ov, 1);
  mjData *d = m ? attach(m) : NULL;
  if (!d) {
    finish(m, d);
    return;
  }
  char err[512] = "", value[64] = "";
  EXPECT(cusp_set(m, d, 0, "pyramid", "7", err, sizeof err) == -1 && has(err, "pyramid") && has(err, "reload") &&
             has(err, "\"arm\"") && has(err, "6"),
         "pyramid above the loaded one: \"%s\"", err);
  EXPECT(cusp_get(m, d, 0, "pyramid", value, sizeof value) == 0 && !strcmp(value, "6"), "pyramid stays 6: %s",
         value);
  EXPECT(cusp_set(m, d, 0, "pyramid", "3", err, sizeof err) == 0, "pyramid 3: %s", err);
  for (int i = 0; i < 200; i++) mj_step(m, d);
  const cusp_step_report *rep = cusp_report(m, d);
  EXPECT(rep && cusp_get(m, d, 0, "pyramid", value, sizeof value) == 0 && !strcmp(value, "3"),
         "pyramid 3 after 200 steps: %s", value);
  EXPECT(cusp_set(m, d, 0, "pyramid", "6", err, sizeof err) == 0, "back to 6: %s", err);
  for (int i = 0; i < 10; i++) mj_step(m, d);
  int finite = 1;
  for (int i = 0; i < m->nq; i++) finite &= isfinite(d->qpos[i]);
  EXPECT(finite, "finite after the switches");
  finish(m, d);
}

int main(void) {
  test_shipped_scenes();
  test_large_models();
  test_live_pyramid();
  return test_report("workspace");
}
