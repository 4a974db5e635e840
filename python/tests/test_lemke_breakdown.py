"""Lemke's answer that is off by far more than round-off is retried, not handed to FB.

The fourth step of the 72-element lying tiled rope (bench/scenes/rope_plane_tiled.xml with
72 sections: about 150 contacts kept, about 1500 LCP unknowns, read from the kept operator)
ends one of its cold Lemke runs on a complementary basis whose answer misses its LCP far
beyond round-off: by 6.5e3 in a row with OpenBLAS's Haswell/Zen kernels (in both of Lemke's
forms), by 1e-7 of its row's terms with the Nehalem ones; with others Lemke ends on a ray
there, or solves. The chain used to take such an answer for one that failed the acceptance
test by round-off and run FB (twice: from the guess and from zero, 50 Newton iterations each
on the 1490 x 1490 matrix) and PGS, which all failed: tens of seconds for a step that
otherwise takes a few. lemke_broken (softbody/lcp.c) now sends an answer that misses even a
test 1e3 times looser than the acceptance test to the perturbed retry that a secondary ray
gets, which solves it. The step's solves are counted by sb_contact_info.fallback_solves: 1
before, 0 now; the answer the step commits is the same.

The rope's state after three steps is saved (tests/data/states/rope72_step3.npz, MuJoCo's
integration state with the plugin's), so the test steps once; when the plugin's state
layout changes, regenerate it from the start, and check that the breakdown is still there
(OPENBLAS_CORETYPE=Haswell: without lemke_broken the test must fail), with

  PYTHONPATH=python CUSP_LIBRARY=build/libcusp.so OPENBLAS_NUM_THREADS=1 \\
      .venv/bin/python python/tests/test_lemke_breakdown.py --write-state
"""
import pathlib
import sys

import mujoco
import numpy as np

import cusp

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENE = ROOT / "bench" / "scenes" / "rope_plane_tiled.xml"
STATE = ROOT / "tests" / "data" / "states" / "rope72_step3.npz"
OVERRIDES = {"rod0.sections": "72"}
SPEC = mujoco.mjtState.mjSTATE_INTEGRATION


def _scene():
  m = cusp.load(str(SCENE), OVERRIDES)
  return m, cusp.make_data(m)


def test_broken_lemke_answer_is_retried_without_the_fallbacks():
  m, d = _scene()
  state = np.load(STATE)["state"]
  size = mujoco.mj_stateSize(m, SPEC)
  assert state.size == size, (
      f"{STATE.name} holds {state.size} numbers, the scene's state {size}: the plugin's state layout "
      "changed; regenerate it (this file's docstring)")
  mujoco.mj_setState(m, d, state, SPEC)
  assert abs(d.time - 0.003) < 1e-12
  mujoco.mj_step(m, d)
  r = cusp.report(m, d)
  info = r["info"]
  assert r["message"] == "", r["message"]
  # the premise: a large LCP from the operator, solved cold (Lemke ran)
  assert info["nvar"] >= 1400 and info["operator_passes"] >= 1, (info["nvar"], info["operator_passes"])
  assert info["cold_solves"] >= 1
  assert info["lcp"]["status_name"] == "solved"
  assert info["fallback_solves"] == 0, (
      f"{info['fallback_solves']} of the step's {info['solves']} solves ran the chain's fallbacks")
  # the committed answer solves the step's LCP (physical units, the pipeline's own test)
  assert info["residual"] < 1e-9, info["residual"]
  assert r["max_penetration"] < 1e-6, r["max_penetration"]


def _write_state():
  m, d = _scene()
  for _ in range(3):
    mujoco.mj_step(m, d)
  state = np.empty(mujoco.mj_stateSize(m, SPEC))
  mujoco.mj_getState(m, d, state, SPEC)
  STATE.parent.mkdir(parents=True, exist_ok=True)
  np.savez_compressed(STATE, state=state)
  print(f"wrote {STATE} ({state.size} numbers, t = {d.time})")


if __name__ == "__main__":
  if sys.argv[1:] == ["--write-state"]:
    _write_state()
  else:
    sys.exit("usage: test_lemke_breakdown.py --write-state")
