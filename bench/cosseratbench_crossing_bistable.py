"""cosseratbench's crossing has a second, lower equilibrium: the lower rope pushed sideways
and the upper rope's contact far from its middle. Issue 16, docs/cosseratbench_variants.md
(crossing, Session 26).

Runs the adapter's crossing scene (cusp.cosseratbench_adapter.CuspSolver.scene), optionally
pushing the lower rope's middle sideways (along y, the upper rope's direction) with a force
held until --push-until s, and prints over time the ropes' middle nodes' sideways offsets,
the upper rope's middle height and the potential energy (gravity + elastic, cusp_energy),
then the least distance between the two centrelines less a diameter (negative: overlap).

  CUSP_LIBRARY=build/libcusp.so PYTHONPATH=python OPENBLAS_NUM_THREADS=1 \\
    .venv/bin/python bench/cosseratbench_crossing_bistable.py --elements 51 --push 0.03 --push-until 6
"""

import argparse
import ctypes
import dataclasses

import mujoco
import numpy as np
from cosseratbench.experiments import crossing

import cusp
from cusp.cosseratbench_adapter import CuspSolver, _load_text


def potential(m, d, instance: int) -> float:
  """Gravity plus elastic energy of an instance, J (cusp_energy)."""
  energy = cusp._lib.cusp_energy
  energy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int] + [ctypes.POINTER(ctypes.c_double)] * 3
  kinetic, gravity, elastic = ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
  if energy(cusp._ptr(m), cusp._ptr(d), instance, ctypes.byref(kinetic), ctypes.byref(gravity), ctypes.byref(elastic)):
    raise RuntimeError(f"cusp_energy failed for instance {instance}")
  return gravity.value + elastic.value


def least_gap(m, d, lengths) -> tuple[float, float]:
  """Least centreline distance less a diameter (m), and the upper rope's arc there less its half length."""
  arcs = [np.linspace(0.0, length, 2001) for length in lengths]
  points = [np.array([cusp.backbone_point(m, d, i, s)[0] for s in arcs[i]]) for i in range(2)]
  apart = np.linalg.norm(points[1][:, None, :] - points[0][None, :, :], axis=2)
  j, _ = np.unravel_index(np.argmin(apart), apart.shape)
  return float(apart.min() - 2 * crossing.RADIUS), float(arcs[1][j] - lengths[1] / 2)


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--elements", type=int, default=51)
  parser.add_argument("--duration", type=float, default=16.0, help="s")
  parser.add_argument("--push", type=float, default=0.0, help="N along y on the lower rope's middle")
  parser.add_argument("--push-until", type=float, default=6.0, help="s")
  parser.add_argument("--every", type=float, default=2.0, help="s between lines")
  args = parser.parse_args()
  scenario = crossing.crossing.scenario_for()
  scenario = dataclasses.replace(scenario, duration=args.duration)
  xml, _ = CuspSolver().scene(scenario, n_elements=args.elements, n_frames=101)
  m = _load_text(xml)
  d = cusp.make_data(m)
  lengths = [cusp.total_length(m, i) for i in range(2)]
  if args.push:
    cusp.apply_force(m, d, 0, lengths[0] / 2, [0.0, args.push, 0.0])
  pushing = bool(args.push)
  every = max(1, round(args.every / m.opt.timestep))
  for k in range(round(args.duration / m.opt.timestep)):
    if pushing and d.time >= args.push_until:
      cusp.apply_force(m, d, 0, lengths[0] / 2)
      pushing = False
    mujoco.mj_step(m, d)
    if (k + 1) % every == 0:
      lower = cusp.backbone_point(m, d, 0, lengths[0] / 2)[0]
      upper = cusp.backbone_point(m, d, 1, lengths[1] / 2)[0]
      total = potential(m, d, 0) + potential(m, d, 1)
      print(f"t = {d.time:5.2f} s: lower middle y {1e3 * lower[1]:+8.3f} mm, upper middle y {1e3 * upper[1]:+8.3f} mm "
            f"z {1e3 * upper[2]:8.3f} mm, potential energy {1e3 * total:.4f} mJ", flush=True)
  gap, arc = least_gap(m, d, lengths)
  print(f"at the end: least centreline distance less a diameter {1e3 * gap:+.4f} mm, "
        f"{1e3 * arc:+.2f} mm along the upper rope from its middle")


if __name__ == "__main__":
  main()
