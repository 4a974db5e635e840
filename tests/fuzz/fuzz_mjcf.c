/* libFuzzer harness: a scene's text through cusp_load (parse, expansion of
 * the cusp.softbody instances with mjSpec, compile with the plugin's init),
 * then mj_makeData and a few mj_step, with the checks of fuzz_mujoco.h. */
#include "fuzz_mujoco.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_mujoco_handlers();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
  fuzz_load_and_step(fuzz_input_file(bytes, size, ".xml"), NULL, 0);
  return 0;
}
