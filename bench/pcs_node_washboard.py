"""Why a frictionless contact slides off a node of a piecewise-constant-strain rod: an
independent check in closed form. Issue 16, docs/cosseratbench_variants.md (crossing,
Session 26).

A string under tension T with bending stiffness EI, small slopes, held at w(-D) = w(D) = H
and resting on a point support at y_c (w(y_c) = 0): its energy is
min  int EI w''^2 / 2 + T w'^2 / 2,  with w'' constant on each element of length h (the
rod model cusp's cosserat sections are, linearized). For each support position from a
node (0) to an element's middle (0.5 of an element), the energy with elements of h and
with elements of h / 20 (converged), and their difference, the discretization's excess:
it is largest with the support on a node, so a rod that can slide over its support
(frictionless) is pushed off its nodes. The values are the crossing's: the rope's bending
stiffness (E = 1e6 Pa, radius 5 mm), tension 0.3 N, 2 cm elements.

  .venv/bin/python bench/pcs_node_washboard.py [--element 0.02]
"""

import argparse

import numpy as np

EI = 1e6 * np.pi * 0.005**4 / 4   # N m^2
TENSION = 0.30                    # N
SPAN = 0.8                        # m, -D .. D
SLOPE = 0.1                       # H / D: the far field's V


def energy(support: float, h: float) -> float:
  """Least energy (J) with elements of length h from -D, the support at y = support."""
  n = round(SPAN / h)
  half = n * h / 2
  starts = -half + h * np.arange(n)

  def integral(y: float) -> np.ndarray:   # d w(y) / d k_j for each element's curvature k_j
    u = np.clip(y - starts, 0.0, h)
    return np.where(y - starts > h, h * h / 2 + h * (y - starts - h), u * u / 2)

  # unknowns: w(-D), w'(-D), the curvatures; w'(y) = w'(-D) + sum k_j clip(y - y_j, 0, h)
  gx, gw = np.polynomial.legendre.leggauss(4)
  gx, gw = (gx + 1) / 2 * h, gw / 2 * h
  ys = (starts[:, None] + gx[None, :]).ravel()
  rows = np.hstack([np.zeros((len(ys), 1)), np.ones((len(ys), 1)), np.clip(ys[:, None] - starts[None, :], 0.0, h)])
  weights = np.tile(gw, n)
  Q = TENSION * rows.T @ (weights[:, None] * rows)
  Q[2:, 2:] += EI * h * np.eye(n)
  C = np.array([np.concatenate([[1.0, 0.0], np.zeros(n)]),
                np.concatenate([[1.0, 2 * half], integral(half)]),
                np.concatenate([[1.0, support + half], integral(support)])])
  b = np.array([SLOPE * half, SLOPE * half, 0.0])
  kkt = np.block([[Q, C.T], [C, np.zeros((3, 3))]])
  x = np.linalg.solve(kkt, np.concatenate([np.zeros(n + 2), b]))[:n + 2]
  return float(0.5 * x @ Q @ x)


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--element", type=float, default=0.02, help="m")
  h = parser.parse_args().element
  print(f"bending length sqrt(EI/T) = {np.sqrt(EI / TENSION) * 1e3:.1f} mm, elements of {h * 1e3:g} mm")
  fractions = np.linspace(0.0, 0.5, 26)
  coarse = np.array([energy(f * h, h) for f in fractions])
  fine = np.array([energy(f * h, h / 20) for f in fractions])
  for f, e, r in zip(fractions[::5], coarse[::5], fine[::5]):
    print(f"support {f:.1f} element from a node: energy {e:.10f} J, converged {r:.10f} J, excess {e - r:.4e} J")
  step = fractions[1] * h
  print(f"stiffness against sliding at the node: {2 * (coarse[1] - coarse[0]) / step**2:+.4f} J/m^2 "
        f"(converged {2 * (fine[1] - fine[0]) / step**2:+.4f}); least energy {fractions[np.argmin(coarse)] * h * 1e3:.2f} mm "
        f"from the node")


if __name__ == "__main__":
  main()
