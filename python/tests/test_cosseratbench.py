"""cusp as a cosseratbench solver (python/cusp/cosseratbench_adapter.py), judged by
cosseratbench's own experiments and references: the entry point, a short cantilever
against Euler-Bernoulli (through cosseratbench.run, its metric), the start
conditions against rigid-body mechanics, a rod resting on a rod against a propped
cantilever, Diverged and NotImplementedError.

cosseratbench and its dependencies are pinned in python/requirements.txt; without
them (an environment not rebuilt by scripts/setup.sh) these tests fail on import."""
import importlib.metadata
import math
import pathlib

import numpy as np
import pytest

import cosseratbench
from cosseratbench import registry
from cosseratbench.experiments import cantilever
from cosseratbench.scenario import Cylinder, EndCondition, Material, Motion, PointLoad, Rod, Scenario

import cusp
from cusp.cosseratbench_adapter import CuspSolver


def test_entry_point_resolves_to_the_adapter():
  found = importlib.metadata.entry_points(group="cosseratbench.solvers", name="cusp")
  assert found, "no cosseratbench.solvers entry point 'cusp': run scripts/setup.sh (pip install -e python)"
  assert next(iter(found)).load() is CuspSolver
  solver = registry.load_solver("cusp", time_step_scale=2.0)   # how cosseratbench makes it
  assert isinstance(solver, cosseratbench.Solver)
  assert solver.time_step_scale == 2.0
  assert "MuJoCo" in solver.backend_version


def _cantilever_error(n_elements):
  result = cosseratbench.run(cantilever.cantilever, CuspSolver(), n_elements=n_elements)
  assert result.outcome == "completed", result.failure or result.missing
  assert result.settings["sections"] == n_elements and result.settings["time_step"] > 0
  assert result.metrics["settling_residual"] < 1e-3   # at rest: the answer is the equilibrium
  return result.metrics["tip_deflection_error"]


def test_cantilever_against_euler_bernoulli():
  """The tip deflection F L^3 / 3EI, scored by cosseratbench. A rod of n sections of
  constant curvature, each its section's mean of the exact linear curvature, misses
  the tip deflection by exactly 1/(4 n^2) of it (the curvature's linear part
  integrated against the lever arm): 1.56 % at 4 sections, 0.39 % at 8. A wrong
  stiffness (EI), load point or clamp breaks both the bound and the order."""
  e4, e8 = _cantilever_error(4), _cantilever_error(8)
  assert abs(e4 - 1 / 64) < 0.1 / 64, e4
  assert abs(e8 - 1 / 256) < 0.1 / 256, e8
  assert 3.6 < e4 / e8 < 4.4   # second order in the element length


def _rod(**changes):
  base = dict(centerline=((0.0, 0.0, 0.0), (0.5, 0.0, 0.0)), radius=0.01,
              material=Material(1e8, 1e8 / 3, 1000.0), normal=(0.0, 0.0, 1.0))
  base.update(changes)
  return Rod(**base)


def test_first_frame_is_the_scenarios_nodes_and_directors():
  """Trajectory contract: at t = 0 the nodes are Rod.nodes and the directors Rod.directors."""
  d = np.array([1.0, -2.0, 0.5])
  rod = _rod(centerline=((0.1, 0.2, 0.3), tuple(np.array([0.1, 0.2, 0.3]) + 0.5 * d / np.linalg.norm(d))),
             normal=(0.3, 0.4, 1.0), start=EndCondition.CLAMPED)
  traj = CuspSolver().run(Scenario(rods=(rod,), duration=0.002), n_elements=5, n_frames=2)
  np.testing.assert_allclose(traj.positions[0][0], rod.nodes(5), atol=1e-12)
  np.testing.assert_allclose(traj.directors[0][0], rod.directors(5), atol=1e-12)


def test_a_long_run_reports_its_progress_on_stderr(monkeypatch, capsys):
  """A run reports where it is on stderr (every frame when the interval is 0), never on
  stdout, with the simulated time reaching the scenario's duration at the last frame."""
  import cusp.cosseratbench_adapter as adapter
  monkeypatch.setattr(adapter, "PROGRESS_EVERY", 0.0)
  rod = _rod(start=EndCondition.CLAMPED)
  CuspSolver().run(Scenario(rods=(rod,), duration=0.004, gravity=(0.0, 0.0, -9.81)), n_elements=4, n_frames=3)
  out, err = capsys.readouterr()
  lines = [line for line in err.splitlines() if line.startswith("cusp: rod0: t = ")]
  assert out == "" and len(lines) == 2, err
  assert "t = 0.004 of 0.004 s (frame 2 of 2)" in lines[-1], lines[-1]


def _swing_period(x, t):
  """Mean period from the upward zero crossings of x(t)."""
  up = np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0))
  crossings = t[up] - x[up] * (t[up + 1] - t[up]) / (x[up + 1] - x[up])
  assert len(crossings) >= 2, "fewer than two swings"
  return float(np.mean(np.diff(crossings)))


def test_pinned_start_swings_as_a_rigid_rod_pendulum():
  """A stiff rod on a pinned start (a ball-joint mount) is a compound pendulum:
  T = 2 pi sqrt(2L / 3g) (1 + theta0^2 / 16) for a uniform rod pinned at its end."""
  length, theta0, g = 0.5, math.radians(8.0), 9.81
  tip = (length * math.sin(theta0), 0.0, -length * math.cos(theta0))
  rod = _rod(centerline=((0.0, 0.0, 0.0), tip), normal=(0.0, 1.0, 0.0), start=EndCondition.PINNED)
  scenario = Scenario(rods=(rod,), duration=2.5, gravity=(0.0, 0.0, -g))
  traj = CuspSolver().run(scenario, n_elements=4, n_frames=501)
  expected = 2 * math.pi * math.sqrt(2 * length / (3 * g)) * (1 + theta0**2 / 16)
  period = _swing_period(traj.positions[0][:, -1, 0], traj.times)
  assert abs(period / expected - 1) < 5e-3, (period, expected)
  np.testing.assert_allclose(traj.positions[0][:, 0], 0.0, atol=1e-6)   # the pin holds


def test_free_start_moves_with_momentum():
  """A free rod (free-joint mount) pushed at its tip along its axis in zero gravity:
  its centre of mass moves as F t^2 / 2M, M the rod's mass plus the light mount's."""
  force, duration = 0.05, 0.2
  rod = _rod(start=EndCondition.FREE, loads=(PointLoad(force=(force, 0.0, 0.0)),))
  traj = CuspSolver().run(Scenario(rods=(rod,), duration=duration), n_elements=4, n_frames=3)
  mass = rod.material.density * rod.area * rod.length * (1 + 1e-2 / 4)
  nodes = traj.positions[0][-1]
  weights = np.r_[0.5, np.ones(len(nodes) - 2), 0.5] / (len(nodes) - 1)   # the uniform rod's mean
  com = weights @ nodes - weights @ traj.positions[0][0]
  expected = force * duration**2 / (2 * mass)
  assert abs(com[0] / expected - 1) < 2e-2, (com, expected)
  assert abs(com[1]) < 1e-9 and abs(com[2]) < 1e-9


def test_driven_start_follows_its_motion():
  """A driven clamped start (a mocap mount moved every step) is where the Motion puts
  it, position and orientation (the first element's director turned by the motion's
  rotation), at every frame."""
  motion = Motion(times=(0.0, 0.5, 1.0), displacement=((0, 0, 0), (0.05, 0, 0.02), (0.1, 0, 0)),
                  rotation=((0, 0, 0), (0, 0, 0.2), (0, 0, 0.4)))
  rod = _rod(start=EndCondition.CLAMPED, start_motion=motion)
  traj = CuspSolver().run(Scenario(rods=(rod,), duration=1.2), n_elements=4, n_frames=13)
  d1 = rod.directors(4)[0]
  for k, t in enumerate(traj.times):
    displacement, rotation = motion.pose(t)
    np.testing.assert_allclose(traj.positions[0][k, 0], rod.nodes(4)[0] + displacement, atol=1e-9)
    np.testing.assert_allclose(traj.directors[0][k, 0], rotation @ d1, atol=1e-3)


def test_a_blown_up_rod_raises_diverged_with_the_time():
  """A load no rod survives (1e200 N) makes the soft step non-finite: the plugin keeps
  its last state and says so; the adapter raises cosseratbench's Diverged."""
  rod = _rod(start=EndCondition.CLAMPED, loads=(PointLoad(force=(0.0, 0.0, -1e200)),))
  with pytest.raises(cosseratbench.Diverged) as caught:
    CuspSolver().run(Scenario(rods=(rod,), duration=0.01), n_elements=3, n_frames=3)
  assert caught.value.time is not None and 0 < caught.value.time <= 0.01
  assert "non-finite" in str(caught.value)
  result = cosseratbench.run(cosseratbench.Experiment(
      "blowup", "", lambda: Scenario(rods=(rod,), duration=1.0), metrics={}), CuspSolver(), n_elements=3)
  assert result.outcome == "diverged" and result.diverged_at is not None


def test_what_cusp_cannot_model_is_unsupported():
  """One Coulomb coefficient per rod: obstacles of different friction, and rods of
  different friction that can touch each other (a soft-soft contact takes one rod's
  coefficient), are refused (NotImplementedError, recorded by cosseratbench as
  unsupported, not failed). Every experiment's requirements are declared."""
  rod = _rod(start=EndCondition.CLAMPED)
  scenario = Scenario(rods=(rod,), duration=0.01, obstacles=(
      Cylinder((0.2, 0.0, -0.1), (0.0, 1.0, 0.0), 0.05, 0.2, friction=0.2),
      Cylinder((0.4, 0.0, -0.1), (0.0, 1.0, 0.0), 0.05, 0.2, friction=0.6)))
  with pytest.raises(NotImplementedError, match="different friction"):
    CuspSolver().run(scenario, n_elements=3, n_frames=2)
  result = cosseratbench.run(cosseratbench.Experiment("two_frictions", "", lambda: scenario, metrics={}),
                             CuspSolver(), n_elements=3)
  assert result.outcome == "unsupported" and "different friction" in result.missing[0]
  crossed = _rod(centerline=((0.25, -0.25, 0.03), (0.25, 0.25, 0.03)), friction=0.4)
  with pytest.raises(NotImplementedError, match="rods of different friction"):
    CuspSolver().run(Scenario(rods=(rod, crossed), duration=0.01), n_elements=3, n_frames=2)
  for name in registry.names(registry.EXPERIMENTS):
    assert not registry.load_experiment(name).requires - CuspSolver.capabilities, name


def test_scene_follows_the_scenario(tmp_path):
  """The generated scene: every strain, the material, one disk per node, gravity,
  a cylinder geom; a pinned start on a ball joint. A rod that can touch itself has
  three disks per element as thick as their spacing (a tube without gaps) and the keys
  self_contact and warm_lemke; rods starting near each other share a model, far apart they do not."""
  rod = _rod(start=EndCondition.PINNED, friction=0.3)
  scenario = Scenario(rods=(rod,), duration=1.0, gravity=(0.0, 0.0, -9.81), self_contact=False,
                      obstacles=(Cylinder((0.2, 0.0, -0.1), (0.0, 1.0, 0.0), 0.05, 0.2, friction=0.1),))
  xml, drive = CuspSolver().scene(scenario, n_elements=6, n_frames=11)
  for key, value in (("strains", "kx ky kz ex ey ez"), ("sections", "6"), ("disks", "0"),
                     ("young", "100000000.0"), ("radius", "0.01"), ("friction", "0.3"),
                     ("self_contact", "0"), ("pyramid", "8"), ("warm_lemke", "0")):
    assert f'<config key="{key}" value="{value}"/>' in xml, key
  assert '<joint type="ball"/>' in xml and 'type="cylinder"' in xml and "-9.81" in xml
  assert drive == []
  settings = CuspSolver().settings(scenario, n_elements=6, n_frames=11)
  assert settings["disks"] == [7] and settings["contact"]["model"] == "lcp"
  # the contact parameters the settings report are the ones the scene runs with: a live
  # key read back from the running scene, the others the key table's cosserat default
  # (docs/keys.md, which the loader_keys test holds to the table), as the scene leaves them
  path = tmp_path / "scene.xml"
  path.write_text(xml)
  m = cusp.load(str(path))
  assert float(cusp.get(m, cusp.make_data(m), 0, "stabilization")) == settings["contact"]["stabilization"]
  for key in ("push_speed", "surface_layer"):
    assert f'key="{key}"' not in xml, key
    assert float(_cosserat_default(key)) == settings["contact"][key], key

  touching = Scenario(rods=(_rod(),), duration=1.0, self_contact=True)
  xml, _ = CuspSolver().scene(touching, n_elements=6, n_frames=11)
  for key, value in (("disks", "2"), ("self_contact", "1"), ("pyramid", "3"), ("warm_lemke", "1")):
    assert f'<config key="{key}" value="{value}"/>' in xml, key
  thickness = float(xml.split('key="disk_thickness" value="')[1].split('"')[0])
  assert abs(thickness / (0.5 / 18) - 1) < 1e-6
  assert CuspSolver().settings(touching, n_elements=6, n_frames=11)["disks"] == [19]
  assert CuspSolver().settings(touching, n_elements=6, n_frames=11)["warm_lemke"] == [True]

  near = _rod(centerline=((0.25, -0.25, 0.05), (0.25, 0.25, 0.05)))   # 3 cm over the first
  far = _rod(centerline=((0.25, -0.25, 0.2), (0.25, 0.25, 0.2)))      # 18 cm over it
  assert CuspSolver.groups(Scenario(rods=(_rod(), near, far), duration=1.0)) == [[0, 1], [2]]


def _cosserat_default(key):
  """A key's cosserat default as docs/keys.md's table gives it."""
  keys_md = pathlib.Path(__file__).resolve().parents[2] / "docs" / "keys.md"
  for line in keys_md.read_text().splitlines():
    cells = [c.strip() for c in line.split("|")]
    if len(cells) > 6 and cells[1] == f"`{key}`":
      return cells[5].strip("`")
  raise KeyError(key)


def _propped_cantilever():
  """A cantilever (clamped at its start, along y) whose free tip rests on the middle of
  a beam clamped at both ends (along x), just touching it at the start."""
  r, length, span = 0.005, 0.2, 0.2
  material = Material(1e8, 1e8 / 3, 1000.0)
  upper = Rod(centerline=((0.0, -length, 2 * r), (0.0, 0.0, 2 * r)), radius=r, material=material,
              start=EndCondition.CLAMPED)
  lower = Rod(centerline=((-span / 2, 0.0, 0.0), (span / 2, 0.0, 0.0)), radius=r, material=material,
              start=EndCondition.CLAMPED, end=EndCondition.CLAMPED)
  return upper, lower


def test_a_rod_resting_on_a_rod_carries_the_propped_cantilevers_reaction():
  """Rod-rod contact through the adapter (the two rods in one model, disk against disk
  in the contact LCP). A cantilever of weight w per length whose tip rests on the
  middle of a beam clamped at both ends: Euler-Bernoulli gives the prop's force
  R = (w L^4 / 8EI - s) / (L^3 / 3EI + c), c = l^3 / 192 EI the beam's compliance at
  its middle and s = w l^4 / 384 EI its sag under its own weight (3wL/8 = 1.04 R on a
  rigid prop). The force the cantilever feels is read from its tip, sunk by
  w L^4 / 8EI - R L^3 / 3EI: within 1 % of R (a contact that carried the whole tip
  would hold it at 0, none let it sink three times as far). The tip rests on the beam,
  one diameter above its axis, neither through it nor hovering (within 2 % of the
  radius), and the beam sinks under it more than under its own weight."""
  upper, lower = _propped_cantilever()
  scenario = Scenario(rods=(lower, upper), duration=1.5, gravity=(0.0, 0.0, -9.81),
                      quasi_static=True, self_contact=False)
  n = 11
  traj = CuspSolver().run(scenario, n_elements=n, n_frames=4)
  r, inertia = upper.radius, upper.second_moment_of_area
  w = upper.material.density * upper.area * 9.81
  bending = upper.material.youngs_modulus * inertia
  compliance = lower.length**3 / (192 * bending)
  sag = w * lower.length**4 / (384 * bending)
  reaction = (w * upper.length**4 / (8 * bending) - sag) / (upper.length**3 / (3 * bending) + compliance)
  beam, cantilever = traj.positions[0][-1], traj.positions[1][-1]
  sink = 2 * r - cantilever[-1, 2]
  measured = (w * upper.length**4 / (8 * bending) - sink) / (upper.length**3 / (3 * bending))
  assert abs(measured / reaction - 1) < 1e-2, (measured, reaction, 3 * w * upper.length / 8)
  # No node at the middle (odd elements): a + c x^2 through the four nearest nodes.
  near = np.argsort(np.abs(beam[:, 0]))[:4]
  middle = np.polyfit(beam[near, 0] ** 2, beam[near, 2], 1)[1]
  assert abs(cantilever[-1, 2] - middle - 2 * r) < 2e-2 * r, (cantilever[-1], middle)
  assert -middle > 1.3 * sag, (middle, sag, compliance * reaction)


# cusp's crossing at the adapter's own step (time_step_scale 1, 10 ms), as
# docs/cosseratbench.md reports it (library of commit ea135f1; session 27's change of the
# swept margin and session 28's soft-soft contact on moving mounts leave both to three digits).
CROSSING_AT_ITS_STEP = {"shape_error": 2.48e-4, "lift_error": 5.14e-3}


def test_crossing_at_four_times_its_step_settles_as_at_its_step():
  """cosseratbench's crossing at time_step_scale 4 (40 ms): the upper rope starts at rest
  1 cm above the lower one, and implicit Euler carries it g dt^2 = 15.7 mm in its first
  step. The plugin's swept margin must foresee that (gravity's share of the step's
  travel): with the approach speed at the step's start alone (0) the lower rope was not
  looked for, the upper one passed through it in that step and the run diverged. It
  completes, and settles where the 10 ms run does: shape_error and lift_error within
  5 % of that run's, at rest (settling_residual below 1e-4 rope lengths per second).
  Measured since the ropes' pinned starts (ball-jointed mounts) take part in their
  soft-soft contact (session 28): 2.9 % and 2.5 %, the two runs' final centrelines at
  most 65 um apart (6.5e-5 rope lengths; the contact is frictionless, so the crossing
  slides along both ropes and settles slowly), where scales 0.5 to 3 agree with the 10 ms
  run to 0.3 %; a rope lying elsewhere on the other is off by far more: the tilings tried
  before the tube gap scored a shape_error 4 and 21 times this one."""
  experiment = registry.load_experiment("crossing")
  result = cosseratbench.run(experiment, CuspSolver(time_step_scale=4.0), n_elements=experiment.n_elements)
  assert result.outcome == "completed", result.failure
  assert result.settings["time_step"] == pytest.approx(0.04)
  for metric, value in CROSSING_AT_ITS_STEP.items():
    assert abs(result.metrics[metric] / value - 1) < 5e-2, (metric, result.metrics[metric], value)
  assert result.metrics["settling_residual"] < 1e-4, result.metrics


def test_rods_that_start_apart_and_meet_are_rerun_together():
  """A free rod dropped across a clamped one from 10 cm (beyond the distance at which
  the adapter puts rods in one model): run apart, it would fall through; the adapter
  sees the two come within a diameter and runs them again in one model, where the
  falling rod lands on the other (it bounces: the rods are elastic) and stays above it."""
  r = 0.005
  lower = Rod(centerline=((-0.1, 0.0, 0.0), (0.1, 0.0, 0.0)), radius=r,
              material=Material(1e7, 1e7 / 3, 1000.0), start=EndCondition.CLAMPED, end=EndCondition.CLAMPED)
  falling = Rod(centerline=((0.0, -0.05, 0.1), (0.0, 0.05, 0.1)), radius=r,
                material=Material(1e7, 1e7 / 3, 1000.0), start=EndCondition.FREE)
  scenario = Scenario(rods=(lower, falling), duration=0.25, gravity=(0.0, 0.0, -9.81), self_contact=False)
  assert CuspSolver.groups(scenario) == [[0], [1]]
  traj = CuspSolver().run(scenario, n_elements=5, n_frames=26)
  from cosseratbench.metrics import segment_distance
  for a, b in zip(traj.positions[0], traj.positions[1]):
    i, j = np.meshgrid(np.arange(5), np.arange(5), indexing="ij")
    i, j = i.ravel(), j.ravel()
    # landing at 1.4 m/s the polylines of nodes come within 8.9 mm (chords cutting the
    # bent rods' corners, and the contact's stabilization); run apart, they would cross
    assert segment_distance(a[i], a[i + 1], b[j], b[j + 1]).min() > 2 * r * 0.8
  assert traj.positions[1][-1][:, 2].min() > traj.positions[0][-1][:, 2].max()   # on top of it


def test_short_catenary_sags_as_the_elastic_catenary():
  """cosseratbench's catenary (a 1 m cable pinned at both ends: end = pin, started as
  a circular arc from its 401-point centerline) at 10 elements, scored against its
  elastic catenary. Stretch deepens this cable's sag by about 1 % (an inextensible
  or unpinned cable misses by that much or more); bending, which the reference
  neglects, and 10 sections keep cusp within 0.1 %. Both pins hold their points."""
  from cosseratbench.experiments import catenary
  result = cosseratbench.run(catenary.catenary, CuspSolver(), n_elements=10)
  assert result.outcome == "completed", result.failure or result.missing
  assert result.metrics["sag_error"] < 1e-3, result.metrics
  assert result.metrics["shape_error"] < 1e-3, result.metrics
  scenario = catenary.catenary.scenario_for()   # its defaults
  traj = CuspSolver().run(scenario, n_elements=10, n_frames=3)
  rod = scenario.rods[0]
  np.testing.assert_allclose(traj.positions[0][-1, 0], rod.centerline[0], atol=1e-6)
  np.testing.assert_allclose(traj.positions[0][-1, -1], rod.centerline[-1], atol=1e-6)


def test_driven_sliding_clamp_twists_and_stretches_the_rod_uniformly():
  """A straight rod clamped at both ends, its far clamp turned by 1 rad about the
  rod's axis (a mocap end_body) on a carriage that slides along it, pulled by a
  tension T: at rest the twist grows linearly along the rod (the directors at the
  element middles turned by theta s / L) and the rod is stretched by T / EA."""
  length, theta, tension, n = 0.5, 1.0, 10.0, 4
  times = np.linspace(0.0, 0.5, 11)
  motion = Motion(times=tuple(times), displacement=tuple((0.0, 0.0, 0.0) for _ in times),
                  rotation=tuple((theta * t / 0.5, 0.0, 0.0) for t in times), slides_along=(1.0, 0.0, 0.0))
  rod = _rod(start=EndCondition.CLAMPED, end=EndCondition.CLAMPED, end_motion=motion,
             loads=(PointLoad(force=(tension, 0.0, 0.0)),))
  scenario = Scenario(rods=(rod,), duration=1.5, quasi_static=True)
  traj = CuspSolver().run(scenario, n_elements=n, n_frames=4)
  stretch = tension / (rod.material.youngs_modulus * rod.area)
  np.testing.assert_allclose(traj.positions[0][-1, -1], (length * (1 + stretch), 0.0, 0.0), atol=1e-9)
  for k, d in enumerate(traj.directors[0][-1]):
    angle = theta * (k + 0.5) / n
    np.testing.assert_allclose(d, (0.0, -math.sin(angle), math.cos(angle)), atol=1e-9)


def _compare_script():
  import importlib.util
  import pathlib
  path = pathlib.Path(__file__).resolve().parents[2] / "bench" / "cosseratbench_compare.py"
  spec = importlib.util.spec_from_file_location("cosseratbench_compare", path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def test_catenary_is_the_extensible_elastica_with_bending():
  """cosseratbench's catenary reference neglects bending, and the default cable's
  bending boundary layers at the pins (length sqrt(EI/T), about 4 cm) put the real
  equilibrium 4.8e-4 rod lengths from it: that, not cusp, is the catenary's shape
  error. Against the extensible elastica WITH bending (an independent boundary value
  problem, scipy's collocation, in bench/cosseratbench_compare.py) cusp's nodes sit at
  the same material points to 2.1e-5 rod lengths at 25 elements (2.7e-6 at 50); a rod without
  stretch (1 % of the sag) or without bending (4.8e-4) misses by far more."""
  from cosseratbench.experiments import catenary
  from cosseratbench.metrics import max_distance_to_curve
  scenario = catenary.catenary.scenario_for()
  rod = scenario.rods[0]
  gravity = float(np.linalg.norm(scenario.gravity))
  span = rod.centerline[-1][0] - rod.centerline[0][0]
  shape = _compare_script().bending_catenary(rod, gravity, span)
  dense = np.linspace(0.0, rod.length, 4001)
  curve = np.stack([shape(dense)[0], np.zeros(len(dense)), shape(dense)[1]], axis=1)
  assert max_distance_to_curve(catenary.reference_curve(rod, gravity, span)[::4], curve) > 3e-4
  nodes = CuspSolver().run(scenario, n_elements=25, n_frames=11).positions[0][-1]
  at = np.linspace(0.0, rod.length, len(nodes))
  x, z = shape(at)
  distance = np.linalg.norm(nodes - np.stack([x, np.zeros(len(at)), z], axis=1), axis=1).max()
  assert distance / rod.length < 4e-5, distance


def test_a_rod_whipping_into_a_plectoneme_stays_out_of_itself():
  """The twist experiment's most twisted rod (1.06 of the critical twist) at tension 30,
  alone, at 30 elements: past the instability it wraps into a plectoneme, undamped, at
  metres a second, far faster than the quasi-static step (0.05 s) foresees. At that step
  a disk sweeps a tenth of the rod per step and the run stops (its disks pass through
  each other at t = 15.3 s; at 50 elements it finds more contacts than the workspaces
  hold). Finer steps for a frame whose nodes moved fast keep it out of itself."""
  import dataclasses
  from cosseratbench.experiment import max_rod_overlap
  from cosseratbench.experiments import twist
  scenario = twist.twist.scenario_for(tension=30.0)
  scenario = dataclasses.replace(scenario, rods=scenario.rods[-1:])
  traj = CuspSolver().run(scenario, n_elements=30, n_frames=twist.twist.n_frames)
  sideways = np.abs(traj.positions[0][-1, :, 1:] - traj.positions[0][0, :, 1:]).max()
  assert sideways > 10 * scenario.rods[0].radius, sideways   # it did leave straight
  assert max_rod_overlap(scenario, traj) < 0.75   # in radii: node chords cut a plectoneme's corners
