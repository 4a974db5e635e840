"""cusp as a solver of cosseratbench (https://pypi.org/project/cosseratbench).

cosseratbench finds this class through the ``cosseratbench.solvers`` entry point
that python/pyproject.toml declares (``cusp = cusp.cosseratbench_adapter:CuspSolver``),
so ``cosseratbench run -s cusp`` and ``cosseratbench.run(experiment, CuspSolver())``
both drive it. The adapter only translates: each rod of a scenario becomes a
cusp.softbody instance (model cosserat: a Cosserat rod of piecewise constant strain)
mounted on a MuJoCo body, obstacles become MuJoCo geoms, and the scene runs in an
ordinary mujoco.mj_step loop. The physics is the plugin's.

How a scenario maps onto a scene:
- a rod: ``sections`` = the elements asked for (at most the plugin's maximum, read
  from this libcusp.so; beyond it the rod keeps that many sections and carries about
  one disk per element), every strain
  (curvatures kx ky kz, shears ex ey, stretch ez), Young's and shear moduli, density
  and radius as given; one contact disk of the rod's radius at every node. The
  trajectory's nodes are the backbone at evenly spaced rest arc lengths
  (cusp.backbone_point), its directors the section frames' x axis there.
- rods that can touch a rod (another rod near it, or itself when the scenario asks
  for self-contact): the rod's surface tiled by disks, three per element (one at each
  node, two inside), each as thick as their spacing, so that the disks make a
  piecewise straight tube with no gap between them; rods near each other
  share one MuJoCo model, where the plugin's soft-soft contact (disk against disk, in
  the same LCP as the obstacles, Coulomb friction) keeps them apart, and a rod asked
  for self-contact gets the key ``self_contact``.
- which rods share a model: those whose starting centrelines come within four times
  the sum of their radii (union of such pairs). Rods further apart run in models of
  their own (one model would size one contact workspace for all their disks
  together, growing with the square of their number: six 50-element rods of three
  disks per element would need about 32 GiB, refused at load). After the run, every pair of
  rods in different models is checked at every frame: if they came within the sum of
  their radii, the run is repeated with them in one model, so a rod is never let
  through another for having started far from it.
- the start: clamped = the mount itself (a static body), pinned = a mount on a ball
  joint, free = a mount on a free joint (a light body the plugin couples implicitly),
  driven = a mocap mount moved every step. The mount's z axis is the rod's tangent
  at its start (second order from the first three centerline points: the rod leaves
  its mount along it) and its x axis the scenario's director, so d1 starts where it
  should.
- the far end (keys ``end``, ``end_body``): pinned or clamped to the world, to a mocap
  body for a driven end, or to a carriage sliding along ``slides_along``.
- a curved or pre-stretched start (keys ``centerline``, ``rest_arc``): the scenario's
  polyline in the mount's frame.
- point loads: at the tip a force held by cusp.apply_force; at the start on the
  mount body (xfrc_applied).
- gravity: MuJoCo's option.
- quasi-static scenarios: Kelvin-Voigt viscosity critical for the slowest mode
  (the peers' adapters add mass-proportional damping at the same rate); dynamic ones,
  and quasi-static ones with a driven end (twist): none (implicit Euler's own
  dissipation remains, and shows in the metrics). The plugin has no mass-proportional
  damping, and viscosity relaxes every strain with the same time constant,
  viscosity / modulus: 2/omega for bending and stretch, 6/omega for torsion and shear
  (G = E/3). Critical for the slowest mode, it would make a driven twist lag its clamp
  by seconds and slow the growth of a rod twisted past Greenhill's threshold below
  what the twist experiment counts as growing; a cantilever or a catenary settles no
  slower for it.

What it cannot model raises NotImplementedError naming it (cosseratbench records the
run as unsupported): a build of the plugin without the ``end``/``centerline`` keys,
obstacles of different friction, rods of different friction in one model (the
plugin gives a soft-soft contact one instance's coefficient), and a scene whose
contact workspaces the plugin refuses at load (sized 8 contacts per disk, growing
with the square of the disks of one model; docs/memory.md) -- with the plugin's
message, which names the instances, disks and GiB.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import re
import sys
import tempfile
import time

import mujoco
import numpy as np

import cusp
from cosseratbench.scenario import Cylinder, End, EndCondition, Plane, Rod, Scenario
from cosseratbench.metrics import segment_distance
from cosseratbench.solver import Capability, Diverged
from cosseratbench.trajectory import Trajectory

STRAINS = "kx ky kz ex ey ez"   # every strain of a Cosserat rod: bending, torsion, shear, stretch
CONTACT = "lcp"                 # the plugin's complementarity contact, exact Coulomb friction
PYRAMID = 8                     # friction directions: within cos(pi/8) = 92 % of the exact cone
BASE_STEP = 1e-3                # s: the step at time_step_scale 1 (see CuspSolver._steps)
STEPS_PER_SLOWEST_PERIOD = 500  # and at least this many steps per period of the slowest mode
STEPS_PER_SLOWEST_PERIOD_AT_REST = 50  # quasi-static, path-independent: equilibrium is the answer
CONTACT_MARGIN = 5e-3           # m: the plugin's speculative contact margin (plugin/pipeline.h CUSP_MARGIN)
MOUNT_MASS_FRACTION = 1e-2      # a pinned or free mount weighs this share of one element
# Rods that can touch a rod: disks per element, as thick as their spacing. A straight
# disk is flat over its thickness, so a frictionless rod lying across it feels no pull
# back to the middle there, and comes to rest anywhere along it: the finer the disks,
# the less it can wander (docs/cosseratbench.md, crossing). An odd count puts the meeting
# of two disks, not a disk's flat middle, at each element's middle.
TOUCH_DISKS_PER_ELEMENT = 3
NEAR_RADII = 4.0                # rods starting within this many times their radii's sum share a model
PROGRESS_EVERY = 30.0           # s of wall time between progress lines of a long run (stderr)
FRICTIONLESS_PYRAMID = 3        # the fewest friction directions: they carry nothing at friction 0


def _numbers(values) -> str:
  return " ".join(repr(float(v)) for v in np.ravel(values))


@functools.cache
def _library_digest() -> str:
  with open(cusp.LIBRARY, "rb") as f:
    return hashlib.sha256(f.read()).hexdigest()[:12]


# ---------- what this build of the plugin offers ----------

_PROBE = """<mujoco><extension><plugin plugin="cusp.softbody"><instance name="probe">
  <config key="model" value="cosserat"/><config key="sections" value="2"/>
  <config key="actuated" value="none"/>{extra}</instance></plugin></extension>
  <worldbody><body name="mount"><plugin instance="probe"/></body></worldbody></mujoco>"""

_FEATURES = {  # feature: the keys that bring it (another branch adds them: issue 16 item 1)
    "end": '<config key="end" value="pin"/>',
    "centerline": '<config key="centerline" value="0 0 0, 0 0 0.15, 0 0 0.3"/>',
}


@functools.cache
def has_feature(name: str) -> bool:
  """Whether this libcusp.so knows the keys of a feature: a tiny scene with them loads."""
  try:
    _load_text(_PROBE.format(extra=_FEATURES[name]))
  except ValueError as e:
    if "unknown key" in str(e):
      return False
    raise
  return True


def _load_text(xml: str) -> mujoco.MjModel:
  """cusp.load of MJCF text (through a file: cusp.load parses with MjSpec.from_file)."""
  with tempfile.TemporaryDirectory(prefix="cusp-cb-") as tmp:
    path = os.path.join(tmp, "scene.xml")
    with open(path, "w") as f:
      f.write(xml)
    return cusp.load(path)


@functools.cache
def max_sections() -> int:
  """The most sections this libcusp.so gives a rod (plugin/config.h CUSP_MAX_SECTIONS),
  read from the range its loader names when refusing more."""
  probe = _PROBE.replace('value="2"', 'value="1000000"').format(extra="")
  try:
    _load_text(probe)
  except ValueError as e:
    found = re.search(r"\b1\.\.(\d+)", str(e))
    if found:
      return int(found.group(1))
    raise
  raise RuntimeError("libcusp.so accepted a rod of a million sections")


def _require(feature: str, what: str) -> None:
  if not has_feature(feature):
    raise NotImplementedError(
        f"{what} needs the cusp.softbody key '{feature}', which the loaded libcusp.so "
        f"does not have yet (issue 16 item 1)")


# ---------- geometry of a rod ----------

def _start_tangent(points: np.ndarray) -> np.ndarray:
  """The unit tangent of the polyline's curve at its first point: the derivative of
  the quadratic through the first three points (parametrized by chord length),
  second order in the spacing; the first segment when fewer points or a kink.

  A cusp rod leaves its mount along the mount's z axis and each section is a
  circular arc continuing the previous one's tangent to the next node: a start
  tangent off the curve's (the first chord is off by half the first turn) makes the
  sections' curvature alternate about the curve's, so the start would not be the
  shape the scenario gives (the capstan starts at its equilibrium)."""
  chord = points[1] - points[0]
  first = chord / np.linalg.norm(chord)
  if len(points) < 3:
    return first
  s1 = np.linalg.norm(chord)
  s2 = s1 + np.linalg.norm(points[2] - points[1])
  derivative = (-(1 / s1 + 1 / s2) * points[0] + s2 / (s1 * (s2 - s1)) * points[1]
                - s1 / (s2 * (s2 - s1)) * points[2])
  tangent = derivative / np.linalg.norm(derivative)
  # a kink (a corner at the second point) is no smooth curve's tangent: keep the chord
  return tangent if tangent @ first > math.cos(math.radians(10.0)) else first


def _frame(rod: Rod) -> np.ndarray:
  """Rotation (columns x, y, z in the world) of the mount: z along the rod's
  tangent at its start (_start_tangent), x the scenario's reference director there."""
  points = np.asarray(rod.centerline, dtype=float)
  z = _start_tangent(points)
  n = np.asarray(rod.normal, dtype=float)
  x = n - (n @ z) * z
  if np.linalg.norm(x) < 1e-12:
    raise ValueError("the rod's normal is parallel to its first segment")
  x /= np.linalg.norm(x)
  return np.stack([x, np.cross(z, x), z], axis=1)


def _straight_unstretched(rod: Rod) -> bool:
  """Whether the rod starts straight along its first segment and at rest length:
  what a cusp rod is without the centerline keys."""
  points = np.asarray(rod.centerline, dtype=float)
  offsets = points - points[0]
  axis = offsets[1] / np.linalg.norm(offsets[1])
  along = offsets @ axis
  across = np.linalg.norm(offsets - np.outer(along, axis), axis=1)
  if np.any(across > 1e-9 * rod.length) or np.any(np.diff(along) <= 0):
    return False
  return rod.rest_arc_length is None or bool(
      np.allclose(rod.rest_arc_length, along, rtol=0, atol=1e-12 * rod.length))


def _driven(scenario: Scenario) -> bool:
  """Whether an end of a rod follows a prescribed motion."""
  return any(r.start_motion is not None or r.end_motion is not None for r in scenario.rods)


def _quat(rotation: np.ndarray) -> np.ndarray:
  q = np.zeros(4)
  mujoco.mju_mat2Quat(q, np.ascontiguousarray(rotation).ravel())
  return q


def mocap_drive(model: mujoco.MjModel, drive) -> list:
  """CuspSolver.scene's drive (body name, origin, frame, motion) with each body's
  mocap index in place of its name: what move_mocap takes."""
  return [(model.body(body).mocapid[0], origin, frame, motion) for body, origin, frame, motion in drive]


def move_mocap(data: mujoco.MjData, mocap: list, t: float) -> None:
  """The driven mocap bodies to their poses at time t (the step's end: MuJoCo reads a
  mocap body's pose when the step that ends at t starts)."""
  for body, origin, frame, motion in mocap:
    displacement, rotation = motion.pose(t)
    data.mocap_pos[body] = origin + displacement
    data.mocap_quat[body] = _quat(rotation @ frame)


class CuspSolver:
  """cosseratbench's solver protocol over cusp.softbody (model cosserat)."""

  name = "cusp"
  # Every strain is a coordinate; disks touch MuJoCo geoms (cylinders, planes) and each
  # other (rod against rod, rod against itself) through the plugin's contact LCP with
  # Coulomb friction; a rod that can touch a rod has its surface tiled by disks.
  capabilities = frozenset({
      Capability.STRETCH,
      Capability.SHEAR,
      Capability.ROD_CONTACT,
      Capability.ROD_FRICTION,
      Capability.CYLINDER_CONTACT,
      Capability.PLANE_CONTACT,
  })

  def __init__(self, time_step_scale: float = 1.0) -> None:
    if not time_step_scale > 0:
      raise ValueError(f"time_step_scale must be > 0, got {time_step_scale}")
    self.time_step_scale = float(time_step_scale)

  @property
  def backend_version(self) -> str:
    """MuJoCo's version and a digest of the libcusp.so driven: saved runs are reused
    only with the same library."""
    return f"cusp libcusp.so sha256:{_library_digest()} on MuJoCo {mujoco.__version__}"

  # ---------- numerical choices ----------

  def _steps(self, scenario: Scenario, n_frames: int) -> tuple[float, int]:
    """The time step and the steps per frame. The soft step is implicit Euler, stable
    at any step, so the step is chosen for accuracy, by what the scenario's answer is:

    - a quasi-static scenario whose equilibrium does not depend on the path to it (no
      contact that can carry friction: _path_dependent): only the equilibrium counts,
      and implicit Euler's dissipation is as allowed as the viscosity, so 50 steps per
      period of the slowest mode; where contact can be made, also no more than the
      plugin's speculative contact margin travelled per step at the fastest approach
      (_approach_speed), or a contact is passed through unseen;
    - otherwise (the motion is the result, or friction makes the equilibrium depend on
      the path: a capstan's rope holds or slides by its stick-slip history), 1 ms and
      500 steps per period of the slowest mode.

    Then scaled by time_step_scale; at most one frame. Where contact can be made, a frame
    after one whose nodes moved fast runs in finer steps (_steps_for_speed): these rules
    foresee the motion a scenario asks for, not a rod that whips past an instability.
    That the first rule's step gives
    converged metrics is checked by halving in bench/cosseratbench_compare.py's report
    (the change from the step doubled estimates the step's error, implicit Euler being
    first order)."""
    frame = scenario.duration / (n_frames - 1)
    slowest_period = 2.0 * math.pi / scenario.slowest_frequency()
    if scenario.quasi_static and not self._path_dependent(scenario):
      base = slowest_period / STEPS_PER_SLOWEST_PERIOD_AT_REST
      speed = self._approach_speed(scenario)
      if speed > 0:
        base = min(base, CONTACT_MARGIN / speed)
    else:
      base = min(BASE_STEP, slowest_period / STEPS_PER_SLOWEST_PERIOD)
    limit = self.time_step_scale * base
    per_frame = max(1, math.ceil(frame / limit - 1e-9))
    return frame / per_frame, per_frame

  def _contact_pairs(self, scenario: Scenario) -> list[tuple[int, object]]:
    """What can touch what: (rod, other rod's index) for rods sharing a model, (rod,
    obstacle) for every rod and obstacle, (rod, rod) for self-contact."""
    pairs = [(i, j) for g in self.groups(scenario) for i in g for j in g if i < j]
    pairs += [(i, o) for i in range(len(scenario.rods)) for o in scenario.obstacles]
    if scenario.self_contact:
      pairs += [(i, i) for i in range(len(scenario.rods))]
    return pairs

  def _path_dependent(self, scenario: Scenario) -> bool:
    """Whether a contact that can be made carries friction (Coulomb friction dissipates
    along the path, so where a rod comes to rest depends on how it got there)."""
    rods = scenario.rods   # the coefficient the plugin gives each rod's contacts (_friction)
    return any(self._friction(scenario, rods[i]) > 0
               or (isinstance(other, int) and self._friction(scenario, rods[other]) > 0)
               for i, other in self._contact_pairs(scenario))

  def _approach_speed(self, scenario: Scenario) -> float:
    """An estimate of the fastest a rod meets what it can touch, in a scenario that
    starts at rest: free fall across the widest initial gap of any pair that can touch
    (each pair's least surface gap at the start), sqrt(2 |g| gap). Prescribed motions
    are not in it (no path-independent scenario has them touching anything faster)."""
    gravity = float(np.linalg.norm(scenario.gravity))
    widest = 0.0
    for i, other in self._contact_pairs(scenario):
      if isinstance(other, int) and other == i:
        continue   # self-contact: the rod's parts start touching along it
      widest = max(widest, _initial_gap(scenario.rods[i],
                                        scenario.rods[other] if isinstance(other, int) else other))
    return math.sqrt(2.0 * gravity * widest)

  @staticmethod
  def _sections(n_elements: int) -> int:
    return min(n_elements, max_sections())

  @staticmethod
  def _viscosity(scenario: Scenario, rod: Rod) -> float:
    """Kelvin-Voigt viscosity (Pa s) critical for the slowest mode in a quasi-static
    scenario (damping ratio eta omega / 2E = 1), else none; none either when an end is
    driven. Kelvin-Voigt damps a mode by its elastic stiffness, not its mass: critical
    for the slowest mode, it damps the stiffer ones far more, so a driven twist lags
    its clamp (torsion relaxes in 6/omega) and an instability's growth is slowed by
    the whole bending stiffness of its mode (twist: the rods past Greenhill's critical
    twist grow slower than the experiment's threshold of growth). Driven, the rod keeps
    only implicit Euler's own dissipation."""
    if not scenario.quasi_static or _driven(scenario):
      return 0.0
    return 2.0 * rod.material.youngs_modulus / scenario.slowest_frequency()

  @staticmethod
  def _friction(scenario: Scenario, rod: Rod) -> float:
    """One Coulomb coefficient per rod: the larger of the rod's and the obstacles'."""
    values = {o.friction for o in scenario.obstacles}
    if len(values) > 1:
      raise NotImplementedError(
          "obstacles of different friction: cusp gives a rod one Coulomb coefficient "
          f"against every geom (here {sorted(values)})")
    return max([rod.friction, *values])

  # ---------- which rods touch what ----------

  @staticmethod
  def groups(scenario: Scenario) -> list[list[int]]:
    """The rods that share a MuJoCo model: those whose starting centrelines come within
    NEAR_RADII times the sum of their radii, joined transitively. run() checks
    afterwards that rods in different models never came within touching distance."""
    return _join(scenario, [[i] for i in range(len(scenario.rods))],
                 [(i, j) for i in range(len(scenario.rods)) for j in range(i + 1, len(scenario.rods))
                  if _polyline_distance(np.asarray(scenario.rods[i].centerline, dtype=float),
                                        np.asarray(scenario.rods[j].centerline, dtype=float))
                  < NEAR_RADII * (scenario.rods[i].radius + scenario.rods[j].radius)])

  @staticmethod
  def _touches_rods(scenario: Scenario, group: list[int]) -> bool:
    """Whether the rods of a model can touch a rod: another rod, or themselves."""
    return len(group) > 1 or scenario.self_contact

  def _pyramid(self, scenario: Scenario, group: list[int]) -> int:
    """Friction directions: PYRAMID, or the fewest when nothing in the model has friction
    (the contact workspaces grow with the square of the directions plus two)."""
    mu = [scenario.rods[i].friction for i in group] + [o.friction for o in scenario.obstacles]
    return PYRAMID if any(mu) else FRICTIONLESS_PYRAMID

  def settings(self, scenario: Scenario, *, n_elements: int, n_frames: int) -> dict:
    dt, _ = self._steps(scenario, n_frames)
    sections = self._sections(n_elements)
    groups = self.groups(scenario)
    model_of = {i: g for g in groups for i in g}
    touching = [self._touches_rods(scenario, model_of[i]) for i in range(len(scenario.rods))]
    contact = scenario.obstacles or any(touching)
    return {
        "integrator": "implicit Euler (soft step, linearly implicit in stiffness and damping)",
        "model": "cosserat, piecewise constant strain",
        "strains": STRAINS,
        "time_step": dt,
        "elements": n_elements,
        "sections": sections,
        "disks": [self._disks(sections, n_elements, touching[i])[1] for i in range(len(scenario.rods))],
        "disk_thickness": [self._disk_thickness(rod, sections, n_elements, touching[i])
                           for i, rod in enumerate(scenario.rods)],
        "viscosity": [self._viscosity(scenario, rod) for rod in scenario.rods],
        "contact": {
            "model": CONTACT,
            "solver": "lemke, falling back to fb and pgs",
            "conditioning": "qr ruiz tikhonov",
            "friction": "Coulomb (exact at the pyramid's directions)",
            "pyramid": [self._pyramid(scenario, model_of[i]) for i in range(len(scenario.rods))],
            "stabilization": 0.2,
            "push_speed": 1.0,      # m/s, the stabilization's fastest push-out (the plugin's default)
            "surface_layer": 1e-8,  # m, the depth a resting contact may sink unpushed (the plugin's default)
            "friction_coefficient": [max([r.friction, *(o.friction for o in scenario.obstacles)])
                                     for r in scenario.rods],
        } if contact else None,
        "models": groups,   # rods simulated together (initially; run() merges any that met)
        "rod_contact": any(len(g) > 1 for g in groups),
        "self_contact": bool(scenario.self_contact),
        "warm_lemke": [self._warm_lemke(scenario, touching[i]) for i in range(len(scenario.rods))],
    }

  @staticmethod
  def _warm_lemke(scenario: Scenario, touching: bool) -> bool:
    """Lemke from the last step's basis (the plugin's key warm_lemke) on a rod touching
    itself: a heap of rope keeps thousands of LCP variables from step to step, and a cold
    Lemke a step does not finish it in any time one would wait (docs/contact_scaling.md,
    the pile). Off elsewhere: with few contacts it saves nothing, and where friction's
    answer is not unique it may pick another valid one than the cold path picks."""
    return touching and bool(scenario.self_contact)

  @staticmethod
  def _disks(sections: int, n_elements: int, touching: bool = False) -> tuple[int, int]:
    """Disks inside each section (besides its end plate), and disks in all (with the
    base disk): one per node when the sections divide the elements, and
    TOUCH_DISKS_PER_ELEMENT per element on a rod that can touch a rod."""
    per_element = TOUCH_DISKS_PER_ELEMENT if touching else 1
    inside = max(0, per_element * math.ceil(n_elements / sections) - 1)
    return inside, 1 + sections * (inside + 1)

  def _disk_thickness(self, rod: Rod, sections: int, n_elements: int, touching: bool) -> float:
    """The rod's radius (at least 0.1 mm), or on a rod that can touch a rod the disks'
    spacing along the rod at rest: neighbours then meet face to face, and the plugin's
    self-contact leaves them out (disks within a thickness of each other along the
    rod are neighbours, not contact)."""
    if not touching:
      return max(rod.radius, 1e-4)
    inside, _ = self._disks(sections, n_elements, touching)
    # a hair over the spacing: rounding must not make neighbours a self-contact pair
    return rod.length / (sections * (inside + 1)) * (1.0 + 1e-9)

  # ---------- the scene ----------

  def _rod_xml(self, i: int, scenario: Scenario, rod: Rod, n_elements: int, dt: float,
               touching: bool, pyramid: int):
    """The instance, the mount body and anything the far end holds on to; and what
    run() needs to drive them. ``touching``: the rod can touch a rod (its surface
    tiled by disks; self-contact when the scenario asks for it)."""
    sections = self._sections(n_elements)
    inside, _ = self._disks(sections, n_elements, touching)
    m = rod.material
    frame = _frame(rod)
    origin = np.asarray(rod.centerline[0], dtype=float)
    name = f"rod{i}"
    keys = {
        "model": "cosserat",
        "sections": sections,
        "length": repr(rod.length / sections),   # dropped below when a centerline sets it
        "mass": "0",
        "density": repr(m.density),
        "radius": repr(rod.radius),
        "young": repr(m.youngs_modulus),
        "shear": repr(m.shear_modulus),
        "viscosity": repr(self._viscosity(scenario, rod)),
        "strains": STRAINS,
        "disks": inside,
        "disk_radius": repr(rod.radius),
        "disk_thickness": repr(self._disk_thickness(rod, sections, n_elements, touching)),
        "friction": repr(self._friction(scenario, rod)),
        "pyramid": pyramid,
        "contact": CONTACT,
        "actuated": "none",
        "self_contact": int(touching and scenario.self_contact),
        "warm_lemke": int(self._warm_lemke(scenario, touching)),
    }
    if not _straight_unstretched(rod):
      _require("centerline", "a rod that starts curved or stretched")
      local = (np.asarray(rod.centerline, dtype=float) - origin) @ frame
      keys["centerline"] = ", ".join(_numbers(p) for p in local)
      del keys["length"]   # the rest length is the centerline's (rest_arc's last value)
      rest = rod.rest_arc_length
      if rest is None:
        rest = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(local, axis=0), axis=1))))
      keys["rest_arc"] = _numbers(rest)

    element_mass = m.density * rod.area * rod.length / n_elements
    light = MOUNT_MASS_FRACTION * element_mass
    inertia = f'<inertial pos="0 0 0" mass="{light!r}" diaginertia="{_numbers([light * rod.radius ** 2] * 3)}"/>'
    start = f'name="{name}_mount" pos="{_numbers(origin)}" quat="{_numbers(_quat(frame))}"'
    drive = []
    if rod.start_motion is not None:
      mount = f'<body {start} mocap="true"><plugin instance="{name}"/></body>'
      drive.append((f"{name}_mount", origin, frame, rod.start_motion))
    elif rod.start is EndCondition.CLAMPED:
      mount = f'<body {start}><plugin instance="{name}"/></body>'
    else:
      joint = '<joint type="ball"/>' if rod.start is EndCondition.PINNED else '<freejoint/>'
      mount = f'<body {start}>{joint}{inertia}<plugin instance="{name}"/></body>'

    held = ""
    if rod.end is not EndCondition.FREE:
      _require("end", f"a {rod.end.value} far end")
      keys["end"] = "pin" if rod.end is EndCondition.PINNED else "clamp"
      motion = rod.end_motion
      if motion is not None:
        tip = np.asarray(rod.nodes(n_elements)[-1])
        clamp = f"{name}_end_clamp"
        if motion.slides_along is not None:
          carriage = f"{clamp}_carriage"
          held = (f'<body name="{clamp}" mocap="true" pos="{_numbers(tip)}">'
                  f'<body name="{carriage}"><joint type="slide" axis="{_numbers(motion.axis)}"/>'
                  f'<inertial pos="0 0 0" mass="{element_mass!r}" '
                  f'diaginertia="{_numbers([element_mass * rod.radius ** 2] * 3)}"/></body></body>')
          keys["end_body"] = carriage
        else:
          held = f'<body name="{clamp}" mocap="true" pos="{_numbers(tip)}"/>'
          keys["end_body"] = clamp
        drive.append((clamp, tip, np.eye(3), motion))

    config = "".join(f'<config key="{k}" value="{v}"/>' for k, v in keys.items())
    instance = f'<instance name="{name}">{config}</instance>'
    return instance, mount + held, drive

  @staticmethod
  def _obstacle_xml(obstacle) -> str:
    if isinstance(obstacle, Plane):
      return (f'<geom type="plane" pos="{_numbers(obstacle.point)}" '
              f'zaxis="{_numbers(obstacle.unit_normal)}" size="0 0 1"/>')
    if isinstance(obstacle, Cylinder):
      half = obstacle.unit_axis * obstacle.length / 2
      ends = np.concatenate([np.asarray(obstacle.center) - half, np.asarray(obstacle.center) + half])
      return f'<geom type="cylinder" fromto="{_numbers(ends)}" size="{obstacle.radius!r}"/>'
    raise NotImplementedError(f"an obstacle of kind {type(obstacle).__name__}")

  def scene(self, scenario: Scenario, *, n_elements: int, n_frames: int, rods=None):
    """The MJCF text of the scenario (of the rods numbered in ``rods``, default all, in
    one model), and the bodies moved every step."""
    dt, _ = self._steps(scenario, n_frames)
    chosen = list(range(len(scenario.rods)) if rods is None else rods)
    touching = self._touches_rods(scenario, chosen)
    frictions = {self._friction(scenario, scenario.rods[i]) for i in chosen}
    if len(chosen) > 1 and len(frictions) > 1:
      raise NotImplementedError(
          "rods of different friction that can touch each other: cusp gives a contact "
          f"between two rods one rod's coefficient (here {sorted(frictions)})")
    pyramid = self._pyramid(scenario, chosen)
    parts = [self._rod_xml(i, scenario, scenario.rods[i], n_elements, dt, touching, pyramid)
             for i in chosen]
    obstacles = "".join(self._obstacle_xml(o) for o in scenario.obstacles)
    xml = f"""<mujoco model="cosseratbench">
  <option timestep="{dt!r}" gravity="{_numbers(scenario.gravity)}"/>
  <extension><plugin plugin="cusp.softbody">{"".join(p[0] for p in parts)}</plugin></extension>
  <worldbody>{obstacles}{"".join(p[1] for p in parts)}</worldbody>
</mujoco>"""
    return xml, [d for p in parts for d in p[2]]

  # ---------- running ----------

  def run(self, scenario: Scenario, *, n_elements: int, n_frames: int) -> Trajectory:
    """The rods in the models groups() gives; then, while two rods of different
    models came within the sum of their radii at some frame (the one could have
    touched the other unseen), again with their models merged."""
    dt, per_frame = self._steps(scenario, n_frames)
    groups = self.groups(scenario)
    while True:
      positions, directors = {}, {}
      for group in groups:
        p, d = self._simulate(scenario, group, n_elements, n_frames, dt, per_frame)
        positions.update(zip(group, p))
        directors.update(zip(group, d))
      met = _met_across(scenario, groups, positions)
      if not met:
        break
      groups = _join(scenario, groups, met)
    times = np.linspace(0.0, scenario.duration, n_frames)
    order = range(len(scenario.rods))
    return Trajectory(times, tuple(positions[i] for i in order), tuple(directors[i] for i in order))

  def _simulate(self, scenario: Scenario, group: list[int], n_elements: int, n_frames: int,
                dt: float, per_frame: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The rods numbered in ``group`` run together in one model: each one's nodes and
    directors at every frame."""
    xml, drive = self.scene(scenario, n_elements=n_elements, n_frames=n_frames, rods=group)
    try:   # the plugin sizes its contact workspaces at load, refusing beyond its bound
      model = _load_text(xml)
      data = cusp.make_data(model)
    except (ValueError, RuntimeError) as e:
      if "contact workspaces would take" in str(e):
        raise NotImplementedError(
            "cusp refuses the scene's contact workspaces: " + str(e).split("cusp: ", 1)[-1]) from e
      raise
    names = cusp.instance_names(model)
    instance = [names.index(f"rod{i}") for i in group]
    lengths = [cusp.total_length(model, k) for k in instance]
    mocap = mocap_drive(model, drive)
    for i, k, length in zip(group, instance, lengths):
      for load in scenario.rods[i].loads:
        if load.at is End.END:
          cusp.apply_force(model, data, k, length, np.asarray(load.force, dtype=float))
        else:
          data.xfrc_applied[model.body(f"rod{i}_mount").id, :3] += load.force
    mujoco.mj_forward(model, data)

    samples = []
    for k, length in zip(instance, lengths):
      nodes = np.linspace(0.0, length, n_elements + 1)
      samples.append((k, nodes, (nodes[1:] + nodes[:-1]) / 2))

    def sample():
      return [(np.array([cusp.backbone_point(model, data, k, s)[0] for s in nodes]),
               np.array([cusp.backbone_point(model, data, k, s)[1][:, 0] for s in middles]))
              for k, nodes, middles in samples]

    def check(time):
      report = cusp.report(model, data)
      if report is not None and report["nan_events"]:
        raise Diverged(f"cusp: {report['message'] or 'a soft step failed'}", time=time)
      if report is not None and "pass through each other" in report["message"]:
        raise Diverged(f"cusp: {report['message']}", time=time)
      if data.warning[mujoco.mjtWarning.mjWARN_CONTACTFULL].number:
        # the step found more contacts than the plugin's contact_capacity and solved only those
        # that fit: the run is no longer the scenario's (the report's message has the counts)
        raise Diverged(f"cusp: {report['message'] if report is not None else 'contacts dropped'}", time=time)
      if data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number:
        raise Diverged("MuJoCo: bad acceleration (mjWARN_BADQACC)", time=time)
      if not (np.isfinite(data.qpos).all() and np.isfinite(data.qvel).all()):
        raise Diverged("non-finite MuJoCo state", time=time)

    frames = [sample()]
    step = 0
    can_touch = bool(scenario.obstacles) or self._touches_rods(scenario, group)
    interval = dt * per_frame
    steps = per_frame
    started = last_report = time.monotonic()
    for frame in range(1, n_frames):
      if steps == per_frame:
        for _ in range(per_frame):
          move_mocap(data, mocap, (step + 1) * dt)
          mujoco.mj_step(model, data)
          step += 1
          check(step * dt)
      else:   # finer steps for this frame only; the step count keeps counting the scenario's steps
        start = (frame - 1) * interval
        model.opt.timestep = interval / steps
        for j in range(steps):
          move_mocap(data, mocap, start + (j + 1) * model.opt.timestep)
          mujoco.mj_step(model, data)
          check(data.time)
        model.opt.timestep = dt
        step += per_frame
      frames.append(sample())
      if can_touch:
        steps = _steps_for_speed(frames[-2], frames[-1], interval, per_frame)
      if time.monotonic() - last_report >= PROGRESS_EVERY:
        last_report = time.monotonic()
        _progress(group, step * dt, scenario.duration, frame, n_frames - 1, last_report - started)
    return ([np.stack([f[r][0] for f in frames]) for r in range(len(group))],
            [np.stack([f[r][1] for f in frames]) for r in range(len(group))])


def _steps_for_speed(before, after, interval: float, per_frame: int) -> int:
  """Steps for the next frame of a model where contact can be made: per_frame, or more,
  so that no node travels more than the plugin's speculative contact margin in a step at
  twice the fastest node's mean speed over the last frame (twice: it may speed up).

  The step rules of CuspSolver._steps hold while the motion is what the scenario
  foresees: a quasi-static rod past an instability (the twist's rods wrapping into a
  plectoneme, undamped) can whip at metres a second, and at the equilibrium's step a
  disk then sweeps past most of the rod within one step: the plugin looks for contacts
  as far as a pair may travel in the step (plugin/margin.h), finds more than the
  contact workspaces hold, and the run stops. A frame's nodes give the speed that
  coming frame is likely to have, at no cost but a subtraction."""
  travel = max(float(np.linalg.norm(b[0] - a[0], axis=1).max()) for a, b in zip(before, after))
  needed = math.ceil(2.0 * travel / CONTACT_MARGIN - 1e-9)
  return max(per_frame, needed)


def _progress(group: list[int], t: float, duration: float, frame: int, frames: int, elapsed: float) -> None:
  """One line on stderr for a run long enough to wonder about (the benchmark's runner
  says nothing until a run ends, and a heap of rope runs long)."""
  rods = ", ".join(f"rod{i}" for i in group)
  print(f"cusp: {rods}: t = {t:.4g} of {duration:.4g} s (frame {frame} of {frames}), "
        f"{elapsed:.0f} s elapsed", file=sys.stderr, flush=True)


# ---------- distances between rods ----------

def _initial_gap(rod: Rod, other) -> float:
  """The least distance between ``rod``'s starting surface and ``other``'s (a rod, a
  plane or a cylinder, whose caps are left out), at least 0."""
  points = np.asarray(rod.centerline, dtype=float)
  if isinstance(other, Rod):
    gap = _polyline_distance(points, np.asarray(other.centerline, dtype=float)) - rod.radius - other.radius
  elif isinstance(other, Plane):
    gap = float(np.min((points - np.asarray(other.point, dtype=float)) @ other.unit_normal)) - rod.radius
  elif isinstance(other, Cylinder):
    offset = points - np.asarray(other.center, dtype=float)
    across = offset - np.outer(offset @ other.unit_axis, other.unit_axis)
    gap = float(np.min(np.linalg.norm(across, axis=1))) - other.radius - rod.radius
  else:
    raise NotImplementedError(f"an obstacle of kind {type(other).__name__}")
  return max(gap, 0.0)


def _polyline_distance(a: np.ndarray, b: np.ndarray) -> float:
  """The least distance between two polylines (every segment against every one)."""
  i, j = np.meshgrid(np.arange(len(a) - 1), np.arange(len(b) - 1), indexing="ij")
  i, j = i.ravel(), j.ravel()
  return float(segment_distance(a[i], a[i + 1], b[j], b[j + 1]).min())


def _join(scenario: Scenario, groups: list[list[int]], pairs) -> list[list[int]]:
  """``groups`` with those holding the two rods of any of ``pairs`` merged."""
  of = {i: n for n, g in enumerate(groups) for i in g}
  parent = list(range(len(groups)))

  def root(n):
    while parent[n] != n:
      n = parent[n]
    return n

  for i, j in pairs:
    parent[root(of[i])] = root(of[j])
  merged: dict[int, list[int]] = {}
  for n, g in enumerate(groups):
    merged.setdefault(root(n), []).extend(g)
  return [sorted(g) for g in sorted(merged.values(), key=min)]


def _met_across(scenario: Scenario, groups: list[list[int]], positions: dict) -> list[tuple[int, int]]:
  """Pairs of rods of different models that came within the sum of their radii at a frame."""
  of = {i: n for n, g in enumerate(groups) for i in g}
  met = []
  for i in range(len(scenario.rods)):
    for j in range(i + 1, len(scenario.rods)):
      if of[i] == of[j]:
        continue
      reach = scenario.rods[i].radius + scenario.rods[j].radius
      if any(_polyline_distance(a, b) < reach for a, b in zip(positions[i], positions[j])):
        met.append((i, j))
  return met
