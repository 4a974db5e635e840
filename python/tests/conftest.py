"""The cusp package from this work tree, also without scripts/setup.sh's .pth."""
import os
import pathlib
import sys

PYTHON_DIR = str(pathlib.Path(__file__).resolve().parents[1])
if PYTHON_DIR not in sys.path:
  sys.path.insert(0, PYTHON_DIR)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (PYTHON_DIR, os.environ.get("PYTHONPATH")) if p)
