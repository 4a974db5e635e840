"""The replays with feedback (docs/planning.md, "Session 16: why the replay misses").
Arm tracking plus a term on the ball's orientation error: the arm's reference is moved
so that its tip moves by kb (e x r), e the rotation (vector, world) from the replayed to the
planned ball orientation, r from the ball's centre to the disk-ball contact (the move that,
rolling without slip, turns the ball by e); J+ of the tip's position (central differences,
at every knot on a second model). Usage: python bench/plan_replay_feedback.py PLAN.csv KP KD KB [TIMESTEP, default 0.001 s]"""
import os, sys, math, numpy as np, mujoco, cusp
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plan_replay_diag import setup, live_state, set_ball
from cusp.replay import relative_angle, rotation_angle


def arm_reference(t, q, v, time):
  """The plan's arm state at `time`: at a knot its state; between knots k and k+1 the
  coordinates move on q_k + (time - t_k) v_{k+1} (the plan's q_{k+1} = q_k + h v_{k+1})."""
  k = min(int(np.searchsorted(t, time + 1e-12, side="right")) - 1, len(t) - 2)
  if time <= t[k] + 1e-12:
    return q[k], v[k]
  return q[k] + (time - t[k]) * v[k + 1], v[k + 1]

def rotvec(qt):
  qt = qt / np.linalg.norm(qt)
  if qt[0] < 0: qt = -qt
  s = np.linalg.norm(qt[1:]); a = 2 * math.atan2(s, qt[0])
  return np.zeros(3) if s < 1e-15 else a * qt[1:] / s

def qmul(a, b):
  r = np.zeros(4); mujoco.mju_mulQuat(r, a, b); return r

def qinv(a):
  return np.array([a[0], -a[1], -a[2], -a[3]]) / np.dot(a, a)

def main(plan, kp, kd, kb, ts):
  t, q, v, om, quat, tau, m, d, qa, va, bg = setup(plan)
  _, _, _, _, _, _, m2, d2, _, _, _ = setup(plan)
  m.opt.timestep = ts
  set_ball(m, d, qa, va, quat[0], om[0]); mujoco.mj_forward(m, d)
  cb = d.xpos[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "ball")].copy()
  def tip_jac(qq):
    J = np.zeros((3, len(qq)))
    for i in range(len(qq)):
      for sgn in (1, -1):
        ql, _ = live_state(m2, d2); ql[:] = qq; ql[i] += sgn * 1e-6
        mujoco.mj_forward(m2, d2); J[:, i] += sgn * cusp.tip_pose(m2, d2)[0] / 2e-6
    return J
  steps = int(round(t[-1] / ts)); knot = 1; Jp = None; errs = []; arm = []; last_c = None
  for s in range(steps):
    time = s * ts
    k = min(int(np.searchsorted(t, time + 1e-12, side="right")) - 1, len(tau) - 1)
    q_ref, v_ref = arm_reference(t, q, v, time)
    qn, vn = cusp.soft_state(m, d)
    if kb > 0 and last_c is not None:
      if Jp is None or s % max(1, int(round((t[1] - t[0]) / ts))) == 0:
        Jp = np.linalg.pinv(tip_jac(qn), rcond=1e-6)
      qs = np.array(d.qpos[qa:qa + 4])
      e = rotvec(qmul(quat[k], qinv(qs)))        # world rotation, replayed -> planned (knot k)
      q_ref = q_ref + Jp @ (kb * np.cross(e, last_c - cb))
    d.ctrl[:] = tau[k] + kp * (q_ref - qn) + kd * (v_ref - vn)
    mujoco.mj_step(m, d)
    cs = [c for c in cusp.contacts(m, d) if c["other_geom"] == bg]
    last_c = np.array(cs[0]["pos"]) if cs else None
    while knot < len(t) and d.time >= t[knot] - 0.5 * ts:
      qs = np.array(d.qpos[qa:qa + 4])
      errs.append(relative_angle(quat[knot], qs)); arm.append(float(np.max(np.abs(cusp.soft_state(m, d)[0] - q[knot]))))
      knot += 1
  print(f"{plan.split('/')[-1]} kp {kp:g} kd {kd:g} kb {kb:g} h {ts:g}: replayed {math.degrees(rotation_angle(qs)):.1f} deg, "
        f"final error {math.degrees(errs[-1]):.1f}, max {math.degrees(max(errs)):.1f}, mean {math.degrees(np.mean(errs)):.1f}, arm max {max(arm):.2e}")

main(sys.argv[1], *map(float, sys.argv[2:5]), float(sys.argv[5]) if len(sys.argv) > 5 else 0.001)
