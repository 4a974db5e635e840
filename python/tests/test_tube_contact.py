"""Contact between two rods is between their curved surfaces, not their straight disks.

A rod that can touch a rod is covered by disks, short straight cylinders as thick as
their spacing, each on the centreline at its arc length and along its tangent: a chain
of tangents, which leaves a centreline of curvature kappa by kappa a^2 / 2 at a
distance a along a disk. Where two disks meet, the rod's surface lies a disk's sag
kappa h^2 / 2 (h: half a disk) beyond them, so two rods crossing there would settle
that much nearer than a diameter apart (cosseratbench's crossing, 0.1 mm of its
10 mm). These tests build rods of known shape through the cosseratbench adapter and
check the plugin's contact gap against the geometry computed by hand, and the
crossing's ropes one diameter apart at the crossing."""
import math

import mujoco
import numpy as np
import pytest

import cusp
from cosseratbench import registry
from cosseratbench.scenario import EndCondition, Material, Plane, Rod, Scenario

from cusp.cosseratbench_adapter import TOUCH_DISKS_PER_ELEMENT, CuspSolver, _load_text

RADIUS = 0.005
BEND = 0.2          # m: the upper rod's radius of curvature
SPAN = 0.3          # m of arc
CLEARANCE = 1e-3    # m between the surfaces at the crossing, within the contact margin
ELEMENTS = 5        # odd: the arc's apex is where two elements' middle disks meet


def _crossing_scene(angle: float) -> tuple[mujoco.MjModel, mujoco.MjData, float]:
  """A straight rod along x, and above it an arc of radius BEND in a vertical plane at
  ``angle`` to it, apex up, CLEARANCE + one diameter above the straight rod's axis;
  both clamped at both ends, no gravity. Returns the model, its data after the first
  step, and half a disk's thickness on the arc."""
  material = Material(1e6, 1e6 / 3, 1000.0)
  straight = Rod(centerline=((-0.15, 0.0, 0.0), (0.15, 0.0, 0.0)), radius=RADIUS, material=material,
                 normal=(0.0, 0.0, 1.0), start=EndCondition.CLAMPED, end=EndCondition.CLAMPED)
  along = np.array([math.cos(angle), math.sin(angle), 0.0])
  phi = np.linspace(-SPAN / BEND / 2, SPAN / BEND / 2, 401)
  apex = 2 * RADIUS + CLEARANCE
  points = (BEND * np.sin(phi))[:, None] * along + (apex - BEND * (1 - np.cos(phi)))[:, None] * [0, 0, 1]
  arc = Rod(centerline=tuple(map(tuple, points)), radius=RADIUS, material=material,
            normal=(0.0, 0.0, 1.0), start=EndCondition.CLAMPED, end=EndCondition.CLAMPED)
  scenario = Scenario(rods=(straight, arc), duration=0.1, gravity=(0.0, 0.0, 0.0), quasi_static=True,
                      self_contact=False)
  xml, _ = CuspSolver().scene(scenario, n_elements=ELEMENTS, n_frames=2)
  m = _load_text(xml)
  d = cusp.make_data(m)
  mujoco.mj_forward(m, d)
  mujoco.mj_step(m, d)   # the contacts of the step's start state
  return m, d, SPAN / ELEMENTS / TOUCH_DISKS_PER_ELEMENT / 2


@pytest.mark.parametrize("angle_deg", [90.0, 50.0])
def test_gap_between_crossing_rods_is_their_surfaces_not_their_disks(angle_deg):
  """The arc's apex is where two of its disks meet: their rims stand about
  kappa h^2 / 2 = 0.25 mm inside its surface there. The least gap of the plugin's
  contacts between the rods is the surfaces' clearance (1 mm), to 1 % of that sag;
  straight disks report 1.24 mm. Oblique (50 degrees) as well as square."""
  m, d, half = _crossing_scene(math.radians(angle_deg))
  sag = half ** 2 / BEND / 2
  assert sag > 2e-4   # the effect is well above the tolerance below
  between = [c for c in cusp.contacts(m, d) if c["other_instance"] >= 0]
  assert between, "no contact between the rods"
  gap = min(c["gap"] for c in between)
  assert abs(gap - CLEARANCE) < 0.01 * sag, (gap, CLEARANCE, CLEARANCE + sag)


def test_crossing_ropes_end_one_diameter_apart_where_they_cross():
  """cosseratbench's crossing (its default ropes, 51 elements, the adapter's own step,
  10 ms: the margin-limited step of a path-independent quasi-static scenario): at rest the two centrelines, at their
  middles, are one diameter apart to a quarter of a disk's sag at the crossing (0.057 mm
  on either rope: straight disks leave them 9.90 mm apart, 1.7 sags short), one above
  the other (sideways within half a sag), and each middle is where cosseratbench's
  reference (the elastica of both ropes, one diameter apart) has it, to half a sag
  (straight disks leave the upper one 1.3 sags low)."""
  experiment = registry.load_experiment("crossing")
  scenario = experiment.scenario_for()
  solver = CuspSolver()
  xml, _ = solver.scene(scenario, n_elements=experiment.n_elements, n_frames=experiment.n_frames)
  m = _load_text(xml)
  d = cusp.make_data(m)
  dt, _ = solver._steps(scenario, experiment.n_frames)
  for _ in range(round(scenario.duration / dt)):
    mujoco.mj_step(m, d)
  names = cusp.instance_names(m)
  middle = [np.asarray(cusp.backbone_point(m, d, names.index(f"rod{i}"),
                                           cusp.total_length(m, names.index(f"rod{i}")) / 2)[0])
            for i in range(2)]
  radius = scenario.rods[0].radius
  half = scenario.rods[0].length / experiment.n_elements / TOUCH_DISKS_PER_ELEMENT / 2
  sag = 10.5 * half ** 2 / 2   # the reference's curvature at the crossing, 10.5 /m on either rope
  apart = middle[1] - middle[0]
  assert abs(np.linalg.norm(apart) - 2 * radius) < 0.25 * sag, (np.linalg.norm(apart), sag)
  assert np.hypot(apart[0], apart[1]) < 0.5 * sag, apart
  from cosseratbench.experiments import crossing
  reference = crossing.reference_curves(scenario)
  for rope, curve in zip(middle, reference):
    assert abs(rope[2] - curve[len(curve) // 2][2]) < 0.5 * sag, (rope, curve[len(curve) // 2])


def test_gap_of_a_bent_rod_over_a_plane_is_its_surfaces():
  """A rigid geom sees the rod's tube too: an arc of radius BEND, its lowest point down
  and CLEARANCE above a plane, where two of its disks meet. Their lower rims reach
  about kappa h^2 / 2 = 0.25 mm below the tube there (a chain of tangents lies outside
  a convex curve), so straight disks report 0.76 mm; the plugin's least gap to the
  plane is the clearance to 1 % of that sag (with the centreline's departure alone,
  not the tilted rim's, it would be 2.5 % off)."""
  m, d, half = _arc_over_plane(0.0)
  sag = half ** 2 / BEND / 2
  floor = [c for c in cusp.contacts(m, d) if c["other_instance"] < 0 and c["instance"] == 0]
  assert floor, "no contact with the plane"
  gap = min(c["gap"] for c in floor)
  assert abs(gap - CLEARANCE) < 0.01 * sag, (gap, CLEARANCE, CLEARANCE - sag)


def _arc_over_plane(shift: float):
  """The arc of the test above (radius BEND, lowest point CLEARANCE above a plane z = 0),
  its lowest point moved ``shift`` m of arc from where two of its disks meet; the model
  and data after one step, and half a disk's thickness."""
  material = Material(1e6, 1e6 / 3, 1000.0)
  phi = np.linspace(-SPAN / BEND / 2, SPAN / BEND / 2, 401) + shift / BEND
  low = RADIUS + CLEARANCE
  points = np.stack([BEND * np.sin(phi), np.zeros_like(phi), low + BEND * (1 - np.cos(phi))], axis=1)
  arc = Rod(centerline=tuple(map(tuple, points)), radius=RADIUS, material=material,
            normal=(0.0, 1.0, 0.0), start=EndCondition.CLAMPED, end=EndCondition.CLAMPED)
  far = Rod(centerline=((-0.1, 0.025, low + 0.02), (0.1, 0.025, low + 0.02)), radius=RADIUS,
            material=material, normal=(0.0, 0.0, 1.0), start=EndCondition.CLAMPED, end=EndCondition.CLAMPED)
  scenario = Scenario(rods=(arc, far), duration=0.1, gravity=(0.0, 0.0, 0.0), quasi_static=True,
                      self_contact=False, obstacles=(Plane(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0)),))
  assert CuspSolver.groups(scenario) == [[0, 1]]
  xml, _ = CuspSolver().scene(scenario, n_elements=ELEMENTS, n_frames=2)
  m = _load_text(xml)
  d = cusp.make_data(m)
  mujoco.mj_forward(m, d)
  mujoco.mj_step(m, d)
  return m, d, SPAN / ELEMENTS / TOUCH_DISKS_PER_ELEMENT / 2


def test_a_tiled_disk_over_a_plane_is_one_contact_at_its_tubes_lowest_point():
  """The arc's lowest point inside a disk (0.4 of half a disk from its middle): MuJoCo's
  cylinder-plane test gives the straight disk's rim points (two or more per disk), each
  an independent normal in the LCP; the plugin gives each disk that tiles the rod one
  contact, at the tube's lowest point over the disk. Checked: at most one contact per
  disk, the least gap the clearance to 1 % of a disk's sag (found between the disk's
  faces and middle, by the vertex of the parabola through them), and every disk's gap
  the tube's height at its lowest point, computed by hand from the arc."""
  half = SPAN / ELEMENTS / TOUCH_DISKS_PER_ELEMENT / 2
  shift = 0.6 * half
  m, d, half = _arc_over_plane(shift)
  sag = half ** 2 / BEND / 2
  floor = [c for c in cusp.contacts(m, d) if c["other_instance"] < 0 and c["instance"] == 0]
  assert floor, "no contact with the plane"
  disks = [c["disk"] for c in floor]
  assert len(disks) == len(set(disks)), sorted(disks)
  gap = min(c["gap"] for c in floor)
  assert abs(gap - CLEARANCE) < 0.01 * sag, (gap, CLEARANCE, CLEARANCE - sag)
  # each disk's contact: the tube's lowest point over its arc [s - half, s + half]
  # (arc length s from the arc's start), the height of a circle of radius BEND less
  # RADIUS; the end disks (flat faces past the rod's ends) are MuJoCo's, left out
  for c in floor:
    k = c["disk"]
    s0 = k * 2 * half
    if s0 - half < 0 or s0 + half > SPAN:
      continue
    angles = (np.linspace(s0 - half, s0 + half, 2001) - SPAN / 2 + shift) / BEND
    expected = CLEARANCE + np.min(BEND * (1 - np.cos(angles)))
    assert abs(c["gap"] - expected) < 0.01 * sag + 1e-9, (k, c["gap"], expected)
