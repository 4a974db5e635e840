"""A short rod hanging from a mocap mount driven straight down at constant speed, its free
end disk on a plane: the smallest form of the pile's sinking end disk (docs/contact_scaling.md,
"the rope's end disk sinks into the floor"). Per step one JSON line: time, the rod's tip height
after the step (the end disk's centre; 2.5 mm = its face on the plane), the mount's move before
the step, the contacts and the report's max_penetration (measured at the step's start, after
the move). Before the plugin gave a mocap mount its last move / h as velocity, the
penetration settled at (mount's move per step) / stabilization; now it stays at rounding.

  PYTHONPATH=python CUSP_LIBRARY=build/libcusp.so .venv/bin/python bench/driven_mount_on_floor.py
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile

import mujoco

import cusp

XML = """<mujoco model="driven_mount_on_floor">
  <option timestep="{h}" gravity="0 0 -9.81"/>
  <extension><plugin plugin="cusp.softbody"><instance name="rod">
    <config key="model" value="cosserat"/>
    <config key="sections" value="{sections}"/>
    <config key="length" value="{section_length}"/>
    <config key="radius" value="0.0025"/>
    <config key="density" value="1000"/>
    <config key="young" value="1e6"/>
    <config key="shear" value="333333.3333333333"/>
    <config key="viscosity" value="0"/>
    <config key="strains" value="kx ky kz ex ey ez"/>
    <config key="disks" value="2"/>
    <config key="disk_radius" value="0.0025"/>
    <config key="disk_thickness" value="0.005"/>
    <config key="friction" value="0.3"/>
    <config key="contact" value="lcp"/>
    <config key="actuated" value="none"/>{extra}
  </instance></plugin></extension>
  <worldbody>
    <geom type="plane" size="0 0 1"/>
    <body name="mount" pos="0 0 {z0}" quat="0 1 0 0" mocap="true"><plugin instance="rod"/></body>
  </worldbody>
</mujoco>"""


def main() -> int:
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("--speed", type=float, default=0.4, help="m/s, the mount's descent")
  p.add_argument("--h", type=float, default=1e-3, help="s, the time step")
  p.add_argument("--steps", type=int, default=60)
  p.add_argument("--sections", type=int, default=10)
  p.add_argument("--length", type=float, default=0.1)
  p.add_argument("--start-gap", type=float, default=0.004, help="m, the end disk's face above the plane")
  p.add_argument("--stabilization", type=float, help="the instance's key stabilization (default: the key's)")
  a = p.parse_args()
  z0 = a.length + 0.0025 + a.start_gap   # the end disk (thickness 5 mm) centred on the rod's end
  with tempfile.TemporaryDirectory(prefix="cusp-sink-") as tmp:   # cusp.load reads a file
    path = os.path.join(tmp, "scene.xml")
    with open(path, "w") as f:
      f.write(XML.format(h=a.h, sections=a.sections, section_length=a.length / a.sections, z0=z0,
                         extra="" if a.stabilization is None else
                         f'\n    <config key="stabilization" value="{a.stabilization}"/>'))
    m = cusp.load(path)
  d = cusp.make_data(m)
  mujoco.mj_forward(m, d)
  for k in range(a.steps):
    before = d.mocap_pos[0, 2]
    d.mocap_pos[0, 2] = z0 - a.speed * (k + 1) * a.h
    mujoco.mj_step(m, d)
    mujoco.mj_kinematics(m, d)
    r = cusp.report(m, d)
    tip, _ = cusp.tip_pose(m, d)   # after the step, before the next move of the mount
    print(json.dumps({"t": round(d.time, 6), "tip_z_mm": round(1e3 * tip[2], 4),
                      "mount_step_mm": round(1e3 * (before - d.mocap_pos[0, 2]), 6),
                      "ncontact": r["ncontact"], "max_penetration_mm": 1e3 * r["max_penetration"],
                      "message": r["message"]}), flush=True)
  return 0


if __name__ == "__main__":
  raise SystemExit(main())
