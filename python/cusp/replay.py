"""Replay a plan of `cusp-plan --out FILE` in MuJoCo, open loop.

    python -m cusp.replay PLAN.csv [--scene mjcf/ball_plan.xml] [--contact lcp]
                          [--timestep S|plan] [--tsv OUT.tsv] [--video OUT.mp4] [--view] [--json]
                          [--one-step] [--friction-reference X,Y,Z]

The plan (a CSV, one row per knot k = 0..N: t, q (n), v (n), omega (3,
world), quat (4, w x y z), then the step's tau (n), fz and gap, empty on the
last knot) is played in the scene: the arm starts at the plan's first
coordinates (key `initial`), the ball at the plan's first quaternion, and
each MuJoCo step writes the plan's tau_k of the knot interval it lies in
into d->ctrl (zero-order hold: the plan's own discretization holds tau over
its step of h = T / N, so a linear interpolation would play another input).
At every knot the ball's orientation is compared with the plan's: the angle
of the relative rotation 2 acos |q_plan . q_sim|, and each one's rotation
angle from the start; and the arm's coordinates with the plan's (largest
|q_sim - q_plan|; before the first planned contact the two run the same
integrator, sb_step, so with --timestep plan they agree to round-off). The last stdout line is one JSON object; exit code 0
when the replay ran (whatever its error), 1 when the simulation failed, 2 for
bad arguments or an unreadable plan.

--one-step: instead of the open-loop replay, each step of the plan alone:
the scene reset to the plan's state at knot k (arm q_k, v_k; ball quat_k,
omega_k), one mj_step of the plan's h with tau_k, compared with knot k + 1
(one_step below). A plan made with the simulator's contact (cusp-plan
--contact-time start) is reproduced there to the LCP's tolerance; the
paper's contact at the step's end is not, where the disk touches the ball.

The arm's key friction_reference (the friction pyramid's first direction,
projected on each contact's tangent plane) is set to the reference the plan
was made with (its columns rx, ry, rz, written by cusp-plan), so the replay's
pyramid is the plan's whatever the scene sets (mjcf/ball_plan.xml: 1 0 1);
a plan made with the carried basis (0 0 0), or a file without the columns,
is replayed with the scene's. --friction-reference X,Y,Z overrides both.
"""
import argparse
import ctypes
import json
import math
import os
import sys

import mujoco  # noqa: E402
import numpy as np  # noqa: E402

import cusp  # noqa: E402


def read_plan(path):
  """(t, q, v, omega, quat, tau) arrays of a cusp-plan trajectory CSV."""
  with open(path) as f:
    header = f.readline().strip().split(",")
    rows = [line.rstrip("\n").split(",") for line in f if line.strip()]
  if not rows or header[0] != "t":
    raise ValueError(f"{path}: not a cusp-plan trajectory (header {header[:3]}...)")
  n = sum(1 for h in header if h.startswith("q") and h[1:].isdigit())
  need = ["t"] + [f"q{i}" for i in range(n)] + [f"v{i}" for i in range(n)] + \
      ["wx", "wy", "wz", "qw", "qx", "qy", "qz"] + [f"tau{i}" for i in range(n)]
  col = {h: i for i, h in enumerate(header)}
  missing = [h for h in need if h not in col]
  if n == 0 or missing:
    raise ValueError(f"{path}: missing columns {missing or ['q0']}")

  def block(names, last_empty=False):
    out = []
    for r, row in enumerate(rows):
      if last_empty and r == len(rows) - 1:
        continue
      try:
        out.append([float(row[col[h]]) for h in names])
      except (ValueError, IndexError) as e:
        raise ValueError(f"{path}: row {r + 2}: {e}") from e
    return np.array(out)

  t = block(["t"])[:, 0]
  q = block([f"q{i}" for i in range(n)])
  v = block([f"v{i}" for i in range(n)])
  om = block(["wx", "wy", "wz"])
  quat = block(["qw", "qx", "qy", "qz"])
  tau = block([f"tau{i}" for i in range(n)], last_empty=True)
  if len(t) < 2 or not np.all(np.diff(t) > 0):
    raise ValueError(f"{path}: needs two or more knots at increasing times")
  return t, q, v, om, quat, tau


def read_fz(path):
  """The planned normal force of each step (column fz)."""
  with open(path) as f:
    header = f.readline().strip().split(",")
    i = header.index("fz")
    return [float(r.split(",")[i]) for r in f if r.strip() and r.split(",")[i]]


def read_friction_reference(path):
  """The friction reference "x y z" a plan was made with (columns rx, ry, rz of its first
  row), or None when the file has no such columns or the plan used the carried basis (0 0 0)."""
  with open(path) as f:
    header = f.readline().strip().split(",")
    row = f.readline().rstrip("\n").split(",")
  if not all(c in header for c in ("rx", "ry", "rz")):
    return None
  try:
    r = [float(row[header.index(c)]) for c in ("rx", "ry", "rz")]
  except (ValueError, IndexError) as e:
    raise ValueError(f"{path}: row 2: the friction reference: {e}") from e
  if not all(math.isfinite(x) for x in r):
    raise ValueError(f"{path}: row 2: the friction reference {r} is not finite")
  return None if not any(r) else " ".join(f"{x:.17g}" for x in r)


def rotation_angle(quat):
  """Angle (rad) of the rotation of a unit quaternion."""
  return 2 * math.acos(min(1.0, abs(quat[0]) / max(np.linalg.norm(quat), 1e-300)))


def relative_angle(a, b):
  """Angle (rad) of the rotation between two orientations."""
  c = abs(float(np.dot(a, b))) / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-300)
  return 2 * math.acos(min(1.0, c))


def _scene_overrides(q0, contact, friction_reference):
  """The scene's keys a replay sets: the plan's first coordinates, the contact model, and (not
  None) the arm's friction_reference, "x y z", for a plan made with another --friction-reference
  than the scene's."""
  o = {"arm.initial": " ".join(f"{x:.17g}" for x in q0), "arm.contact": contact}
  if friction_reference is not None:
    o["arm.friction_reference"] = friction_reference
  return o


def replay(plan_path, scene="mjcf/ball_plan.xml", contact="lcp", video=None, timestep=None, show=False,
           friction_reference=None):
  """Plays the plan; returns (rows, summary): rows of (t, planned angle,
  replayed angle, angle between them) at the knots."""
  t, q, v, om, quat, tau = read_plan(plan_path)
  n = q.shape[1]
  if friction_reference is None:
    friction_reference = read_friction_reference(plan_path)
  overrides = _scene_overrides(q[0], contact, friction_reference)
  m = cusp.load(scene, overrides)
  if timestep:
    m.opt.timestep = timestep
  d = cusp.make_data(m)
  if m.nu != n:
    raise ValueError(f"{scene}: {m.nu} actuators, the plan has {n} controls")
  jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "ball")
  if jid < 0 or m.jnt_type[jid] != mujoco.mjtJoint.mjJNT_BALL:
    raise ValueError(f"{scene}: no ball joint named 'ball'")
  qadr, vadr = m.jnt_qposadr[jid], m.jnt_dofadr[jid]
  d.qpos[qadr:qadr + 4] = quat[0] / np.linalg.norm(quat[0])
  d.qvel[vadr:vadr + 3] = om[0]  # world = the ball body's frame at the start (identity)
  mujoco.mj_forward(m, d)
  h = m.opt.timestep
  steps = int(round(t[-1] / h))
  rows, knot = [], 0
  renderer = frames = cam = None
  if video:
    from cusp import view
    renderer = view.make_renderer(m, 640, 480)
    frames = view.Video(video, 640, 480, 30)
    cam = view.free_camera(m, d, 640 / 480)

  def record():
    qs = np.array(d.qpos[qadr:qadr + 4])
    arm = float(np.max(np.abs(cusp.soft_state(m, d)[0] - q[knot])))
    rows.append((t[knot], rotation_angle(quat[knot]), rotation_angle(qs), relative_angle(quat[knot], qs), arm))

  viewer = None
  if show:  # MuJoCo's own viewer, paced to real time
    import time as _time
    from mujoco import viewer as mj_viewer
    viewer = mj_viewer.launch_passive(m, d)
    wall0 = _time.perf_counter()
  record()
  knot = 1
  for s in range(steps):
    time = s * h
    k = min(int(np.searchsorted(t, time + 1e-12, side="right")) - 1, len(tau) - 1)
    d.ctrl[:] = tau[k]
    try:
      mujoco.mj_step(m, d)
    except Exception as e:
      raise RuntimeError(f"MuJoCo failed at t = {d.time:.4f} s: {e}") from e
    r = cusp.report(m, d)
    if r and r["nan_events"]:
      raise RuntimeError(f"cusp reported NaN at t = {d.time:.4f} s")
    while knot < len(t) and d.time >= t[knot] - 0.5 * h:
      record()
      knot += 1
    if viewer is not None:
      if not viewer.is_running():
        break
      viewer.sync()
      lag = d.time - (_time.perf_counter() - wall0)
      if lag > 0:
        _time.sleep(lag)
    if renderer is not None and frames is not None and s % max(1, int(round(1 / (30 * h)))) == 0:
      renderer.update_scene(d, camera=cam)
      frames.write(renderer.render())
  if frames is not None:
    frames.close()
  if viewer is not None:
    viewer.close()
  err = [r[3] for r in rows]
  # the first knot whose planned step carries a contact force (fz > 1 mN: the Scholtes
  # relaxation lets eps / gap, micronewtons, act at a distance)
  fz = read_fz(plan_path)
  first_contact = next((k for k, f in enumerate(fz) if f > 1e-3), len(fz))
  summary = {
      "plan": plan_path, "scene": scene, "contact": contact, "knots": len(rows),
      "friction_reference": friction_reference or "the scene's",
      "seconds": float(t[-1]), "timestep": h,
      "planned_angle": rows[-1][1], "replayed_angle": rows[-1][2],
      "final_angle_error": err[-1], "max_angle_error": max(err),
      "mean_angle_error": float(np.mean(err)),
      "max_arm_error": max(r[4] for r in rows),
      "arm_motion": float(np.max(np.abs(q - q[0]))),
      "first_contact_knot": first_contact,
      "arm_error_before_contact": max([r[4] for r in rows[:first_contact + 1]], default=0.0),
  }
  return rows, summary


def _set_soft_state(m, d, q, v):
  """Writes the arm's coordinates and velocities into d's cusp state (the state mj_step starts from)."""
  qp, vp = cusp._DP(), cusp._DP()
  n = cusp._lib.cusp_soft_state(cusp._ptr(m), cusp._ptr(d), 0, ctypes.byref(qp), ctypes.byref(vp))
  if n != len(q):
    raise ValueError(f"the scene's arm has {n} coordinates, the plan {len(q)}")
  np.ctypeslib.as_array(qp, (n,))[:] = q
  np.ctypeslib.as_array(vp, (n,))[:] = v


def one_step(plan_path, scene="mjcf/ball_plan.xml", contact="lcp", friction_reference=None):
  """Each step of the plan from its own state: per step k, a dict of the simulator's
  knot k + 1 against the plan's: arm (max |q - q_plan|, m), arm_v (max |v - v_plan|),
  omega (|omega - omega_plan|, world, rad/s), ball (angle between the orientations,
  rad); the simulator's normal force on the ball (N, the disk-ball contacts' impulses
  over h) and their count, and the plan's fz."""
  t, q, v, om, quat, tau = read_plan(plan_path)
  fz = read_fz(plan_path)
  if friction_reference is None:
    friction_reference = read_friction_reference(plan_path)
  m = cusp.load(scene, _scene_overrides(q[0], contact, friction_reference))
  m.opt.timestep = float(t[1] - t[0])
  d = cusp.make_data(m)
  jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "ball")
  ball_geom = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "ball")
  if jid < 0 or m.jnt_type[jid] != mujoco.mjtJoint.mjJNT_BALL or ball_geom < 0:
    raise ValueError(f"{scene}: no ball joint and geom named 'ball'")
  qadr, vadr = m.jnt_qposadr[jid], m.jnt_dofadr[jid]
  out = []
  for k in range(len(t) - 1):
    mujoco.mj_resetData(m, d)
    _set_soft_state(m, d, q[k], v[k])
    d.qpos[qadr:qadr + 4] = quat[k] / np.linalg.norm(quat[k])
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, d.qpos[qadr:qadr + 4])
    d.qvel[vadr:vadr + 3] = R.reshape(3, 3).T @ om[k]  # the ball joint's velocity is in the body frame
    d.time = t[k]
    d.ctrl[:] = tau[k]
    mujoco.mj_step(m, d)
    qs, vs = cusp.soft_state(m, d)
    qb = np.array(d.qpos[qadr:qadr + 4])
    mujoco.mju_quat2Mat(R, qb)
    om_world = R.reshape(3, 3) @ d.qvel[vadr:vadr + 3]
    cs = [c for c in cusp.contacts(m, d) if c["other_geom"] == ball_geom]
    out.append({"k": k, "arm": float(np.max(np.abs(qs - q[k + 1]))), "arm_v": float(np.max(np.abs(vs - v[k + 1]))),
                "omega": float(np.linalg.norm(om_world - om[k + 1])), "ball": relative_angle(quat[k + 1], qb),
                "force": sum(c["normal_impulse"] for c in cs) / m.opt.timestep, "contacts": len(cs),
                "planned_force": fz[k]})
  return out


def main(argv=None):
  ap = argparse.ArgumentParser(prog="python -m cusp.replay", description=__doc__.split("\n")[0])
  ap.add_argument("plan")
  ap.add_argument("--scene", default="mjcf/ball_plan.xml")
  ap.add_argument("--contact", default="lcp")
  ap.add_argument("--tsv", help="write per knot t, planned angle, replayed angle, angle error (rad), "
                  "and the arm's largest coordinate error (m)")
  ap.add_argument("--timestep", help="MuJoCo's step (s); default: the scene's; 'plan': the plan's h")
  ap.add_argument("--video", help="render the replay to a video (MuJoCo's renderer, ffmpeg)")
  ap.add_argument("--view", action="store_true", help="play it in MuJoCo's viewer (needs a display)")
  ap.add_argument("--json", action="store_true")
  ap.add_argument("--friction-reference", metavar="X,Y,Z", help="the arm's key friction_reference "
                  "(default: the plan's own, its columns rx, ry, rz; else the scene's)")
  ap.add_argument("--one-step", action="store_true", help="each step from the plan's own state instead of "
                  "the open-loop replay: the simulator's knot k + 1 against the plan's")
  a = ap.parse_args(argv)
  fr = a.friction_reference.replace(",", " ") if a.friction_reference else None
  if a.view and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
    print("cusp.replay: --view needs a display (use --video OUT.mp4 without one)", file=sys.stderr)
    print(json.dumps({"plan": a.plan, "status": "error", "message": "--view needs a display"}))
    return 2
  if a.video and not os.environ.get("DISPLAY") and not os.environ.get("MUJOCO_GL"):
    # MuJoCo picks its GL backend when imported (by `import cusp`): run again with EGL
    os.environ["MUJOCO_GL"] = "egl"
    os.execv(sys.executable, [sys.executable, "-m", "cusp.replay", *(sys.argv[1:] if argv is None else argv)])
  if a.one_step:
    try:
      steps = one_step(a.plan, a.scene, a.contact, fr)
    except (OSError, ValueError) as e:
      print(f"cusp.replay: {e}", file=sys.stderr)
      print(json.dumps({"plan": a.plan, "status": "error", "message": str(e)}))
      return 2
    touching = [s for s in steps if s["contacts"] or s["planned_force"] > 1e-3]
    free = [s for s in steps if s not in touching]
    summary = {"plan": a.plan, "status": "ran", "mode": "one-step", "steps": len(steps),
               "contact_steps": len(touching)}
    for name, group in (("contact", touching), ("free", free)):
      for key in ("arm", "arm_v", "omega", "ball"):
        summary[f"{name}_max_{key}_error"] = max((s[key] for s in group), default=0.0)
    if not a.json:
      for s in steps:
        print(f"{s['k']:4d}  arm {s['arm']:9.2e}  v {s['arm_v']:9.2e}  omega {s['omega']:9.2e}  ball {s['ball']:9.2e}"
              f"  force {s['force']:9.3g} (plan {s['planned_force']:9.3g}, {s['contacts']} contacts)")
    print(json.dumps(summary))
    return 0
  try:
    if a.timestep == "plan":
      t = read_plan(a.plan)[0]
      step = float(t[1] - t[0])
    else:
      step = float(a.timestep) if a.timestep else None
      if step is not None and not step > 0:
        raise ValueError(f"--timestep {a.timestep}: needs a number > 0 or 'plan'")
    rows, summary = replay(a.plan, a.scene, a.contact, a.video, step, a.view, fr)
  except (OSError, ValueError) as e:
    print(f"cusp.replay: {e}", file=sys.stderr)
    print(json.dumps({"plan": a.plan, "status": "error", "message": str(e)}))
    return 2
  except RuntimeError as e:
    print(f"cusp.replay: {e}", file=sys.stderr)
    print(json.dumps({"plan": a.plan, "status": "failed", "message": str(e)}))
    return 1
  if a.tsv:
    with open(a.tsv, "w") as f:
      f.write("t\tplanned_angle\treplayed_angle\tangle_error\tarm_error\n")
      for r in rows:
        f.write("\t".join(f"{x:.9g}" for x in r) + "\n")
  summary["status"] = "ran"
  if not a.json:
    print(f"replayed {a.plan}: planned {math.degrees(summary['planned_angle']):.2f} deg, replayed "
          f"{math.degrees(summary['replayed_angle']):.2f} deg, final angle error "
          f"{math.degrees(summary['final_angle_error']):.2f} deg (max {math.degrees(summary['max_angle_error']):.2f})")
  print(json.dumps(summary))
  return 0


if __name__ == "__main__":
  sys.exit(main())
