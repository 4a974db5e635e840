"""python -m cusp.view: a cusp scene in MuJoCo's own viewer, or as a video.

    python -m cusp.view [SCENE.xml] [--set I.K=V]... [--camera NAME] [--seconds T]
    python -m cusp.view SCENE.xml --video OUT.mp4 [--seconds T] [--png OUT.png]

With a display: MuJoCo's viewer (mujoco.viewer.launch_passive) with cusp
loaded, stepping in real time. The plugin's visualize callback draws the
backbone tube, the soft contacts (the viewer's Contact Point flag, key C),
their forces (Contact Force, key F; normal green, friction yellow) and the
contacts dropped by rank selection (violet). cusp's switches, on every soft
instance (cusp_set), with Ctrl because MuJoCo's viewer already binds the
plain keys (C contact points, S shadows, 1-3 geom groups):

    Ctrl+C      contact model lcp -> penalty -> sap -> ncp
    Ctrl+S      solver fb -> lemke -> pgs
    Ctrl+1 2 3  conditioning stage qr, ruiz, tikhonov on/off
    Ctrl+G      plots: normal contact force, penetration, solver iterations
    Space       pause / run (the passive viewer leaves pausing to us)

The text at the top right says what is active. The chamber pressures are
ordinary actuators: the viewer's Control panel sets their d->ctrl (how that
combines with a scene's schedule: the README's control rule). A mouse pull
on a disk (double-click it, Ctrl + right drag) is a load on the arm.

Without a display (no DISPLAY / WAYLAND_DISPLAY), or with --video/--png: no
window; simulates T seconds (default 3) and renders with mujoco.Renderer
(EGL, else OSMesa without a display) into OUT.mp4 through ffmpeg at --fps
(30) and/or the last frame into OUT.png. Camera: --camera NAME, else the
scene's camera "cusp_default" (as a free camera), else a free camera that
frames the soft arms. Exit code 0 done, 1 simulation or output failed, 2 bad
arguments or input.
"""

import argparse
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import textwrap
import threading
import time
import zlib

import mujoco
import numpy as np

import cusp

PROG = "cusp.view"
STAGES = ("qr", "ruiz", "tikhonov")
PROGRESS_S = 2.0   # wall seconds between progress lines
_REPO_DEFAULT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                             "mjcf", "default.xml")


def _say(msg):
  print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


def _has_display():
  return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


# ---------- cusp's switches ----------

def _stages(value):
  return {s for s in re.split(r"[\s,+|]+", value.strip()) if s in STAGES}


def _stage_value(stages):
  return " ".join(s for s in STAGES if s in stages) or "none"


def _common(m, d, key):
  """A live key's value on every soft instance, or "mixed"."""
  vals = {cusp.get(m, d, i, key) for i in range(cusp.instance_count(m))}
  return vals.pop() if len(vals) == 1 else "mixed"


CONTACT_CYCLE = ("lcp", "penalty", "sap", "ncp")  # Ctrl+C's order (native is load-time only)


def toggle_contact(m, d):
  """lcp -> penalty -> sap -> ncp -> lcp on every instance; returns the new value."""
  cur = cusp.get(m, d, 0, "contact")
  new = CONTACT_CYCLE[(CONTACT_CYCLE.index(cur) + 1) % len(CONTACT_CYCLE)] if cur in CONTACT_CYCLE else "lcp"
  cusp.set_all(m, d, "contact", new)
  return new


def cycle_solver(m, d):
  """fb -> lemke -> pgs -> fb on every instance; returns the new value."""
  cur = cusp.get(m, d, 0, "solver")
  new = cusp.SOLVERS[(cusp.SOLVERS.index(cur) + 1) % len(cusp.SOLVERS)] if cur in cusp.SOLVERS else "fb"
  cusp.set_all(m, d, "solver", new)
  return new


def toggle_stage(m, d, stage):
  """Turns a conditioning stage (0 qr, 1 ruiz, 2 tikhonov) on or off on
  every instance; returns the new conditioning value."""
  cur = _stages(cusp.get(m, d, 0, "conditioning"))
  cur ^= {STAGES[stage]}
  new = _stage_value(cur)
  cusp.set_all(m, d, "conditioning", new)
  return new


def status_text(m, d, paused=False, rtf=None, note="", keys=True):
  """The overlay: (labels, values) for mjr_overlay (keys: the key help rows)."""
  if cusp.instance_count(m) == 0:
    return "cusp", "no soft instance in this scene"
  r = cusp.report(m, d) or {}
  rows = [
      ("Contact model", _common(m, d, "contact")),
      ("Solver", _common(m, d, "solver")),
      ("Conditioning", _common(m, d, "conditioning")),
      ("Soft contacts", f"{r.get('ncontact', 0)} ({r.get('nkept', 0)} kept)"),
      ("Time", f"{d.time:.3f} s" + (", paused" if paused else "") +
       (f", {rtf:.2f}x realtime" if rtf is not None and not paused else "")),
  ]
  if keys:
    rows += [("Keys", "Ctrl+C contact, Ctrl+S solver, Ctrl+G plots"),
             ("", "Ctrl+1/2/3 qr/ruiz/tikhonov, Space pause")]
  if r.get("solves"):
    lcp = r["info"]["lcp"]
    rows.insert(4, ("Last solve", f"{lcp['solver_name']} {lcp['status_name']}, {lcp['iterations']} its"))
  if r.get("message"):   # the plugin's words on a state that is not physical (an arm inside a solid)
    for k, line in enumerate(textwrap.wrap(r["message"], 60)):
      rows.append(("Warning" if k == 0 else "", line))
  if note:
    rows.append(("", note))
  return "\n".join(a for a, _ in rows), "\n".join(b for _, b in rows)


# ---------- cameras ----------

def _arm_radius(m):
  r = 0.0
  for name in cusp.instance_names(m):
    g = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, f"{name}/disk0")
    if g >= 0:
      r = max(r, float(m.geom_size[g][0]))
  return r or 0.03


def _soft_bodies(m):
  """Bodies of the soft arms' disks (NAME/diskK)."""
  names = tuple(f"{n}/disk" for n in cusp.instance_names(m))
  out = set()
  for b in range(m.nbody):
    n = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or ""
    if n.startswith(names):
      out.add(b)
  return out


def _frame_points(m, d):
  """What the start view shows: points on the arms (instance index), centres
  of the rigid bodies that move (-1), and a box that holds them, the moving
  bodies' geoms and the small static geoms near the arms (what they will
  touch; planes, walls and tables larger than the arms are left out, the
  part the arms touch is in view anyway). None without soft arms."""
  soft = _soft_bodies(m)
  pts, owner = [], []
  for k in range(cusp.instance_count(m)):
    L = cusp.total_length(m, k)
    for i in range(24):
      try:
        pts.append(cusp.backbone_point(m, d, k, L * (i + 0.5) / 24)[0])
        owner.append(k)
      except ValueError:
        pass
  if not pts:
    return None
  r = _arm_radius(m)
  arm = np.array(pts)
  lo, hi = arm.min(axis=0) - r, arm.max(axis=0) + r
  centre, size = 0.5 * (lo + hi), 0.5 * float(np.max(hi - lo))
  reach = 1.5 * size + 0.1
  for b in range(m.nbody):
    if b in soft:
      continue
    moves = m.body_weldid[b] != 0 or m.body_mocapid[b] >= 0
    seen = False
    for g in range(m.body_geomadr[b], m.body_geomadr[b] + m.body_geomnum[b]):
      p, rb = np.array(d.geom_xpos[g]), float(m.geom_rbound[g])
      if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE or m.geom_rgba[g][3] == 0 or not rb > 0:
        continue
      if not moves and (rb > max(size, 0.1) or np.linalg.norm(p - centre) - rb > reach):
        continue
      lo, hi = np.minimum(lo, p - rb), np.maximum(hi, p + rb)
      seen = True
    if moves and seen:
      pts.append(np.array(d.xipos[b]))
      owner.append(-1)
  return np.array(pts), np.array(owner), lo, hi


def _hidden(m, d, eye, p, skip):
  """Whether a geom other than those of the bodies in skip hides p from eye."""
  vec = p - eye
  length = float(np.linalg.norm(vec))
  if length < 1e-9:
    return False
  vec = vec / length
  start = eye.copy()
  geomid = np.zeros(1, dtype=np.int32)
  while True:  # the first hit that is not one of skip's geoms
    x = mujoco.mj_ray(m, d, start, vec, None, 1, -1, geomid)
    if x < 0 or np.linalg.norm(start + x * vec - eye) >= length - 0.01:
      return False
    if m.geom_bodyid[geomid[0]] not in skip:
      return True
    start = start + (x + 1e-4) * vec


def free_camera(m, d, aspect=16 / 9, camera=None):
  """The start camera as an MjvCamera. camera NAME: that fixed camera;
  else "cusp_default" as a free camera (the mouse can still turn it); else a
  free camera that frames the soft arms and looks from the direction (every
  15 degrees of azimuth, four elevations) that leaves most of each arm and
  of the moving bodies unhidden, preferring a three-quarter view across the
  plane the arms spread in."""
  cam = mujoco.MjvCamera()
  mujoco.mjv_defaultFreeCamera(m, cam)
  if camera is not None:
    cid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_CAMERA, camera)
    if cid < 0:
      names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_CAMERA, i) or f"#{i}" for i in range(m.ncam)]
      raise ValueError(f"no camera named '{camera}' (cameras: {', '.join(names) or 'none'})")
    cam.type = mujoco.mjtCamera.mjCAMERA_FIXED
    cam.fixedcamid = cid
    return cam
  framed = _frame_points(m, d)
  if framed is None:
    return cam
  pts, owner, lo, hi = framed
  centre = 0.5 * (lo + hi)
  cid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_CAMERA, "cusp_default")
  if cid >= 0:
    pos, mat = np.array(d.cam_xpos[cid]), np.array(d.cam_xmat[cid]).reshape(3, 3)
    fwd = -mat[:, 2]   # a camera looks along its -z
    dist = max(float(np.dot(centre - pos, fwd)), 0.1)
    cam.lookat[:] = pos + dist * fwd
    cam.distance = dist
    cam.azimuth = math.degrees(math.atan2(fwd[1], fwd[0]))
    cam.elevation = math.degrees(math.asin(max(-1.0, min(1.0, fwd[2]))))
    return cam
  # the plane the arms and bodies spread in: its normal and how flat it is
  w, v = np.linalg.eigh(np.cov((pts - pts.mean(axis=0)).T) if len(pts) > 1 else np.eye(3))
  normal, planar = v[:, 0], (1 - math.sqrt(max(w[0], 0) / w[1]) if w[1] > 0 else 0.0)
  soft = _soft_bodies(m)
  skip = {k: soft for k in set(owner.tolist()) if k >= 0}
  body_of = {i: {int(np.argmin([np.linalg.norm(d.xipos[b] - pts[i]) for b in range(m.nbody)]))}
             for i in range(len(pts)) if owner[i] < 0}
  ty = math.tan(math.radians(0.5 * m.vis.global_.fovy))
  tx = ty * aspect
  corners = np.array([[hi[0] if c & 1 else lo[0], hi[1] if c & 2 else lo[1], hi[2] if c & 4 else lo[2]]
                      for c in range(8)])
  ninst = max(1, cusp.instance_count(m))
  best = None
  for el in (-20.0, -30.0, -40.0, -55.0):
    for a in range(24):
      az = 90.0 + 15 * a
      ca, sa = math.cos(math.radians(az)), math.sin(math.radians(az))
      ce, se = math.cos(math.radians(el)), math.sin(math.radians(el))
      fwd = np.array([ce * ca, ce * sa, se])
      up = np.array([-se * ca, -se * sa, ce])
      right = np.cross(fwd, up)
      rel = corners - centre
      dist = 1.25 * max(0.1, float(np.max(np.maximum(np.abs(rel @ right) / tx, np.abs(rel @ up) / ty) -
                                          rel @ fwd)))
      eye = centre - dist * fwd
      arm_vis = []
      for k in range(ninst):
        idx = np.nonzero(owner == k)[0]
        seen = sum(not _hidden(m, d, eye, pts[i], skip[k]) for i in idx)
        arm_vis.append(seen / len(idx) if len(idx) else 1.0)
      bodies = [i for i in range(len(pts)) if owner[i] < 0]
      body_vis = (sum(not _hidden(m, d, eye, pts[i], body_of[i]) for i in bodies) / len(bodies)) if bodies else 1.0
      across = 1 - abs(abs(float(fwd @ normal)) - 0.8)   # about 35 degrees off the plane's normal
      score = 2 * sum(arm_vis) / ninst + min(arm_vis) + body_vis + 0.5 * planar * across - 0.004 * abs(el + 30)
      if best is None or score > best[0] + 1e-9:
        best = (score, az, el, dist)
  _, az, el, dist = best
  cam.lookat[:] = centre
  cam.distance = dist
  cam.azimuth = az % 360
  cam.elevation = el
  return cam


def scene_option():
  """Contact points and forces on (cusp's contacts follow these flags)."""
  opt = mujoco.MjvOption()
  opt.flags[mujoco.mjtVisFlag.mjVIS_CONTACTPOINT] = 1
  opt.flags[mujoco.mjtVisFlag.mjVIS_CONTACTFORCE] = 1
  return opt


def _brighten(m):
  """A scene lit only by the headlight looks very dark: brighten that one."""
  if m.nlight == 0:
    m.vis.headlight.ambient[:] = np.maximum(m.vis.headlight.ambient, 0.3)
    m.vis.headlight.diffuse[:] = np.maximum(m.vis.headlight.diffuse, 0.7)


# ---------- stepping ----------

class Failure(Exception):
  pass


def step(m, d):
  """mj_step, failing on MuJoCo's instability warnings and cusp's NaN events."""
  try:
    mujoco.mj_step(m, d)
  except Exception as e:  # mju_error inside the step
    raise Failure(f"MuJoCo error at t = {d.time:.4f} s: {e}") from e
  for w in (mujoco.mjtWarning.mjWARN_BADQACC, mujoco.mjtWarning.mjWARN_BADQVEL,
            mujoco.mjtWarning.mjWARN_BADQPOS):
    if d.warning[w].number > 0:
      raise Failure(f"MuJoCo reported an unstable state at t = {d.time:.4f} s ({w.name})")
  r = cusp.report(m, d)
  if r and r["nan_events"]:
    raise Failure(f"cusp reported {r['nan_events']} NaN event(s) by t = {d.time:.4f} s")
  if r and r["message"]:
    raise Failure(f"cusp at t = {d.time:.4f} s: {r['message']}")


def step_until(m, d, t, deadline):
  """Steps while d.time < t and the wall clock is before deadline, then
  refreshes the kinematics. The refresh is what makes the viewer's mouse
  perturbation of a disk work: the viewer (sync) moves a selected mocap body
  to the mouse (mjv_applyPerturbPose) and then pulls it with a spring from
  where d->xpos has it (mjv_applyPerturbForce); the step's own kinematics
  left the disk at the mouse (zero spring), the refreshed ones put it where
  the plugin's advance placed it, on the arm."""
  stepped = False
  try:
    while d.time < t and time.perf_counter() < deadline:
      step(m, d)
      stepped = True
  finally:
    if stepped:
      mujoco.mj_kinematics(m, d)


# ---------- images ----------

def write_png(path, rgb):
  """An RGB uint8 image (H, W, 3), top row first, as a PNG."""
  h, w, _ = rgb.shape
  raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

  def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

  with open(path, "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


class Video:
  """Raw RGB frames piped into ffmpeg (H.264, yuv420p)."""

  def __init__(self, path, width, height, fps):
    if not shutil.which("ffmpeg"):
      raise Failure("ffmpeg is not on PATH (scripts/setup.sh installs it)")
    self.path = path
    self.frames = 0
    self.proc = subprocess.Popen(
        ["ffmpeg", "-y", "-hide_banner", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
         "-s", f"{width}x{height}", "-r", f"{fps:g}", "-i", "-", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2",
         "-pix_fmt", "yuv420p", path], stdin=subprocess.PIPE)

  def write(self, rgb):
    try:
      self.proc.stdin.write(np.ascontiguousarray(rgb).tobytes())
    except BrokenPipeError as e:
      raise Failure(f"ffmpeg stopped taking frames for {self.path}") from e
    self.frames += 1

  def close(self):
    try:
      self.proc.stdin.close()
    except BrokenPipeError:
      pass
    if self.proc.wait() != 0:
      raise Failure(f"ffmpeg failed writing {self.path} (exit {self.proc.returncode})")


def _render(renderer, m, d, cam, opt, text):
  """One frame; with the overlay text when the renderer's GL context is
  reachable (else the plain image)."""
  renderer.update_scene(d, camera=cam, scene_option=opt)
  ctx, gl = getattr(renderer, "_mjr_context", None), getattr(renderer, "_gl_context", None)
  if text is None or ctx is None:
    return renderer.render()
  if gl:
    gl.make_current()
  rect = mujoco.MjrRect(0, 0, renderer.width, renderer.height)
  mujoco.mjr_render(rect, renderer.scene, ctx)
  mujoco.mjr_overlay(mujoco.mjtFont.mjFONT_NORMAL, mujoco.mjtGridPos.mjGRID_TOPRIGHT, rect, text[0], text[1], ctx)
  buf = np.empty((renderer.height, renderer.width, 3), dtype=np.uint8)
  mujoco.mjr_readPixels(buf, None, rect, ctx)
  return np.flipud(buf)


def make_renderer(m, width, height):
  """mujoco.Renderer at width x height (the offscreen buffer grown to fit)."""
  m.vis.global_.offwidth = max(m.vis.global_.offwidth, width)
  m.vis.global_.offheight = max(m.vis.global_.offheight, height)
  return mujoco.Renderer(m, height, width, max_geom=max(10000, 2 * m.ngeom + 4000),
                         font_scale=mujoco.mjtFontScale.mjFONTSCALE_100)


def run_headless(m, d, args, renderer):
  """Simulates args.seconds and writes the video and/or PNG. Returns the exit code."""
  w, h = args.width, args.height
  _brighten(m)
  mujoco.mj_forward(m, d)
  cam = free_camera(m, d, w / h, args.camera)
  opt = scene_option()
  hstep = m.opt.timestep
  nstep = max(1, int(math.ceil(args.seconds / hstep - 1e-6)))
  video = Video(args.video, w, h, args.fps) if args.video else None
  frame_dt, next_frame = 1.0 / args.fps, d.time
  t0 = time.perf_counter()
  next_progress = t0 + PROGRESS_S
  failure, img, steps = None, None, 0
  try:
    while True:
      if video and d.time >= next_frame - 0.5 * hstep:
        mujoco.mj_fwdPosition(m, d)
        text = status_text(m, d, keys=False) if args.overlay and cusp.instance_count(m) else None
        video.write(_render(renderer, m, d, cam, opt, text))
        next_frame += frame_dt
      if steps >= nstep:
        break
      step(m, d)
      steps += 1
      now = time.perf_counter()
      if now >= next_progress:
        _say(f"t = {d.time:.3f} of {args.seconds:g} s, {d.time / (now - t0):.2f}x realtime")
        next_progress = now + PROGRESS_S
  except Failure as e:
    failure = str(e)
  wall = time.perf_counter() - t0
  try:
    if video:
      video.close()
    if args.png and failure is None:
      mujoco.mj_fwdPosition(m, d)
      text = status_text(m, d, keys=False) if args.overlay and cusp.instance_count(m) else None
      img = _render(renderer, m, d, cam, opt, text)
      write_png(args.png, img)
  except (Failure, OSError) as e:
    failure = failure or f"output failed: {e}"
  renderer.close()
  print(f"scene      {args.scene} ({cusp.instance_count(m)} soft instance(s))")
  print(f"simulated  {d.time:.4g} of {args.seconds:g} s in {steps} steps: {failure or 'completed'}")
  print(f"wall time  {wall:.3f} s, {d.time / wall if wall > 0 else float('nan'):.3g}x realtime")
  if video:
    print(f"video      {args.video} ({video.frames} frames at {args.fps:g} fps, {w}x{h})")
  if args.png and failure is None:
    print(f"png        {args.png} ({w}x{h})")
  for k, name in enumerate(cusp.instance_names(m)):
    pos, _ = cusp.tip_pose(m, d, k)
    print(f"tip        {name} at ({pos[0]:.4f}, {pos[1]:.4f}, {pos[2]:.4f}) m")
  if failure:
    _say(failure)
  return 1 if failure else 0


# ---------- the viewer ----------

def _ctrl_down():
  """Whether a Control key is held (the viewer's key callback gets no
  modifiers; it runs on the viewer's thread with its window current)."""
  try:
    import glfw  # the library MuJoCo's viewer drives
    win = glfw.get_current_context()
    return bool(win) and (glfw.get_key(win, glfw.KEY_LEFT_CONTROL) == glfw.PRESS or
                          glfw.get_key(win, glfw.KEY_RIGHT_CONTROL) == glfw.PRESS)
  except Exception:  # noqa: BLE001 (no glfw: no Ctrl keys)
    return False


def key_action(key, ctrl):
  """The cusp action of a key press, or None: 'contact', 'solver',
  ('stage', i), 'plots' or 'pause'."""
  import glfw
  if key == glfw.KEY_SPACE and not ctrl:
    return "pause"
  if not ctrl:
    return None
  if key == glfw.KEY_C:
    return "contact"
  if key == glfw.KEY_S:
    return "solver"
  if key == glfw.KEY_G:
    return "plots"
  if glfw.KEY_1 <= key <= glfw.KEY_3:
    return ("stage", key - glfw.KEY_1)
  return None


def apply_action(m, d, action):
  """Performs a key_action on d; returns a status note."""
  if cusp.instance_count(m) == 0:
    return "no soft instance: nothing to switch"
  try:
    if action == "contact":
      return f"contact = {toggle_contact(m, d)}"
    if action == "solver":
      return f"solver = {cycle_solver(m, d)}"
    if isinstance(action, tuple) and action[0] == "stage":
      return f"conditioning = {toggle_stage(m, d, action[1])}"
  except ValueError as e:
    return str(e)
  return ""


class Plots:
  """The normal contact force, deepest penetration and solver iterations of
  the last frames (one sample a frame) as MuJoCo figures (set_figures)."""

  TITLES = ("Normal force (N)", "Max penetration (mm)", "Solver iterations")
  N = 500

  def __init__(self):
    self.figs = []
    for i, title in enumerate(self.TITLES):
      f = mujoco.MjvFigure()
      mujoco.mjv_defaultFigure(f)
      f.title, f.xlabel, f.xformat, f.yformat, f.minwidth = title, "time (s)", "%.1f", "%.3g", "0000"
      f.flg_extend, f.flg_legend = 0, 0
      f.flg_ticklabel[:] = 1
      f.gridsize[:] = 3
      f.figurergba[3] = f.panergba[3] = 0.6
      f.linergb[0] = (1, (0.4, 0.8, 1)[i], (0.3, 0.3, 1)[i])
      self.figs.append(f)
    self.t, self.y, self.solves = [], [[], [], []], 0

  def record(self, m, d):
    r = cusp.report(m, d)
    if not r:
      return
    force = sum(c["normal_impulse"] for c in cusp.contacts(m, d) if c["kept"]) / m.opt.timestep
    its = r["info"]["lcp"]["iterations"] if r["solves"] > self.solves else 0
    self.solves = r["solves"]
    if self.t and d.time < self.t[-1]:   # a reset
      self.t, self.y = [], [[], [], []]
    self.t.append(d.time)
    for y, v in zip(self.y, (force, 1000 * r["max_penetration"], its)):
      y.append(v if math.isfinite(v) else 0.0)
    if len(self.t) > self.N:
      self.t = self.t[-self.N:]
      self.y = [y[-self.N:] for y in self.y]

  def figures(self, viewport):
    # below the status text at the top right
    w, h = max(220, viewport.width // 4), max(100, min(viewport.height // 4, (viewport.height - 230) // 3))
    out = []
    for i, f in enumerate(self.figs):
      n = len(self.t)
      f.linepnt[0] = n
      if n:
        f.linedata[0][0:2 * n:2] = self.t
        f.linedata[0][1:2 * n:2] = self.y[i]
        f.range[0] = (self.t[0], self.t[-1] if self.t[-1] > self.t[0] else self.t[0] + 1)
        top = max(self.y[i])
        f.range[1] = (0, 1.1 * top if top > 0 else 1)
      rect = mujoco.MjrRect(viewport.left + viewport.width - w, viewport.bottom + (len(self.figs) - 1 - i) * h, w, h)
      out.append((rect, f))
    return out


def run_viewer(m, d, args):
  import mujoco.viewer
  _brighten(m)
  mujoco.mj_forward(m, d)
  actions, lock = [], threading.Lock()

  def on_key(key):
    act = key_action(key, _ctrl_down())
    if act is not None:
      with lock:
        actions.append(act)

  cam = free_camera(m, d, 16 / 9, args.camera)
  paused, note, note_t = False, "", 0.0
  plots, show_plots, plot_t = Plots(), False, 0.0
  last_text, text_t = None, 0.0
  failure = None
  with mujoco.viewer.launch_passive(m, d, key_callback=on_key) as v:
    with v.lock():
      v.cam.type, v.cam.fixedcamid = cam.type, cam.fixedcamid
      v.cam.lookat[:], v.cam.distance = cam.lookat, cam.distance
      v.cam.azimuth, v.cam.elevation = cam.azimuth, cam.elevation
      v.opt.flags[mujoco.mjtVisFlag.mjVIS_CONTACTPOINT] = 1
      v.opt.flags[mujoco.mjtVisFlag.mjVIS_CONTACTFORCE] = 1
    wall0, sim0, rtf = time.perf_counter(), d.time, None
    _say(f"viewer open: {args.scene}")
    stopped = False
    rt_wall, rt_sim = 0.0, 0.0
    while v.is_running():
      frame = time.perf_counter()
      with lock:
        todo, actions[:] = list(actions), []
      for act in todo:
        if act == "pause":
          paused = not paused
          note = "paused" if paused else "running"
        elif act == "plots":
          show_plots = not show_plots
          note = "plots on" if show_plots else "plots off"
          if not show_plots:
            v.clear_figures()
        else:
          note = apply_action(m, d, act)
        note_t = frame
        _say(note)
        wall0, sim0 = frame, d.time
      stop = args.seconds is not None and d.time >= args.seconds - 0.5 * m.opt.timestep
      if stop and not stopped:
        _say(f"paused at t = {d.time:.3f} s (--seconds)")
      stopped = stop
      if not paused and failure is None and not stop:
        if d.time < sim0:  # the viewer reset the data
          wall0, sim0 = frame, d.time
        target = sim0 + (frame - wall0)
        t_start = d.time
        until = target if args.seconds is None else min(target, args.seconds - 0.5 * m.opt.timestep)
        try:
          step_until(m, d, until, frame + 1 / 30)
        except Failure as e:
          failure = str(e)
          _say(failure + " (Backspace resets)")
        if d.time != t_start:
          plots.record(m, d)         # one sample a frame
        if d.time < target - 0.1:   # slower than real time: do not try to catch up
          wall0, sim0 = time.perf_counter(), d.time
        rt_sim = 0.9 * rt_sim + (d.time - t_start)
        rt_wall = 0.9 * rt_wall + max(time.perf_counter() - frame, 1 / 60)
        rtf = rt_sim / rt_wall if rt_wall > 0 else None
      elif failure is not None and d.time < 0.5 * m.opt.timestep:
        failure = None   # reset after a failure
      shown = failure or (note if frame - note_t < 4 else "")
      if frame - text_t > 0.2:
        text = status_text(m, d, paused or stop, rtf, shown)
        if text != last_text:
          v.set_texts((mujoco.mjtFont.mjFONT_NORMAL, mujoco.mjtGridPos.mjGRID_TOPRIGHT, text[0], text[1]))
          last_text = text
        text_t = frame
      if show_plots and frame - plot_t > 0.2 and v.viewport is not None:
        v.set_figures(plots.figures(v.viewport))
        plot_t = frame
      v.sync()
      left = 1 / 60 - (time.perf_counter() - frame)
      if left > 0:
        time.sleep(left)
  # let the viewer's (daemon) thread tear its window down before the
  # interpreter's exit handlers terminate GLFW under it
  for t in threading.enumerate():
    if t is not threading.current_thread() and t.daemon:
      t.join(timeout=5)
  return 0


# ---------- main ----------

def parse_args(argv):
  p = argparse.ArgumentParser(prog="python -m cusp.view", description=__doc__.split("\n\n")[0],
                              formatter_class=argparse.RawDescriptionHelpFormatter,
                              epilog="keys in the viewer: Ctrl+C contact lcp/penalty/sap/ncp, Ctrl+S solver "
                              "fb/lemke/pgs, Ctrl+1/2/3 conditioning qr/ruiz/tikhonov, Ctrl+G plots, "
                              "Space pause")
  p.add_argument("scene", nargs="?", default=_REPO_DEFAULT, help="MJCF scene (default: mjcf/default.xml)")
  p.add_argument("--set", action="append", default=[], metavar="I.K=V",
                 help="override key K of soft instance I (repeatable)")
  p.add_argument("--seconds", type=float, help="simulated time: video length (default 3), "
                 "or where the viewer pauses")
  p.add_argument("--video", metavar="OUT.mp4", help="render a video instead of opening the viewer")
  p.add_argument("--png", metavar="OUT.png", help="render the last frame as a PNG (no viewer)")
  p.add_argument("--headless", action="store_true", help="no viewer even with a display (needs --video or --png; "
                 "default without a display: --video out/SCENE.mp4)")
  p.add_argument("--camera", metavar="NAME", help="a camera of the model (default: cusp_default, else framing the arms)")
  p.add_argument("--width", type=int, default=1280)
  p.add_argument("--height", type=int, default=720)
  p.add_argument("--fps", type=float, default=30.0)
  p.add_argument("--no-overlay", dest="overlay", action="store_false", help="no text in rendered images")
  args = p.parse_args(argv)
  if args.seconds is not None and not (args.seconds > 0 and math.isfinite(args.seconds)):
    p.error("--seconds needs a finite number > 0")
  if not (16 <= args.width <= 8192 and 16 <= args.height <= 8192):
    p.error("--width and --height must be in 16..8192")
  if not (0 < args.fps <= 1000):
    p.error("--fps must be in (0, 1000]")
  args.headless = args.headless or bool(args.video or args.png) or not _has_display()
  if args.headless and not args.video and not args.png:
    name = os.path.splitext(os.path.basename(args.scene))[0]
    os.makedirs("out", exist_ok=True)
    args.video = os.path.join("out", f"{name}.mp4")
  if args.headless and args.seconds is None:
    args.seconds = 3.0
  return args


def _gl_for_headless(argv):
  """Without a display MuJoCo's default GL (GLFW) has no context to make:
  run again with MUJOCO_GL=egl (OSMesa when EGL fails). mujoco reads
  MUJOCO_GL when it is imported, which `import cusp` already did."""
  if _has_display() or os.environ.get("MUJOCO_GL"):
    return
  os.environ["MUJOCO_GL"] = "egl"
  os.execv(sys.executable, [sys.executable, "-m", "cusp.view", *argv])


def main(argv=None):
  argv = list(sys.argv[1:] if argv is None else argv)
  args = parse_args(argv)
  if args.headless:
    _gl_for_headless(argv)
  for out in (args.video, args.png):
    parent = os.path.dirname(os.path.abspath(out)) if out else None
    if parent and not os.access(parent, os.W_OK):
      _say(f"cannot write {out}: {parent} is missing or not writable")
      return 2
  try:
    m = cusp.load(args.scene, args.set)
    d = cusp.make_data(m)
    if args.camera is not None:
      free_camera(m, d, 1.0, args.camera)   # a bad name is bad input
  except (ValueError, RuntimeError) as e:
    _say(str(e))
    return 2
  if args.headless:
    try:
      renderer = make_renderer(m, args.width, args.height)
    except Exception as e:  # noqa: BLE001 (no GL context)
      if os.environ.get("MUJOCO_GL") == "egl" and not _has_display():
        _say(f"EGL failed ({e}); trying OSMesa")
        os.environ["MUJOCO_GL"] = "osmesa"
        os.execv(sys.executable, [sys.executable, "-m", "cusp.view", *argv])
      _say(f"cannot render (MUJOCO_GL={os.environ.get('MUJOCO_GL', '')}): {e}")
      return 1
    return run_headless(m, d, args, renderer)
  return run_viewer(m, d, args)


if __name__ == "__main__":
  sys.exit(main())
