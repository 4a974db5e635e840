"""The cusp Python package against libcusp.so (ctest's `python` test sets
CUSP_LIBRARY): loading, errors, stepping, and MuJoCo's own tools reproducing
a run bit for bit: copies, saved states, multithreaded rollouts."""

import copy
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import mujoco
import mujoco.rollout
import numpy as np
import pytest

import cusp

REPO = pathlib.Path(__file__).resolve().parents[2]
SCENE = REPO / "mjcf" / "default.xml"
FULL = mujoco.mjtState.mjSTATE_FULLPHYSICS.value


@pytest.fixture(scope="module")
def model():
  return cusp.load(SCENE)


def run(m, d, n):
  for _ in range(n):
    mujoco.mj_step(m, d)


def same(a, b):
  """Bit-identical float arrays (NaN payloads included)."""
  a, b = np.asarray(a), np.asarray(b)
  return a.shape == b.shape and a.tobytes() == b.tobytes()


def full_state(m, d):
  s = np.empty(mujoco.mj_stateSize(m, FULL))
  mujoco.mj_getState(m, d, s, FULL)
  return s


# ---------- loading ----------

def test_load_returns_model_with_disk_bodies(model):
  assert isinstance(model, mujoco.MjModel)
  assert cusp.instance_count(model) == 1
  assert cusp.instance_names(model) == ["arm"]
  assert cusp.instance_find(model, "arm") == 0
  assert cusp.instance_find(model, "nope") == -1
  disks = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(model.nbody)]
  disks = [n for n in disks if n and n.startswith("arm/disk")]
  assert "arm/disk0" in disks and len(disks) > 3
  for name in disks:
    b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name)
    assert model.body_mocapid[b] >= 0            # mocap bodies
  g = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "arm/disk0")
  assert g >= 0 and model.geom_type[g] == mujoco.mjtGeom.mjGEOM_CYLINDER
  assert model.nu >= 6                            # the chamber actuators
  assert cusp.total_length(model, "arm") > 0


def test_missing_file_raises_with_path(tmp_path):
  missing = tmp_path / "missing.xml"
  with pytest.raises(ValueError, match="missing.xml"):
    cusp.load(missing)


def _scene_with(tmp_path, key, value):
  xml = textwrap.dedent(f"""\
      <mujoco>
        <extension><plugin plugin="cusp.softbody"><instance name="arm">
          <config key="{key}" value="{value}"/>
        </instance></plugin></extension>
        <worldbody><body name="mount" pos="0 0 1"><plugin instance="arm"/></body></worldbody>
      </mujoco>""")
  path = tmp_path / "scene.xml"
  path.write_text(xml)
  return path


def test_bad_key_raises_with_key(tmp_path):
  # MuJoCo refuses undeclared plugin keys itself, at parse or expansion
  with pytest.raises(ValueError, match="no_such_key"):
    cusp.load(_scene_with(tmp_path, "no_such_key", "1"))


def test_bad_value_raises_with_key(tmp_path):
  with pytest.raises(ValueError, match="sections"):
    cusp.load(_scene_with(tmp_path, "sections", "banana"))


def test_bad_override_raises_with_key():
  with pytest.raises(ValueError, match="friction"):
    cusp.load(SCENE, {"arm.friction": "-3"})
  with pytest.raises(ValueError, match="INSTANCE"):
    cusp.load(SCENE, ["arm-friction=1"])


def test_override_applies():
  m = cusp.load(SCENE, ["arm.friction=0.3"])
  d = mujoco.MjData(m)
  assert float(cusp.get(m, d, "arm", "friction")) == pytest.approx(0.3)


def test_expanded_text_loads_in_stock_mujoco(model):
  """cusp.expand's MJCF opens with MuJoCo's own loader (the plugin is
  registered by `import cusp`) and runs like cusp.load's model."""
  xml = cusp.expand(SCENE)
  assert "cusp.softbody" in xml and "arm/disk0" in xml
  stock = mujoco.MjModel.from_xml_string(xml)
  assert (stock.nbody, stock.ngeom, stock.nu) == (model.nbody, model.ngeom, model.nu)
  a, b = mujoco.MjData(stock), mujoco.MjData(model)
  run(stock, a, 100)
  run(model, b, 100)
  assert same(a.qpos, b.qpos) and same(a.plugin_state, b.plugin_state)
  with pytest.raises(ValueError, match="friction"):
    cusp.expand(SCENE, {"arm.friction": "-1"})


# ---------- stepping ----------

def test_step_moves_the_arm(model):
  d = mujoco.MjData(model)
  mujoco.mj_forward(model, d)
  tip0, _ = cusp.tip_pose(model, d, "arm")
  q0, v0 = cusp.soft_state(model, d, 0)
  run(model, d, 200)
  tip1, quat = cusp.tip_pose(model, d, "arm")
  q1, _ = cusp.soft_state(model, d, 0)
  assert np.all(np.isfinite(tip1)) and abs(np.linalg.norm(quat) - 1) < 1e-9
  assert np.linalg.norm(tip1 - tip0) > 1e-3     # it falls onto the incline
  assert len(q0) == len(q1) == len(v0) and not same(q0, q1)
  r = cusp.report(model, d)
  assert r["steps"] == 200 and r["nan_events"] == 0
  assert r["time"] == pytest.approx(d.time - model.opt.timestep)
  # the disk bodies follow the arm
  b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "arm/disk0")
  assert np.all(np.isfinite(d.mocap_pos[model.body_mocapid[b]]))


def test_contacts_and_switches(model):
  d = mujoco.MjData(model)
  run(model, d, 400)                              # lying on the incline by now
  cs = cusp.contacts(model, d)
  r = cusp.report(model, d)
  assert len(cs) == r["ncontact"] > 0
  c = cs[0]
  assert c["instance"] == 0 and np.isfinite(c["pos"]).all() and abs(np.linalg.norm(c["normal"]) - 1) < 1e-6
  assert np.array_equal(c["force"], c["impulse"] / model.opt.timestep)
  assert cusp.get(model, d, 0, "contact") == "lcp"
  cusp.set(model, d, "arm", "contact", "penalty")
  assert cusp.get(model, d, 0, "contact") == "penalty"
  with pytest.raises(ValueError, match="solver"):
    cusp.set(model, d, 0, "solver", "nonsense")
  with pytest.raises(ValueError, match="nope"):
    cusp.get(model, d, "nope", "contact")


def test_every_contact_force_is_read_back_once():
  """The box of tests/test_contact_force.c pushed over the ledge's edge: at
  every step its momentum change is m g plus what a user reads,
  mj_contactForce over d.contact, cusp.contacts and the pair_contacts no
  MuJoCo row carries (the corner it lands on, which MuJoCo excludes or does
  not list)."""
  m = cusp.load(REPO / "tests" / "data" / "scenes" / "contact_force_bridging.xml", {"arm.align_friction": 1})
  d = mujoco.MjData(m)
  box = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "box")
  adr = m.jnt_dofadr[m.body_jntadr[m.geom_bodyid[box]]]
  mass, h = m.body_mass[m.geom_bodyid[box]], m.opt.timestep
  while d.time < 0.5:
    mujoco.mj_step(m, d)
  d.qvel[adr:adr + 6] = [0.5 * np.cos(-np.pi / 6), 0.5 * np.sin(-np.pi / 6), 0, 0, 0, 0]
  worst, rowless_steps = 0.0, 0
  for _ in range(60):
    v = d.qvel[adr:adr + 3].copy()
    mujoco.mj_step(m, d)
    total = mass * np.asarray(m.opt.gravity)
    for i in range(d.ncon):
      con = d.contact[i]
      if box not in con.geom:
        continue
      local = np.zeros(6)
      mujoco.mj_contactForce(m, d, i, local)
      world = con.frame.reshape(3, 3).T @ local[:3]
      total += world if con.geom[1] == box else -world
    for c in cusp.contacts(m, d):
      if c["other_geom"] == box:
        total -= c["force"]
    rowless = [p for p in cusp.pair_contacts(m, d) if box in p["geom"] and p["mujoco_contact"] < 0]
    rowless_steps += any(p["normal_force"] > 0 for p in rowless)
    for p in rowless:
      total += p["force"] if p["geom"][1] == box else -p["force"]
    worst = max(worst, np.abs(mass * (d.qvel[adr:adr + 3] - v) / h - total).max() / (mass * 9.81))
  # how many steps MuJoCo gives the landed corner no row is round-off and the
  # choice among the box's non-unique LCP answers (tests/test_contact_force.c's
  # sliding box): the count asks only that the rowless path is exercised
  assert rowless_steps >= 1 and worst < 1e-9, (rowless_steps, worst)


def _tip_after(model, frames, pull=None, ctrl=None):
  """cusp.view's frames of one step each (a slow machine's) with what the
  viewer's sync does between them: the mouse perturbation of the tip disk
  (pull: world offset of the target) or an actuator slider (ctrl:
  (actuator, value)), from the 100th frame on."""
  from cusp import view
  d = mujoco.MjData(model)
  mujoco.mj_forward(model, d)
  disks = [n for n in (mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(model.nbody))
           if n and n.startswith("arm/disk")]
  body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, max(disks, key=lambda n: int(n[8:])))
  pert = mujoco.MjvPerturb()
  mujoco.mjv_defaultPerturb(pert)
  scn, cam = mujoco.MjvScene(model, 2000), mujoco.MjvCamera()
  mujoco.mjv_defaultFreeCamera(model, cam)
  for f in range(frames):
    if f == 100 and pull is not None:  # double-click on the disk, Ctrl + right drag
      mujoco.mjv_updateScene(model, d, mujoco.MjvOption(), None, cam, mujoco.mjtCatBit.mjCAT_ALL, scn)
      pert.select = body
      mujoco.mjv_initPerturb(model, d, scn, pert)
      pert.refpos[:] += pull
      pert.refselpos[:] += pull
      pert.active = mujoco.mjtPertBit.mjPERT_TRANSLATE
    if f >= 100 and ctrl is not None:
      d.ctrl[ctrl[0]] = ctrl[1]
    d.xfrc_applied[:] = 0                     # the viewer's sync, passive mode
    mujoco.mjv_applyPerturbPose(model, d, pert, 0)
    mujoco.mjv_applyPerturbForce(model, d, pert)
    view.step_until(model, d, d.time + 0.5 * model.opt.timestep, float("inf"))
  return cusp.tip_pose(model, d, "arm")[0]


def test_viewer_mouse_pull_and_slider_move_the_arm(model):
  base = _tip_after(model, 400)
  pulled = _tip_after(model, 400, pull=np.array([0.1, 0, 0]))
  assert pulled[0] - base[0] > 0.03                # towards the mouse, most of the 10 cm
  act = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, "arm/s2c1")
  pressed = _tip_after(model, 400, ctrl=(act, model.actuator_ctrlrange[act][1]))
  assert np.linalg.norm(pressed - base) > 0.02


# ---------- bit-for-bit reproduction ----------

def test_copy_mid_run_is_exact(model):
  d = mujoco.MjData(model)
  run(model, d, 300)
  d2 = copy.copy(d)                               # mj_copyData
  d3 = mujoco.MjData(model)
  mujoco.mj_copyData(d3, model, d)
  for x in (d, d2, d3):
    run(model, x, 300)
  for x in (d2, d3):
    assert same(x.qpos, d.qpos)
    assert same(x.plugin_state, d.plugin_state)
    assert same(x.mocap_pos, d.mocap_pos)
  assert not same(d.qpos, mujoco.MjData(model).qpos)


def test_state_restore_and_replay_is_exact(model):
  d = mujoco.MjData(model)
  run(model, d, 250)
  saved = full_state(model, d)
  warm = d.qacc_warmstart.copy()                  # MuJoCo's solver warm start is not physics state
  run(model, d, 250)
  want_qpos, want_plugin = d.qpos.copy(), d.plugin_state.copy()
  # restore into the same data (now 250 steps later) and into a fresh one
  fresh = mujoco.MjData(model)
  for x in (d, fresh):
    mujoco.mj_setState(model, x, saved, FULL)
    x.qacc_warmstart[:] = warm
    run(model, x, 250)
    assert same(x.qpos, want_qpos)
    assert same(x.plugin_state, want_plugin)


def test_reset_replays_the_run(model):
  d = mujoco.MjData(model)
  run(model, d, 200)
  first = d.qpos.copy(), d.plugin_state.copy()
  run(model, d, 50)
  mujoco.mj_resetData(model, d)
  run(model, d, 200)
  assert same(d.qpos, first[0]) and same(d.plugin_state, first[1])


def test_forward_without_step_changes_nothing(model):
  a, b = mujoco.MjData(model), mujoco.MjData(model)
  run(model, a, 100)
  run(model, b, 100)
  for _ in range(5):
    mujoco.mj_forward(model, b)
  run(model, a, 100)
  run(model, b, 100)
  assert same(a.qpos, b.qpos) and same(a.plugin_state, b.plugin_state)


def test_rollout_two_threads_equals_sequential(model):
  d = mujoco.MjData(model)
  run(model, d, 150)
  s0 = full_state(model, d)
  run(model, d, 150)
  s1 = full_state(model, d)
  initial = np.stack([s0, s1])
  nstep = 120
  datas = [mujoco.MjData(model) for _ in range(2)]
  state, _ = mujoco.rollout.rollout(model, datas, initial, nstep=nstep)
  assert state.shape == (2, nstep, len(s0))
  # the same by hand: what rollout does per initial state (no controls given:
  # ctrl zero, mocap poses from the model, no warm start), one thread
  ref = mujoco.MjData(model)
  for r in range(2):
    ref.ctrl[:] = 0
    for b in range(model.nbody):
      if model.body_mocapid[b] >= 0:
        ref.mocap_pos[model.body_mocapid[b]] = model.body_pos[b]
        ref.mocap_quat[model.body_mocapid[b]] = model.body_quat[b]
    mujoco.mj_setState(model, ref, initial[r], FULL)
    ref.qacc_warmstart[:] = 0
    for t in range(nstep):
      mujoco.mj_step(model, ref)
      assert same(state[r, t], full_state(model, ref)), f"rollout {r} differs at step {t}"
  # the plugin state is part of the compared state, and it moves
  plugin = mujoco.mjtState.mjSTATE_PLUGIN.value
  assert FULL & plugin and mujoco.mj_stateSize(model, plugin) == model.npluginstate > 0
  assert not same(state[0, 0], state[0, -1])


# ---------- the C structures ----------

def test_struct_layout_matches_c(tmp_path):
  cc = shutil.which("cc") or shutil.which("gcc")
  if not cc:
    pytest.skip("no C compiler")
  src = tmp_path / "layout.c"
  fields = {"cusp_step_report": cusp.StepReport, "cusp_contact_report": cusp.ContactReport,
            "cusp_pair_contact": cusp.PairContact,
            "sb_contact_info": cusp.ContactInfo, "sb_lcp_info": cusp.LcpInfo, "cusp_override": cusp.Override}
  lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "cusp.h"', "int main(void) {"]
  for cname, py in fields.items():
    lines.append(f'  printf("{cname} %zu\\n", sizeof({cname}));')
    for f, _ in py._fields_:
      lines.append(f'  printf("{cname}.{f} %zu\\n", offsetof({cname}, {f}));')
  lines += ["  return 0;", "}"]
  src.write_text("\n".join(lines))
  exe = tmp_path / "layout"
  inc = pathlib.Path(mujoco.__file__).parent / "include"
  subprocess.run([cc, "-std=c11", "-o", str(exe), str(src), f"-I{REPO / 'plugin'}", f"-I{REPO / 'softbody'}",
                  f"-I{inc}"], check=True)
  out = dict(line.rsplit(" ", 1) for line in subprocess.run([str(exe)], capture_output=True, text=True,
                                                             check=True).stdout.split("\n") if line)
  for cname, py in fields.items():
    assert int(out[cname]) == __import__("ctypes").sizeof(py), cname
    for f, _ in py._fields_:
      assert int(out[f"{cname}.{f}"]) == getattr(py, f).offset, f"{cname}.{f}"



def test_library_of_another_build_is_refused():
  # the loaded library agrees with the mirrors: cusp_struct_size is its own sizeof
  cusp._check_layouts(cusp.LIBRARY, cusp._lib)
  assert cusp._lib.cusp_struct_size(b"cusp_step_report") == __import__("ctypes").sizeof(cusp.StepReport)
  assert cusp._lib.cusp_struct_size(b"no_such_struct") == 0

  class Grown:  # a library whose sb_contact_info gained a field this package does not know
    @staticmethod
    def cusp_struct_size(name):
      size = cusp._lib.cusp_struct_size(name)
      return size + 8 if name == b"sb_contact_info" else size

  with pytest.raises(ImportError, match="sb_contact_info of .* bytes.*different builds"):
    cusp._check_layouts("libcusp-other.so", Grown)


# ---------- the viewer's headless path ----------

def test_headless_video(tmp_path):
  if not shutil.which("ffmpeg"):
    pytest.skip("no ffmpeg")
  video, png = tmp_path / "v.mp4", tmp_path / "last.png"
  env = dict(os.environ)
  env.pop("DISPLAY", None)
  env.pop("WAYLAND_DISPLAY", None)
  env.pop("MUJOCO_GL", None)
  p = subprocess.run([sys.executable, "-m", "cusp.view", str(SCENE), "--seconds", "0.3", "--video", str(video),
                      "--png", str(png), "--width", "320", "--height", "240"],
                     env=env, capture_output=True, text=True, timeout=300)
  assert p.returncode == 0, p.stderr
  assert video.stat().st_size > 1000 and png.stat().st_size > 1000
  raw = subprocess.run(["ffmpeg", "-v", "error", "-i", str(video), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                       capture_output=True, check=True).stdout
  frames = np.frombuffer(raw, np.uint8).reshape(-1, 240, 320, 3)
  assert len(frames) >= 9                          # 0.3 s at 30 fps
  for f in frames[[0, -1]]:
    assert f.std() > 10                            # not one colour
    assert len(np.unique(f.reshape(-1, 3), axis=0)) > 50
  assert not np.array_equal(frames[0], frames[-1])  # the arm moved


def test_view_keys_switch_every_instance(model):
  from cusp import view
  d = mujoco.MjData(model)
  run(model, d, 5)
  import glfw
  assert view.key_action(glfw.KEY_C, False) is None        # plain C stays MuJoCo's
  assert view.apply_action(model, d, view.key_action(glfw.KEY_C, True)) == "contact = penalty"
  assert cusp.get(model, d, 0, "contact") == "penalty"
  for nxt in ("sap", "ncp", "lcp"):                          # the cycle, stepping under each model
    assert view.apply_action(model, d, view.key_action(glfw.KEY_C, True)) == "contact = " + nxt
    assert cusp.get(model, d, 0, "contact") == nxt
    run(model, d, 5)
    assert np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.plugin_state))
  before = cusp.get(model, d, 0, "solver")
  view.apply_action(model, d, view.key_action(glfw.KEY_S, True))
  after = cusp.get(model, d, 0, "solver")
  assert after != before and after in cusp.SOLVERS
  stages = view._stages(cusp.get(model, d, 0, "conditioning"))
  view.apply_action(model, d, view.key_action(glfw.KEY_2, True))
  assert view._stages(cusp.get(model, d, 0, "conditioning")) == stages ^ {"ruiz"}
  labels, values = view.status_text(model, d)
  assert "Contact model" in labels and "lcp" in values
  assert view.key_action(glfw.KEY_G, True) == "plots" and view.key_action(glfw.KEY_SPACE, False) == "pause"
  plots = view.Plots()
  for _ in range(3):
    run(model, d, 10)
    plots.record(model, d)
  figs = plots.figures(mujoco.MjrRect(0, 0, 1280, 720))
  assert len(figs) == 3 and all(f.linepnt[0] == 3 for _, f in figs)


def test_viewer_under_xvfb_keys_and_quit(tmp_path):
  """MuJoCo's viewer on a virtual display: the scene shows, Ctrl+C switches
  the contact model on every instance, Ctrl+Q (the viewer's Quit) ends it
  with exit 0 (python/tools/viewer_shot.py drives it through XTEST)."""
  import ctypes.util
  if not shutil.which("xvfb-run") or not shutil.which("ffmpeg") or not ctypes.util.find_library("Xtst"):
    pytest.skip("no xvfb-run, ffmpeg or libXtst (scripts/setup.sh --test installs them)")
  shot = tmp_path / "viewer.png"
  tool = REPO / "python" / "tools" / "viewer_shot.py"
  env = dict(os.environ)
  env.pop("MUJOCO_GL", None)
  p = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", sys.executable, str(tool), str(shot),
                      str(SCENE), "--until", "paused at", "--wait", "1", "--keys", "Control_L+c", "--",
                      "--seconds", "0.3"],
                     env=env, capture_output=True, text=True, timeout=180)
  assert p.returncode == 0, p.stdout + p.stderr
  assert "contact = penalty" in p.stderr, p.stderr
  assert shot.stat().st_size > 10000


RENDER_SCENES = r"""
import sys, numpy as np, mujoco, cusp
from cusp import view
for path in sys.argv[1:]:
  m = cusp.load(path)
  d = mujoco.MjData(m)
  for _ in range(20):
    mujoco.mj_step(m, d)
  mujoco.mj_fwdPosition(m, d)
  r = view.make_renderer(m, 320, 200)
  img = view._render(r, m, d, view.free_camera(m, d, 320 / 200), view.scene_option(), None)
  r.close()
  px = img.reshape(-1, 3).astype(int)
  # the disks' orange (instances.h CUSP_DISK_RGBA_INIT, shaded)
  orange = int(np.sum((px[:, 0] > 120) & (px[:, 1] > 0.35 * px[:, 0]) & (px[:, 1] < 0.75 * px[:, 0]) &
                      (px[:, 2] < 0.45 * px[:, 0])))
  print(path, cusp.instance_count(m), round(float(img.std()), 1), orange)
"""


def test_every_scene_renders_its_arms():
  """Every mjcf/ scene loads, steps and shows its arms from the start camera
  (cusp.view's headless rendering: the disks' orange is in the picture)."""
  scenes = sorted(str(p) for p in (REPO / "mjcf").glob("*.xml"))
  env = dict(os.environ)
  for k in ("DISPLAY", "WAYLAND_DISPLAY"):
    env.pop(k, None)
  env["MUJOCO_GL"] = "egl"
  p = subprocess.run([sys.executable, "-c", RENDER_SCENES, *scenes], env=env, capture_output=True, text=True,
                     timeout=300)
  if p.returncode != 0 and "EGL" in p.stderr:
    env["MUJOCO_GL"] = "osmesa"
    p = subprocess.run([sys.executable, "-c", RENDER_SCENES, *scenes], env=env, capture_output=True, text=True,
                       timeout=300)
  assert p.returncode == 0, p.stderr
  rows = [line.split() for line in p.stdout.splitlines()]
  assert len(rows) == len(scenes)
  for path, ninst, std, orange in rows:
    assert int(ninst) > 0, path
    assert float(std) > 10, f"{path}: a blank picture"
    assert int(orange) > 30, f"{path}: the arm is not in view ({orange} disk pixels)"


def test_arm_inside_a_solid_is_reported_in_words(capfd):
  """Issue 19 item 2: an arm mounted inside a solid box is reported by the
  plugin itself on the first step (MuJoCo's warning and the report's
  message), naming the instance, disk, geom and depth; an arm lying on the
  floor in contact is not."""
  m = cusp.load(str(REPO / "tests" / "data" / "scenes" / "arm_inside_box.xml"))
  d = mujoco.MjData(m)
  mujoco.mj_step(m, d)
  r = cusp.report(m, d)
  contacts = cusp.contacts(m, d)
  deepest = min(contacts, key=lambda c: c["gap"])
  words = ['instance "arm"', f'disk {deepest["disk"]} (body "arm/disk{deepest["disk"]}")',
           f'is {-deepest["gap"]:.3g} m inside', 'geom "block"', "inside a solid"]
  for w in words:
    assert w in r["message"], (w, r["message"])
  said = capfd.readouterr()
  assert "inside a solid" in said.out + said.err
  # the disk's centre is inside the box (0.5 m half size about (0, 0, 0.5)) by
  # more than the disk's radius, and the contact is at least that deep
  centre = d.body(f'arm/disk{deepest["disk"]}').xpos
  inside = min(0.5 - abs(centre[0]), 0.5 - abs(centre[1]), 0.5 - abs(centre[2] - 0.5))
  assert inside > 0.03 and -deepest["gap"] >= inside - 1e-9
  # the viewer shows it, and its headless run fails with it
  from cusp import view
  labels, values = view.status_text(m, d)
  assert "Warning" in labels and "inside a solid" in values.replace("\n", " ")
  with pytest.raises(view.Failure, match='geom "block"'):
    view.step(m, d)

  m = cusp.load(str(REPO / "tests" / "data" / "scenes" / "coupling_lying.xml"))
  d = mujoco.MjData(m)
  touched = False
  for _ in range(200):
    mujoco.mj_step(m, d)
    r = cusp.report(m, d)
    touched |= r["ncontact"] > 0
    assert r["message"] == "", r["message"]
  assert touched
  said = capfd.readouterr()
  assert "cusp.softbody" not in said.out + said.err


def test_contacts_beyond_capacity_are_reported(tmp_path, capfd):
  """A disk resting on gravel finds more contacts than the workspace holds
  (the key contact_capacity, default 8 per soft disk, plus 8 per collidable
  geom of a movable body): the dropped ones are said in words naming the key
  (MuJoCo's warning, the report's message) and counted in MuJoCo's
  mjWARN_CONTACTFULL, never lost in silence; the kept ones fill the
  capacity. Without the gravel, no word."""
  def scene(gravel):
    stones = "".join(f'<geom type="sphere" size="0.001" pos="{0.0025 * i} {0.0025 * j} 0.5445"/>'
                     for i in range(-11, 12) for j in range(-11, 12)) if gravel else ""
    path = tmp_path / f"gravel_{gravel}.xml"
    # no gravity: the straight arm's tip disk (centre 0.55 m, 5 mm thick)
    # hangs 1.5 mm above the stones, inside the speculative margin
    path.write_text(f"""<mujoco><option gravity="0 0 0"/>
      <extension><plugin plugin="cusp.softbody"><instance name="arm">
        <config key="disks" value="2"/></instance></plugin></extension>
      <worldbody>{stones}<body name="mount" pos="0 0 1" euler="180 0 0"><plugin instance="arm"/></body>
      </worldbody></mujoco>""")
    return cusp.load(str(path))
  m = scene(True)
  d = mujoco.MjData(m)
  mujoco.mj_step(m, d)
  r = cusp.report(m, d)
  ndisk = m.nmocap
  assert r["ncontact"] == 8 * ndisk
  assert "contact_capacity exceeded" in r["message"], r["message"]
  assert "the workspaces hold %d;" % (8 * ndisk) in r["message"], r["message"]
  full = d.warning[mujoco.mjtWarning.mjWARN_CONTACTFULL]
  assert full.number == 1 and full.lastinfo > 8 * ndisk
  assert "%d contacts found" % full.lastinfo in r["message"], r["message"]
  said = capfd.readouterr()
  assert "contact_capacity exceeded" in said.out + said.err
  m = scene(False)
  d = mujoco.MjData(m)
  mujoco.mj_step(m, d)
  assert cusp.report(m, d)["message"] == ""


def test_end_reaction_of_a_clamped_rod():
  """A rod clamped at both ends (mjcf/demo_clamped_rod.xml; the statics are
  checked in tests/test_ends.c): the far end holds the tip where it started
  and reports the force and moment it takes; the rod swings as it sags, so
  the force averaged over its swing is about half its weight; a live switch
  to a model without held ends and a free end's reaction are refused."""
  m = cusp.load(REPO / "mjcf" / "demo_clamped_rod.xml")
  d = mujoco.MjData(m)
  forces, worst = [], 0.0
  for _ in range(150):  # 0.15 s: the ball still falls
    mujoco.mj_step(m, d)
    force, moment = cusp.end_reaction(m, d, "rod")
    forces.append(force[2])
    pos, _ = cusp.tip_pose(m, d, "rod")
    worst = max(worst, float(np.max(np.abs(pos - [0.3, 0, 0.8]))))
  assert worst < 1e-4
  assert np.all(np.isfinite(forces)) and abs(moment[1]) > 0  # a clamp holds a moment
  weight = 1000 * np.pi * 0.01**2 * 0.6 * -m.opt.gravity[2]  # density x volume x g
  assert 0.3 * weight < np.mean(forces) < 0.7 * weight
  with pytest.raises(ValueError, match="contact"):
    cusp.set(m, d, "rod", "contact", "sap")
  free = cusp.load(REPO / "mjcf" / "demo_clamped_rod.xml", {"rod.end": "free"})
  with pytest.raises(ValueError, match="no held end"):
    cusp.end_reaction(free, mujoco.MjData(free), "rod")


def test_hold_reaction_of_a_rod_held_at_interior_points():
  """Key hold (the statics are checked in tests/test_holds.c): each held
  point reports its own reaction, a pin no moment; the points stay where
  they started; a hold that is not there is a ValueError."""
  m = cusp.load(REPO / "mjcf" / "demo_clamped_rod.xml", {"rod.hold": "0.2 pin; 0.4 clamp"})
  d = mujoco.MjData(m)
  mujoco.mj_forward(m, d)
  start = [cusp.backbone_point(m, d, "rod", s)[0] for s in (0.2, 0.4)]
  for _ in range(100):
    mujoco.mj_step(m, d)
  pin_force, pin_moment = cusp.hold_reaction(m, d, "rod", 0)
  clamp_force, clamp_moment = cusp.hold_reaction(m, d, "rod", 1)
  assert np.all(np.isfinite(pin_force)) and np.all(pin_moment == 0)
  assert pin_force[2] > 0 and clamp_force[2] > 0 and np.any(clamp_moment != 0)
  mujoco.mj_kinematics(m, d)
  for s, p0 in zip((0.2, 0.4), start):
    assert np.max(np.abs(cusp.backbone_point(m, d, "rod", s)[0] - p0)) < 1e-4
  with pytest.raises(ValueError, match="no hold 2"):
    cusp.hold_reaction(m, d, "rod", 2)


def test_contact_lcp_is_read_with_its_friction_structure_and_written_back_exactly(tmp_path):
  """cusp.lcp's (M, q) is eq. (11)-(13)'s problem as solved: per contact a block
  [normal, beta_1..beta_r, gamma] in which w_gamma = mu z_n - sum beta (row gamma:
  mu in the normal's column, -1 in each beta's) and w_beta carries + gamma (its
  column: +1 in each beta row), while w_n has no gamma; the normal rows' W block
  symmetric with a positive diagonal. A transposed or misplaced read breaks these.
  cusp.write_lcp's file reads back bit for bit, and cusp-lcp solves it."""
  m = cusp.load(REPO / "mjcf" / "scenario_a.xml")
  d = mujoco.MjData(m)
  M = np.zeros((0, 0))
  for _ in range(2000):
    mujoco.mj_step(m, d)
    M, q = cusp.lcp(m, d)
    if M.shape[0] >= 12:
      break
  n = M.shape[0]
  assert n >= 12 and q.shape == (n,), f"no LCP with two contacts in 2000 steps (n = {n})"
  mu = float(cusp.get(m, d, 0, "friction"))
  bs = 6  # the default pyramid: 4 directions
  assert n % bs == 0
  for o in range(0, n, bs):
    g, betas = o + bs - 1, range(o + 1, o + bs - 1)
    assert M[g, o] == pytest.approx(mu, rel=1e-12), (o, M[g, o], mu)
    assert M[o, g] == 0
    for b in betas:
      assert M[g, b] == -1 and M[b, g] == 1
    assert M[o, o] > 0
  normals = list(range(0, n, bs))
  Wn = M[np.ix_(normals, normals)]
  assert np.allclose(Wn, Wn.T, rtol=1e-9, atol=1e-12 * np.abs(Wn).max())
  path = tmp_path / "step.dat"
  cusp.write_lcp(path, M, q, "test")
  tokens = path.read_text().split()
  assert int(tokens[0]) == n
  values = np.array(tokens[6:6 + n * n + n], dtype=float)  # n, storage 0, rows, cols, "n n"
  assert same(values[:n * n].reshape(n, n).T, M) and same(values[n * n:], q)
  with pytest.raises(ValueError, match="M is"):
    cusp.write_lcp(path, M[:-1], q)
  with pytest.raises(OSError, match="cannot write"):
    cusp.write_lcp(tmp_path / "missing" / "x.dat", M, q)
  lib = os.environ.get("CUSP_LIBRARY")
  app = (pathlib.Path(lib).parent if lib else REPO / "build") / "cusp-lcp"
  if app.exists():
    out = subprocess.run([str(app), str(path), "--solver", "lemke", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout.splitlines()[-1])
    assert report["n"] == n and report["status"] == "solved", report
