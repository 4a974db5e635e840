"""cusp: soft continuum arms in MuJoCo scenes, from Python.

A thin layer over libcusp.so (the engine plugin ``cusp.softbody``): importing
this package loads the library into MuJoCo (``mujoco.mj_loadPluginLibrary``)
and into ctypes, so that

    import cusp, mujoco
    m = cusp.load("mjcf/default.xml")      # parse, expand with mjSpec, compile
    d = mujoco.MjData(m)                    # the plugin's init builds the arms
    mujoco.mj_step(m, d)                    # compute + advance inside
    print(cusp.tip_pose(m, d, "arm"), cusp.report(m, d)["ncontact"])

works with every MuJoCo tool: copies, mj_getState/mj_setState, rollouts and
the viewer (``python -m cusp.view SCENE.xml``). No physics lives here.

The library is $CUSP_LIBRARY, else build/libcusp.so of this repository.
Errors raise ValueError (bad input: file, key, value, instance) or
RuntimeError (the library or MuJoCo failed), with the library's message.
"""

import ctypes
import os
import pathlib

import mujoco
import numpy as np

__all__ = [
    "LIBRARY", "load", "expand", "make_data", "instance_count", "instance_name", "instance_names",
    "instance_find", "last_error", "report", "contacts", "pair_contacts", "soft_state", "tip_pose",
    "backbone_point", "total_length", "set", "get", "set_all", "apply_force", "end_reaction",
    "hold_reaction",
]

_REPO = pathlib.Path(__file__).resolve().parents[2]
_ERR = 1024


def _library_path():
  env = os.environ.get("CUSP_LIBRARY")
  if env:
    if not os.path.isfile(env):
      raise ImportError(f"cusp: CUSP_LIBRARY={env} is not a file")
    return os.path.abspath(env)
  path = _REPO / "build" / "libcusp.so"
  if not path.is_file():
    raise ImportError(f"cusp: {path} not found: build it (scripts/build.sh build) "
                      "or point CUSP_LIBRARY at libcusp.so")
  return str(path)


# ---------- the C structures (plugin/cusp.h, softbody/lcp.h, softbody/contact.h) ----------

class LcpInfo(ctypes.Structure):
  """sb_lcp_info: the last LCP solve."""
  _fields_ = [
      ("status", ctypes.c_int),          # sb_lcp_status
      ("solver", ctypes.c_int),          # sb_lcp_solver
      ("attempts", ctypes.c_int),
      ("iterations", ctypes.c_int),
      ("residual", ctypes.c_double),
      ("complementarity", ctypes.c_double),
      ("time_us", ctypes.c_double),
      ("message", ctypes.c_char * 160),
      ("warm_pivot", ctypes.c_int),
      ("warm_lemke", ctypes.c_int),
      ("lemke_form", ctypes.c_int),      # the form Lemke ran in: 0 tableau, 1 revised, -1 none
      ("matrix_formed", ctypes.c_int),
  ]


class ContactInfo(ctypes.Structure):
  """sb_contact_info: the last coupled contact solve."""
  _fields_ = [
      ("lcp", LcpInfo),
      ("ncontact", ctypes.c_int),
      ("nkept", ctypes.c_int),
      ("nvar", ctypes.c_int),
      ("residual", ctypes.c_double),
      ("complementarity", ctypes.c_double),
      ("dropped_min_vn", ctypes.c_double),
      ("rank_passes", ctypes.c_int),
      ("solves", ctypes.c_int),
      ("cold_solves", ctypes.c_int),
      ("time_us", ctypes.c_double),
      ("assembly_us", ctypes.c_double),
      ("conditioning_us", ctypes.c_double),
      ("screened", ctypes.c_int),
      ("screen_passes", ctypes.c_int),
      ("warm_lemke_starts", ctypes.c_int),
      ("warm_lemke_solved", ctypes.c_int),
      ("matrices_formed", ctypes.c_int),
      ("immobile", ctypes.c_int),
      ("damped_passes", ctypes.c_int),
      ("operator_passes", ctypes.c_int),
      ("fallback_solves", ctypes.c_int),
  ]


class StepReport(ctypes.Structure):
  """cusp_step_report."""
  _fields_ = [
      ("time", ctypes.c_double),
      ("steps", ctypes.c_long),
      ("ncontact", ctypes.c_int),
      ("nkept", ctypes.c_int),
      ("info", ContactInfo),
      ("solved", ctypes.c_int),
      ("fallback", ctypes.c_int),
      ("max_penetration", ctypes.c_double),
      ("solves", ctypes.c_long),
      ("converged", ctypes.c_long),
      ("fallbacks", ctypes.c_long),
      ("nan_events", ctypes.c_long),
      ("skipped_advances", ctypes.c_long),
      ("dynamics_us", ctypes.c_double),
      ("collision_us", ctypes.c_double),
      ("assembly_us", ctypes.c_double),
      ("conditioning_us", ctypes.c_double),
      ("solve_us", ctypes.c_double),
      ("total_us", ctypes.c_double),
      ("message", ctypes.c_char * 256),
  ]


class ContactReport(ctypes.Structure):
  """cusp_contact_report: one soft contact of the last compute."""
  _fields_ = [
      ("instance", ctypes.c_int),
      ("disk", ctypes.c_int),
      ("other_geom", ctypes.c_int),
      ("other_instance", ctypes.c_int),
      ("pos", ctypes.c_double * 3),
      ("normal", ctypes.c_double * 3),
      ("gap", ctypes.c_double),
      ("impulse", ctypes.c_double * 3),
      ("normal_impulse", ctypes.c_double),
      ("kept", ctypes.c_int),
  ]


class PairContact(ctypes.Structure):
  """cusp_pair_contact: a contact between two MuJoCo geoms cusp solved."""
  _fields_ = [
      ("geom", ctypes.c_int * 2),
      ("pos", ctypes.c_double * 3),
      ("normal", ctypes.c_double * 3),
      ("gap", ctypes.c_double),
      ("force", ctypes.c_double * 3),
      ("normal_force", ctypes.c_double),
      ("mujoco_contact", ctypes.c_int),
      ("kept", ctypes.c_int),
  ]


class Override(ctypes.Structure):
  """cusp_override: INSTANCE.KEY=VALUE."""
  _fields_ = [("instance", ctypes.c_char_p), ("key", ctypes.c_char_p), ("value", ctypes.c_char_p)]


SOLVERS = ("fb", "lemke", "pgs")                       # sb_lcp_solver order
STATUSES = ("solved", "max_iter", "ray", "stalled", "bad_input")  # sb_lcp_status order

_P = ctypes.c_void_p
_I = ctypes.c_int
_D = ctypes.c_double
_S = ctypes.c_char_p
_DP = ctypes.POINTER(ctypes.c_double)
_SIGNATURES = {
    "cusp_expand_spec": (_I, [_P, ctypes.POINTER(Override), _I, ctypes.c_char_p, _I]),
    "cusp_expand": (_P, [_S, ctypes.POINTER(Override), _I, ctypes.c_char_p, _I]),
    "cusp_instance_count": (_I, [_P]),
    "cusp_instance_name": (_S, [_P, _I]),
    "cusp_instance_find": (_I, [_P, _S]),
    "cusp_last_error": (_S, []),
    "cusp_struct_size": (ctypes.c_size_t, [_S]),
    "cusp_report": (ctypes.POINTER(StepReport), [_P, _P]),
    "cusp_contacts": (_I, [_P, _P, ctypes.POINTER(ctypes.POINTER(ContactReport))]),
    "cusp_pair_contacts": (_I, [_P, _P, ctypes.POINTER(ctypes.POINTER(PairContact))]),
    "cusp_soft_state": (_I, [_P, _P, _I, ctypes.POINTER(_DP), ctypes.POINTER(_DP)]),
    "cusp_tip_pose": (_I, [_P, _P, _I, _DP, _DP]),
    "cusp_end_reaction": (_I, [_P, _P, _I, _DP]),
    "cusp_hold_reaction": (_I, [_P, _P, _I, _I, _DP]),
    "cusp_backbone_point": (_I, [_P, _P, _I, _D, _DP, _DP]),
    "cusp_total_length": (_D, [_P, _I]),
    "cusp_set": (_I, [_P, _P, _I, _S, _S, ctypes.c_char_p, _I]),
    "cusp_get": (_I, [_P, _P, _I, _S, ctypes.c_char_p, _I]),
    "cusp_apply_force": (_I, [_P, _P, _I, _D, _DP, _DP, ctypes.c_char_p, _I]),
    "cusp_lcp": (_I, [_P, _P, ctypes.POINTER(_DP), ctypes.POINTER(_DP)]),
    "sb_lcp_write_dat": (_I, [_S, _I, _DP, _DP, _S, ctypes.c_char_p, _I]),
}


def _open():
  path = _library_path()
  # MuJoCo's loader first (it registers cusp.softbody through the library's
  # constructor; it only warns on failure), then ctypes on the same file:
  # dlopen hands back the same handle, so both see one copy of the library.
  mujoco.mj_loadPluginLibrary(path)
  try:
    lib = ctypes.CDLL(path)
  except OSError as e:
    raise ImportError(f"cusp: cannot load {path}: {e}") from e
  for name, (restype, argtypes) in _SIGNATURES.items():
    try:
      fn = getattr(lib, name)
    except AttributeError as e:
      raise ImportError(f"cusp: {path} has no {name}: rebuild it") from e
    fn.restype = restype
    fn.argtypes = argtypes
  _check_layouts(path, lib)
  return path, lib


# the ctypes mirrors by the C name whose layout they copy
_MIRRORS = {"cusp_step_report": StepReport, "cusp_contact_report": ContactReport,
            "cusp_pair_contact": PairContact, "sb_contact_info": ContactInfo, "sb_lcp_info": LcpInfo}


def _check_layouts(path, lib):
  """Refuses a library whose structs differ in size from this package's
  mirrors: read at the wrong offsets, every report field after the first
  difference would be garbage, silently."""
  for cname, mirror in _MIRRORS.items():
    size = lib.cusp_struct_size(cname.encode())
    if size != ctypes.sizeof(mirror):
      raise ImportError(f"cusp: {path} has a {cname} of {size} bytes, this package's {mirror.__name__} "
                        f"{ctypes.sizeof(mirror)}: the package and the library are from different builds")


LIBRARY, _lib = _open()


# ---------- helpers ----------

def _ptr(obj):
  """The C pointer (mjModel*, mjData*, mjSpec*) behind a MuJoCo binding."""
  return ctypes.c_void_p(obj._address)


def _b(s):
  return s.encode() if isinstance(s, str) else bytes(s)


def _msg(buf):
  return buf.value.decode(errors="replace")


def last_error():
  """Why the last plugin init on this thread failed ("" if none)."""
  s = _lib.cusp_last_error()
  return s.decode(errors="replace") if s else ""


def _parse_overrides(overrides):
  """INSTANCE.KEY=VALUE triples from a mapping {"I.K": V}, or an iterable of
  "I.K=V" strings or (I, K, V) tuples."""
  if not overrides:
    return []
  items = overrides.items() if hasattr(overrides, "items") else overrides
  out = []
  for item in items:
    if isinstance(item, str):
      if "=" not in item:
        raise ValueError(f"override '{item}': expected INSTANCE.KEY=VALUE")
      lhs, value = item.split("=", 1)
    elif len(item) == 3:
      out.append(tuple(str(x) for x in item))
      continue
    else:
      lhs, value = item
    inst, dot, key = str(lhs).partition(".")
    if not dot or not inst or not key:
      raise ValueError(f"override '{lhs}': expected INSTANCE.KEY")
    out.append((inst, key, str(value)))
  return out


# ---------- loading ----------

def _override_array(overrides):
  keep = [tuple(_b(x) for x in t) for t in _parse_overrides(overrides)]
  arr = (Override * max(1, len(keep)))()
  for i, (a, b, c) in enumerate(keep):
    arr[i] = Override(a, b, c)
  return arr, len(keep), keep


_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]


def expand(path, overrides=None):
  """The expanded scene as MJCF text (cusp_expand): what stock MuJoCo tools
  load once libcusp.so is loaded (mujoco.MjModel.from_xml_string)."""
  arr, n, _keep = _override_array(overrides)
  err = ctypes.create_string_buffer(_ERR)
  p = _lib.cusp_expand(_b(os.fspath(path)), arr, n, err, _ERR)
  if not p:
    raise ValueError(_msg(err) or f"{path}: expansion failed")
  try:
    return ctypes.string_at(p).decode()
  finally:
    _libc.free(p)


def load(path, overrides=None):
  """Loads an MJCF scene with cusp.softbody instances: parses it into an
  MjSpec, adds every instance's disk bodies, geoms, sites and actuators
  (cusp_expand_spec), compiles. overrides: {"arm.friction": 0.8} or
  ["arm.friction=0.8", ...] on top of the file's keys. Returns an MjModel.
  Raises ValueError naming the file, element and key."""
  path = os.fspath(path)
  arr, n, _keep = _override_array(overrides)
  spec = mujoco.MjSpec.from_file(path)   # ValueError with MuJoCo's parse message
  err = ctypes.create_string_buffer(_ERR)
  if _lib.cusp_expand_spec(_ptr(spec), arr, n, err, _ERR) != 0:
    raise ValueError(_msg(err) or f"{path}: expansion failed")
  try:
    return spec.compile()
  except Exception as e:  # MuJoCo raises ValueError; add the plugin's reason
    why = last_error()
    raise ValueError(f"{path}: {e}" + (f": {why}" if why and why not in str(e) else "")) from e


def make_data(m):
  """mujoco.MjData(m), with the plugin's reason when its init fails."""
  try:
    return mujoco.MjData(m)
  except Exception as e:
    why = last_error()
    raise RuntimeError(f"{e}" + (f": {why}" if why else "")) from e


# ---------- instances ----------

def instance_count(m):
  """Number of cusp.softbody instances of m."""
  return _lib.cusp_instance_count(_ptr(m))


def instance_name(m, i):
  s = _lib.cusp_instance_name(_ptr(m), int(i))
  if s is None:
    raise ValueError(f"no soft instance {i} (the model has {instance_count(m)})")
  return s.decode()


def instance_names(m):
  return [instance_name(m, i) for i in range(instance_count(m))]


def instance_find(m, name):
  """Index of the soft instance called name, or -1."""
  return _lib.cusp_instance_find(_ptr(m), _b(name))


def _index(m, instance):
  if isinstance(instance, str):
    i = instance_find(m, instance)
    if i < 0:
      raise ValueError(f"no soft instance '{instance}' (instances: {', '.join(instance_names(m)) or 'none'})")
    return i
  i = int(instance)
  if not 0 <= i < instance_count(m):
    raise ValueError(f"no soft instance {i} (the model has {instance_count(m)})")
  return i


# ---------- reading ----------

def _struct_dict(s):
  out = {}
  for name, _ in s._fields_:
    v = getattr(s, name)
    if isinstance(v, ctypes.Structure):
      v = _struct_dict(v)
    elif isinstance(v, bytes):
      v = v.decode(errors="replace")
    elif isinstance(v, ctypes.Array):
      v = np.array(v[:])
    out[name] = v
  return out


def report(m, d):
  """The last step's report (cusp_step_report) as a dict, or None when m has
  no soft instance. info.lcp.solver_name / status_name name the enums."""
  p = _lib.cusp_report(_ptr(m), _ptr(d))
  if not p:
    return None
  r = _struct_dict(p.contents)
  lcp = r["info"]["lcp"]
  lcp["solver_name"] = SOLVERS[lcp["solver"]] if 0 <= lcp["solver"] < len(SOLVERS) else str(lcp["solver"])
  lcp["status_name"] = STATUSES[lcp["status"]] if 0 <= lcp["status"] < len(STATUSES) else str(lcp["status"])
  return r


def contacts(m, d):
  """The soft contacts of the last compute: a list of dicts (cusp_contact_report),
  each also with "force", the world force on the soft side in N (impulse over
  the time step; the contacts have no entry in d.contact, see the README)."""
  p = ctypes.POINTER(ContactReport)()
  n = _lib.cusp_contacts(_ptr(m), _ptr(d), ctypes.byref(p))
  out = [_struct_dict(p[i]) for i in range(max(n, 0))] if p else []
  for c in out:
    c["force"] = c["impulse"] / m.opt.timestep
  return out


def pair_contacts(m, d):
  """The contacts between MuJoCo geoms cusp solved in the last compute (a body
  an arm touches, with its own other contacts): a list of dicts
  (cusp_pair_contact; "force" is the world force on geom[1] in N). An entry
  with mujoco_contact == -1 is in no MuJoCo row: mj_contactForce over d.contact,
  contacts(m, d) and these entries hold every contact force once (README,
  "Reading contact forces")."""
  p = ctypes.POINTER(PairContact)()
  n = _lib.cusp_pair_contacts(_ptr(m), _ptr(d), ctypes.byref(p))
  return [_struct_dict(p[i]) for i in range(max(n, 0))] if p else []


def lcp(m, d):
  """Copies (M, q) of the last compute's contact LCP w = M z + q in impulses,
  as solved after rank selection and before scaling (cusp_lcp): M an n x n
  array, q of length n; both empty when the step solved no LCP (no contact
  kept, or a contact model other than lcp)."""
  M, q = _DP(), _DP()
  n = _lib.cusp_lcp(_ptr(m), _ptr(d), ctypes.byref(M), ctypes.byref(q))
  if n < 0:
    raise RuntimeError("no cusp data in d (is the model's plugin cusp.softbody?)")
  if n == 0:
    return np.zeros((0, 0)), np.zeros(0)
  # column-major in C: the transpose of the row-major view
  Mc = np.ctypeslib.as_array(M, shape=(n, n)).T.copy()
  return Mc, np.ctypeslib.as_array(q, shape=(n,)).copy()


def write_lcp(path, M, q, comment=""):
  """Writes the LCP w = M z + q to path in the peer set's dense .dat format
  (Siconos numerics' text format, 17 digits: `cusp-lcp` and the peer
  solvers read it back bit for bit)."""
  M = np.asfortranarray(M, dtype=np.float64)
  q = np.ascontiguousarray(q, dtype=np.float64)
  n = q.shape[0]
  if M.shape != (n, n):
    raise ValueError(f"write_lcp: M is {M.shape}, q has {n} entries")
  err = ctypes.create_string_buffer(512)
  if _lib.sb_lcp_write_dat(_b(str(path)), n, M.ctypes.data_as(_DP), q.ctypes.data_as(_DP), _b(comment), err,
                           len(err)):
    raise OSError(_msg(err))


def soft_state(m, d, instance=0):
  """Copies of the soft coordinates q and velocities v of an instance."""
  i = _index(m, instance)
  q, v = _DP(), _DP()
  n = _lib.cusp_soft_state(_ptr(m), _ptr(d), i, ctypes.byref(q), ctypes.byref(v))
  if n < 0:
    raise RuntimeError(f"no soft state for instance {i} (no cusp data in d?)")
  return np.ctypeslib.as_array(q, (n,)).copy(), np.ctypeslib.as_array(v, (n,)).copy()


def tip_pose(m, d, instance=0):
  """World position and orientation (quaternion w x y z) of an instance's tip."""
  i = _index(m, instance)
  pos, quat = (ctypes.c_double * 3)(), (ctypes.c_double * 4)()
  if _lib.cusp_tip_pose(_ptr(m), _ptr(d), i, pos, quat) != 0:
    raise RuntimeError(f"no tip pose for instance {i} (no cusp data in d?)")
  return np.array(pos[:]), np.array(quat[:])


def end_reaction(m, d, instance=0):
  """The held end's reaction (keys end, end_body): the force (N) and moment
  (N*m, zero for a pin) its anchor exerted on the tip over the last step,
  world axes. ValueError when the instance's end is free."""
  i = _index(m, instance)
  out = (ctypes.c_double * 6)()
  if _lib.cusp_end_reaction(_ptr(m), _ptr(d), i, out) != 0:
    raise ValueError(f"instance {i} has no held end (key end is free)")
  return np.array(out[:3]), np.array(out[3:])


def hold_reaction(m, d, instance=0, hold=0):
  """A held point's reaction (key hold, entry `hold` from 0): the force (N)
  and moment about the point (N*m, zero for a pin) its anchor exerted on the
  rod over the last step, world axes. ValueError when the instance has no
  such hold."""
  i = _index(m, instance)
  out = (ctypes.c_double * 6)()
  if _lib.cusp_hold_reaction(_ptr(m), _ptr(d), i, int(hold), out) != 0:
    raise ValueError(f"instance {i} has no hold {hold} (key hold)")
  return np.array(out[:3]), np.array(out[3:])


def backbone_point(m, d, instance, s):
  """World position and 3x3 orientation at arc length s (m) of the backbone."""
  i = _index(m, instance)
  pos, mat = (ctypes.c_double * 3)(), (ctypes.c_double * 9)()
  if _lib.cusp_backbone_point(_ptr(m), _ptr(d), i, float(s), pos, mat) != 0:
    raise ValueError(f"no backbone point at s = {s} of instance {i}")
  return np.array(pos[:]), np.array(mat[:]).reshape(3, 3)


def total_length(m, instance=0):
  return _lib.cusp_total_length(_ptr(m), _index(m, instance))


# ---------- steering ----------

def set(m, d, instance, key, value):  # noqa: A001 (the C name)
  """Changes a live key of a running instance (cusp_set): contact, solver,
  fallback, conditioning, friction, ... Part of the plugin state."""
  i = _index(m, instance)
  err = ctypes.create_string_buffer(_ERR)
  if _lib.cusp_set(_ptr(m), _ptr(d), i, _b(key), _b(str(value)), err, _ERR) != 0:
    raise ValueError(_msg(err) or f"cusp_set {key}={value} failed")


def set_all(m, d, key, value):
  """cusp_set on every soft instance."""
  for i in range(instance_count(m)):
    set(m, d, i, key, value)


def get(m, d, instance, key):
  """A live key's current value, as cusp_set accepts it."""
  i = _index(m, instance)
  buf = ctypes.create_string_buffer(_ERR)
  if _lib.cusp_get(_ptr(m), _ptr(d), i, _b(key), buf, _ERR) != 0:
    raise ValueError(_msg(buf) or f"cusp_get {key} failed")
  return _msg(buf)


def apply_force(m, d, instance, s, force=None, torque=None):
  """Holds a world force (N) and moment (N m) at arc length s until cleared
  (force = torque = None clears)."""
  i = _index(m, instance)
  err = ctypes.create_string_buffer(_ERR)
  f = (ctypes.c_double * 3)(*force) if force is not None else None
  t = (ctypes.c_double * 3)(*torque) if torque is not None else None
  if f is None and t is not None:
    f = (ctypes.c_double * 3)()
  if t is None and f is not None:
    t = (ctypes.c_double * 3)()
  if _lib.cusp_apply_force(_ptr(m), _ptr(d), i, float(s), f, t, err, _ERR) != 0:
    raise ValueError(_msg(err))
