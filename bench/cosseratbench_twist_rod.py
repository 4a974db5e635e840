"""One rod of cosseratbench's twist, alone, in the adapter's scene, logged step by step.

The cheapest reproduction of the twist at half the adapter's step (rod4, 0.025 s, about
15 s of wall time instead of the six rods' minutes): the adapter's own scene
(CuspSolver.scene) and drive (its mocap motion and tip load, as CuspSolver._simulate
applies them), stepping with mj_step and printing one JSON line per step from --from on:
contacts found and kept, the LCP's status, solver and iterations, the deepest
penetration, the largest generalized velocity, the disks' largest speed, the nearest
pair of disks more than 3 apart along the rod, and the three deepest contacts
(disk, other instance, gap, normal impulse, kept). Stops when a disk passes through
another (the plugin's message) or the contact capacity is exceeded, as the adapter
does.

  PYTHONPATH=python CUSP_LIBRARY=build/libcusp.so .venv/bin/python \
      bench/cosseratbench_twist_rod.py --rod 4 --scale 0.125 --from 15   # 0.025 s steps

(time_step_scale 0.125 is the first to halve the twist's 0.05 s step: the step is
capped at one frame, 0.05 s, up to scale 0.25.) docs/twist.md has what it showed."""
import sys, json, math, time, argparse
import numpy as np, mujoco, cusp
from cusp.cosseratbench_adapter import CuspSolver, _load_text, mocap_drive, move_mocap
from cosseratbench.experiments.twist import twist

ap = argparse.ArgumentParser()
ap.add_argument("--scale", type=float, default=0.5)
ap.add_argument("--rod", type=int, default=4)
ap.add_argument("--until", type=float, default=16.0)
ap.add_argument("--from", dest="t0", type=float, default=1e9, help="log steps from this time")
ap.add_argument("--pair", type=int, nargs=2, default=(31, 135), help="two disks whose distance and speeds to log")
ap.add_argument("--xml", default=None, help="write the scene's MJCF here")
a = ap.parse_args()
sc = twist.build(tension=10.0)
solver = CuspSolver(time_step_scale=a.scale)
n_el, n_frames = 50, twist.n_frames
dt, per_frame = solver._steps(sc, n_frames)
xml, drive = solver.scene(sc, n_elements=n_el, n_frames=n_frames, rods=[a.rod])
if a.xml:
  open(a.xml, "w").write(xml)
model = _load_text(xml)
data = cusp.make_data(model)
rod = sc.rods[a.rod]
length = cusp.total_length(model, 0)
for load in rod.loads:
  cusp.apply_force(model, data, 0, length, np.asarray(load.force, dtype=float))
mocap = mocap_drive(model, drive)
mujoco.mj_forward(model, data)
gid = [i for i in range(model.ngeom) if "/disk" in (model.body(model.geom_bodyid[i]).name or "")]  # disk k is gid[k]
print("dt", dt, "per_frame", per_frame, file=sys.stderr)
step = 0
Pprev = None
t0 = time.time()
while step * dt < a.until - 1e-12:
  move_mocap(data, mocap, (step + 1) * dt)
  mujoco.mj_step(model, data)
  step += 1
  r = cusp.report(model, data)
  t = step * dt
  P = data.geom_xpos[gid].copy()
  if t >= a.t0 - 1e-9 or r["message"]:
    spd = np.linalg.norm(P - Pprev, axis=1) / dt if Pprev is not None else np.zeros(len(gid))
    D = np.linalg.norm(P[:, None] - P[None], axis=2)
    idx = np.arange(len(gid)); far = np.abs(idx[:, None] - idx[None]) > 3
    Dm = np.where(far, D, 9); ij = np.unravel_index(np.argmin(Dm), D.shape)
    extra = dict(vdisk=round(float(spd.max()), 3), vdisk_at=int(spd.argmax()), dmin=round(float(Dm.min()), 5), dpair=[int(ij[0]), int(ij[1])],
                 pair=a.pair, pair_distance=round(float(D[a.pair[0], a.pair[1]]), 5),
                 pair_speeds=[round(float(spd[a.pair[0]]), 3), round(float(spd[a.pair[1]]), 3)])
  else:
    extra = {}
  Pprev = P
  if t >= a.t0 - 1e-9 or r["message"]:
    lcp = r["info"]["lcp"]
    cs = cusp.contacts(model, data)
    deep = sorted(cs, key=lambda c: c["gap"])[:3]
    q, v = cusp.soft_state(model, data, 0)
    print(json.dumps(dict(t=round(t, 4), nc=r["ncontact"], nk=r["nkept"], solved=r["solved"], fb=r["fallback"],
        status=lcp["status_name"], solver=lcp["solver_name"], it=lcp["iterations"], maxpen=r["max_penetration"],
        vmax=float(np.abs(v).max()),
        deep=[(c["disk"], c["other_instance"], round(c["gap"], 6), round(c["normal_impulse"], 8), c["kept"]) for c in deep],
        msg=r["message"], **extra)))
  if data.warning[mujoco.mjtWarning.mjWARN_CONTACTFULL].number:
    print("CONTACTFULL at", t, r["message"], file=sys.stderr); break
  if r["message"] and "pass through" in r["message"]:
    print("DIVERGED at", t, r["message"], file=sys.stderr)
    break
print("wall", time.time() - t0, "steps", step, "t", step * dt, file=sys.stderr)
