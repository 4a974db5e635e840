"""Why the N = 100 replays leave their plans (docs/planning.md, "Session 16: why the replay
misses"). Usage: python bench/plan_replay_diag.py PLAN.csv [KNOTS]
Per knot: the plan's gap/fz vs the replay's disk-ball contact (open loop), and a
one-step test from the plan's own state (reset to knot k, one mj_step with tau_k)."""
import ctypes, sys, math
import numpy as np, mujoco, cusp
from cusp.replay import read_plan, read_fz

def read_col(path, name):
  with open(path) as f:
    h = f.readline().strip().split(","); i = h.index(name)
    return [float(r.split(",")[i]) if r.split(",")[i] else float("nan") for r in f if r.strip()]

def live_state(m, d):
  q, v = ctypes.POINTER(ctypes.c_double)(), ctypes.POINTER(ctypes.c_double)()
  n = cusp._lib.cusp_soft_state(cusp._ptr(m), cusp._ptr(d), 0, ctypes.byref(q), ctypes.byref(v))
  return np.ctypeslib.as_array(q, (n,)), np.ctypeslib.as_array(v, (n,))

def ball_contact(m, d, bg):
  """(min gap, sum normal force, disks) of the soft contacts with the ball."""
  cs = [c for c in cusp.contacts(m, d) if c["other_geom"] == bg]
  if not cs: return (float("nan"), 0.0, [])
  return (min(c["gap"] for c in cs), sum(c["normal_impulse"] for c in cs) / m.opt.timestep,
          sorted(set(c["disk"] for c in cs)))

def setup(plan, scene="mjcf/ball_plan.xml"):
  t, q, v, om, quat, tau = read_plan(plan)
  m = cusp.load(scene, {"arm.initial": " ".join(f"{x:.17g}" for x in q[0]), "arm.contact": "lcp"})
  m.opt.timestep = t[1] - t[0]
  d = cusp.make_data(m)
  jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "ball")
  bg = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "ball")
  return t, q, v, om, quat, tau, m, d, m.jnt_qposadr[jid], m.jnt_dofadr[jid], bg

def set_ball(m, d, qa, va, quat, om):
  d.qpos[qa:qa+4] = quat / np.linalg.norm(quat)
  R = np.zeros(9); mujoco.mju_quat2Mat(R, d.qpos[qa:qa+4]); R = R.reshape(3, 3)
  d.qvel[va:va+3] = R.T @ om   # ball joint velocity is in the body frame

def main(plan, kmax=14):
  t, q, v, om, quat, tau, m, d, qa, va, bg = setup(plan)
  gap = read_col(plan, "gap"); fz = read_col(plan, "fz")
  N = len(t) - 1
  # open loop
  set_ball(m, d, qa, va, quat[0], om[0]); mujoco.mj_forward(m, d)
  ol = []
  for k in range(N):
    d.ctrl[:] = tau[k]; mujoco.mj_step(m, d)
    ol.append(ball_contact(m, d, bg) + (float(np.max(np.abs(cusp.soft_state(m, d)[0] - q[k+1]))),))
  # one step from the plan's state at each knot
  t, q, v, om, quat, tau, m, d, qa, va, bg = setup(plan)
  one = []
  for k in range(N):
    mujoco.mj_resetData(m, d); d2 = d
    ql, vl = live_state(m, d2); ql[:] = q[k]; vl[:] = v[k]
    set_ball(m, d2, qa, va, quat[k], om[k]); d2.time = t[k]
    d2.ctrl[:] = tau[k]; mujoco.mj_step(m, d2)
    qs = cusp.soft_state(m, d2)[0]
    one.append(ball_contact(m, d2, bg) + (float(np.max(np.abs(qs - q[k+1]))),))
  print("k  plan:fz_k gap(k+1) | open loop: gap  fN  disks  |dq(k+1)| | one step from plan: gap  fN  |dq(k+1)|")
  for k in range(min(N, kmax)):
    g, f, dk, e = ol[k]; g1, f1, dk1, e1 = one[k]
    print(f"{k:3d} {fz[k]:9.3g} {gap[k]:10.3g} | {g:10.3g} {f:9.3g} {str(dk):8s} {e:9.2g} | {g1:10.3g} {f1:9.3g} {e1:9.2g}")
  return ol, one

def quat_mat(qt):
  R = np.zeros(9); mujoco.mju_quat2Mat(R, np.asarray(qt, float)); return R.reshape(3, 3)

def linearization(plan, kmax):
  t, q, v, om, quat, tau, m, d, qa, va, bg = setup(plan)
  gap = read_col(plan, "gap"); fz = read_col(plan, "fz")
  c_ball = d.xpos[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "ball")].copy()
  mujoco.mj_forward(m, d); c_ball = d.xpos[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "ball")].copy()
  def tip_at(qq):
    ql, vl = live_state(m, d); ql[:] = qq
    mujoco.mj_forward(m, d)
    x, qt = cusp.tip_pose(m, d); return x, quat_mat(qt)
  print(" k  plan fz_k  plan gap(k+1) | replay gap(k)  linear gap(k+1)  const-normal material gap(k+1)  LCP fN")
  for k in range(1, min(len(t) - 1, kmax)):
    mujoco.mj_resetData(m, d)
    ql, vl = live_state(m, d); ql[:] = q[k]; vl[:] = v[k]
    set_ball(m, d, qa, va, quat[k], om[k]); d.ctrl[:] = tau[k]
    mujoco.mj_step(m, d)
    cs = [c for c in cusp.contacts(m, d) if c["other_geom"] == bg]
    if not cs: continue
    c = min(cs, key=lambda c: c["gap"]); f = sum(x["normal_impulse"] for x in cs) / m.opt.timestep
    p, n, g = np.array(c["pos"]), np.array(c["normal"]), c["gap"]
    if n @ (c_ball - p) < 0: n = -n          # from the disk towards the ball
    x0, R0 = tip_at(q[k]); r = R0.T @ (p - x0)
    dq = q[k + 1] - q[k]; eps = 1e-6
    xp, Rp = tip_at(q[k] + eps * dq); xm, Rm = tip_at(q[k] - eps * dq)
    Jdq = ((xp + Rp @ r) - (xm + Rm @ r)) / (2 * eps)
    x1, R1 = tip_at(q[k + 1]); p1 = x1 + R1 @ r
    print(f"{k:3d} {fz[k]:9.3g} {gap[k]:12.3g} | {g:12.4g} {g - n @ Jdq:14.3g} {g - n @ (p1 - p):14.3g}     {f:8.3g}")

if __name__ == "__main__":
  kmax = int(sys.argv[2]) if len(sys.argv) > 2 else 14
  main(sys.argv[1], kmax)
  linearization(sys.argv[1], kmax)
