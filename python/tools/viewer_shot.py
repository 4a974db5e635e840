"""Drives `python -m cusp.view` on an X display (Xvfb) like a user: keys
through the XTEST extension (libXtst), a screenshot through ffmpeg's x11grab.

    xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python python/tools/viewer_shot.py \\
        OUT.png [SCENE.xml] [--until TEXT] [--wait S] [--keys KEYS] [-- cusp.view options]

Opens the scene in cusp.view, waits until its stderr says UNTIL (default
"viewer open"; e.g. "paused at" with --seconds), then S wall seconds
(default 2), presses KEYS
(comma separated, X keysym names with modifiers joined by '+', e.g.
"Control_L+s,Alt_L+c"), waits a little, saves the screen cropped to the
viewer's window as OUT.png and quits the viewer with Ctrl+Q. Prints the
viewer's stderr. Used to make docs/img/stock_viewer.png and by the tests.
"""

import argparse
import ctypes
import os
import subprocess
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from cusp.view import write_png  # noqa: E402 (after the path)


class X:
  """The few Xlib/XTEST calls a scripted user needs."""

  def __init__(self):
    self.x11 = ctypes.CDLL("libX11.so.6")
    self.xtst = ctypes.CDLL("libXtst.so.6")
    self.x11.XOpenDisplay.restype = ctypes.c_void_p
    self.x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    self.x11.XStringToKeysym.restype = ctypes.c_ulong
    self.x11.XStringToKeysym.argtypes = [ctypes.c_char_p]
    self.x11.XKeysymToKeycode.restype = ctypes.c_ubyte
    self.x11.XKeysymToKeycode.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
    self.x11.XFlush.argtypes = [ctypes.c_void_p]
    self.x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    self.xtst.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
    self.xtst.XTestFakeMotionEvent.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                               ctypes.c_ulong]
    self.dpy = self.x11.XOpenDisplay(None)
    if not self.dpy:
      raise RuntimeError(f"cannot open the X display {os.environ.get('DISPLAY')!r}")

  def _code(self, name):
    sym = self.x11.XStringToKeysym(name.encode())
    code = self.x11.XKeysymToKeycode(self.dpy, sym) if sym else 0
    if not code:
      raise ValueError(f"no key '{name}'")
    return code

  def move(self, x, y):
    """The pointer to (x, y): without a window manager the keyboard goes to
    the window under it."""
    self.xtst.XTestFakeMotionEvent(self.dpy, -1, x, y, 0)
    self.x11.XFlush(self.dpy)

  def press(self, combo):
    """A key with modifiers held, e.g. "Control_L+c"."""
    codes = [self._code(k) for k in combo.split("+")]
    for c in codes:
      self.xtst.XTestFakeKeyEvent(self.dpy, c, 1, 0)
      self.x11.XFlush(self.dpy)
      time.sleep(0.05)
    for c in reversed(codes):
      self.xtst.XTestFakeKeyEvent(self.dpy, c, 0, 0)
      self.x11.XFlush(self.dpy)
      time.sleep(0.05)

  def close(self):
    self.x11.XCloseDisplay(self.dpy)


def grab(size=None):
  """The screen as an RGB array (ffmpeg x11grab)."""
  w, h = size or screen_size()
  raw = subprocess.run(["ffmpeg", "-v", "error", "-f", "x11grab", "-draw_mouse", "0", "-video_size", f"{w}x{h}", "-i",
                        os.environ["DISPLAY"], "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                       capture_output=True, check=True).stdout
  return np.frombuffer(raw, np.uint8).reshape(h, w, 3)


def screen_size():
  out = subprocess.run(["ffprobe", "-v", "error", "-f", "x11grab", "-i", os.environ["DISPLAY"], "-show_entries",
                        "stream=width,height", "-of", "csv=p=0"], capture_output=True, text=True, check=True).stdout
  w, h = out.strip().split("\n")[0].split(",")
  return int(w), int(h)


def crop_window(img):
  """The non-black bounding box (the root window of a bare Xvfb is black)."""
  mask = img.max(axis=2) > 8
  ys, xs = np.nonzero(mask)
  if len(xs) == 0:
    return img
  return img[: ys.max() + 1, : xs.max() + 1]


def run(out, scene, wait, keys, view_args, settle=2.0, until="viewer open", timeout=120.0):
  """Returns (exit code of the viewer, its stderr, the image)."""
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(HERE), env.get("PYTHONPATH")) if p)
  cmd = [sys.executable, "-m", "cusp.view", *([scene] if scene else []), *view_args]
  proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
  lines = []
  reader = threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")), daemon=True)
  reader.start()
  x = X()
  img = None
  try:
    t0 = time.monotonic()
    while not any(until in line for line in lines):
      if proc.poll() is not None:
        reader.join(timeout=5)
        raise RuntimeError(f"the viewer exited ({proc.returncode}) before '{until}': {''.join(lines)}")
      if time.monotonic() - t0 > timeout:
        raise RuntimeError(f"no '{until}' from the viewer in {timeout:g} s: {''.join(lines)}")
      time.sleep(0.2)
    time.sleep(wait)
    img = crop_window(grab())
    x.move(img.shape[1] // 2, img.shape[0] // 2)
    time.sleep(0.3)
    for combo in keys:
      x.press(combo)
      time.sleep(0.3)
    time.sleep(settle if keys else 0.5)
    img = crop_window(grab())
    if out:
      write_png(out, img)
    x.press("Control_L+q")   # the viewer's File > Quit
    try:
      proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
      proc.kill()
  finally:
    x.close()
    if proc.poll() is None:
      proc.kill()
  rc = proc.wait()
  reader.join(timeout=5)
  return rc, "".join(lines), img


def main():
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("out")
  p.add_argument("scene", nargs="?")
  p.add_argument("--until", default="viewer open")
  p.add_argument("--wait", type=float, default=2.0)
  p.add_argument("--keys", default="")
  args, rest = p.parse_known_args()
  if rest[:1] == ["--"]:
    rest = rest[1:]
  keys = [k for k in args.keys.split(",") if k]
  rc, err, img = run(args.out, args.scene, args.wait, keys, rest, until=args.until)
  sys.stderr.write(err)
  print(f"{args.out}: {img.shape[1]}x{img.shape[0]}, viewer exit {rc}")
  return rc


if __name__ == "__main__":
  sys.exit(main())
