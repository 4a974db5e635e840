"""The classic capstan: the tension ratio at which a rope over a fixed cylinder slips,
against e^(mu theta).

A weightless rope (gravity off) lies over the top half of a fixed cylinder and hangs
straight down on both sides; a downward force T1 holds its light end (on its mount
body, xfrc_applied) and T2 = k T1 its heavy end (cusp.apply_force). The hanging
parts then carry exactly their end loads, so k is the capstan's tension ratio over
theta = pi. Each run settles at k = 1, raises k smoothly to its value, holds it, and
reports how far the light end rose after the settling; a bisection on k finds where
the rope starts to slide.

The reference (`reference_ratio`) is independent of cusp and of its discretization:
- friction at the rope's surface: along the wrap (radius R, rho = r_c / R) the rod's
  balance with tension T, shear V and normal load N per length reads
      T' = V / R + mu N,   N = T / R + V',   V = -r_c mu N,
  the last from the moments: the bending moment is constant where the rope follows the
  wrap, so shear carries the couple of the friction, which acts r_c inside the centre
  line (the disks' rim). So T' = mu (1 - rho) N: the shear's turning takes rho of the
  friction from the tension (docs/capstan.md, section 2); and its growth along the wrap
  takes from the normal load: with N = c T, x = c R solves rho mu^2 (1 - rho) x^2 + x = 1.
  Along the wrap, dT/dphi = mu' T with mu' = mu (1 - rho) x;
- bending: each hanging part is an elastica under its end load T, straight far from
  the cylinder; it leaves the wrap at phi_i before the horizontal, where its curvature
  is still 1 / R, so by the elastica's first integral 1 - cos phi_i = EI / (2 T_i R^2),
  and the shear T_i sin phi_i it carries there is a point contact whose friction acts
  with the wrap's: on the light side it adds, on the heavy side it takes,
      T2 / T1 = e^(mu' (pi - phi1 - phi2)) (cos phi1 + mu' sin phi1) / (cos phi2 - mu' sin phi2),
  (the lift-off terms cancel e^(mu' phi) to first order, so which coefficient they
  carry is of second order).
The disks' radius (the contact's offset r_c, key disk_radius) is set apart from the
rod's own (its stiffness), so that r_c's part can be measured alone.

  PYTHONPATH=python CUSP_LIBRARY=build/libcusp.so .venv/bin/python bench/capstan_ratio.py \
      [--elements 50] [--contact-radius 0.001 0.005] [--friction 0.3]
prints one JSON line per contact radius; --quick brackets fewer times; --plot PNG draws
the thresholds against the offset (--from FILE: from the lines an earlier run printed).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
import xml.etree.ElementTree as ET

import mujoco
import numpy as np

import cusp
import cusp.cosseratbench_adapter as ad
from cosseratbench.scenario import Cylinder, Material, Rod, Scenario

ROD_RADIUS = 0.001          # m: the rope's cross-section (stiffness and mass)
MATERIAL = Material(youngs_modulus=3e5, shear_modulus=1e5, density=1000.0)   # cosseratbench's capstan rope
WRAP_RADIUS = 0.051         # m: the centre line's radius on the cylinder (cylinder + r_c): cosseratbench's capstan's
HANGING = 0.05              # m of rope hanging straight on each side
STRAIN = 0.01               # the light side's tension T1 as a share of EA
RELAXATION = 0.01           # s: Kelvin-Voigt viscosity / modulus (settles a run, holds nothing)
SETTLE = 0.2                # s at k = 1
RAMP = 0.3                  # s to raise k to its value
HOLD = 1.0                  # s at its value: near the threshold a rope slides off slowly
SLIDES = 1e-3               # m: a light end risen this far slides (a holding rope settles within 0.2 mm)


def stiffness():
  area = math.pi * ROD_RADIUS ** 2
  return MATERIAL.youngs_modulus * area, MATERIAL.youngs_modulus * math.pi * ROD_RADIUS ** 4 / 4


def light_tension() -> float:
  return STRAIN * stiffness()[0]


def reference_ratio(mu: float, contact_radius: float, wrap: float = WRAP_RADIUS,
                    bending: float | None = None, t1: float | None = None) -> float:
  """The tension ratio at which the rope slides (module docstring); bending=0 gives the
  thick rope without bending, bending=0 and contact_radius=0 the thin rope, e^(mu pi)."""
  ei = stiffness()[1] if bending is None else bending
  t1 = light_tension() if t1 is None else t1
  rho = contact_radius / wrap
  a = rho * mu * mu * (1.0 - rho)   # the shear's growth's share of the normal load
  x = 1.0 if a == 0.0 else 2.0 / (1.0 + math.sqrt(1.0 + 4.0 * a))   # root of a x^2 + x = 1
  m = mu * (1.0 - rho) * x

  def lift_off(t):
    c = 1.0 - ei / (2.0 * t * wrap ** 2)
    if c <= 0.0:   # the tail would leave the wrap a quarter turn early: no capstan left
      raise ValueError(f"tension {t:g} N is too low for a rope of bending stiffness {ei:g} N m^2 "
                       f"on radius {wrap:g} m: its lift-off angle would pass 90 degrees")
    return math.acos(c)

  ratio = math.exp(m * math.pi)
  for _ in range(100):   # phi2 depends on T2: a fixed point, contracting fast (phi2 small)
    p1, p2 = lift_off(t1), lift_off(ratio * t1)
    new = math.exp(m * (math.pi - p1 - p2)) * (math.cos(p1) + m * math.sin(p1)) / (math.cos(p2) - m * math.sin(p2))
    if abs(new - ratio) < 1e-14 * ratio:
      break
    ratio = new
  return new


def scene(elements: int, contact_radius: float, mu: float, pyramid: int) -> str:
  """The MJCF text: cusp.cosseratbench_adapter's scene of this rope (free start, gravity
  off), with the contact radius, the viscosity and the friction pyramid set here."""
  wrap = WRAP_RADIUS
  per = 400   # polyline points per metre: the plugin fits its sections to them
  leg = np.linspace(0.0, HANGING, int(HANGING * per), endpoint=False)
  phi = np.linspace(0.0, math.pi, int(math.pi * wrap * per) + 1)
  points = np.concatenate([
      np.stack([np.full_like(leg, -wrap), 0 * leg, leg - HANGING], axis=1),
      np.stack([-wrap * np.cos(phi), 0 * phi, wrap * np.sin(phi)], axis=1),
      np.stack([np.full_like(leg, wrap), 0 * leg, -(leg + leg[1])], axis=1),   # after the arc's last point
  ])
  rope = Rod(centerline=tuple(map(tuple, points)), radius=ROD_RADIUS, material=MATERIAL, normal=(0.0, 1.0, 0.0))
  cylinder = Cylinder(center=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0), radius=wrap - contact_radius,
                      length=0.05, friction=mu)
  scenario = Scenario(rods=(rope,), obstacles=(cylinder,), duration=SETTLE + RAMP + HOLD,
                      gravity=(0.0, 0.0, 0.0), self_contact=False, quasi_static=False)
  xml, _ = ad.CuspSolver().scene(scenario, n_elements=elements, n_frames=2)
  root = ET.fromstring(xml)
  root.find("option").set("timestep", repr(1e-3))
  for config in root.iter("config"):
    if config.get("key") == "disk_radius":
      config.set("value", repr(contact_radius))
    if config.get("key") == "viscosity":
      config.set("value", repr(RELAXATION * MATERIAL.youngs_modulus))
    if config.get("key") == "pyramid":
      config.set("value", str(pyramid))
  return ET.tostring(root, encoding="unicode")


def rise(xml: str, ratio: float) -> dict:
  """The light end's rise after the settling, at its largest, for tension ratio `ratio`."""
  model = ad._load_text(xml)
  data = cusp.make_data(model)
  length = cusp.total_length(model, 0)
  t1 = light_tension()
  data.xfrc_applied[model.body("rod0_mount").id, :3] = (0.0, 0.0, -t1)
  dt = model.opt.timestep
  settle, ramp, hold = (int(round(x / dt)) for x in (SETTLE, RAMP, HOLD))
  z0, most = None, 0.0
  for step in range(settle + ramp + hold):
    u = min(1.0, max(0.0, (step - settle + 1) / ramp))
    k = 1.0 + (ratio - 1.0) * u * u * (3.0 - 2.0 * u)   # smoothstep: no jolt at either end
    cusp.apply_force(model, data, 0, length, np.array([0.0, 0.0, -k * t1]))
    mujoco.mj_step(model, data)
    z = cusp.backbone_point(model, data, 0, 0.0)[0][2]
    if not math.isfinite(z):
      raise FloatingPointError(f"non-finite state at step {step} (ratio {ratio})")
    report = cusp.report(model, data)
    if report is not None and report["nan_events"]:
      raise FloatingPointError(f"cusp: {report['message']} (ratio {ratio})")
    if step + 1 == settle:
      z0 = z
    if z0 is not None:
      most = max(most, z - z0)
      if most > SLIDES:
        break
  return {"ratio": ratio, "rise_m": most, "slides": most > SLIDES}


def bracket(xml: str, low: float, high: float, halvings: int) -> tuple[float, float, list]:
  """A holding ratio and a sliding one, `halvings` bisections from (low, high)."""
  runs = [rise(xml, low), rise(xml, high)]
  if runs[0]["slides"] or not runs[1]["slides"]:
    raise RuntimeError(f"not a bracket: {low} -> {runs[0]['rise_m']:.3g} m, {high} -> {runs[1]['rise_m']:.3g} m")
  for _ in range(halvings):
    middle = 0.5 * (low + high)
    run = rise(xml, middle)
    runs.append(run)
    low, high = (low, middle) if run["slides"] else (middle, high)
  return low, high, runs


def plot(results: list[dict], path: str) -> None:
  """The thresholds found (the bracket as a bar) against r_c / R, with the analytic ratio
  (with and without bending) and issue 16's 2 % about e^(mu pi)."""
  import matplotlib
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  mu = results[0]["friction"]
  thin = math.exp(mu * math.pi)
  offsets = np.linspace(0.0, 1.2 * max(r["contact_radius"] for r in results), 100)
  fig, ax = plt.subplots(figsize=(6.4, 4.2))
  ax.axhspan(0.98, 1.02, color="0.9", label="issue 16: within 2 % of e^(mu pi)")
  ax.plot(offsets / WRAP_RADIUS, [reference_ratio(mu, rc) / thin for rc in offsets], "k-",
          label="analytic: surface friction and bending")
  ax.plot(offsets / WRAP_RADIUS, [reference_ratio(mu, rc, bending=0.0) / thin for rc in offsets], "k:",
          label="analytic: surface friction, no bending")
  for n, marker in zip(sorted({r["elements"] for r in results}), "os^v"):
    mine = [r for r in results if r["elements"] == n]
    x = np.array([r["contact_radius"] / WRAP_RADIUS for r in mine])
    low = np.array([r["holds_at"] / thin for r in mine])
    high = np.array([r["slides_at"] / thin for r in mine])
    ax.errorbar(x, (low + high) / 2, yerr=(high - low) / 2, fmt=marker, capsize=3, label=f"cusp, {n} elements")
  ax.set_xlabel("contact offset from the centre line r_c / R")
  ax.set_ylabel("tension ratio at which the rope slides / e^(mu pi)")
  ax.set_title(f"Classic capstan, mu = {mu:g}, theta = pi")
  ax.legend(fontsize=8)
  fig.tight_layout()
  fig.savefig(path, dpi=110)
  plt.close(fig)


def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--elements", type=int, nargs="+", default=[50])
  ap.add_argument("--contact-radius", type=float, nargs="+", default=[0.001, 0.005],
                  help="m: the disks' radius, the contact's offset from the centre line")
  ap.add_argument("--friction", type=float, default=0.3)
  ap.add_argument("--pyramid", type=int, default=ad.PYRAMID)
  ap.add_argument("--halvings", type=int, default=5)
  ap.add_argument("--quick", action="store_true", help="3 halvings")
  ap.add_argument("--plot", help="a PNG of the thresholds against the contact offset")
  ap.add_argument("--from", dest="saved", help="measure nothing: the JSON lines an earlier run printed")
  a = ap.parse_args()
  if a.saved:
    with open(a.saved) as f:
      results = [json.loads(line) for line in f if line.strip()]
    if not results:
      raise SystemExit(f"{a.saved}: no results")
    if a.plot:
      plot(results, a.plot)
    return
  halvings = 3 if a.quick else a.halvings
  mu = a.friction
  thin = math.exp(mu * math.pi)
  results = []
  for n in a.elements:
    for rc in a.contact_radius:
      started = time.time()
      expected = reference_ratio(mu, rc)
      xml = scene(n, rc, mu, a.pyramid)
      low, high, runs = bracket(xml, 0.95 * expected, 1.05 * expected, halvings)
      found = 0.5 * (low + high)
      results.append({
          "elements": n, "contact_radius": rc, "wrap_radius": WRAP_RADIUS, "friction": mu,
          "pyramid": a.pyramid, "light_tension": light_tension(),
          "holds_at": low, "slides_at": high,
          "reference": expected, "reference_without_bending": reference_ratio(mu, rc, bending=0.0),
          "e_mu_theta": thin,
          "found_over_reference": found / expected, "found_over_e_mu_theta": found / thin,
          "runs": [{"ratio": r["ratio"], "rise_m": r["rise_m"]} for r in runs],
          "wall_s": round(time.time() - started, 1)})
      print(json.dumps(results[-1]), flush=True)
      print(f"  r_c {rc}: holds {low:.5f}, slides {high:.5f}; reference {expected:.5f} "
            f"(found/reference {found / expected:.4f}), e^(mu pi) {thin:.5f} (found/that {found / thin:.4f})",
            file=sys.stderr, flush=True)
  if a.plot:
    plot(results, a.plot)


if __name__ == "__main__":
  main()
