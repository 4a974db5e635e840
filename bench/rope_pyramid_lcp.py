"""A synthetic contact LCP of a rope's size, written as a .dat file (the peer set's format, as
cusp-sim --dump-lcp writes it), for Lemke at n in the thousands when no scene's dump is that big:
a rope of NODES nodes of 6 dofs (unit mass), CONTACTS contacts spread along it, each on the 12 dofs
of two neighbouring nodes (a random 3 x 12 Jacobian), W = J J^T (rank at most 6 NODES, below 3 CONTACTS),
friction pyramids of 4 directions ([normal, beta_1..4, gamma] per contact, the blocks
sb_contact_solve assembles), free velocities approaching (normal -0.5 .. -1, tangential within
0.5). Deterministic for a seed.

  .venv/bin/python bench/rope_pyramid_lcp.py OUT.dat [--nodes 100] [--contacts 360] [--mu 0.3]
"""
from __future__ import annotations

import argparse

import numpy


def pyramid_lcp(J: numpy.ndarray, v: numpy.ndarray, mu: float) -> tuple[numpy.ndarray, numpy.ndarray]:
  m = v.shape[0] // 3
  W = J @ J.T
  D = numpy.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
  # per contact, the map from [fn, beta_1..4] to the impulse (t1, t2, n) and back
  E = numpy.zeros((3 * m, 5 * m))
  for c in range(m):
    E[3 * c + 2, 5 * c] = 1.0
    E[3 * c:3 * c + 2, 5 * c + 1:5 * c + 5] = D.T
  A5 = E.T @ W @ E
  q5 = E.T @ v
  n = 6 * m
  M = numpy.zeros((n, n))
  q = numpy.zeros(n)
  idx = numpy.array([6 * c + k for c in range(m) for k in range(5)])
  M[numpy.ix_(idx, idx)] = A5
  q[idx] = q5
  for c in range(m):
    r = 6 * c
    M[r + 1:r + 5, r + 5] = 1.0   # w_beta_k: ... + gamma
    M[r + 5, r + 1:r + 5] = -1.0  # w_gamma = mu fn - sum beta
    M[r + 5, r] = mu
  return M, q


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("out")
  parser.add_argument("--nodes", type=int, default=100)
  parser.add_argument("--contacts", type=int, default=360)
  parser.add_argument("--mu", type=float, default=0.3)
  parser.add_argument("--seed", type=int, default=1)
  args = parser.parse_args()
  if args.nodes < 2 or args.contacts < 1 or not args.mu > 0:
    raise SystemExit("rope_pyramid_lcp: --nodes >= 2, --contacts >= 1 and --mu > 0")
  rng = numpy.random.default_rng(args.seed)
  m, ndof = args.contacts, 6 * args.nodes
  J = numpy.zeros((3 * m, ndof))
  v = numpy.zeros(3 * m)
  for c in range(m):
    node = c * (args.nodes - 1) // m  # spread along the rope: one connected problem
    J[3 * c:3 * c + 3, 6 * node:6 * node + 12] = rng.uniform(-1, 1, (3, 12))
    v[3 * c:3 * c + 2] = rng.uniform(-0.5, 0.5, 2)
    v[3 * c + 2] = -0.5 - 0.5 * rng.uniform()
  M, q = pyramid_lcp(J, v, args.mu)
  n = M.shape[0]
  with open(args.out, "w") as f:
    f.write(f"{n}\n0\n{n}\n{n}\n{n}\t{n}\n")
    for col in M.T:  # column by column, as sb_lcp_read_dat reads a dense matrix
      f.write(" ".join(f"{x:.17e}" for x in col) + "\n")
    f.write(" ".join(f"{x:.17e}" for x in q) + "\n")
  return 0


if __name__ == "__main__":
  raise SystemExit(main())
