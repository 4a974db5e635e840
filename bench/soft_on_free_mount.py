"""A short cosserat rod on a light free-jointed mount body, dropped across a longer rod clamped
to the world: a soft-soft contact (lcp model, or --contact) where one arm's mount moves. Such an arm is
coupled implicitly with its mount; its contact with another soft arm has the MuJoCo system
as a third participant (plugin/mount.c). Until session 28 such a contact fell back to the
partitioned treatment, which blew up (docs/soft_soft_mount.md). One JSON line per (mount
mass, mount inertia) combination:
outcome "completed" or "blew up" (MuJoCo's mjWARN_BADQACC counter, or a non-finite state), the
time of the step that blew up, the deepest contact gap, the mount's largest excursions in
height, the upper rod's middle point's lowest height, and the steps that had a soft-soft
contact. Exit code 1 when any combination blew up.

  --mount free     the upper rod on a free joint (the case that blows up)
  --mount weld     no joint: the upper rod's mount fixed where it starts (a plain crossing)
  --lower capsule  a rigid capsule instead of the lower rod (the coupled mount path)
  --side below     the short rod starts below the long one (with --mount weld: a loaded crossing)

  PYTHONPATH=python CUSP_LIBRARY=build/libcusp.so OPENBLAS_NUM_THREADS=1 \\
    .venv/bin/python bench/soft_on_free_mount.py --h 0.002 --gap 0.002 --mass 0.1,1e-4 --inertia 1e-9,1e-6
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile

import mujoco
import numpy as np

import cusp

ROD = """<instance name="{name}">
  <config key="model" value="cosserat"/><config key="sections" value="{sections}"/>
  <config key="length" value="{section:.9f}"/><config key="radius" value="0.005"/>
  <config key="density" value="1000"/><config key="young" value="1e7"/>
  <config key="strains" value="kx ky kz ex ey ez"/><config key="disks" value="{sections}"/>
  <config key="disk_radius" value="0.005"/><config key="disk_thickness" value="{thickness:.9f}"/>
  <config key="contact" value="{contact}"/><config key="actuated" value="none"/>
  <config key="self_contact" value="{self_contact}"/></instance>"""

# The lower rod (8 sections, 20 cm) is clamped at x = -0.1 along +x; the upper (4 sections, 5 cm)
# hangs from its mount at y = -0.025 along +y, across the lower one near x = -0.005.
SCENE = """<mujoco model="soft_on_free_mount">
  <option timestep="{h}" gravity="0 0 -9.81"/>
  <extension><plugin plugin="cusp.softbody">{rods}</plugin></extension>
  <worldbody>
    {lower}
    <body name="mount" pos="-0.005 -0.025 {z0}" euler="-90 0 0">{joint}
      <inertial pos="0 0 0" mass="{mass}" diaginertia="{inertia} {inertia} {inertia}"/>
      <plugin instance="up"/></body>
  </worldbody>
</mujoco>"""

LOWER_ROD = '<body name="base" pos="-0.1 0 0" euler="0 90 0"><plugin instance="low"/></body>'
LOWER_CAPSULE = '<geom type="capsule" fromto="-0.1 0 0 0.1 0 0" size="0.005"/>'


def scene(a, mass: float, inertia: float) -> str:
  rods = ""
  low_len, up_len = (float(x) for x in a.rod_lengths.split(","))
  low_disk, up_disk = (low_len / 8, up_len / 4) if a.disk_thickness is None else \
      (float(x) for x in a.disk_thickness.split(","))
  if a.lower == "rod":
    rods += ROD.format(name="low", sections=8, section=low_len / 8, thickness=low_disk, self_contact=a.self_contact,
                       contact=a.contact)
  rods += ROD.format(name="up", sections=4, section=up_len / 4, thickness=up_disk, self_contact=a.self_contact,
                     contact=a.contact)
  return SCENE.format(h=a.h, rods=rods, lower=LOWER_ROD if a.lower == "rod" else LOWER_CAPSULE,
                      z0=(0.01 + a.gap) * (1 if a.side == "above" else -1), joint="<freejoint/>" if a.mount == "free" else "",
                      mass=mass, inertia=inertia)


def first_lcp_mobility(m, d, t: float, out: dict) -> None:
  """At the first step whose LCP holds a contact: its normal rows' diagonal, the normal velocity
  per unit normal impulse (1/kg) each contact's bodies give as the LCP sees them."""
  A, _ = cusp.lcp(m, d)
  info = cusp.report(m, d)["info"]
  if A.shape[0] == 0 or info["nkept"] <= 0:
    return
  block = info["nvar"] // info["nkept"]   # [fn, beta_1..beta_r, gamma] per kept contact
  out["first_lcp_time"] = t
  out["first_lcp_normal_diag"] = [float(A[i, i]) for i in range(0, A.shape[0], block)]


def run(a, mass: float, inertia: float) -> dict:
  with tempfile.TemporaryDirectory(prefix="cusp-softmount-") as tmp:   # cusp.load reads a file
    path = os.path.join(tmp, "scene.xml")
    with open(path, "w") as f:
      f.write(scene(a, mass, inertia))
    m = cusp.load(path)
  d = cusp.make_data(m)
  up = cusp.instance_find(m, "up")
  mount = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "mount")
  bad = int(mujoco.mjtWarning.mjWARN_BADQACC)
  z0 = float(m.body_pos[mount][2])   # a child of the world: its start height
  out = {"h": a.h, "gap": a.gap, "mass": mass, "inertia": inertia, "mount": a.mount, "lower": a.lower,
         "contact": a.contact,
         "outcome": "completed", "time": None, "deepest_gap": None, "mount_rise": 0.0, "mount_drop": 0.0,
         "upper_mid_min_z": None, "soft_soft_steps": 0, "steps": 0, "first_lcp_time": None,
         "first_lcp_normal_diag": None}
  deepest = math.inf
  mid_min = math.inf
  for _ in range(int(round(a.duration / a.h))):
    t = float(d.time)
    mujoco.mj_step(m, d)
    out["steps"] += 1
    if d.warning[bad].number > 0 or not (np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel))):
      out["outcome"], out["time"] = "blew up", t
      break
    cs = cusp.contacts(m, d)
    if a.trace:
      w = d.qvel[3:6] if a.mount == "free" else np.zeros(3)
      print(json.dumps({"t": float(d.time), "min_gap": min([float(c["gap"]) for c in cs], default=None),
                        "normal_impulse": sum(float(c["normal_impulse"]) for c in cs),
                        "mount_z": float(d.xpos[mount][2]), "mount_omega": [float(x) for x in w]}))
    if out["first_lcp_time"] is None:
      first_lcp_mobility(m, d, t, out)
    if any(c["other_instance"] >= 0 for c in cs):
      out["soft_soft_steps"] += 1
    deepest = min([deepest] + [float(c["gap"]) for c in cs])
    dz = float(d.xpos[mount][2]) - z0
    out["mount_rise"], out["mount_drop"] = max(out["mount_rise"], dz), max(out["mount_drop"], -dz)
    p = cusp.backbone_point(m, d, up, 0.025)[0]
    if not np.all(np.isfinite(p)):
      out["outcome"], out["time"] = "blew up", t
      break
    mid_min = min(mid_min, float(p[2]))
  if out["outcome"] == "completed":
    out["time"] = float(d.time)
  out["deepest_gap"] = None if math.isinf(deepest) else deepest
  out["upper_mid_min_z"] = None if math.isinf(mid_min) else mid_min
  return out


def markdown(rows: list) -> str:
  """Mass down, inertia across: blew up (when), else whether the rod slid off the lower one (the
  mount more than 10 cm below its start at some time) and the mount's largest rise above its start."""
  masses = sorted({r["mass"] for r in rows})
  inertias = sorted({r["inertia"] for r in rows})
  cell = {(r["mass"], r["inertia"]): r for r in rows}
  out = ["| mass kg \\ inertia kg m^2 | " + " | ".join(f"{i:g}" for i in inertias) + " |",
         "|" + "---|" * (len(inertias) + 1)]
  for mass in masses:
    cells = []
    for i in inertias:
      r = cell[(mass, i)]
      if r["outcome"] != "completed":
        cells.append(f"**blew up** {r['time']:.3f} s")
      else:
        cells.append(f"{'fell off' if r['mount_drop'] > 0.1 else 'stays'}, rise {1000 * r['mount_rise']:.0f} mm")
    out.append(f"| {mass:g} | " + " | ".join(cells) + " |")
  return "\n".join(out)


def main() -> int:
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("--h", type=float, default=0.002, help="s, the time step")
  p.add_argument("--gap", type=float, default=0.002, help="m, the rods' surfaces apart at the start")
  p.add_argument("--mass", default="0.1", help="kg, the mount's mass; a comma list sweeps")
  p.add_argument("--inertia", default="1e-9", help="kg m^2, the mount's diagonal inertia; a comma list sweeps")
  p.add_argument("--duration", type=float, default=0.3, help="s")
  p.add_argument("--mount", choices=("free", "weld"), default="free")
  p.add_argument("--lower", choices=("rod", "capsule"), default="rod")
  p.add_argument("--side", choices=("above", "below"), default="above",
                 help="the upper rod's start: above the lower one, or below it (with --mount weld the "
                      "lower rod then sags onto it: a loaded crossing)")
  p.add_argument("--self-contact", type=int, default=0)
  p.add_argument("--rod-lengths", default="0.2,0.05",
                 help="m, the lower and the upper rod's lengths (8 and 4 sections)")
  p.add_argument("--disk-thickness", default=None,
                 help="m, the lower and the upper rod's disk thickness (default: filling their sections); session "
                      "27's tables: --rod-lengths 1.6,0.2 --disk-thickness 0.025,0.0125")
  p.add_argument("--contact", choices=("lcp", "sap", "ncp", "penalty"), default="lcp",
                 help="both rods' contact model")
  p.add_argument("--trace", action="store_true", help="also one JSON line per step: the contacts' least gap and "
                 "summed normal impulse, the mount's height and angular velocity (its free joint's, body axes)")
  p.add_argument("--markdown", action="store_true", help="after the JSON lines, the sweep as a markdown table")
  a = p.parse_args()
  warnings = []
  mujoco.set_mju_user_warning(warnings.append)   # keeps MuJoCo's text off the JSON lines
  blew = False
  rows = []
  for mass in (float(x) for x in a.mass.split(",")):
    for inertia in (float(x) for x in a.inertia.split(",")):
      r = run(a, mass, inertia)
      blew |= r["outcome"] != "completed"
      rows.append(r)
      print(json.dumps(r), flush=True)
  if a.markdown:
    print(markdown(rows))
  for w in warnings:
    print(w.strip(), file=sys.stderr)
  return 1 if blew else 0


if __name__ == "__main__":
  sys.exit(main())
