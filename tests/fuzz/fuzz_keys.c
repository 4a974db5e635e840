/* libFuzzer harness: cusp's keys, the loader's own parsing. The input is
 * lines KEY=VALUE, applied as overrides (cusp_load_with, what --set and
 * cusp.load's dict pass) to instance "arm" of a small fixed scene (a floor,
 * a free box on it, the arm hanging above), then mj_makeData and a few
 * mj_step. Mutating values here reaches every key's parser and range check
 * and the expansion behind them, where mutating scene text mostly breaks
 * the XML. Same checks as fuzz_mjcf (fuzz_mujoco.h). */
#include "fuzz_mujoco.h"

#define MAX_OVERRIDES 16
#define MAX_LINE 512

static const char scene[] =
    "<mujoco><option timestep=\"0.002\"/>"
    "<extension><plugin plugin=\"cusp.softbody\"><instance name=\"arm\"/></plugin></extension>"
    "<worldbody><geom name=\"floor\" type=\"plane\" size=\"1 1 0.1\"/>"
    "<body name=\"box\" pos=\"0.1 0 0.05\"><freejoint/><geom name=\"box\" type=\"box\" size=\"0.05 0.05 0.05\"/></body>"
    "<body name=\"carrier\" pos=\"0 0 0.6\"><joint name=\"hinge\" type=\"hinge\" axis=\"0 1 0\"/>"
    "<geom type=\"sphere\" size=\"0.02\" mass=\"1\"/>"
    "<body name=\"mount\" euler=\"180 0 0\"><plugin instance=\"arm\"/></body></body>"
    "</worldbody></mujoco>\n";

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_mujoco_handlers();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
  static char scene_path[256];
  if (!scene_path[0]) snprintf(scene_path, sizeof scene_path, "%s", fuzz_input_file((const uint8_t *)scene,
                                                                                     sizeof scene - 1, ".xml"));
  /* the lines, NUL-terminated copies split at the first '=' */
  static char lines[MAX_OVERRIDES][MAX_LINE];
  cusp_override ov[MAX_OVERRIDES];
  int nov = 0;
  size_t pos = 0;
  while (pos < size && nov < MAX_OVERRIDES) {
    size_t end = pos;
    while (end < size && bytes[end] != '\n') end++;
    size_t len = end - pos < MAX_LINE - 1 ? end - pos : MAX_LINE - 1;
    memcpy(lines[nov], bytes + pos, len);
    lines[nov][len] = 0;
    pos = end + 1;
    char *eq = strchr(lines[nov], '=');
    if (!eq || strlen(lines[nov]) != len) continue; /* no '=', or a NUL inside: not an override */
    *eq = 0;
    ov[nov] = (cusp_override){"arm", lines[nov], eq + 1};
    nov++;
  }
  fuzz_load_and_step(scene_path, ov, nov);
  return 0;
}
