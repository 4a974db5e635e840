"""The cusp package from this work tree (also without scripts/setup.sh's .pth),
and a sanitizer build of libcusp.so (CUSP_SANITIZE=ON) made loadable: its
ASan and UBSan runtimes must come first in the process, so pytest runs again
with them preloaded (leak checks off: they would report CPython's)."""
import os
import pathlib
import subprocess
import sys

PYTHON_DIR = str(pathlib.Path(__file__).resolve().parents[1])
if PYTHON_DIR not in sys.path:
  sys.path.insert(0, PYTHON_DIR)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (PYTHON_DIR, os.environ.get("PYTHONPATH")) if p)


def _sanitizer_runtimes(lib):
  """Paths of the libasan/libubsan that lib needs (ldd), in that order."""
  try:
    out = subprocess.run(["ldd", lib], capture_output=True, text=True, check=True).stdout
  except (OSError, subprocess.CalledProcessError):
    return []
  found = {}
  for line in out.splitlines():
    parts = line.split()
    if len(parts) >= 3 and parts[1] == "=>" and (parts[0].startswith("libasan") or parts[0].startswith("libubsan")):
      found[parts[0].split(".")[0]] = parts[2]
  return [found[k] for k in ("libasan", "libubsan") if k in found]


def pytest_configure(config):
  lib = os.environ.get("CUSP_LIBRARY")
  runtimes = _sanitizer_runtimes(lib) if lib else []
  if not runtimes or os.environ.get("CUSP_PYTEST_PRELOADED"):
    return
  env = dict(os.environ)
  env["LD_PRELOAD"] = " ".join(runtimes + [p for p in [env.get("LD_PRELOAD")] if p])
  env["ASAN_OPTIONS"] = ":".join(p for p in (env.get("ASAN_OPTIONS"), "detect_leaks=0") if p)
  env["CUSP_PYTEST_PRELOADED"] = "1"
  capture = config.pluginmanager.getplugin("capturemanager")
  if capture is not None:
    capture.stop_global_capturing()   # give the new process our real stdout/stderr
  sys.stdout.flush()
  sys.stderr.flush()
  os.execve(sys.executable, [sys.executable, "-m", "pytest", *config.invocation_params.args], env)
