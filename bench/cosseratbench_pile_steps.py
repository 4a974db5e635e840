"""The cost of cosseratbench's pile with cusp, step by step: the adapter's scene (defaults:
speed 0.4 m/s, friction 0.3, E = 1e6 Pa, 100 elements), the clamp driven as the adapter
drives it, and per step one JSON line: time, wall seconds of mj_step, contacts, contacts
kept by stage 1, LCP variables, Lemke's pivots, the report's stage times (s), the process's CPU
seconds of the step and the solves Lemke started from the warm start's basis (--warm-lemke). For a run
too slow to finish (docs/cosseratbench.md, the pile's paragraph): stop it when enough.

  PYTHONPATH=python CUSP_LIBRARY=build/libcusp.so OPENBLAS_NUM_THREADS=1 \\
      .venv/bin/python bench/cosseratbench_pile_steps.py --steps 100
"""
from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
import time

import mujoco
import numpy
from cosseratbench.registry import load_experiment

import cusp
from cusp.cosseratbench_adapter import CuspSolver, _load_text, _quat


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--steps", type=int, default=100)
  parser.add_argument("--time-step-scale", type=float, default=1.0,
                      help="the adapter's time_step_scale (its step times this)")
  parser.add_argument("--save-state", metavar="FILE.npy",
                      help="write MuJoCo's integration state (with the plugin's) after the last step")
  parser.add_argument("--save-every", type=int, default=0, metavar="N",
                      help="with --save-state, also write it every N steps (a long run that may be stopped)")
  parser.add_argument("--load-state", metavar="FILE.npy",
                      help="start from a state --save-state wrote (the step count continues from its time)")
  parser.add_argument("--warm-lemke", action=argparse.BooleanOptionalAction, default=True,
                      help="the key warm_lemke (the adapter sets it for a rope touching itself; --no-warm-lemke: off): "
                           "Lemke starts from the warm start's basis when the warm pivot fails")
  parser.add_argument("--frames", metavar="FILE.npz",
                      help="also write the rope's nodes at each of cosseratbench's frames the run reaches "
                           "(times, positions), as the adapter samples them, for "
                           "bench/cosseratbench_pile_score.py")
  parser.add_argument("--lemke-form", choices=("tableau", "revised"),
                      help="the key lemke_form (how Lemke keeps its basis; the library's default when not given)")
  parser.add_argument("--lcp-matrix", choices=("stored", "entries", "operator", "auto"),
                      help="the key lcp_matrix (what the contact solve reads from the kept contacts' Delassus "
                           "blocks instead of the formed matrix; the library's default when not given)")
  parser.add_argument("--surface-layer", metavar="M",
                      help="the key surface_layer (m; the depth a resting contact may sink without being pushed "
                           "out; the plugin's default, as the adapter's scene leaves it, when not given; 0: the paper's gap term)")
  parser.add_argument("--dump-lcp", metavar="DIR",
                      help="write each step's contact LCP (after rank selection, before scaling) as "
                           "DIR/step_NNNNNNN.dat, as cusp-sim --dump-lcp does, for cusp-lcp and the LCP benchmarks")
  parser.add_argument("--contacts", action="store_true",
                      help="per step also a histogram of the contacts: against the floor or the rope, "
                           "kept, loaded, and their gaps")
  args = parser.parse_args()
  experiment = load_experiment("pile")
  scenario = experiment.build(**{p.name: p.default for p in experiment.parameters})
  solver = CuspSolver(time_step_scale=args.time_step_scale)
  xml, drive = solver.scene(scenario, n_elements=experiment.n_elements, n_frames=experiment.n_frames)
  if not args.warm_lemke:   # the adapter turns it on for a rope touching itself
    xml = xml.replace('<config key="warm_lemke" value="1"/>', '<config key="warm_lemke" value="0"/>')
  for key, value in (("lemke_form", args.lemke_form), ("lcp_matrix", args.lcp_matrix),
                     ("surface_layer", args.surface_layer)):
    if value:   # next to warm_lemke, in the rope's instance
      xml, found = re.subn(r'(<config key="warm_lemke" value="[01]"/>)', rf'\1<config key="{key}" value="{value}"/>',
                           xml, count=1)
      if not found:
        parser.error(f"--{key.replace('_', '-')}: the adapter's scene has no warm_lemke key to put it beside")
  dt, per_frame = solver._steps(scenario, experiment.n_frames)
  start = time.perf_counter()
  model = _load_text(xml)
  data = cusp.make_data(model)
  print(json.dumps({"load_s": time.perf_counter() - start, "time_step": dt,
                    "steps_in_run": round(scenario.duration / dt), "nv": model.nv}), flush=True)
  mocap = [(model.body(body).mocapid[0], origin, frame, motion) for body, origin, frame, motion in drive]
  spec = mujoco.mjtState.mjSTATE_INTEGRATION
  first = 0
  if args.load_state:
    if (error := load_saved_state(model, data, args.load_state)) is not None:
      print(error, file=sys.stderr)
      return 2
    first = round(data.time / dt)
  mujoco.mj_forward(model, data)   # as the adapter's run does before its first frame and step
  frames = _FrameRecorder(model, experiment.n_elements) if args.frames else None
  if frames and first % per_frame == 0:
    frames.sample(model, data, first * dt)
  for step in range(first, first + args.steps):
    for body, origin, frame, motion in mocap:
      displacement, rotation = motion.pose((step + 1) * dt)
      data.mocap_pos[body] = origin + displacement
      data.mocap_quat[body] = _quat(rotation @ frame)
    t0, c0 = time.perf_counter(), time.process_time()
    mujoco.mj_step(model, data)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    r = cusp.report(model, data)
    info = r["info"]
    print(json.dumps({
        "t": data.time, "wall_s": wall, "contacts": r["ncontact"], "kept": info["nkept"],
        "variables": info["nvar"], "pivots": info["lcp"]["iterations"], "solver": info["lcp"]["solver_name"],
        "dynamics_s": r["dynamics_us"] * 1e-6, "collision_s": r["collision_us"] * 1e-6,
        "assembly_s": r["assembly_us"] * 1e-6, "conditioning_s": r["conditioning_us"] * 1e-6,
        "solve_s": r["solve_us"] * 1e-6, "solves": info["solves"], "cold_solves": info["cold_solves"], "warm_pivot": info["lcp"]["warm_pivot"], "warm_lemke": info["lcp"]["warm_lemke"], "warm_lemke_starts": info["warm_lemke_starts"], "warm_lemke_solved": info["warm_lemke_solved"], "cpu_s": cpu, "rank_passes": info["rank_passes"], "screened": info.get("screened"), "screen_passes": info.get("screen_passes"), "dropped": int(data.warning[mujoco.mjtWarning.mjWARN_CONTACTFULL].number),
        "message": r["message"], "max_penetration": r["max_penetration"], **(_contact_summary(model, data) if args.contacts else {})}), flush=True)
    if args.dump_lcp:
      M, q = cusp.lcp(model, data)
      if q.size:
        pathlib.Path(args.dump_lcp).mkdir(parents=True, exist_ok=True)
        cusp.write_lcp(pathlib.Path(args.dump_lcp) / f"step_{step + 1:07d}.dat", M, q,
                       f"cosseratbench_pile_steps: contact LCP of step {step + 1} (t = {data.time:.6f} s), impulses, "
                       "after rank selection, before scaling")
    if frames and (step + 1) % per_frame == 0:
      frames.sample(model, data, (step + 1) * dt)
    if args.save_state and args.save_every > 0 and (step + 1) % args.save_every == 0:
      _save(model, data, spec, args.save_state)
      if frames:
        frames.save(args.frames)
  if args.save_state:
    _save(model, data, spec, args.save_state)
  if frames:
    frames.save(args.frames)
  return 0


class _FrameRecorder:
  """The rope's nodes at cosseratbench's frame times, sampled along its arc length as
  the adapter's run samples them (so the experiment's metrics read them unchanged)."""

  def __init__(self, model, n_elements: int) -> None:
    self.instance = cusp.instance_names(model).index("rod0")
    self.nodes = numpy.linspace(0.0, cusp.total_length(model, self.instance), n_elements + 1)
    self.times, self.positions = [], []

  def sample(self, model, data, t: float) -> None:
    self.times.append(t)
    self.positions.append([cusp.backbone_point(model, data, self.instance, s)[0] for s in self.nodes])

  def save(self, path: str) -> None:
    numpy.savez(path, times=numpy.array(self.times), positions=numpy.array(self.positions))


def load_saved_state(model, data, path: str) -> str | None:
  """Sets MuJoCo's integration state (with the plugin's) from a file _save wrote; or says
  why not."""
  spec = mujoco.mjtState.mjSTATE_INTEGRATION
  state = numpy.load(path)
  if state.size != mujoco.mj_stateSize(model, spec):
    return f"{path}: {state.size} doubles, this scene's state has {mujoco.mj_stateSize(model, spec)}"
  mujoco.mj_setState(model, data, state, spec)
  return None


def _save(model, data, spec, path: str) -> None:
  state = numpy.empty(mujoco.mj_stateSize(model, spec))
  mujoco.mj_getState(model, data, state, spec)
  numpy.save(path, state)


def _contact_summary(model, data) -> dict:
  """Counts of the last step's contacts: with the floor or the rope, kept by stage 1,
  carrying an impulse, and with a gap above 1, 2, 4 mm."""
  out = {"floor": 0, "rope": 0, "kept_rope": 0, "loaded_floor": 0, "loaded_rope": 0,
         "gap_over_1mm": 0, "gap_over_2mm": 0, "gap_over_4mm": 0}
  for c in cusp.contacts(model, data):
    kind = "rope" if c["other_instance"] >= 0 else "floor"
    out[kind] += 1
    out["kept_rope"] += kind == "rope" and bool(c["kept"])
    out["loaded_" + kind] += c["normal_impulse"] > 0
    for mm in (1, 2, 4):
      out[f"gap_over_{mm}mm"] += c["gap"] > mm * 1e-3
  return out


if __name__ == "__main__":
  sys.exit(main())
