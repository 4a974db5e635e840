"""A fingerprint of a scene's trajectory, to show that a change leaves its doubles as they were.

Steps SCENE for STEPS steps and prints one JSON line: the SHA-256 (first 16 hex digits) of MuJoCo's
integration state (mjSTATE_INTEGRATION: time, qpos, qvel, act, ..., plugin state included) after
every step. Two libraries that compute the same doubles print the same hash; a change in the last
bit of any step's state changes it. With --every N, also the hash so far every N steps, to find
the first step that differs.

  PYTHONPATH=python CUSP_LIBRARY=build/libcusp.so .venv/bin/python bench/state_hash.py \\
      bench/scenes/rope_plane_tiled.xml 150 --key rod0.lcp_matrix=operator
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys

import mujoco
import numpy

import cusp


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("scene", help="an MJCF file with cusp instances")
  parser.add_argument("steps", type=int)
  parser.add_argument("--key", action="append", default=[], metavar="INSTANCE.KEY=VALUE",
                      help="a plugin key overridden on loading (repeatable)")
  parser.add_argument("--every", type=int, default=0, metavar="N", help="also print the hash every N steps")
  args = parser.parse_args()
  if args.steps < 1:
    parser.error(f"steps = {args.steps}: at least 1")
  model = cusp.load(args.scene, args.key or None)
  data = cusp.make_data(model)
  spec = mujoco.mjtState.mjSTATE_INTEGRATION
  state = numpy.zeros(mujoco.mj_stateSize(model, spec))
  digest = hashlib.sha256()
  for step in range(1, args.steps + 1):
    mujoco.mj_step(model, data)
    mujoco.mj_getState(model, data, state, spec)
    if not numpy.all(numpy.isfinite(state)):
      print(json.dumps({"scene": args.scene, "keys": args.key, "failed": f"non-finite state at step {step}"}))
      return 1
    digest.update(state.tobytes())
    if args.every and step % args.every == 0 and step < args.steps:
      print(json.dumps({"step": step, "hash": digest.hexdigest()[:16]}), flush=True)
  print(json.dumps({"scene": args.scene, "keys": args.key, "steps": args.steps, "hash": digest.hexdigest()[:16]}))
  return 0


if __name__ == "__main__":
  sys.exit(main())
