"""The key lemke_form reaches the contact solve: on bench/scenes/rope_plane_tiled.xml (a rope lying
along a plane, whose warm pivot fails on most steps, so Lemke runs; its LCPs have hundreds of
unknowns, above auto's threshold), every step whose Lemke ran must report
(sb_lcp_info.lemke_form, in the step report's info.lcp) the form the key names: tableau 0,
revised 1, and auto, the default, revised at this size. The rope must lie the same either way
(the two forms follow the same pivoting rules)."""
import pathlib

import mujoco
import numpy as np

import cusp

SCENE = pathlib.Path(__file__).resolve().parents[2] / "bench" / "scenes" / "rope_plane_tiled.xml"
STEPS = 8


def _run(form):
  m = cusp.load(str(SCENE), {} if form is None else {"rod0.lemke_form": form})
  d = cusp.make_data(m)
  ran = []
  for step in range(1, STEPS + 1):
    mujoco.mj_step(m, d)
    r = cusp.report(m, d)
    assert r["message"] == "", f"lemke_form={form}, step {step}: {r['message']}"
    assert r["info"]["lcp"]["status_name"] == "solved", f"lemke_form={form}, step {step}: not solved"
    ran.append(r["info"]["lcp"]["lemke_form"])
  tip, _ = cusp.tip_pose(m, d, "rod0")
  return ran, tip


def test_lemke_form_key_runs_that_form():
  tips = {}
  for form, want in (("tableau", 0), ("revised", 1), (None, 1)):
    ran, tips[form] = _run(form)
    lemke = [f for f in ran if f >= 0]
    assert len(lemke) >= STEPS // 2, f"lemke_form={form}: Lemke ran on {len(lemke)} of {STEPS} steps ({ran})"
    assert all(f == want for f in lemke), f"lemke_form={form}: Lemke ran in forms {ran} (want {want})"
  for form in ("revised", None):
    dtip = np.abs(tips[form] - tips["tableau"]).max()
    assert dtip <= 1e-6, f"lemke_form={form}: the tip lies {dtip} m from the tableau's"
