"""The crossing reduced: cosseratbench's upper rope alone, on a nearly rigid straight tube (a
clamped-clamped cusp rod at E = 1e10, tiled like the lower rope) where the lower rope's
middle comes to rest; frictionless. Issue 16, docs/cosseratbench_variants.md (crossing,
Session 26).

Prints the upper rope's arc length at the crossing, from its middle, over time: with a node
at the middle (an even element count) the rope slides off it, whatever the disks per
element, the way set by its mount end (--reverse); with an element's middle there (odd) it
stays. --fd: at the end, the active contact's generalized force direction (the rigid
extension of the disk's frame that the plugin uses), the true material point's, and the
plugin's gap, each differentiated by finite differences over the upper rope's coordinates.

  CUSP_LIBRARY=build/libcusp.so PYTHONPATH=python OPENBLAS_NUM_THREADS=1 \\
    .venv/bin/python bench/crossing_rigid_tube.py --elements 50 [--disks-per-element 3] [--reverse] [--fd]
"""

import argparse
import dataclasses

import mujoco
import numpy as np
from cosseratbench.experiments import crossing
from cosseratbench.scenario import EndCondition, Material, Rod

import cusp
import cusp.cosseratbench_adapter as adapter

TUBE_HEIGHT = -0.2879154  # m: the reference's lower rope middle (crossing.reference_curves)
TUBE_MODULUS = 1e10       # Pa: sags 0.3 mm under its own weight


def scene(elements: int, per_element: int, reverse: bool, dt: float):
  adapter.TOUCH_DISKS_PER_ELEMENT = per_element
  scenario = crossing.crossing.scenario_for()
  upper = scenario.rods[1]
  if reverse:
    upper = dataclasses.replace(upper, centerline=tuple(reversed(upper.centerline)))
  xs = np.linspace(-0.4, 0.4, 401)
  tube = Rod(centerline=tuple((x, 0.0, TUBE_HEIGHT) for x in xs), rest_arc_length=tuple(xs + 0.4),
             radius=crossing.RADIUS, material=Material(TUBE_MODULUS, TUBE_MODULUS / 3, crossing.DENSITY),
             normal=(0.0, 1.0, 0.0), start=EndCondition.CLAMPED, end=EndCondition.CLAMPED)
  scenario = dataclasses.replace(scenario, rods=(tube, upper))
  solver = adapter.CuspSolver()
  viscosity = solver._viscosity(scenario, upper)   # the rope's; the tube's own would be out of range
  adapter.CuspSolver._viscosity = staticmethod(lambda _scenario, _rod: viscosity)
  parts = [solver._rod_xml(i, scenario, rod, n, dt, True, adapter.FRICTIONLESS_PYRAMID)
           for i, (rod, n) in enumerate(((tube, 50), (upper, elements)))]
  xml = f"""<mujoco><option timestep="{dt!r}" gravity="0 0 -9.81"/>
<extension><plugin plugin="cusp.softbody">{parts[0][0]}{parts[1][0]}</plugin></extension>
<worldbody>{parts[0][1]}{parts[1][1]}</worldbody></mujoco>"""
  return adapter._load_text(xml)


def crossing_arc(m, d) -> float:
  """The upper rope's arc length where it crosses the tube (y = the tube's), less its half length."""
  length = cusp.total_length(m, 1)
  arcs = np.linspace(length / 2 - 0.05, length / 2 + 0.05, 2001)
  y = np.array([cusp.backbone_point(m, d, 1, s)[0][1] for s in arcs])
  return float(arcs[np.argmin(abs(y - cusp.backbone_point(m, d, 0, 0.4)[0][1]))] - length / 2)


def fd_check(m, d, elements: int, per_element: int) -> None:
  """The active contact's generalized force direction against finite differences."""
  mujoco.mj_forward(m, d)
  q = cusp.soft_state(m, d, 1)[0]
  state = d.plugin_state
  at = next(i for i in range(len(state) - len(q)) if np.array_equal(state[i:i + len(q)], q))
  contact = max(cusp.contacts(m, d), key=lambda c: c["normal_impulse"])
  pos, normal = np.asarray(contact["pos"]), np.asarray(contact["normal"])
  length = cusp.total_length(m, 1)
  disk_arcs = np.arange(elements * per_element + 1) * length / (elements * per_element)
  centres = np.array([cusp.backbone_point(m, d, 1, s)[0] for s in disk_arcs])
  disk = int(np.argmin(np.linalg.norm(centres - pos, axis=1)))
  p0, r0 = cusp.backbone_point(m, d, 1, disk_arcs[disk])
  offset = r0.T @ (pos - p0)
  arcs = np.linspace(disk_arcs[disk] - 0.01, disk_arcs[disk] + 0.01, 4001)
  tube = np.array([cusp.backbone_point(m, d, 0, s)[0] for s in np.linspace(0.39, 0.41, 401)])
  rope = np.array([cusp.backbone_point(m, d, 1, s)[0] for s in arcs])
  nearest = arcs[np.argmin(np.linalg.norm(rope[:, None] - tube[None], axis=2).min(axis=1))]

  def rigid():
    p, r = cusp.backbone_point(m, d, 1, disk_arcs[disk])
    return p + r @ offset

  def gap():
    mujoco.mj_forward(m, d)
    same = [c for c in cusp.contacts(m, d) if c["disk"] == contact["disk"]]
    return min(same, key=lambda c: np.linalg.norm(np.asarray(c["pos"]) - pos))["gap"]

  eps = 1e-7
  rows = np.zeros((3, len(q)))
  base = rigid(), cusp.backbone_point(m, d, 1, nearest)[0]
  for j in range(len(q)):
    state[at + j] += eps
    rows[0, j] = normal @ (rigid() - base[0]) / eps
    rows[1, j] = normal @ (cusp.backbone_point(m, d, 1, nearest)[0] - base[1]) / eps
    plus = gap()
    state[at + j] -= 2 * eps
    rows[2, j] = -(plus - gap()) / (2 * eps)   # the normal points from the rope into the tube
    state[at + j] += eps
  scale = np.linalg.norm(rows[1])
  print(f"contact on the upper rope's disk {disk} ({'a node' if disk % per_element == 0 else 'inside an element'}), "
        f"{1e3 * (nearest - disk_arcs[disk]):+.3f} mm from its centre")
  print(f"rigid extension (the plugin's force) vs the true material point: {np.linalg.norm(rows[0] - rows[1]) / scale:.4f}")
  print(f"plugin gap's gradient vs the true material point:               {np.linalg.norm(rows[2] - rows[1]) / scale:.4f}")
  worst = int(np.argmax(abs(rows[0] - rows[1])))
  print(f"largest difference at coordinate {worst} (section {worst // 6}, strain {'kx ky kz ex ey ez'.split()[worst % 6]}): "
        f"rigid {rows[0, worst]:+.3e}, true {rows[1, worst]:+.3e}, gap {rows[2, worst]:+.3e}")


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--elements", type=int, default=50)
  parser.add_argument("--disks-per-element", type=int, default=3)
  parser.add_argument("--reverse", action="store_true", help="the rope mounted at its other end")
  parser.add_argument("--duration", type=float, default=8.0, help="s")
  parser.add_argument("--dt", type=float, default=0.01, help="s (the crossing's)")
  parser.add_argument("--fd", action="store_true")
  args = parser.parse_args()
  m = scene(args.elements, args.disks_per_element, args.reverse, args.dt)
  d = cusp.make_data(m)
  steps = round(args.duration / args.dt)
  for k in range(steps):
    mujoco.mj_step(m, d)
    if (k + 1) % max(1, steps // 8) == 0:
      print(f"t = {d.time:5.2f} s: the tube crosses the rope {1e3 * crossing_arc(m, d):+.3f} mm from its middle", flush=True)
  if args.fd:
    fd_check(m, d, args.elements, args.disks_per_element)


if __name__ == "__main__":
  main()
