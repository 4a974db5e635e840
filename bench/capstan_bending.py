"""The heavy-rope capstan threshold of cosseratbench's capstan, for a rope WITH
bending stiffness: the longest heavy-side overhang at which the rod still holds,
as a fraction of cosseratbench's flexible-rope threshold h2*.

An independent reference for cusp's capstan (docs/capstan.md), not cusp code:
planar, inextensible, from the equations below only.

At the onset of gross slip every contact slides toward the heavy side, so the
friction is mu times the normal force everywhere. The rod lies on the wrap (radius
R, to its centre) from the angle psi1 (from the light side's horizontal point) to
pi - psi2; there its curvature is the wrap's, its moment EI / R is constant, so it
carries no shear, and the tension obeys the heavy-rope capstan equation
    dT/dphi = mu T + w R (cos phi + mu sin phi).
Each hanging part is a heavy elastica with a free lower end (no force, no moment)
leaving the wrap tangentially with the wrap's curvature (the moment is continuous):
with theta the tangent's angle from the downward vertical and s the arc length down
from the lift-off point, V(s) = w (L - s) the weight below,
    EI theta'' = V sin theta,  theta(0) = -psi,  theta'(0) = 1/R,  theta'(L) = 0,
which fixes psi (L = the overhang beyond the horizontal point + R psi). At the
lift-off point the hanging part pulls straight down with V(0): its axial part
V cos psi is the tension, its normal part V sin psi a point contact force whose
friction mu V sin psi adds to the wrap's tension on the light side and takes
from it on the heavy side:
    T(psi1) = V1 (cos psi1 + mu sin psi1),  T(pi - psi2) = V2 (cos psi2 - mu sin psi2).
The second is the threshold condition, solved for the heavy overhang. With
EI -> 0 (psi -> 0) this is cosseratbench's h2* (checked below); to first order in
psi the bending terms cancel (cos psi + mu sin psi = e^{mu psi} + O(psi^2)), so
bending moves the threshold by O((sqrt(EI / T) / R)^2).

A rod of radius r has its friction at its surface, r inside its centre line (the
wrap radius R): when the wrap slides, its material turns about the cylinder's axis,
and the surface in contact moves at (1 - r / R) times the centre line's speed, so
the friction takes (1 - r / R) of the power a thin rope's would (in the rod's
statics: the friction's couple about the centre line is carried by a shear force
r mu N, whose turning with the centre line takes r / R of the friction from the
tension). `surface` replaces mu by mu (1 - r / R) in the friction terms above: a
Cosserat rod with rigid cross-sections and contact at its surface, as cusp's
disks make it (their rim is the contact point).

The stiffness variants keep the rope's weight per length and EA and multiply EI by
k: radius x sqrt(k), density and moduli / k (so the wrap radius, R_cylinder + r,
changes too: each variant is compared with its own h2*).

    .venv/bin/python bench/capstan_bending.py [--friction 0.3] [--stiffness 1 0.0625 4]
prints JSON: per bending-stiffness factor, the threshold as a fraction of h2*, for
friction at the centre line (thin rope) and at the surface.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from scipy.integrate import solve_bvp, solve_ivp
from scipy.optimize import brentq

from cosseratbench.experiments import capstan as cb


def rope(stiffness_factor: float = 1.0):
  """Weight per length w (N/m), bending stiffness EI (N m^2), wrap radius R (m) and
  rod radius r (m) of the variant with k times the bending stiffness (k = 0: none)."""
  k = stiffness_factor
  r = cb.RADIUS * np.sqrt(k) if k > 0 else cb.RADIUS
  w = cb.MATERIAL.density * np.pi * cb.RADIUS ** 2 * cb.GRAVITY   # kept
  ei = cb.MATERIAL.youngs_modulus * np.pi * cb.RADIUS ** 4 / 4 * k
  return w, ei, cb.CYLINDER_RADIUS + r, r


def flexible_threshold(mu: float, R: float, short: float = cb.SHORT_SIDE) -> float:
  """cosseratbench's h2* at wrap radius R."""
  ratio = np.exp(mu * np.pi)
  return float(ratio * short + R * 2 * mu / (1 + mu ** 2) * (ratio + 1))


def lift_off(overhang: float, w: float, ei: float, R: float) -> float:
  """The lift-off angle psi of a part hanging `overhang` beyond the horizontal point."""
  if ei == 0:
    return 0.0
  psi = np.sqrt(ei / (w * overhang)) / R    # first order: the bending length over R
  for _ in range(60):
    L = overhang + R * psi
    lam = np.sqrt(ei / (w * L))
    # mesh dense within a few bending lengths of the top, where theta changes
    s = np.unique(np.concatenate([np.linspace(0, min(L, 12 * lam), 400), np.linspace(0, L, 200)]))
    guess = np.vstack([-psi * np.exp(-s / lam), psi / lam * np.exp(-s / lam)])

    def f(s, y, p):
      return np.vstack([y[1], w * (L - s) * np.sin(y[0]) / ei])

    def bc(ya, yb, p):
      return np.array([ya[0] + p[0], ya[1] - 1 / R, yb[1]])

    sol = solve_bvp(f, bc, s, guess, p=[psi], tol=1e-10, max_nodes=200000)
    if sol.status != 0:
      raise RuntimeError(f"elastica BVP did not converge: {sol.message}")
    new = float(sol.p[0])
    if abs(new - psi) < 1e-13:
      return new
    psi = new
  return psi


def wrap_tension(t0: float, a: float, b: float, mu: float, w: float, R: float) -> float:
  """The heavy-rope capstan equation at slip from angle a (tension t0) to b."""
  sol = solve_ivp(lambda phi, T: mu * T + w * R * (np.cos(phi) + mu * np.sin(phi)), (a, b), [t0],
                  rtol=1e-12, atol=1e-15)
  return float(sol.y[0, -1])


def threshold(mu: float, stiffness_factor: float = 1.0, surface: bool = False,
              short: float = cb.SHORT_SIDE) -> float:
  """The longest heavy overhang (m) that holds."""
  w, ei, R, r = rope(stiffness_factor)
  if surface:
    mu = mu * (1 - r / R)
  psi1 = lift_off(short, w, ei, R)
  V1 = w * (short + R * psi1)
  T_in = V1 * (np.cos(psi1) + mu * np.sin(psi1))

  def excess(h2):
    psi2 = lift_off(h2, w, ei, R)
    V2 = w * (h2 + R * psi2)
    return wrap_tension(T_in, psi1, np.pi - psi2, mu, w, R) - V2 * (np.cos(psi2) - mu * np.sin(psi2))

  guess = flexible_threshold(mu, R, short)
  return brentq(excess, 0.5 * guess, 1.5 * guess, xtol=1e-12)


def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--friction", type=float, nargs="+", default=[0.3])
  ap.add_argument("--stiffness", type=float, nargs="+", default=[0.0625, 1.0, 4.0],
                  help="bending stiffness as a multiple of cosseratbench's rope's")
  a = ap.parse_args()
  out = []
  for mu in a.friction:
    flexible = cb.holding_overhang(mu)
    rigidless = threshold(mu, 0.0)
    assert abs(rigidless / flexible - 1) < 1e-9, (rigidless, flexible)   # EI -> 0 is h2*
    for k in a.stiffness:
      w, ei, R, r = rope(k)
      own = flexible_threshold(mu, R)
      thin, surface = threshold(mu, k), threshold(mu, k, surface=True)
      out.append({"friction": mu, "stiffness_factor": k, "EI": ei, "rod_radius": r, "wrap_radius": R,
                  "lift_off_light_rad": lift_off(cb.SHORT_SIDE, w, ei, R),
                  "lift_off_heavy_rad": lift_off(thin, w, ei, R),
                  "flexible_threshold_m": own, "threshold_thin_m": thin, "threshold_surface_m": surface,
                  "fraction_thin": thin / own, "fraction_surface": surface / own})
  print(json.dumps(out, indent=1))


if __name__ == "__main__":
  main()
