#!/usr/bin/env python3
"""cusp against MuJoCo's cable and PyElastica on cosseratbench, in one run.

    .venv/bin/python bench/cosseratbench_compare.py [--out out/cosseratbench] [--docs docs]
        [--mujoco-python .venv-mujoco-cable/bin/python] [--quick] [--force]
        [--reuse docs/data/cosseratbench.json [--keep EXPERIMENT ...]] [--vary all | NAME ...]

Every experiment cosseratbench registers is first run with cusp (its entry point
``cusp``, python/cusp/cosseratbench_adapter.py); those cusp supports are then run
with the peers at their defaults, at halved/doubled ``time_step_scale`` to find each
solver's largest stable time step, and the cantilever over resolutions; cusp's own
step is checked by halving (its run at twice the step, or at half when the doubled
step is no longer); with --vary, cusp also on each variant ``cosseratbench run -v``
makes of those names (one change at a time from the default), in a table per experiment.
Runs, scoring
and divergence checks are cosseratbench's own (runs.execute, experiment.run): a run is
saved under OUT/EXPERIMENT/VARIANT/SOLVER/result.json as ``cosseratbench run`` saves
it, and a saved run still valid (same scenario, library, adapter) is reused unless
--force. Writes DOCS/NAME.md (the table), DOCS/img/NAME_*.png (the plots) and
DOCS/data/NAME.json (every run's summary), NAME cosseratbench unless --name. Progress
on stderr.

MuJoCo 4 removed the cable plugin and the <composite> element (its changelog: superseded
by 1D flexcomp), so cosseratbench 0.3.0's own MuJoCo adapter cannot build its cable
with the project's mujoco-core 4.0.1. MuJoCo's cable runs in a second environment with
MuJoCo 3.17.0, the last release that has it (scripts/setup_mujoco_cable.sh makes
.venv-mujoco-cable); this file is also the worker that environment runs (--worker), and
imports nothing of cusp's for that reason.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import pathlib
import shlex
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
PEERS = ("mujoco", "pyelastica")
SOLVERS = ("cusp",) + PEERS
COLORS = {"cusp": "C0", "mujoco": "C1", "pyelastica": "C2"}   # the same in every plot
SCALE = "time_step_scale"
MAX_DOUBLINGS = 7          # time_step_scale up to 128
MAX_HALVINGS = 3           # down to 1/8 when the default step diverges
RESOLUTIONS = (5, 10, 20, 40, 80)   # the cantilever's elements
CAPSTAN_BRACKET = (0.9, 0.95, 0.97, 0.98, 1.02)   # capstan overhangs around the threshold (cusp only)
GOAL_TOLERANCE = 0.02      # issue 16: the capstan's threshold within 2 %
CLASSIC_CAPSTAN_ELEMENTS = 50   # bench/capstan_ratio.py's rope (0.26 m): 5 mm elements
CLASSIC_CAPSTAN_FRICTION = 0.3  # cosseratbench's capstan's default
CLASSIC_CAPSTAN_THIN = 1e-4     # m: a thin rope's contact offset from its centre line
CLASSIC_CAPSTAN_ROD_TOLERANCE = 0.01   # against the analytic ratio of the rope as modelled
TRAJECTORY_READ = {f"{e}/default/{s}" for e in ("catenary", "crossing") for s in PEERS}   # runs whose trajectory the report reads


# What the runs of an experiment mean, found by measuring (not regenerated: update
# them when the adapter or the library changes what they describe).
FINDINGS = {
    "pile": (
        "cusp runs the pile with self-contact (the key `self_contact`, disk against disk in the "
        "contact LCP with Coulomb friction: the rope's surface tiled by three disks per element) "
        "and Lemke started from the last step's basis (the key `warm_lemke`, which the adapter "
        "sets on a rope touching itself). The rope lying on the floor keeps 200-250 contacts and "
        "about 2200 LCP variables from step to step, and a cold Lemke a step (about 0.75 n pivots "
        "of O(n^2)) did not reach the end of the feed in any time one would wait; from the "
        "basis, step by step, it does (docs/contact_scaling.md, the pile). None of the three "
        "ropes heaps at this speed: each lies about 1.5 diameters high, a flat coil. "
        "max_rod_overlap (in the data file's observations: 0.41 radii for this run) measures "
        "chords between nodes, and cusp's elements are arcs of constant strain: in an earlier "
        "run (the paper's gap term, without the surface layer: 0.40 radii, elements 11 and 94 at "
        "t = 3.83 s) that was about what the two elements' arcs lie off their chords there "
        "(0.84 and 0.23 mm, from the curvature through neighbouring nodes), and on a saved state "
        "of that run (t = 3.872 s, bench/cosseratbench_pile_overlap.py) the node chords overlapped "
        "0.24 radii, the rope's arcs (20 chords an element) 0.0013 radii. cusp's settling "
        "residual is the largest of the three: the adapter gives a rope with a driven end no "
        "viscosity (its settings' viscosity 0, implicit Euler's own dissipation only), so a "
        "second after the clamp stops the rope still moves, and the other metrics describe a "
        "rope in motion. The plugin's default surface layer (its settings' surface_layer) "
        "neither helps nor costs here: the rope never rests, and the whole pile took 795 s of "
        "CPU with it and without it, with the same solves (docs/contact_scaling.md, session 37)."),
    "catenary": (
        "cosseratbench's reference, the elastic catenary, neglects bending; this cable's "
        "bending stiffness (EI = 4.9e-4 N m^2) makes boundary layers of length sqrt(EI/T), "
        "about 4 cm, at the pins (which carry no moment, so the curvature must fall to zero "
        "there), and the real equilibrium sits 4.8e-4 rod lengths from the reference near "
        "the pins and 3.9e-4 shallower at the middle. cusp's shape_error is that: it does "
        "not change with settling (5 s or 20 s: 4.753e-4, 4.750e-4; settling residual 2.1e-6 "
        "or 1.7e-10), the time step (scale 1/4: 4.753e-4) or elements (25, 50, 100: 4.77e-4, "
        "4.75e-4, 4.74e-4), and the shape error takes the nearest point of the curve, so "
        "which material points are reported does not enter. Against the extensible elastica "
        "WITH bending (`bending_catenary` in bench/cosseratbench_compare.py, scipy's "
        "collocation; the goals' row above), cusp's nodes are 2.7e-6 rod lengths from their "
        "material points (1.6e-6 at 100 elements), PyElastica's 6.6e-5, MuJoCo's cable's "
        "3.2e-3: PyElastica's smaller shape_error comes from under-resolving the boundary "
        "layers (one to two of its 2 cm elements), not from a better equilibrium."),
    "crossing": (
        "cusp runs both ropes in one model, each tiled by three disks per element (one at "
        "each node, two inside, each as thick as their spacing), and the plugin's soft-soft "
        "contact (frictionless here, in the contact LCP) holds them apart. The plugin measures "
        "a contact of disks that tile a rod against the rod's curved tube (between two rods: "
        "the distance of their centrelines at the contact's nearest arc lengths less both "
        "radii), not against the straight disks, whose rims stand kappa h^2 / 2 inside the "
        "rope's surface where two of them meet (0.057 mm on either rope at the crossing, h half "
        "a disk); python/tests/test_tube_contact.py checks that gap against geometry computed "
        "by hand, and this experiment's ropes, run at the adapter's step, one diameter apart at "
        "the crossing to a quarter of that sag and at the reference's heights to half of it. "
        "cosseratbench's lift_error reads the upper rope's node len(nodes) // 2: with the "
        "experiment's odd element count (51, chosen so that no node sits at the crossing) that "
        "is node 26, at arc length 0.5098 of the rope, 9.8 mm past the crossing, and compares "
        "its height with the reference's at the crossing. The reference itself is 0.494 mm "
        "lower at node 26's material point than at the crossing (the rope bends over the lower "
        "one within sqrt(EI/T), about 3 cm), so the exact equilibrium scores a lift_error of "
        "5.45e-3 and no solver can beat that by being right: a smaller lift_error means a node "
        "26 above the equilibrium. The goals' row after the lift_error's compares every "
        "solver's node 26 with the reference at that node's own material point. The time step: "
        "the scenario is quasi-static and frictionless, so only the equilibrium counts, and the "
        "adapter takes 50 steps per period of the slowest mode (40 ms here) -- but the upper "
        "rope starts 1 cm above the lower and falls onto it, and a step must not carry it "
        "further than the plugin's speculative contact margin (5 mm), or it passes through "
        "unseen. The adapter bounds the approach speed by free fall across the widest initial "
        "gap, sqrt(2 g 0.01 m) = 0.44 m/s, so a step of at most 11.3 ms: 10 ms, eight a frame. "
        "The bound is not tight: the sweep's 20 ms completes, and since session 27 so do 40 ms "
        "and the adapter's cap, one step a frame (80 ms): implicit Euler moves a rope at rest by "
        "g dt^2 = 15.7 mm in its first 40 ms step, more than the 10 mm gap, and the plugin's "
        "swept margin now counts that share of the step's travel (gravity's); before, the "
        "contact was not within the margin when the step started, the rope passed through the "
        "other in the first step, and the adapter raised Diverged (docs/cosseratbench_variants.md, "
        "session 27). How "
        "the tiling was chosen, measured with the library before the tube gap (straight-disk "
        "gaps): with two disks per element the upper rope, frictionless, settled 5.2 mm along "
        "the lower one (a straight disk's top is flat, so nothing pulls the rope back to the "
        "middle; lift_error 1.8e-3 but shape_error 5.3e-3); with one per element (node disks "
        "19.6 mm thick) they stayed centred but the coarse creases where the disks meet missed "
        "the lift by 1.7 % (shape_error 1.05e-3). Four per element were not tried."),
    "twist": (
        "cusp runs each rod in a model of its own, its surface tiled by disks with "
        "self-contact on (frictionless). The scenario is quasi-static and frictionless and has "
        "no gravity, so the adapter's step rule leaves the at-rest 50 steps per slowest period, "
        "capped at one frame (50 ms): its bound on an approach's speed is free fall across a "
        "gap, and nothing here falls. Past the critical twist the undamped rods snap into "
        "loops late in the run, their disks whipping at up to 1.5 m/s: at half the step "
        "(25 ms) rod4 closed a 3 cm gap to another of its disks in one step, which a fixed "
        "5 mm contact margin did not see, and diverged at 15.2 s until the plugin's margin "
        "grew with each pair's approach speed (docs/twist.md). The snap does not enter the "
        "metric: it is fitted from the frames before a rod strays 1 cm from its axis."),
    "capstan": (
        "cosseratbench's reference is the heavy-rope capstan of a thin, flexible rope: the "
        "largest heavy-side overhang h2* that holds. cusp's rope is a rod of radius r = 1 mm "
        "on a wrap of radius R = 51 mm (to its centre line) that touches at its surface (the "
        "disks' rims), r inside the centre line; when the wrap slides, that surface moves at "
        "(1 - r/R) of the centre line's speed, so friction holds as with mu (1 - r/R). With "
        "that and the rod's bending stiffness, an elastica reference independent of cusp "
        "(bench/capstan_bending.py, docs/capstan.md) puts this rod's threshold at the t of "
        "the goals' last capstan row, 2.5 % below h2*: the goals check both, the thin rope as "
        "issue 16 asks and t. Each overhang's run starts in cosseratbench's flexible-rope "
        "equilibrium, which a rod with bending stiffness is not in: it settles by slipping a "
        "little, and near the threshold that slip can carry it over (docs/capstan.md, section "
        "3), so holding and sliding at fixed overhangs depend on the start as well as on the "
        "threshold. Loaded slowly from a holding start instead (bench/capstan_ramp.py), cusp's "
        "rope slid at 0.969 (25 elements), 0.973 (50) and 0.982 (100, at twice the loading "
        "rate) of h2* in docs/capstan.md's runs. The friction pyramid is not the cause (4, 8 "
        "and 16 directions slide alike, docs/capstan.md section 1). The step is 1 ms: with "
        "friction, where the rope comes to rest depends on its path, so the adapter resolves "
        "the motion rather than only the equilibrium."),
}


# Why cusp does not run an experiment, beyond the adapter's one-line reason.
# Experiments with no reference (cosseratbench's explorations): compared by what they show,
# not by an error below the peers'.
EXPLORATIONS = ("pile",)


def _log(line: str) -> None:
  print(line, file=sys.stderr, flush=True)


# ---------- the worker: runs tasks through cosseratbench's runner ----------

def worker(spec_path: str) -> int:
  from cosseratbench import registry, runs, variations

  spec = json.loads(pathlib.Path(spec_path).read_text())
  tasks = []
  for t in spec["tasks"]:
    experiment = registry.load_experiment(t["experiment"])
    variant = variations.Variant(parameters=t.get("parameters", {}), n_elements=t.get("n_elements"),
                                 options=t.get("options", {}))
    directory = pathlib.Path(t["directory"])
    experiment.save(directory.parent, variant.parameters, variant.varied, variations.defaults(experiment))
    label = f"{experiment.name:12s} {variant.key:24s} {t['solver']:12s}"
    task = runs.Task(experiment=experiment.name, variant=variant, solver=t["solver"],
                     n_elements=variant.n_elements, directory=directory, label=label)
    try:
      solver = registry.load_solver(t["solver"], **variant.options)
    except ImportError as e:
      _log(f"{label} not installed ({e})")
      continue
    if not spec.get("force") and (summary := runs.saved(task, experiment, solver)) is not None:
      _log(f"{label} {runs.describe(summary)}  [saved]")
      continue
    if not spec.get("force") and (summary := reusable(t.get("reuse"), task, experiment, solver)):
      directory.mkdir(parents=True, exist_ok=True)
      (directory / "result.json").write_text(json.dumps(summary, indent=2) + "\n")
      _log(f"{label} {runs.describe(summary)}  [reused: {spec['reuse_from']}]")
      continue
    tasks.append(task)
  try:
    runs.execute(tasks, jobs=1, report=_log)
  except RuntimeError as e:   # an adapter raised: reported above, its run has no result
    _log(str(e))
  return 0


def reusable(summary, task, experiment, solver):
  """``summary`` (a peer's run from an earlier report's data file) when it is the run
  ``task`` would make: same resolution, frames, options and provenance (scenario,
  adapter code, solver version), the checks of cosseratbench's runs.saved bar the
  trajectory, which the data file does not keep; else None."""
  if not summary:
    return None
  from cosseratbench.provenance import provenance
  scenario = experiment.scenario_for(**task.variant.parameters)
  expected = {
      "n_elements": task.n_elements or experiment.n_elements,
      "n_frames": experiment.n_frames,
      "options": dict(task.variant.options),
      "provenance": provenance(scenario, solver),
  }
  return summary if all(summary.get(k) == v for k, v in expected.items()) else None


# ---------- planning and running ----------

class Runner:
  def __init__(self, out: pathlib.Path, mujoco_python: str | None, force: bool,
               reuse: pathlib.Path | None = None, saved_only: bool = False):
    self.out, self.mujoco_python, self.force = out, mujoco_python, force
    self.saved_only = saved_only   # run nothing: the report from the runs already saved
    self.notes: dict[str, str] = {}
    self.kept: list[str] = []   # experiments whose runs are an earlier report's (keep)
    # the peers' runs of an earlier report (its data file), reused when still valid;
    # never cusp's (the library and adapter under test), nor a run whose trajectory the
    # report reads (TRAJECTORY_READ)
    self.reuse_from = reuse
    self.reuse = json.loads(reuse.read_text()) if reuse else {}

  def directory(self, experiment: str, solver: str, n_elements=None, scale=None,
                parameters=None) -> pathlib.Path:
    varied = dict(parameters or {})
    if n_elements == self.default_elements(experiment):
      n_elements = None   # the experiment's own resolution: the default run
    if n_elements is not None:
      varied["resolution"] = n_elements
    if scale is not None and scale != 1.0:
      varied[SCALE] = scale
    key = ",".join(f"{k}={v:g}" for k, v in sorted(varied.items())) or "default"
    return self.out / experiment / key / solver

  @staticmethod
  def default_elements(experiment: str) -> int:
    from cosseratbench import registry
    return registry.load_experiment(experiment).n_elements

  def run(self, requests: list[tuple]) -> None:
    """Runs (experiment, solver, n_elements, scale[, parameters]) requests, the MuJoCo
    ones in the MuJoCo 3 environment."""
    by_python: dict[str, list[dict]] = {}
    if self.saved_only:
      return
    for experiment, solver, n, scale, *rest in requests:
      parameters = rest[0] if rest else {}
      if n == self.default_elements(experiment):
        n = None
      directory = self.directory(experiment, solver, n, scale, parameters)
      key = str(directory.relative_to(self.out))
      task = {"experiment": experiment, "solver": solver, "n_elements": n, "parameters": parameters,
              "options": {SCALE: scale} if scale not in (None, 1.0) else {},
              "directory": str(directory),
              "reuse": self.reuse.get(key) if solver in PEERS and key not in TRAJECTORY_READ else None}
      python = self.mujoco_python if solver == "mujoco" else sys.executable
      if python is None:
        continue
      by_python.setdefault(python, []).append(task)
    for python, tasks in by_python.items():
      spec = self.out / f".tasks-{os.getpid()}.json"
      spec.write_text(json.dumps({"tasks": tasks, "force": self.force,
                                  "reuse_from": str(self.reuse_from)}))
      if python == sys.executable:
        worker(str(spec))
      else:
        env = dict(os.environ, PYTHONPATH="")
        subprocess.run([python, __file__, "--worker", str(spec)], check=True, env=env)
      spec.unlink()

  def keep(self, experiments: list[str]) -> list[str]:
    """Saves the runs of ``experiments`` kept in the --reuse data file under --out, as
    they are (not checked, not rerun): the report shows them as that earlier run's."""
    if experiments and not self.reuse:
      raise SystemExit("--keep needs --reuse (the data file whose runs are kept)")
    for key, summary in self.reuse.items():
      if key.split("/")[0] in experiments:
        directory = self.out / key
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "result.json").write_text(json.dumps(summary, indent=2) + "\n")
    self.kept = list(experiments)
    return self.kept

  def result(self, experiment, solver, n=None, scale=None, parameters=None) -> dict | None:
    path = self.directory(experiment, solver, n, scale, parameters) / "result.json"
    return json.loads(path.read_text()) if path.exists() else None


def stable_scales(runner: Runner, experiments: list[str], solvers: list[str],
                  max_halvings: int = MAX_HALVINGS) -> dict:
  """For each (experiment, solver): the time_step_scale values tried, doubling from 1
  until a run diverges (or cusp's step reaches a whole frame and stops growing), or
  halving from 1 while it diverges; all experiments and solvers in rounds."""
  tried = {(e, s): [1.0] for e in experiments for s in solvers}
  state = {}
  for key in tried:
    r = runner.result(*key)
    state[key] = "up" if r and r["outcome"] == "completed" else ("down" if r and r["outcome"] == "diverged" else "done")
  for round_ in range(max(MAX_DOUBLINGS, max_halvings)):
    requests = []
    for key, direction in state.items():
      if direction == "done":
        continue
      last = tried[key][-1]
      if (direction == "up" and round_ >= MAX_DOUBLINGS) or (direction == "down" and round_ >= max_halvings):
        state[key] = "done"
        continue
      nxt = last * 2 if direction == "up" else last / 2
      tried[key].append(nxt)
      requests.append((key[0], key[1], None, nxt))
    if not requests:
      break
    _log(f"-- time step sweep, round {round_ + 1}: {len(requests)} runs")
    runner.run(requests)
    for key, direction in state.items():
      if direction == "done" or len(tried[key]) < round_ + 2:
        continue
      r = runner.result(key[0], key[1], None, tried[key][-1])
      previous = runner.result(key[0], key[1], None, tried[key][-2])
      if r is None:
        state[key] = "done"
      elif direction == "up":
        same_step = (previous and r.get("settings", {}).get("time_step") ==
                     previous.get("settings", {}).get("time_step"))
        if r["outcome"] != "completed" or same_step:
          state[key] = "done"
      elif r["outcome"] == "completed":
        state[key] = "done"
  return tried


def largest_stable(runner: Runner, experiment: str, solver: str, scales: list[float]):
  """The largest scale whose run completed with every smaller scale tried completing
  too, and its time step; None when none did."""
  best = None
  for scale in sorted(scales):
    r = runner.result(experiment, solver, None, scale)
    if r is None or r["outcome"] != "completed":
      if best is not None:
        break
      continue
    best = (scale, r["settings"].get("time_step"))
  return best


def halving_scale(runner: Runner, experiment: str) -> float | None:
  """The time_step_scale of the run that checks cusp's default step by halving it, when
  the sweep's doubled run does not (its step is the default's: a step already one frame
  long does not grow): the largest 1/2^k at which the adapter's step is at most half the
  default one; None when the doubled run serves, or the default did not complete."""
  from cosseratbench import registry
  from cusp.cosseratbench_adapter import CuspSolver

  default, doubled = runner.result(experiment, "cusp"), runner.result(experiment, "cusp", None, 2.0)
  if not default or default["outcome"] != "completed":
    return None
  dt = default["settings"]["time_step"]
  if doubled and doubled["outcome"] == "completed" and doubled["settings"]["time_step"] > 1.5 * dt:
    return None
  e = registry.load_experiment(experiment)
  scenario = e.scenario_for()
  for k in range(1, 7):
    if CuspSolver(time_step_scale=2.0 ** -k)._steps(scenario, e.n_frames)[0] <= 0.5 * dt * (1 + 1e-9):
      return 2.0 ** -k
  return None


def step_check(runner: Runner, experiment: str) -> str | None:
  """A sentence comparing cusp's default run with the run at half or double its step
  (halving_scale, or the sweep's scale 2)."""
  from cosseratbench import registry
  default = runner.result(experiment, "cusp")
  if not default or default["outcome"] != "completed":
    return None
  h = halving_scale(runner, experiment)
  other = runner.result(experiment, "cusp", None, h if h is not None else 2.0)
  if not other or other["outcome"] != "completed":
    if not other:
      return f"cusp's step not checked by halving: the run at {'half' if h else 'twice'} its step was not run."
    return (f"cusp's step not checked by halving: the run at {'half' if h else 'twice'} its step, "
            f"{_fmt(other['settings']['time_step'])} s, {other['outcome']}"
            + (f" at {_fmt(other['diverged_at'])} s ({other['failure']})" if other.get("failure") else "") + ".")
  small, large = sorted([default, other], key=lambda r: r["settings"]["time_step"])
  cells = []
  for metric in registry.load_experiment(experiment).metrics:
    a, b = large["metrics"].get(metric), small["metrics"].get(metric)
    if isinstance(a, float) and isinstance(b, float):
      cells.append(f"{metric} {a:.4g} and {b:.4g} (change {_fmt(abs(a - b), 2)})")
  def step(r):
    return f"{_fmt(r['settings']['time_step'])} s" + (" (the default)" if r is default else "")
  return (f"cusp's step checked by halving: at {step(large)} and {step(small)}, " + "; ".join(cells) +
          ". Implicit Euler is first order, so the change estimates the error the larger of the "
          "two steps leaves in each metric.")


# ---------- the report ----------

def _fmt(v, digits=3):
  if v is None:
    return "—"
  if isinstance(v, float):
    if v == 0:
      return "0"
    return f"{v:.{digits}g}" if 1e-3 <= abs(v) < 1e4 else f"{v:.{digits - 1}e}"
  return str(v)


def library_line() -> str:
  """Which libcusp.so the cusp runs used (the adapter's backend_version names its digest)."""
  import cusp
  from cusp.cosseratbench_adapter import CuspSolver
  path = pathlib.Path(cusp.LIBRARY)
  shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
  return f"`{shown}`, {CuspSolver().backend_version}"


def max_sections() -> int:
  from cusp.cosseratbench_adapter import max_sections as most
  return most()


@functools.cache
def thick_rod_capstan() -> float:
  """The capstan's threshold for the rod cusp models (bending stiffness, friction at the
  rod's surface), as a fraction of cosseratbench's thin-rope h2*: bench/capstan_bending.py,
  an independent elastica reference (docs/capstan.md)."""
  sys.path.insert(0, str(REPO / "bench"))
  import capstan_bending
  from cosseratbench import registry
  scenario = registry.load_experiment("capstan").scenario_for()
  mu = max([scenario.rods[0].friction, *(o.friction for o in scenario.obstacles)])
  _, _, wrap, _ = capstan_bending.rope(1.0)
  return capstan_bending.threshold(mu, 1.0, surface=True) / capstan_bending.flexible_threshold(mu, wrap)


def capstan_overhangs() -> tuple[float, float]:
  """The overhangs (fractions of h2*, 4 digits, rounded outwards) at which a rope within
  GOAL_TOLERANCE of the thick-rod threshold must hold and slide."""
  t = thick_rod_capstan()
  return (math.floor((1 - GOAL_TOLERANCE) * t * 1e4) / 1e4, math.ceil((1 + GOAL_TOLERANCE) * t * 1e4) / 1e4)


def capstan_bracket() -> tuple[float, ...]:
  return tuple(sorted(set(CAPSTAN_BRACKET) | set(capstan_overhangs())))


def classic_capstan(runner: Runner) -> dict | None:
  """Issue 16's tension ratio as the capstan equation states it (bench/capstan_ratio.py):
  cosseratbench's rope, weightless, over half of its cylinder, its ends pulled down by
  T1 and k T1; runs at k = (1 -+ GOAL_TOLERANCE) e^(mu pi) with a thin rope's contact
  (0.1 mm off the centre line), and at (1 -+ 1 %) of the analytic ratio of the rope as
  cusp models it (contact at its 1 mm surface). Saved under --out with the
  library's digest, rerun when that changes (never with --saved-only)."""
  sys.path.insert(0, str(REPO / "bench"))
  import capstan_ratio
  from cusp.cosseratbench_adapter import PYRAMID, CuspSolver
  path = runner.out / "classic_capstan" / "default" / "cusp" / "result.json"
  library = CuspSolver().backend_version
  saved = json.loads(path.read_text()) if path.exists() else None
  if runner.saved_only or (saved and saved["library"] == library and not runner.force):
    return saved
  mu, thin = CLASSIC_CAPSTAN_FRICTION, math.exp(CLASSIC_CAPSTAN_FRICTION * math.pi)
  runs = []
  for contact, of, target in (
      (CLASSIC_CAPSTAN_THIN, "e^(mu pi)", thin),
      (capstan_ratio.ROD_RADIUS, "reference", capstan_ratio.reference_ratio(mu, capstan_ratio.ROD_RADIUS))):
    xml = capstan_ratio.scene(CLASSIC_CAPSTAN_ELEMENTS, contact, mu, PYRAMID)
    tolerance = GOAL_TOLERANCE if of == "e^(mu pi)" else CLASSIC_CAPSTAN_ROD_TOLERANCE
    for fraction in (1 - tolerance, 1 + tolerance):
      run = capstan_ratio.rise(xml, fraction * target)
      runs.append({"contact_radius": contact, "of": of, "target": target, "fraction": fraction,
                   "ratio": run["ratio"], "rise_m": run["rise_m"], "slides": bool(run["slides"])})
  result = {"library": library, "elements": CLASSIC_CAPSTAN_ELEMENTS, "friction": mu,
            "wrap_radius": capstan_ratio.WRAP_RADIUS, "light_tension": capstan_ratio.light_tension(),
            "e_mu_pi": thin, "runs": runs}
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_text(json.dumps(result, indent=2) + "\n")
  return result


def classic_capstan_rows(result: dict | None) -> list[tuple[str, str, str]]:
  if result is None:
    return [("capstan tension ratio within 2 % of e^{mu theta} (the classic capstan, "
             "bench/capstan_ratio.py)", "not run", "no")]
  rows = []
  for of, goal in (("e^(mu pi)", "capstan tension ratio within 2 % of e^{mu theta}: cosseratbench's "
                    "rope, weightless, over half its cylinder (theta = pi), pulled down by T1 "
                    "and k T1 at its ends, with a thin rope's contact (0.1 mm off its centre "
                    "line; bench/capstan_ratio.py, docs/capstan.md section 4): holds at k = "
                    "0.98 e^{mu pi} and slides at 1.02 e^{mu pi}"),
                   ("reference", "the same rope with its contact at its 1 mm surface, against "
                    "its analytic ratio (friction's couple at the surface, bending's lift-off: "
                    "bench/capstan_ratio.py), to 1 %: holds at 0.99 and slides at 1.01 of it")):
    runs = [r for r in result["runs"] if r["of"] == of]
    low, high = sorted(runs, key=lambda r: r["fraction"])
    measured = "; ".join(f"k = {r['ratio']:.4f} ({r['fraction']:g} of {of} = {r['target']:.4f}): "
                         f"{'slides' if r['slides'] else 'holds'}, light end rose {_fmt(r['rise_m'])} m"
                         for r in (low, high))
    rows.append((goal, measured, "yes" if not low["slides"] and high["slides"] else "no"))
  return rows


def _library_of(r: dict | None) -> str:
  """The libcusp.so digest a saved cusp run names."""
  version = ((r or {}).get("provenance") or {}).get("solver_version", "")
  found = version.split("sha256:")[-1].split()[0] if "sha256:" in version else None
  return f"sha256:{found}" if found else "unknown"


def _error(r: dict | None, metric: str):
  """A completed run's error (absolute value of the metric), else its outcome."""
  if r is None:
    return "not run"
  if r["outcome"] != "completed":
    return r["outcome"]
  v = r["metrics"].get(metric)
  return abs(v) if v is not None and math.isfinite(v) else "no value"


def bending_catenary(rod, gravity: float, span: float):
  """The catenary scenario's rod as an extensible elastica WITH bending (cosseratbench's
  reference, the elastic catenary, neglects bending): planar Kirchhoff equilibrium
  x' = (1+e) cos th, z' = (1+e) sin th, th' = M/EI, M' = (1+e)(H sin th - Nz cos th),
  Nz = V0 + w s, e = (H cos th + Nz sin th)/EA, pinned at both ends at the same height
  (x, z and M given at both), H and V0 unknown; solved by scipy's collocation from the
  elastic catenary. Shear is left out (its strain, of order EI th''/GA, is below 1e-7
  here). Returns the solution as a function of unstretched arc length: s -> (x, z)."""
  import numpy as np
  from scipy.integrate import solve_bvp
  from cosseratbench.experiments.catenary import reference_curve

  length, radius, modulus = rod.length, rod.radius, rod.material.youngs_modulus
  ea, ei = modulus * rod.area, modulus * math.pi * radius ** 4 / 4
  w = rod.material.density * rod.area * gravity

  def rates(s, y, p):
    x, z, th, m = y
    h, v0 = p
    nz = v0 + w * s
    stretch = 1 + (h * np.cos(th) + nz * np.sin(th)) / ea
    return np.vstack([stretch * np.cos(th), stretch * np.sin(th), m / ei,
                      stretch * (h * np.sin(th) - nz * np.cos(th))])

  def ends(a, b, p):
    return np.array([a[0], a[1], a[3], b[0] - span, b[1], b[3]])

  guess = reference_curve(rod, gravity, span)
  s = np.linspace(0.0, length, len(guess))
  tangent = np.gradient(guess, s, axis=0)
  y0 = np.vstack([guess[:, 0], guess[:, 2], np.arctan2(tangent[:, 2], tangent[:, 0]), np.zeros_like(s)])
  sol = solve_bvp(rates, ends, s, y0, p=[w * length / 2, -w * length / 2], tol=1e-10, max_nodes=200000)
  if sol.status != 0:
    raise RuntimeError(f"the bending catenary did not converge: {sol.message}")
  return lambda at: sol.sol(at)[:2]


def catenary_with_bending(runner: Runner) -> list[str]:
  """Each solver's final catenary against the extensible elastica with bending, and
  cosseratbench's reference (which neglects bending) against it too."""
  import numpy as np
  from cosseratbench import registry
  from cosseratbench.experiments.catenary import reference_curve
  from cosseratbench.metrics import max_distance_to_curve

  scenario = registry.load_experiment("catenary").scenario_for()
  rod = scenario.rods[0]
  gravity = float(np.linalg.norm(scenario.gravity))
  span = rod.centerline[-1][0] - rod.centerline[0][0]
  shape = bending_catenary(rod, gravity, span)
  dense = np.linspace(0.0, rod.length, 20001)
  x, z = shape(dense)
  curve = np.stack([x, np.zeros_like(x), z], axis=1)
  reference = reference_curve(rod, gravity, span)
  cells = [f"reference (no bending) {_fmt(max_distance_to_curve(reference[::4], curve) / rod.length)}"]
  for solver in SOLVERS:
    path = runner.directory("catenary", solver) / "trajectory.npz"
    if not path.exists():
      cells.append(f"{solver} not run")
      continue
    nodes = np.load(path)["rod0"][-1]
    at = np.linspace(0.0, rod.length, len(nodes))   # the nodes at equal unstretched arc length
    same = np.stack([shape(at)[0], np.zeros(len(at)), shape(at)[1]], axis=1)
    cells.append(f"{solver} {_fmt(np.linalg.norm(nodes - same, axis=1).max() / rod.length)}")
  return cells


def crossing_lift_at_nodes(runner: Runner) -> list[str]:
  """Each solver's lift error at the node cosseratbench's lift_error reads (the upper
  rope's node len // 2, which with an odd element count is not at the crossing),
  against the reference at that node's own material point (its unstretched arc length:
  the nodes are at equal ones), in units of the reference lift as lift_error is."""
  import numpy as np
  from cosseratbench import registry
  from cosseratbench.experiments import crossing

  scenario = registry.load_experiment("crossing").scenario_for()
  youngs_modulus, drop = crossing._parameters(scenario)
  arc, _, upper = crossing._shapes(youngs_modulus, drop, 2 * crossing.RADIUS)
  lift = abs(upper[len(upper) // 2][2] + drop - crossing._mid_height(youngs_modulus, 0.0))
  length = scenario.rods[1].length
  cells = []
  for solver in SOLVERS:
    path = runner.directory("crossing", solver) / "trajectory.npz"
    if not path.exists():
      cells.append(f"{solver} not run")
      continue
    nodes = np.load(path)["rod1"][-1]
    k = len(nodes) // 2
    at = k / (len(nodes) - 1) * length
    cells.append(f"{solver} {_fmt(abs(nodes[k][2] - np.interp(at, arc, upper[:, 2])) / lift)}")
  return cells


def goals(runner: Runner, supported) -> list[str]:
  """Issue 16's goals, each checked against the runs of this report."""
  from cosseratbench import registry
  rows = []
  for name in supported:
    if name in EXPLORATIONS:   # no reference: the goal is the run itself
      r = runner.result(name, "cusp")
      rows.append((f"{name}: runs to its end (no reference; cosseratbench's exploration)",
                   f"cusp {r['outcome'] if r else 'not run'}"
                   + (f" in {_fmt(r['wall_time'])} s" if r and r["outcome"] == "completed" else ""),
                   "yes" if r and r["outcome"] == "completed" else "no"))
      continue
    metric = next(iter(registry.load_experiment(name).metrics))
    ours = _error(runner.result(name, "cusp"), metric)
    theirs = {p: _error(runner.result(name, p), metric) for p in PEERS}
    if not isinstance(ours, float):
      met = "no"
    else:
      met = "yes" if all(not isinstance(v, float) or ours < v for v in theirs.values()) else "no"
      if all(v == "not run" for v in theirs.values()):
        met = "no peer ran"
    rows.append((f"{name}: cusp's {metric} below both peers'",
                 f"cusp {_fmt(ours)}; " + "; ".join(f"{p} {_fmt(v)}" for p, v in theirs.items()), met))
  if "catenary" in supported:
    cells = catenary_with_bending(runner)
    ours = float(cells[1].split()[-1]) if cells[1].startswith("cusp ") else math.inf
    peers = [float(c.split()[-1]) for c in cells[2:] if not c.endswith("not run")]
    rows.append(("catenary against the extensible elastica with bending (largest node distance "
                 "at the same material point, in rod lengths; cosseratbench's reference neglects "
                 "bending, and is itself this far from it)", "; ".join(cells),
                 "yes" if peers and all(ours < v for v in peers) else "no"))
  if "cantilever" in supported:
    r = runner.result("cantilever", "cusp")
    e = _error(r, "tip_deflection_error")
    rows.append(("cantilever within 1 % at 20 elements", f"{_fmt(e)}",
                 "yes" if isinstance(e, float) and e < 0.01 else "no"))
    ours, mj = runner.result("cantilever", "cusp", 80), runner.result("cantilever", "mujoco", 80)
    if ours and mj and ours["outcome"] == mj["outcome"] == "completed":
      ratio = mj["wall_time"] / ours["wall_time"]
      rows.append(("80-element cantilever at least 10x faster than MuJoCo's cable",
                   f"cusp {_fmt(ours['wall_time'])} s, MuJoCo {_fmt(mj['wall_time'])} s: {ratio:.0f}x",
                   "yes" if ratio >= 10 else "no"))
  if "twist" in supported:
    r = runner.result("twist", "cusp")
    e = _error(r, "critical_twist_error")
    ok = r is not None and r["outcome"] == "completed" and isinstance(e, float)
    measured = (f"{r['outcome'] if r else 'not run'}: held at 0.96-1.06 of the critical twist for "
                f"{registry.load_experiment('twist').scenario_for().duration:g} s, critical twist error "
                f"{_fmt(e)}")
    h = halving_scale(runner, "twist")
    halved = runner.result("twist", "cusp", None, h) if h is not None else None
    if ok and halved is not None:   # the step's check: does the run survive a smaller step?
      measured += (f"; at {_fmt(halved['settings']['time_step'])} s, half the adapter's step: "
                   f"{halved['outcome']}" + (f" at {_fmt(halved['diverged_at'])} s"
                                             if halved["outcome"] == "diverged" else ""))
      met = "yes" if halved["outcome"] == "completed" else "at the adapter's step only"
    else:
      met = "yes" if ok else "no"
    rows.append(("twist (both ends clamped) past Greenhill's critical twist without diverging",
                 measured, met))
  if "crossing" in supported:   # its second error: the contact force, through the lift
    ours = _error(runner.result("crossing", "cusp"), "lift_error")
    theirs = {p: _error(runner.result("crossing", p), "lift_error") for p in PEERS}
    met = isinstance(ours, float) and all(not isinstance(v, float) or ours < v for v in theirs.values())
    rows.append(("crossing: cusp's lift_error below both peers'",
                 f"cusp {_fmt(ours)}; " + "; ".join(f"{p} {_fmt(v)}" for p, v in theirs.items()),
                 "yes" if met else "no"))
    cells = crossing_lift_at_nodes(runner)
    ours = float(cells[0].split()[-1]) if not cells[0].endswith("not run") else math.inf
    peers = [float(c.split()[-1]) for c in cells[1:] if not c.endswith("not run")]
    rows.append(("crossing: the lift at the node lift_error reads against the reference at that "
                 "node's material point (lift_error compares it with the reference at the "
                 "crossing, 9.8 mm away, where the exact equilibrium is 0.494 mm higher: "
                 "it scores 5.45e-3)", "; ".join(cells),
                 "yes" if peers and all(ours < v for v in peers) else "no"))
  if "capstan" in supported:
    bracket = capstan_bracket()
    runs = {o: runner.result("capstan", "cusp", None, None, {"overhang": o}) for o in bracket}
    if all(r and r["outcome"] == "completed" for r in runs.values()):
      slide = {o: r["metrics"]["slide"] for o, r in runs.items()}
      # m: a rope that holds settles by its stretch (its light end rises < 1 mm); one
      # that slides runs off the cylinder within the 2 s (0.2 m)
      held = {o for o in bracket if slide[o] < 5e-3}
      slid = {o for o in bracket if slide[o] > 5e-2}
      measured = "; ".join(f"slide {_fmt(slide[o])} m at {o:g}" for o in bracket)
      hold, slip = 1 - GOAL_TOLERANCE, 1 + GOAL_TOLERANCE
      rows.append((f"capstan: holds at {hold:g} and slides at {slip:g} of cosseratbench's "
                   "thin-rope threshold h2* (the heavy rope's overhang; the tension ratio as "
                   "the capstan equation states it is the classic capstan's rows below)",
                   measured, "yes" if hold in held and slip in slid else "no"))
      low, high = capstan_overhangs()
      rows.append((f"capstan against the threshold of the rod cusp models, t = "
                   f"{thick_rod_capstan():.4f} h2* (bending and friction at the rod's surface: "
                   f"bench/capstan_bending.py, docs/capstan.md), to 2 %: holds at {low:g} "
                   f"({hold:g} t), slides at {high:g} ({slip:g} t)",
                   f"slide {_fmt(slide[low])} m at {low:g}; slide {_fmt(slide[high])} m at {high:g}",
                   "yes" if low in held and high in slid else "no"))
    else:
      rows.append(("capstan tension ratio within 2 %", "overhang bracket not run (--quick)", "no"))
    rows += classic_capstan_rows(classic_capstan(runner))
  lines = ["## Issue 16's goals", "", "| goal | measured | met |", "|---|---|---|"]
  lines += [f"| {g} | {m} | {ok} |" for g, m, ok in rows]
  return lines + [""]


def cusp_variants(experiments: list[str], vary: list[str]) -> dict:
  """Per experiment, the variants (cosseratbench.variations.Variant) ``vary`` names, the
  default case left out (it is the report's main row); the names an experiment does not
  declare are left out for it."""
  from cosseratbench import registry, variations
  found = {}
  for name in experiments if vary else []:
    experiment = registry.load_experiment(name)
    names = ["all"] if "all" in vary else [v for v in vary if v in variations.sweepable(experiment)]
    if names:
      found[name] = variations.variants(experiment, names)[1:]
  return found


def variant_lines(runner: Runner, varied: dict) -> list[str]:
  """The report's section on cusp's variants: a table per experiment, the default first."""
  from cosseratbench import registry
  lines = ["## cusp on every variant (--vary)", "",
           "One change at a time from the default case, as `cosseratbench run -s cusp -v` makes "
           "them; docs/cosseratbench_variants.md discusses them.", ""]
  for name, variants in varied.items():
    metrics = list(registry.load_experiment(name).metrics)
    lines += [f"### {name}", "",
              "| variant | elements | outcome | " + " | ".join(metrics) + " | time step (s) | wall time (s) |",
              "|---" * (len(metrics) + 5) + "|"]
    rows = [("default", runner.result(name, "cusp"))]
    rows += [(v.key, runner.result(name, "cusp", v.n_elements, v.options.get(SCALE), dict(v.parameters)))
             for v in variants]
    for key, r in rows:
      if r is None:
        lines.append(f"| {key} | | not run |" + " |" * (len(metrics) + 2))
        continue
      outcome = r["outcome"] if r["outcome"] != "diverged" else f"diverged at {_fmt(r.get('diverged_at'))} s"
      cells = [_fmt(r["metrics"].get(m)) if r.get("metrics") else "—" for m in metrics]
      step = (r.get("settings") or {}).get("time_step")
      lines.append(f"| {key} | {r['n_elements']} | {outcome} | " + " | ".join(cells)
                   + f" | {_fmt(step)} | {_fmt(r.get('wall_time'))} |")
    lines.append("")
  return lines


def write_report(runner: Runner, docs: pathlib.Path, report_name: str, note: str | None, experiments, supported, sweeps, command,
                 varied=None):
  import matplotlib
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  import matplotlib.ticker
  from cosseratbench import registry

  (docs / "img").mkdir(parents=True, exist_ok=True)
  (docs / "data").mkdir(parents=True, exist_ok=True)
  everything = {}
  lines = [
      "# cusp on cosseratbench",
      "",
      "<!-- Generated by bench/cosseratbench_compare.py: do not edit; rerun it. -->",
      "",
      "[cosseratbench](https://pypi.org/project/cosseratbench) 0.3.0's experiments, scored by its own",
      "metrics against its own references, for cusp (`cusp.cosseratbench_adapter.CuspSolver`, the",
      "`cusp` entry point), MuJoCo's cable (cosseratbench's adapter, MuJoCo 3.17.0: MuJoCo 4 removed",
      "the cable) and PyElastica 1.0.0 (cosseratbench's adapter). Made with",
      "",
      f"    {command}",
      "",
      "on this machine (2 cores shared with other jobs: wall times are indicative; each",
      "solver's runs were timed one at a time, after a warm-up run; a run saved by an earlier",
      "invocation with the same scenario, library and adapter is reused, not rerun; with",
      "`--reuse`, so is a peer's run kept in an earlier report's data file whose resolution,",
      "options and provenance -- scenario, adapter code, solver version -- are the same: its",
      "wall time is that earlier run's, on a machine then less loaded; cusp's runs are always",
      "this invocation's, but for an experiment named by `--keep`, whose runs are that data",
      "file's as they are, not rerun, and whose rows say so).",
      "",
      f"cusp: {library_line()}.",
      "",
      *([note, ""] if note else []),
      "## Which experiments cusp runs",
      "",
      "| experiment | cusp | why |",
      "|---|---|---|",
  ]
  for name in experiments:
    r = runner.result(name, "cusp")
    why = "; ".join(r["missing"]) if r and r["missing"] else (r["failure"] or "") if r else "no result"
    if name in runner.kept:
      why = f"(kept from {runner.reuse_from}, an earlier run of library {_library_of(r)}; not rerun) {why}"
    lines.append(f"| {name} | {r['outcome'] if r else 'crashed'} | {why} |")
  lines += ["", *goals(runner, supported)]
  lines += ["## Results at each experiment's default resolution", "",
            "Metrics are cosseratbench's (relative errors unless named otherwise). "
            "Largest stable step: the largest `time_step_scale` (doubling from 1; the adapters' "
            "own step at 1) whose run completed with every smaller one completing too, and its "
            "time step; cusp's step stops growing at one frame interval, so its sweep stops there "
            "without having diverged.", ""]
  for name in supported:
    experiment = registry.load_experiment(name)
    metrics = list(experiment.metrics)
    lines += [f"### {name}", "", experiment.description, "",
              *([FINDINGS[name], ""] if name in FINDINGS else []),
              "| solver | elements | outcome | " + " | ".join(metrics) +
              " | wall time (s) | time step (s) | largest stable step (scale: step) | diverged at (s) |",
              "|---" * (7 + len(metrics)) + "|"]
    for solver in SOLVERS:
      r = runner.result(name, solver)
      if r is None:
        note = runner.notes.get(solver, "not run")
        lines.append(f"| {solver} | — | {note} |" + " |" * (len(metrics) + 4))
        continue
      stable = largest_stable(runner, name, solver, sweeps.get((name, solver), [1.0]))
      tried = max(sweeps.get((name, solver), [1.0]))
      stable_text = "none" if stable is None else f"{_fmt(stable[0])}: {_fmt(stable[1])}"
      if stable is not None and stable[0] == tried:
        stable_text += f" (largest tried)"
      missing = [x for x in sweeps.get((name, solver), [1.0]) if runner.result(name, solver, None, x) is None]
      if missing:
        stable_text += f" (sweep cut short: scale {_fmt(min(missing))} not run)"
      lines.append(
          f"| {solver} | {r['n_elements']} | {r['outcome']}"
          f"{': ' + r['failure'] if r['failure'] else ''} | "
          + " | ".join(_fmt(r["metrics"].get(k)) for k in metrics)
          + f" | {_fmt(r['wall_time'])} | {_fmt(r['settings'].get('time_step'))} | {stable_text} | "
          f"{_fmt(r['diverged_at'])} |")
    lines.append("")
    cusp = runner.result(name, "cusp")
    if cusp and cusp.get("settings"):
      lines += ["cusp's settings: `" + json.dumps(cusp["settings"]) + "`", ""]
    if (check := step_check(runner, name)) is not None:
      lines += [check, ""]

  # the cantilever over resolutions
  if "cantilever" in supported:
    lines += ["## The cantilever over resolutions", "",
              "Tip deflection error against Euler-Bernoulli, and wall time, per element count. cusp "
              f"gives a rod one section of constant strain per element (up to {max_sections()}, "
              "the plugin's `sections` limit, beyond which it keeps that many sections and "
              "samples the nodes on them).", "",
              "| elements | " + " | ".join(f"{s} error | {s} wall (s)" for s in SOLVERS) + " |",
              "|---" * (1 + 2 * len(SOLVERS)) + "|"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for solver in SOLVERS:
      xs, errs, walls = [], [], []
      for n in RESOLUTIONS:
        r = runner.result("cantilever", solver, n)
        if r and r["outcome"] == "completed":
          xs.append(n)
          errs.append(r["metrics"]["tip_deflection_error"])
          walls.append(r["wall_time"])
      if xs:
        ax1.loglog(xs, errs, "o-", label=solver, color=COLORS[solver])
        ax2.loglog(xs, walls, "o-", label=solver, color=COLORS[solver])
    for n in RESOLUTIONS:
      cells = []
      for solver in SOLVERS:
        r = runner.result("cantilever", solver, n)
        if r is None:
          cells += ["not run", "—"]
        elif r["outcome"] != "completed":
          cells += [r["outcome"], "—"]
        else:
          cells += [_fmt(r["metrics"]["tip_deflection_error"]), _fmt(r["wall_time"])]
      lines.append(f"| {n} | " + " | ".join(cells) + " |")
    ax1.axhline(0.01, color="grey", lw=0.8, ls="--")
    ax1.set(xlabel="elements", ylabel="tip deflection error", title="cantilever: error")
    ax2.set(xlabel="elements", ylabel="wall time (s)", title="cantilever: wall time")
    for ax in (ax1, ax2):
      ax.set_xticks(RESOLUTIONS, [str(n) for n in RESOLUTIONS])
      ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
      ax.grid(True, which="both", alpha=0.3)
      ax.legend()
    fig.tight_layout()
    fig.savefig(docs / "img" / f"{report_name}_cantilever.png", dpi=110)
    plt.close(fig)
    lines += ["", f"![the cantilever over resolutions](img/{report_name}_cantilever.png)", ""]

  # error against the time step, per experiment
  if supported:
    fig, axes = plt.subplots(1, len(supported), figsize=(5 * len(supported), 4), squeeze=False)
    for ax, name in zip(axes[0], supported):
      experiment = registry.load_experiment(name)
      metric = next(iter(experiment.metrics))
      for solver in SOLVERS:
        done, broken = [], []
        for scale in sorted(sweeps.get((name, solver), [])):
          r = runner.result(name, solver, None, scale)
          if r is None:
            continue
          dt = r["settings"].get("time_step")
          if r["outcome"] == "completed":
            done.append((dt, r["metrics"].get(metric)))
          elif r["outcome"] == "diverged":
            broken.append(dt)
        if done:
          line, = ax.loglog(*zip(*done), "o-", label=solver, color=COLORS[solver])
          for dt in broken:
            ax.axvline(dt, color=line.get_color(), ls=":", lw=1)
            ax.plot([dt], [done[-1][1]], "x", color=line.get_color(), ms=9)
      ax.set(xlabel="time step (s)", ylabel=metric, title=f"{name}: {metric} vs step (x: diverged)")
      ax.grid(True, which="both", alpha=0.3)
      ax.legend()
    fig.tight_layout()
    fig.savefig(docs / "img" / f"{report_name}_timestep.png", dpi=110)
    plt.close(fig)
    lines += ["## Error and stability against the time step", "",
              "Each solver's run at `time_step_scale` 1, 2, 4, ... (halved instead when 1 diverges, "
              "as often as `--max-halvings` allows); "
              "an x and a dotted line mark a step that diverged.", "",
              f"![error against the time step](img/{report_name}_timestep.png)", ""]

  if varied:
    lines += variant_lines(runner, varied)

  for path in sorted(runner.out.glob("*/*/*/result.json")):
    everything[str(path.relative_to(runner.out).parent)] = json.loads(path.read_text())
  (docs / "data" / f"{report_name}.json").write_text(json.dumps(everything, indent=1, sort_keys=True) + "\n")
  lines += [f"Every run's summary (metrics, settings, provenance): [data/{report_name}.json](data/{report_name}.json).", ""]
  (docs / f"{report_name}.md").write_text("\n".join(lines))


def main() -> int:
  if len(sys.argv) == 3 and sys.argv[1] == "--worker":
    return worker(sys.argv[2])
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "cosseratbench")
  parser.add_argument("--docs", type=pathlib.Path, default=REPO / "docs")
  default_mujoco = REPO / ".venv-mujoco-cable" / "bin" / "python"
  parser.add_argument("--mujoco-python", default=str(default_mujoco) if default_mujoco.exists() else None,
                      help="a Python with MuJoCo 3.x (the cable plugin) and cosseratbench "
                           "(scripts/setup_mujoco_cable.sh); default .venv-mujoco-cable if present")
  parser.add_argument("--experiments", nargs="*", help="default: every registered one")
  parser.add_argument("--quick", action="store_true", help="defaults only: no time step or resolution sweep")
  parser.add_argument("--force", action="store_true", help="rerun saved runs")
  parser.add_argument("--reuse", type=pathlib.Path,
                      help="an earlier report's data file (docs/data/NAME.json): the peers' runs in "
                           "it are reused where their resolution, options and provenance (scenario, "
                           "adapter code, solver version) are what this run would make; cusp's never")
  parser.add_argument("--max-halvings", type=int, default=MAX_HALVINGS,
                      help="halvings of time_step_scale tried when the default step diverges "
                           "(each doubles the run's cost: MuJoCo's twist diverges at 1)")
  parser.add_argument("--saved-only", action="store_true",
                      help="run nothing: write the report from the runs saved in --out (a sweep "
                           "cut short says so in its table)")
  parser.add_argument("--keep", nargs="*", default=[],
                      help="experiments not run by this invocation: their runs (cusp's and the "
                           "peers') are the --reuse data file's, as they are, and the report says so")
  parser.add_argument("--vary", nargs="*", default=[],
                      help="also run cusp on each other value of these parameters or solver options, "
                           "one at a time, as `cosseratbench run -v` does ('all': every one the "
                           "experiment declares, the resolution and time_step_scale), and report them")
  parser.add_argument("--note", help="a paragraph for the top of the report (where its library came from)")
  parser.add_argument("--name", default="cosseratbench", help="of the report: DOCS/NAME.md, DOCS/img/NAME_*.png, DOCS/data/NAME.json")
  args = parser.parse_args()

  from cosseratbench import registry
  args.out.mkdir(parents=True, exist_ok=True)
  runner = Runner(args.out, args.mujoco_python, args.force, args.reuse, args.saved_only)
  if args.mujoco_python is None:
    runner.notes["mujoco"] = ("not run: MuJoCo 4 has no cable plugin; give --mujoco-python "
                              "(scripts/setup_mujoco_cable.sh)")
  experiments = args.experiments or registry.names(registry.EXPERIMENTS)
  kept = runner.keep(args.keep)

  _log(f"-- cusp on {len(experiments)} experiments")
  runner.run([(e, "cusp", None, None) for e in experiments if e not in kept])
  supported = [e for e in experiments
               if (r := runner.result(e, "cusp")) is not None and r["outcome"] != "unsupported"]
  _log(f"-- cusp supports {supported}; the peers on them")
  reported = supported   # kept experiments too: their rows are the data file's, and say so
  supported = [e for e in supported if e not in kept]   # a kept experiment's rows are not this run's
  runner.run([(e, s, None, None) for e in supported for s in PEERS])
  sweeps = {(e, s): [1.0] for e in supported for s in SOLVERS}
  if kept:   # the kept experiments' sweeps as the data file has them: read, never run
    saved_only, runner.saved_only = runner.saved_only, True
    sweeps.update(stable_scales(runner, [e for e in reported if e in kept], list(SOLVERS), args.max_halvings))
    runner.saved_only = saved_only
  if not args.quick:
    if "cantilever" in supported:
      _log("-- the cantilever over resolutions")
      runner.run([("cantilever", s, n, None) for n in RESOLUTIONS for s in SOLVERS])
    if "capstan" in supported:
      _log("-- cusp's capstan around the threshold")
      runner.run([("capstan", "cusp", None, None, {"overhang": o}) for o in capstan_bracket()])
    _log("-- time step sweep")
    sweeps.update(stable_scales(runner, supported, list(SOLVERS), args.max_halvings))
    _log("-- cusp's step checked by halving where the sweep did not double it")
    runner.run([(e, "cusp", None, h) for e in supported if (h := halving_scale(runner, e)) is not None])
  varied = cusp_variants(supported, args.vary)
  if varied:
    _log("-- cusp on the variants (--vary)")
    runner.run([(e, "cusp", v.n_elements, v.options.get(SCALE), dict(v.parameters))
                for e, vs in varied.items() for v in vs])
  command = " ".join(shlex.quote(a) for a in
                     [".venv/bin/python", "bench/cosseratbench_compare.py", *sys.argv[1:]])
  write_report(runner, args.docs, args.name, args.note, experiments, reported, sweeps, command, varied)
  _log(f"-- wrote {args.docs / (args.name + '.md')}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
