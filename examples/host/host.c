/* The smallest cusp host: load a scene, step it, print the tip. Exit 0 when
 * the arm moved and stayed finite, 1 otherwise, 2 for a bad scene. */
#include <math.h>
#include <stdio.h>

#include <cusp.h>

int main(int argc, char **argv) {
  char err[1024];
  if (argc < 2) {
    fprintf(stderr, "usage: cusp_host SCENE.xml\n");
    return 2;
  }
  mjModel *m = cusp_load(argv[1], err, sizeof err);
  if (!m) {
    fprintf(stderr, "cusp_host: %s\n", err);
    return 2;
  }
  mjData *d = mj_makeData(m);
  mj_forward(m, d); /* positions, as for any MuJoCo query */
  double tip0[3], tip[3];
  cusp_tip_pose(m, d, 0, tip0, NULL);
  while (d->time < 0.3) mj_step(m, d);
  cusp_tip_pose(m, d, 0, tip, NULL);
  double moved = sqrt(pow(tip[0] - tip0[0], 2) + pow(tip[1] - tip0[1], 2) + pow(tip[2] - tip0[2], 2));
  printf("tip %.6f %.6f %.6f moved %.6f m, %ld steps\n", tip[0], tip[1], tip[2], moved, cusp_report(m, d)->steps);
  int ok = isfinite(moved) && moved > 1e-4 && cusp_report(m, d)->steps > 0;
  mj_deleteData(d);
  mj_deleteModel(m);
  return ok ? 0 : 1;
}
