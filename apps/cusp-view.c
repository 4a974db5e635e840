/* cusp-view: interactive viewer for scenes with cusp soft arms (plain MuJoCo
 * scenes work too), and a headless renderer for PNG screenshots, videos and
 * frame sequences.
 *
 * Interactive: one thread. Each frame polls events, advances the simulation
 * to keep up with the wall clock (divided by the slow-motion factor), draws
 * the MuJoCo scene plus cusp's backbone tube, contacts and impulses, the
 * plots and the overlays. Switches go through cusp_set.
 *
 * Headless: an invisible GLFW window only provides the OpenGL context; all
 * rendering goes to MuJoCo's offscreen buffer, so it works under Xvfb with no
 * window manager. Exit code: 0 completed, 1 the simulation (or writing an
 * output) failed, 2 bad arguments or input. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <GLFW/glfw3.h>
#include <png.h>

#include "cli_util.h"
#include "mj_state.h"
#include "cusp.h"

#define PROGRESS_WALL_S 2.0 /* wall seconds between progress lines */
#define MAX_GEOM 20000      /* scene capacity: model geoms plus ours */
#define TUBE_SEGMENTS 96    /* capsules along each backbone */
#define MAX_SLOWDOWN 128
#define NPLOT 3
#define WINDOW_W 1280       /* the interactive window at start */
#define WINDOW_H 800
#define VIEW_SAMPLES 24     /* backbone points per arm for the start camera */
#define VIEW_MAXPOINT 4096

static int usage(const char *msg) {
  if (msg) fprintf(stderr, "cusp-view: %s\n", msg);
  fprintf(stderr,
          "usage: cusp-view [SCENE.xml] [--set INSTANCE.KEY=VALUE]... [camera options]\n"
          "       cusp-view SCENE.xml --headless [--seconds T] (--png FILE | --video FILE | --frames DIR)...\n"
          "                 [--width W] [--height H] [--fps F] [--plots] [--no-overlay] [--json]\n"
          "  --headless       no window: simulate T seconds and write the outputs\n"
          "  --seconds T      simulated time, s (default 2)\n"
          "  --png FILE       screenshot at the end\n"
          "  --video FILE     video through ffmpeg when it is on PATH, else PNG frames\n"
          "                   in the directory FILE without its extension + \"_frames\"\n"
          "  --frames DIR     numbered PNG frames (the directory is created)\n"
          "  --width W, --height H  image size in pixels (default 1280 x 720)\n"
          "  --fps F          frames per simulated second for --video/--frames (default 30)\n"
          "  --plots          draw the plots into headless images too\n"
          "  --no-overlay     no text overlay in headless images\n"
          "  --json           print one JSON object as the last line (headless)\n"
          "  --set I.K=V      overrides key K of soft instance I (repeatable)\n"
          "  --camera NAME    start in that fixed camera of the model; default: the model's camera\n"
          "                   \"cusp_default\" as a free camera, else a free camera that frames the\n"
          "                   soft arms from where they are least hidden\n"
          "  --quit-after S   close the viewer S wall seconds after the last --keys key (scripted checks)\n"
          "  --keys KEYS      press these keys, one per frame, at start (scripted checks):\n"
          "                   letters, digits, - =, ' ' space, '>' right arrow, '<' backspace, '?' F1\n"
          "  --drag X,Y,DX,DY after the keys, double-click window pixel (X, Y) (top left origin) and\n"
          "                   Ctrl+right drag by (DX, DY) pixels over 20 frames; released at exit (scripted checks)\n"
          "  --azimuth A, --elevation E (deg), --distance D (m), --lookat X,Y,Z  free camera\n"
          "Interactive keys: press F1 or H in the viewer.\n"
          "exit code: 0 completed, 1 simulation or output failed, 2 bad arguments or input\n");
  return 2;
}

/* snprintf for messages: a long path may truncate them, which is fine. */
static void msgf(char *buf, int n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void msgf(char *buf, int n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, n, fmt, ap);
  va_end(ap);
}

/* ---------- options ---------- */

typedef struct {
  const char *scene;
  int headless, json, plots, overlay;
  double seconds, fps;
  int width, height;
  const char *png, *video, *frames;
  const char *camera, *keys;
  double quit_after;
  double drag[4];        /* --drag X,Y,DX,DY (window pixels) */
  int has_drag;
  double azimuth, elevation, distance, lookat[3];
  int has_azimuth, has_elevation, has_distance, has_lookat;
  cusp_override *overrides;
  char **copies;
  int noverride;
} options;

static int parse_int(const char *s, int lo, int hi, int *out) {
  char *end;
  long x = strtol(s, &end, 10);
  if (end == s || *end || x < lo || x > hi) return -1;
  *out = (int)x;
  return 0;
}

static int parse_finite(const char *s, double *out) {
  char *end;
  double x = strtod(s, &end);
  if (end == s || *end || !isfinite(x)) return -1;
  *out = x;
  return 0;
}

/* Returns 0, or 2 after printing the reason (rc for main). */
static int parse_args(int argc, char **argv, options *o, int *help) {
  char msg[1024];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--json")) o->json = 1;
    else if (!strcmp(a, "--headless")) o->headless = 1;
    else if (!strcmp(a, "--plots")) o->plots = 1;
    else if (!strcmp(a, "--no-overlay")) o->overlay = 0;
    else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { *help = 1; return 0; }
    else if (!strcmp(a, "--seconds") || !strcmp(a, "--fps") || !strcmp(a, "--width") ||
             !strcmp(a, "--height") || !strcmp(a, "--png") || !strcmp(a, "--video") ||
             !strcmp(a, "--frames") || !strcmp(a, "--camera") || !strcmp(a, "--azimuth") ||
             !strcmp(a, "--elevation") || !strcmp(a, "--distance") || !strcmp(a, "--lookat") ||
             !strcmp(a, "--set") || !strcmp(a, "--quit-after") || !strcmp(a, "--keys") || !strcmp(a, "--drag")) {
      if (i + 1 >= argc) {
        msgf(msg, sizeof msg, "%s needs a value", a);
        return usage(msg);
      }
      const char *v = argv[++i];
      int bad = 0;
      if (!strcmp(a, "--seconds")) bad = parse_positive(v, &o->seconds);
      else if (!strcmp(a, "--fps")) bad = parse_positive(v, &o->fps) || o->fps > 1000;
      else if (!strcmp(a, "--width")) bad = parse_int(v, 16, 8192, &o->width);
      else if (!strcmp(a, "--height")) bad = parse_int(v, 16, 8192, &o->height);
      else if (!strcmp(a, "--png")) o->png = v;
      else if (!strcmp(a, "--video")) o->video = v;
      else if (!strcmp(a, "--frames")) o->frames = v;
      else if (!strcmp(a, "--camera")) o->camera = v;
      else if (!strcmp(a, "--keys")) o->keys = v;
      else if (!strcmp(a, "--quit-after")) bad = parse_positive(v, &o->quit_after);
      else if (!strcmp(a, "--azimuth")) bad = parse_finite(v, &o->azimuth), o->has_azimuth = 1;
      else if (!strcmp(a, "--elevation"))
        bad = parse_finite(v, &o->elevation) || fabs(o->elevation) > 90, o->has_elevation = 1;
      else if (!strcmp(a, "--distance")) bad = parse_positive(v, &o->distance), o->has_distance = 1;
      else if (!strcmp(a, "--lookat")) {
        char extra;
        bad = sscanf(v, "%lf,%lf,%lf%c", &o->lookat[0], &o->lookat[1], &o->lookat[2], &extra) != 3 ||
              !isfinite(o->lookat[0]) || !isfinite(o->lookat[1]) || !isfinite(o->lookat[2]);
        o->has_lookat = 1;
      } else if (!strcmp(a, "--drag")) {
        char extra;
        double *g = o->drag;
        bad = sscanf(v, "%lf,%lf,%lf,%lf%c", &g[0], &g[1], &g[2], &g[3], &extra) != 4 || !isfinite(g[0] + g[1]) ||
              !isfinite(g[2] + g[3]);
        o->has_drag = 1;
      } else if (!strcmp(a, "--set")) {
        /* INSTANCE.KEY=VALUE: first '.', then the first '=' after it */
        char *c = o->copies[o->noverride] = strdup(v);
        char *dot = c ? strchr(c, '.') : NULL;
        char *eq = dot ? strchr(dot + 1, '=') : NULL;
        if (!c || !dot || !eq || dot == c || eq == dot + 1 || memchr(c, '=', dot - c)) {
          msgf(msg, sizeof msg, "--set needs INSTANCE.KEY=VALUE, not '%s'", v);
          return usage(msg);
        }
        *dot = *eq = 0;
        o->overrides[o->noverride++] = (cusp_override){c, dot + 1, eq + 1};
      }
      if (bad) {
        const char *want = !strcmp(a, "--width") || !strcmp(a, "--height") ? "an integer in 16..8192"
                           : !strcmp(a, "--lookat")                          ? "three numbers X,Y,Z"
                           : !strcmp(a, "--drag")                            ? "four numbers X,Y,DX,DY"
                           : !strcmp(a, "--elevation")                       ? "a number in -90..90"
                           : !strcmp(a, "--fps")                             ? "a number in (0, 1000]"
                           : !strcmp(a, "--azimuth")                         ? "a finite number"
                                                                             : "a finite number > 0";
        msgf(msg, sizeof msg, "%s needs %s, not '%s'", a, want, v);
        return usage(msg);
      }
    } else if (a[0] != '-' || !a[1]) {
      if (o->scene) {
        msgf(msg, sizeof msg, "one scene only ('%s', then '%s')", o->scene, a);
        return usage(msg);
      }
      o->scene = a;
    } else {
      msgf(msg, sizeof msg, "unknown option '%s'", a);
      return usage(msg);
    }
  }
  if (o->headless) {
    if (!o->scene) return usage("--headless needs a scene");
    if (!o->png && !o->video && !o->frames) return usage("--headless needs --png FILE, --video FILE or --frames DIR");
  } else if (o->png || o->video || o->frames || o->json) {
    return usage("--png, --video, --frames and --json need --headless (in the viewer: keys P and V)");
  }
  if (o->headless && (o->keys || o->quit_after > 0 || o->has_drag))
    return usage("--keys, --drag and --quit-after are for the viewer, not --headless");
  if (o->camera && (o->has_azimuth || o->has_elevation || o->has_distance || o->has_lookat))
    return usage("--camera cannot be combined with --azimuth/--elevation/--distance/--lookat");
  return 0;
}

/* ---------- MuJoCo's global handlers ---------- */

/* MuJoCo's default error handler exits (and waits for Enter); errors jump
 * back to the guarded call instead, so the viewer survives a bad scene or an
 * unstable simulation and the headless run still prints its summary. */
static jmp_buf error_jump;
static int error_jump_armed;
static char mj_error_text[512];
static int nwarning;
static char last_warning[256];

static void on_warning(const char *msg) {
  nwarning++;
  msgf(last_warning, sizeof last_warning, "%s", msg);
  fprintf(stderr, "cusp-view: MuJoCo warning: %s\n", msg);
}

static void on_error(const char *msg) {
  fprintf(stderr, "cusp-view: MuJoCo error: %s\n", msg);
  msgf(mj_error_text, sizeof mj_error_text, "MuJoCo error: %s", msg);
  if (error_jump_armed) {
    error_jump_armed = 0;
    longjmp(error_jump, 1);
  }
  exit(1);
}

static void on_glfw_error(int code, const char *msg) {
  fprintf(stderr, "cusp-view: GLFW error %d: %s\n", code, msg);
}

/* The guarded MuJoCo calls: setjmp in a frame of its own, no locals. */
enum { CALL_STEP, CALL_FORWARD, CALL_FWDPOSITION, CALL_RESET };
static int guarded(int call, const mjModel *m, mjData *d) {
  if (setjmp(error_jump)) return -1;
  error_jump_armed = 1;
  switch (call) {
    case CALL_STEP: mj_step(m, d); break;
    case CALL_FORWARD: mj_forward(m, d); break;
    case CALL_FWDPOSITION: mj_fwdPosition(m, d); break;
    case CALL_RESET: mj_resetData(m, d); mj_forward(m, d); break;
  }
  error_jump_armed = 0;
  return 0;
}

static int guarded_context(const mjModel *m, mjrContext *con, int fontscale) {
  if (setjmp(error_jump)) return -1;
  error_jump_armed = 1;
  mjr_makeContext(m, con, fontscale);
  error_jump_armed = 0;
  return 0;
}

/* ---------- images ---------- */

/* Writes an RGB image read by mjr_readPixels (rows bottom-up) as a PNG,
 * top-down. Returns 0, or -1 with a message. */
static int write_png(const char *path, const unsigned char *rgb, int w, int h, char *err, int errn) {
  png_bytep *rows = malloc(sizeof(png_bytep) * h);
  if (!rows) {
    msgf(err, errn, "out of memory writing '%s'", path);
    return -1;
  }
  for (int y = 0; y < h; y++) rows[y] = (png_bytep)(rgb + (size_t)(h - 1 - y) * w * 3);
  FILE *f = fopen(path, "wb");
  if (!f) {
    msgf(err, errn, "cannot write '%s': %s", path, strerror(errno));
    free(rows);
    return -1;
  }
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  int rc = -1;
  if (png && info && !setjmp(png_jmpbuf(png))) {
    png_init_io(png, f);
    png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 3); /* frames: speed over size */
    png_write_info(png, info);
    png_write_image(png, rows);
    png_write_end(png, NULL);
    rc = 0;
  }
  png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
  if (fclose(f) && !rc) rc = -1;
  if (rc) msgf(err, errn, "writing the PNG '%s' failed", path);
  free(rows);
  return rc;
}

static int on_path(const char *program) {
  const char *path = getenv("PATH");
  if (!path) return 0;
  char buf[4096];
  while (*path) {
    size_t n = strcspn(path, ":");
    if (n > 0 && n + strlen(program) + 2 < sizeof buf) {
      msgf(buf, sizeof buf, "%.*s/%s", (int)n, path, program);
      if (!access(buf, X_OK)) return 1;
    }
    path += n + (path[n] == ':');
  }
  return 0;
}

/* The directory part of path must exist and be writable. */
static int parent_writable(const char *path) {
  char dir[4096];
  msgf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash) return !access(".", W_OK);
  if (slash == dir) slash[1] = 0;
  else *slash = 0;
  return !access(dir, W_OK);
}

static int make_dir(const char *dir, char *err, int errn) {
  struct stat st;
  if (!stat(dir, &st)) {
    if (S_ISDIR(st.st_mode) && !access(dir, W_OK)) return 0;
    msgf(err, errn, "'%s' is not a writable directory", dir);
    return -1;
  }
  if (mkdir(dir, 0777)) {
    msgf(err, errn, "cannot create the directory '%s': %s", dir, strerror(errno));
    return -1;
  }
  return 0;
}

/* Video: raw RGB frames piped to ffmpeg, or numbered PNGs in a directory. */
typedef struct {
  FILE *pipe;
  char dir[4096];   /* PNG frames when not empty */
  char path[4096];  /* the video or the directory, as reported */
  int w, h;
  long frames;
  unsigned char *flip;
} recorder;

/* Quotes s for /bin/sh inside single quotes. */
static int shell_quote(char *out, size_t n, const char *s) {
  size_t k = 0;
  if (k + 1 >= n) return -1;
  out[k++] = '\'';
  for (; *s; s++) {
    if (*s == '\'') {
      if (k + 4 >= n) return -1;
      memcpy(out + k, "'\\''", 4);
      k += 4;
    } else {
      if (k + 1 >= n) return -1;
      out[k++] = *s;
    }
  }
  if (k + 2 > n) return -1;
  out[k++] = '\'';
  out[k] = 0;
  return 0;
}

/* video != NULL: ffmpeg if available, else frames next to it; else dir. */
static int recorder_open(recorder *r, const char *video, const char *dir, int w, int h, double fps, char *err,
                         int errn) {
  memset(r, 0, sizeof *r);
  r->w = w;
  r->h = h;
  if (video && on_path("ffmpeg")) {
    char q[4200], cmd[8600];
    if (shell_quote(q, sizeof q, video)) {
      msgf(err, errn, "the video path is too long");
      return -1;
    }
    /* even sizes for yuv420p; -y: the caller asked for this file */
    msgf(cmd, sizeof cmd,
             "ffmpeg -y -hide_banner -loglevel error -f rawvideo -pix_fmt rgb24 -s %dx%d -r %.6g -i - "
             "-vf 'pad=ceil(iw/2)*2:ceil(ih/2)*2' -pix_fmt yuv420p %s",
             w, h, fps, q);
    r->flip = malloc((size_t)w * h * 3);
    if (!r->flip) {
      msgf(err, errn, "out of memory for video frames");
      return -1;
    }
    r->pipe = popen(cmd, "w");
    if (!r->pipe) {
      msgf(err, errn, "cannot start ffmpeg: %s", strerror(errno));
      free(r->flip);
      r->flip = NULL;
      return -1;
    }
    msgf(r->path, sizeof r->path, "%s", video);
    return 0;
  }
  if (video) {
    /* no ffmpeg: frames in VIDEO-without-extension_frames/ */
    char base[4096];
    msgf(base, sizeof base, "%s", video);
    char *dot = strrchr(base, '.'), *slash = strrchr(base, '/');
    if (dot && (!slash || dot > slash + 1)) *dot = 0;
    if (strlen(base) + 8 >= sizeof r->dir) {
      msgf(err, errn, "the video path is too long");
      return -1;
    }
    msgf(r->dir, sizeof r->dir, "%s_frames", base);
    fprintf(stderr, "cusp-view: ffmpeg is not on PATH: writing PNG frames to '%s' instead of '%s'\n", r->dir,
            video);
  } else {
    msgf(r->dir, sizeof r->dir, "%s", dir);
  }
  if (make_dir(r->dir, err, errn)) return -1;
  msgf(r->path, sizeof r->path, "%s", r->dir);
  return 0;
}

static int recorder_write(recorder *r, const unsigned char *rgb, char *err, int errn) {
  if (r->pipe) {
    size_t row = (size_t)r->w * 3;
    for (int y = 0; y < r->h; y++) memcpy(r->flip + (size_t)y * row, rgb + (size_t)(r->h - 1 - y) * row, row);
    if (fwrite(r->flip, 1, row * r->h, r->pipe) != row * r->h) {
      msgf(err, errn, "ffmpeg stopped taking frames for '%s' (see its message above)", r->path);
      return -1;
    }
  } else {
    char name[4200];
    msgf(name, sizeof name, "%s/frame_%06ld.png", r->dir, r->frames);
    if (write_png(name, rgb, r->w, r->h, err, errn)) return -1;
  }
  r->frames++;
  return 0;
}

/* Returns 0, or -1 with a message when ffmpeg failed. */
static int recorder_close(recorder *r, char *err, int errn) {
  int rc = 0;
  if (r->pipe) {
    int status = pclose(r->pipe);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status)) {
      msgf(err, errn, "ffmpeg failed to write '%s' (status %d)", r->path, status);
      rc = -1;
    }
  }
  free(r->flip);
  memset(r, 0, sizeof *r);
  return rc;
}

/* ---------- the viewer's state ---------- */

static const char *const solver_names[] = {"fb", "lemke", "pgs"};
static const char *const stage_names[] = {"qr", "ruiz", "tikhonov"};

typedef struct {
  float x[mjMAXLINEPNT], y[mjMAXLINEPNT];
} history;

typedef struct {
  /* scene */
  char scene[4096];
  mjModel *m;
  mjData *d;
  int ninst;
  double *tube_radius;   /* per instance */
  int *inst_of_body;     /* per body: soft instance owning the disk body, or -1 */
  /* rendering */
  GLFWwindow *window;
  mjvCamera cam;
  mjvOption opt;
  mjvScene scn;
  mjrContext con;
  mjvPerturb pert;
  int have_scene;
  int fontscale;
  /* interaction */
  int paused, show_help, show_info, show_plots, show_contacts, show_tube;
  int slowdown;
  int button_left, button_right, button_middle;
  double lastx, lasty, last_click_time;
  int last_click_button;
  int camera_index;      /* -1 free, else the model camera */
  const char *camera_source; /* how the start camera was chosen (JSON) */
  /* dragging a soft disk: a spring from the backbone point at soft_s to the
   * mouse target pert.refpos, applied with cusp_apply_force */
  int soft_inst;         /* selected soft instance, or -1 */
  double soft_s;         /* arc length of the selected disk, m */
  double soft_prev[3], soft_prev_quat[4]; /* grab frame at the last step, for damping */
  int soft_have_prev, soft_applied;
  double soft_force[3], soft_torque[3], soft_peak;
  double soft_grab_tip[3];
  double rigid_grab[3];  /* the dragged rigid body's position at the grab */
  char pending_load[4096];
  /* switches as last set here; *_known = 0: still the scene's setting */
  int contact_known, contact_penalty;
  int solver_known, solver;
  int cond_known, cond_mask;
  char status[512];
  double status_time;
  /* run state */
  int failed;            /* the simulation failed: paused until reset */
  char failure[600];
  double rtf;            /* measured realtime factor */
  long prev_solves;
  double last_force, last_pen;
  int last_iter;
  /* plots */
  history hist[NPLOT];
  int nhist;
  mjvFigure *fig;        /* NPLOT */
  recorder rec;
  int recording, render_lost;
  unsigned char *pixels;
  size_t pixels_size;
} viewer;

static viewer V;

static void set_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void set_status(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(V.status, sizeof V.status, fmt, ap);
  va_end(ap);
  V.status_time = glfwGetTime();
  fprintf(stderr, "cusp-view: %s\n", V.status);
}

/* ---------- loading ---------- */

static void free_scene_model(mjModel *m, mjData *d) {
  if (d) {
    cusp_detach(d);
    mj_deleteData(d);
  }
  if (m) cusp_delete_model(m);
}

/* The tube radius: a fraction of the instance's disk radius (the geoms
 * named INSTANCE/diskK); which bodies are soft disks, for the picker. */
static int scene_tables(const mjModel *m, int ninst, double **radius, int **inst_of_body) {
  *radius = calloc(ninst ? ninst : 1, sizeof **radius);
  *inst_of_body = malloc(sizeof **inst_of_body * m->nbody);
  if (!*radius || !*inst_of_body) return -1;
  for (int b = 0; b < m->nbody; b++) (*inst_of_body)[b] = -1;
  for (int k = 0; k < ninst; k++) {
    const char *name = cusp_instance_name(m, k);
    size_t n = name ? strlen(name) : 0;
    double r = 0;
    for (int g = 0; g < m->ngeom && name; g++) {
      const char *gn = mj_id2name(m, mjOBJ_GEOM, g);
      if (gn && !strncmp(gn, name, n) && !strncmp(gn + n, "/disk", 5)) {
        r = fmax(r, m->geom_size[3 * g]);
        (*inst_of_body)[m->geom_bodyid[g]] = k;
      }
    }
    (*radius)[k] = r > 0 ? 0.55 * r : 0.01;
  }
  return 0;
}

static void clear_plots(void) {
  V.nhist = 0;
  for (int i = 0; i < NPLOT; i++) V.fig[i].linepnt[0] = 0;
}

/* Loads, attaches and computes the initial state; replaces the current
 * scene only on success. Returns 0, or -1 with a message. */
static int load_scene(const char *path, const options *o, char *err, int errn) {
  char e[1024] = "";
  mjModel *m = cusp_load_with(path, o ? o->overrides : NULL, o ? o->noverride : 0, e, sizeof e);
  if (!m) {
    msgf(err, errn, "%s", e[0] ? e : "cannot load the scene");
    return -1;
  }
  if (!(m->opt.timestep > 0) || !isfinite(m->opt.timestep)) {
    msgf(err, errn, "%s: the timestep %g is not a finite number > 0", path, m->opt.timestep);
    cusp_delete_model(m);
    return -1;
  }
  mjData *d = mj_makeData(m);
  if (!d) {
    msgf(err, errn, "out of memory for mjData");
    cusp_delete_model(m);
    return -1;
  }
  if (cusp_attach(m, d, e, sizeof e)) {
    msgf(err, errn, "%s", e);
    mj_deleteData(d);
    cusp_delete_model(m);
    return -1;
  }
  double *radius = NULL;
  int *inst_of_body = NULL;
  int ninst = cusp_instance_count(m);
  if (scene_tables(m, ninst, &radius, &inst_of_body) || guarded(CALL_FORWARD, m, d)) {
    msgf(err, errn, "%s: %s", path, radius && inst_of_body ? mj_error_text : "out of memory");
    free(radius);
    free(inst_of_body);
    free_scene_model(m, d);
    return -1;
  }
  free_scene_model(V.m, V.d);
  free(V.tube_radius);
  free(V.inst_of_body);
  V.m = m;
  V.d = d;
  V.ninst = ninst;
  V.tube_radius = radius;
  V.inst_of_body = inst_of_body;
  msgf(V.scene, sizeof V.scene, "%s", path);
  if (m->nlight == 0) {
    /* only the headlight: MuJoCo's default one leaves such scenes very dark */
    for (int j = 0; j < 3; j++) {
      m->vis.headlight.ambient[j] = fmaxf(m->vis.headlight.ambient[j], 0.3f);
      m->vis.headlight.diffuse[j] = fmaxf(m->vis.headlight.diffuse[j], 0.7f);
    }
  }
  mjv_defaultPerturb(&V.pert);
  V.soft_inst = -1;
  V.soft_applied = 0;
  V.contact_known = V.solver_known = V.cond_known = 0;
  V.failed = 0;
  V.failure[0] = 0;
  V.prev_solves = 0;
  V.last_force = V.last_pen = 0;
  V.last_iter = 0;
  V.camera_index = -1;
  clear_plots();
  return 0;
}

/* ---------- the start camera ---------- */

/* A point the start view should show: on a soft arm (inst) or the centre of
 * a moving rigid body (body), the other -1. */
typedef struct {
  double p[3];
  int inst, body;
} view_point;

static void grow_box(double lo[3], double hi[3], const double p[3], double r) {
  for (int j = 0; j < 3; j++) lo[j] = fmin(lo[j], p[j] - r), hi[j] = fmax(hi[j], p[j] + r);
}

/* Whether a visible geom hides vp from eye. The owner's own geoms are
 * skipped (a backbone point is inside its disks, a body's centre behind its
 * surface), and a surface within 1 cm of the point (a contact) does not hide it. */
static int view_hidden(const double eye[3], const view_point *vp) {
  const mjModel *m = V.m;
  const mjData *d = V.d;
  double vec[3];
  mju_sub3(vec, vp->p, eye);
  double len = mju_normalize3(vec);
  if (len < 1e-9) return 0;
  for (int g = 0; g < m->ngeom; g++) {
    int b = m->geom_bodyid[g], group = m->geom_group[g];
    if (b == vp->body || (vp->inst >= 0 && V.inst_of_body[b] == vp->inst)) continue;
    if (m->geom_rgba[4 * g + 3] == 0 || (group >= 0 && group < mjNGROUP && !V.opt.geomgroup[group])) continue;
    int type = m->geom_type[g];
    double x = type == mjGEOM_MESH     ? mj_rayMesh(m, d, g, eye, vec)
               : type == mjGEOM_HFIELD ? mj_rayHfield(m, d, g, eye, vec)
                                       : mju_rayGeom(d->geom_xpos + 3 * g, d->geom_xmat + 9 * g, m->geom_size + 3 * g,
                                                     eye, vec, type);
    if (x >= 0 && x < len - 0.01) return 1;
  }
  return 0;
}

/* The points of interest and the box to frame: the arms (grown by their disk
 * radius), the rigid bodies that move, and the small static geoms near the
 * arms (what they will touch). Planes and static geoms larger than the arms
 * (walls, inclines, posts, rails) are left out: framing them would leave the
 * arms small, and the part of them the arms touch is in view anyway.
 * Returns the number of points, 0 for a scene without soft arms. */
static int view_points(view_point *vp, int max, double lo[3], double hi[3]) {
  const mjModel *m = V.m;
  int n = 0;
  for (int j = 0; j < 3; j++) lo[j] = INFINITY, hi[j] = -INFINITY;
  for (int k = 0; k < V.ninst; k++) {
    double L = cusp_total_length(V.d, k);
    for (int i = 0; i < VIEW_SAMPLES && n < max; i++)
      if (!cusp_backbone_point(V.d, k, L * (i + 0.5) / VIEW_SAMPLES, vp[n].p, NULL)) {
        vp[n].inst = k;
        vp[n].body = -1;
        grow_box(lo, hi, vp[n++].p, V.tube_radius[k] / 0.55);
      }
  }
  if (n == 0) return 0;
  double c[3], r = 0;
  for (int j = 0; j < 3; j++) c[j] = 0.5 * (lo[j] + hi[j]), r = fmax(r, 0.5 * (hi[j] - lo[j]));
  double reach = 1.5 * r + 0.1;
  for (int b = 0; b < m->nbody; b++) {
    if (V.inst_of_body[b] >= 0) continue;
    int moves = m->body_weldid[b] != 0, any = 0;
    for (int g = m->body_geomadr[b]; g < m->body_geomadr[b] + m->body_geomnum[b]; g++) {
      const double *p = V.d->geom_xpos + 3 * g;
      double rb = m->geom_rbound[g];
      if (m->geom_type[g] == mjGEOM_PLANE || m->geom_rgba[4 * g + 3] == 0 || !(rb > 0)) continue;
      if (!moves && (rb > fmax(r, 0.1) || mju_dist3(p, c) - rb > reach)) continue;
      grow_box(lo, hi, p, rb);
      any = 1;
    }
    if (moves && any && n < max) {
      mju_copy3(vp[n].p, V.d->xipos + 3 * b);
      vp[n].inst = -1;
      vp[n++].body = b;
    }
  }
  return n;
}

/* A free camera that shows the soft arms: it frames the box of view_points
 * for the image's aspect ratio, and looks from the direction (azimuth every
 * 15 degrees, a few elevations) that leaves most of each arm and of the
 * moving bodies unhidden, preferring to look across the plane the arms and
 * bodies spread in. Returns 0, or -1 (scene without soft arms: unchanged). */
static int auto_camera(double aspect) {
  static const double elevations[] = {-20, -30, -40, -55};
  view_point *vp = malloc(sizeof *vp * VIEW_MAXPOINT);
  double lo[3], hi[3];
  int n = vp ? view_points(vp, VIEW_MAXPOINT, lo, hi) : 0;
  if (n == 0) {
    free(vp);
    return -1;
  }
  double c[3], mean[3] = {0, 0, 0}, cov[9] = {0}, val[3], vec[9], quat[4];
  for (int j = 0; j < 3; j++) c[j] = 0.5 * (lo[j] + hi[j]);
  for (int i = 0; i < n; i++) mju_addToScl3(mean, vp[i].p, 1.0 / n);
  for (int i = 0; i < n; i++)
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) cov[3 * a + b] += (vp[i].p[a] - mean[a]) * (vp[i].p[b] - mean[b]) / n;
  mju_eig3(val, vec, quat, cov);
  int lo_i = 0, mid_i = 0;
  for (int j = 1; j < 3; j++) lo_i = val[j] < val[lo_i] ? j : lo_i;
  for (int j = 0; j < 3; j++) mid_i = j != lo_i && (mid_i == lo_i || val[j] < val[mid_i]) ? j : mid_i;
  double normal[3] = {vec[lo_i], vec[3 + lo_i], vec[6 + lo_i]};
  double planar = val[mid_i] > 0 ? 1 - sqrt(fmax(val[lo_i], 0) / val[mid_i]) : 0;
  int nbody = 0;
  for (int i = 0; i < n; i++) nbody += vp[i].inst < 0;
  double ty = tan(0.5 * V.m->vis.global.fovy * mjPI / 180), tx = ty * aspect;
  double best = -INFINITY, best_az = 90, best_el = -30, best_dist = 1;
  for (size_t e = 0; e < sizeof elevations / sizeof elevations[0]; e++)
    for (int a = 0; a < 24; a++) {
      double az = 90 + 15 * a, el = elevations[e];
      double ca = cos(az * mjPI / 180), sa = sin(az * mjPI / 180), ce = cos(el * mjPI / 180),
             se = sin(el * mjPI / 180);
      /* mjv_updateCamera's free camera */
      double fwd[3] = {ce * ca, ce * sa, se}, up[3] = {-se * ca, -se * sa, ce}, right[3];
      mju_cross(right, fwd, up);
      double dist = 0.1;
      for (int k = 0; k < 8; k++) {
        double p[3] = {k & 1 ? hi[0] : lo[0], k & 2 ? hi[1] : lo[1], k & 4 ? hi[2] : lo[2]}, rel[3];
        mju_sub3(rel, p, c);
        double z = mju_dot3(rel, fwd);
        dist = fmax(dist, fmax(fabs(mju_dot3(rel, right)) / tx, fabs(mju_dot3(rel, up)) / ty) - z);
      }
      dist *= 1.25;
      double eye[3];
      for (int j = 0; j < 3; j++) eye[j] = c[j] - dist * fwd[j];
      double arm_sum = 0, arm_min = 1, body_vis = 0;
      for (int k = 0; k < V.ninst; k++) {
        int seen = 0, total = 0;
        for (int i = 0; i < n; i++)
          if (vp[i].inst == k) total++, seen += !view_hidden(eye, &vp[i]);
        double f = total ? (double)seen / total : 1;
        arm_sum += f;
        arm_min = fmin(arm_min, f);
      }
      for (int i = 0; i < n; i++)
        if (vp[i].inst < 0) body_vis += !view_hidden(eye, &vp[i]);
      body_vis = nbody ? body_vis / nbody : 1;
      /* three-quarter views: about 35 degrees off the normal of that plane */
      double across = 1 - fabs(fabs(mju_dot3(fwd, normal)) - 0.8);
      double score = 2 * arm_sum / V.ninst + arm_min + body_vis + 0.5 * planar * across - 0.004 * fabs(el + 30);
      if (score > best + 1e-9) best = score, best_az = az, best_el = el, best_dist = dist;
    }
  free(vp);
  V.cam.type = mjCAMERA_FREE;
  mju_copy3(V.cam.lookat, c);
  V.cam.distance = best_dist;
  V.cam.azimuth = fmod(best_az, 360);
  V.cam.elevation = best_el;
  return 0;
}

/* A model camera as the free camera that looks the same way (so the mouse
 * can still turn it): the look-at point is where its axis passes closest to
 * the box centre of the scene's points of interest (or 1 m ahead). */
static void free_from_camera(int id) {
  const double *mat = V.d->cam_xmat + 9 * id, *pos = V.d->cam_xpos + 3 * id;
  double fwd[3] = {-mat[2], -mat[5], -mat[8]}, lo[3], hi[3], dist = 1; /* a camera looks along -z */
  view_point *vp = malloc(sizeof *vp * VIEW_MAXPOINT);
  if (vp && view_points(vp, VIEW_MAXPOINT, lo, hi) > 0) {
    double c[3], rel[3];
    for (int j = 0; j < 3; j++) c[j] = 0.5 * (lo[j] + hi[j]);
    mju_sub3(rel, c, pos);
    dist = fmax(mju_dot3(rel, fwd), 0.1);
  }
  free(vp);
  V.cam.type = mjCAMERA_FREE;
  for (int j = 0; j < 3; j++) V.cam.lookat[j] = pos[j] + dist * fwd[j];
  V.cam.distance = dist;
  V.cam.azimuth = atan2(fwd[1], fwd[0]) * 180 / mjPI;
  V.cam.elevation = asin(fmax(-1, fmin(1, fwd[2]))) * 180 / mjPI;
}

/* The start camera: --camera NAME (that fixed camera); else a model camera
 * named "cusp_default" (as a free camera); else, for scenes with soft arms,
 * auto_camera; else MuJoCo's default free camera. --azimuth, --elevation,
 * --distance and --lookat then override single values. */
static int setup_camera(const options *o, double aspect, char *err, int errn) {
  mjv_defaultFreeCamera(V.m, &V.cam);
  V.camera_source = "mujoco";
  int preferred = o->camera ? -1 : mj_name2id(V.m, mjOBJ_CAMERA, "cusp_default");
  if (preferred >= 0) {
    free_from_camera(preferred);
    V.camera_source = "cusp_default";
  } else if (!o->camera && !auto_camera(aspect)) {
    V.camera_source = "auto";
  }
  if (o->camera) {
    int id = mj_name2id(V.m, mjOBJ_CAMERA, o->camera);
    if (id < 0) {
      msgf(err, errn, "%s has no camera named '%s' (cameras:", V.scene, o->camera);
      for (int c = 0; c < V.m->ncam; c++) {
        const char *n = mj_id2name(V.m, mjOBJ_CAMERA, c);
        int k = (int)strlen(err);
        msgf(err + k, errn - k, " %s", n ? n : "(unnamed)");
      }
      int k = (int)strlen(err);
      msgf(err + k, errn - k, "%s)", V.m->ncam ? "" : " none");
      return -1;
    }
    V.cam.type = mjCAMERA_FIXED;
    V.cam.fixedcamid = id;
    V.camera_index = id;
    V.camera_source = "option";
  }
  if (o->has_azimuth) V.cam.azimuth = o->azimuth;
  if (o->has_elevation) V.cam.elevation = o->elevation;
  if (o->has_distance) V.cam.distance = o->distance;
  if (o->has_lookat) memcpy(V.cam.lookat, o->lookat, sizeof o->lookat);
  return 0;
}

/* Rendering resources for the current model (offscreen buffer >= w x h). */
static int make_render(int w, int h, char *err, int errn) {
  if (V.have_scene) {
    mjr_freeContext(&V.con);
    mjv_freeScene(&V.scn);
    V.have_scene = 0;
  }
  if (V.m->vis.global.offwidth < w) V.m->vis.global.offwidth = w;
  if (V.m->vis.global.offheight < h) V.m->vis.global.offheight = h;
  mjv_defaultScene(&V.scn);
  mjr_defaultContext(&V.con);
  mjv_makeScene(V.m, &V.scn, MAX_GEOM + V.m->ngeom);
  if (guarded_context(V.m, &V.con, V.fontscale)) {
    msgf(err, errn, "cannot create the OpenGL rendering context: %s", mj_error_text);
    mjv_freeScene(&V.scn);
    return -1;
  }
  V.have_scene = 1;
  if (V.con.offWidth < w || V.con.offHeight < h) {
    msgf(err, errn, "the offscreen buffer is %dx%d, smaller than the requested %dx%d", V.con.offWidth,
             V.con.offHeight, w, h);
    return -1;
  }
  return 0;
}

/* ---------- what a step produced ---------- */

/* Records the step's contact force, penetration and iterations for the plots. */
static void record_step(void) {
  const cusp_step_report *r = cusp_report(V.d);
  double force = 0, pen = 0;
  int iter = 0;
  if (r) {
    const cusp_contact_report *c = NULL;
    int n = cusp_contacts(V.d, &c);
    for (int i = 0; i < n; i++)
      if (c[i].kept && isfinite(c[i].normal_impulse)) force += c[i].normal_impulse / V.m->opt.timestep;
    pen = r->max_penetration;
    if (r->solves > V.prev_solves) iter = r->info.lcp.iterations;
    V.prev_solves = r->solves;
  }
  V.last_force = force;
  V.last_pen = pen;
  V.last_iter = iter;
  float vals[NPLOT] = {(float)force, (float)(1000 * pen), (float)iter};
  if (V.nhist == mjMAXLINEPNT) {
    for (int p = 0; p < NPLOT; p++) {
      memmove(V.hist[p].x, V.hist[p].x + 1, sizeof(float) * (mjMAXLINEPNT - 1));
      memmove(V.hist[p].y, V.hist[p].y + 1, sizeof(float) * (mjMAXLINEPNT - 1));
    }
    V.nhist--;
  }
  for (int p = 0; p < NPLOT; p++) {
    V.hist[p].x[V.nhist] = (float)V.d->time;
    V.hist[p].y[V.nhist] = isfinite(vals[p]) ? vals[p] : 0;
  }
  V.nhist++;
}

/* After a step: NaN in the state, MuJoCo's instability warnings or cusp's
 * NaN events fail the run (MuJoCo resets d on a bad qacc). */
static int check_step(long step) {
  const cusp_step_report *r = cusp_report(V.d);
  if (!state_finite(V.m, V.d))
    msgf(V.failure, sizeof V.failure, "non-finite qpos, qvel or qacc at step %ld", step);
  else if (V.d->warning[mjWARN_BADQACC].number > 0 || V.d->warning[mjWARN_BADQVEL].number > 0 ||
           V.d->warning[mjWARN_BADQPOS].number > 0)
    msgf(V.failure, sizeof V.failure, "MuJoCo reported an unstable state at step %ld (%s)", step,
             last_warning);
  else if (r && r->nan_events > 0)
    msgf(V.failure, sizeof V.failure, "cusp reported %ld NaN event(s) by step %ld", r->nan_events, step);
  else
    return 0;
  V.failed = 1;
  return -1;
}

/* The pull on a dragged soft disk, as mjv_applyPerturbForce pulls a rigid
 * body: a spring of vis.map.stiffness (1/s^2) times the arm's mass from the
 * backbone point to the mouse target, critically damped for that mass
 * (velocity by finite differences over the step); Ctrl+left twists with
 * vis.map.stiffnessrot times mass x (distal length)^2, the moment arm of a
 * twist on the rest of the arm. Held by cusp until the next step's call. */
static void soft_drag_force(void) {
  const mjModel *m = V.m;
  int k = V.soft_inst;
  double p[3], R[9], quat[4], h = m->opt.timestep, err[3];
  mju_zero3(V.soft_force);
  mju_zero3(V.soft_torque);
  if (cusp_backbone_point(V.d, k, V.soft_s, p, R)) {
    if (V.soft_applied) cusp_apply_force(V.d, k, 0, NULL, NULL, NULL, 0);
    V.soft_applied = 0;
    return;
  }
  mju_mat2Quat(quat, R);
  double mass = cusp_total_mass(V.d, k), L = cusp_total_length(V.d, k);
  double arm = fmax(L - V.soft_s, V.tube_radius[k] / 0.55);
  if (V.pert.active & mjPERT_TRANSLATE) {
    double ks = m->vis.map.stiffness * mass, cs = 2 * sqrt(m->vis.map.stiffness) * mass;
    mju_sub3(err, V.pert.refpos, p);
    for (int j = 0; j < 3; j++)
      V.soft_force[j] = ks * err[j] - (V.soft_have_prev ? cs * (p[j] - V.soft_prev[j]) / h : 0);
  }
  if (V.pert.active & mjPERT_ROTATE) {
    double inertia = mass * arm * arm, kr = m->vis.map.stiffnessrot * inertia;
    double cr = 2 * sqrt(m->vis.map.stiffnessrot) * inertia, rot[3], rate[3] = {0, 0, 0}, local[3];
    mju_subQuat(local, V.pert.refquat, quat); /* in the grab frame's axes */
    mju_rotVecMat(rot, local, R);
    if (V.soft_have_prev) {
      mju_subQuat(local, quat, V.soft_prev_quat);
      mju_rotVecMat(rate, local, R);
      mju_scl3(rate, rate, 1 / h);
    }
    for (int j = 0; j < 3; j++) V.soft_torque[j] = kr * rot[j] - cr * rate[j];
  }
  mju_copy3(V.soft_prev, p);
  mju_copy4(V.soft_prev_quat, quat);
  V.soft_have_prev = 1;
  char msg[256];
  if (cusp_apply_force(V.d, k, V.soft_s, V.soft_force, V.soft_torque, msg, sizeof msg)) {
    set_status("drag: %s", msg);
    cusp_apply_force(V.d, k, 0, NULL, NULL, NULL, 0); /* not the last step's pull either */
    V.soft_applied = 0;
    return;
  }
  V.soft_applied = 1;
  V.soft_peak = fmax(V.soft_peak, mju_norm3(V.soft_force));
}

/* Ends a drag: a soft load is cleared; the status says what the drag did. */
static void drag_release(void) {
  if (V.soft_inst < 0 && V.pert.select > 0 && V.pert.active) {
    const double *p = V.d->xpos + 3 * V.pert.select;
    const char *name = mj_id2name(V.m, mjOBJ_BODY, V.pert.select);
    set_status("released body %s: moved (%.1f, %.1f, %.1f) mm", name ? name : "(unnamed)",
               1e3 * (p[0] - V.rigid_grab[0]), 1e3 * (p[1] - V.rigid_grab[1]), 1e3 * (p[2] - V.rigid_grab[2]));
  }
  if (V.soft_inst < 0 || !V.soft_applied) return;
  cusp_apply_force(V.d, V.soft_inst, 0, NULL, NULL, NULL, 0);
  V.soft_applied = 0;
  double tip[3];
  if (!cusp_tip_pose(V.d, V.soft_inst, tip, NULL))
    set_status("released \"%s\" at s = %.3f m: peak pull %.3g N, tip moved (%.1f, %.1f, %.1f) mm",
               cusp_instance_name(V.m, V.soft_inst), V.soft_s, V.soft_peak, 1e3 * (tip[0] - V.soft_grab_tip[0]),
               1e3 * (tip[1] - V.soft_grab_tip[1]), 1e3 * (tip[2] - V.soft_grab_tip[2]));
}

/* One step with the perturbation's force (running: only mocap poses move). */
static int sim_step(long step) {
  mju_zero(V.d->xfrc_applied, 6 * V.m->nbody);
  if (V.pert.select > 0 && V.pert.active && V.soft_inst >= 0) {
    soft_drag_force();
  } else if (V.pert.select > 0 && V.pert.active) {
    mjv_applyPerturbPose(V.m, V.d, &V.pert, 0);
    mjv_applyPerturbForce(V.m, V.d, &V.pert);
  }
  if (guarded(CALL_STEP, V.m, V.d)) {
    msgf(V.failure, sizeof V.failure, "%s at step %ld", mj_error_text, step);
    V.failed = 1;
    return -1;
  }
  record_step();
  return check_step(step);
}

/* ---------- drawing into the scene ---------- */

static mjvGeom *new_geom(mjvScene *scn, int type, const float rgba[4]) {
  if (scn->ngeom >= scn->maxgeom) return NULL;
  mjvGeom *g = scn->geoms + scn->ngeom++;
  mjv_initGeom(g, type, NULL, NULL, NULL, rgba);
  g->category = mjCAT_DECOR;
  g->objtype = mjOBJ_UNKNOWN;
  g->objid = -1;
  g->segid = -1;
  return g;
}

static const float TUBE_RGBA[4] = {0.35f, 0.62f, 0.78f, 1};
static const float CONTACT_RGBA[4] = {0.9f, 0.1f, 0.1f, 1};
static const float DROPPED_RGBA[4] = {0.7f, 0.2f, 1.0f, 1};
static const float NORMAL_RGBA[4] = {0.1f, 0.85f, 0.2f, 1};
static const float FRICTION_RGBA[4] = {1.0f, 0.9f, 0.1f, 1};
static const float PULL_RGBA[4] = {1.0f, 0.3f, 0.8f, 1};

static void add_arrow(mjvScene *scn, const float rgba[4], double width, const double a[3], const double b[3]) {
  mjvGeom *g = new_geom(scn, mjGEOM_ARROW, rgba);
  if (g) mjv_makeConnector(g, mjGEOM_ARROW, width, a[0], a[1], a[2], b[0], b[1], b[2]);
}

/* The backbone as a chain of capsules, the contacts and their impulses. */
static void add_cusp_geoms(mjvScene *scn) {
  const mjModel *m = V.m;
  mjData *d = V.d;
  for (int k = 0; k < V.ninst && V.show_tube; k++) {
    double L = cusp_total_length(d, k), prev[3], p[3];
    if (!(L > 0) || cusp_backbone_point(d, k, 0, prev, NULL)) continue;
    for (int i = 1; i <= TUBE_SEGMENTS; i++) {
      if (cusp_backbone_point(d, k, L * i / TUBE_SEGMENTS, p, NULL)) break;
      if (!isfinite(p[0] + p[1] + p[2])) break;
      mjvGeom *g = new_geom(scn, mjGEOM_CAPSULE, TUBE_RGBA);
      if (!g) return;
      mjv_makeConnector(g, mjGEOM_CAPSULE, V.tube_radius[k], prev[0], prev[1], prev[2], p[0], p[1], p[2]);
      memcpy(prev, p, sizeof p);
    }
  }
  /* the pull on a dragged soft disk, scaled like the contact forces */
  double fnorm = mju_norm3(V.soft_force), at[3], tip[3];
  if (V.soft_inst >= 0 && V.soft_applied && fnorm > 0 && !cusp_backbone_point(d, V.soft_inst, V.soft_s, at, NULL)) {
    double len = fmin(m->vis.map.force / fmax(m->stat.meanmass, 1e-6) * fnorm, fmax(0.5 * m->stat.extent, 0.05));
    for (int j = 0; j < 3; j++) tip[j] = at[j] + len * V.soft_force[j] / fnorm;
    if (isfinite(len)) add_arrow(scn, PULL_RGBA, 0.4 * V.tube_radius[V.soft_inst], at, tip);
  }
  if (!V.show_contacts) return;
  const cusp_contact_report *c = NULL;
  int n = cusp_contacts(d, &c);
  double h = m->opt.timestep;
  /* MuJoCo's convention for force arrows: vis.map.force metres per N per kg */
  double scale = m->vis.map.force / fmax(m->stat.meanmass, 1e-6);
  double maxlen = fmax(0.5 * m->stat.extent, 0.05);
  double r = fmax(0.2 * m->vis.scale.contactwidth * m->stat.meansize, 0.003);
  for (int i = 0; i < n; i++) {
    const double *pos = c[i].pos, *nrm = c[i].normal;
    if (!isfinite(pos[0] + pos[1] + pos[2] + nrm[0] + nrm[1] + nrm[2])) continue;
    mjvGeom *g = new_geom(scn, mjGEOM_SPHERE, c[i].kept ? CONTACT_RGBA : DROPPED_RGBA);
    if (!g) return;
    double size[3] = {r, r, r};
    for (int j = 0; j < 3; j++) g->size[j] = (float)size[j], g->pos[j] = (float)pos[j];
    double tip[3];
    if (!c[i].kept) {
      /* dropped by rank selection: its normal, fixed length, own colour */
      for (int j = 0; j < 3; j++) tip[j] = pos[j] + 6 * r * nrm[j];
      add_arrow(scn, DROPPED_RGBA, 0.4 * r, pos, tip);
      continue;
    }
    double fn = c[i].normal_impulse / h, ft[3], dot = mju_dot3(c[i].impulse, nrm);
    for (int j = 0; j < 3; j++) ft[j] = (c[i].impulse[j] - dot * nrm[j]) / h;
    double len = fmin(scale * fabs(fn), maxlen);  /* huge impulses stay on screen */
    if (isfinite(len) && len > 2 * r) {
      for (int j = 0; j < 3; j++) tip[j] = pos[j] + len * nrm[j];
      add_arrow(scn, NORMAL_RGBA, 0.5 * r, pos, tip);
    }
    double ftn = mju_norm3(ft);
    len = fmin(scale * ftn, maxlen);
    if (isfinite(len) && len > 2 * r) {
      for (int j = 0; j < 3; j++) tip[j] = pos[j] + len * ft[j] / ftn;
      add_arrow(scn, FRICTION_RGBA, 0.5 * r, pos, tip);
    }
  }
}

/* ---------- switches ---------- */

static void cond_value(int mask, char *buf, size_t n) {
  buf[0] = 0;
  for (int s = 0; s < 3; s++)
    if (mask & (1 << s)) {
      if (buf[0]) strncat(buf, " ", n - strlen(buf) - 1);
      strncat(buf, stage_names[s], n - strlen(buf) - 1);
    }
  if (!buf[0]) msgf(buf, n, "none");
}

/* Sets key=value on every instance; returns 0 or -1 (status says why). */
static int set_all(const char *key, const char *value) {
  if (V.ninst == 0) {
    set_status("no soft instance in this scene: nothing to switch");
    return -1;
  }
  char err[512];
  for (int k = 0; k < V.ninst; k++)
    if (cusp_set(V.d, k, key, value, err, sizeof err)) {
      set_status("%s", err);
      return -1;
    }
  set_status("%s = %s", key, value);
  return 0;
}

static void toggle_contact_model(void) {
  /* the scene's setting cannot be read back: guess from whether LCPs ran */
  const cusp_step_report *r = cusp_report(V.d);
  int looks_penalty = r && r->ncontact > 0 && r->solves == 0;
  int penalty = V.contact_known ? !V.contact_penalty : !looks_penalty;
  if (!set_all("contact", penalty ? "penalty" : "lcp")) {
    V.contact_known = 1;
    V.contact_penalty = penalty;
  }
}

static void cycle_solver(void) {
  const cusp_step_report *r = cusp_report(V.d);
  int cur = V.solver_known ? V.solver : r && r->solves > 0 ? (int)r->info.lcp.solver : 0;
  int next = (cur + 1) % 3;
  if (!set_all("solver", solver_names[next])) {
    V.solver_known = 1;
    V.solver = next;
  }
}

static void toggle_stage(int stage) {
  /* unknown: start from the documented default, all three stages on */
  int mask = V.cond_known ? V.cond_mask : 7;
  mask = stage < 0 ? (mask ? 0 : 7) : mask ^ (1 << stage);
  char value[64];
  cond_value(mask, value, sizeof value);
  if (!set_all("conditioning", value)) {
    V.cond_known = 1;
    V.cond_mask = mask;
  }
}

/* ---------- overlays and plots ---------- */

static void draw_info(mjrRect rect) {
  const cusp_step_report *r = cusp_report(V.d);
  char left[1024], right[2048], cond[64];
  msgf(left, sizeof left,
           "Time\nRealtime\nSlow motion\nSoft contacts\nMuJoCo contacts\nSolver its / resid\nMax penetration\n"
           "Normal force\nContact model\nSolver\nConditioning\nState");
  const char *model = V.contact_known ? (V.contact_penalty ? "penalty" : "lcp") : "as loaded";
  char solver[64];
  if (V.solver_known) msgf(solver, sizeof solver, "%s", solver_names[V.solver]);
  else msgf(solver, sizeof solver, "as loaded");
  if (r && r->solves > 0 && r->info.lcp.solver < SB_LCP_NSOLVERS) {
    size_t k = strlen(solver);
    msgf(solver + k, sizeof solver - k, " (last: %s%s)", solver_names[r->info.lcp.solver],
             r->fallback ? ", fallback" : "");
  }
  if (V.cond_known) cond_value(V.cond_mask, cond, sizeof cond);
  else msgf(cond, sizeof cond, "as loaded");
  char its[64];
  if (r && r->solves > 0) msgf(its, sizeof its, "%d / %.2g", r->info.lcp.iterations, r->info.residual);
  else msgf(its, sizeof its, "-");
  msgf(right, sizeof right,
           "%.3f s\n%.2fx\n1/%d\n%d active, %d kept\n%d\n%s\n%.3g mm\n%.4g N\n%s\n%s\n%s\n%s%s%s",
           V.d->time, V.rtf, V.slowdown, r ? r->ncontact : 0, r ? r->nkept : 0, V.d->ncon, its,
           1000 * V.last_pen, V.last_force, V.ninst ? model : "(no soft instance)", V.ninst ? solver : "-",
           V.ninst ? cond : "-", V.failed ? "FAILED" : V.paused ? "paused" : "running",
           V.recording ? ", recording" : "", r && r->nan_events ? ", NaN events" : "");
  mjr_overlay(mjFONT_NORMAL, mjGRID_BOTTOMLEFT, rect, left, right, &V.con);
}

static void draw_help(mjrRect rect) {
  static const char keys[] =
      "F1, H\nSpace\nRight arrow\nBackspace\n- / =\nC\nS\n1 2 3\n0\nP\nV\nG\nI\nF\nT\nTab\n"
      "Left drag\nRight drag\nScroll, middle\nDouble-click L\nDouble-click R\nCtrl+L drag\nCtrl+R drag\n"
      "Esc\nCtrl+Q\nDrop a file";
  static const char what[] =
      "this help\npause / run\nstep once (paused)\nreset\nslower / faster\ncontact: lcp <-> penalty\n"
      "solver: fb -> lemke -> pgs\nconditioning: qr, ruiz, tikhonov\nconditioning all off / on\n"
      "screenshot (PNG)\nrecord video on/off\nplots\ninfo\ncontacts and impulses\nbackbone tube\n"
      "camera: free / model cameras\nrotate camera (Shift: horizontal)\nmove camera (Shift: horizontal)\n"
      "zoom\nselect body or soft disk (again: none)\nlook at point\nrotate body / twist soft disk\n"
      "move body / pull soft disk\n"
      "unselect, close help\nquit\nopen that scene";
  mjr_overlay(mjFONT_NORMAL, mjGRID_TOPLEFT, rect, keys, what, &V.con);
}

static void draw_plots(mjrRect rect) {
  int w = rect.width / 4 < 220 ? 220 : rect.width / 4;
  int h = rect.height / 4 < 140 ? 140 : rect.height / 4;
  if (w > rect.width || NPLOT * h > rect.height) return;
  for (int p = 0; p < NPLOT; p++) {
    mjvFigure *f = &V.fig[p];
    int n = V.nhist;
    float ymax = 0;
    for (int i = 0; i < n; i++) {
      f->linedata[0][2 * i] = V.hist[p].x[i];
      f->linedata[0][2 * i + 1] = V.hist[p].y[i];
      if (V.hist[p].y[i] > ymax) ymax = V.hist[p].y[i];
    }
    f->linepnt[0] = n;
    float x0 = n ? V.hist[p].x[0] : 0, x1 = n ? V.hist[p].x[n - 1] : 1;
    f->range[0][0] = x0;
    f->range[0][1] = x1 > x0 ? x1 : x0 + 1;
    f->range[1][0] = 0;
    f->range[1][1] = ymax > 0 ? 1.1f * ymax : 1;
    mjrRect r = {rect.left + rect.width - w, rect.bottom + rect.height - (p + 1) * h, w, h};
    mjr_figure(r, f, &V.con);
  }
}

static void init_figures(void) {
  static const char *const titles[NPLOT] = {"Normal force (N)", "Max penetration (mm)", "Solver iterations"};
  for (int p = 0; p < NPLOT; p++) {
    mjvFigure *f = &V.fig[p];
    mjv_defaultFigure(f);
    msgf(f->title, sizeof f->title, "%s", titles[p]);
    msgf(f->xlabel, sizeof f->xlabel, "time (s)");
    msgf(f->xformat, sizeof f->xformat, "%%.1f");
    msgf(f->yformat, sizeof f->yformat, "%%.3g");
    msgf(f->minwidth, sizeof f->minwidth, "0000");
    f->flg_extend = 0;
    f->flg_legend = 0;
    f->flg_ticklabel[0] = f->flg_ticklabel[1] = 1;
    f->gridsize[0] = f->gridsize[1] = 3;
    f->figurergba[3] = 0.6f;
    f->panergba[3] = 0.6f;
    f->linergb[0][0] = 1;
    f->linergb[0][1] = p == 0 ? 0.4f : p == 1 ? 0.8f : 1;
    f->linergb[0][2] = p == 2 ? 1 : 0.3f;
  }
}

/* ---------- one rendered frame ---------- */

static void render(mjrRect rect, int overlay, int plots, const mjvPerturb *pert) {
  mjv_updateScene(V.m, V.d, &V.opt, pert, &V.cam, mjCAT_ALL, &V.scn);
  add_cusp_geoms(&V.scn);
  mjr_render(rect, &V.scn, &V.con);
  if (plots) draw_plots(rect);
  if (overlay) draw_info(rect);
}

static int read_pixels(mjrRect rect) {
  size_t need = (size_t)rect.width * rect.height * 3;
  if (need > V.pixels_size) {
    unsigned char *p = realloc(V.pixels, need);
    if (!p) return -1;
    V.pixels = p;
    V.pixels_size = need;
  }
  mjr_readPixels(V.pixels, NULL, rect, &V.con);
  return 0;
}

/* Projects a world point with the scene's camera into pixel coordinates
 * (x right, y down from the top-left corner) of a w x h image; 0 if in front
 * of the camera. Mirrors mjr_render's frustum: the horizontal half-width
 * follows the viewport's aspect ratio. */
static int project(const mjvScene *scn, int w, int h, const double p[3], double px[2]) {
  mjvGLCamera c = mjv_averageCamera(&scn->camera[0], &scn->camera[1]);
  double f[3] = {c.forward[0], c.forward[1], c.forward[2]}, u[3] = {c.up[0], c.up[1], c.up[2]}, rt[3];
  double v[3] = {p[0] - c.pos[0], p[1] - c.pos[1], p[2] - c.pos[2]};
  mju_cross(rt, f, u);
  double z = mju_dot3(v, f);
  if (z <= c.frustum_near * 0.5) return -1;
  double xn = mju_dot3(v, rt) * c.frustum_near / z, yn = mju_dot3(v, u) * c.frustum_near / z;
  double half_h = 0.5 * (c.frustum_top - c.frustum_bottom), half_w = half_h * w / h;
  double ndc_x = (xn - c.frustum_center) / half_w;
  double ndc_y = (yn - 0.5 * (c.frustum_top + c.frustum_bottom)) / half_h;
  px[0] = 0.5 * (ndc_x + 1) * w;
  px[1] = 0.5 * (1 - ndc_y) * h;
  return 0;
}

/* ---------- headless ---------- */

typedef struct {
  double tip[3], tip_px[2], bbox[4];
  int tip_visible, bbox_visible;
} soft_view;

/* Where each soft arm lands in the last image: tip pixel and bounding box. */
static void soft_views(soft_view *sv, int w, int h) {
  for (int k = 0; k < V.ninst; k++) {
    soft_view *s = &sv[k];
    memset(s, 0, sizeof *s);
    double q[4];
    for (int j = 0; j < 3; j++) s->tip[j] = NAN;
    cusp_tip_pose(V.d, k, s->tip, q);
    s->tip_visible = !project(&V.scn, w, h, s->tip, s->tip_px) && s->tip_px[0] >= 0 && s->tip_px[0] < w &&
                     s->tip_px[1] >= 0 && s->tip_px[1] < h;
    double L = cusp_total_length(V.d, k), lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    /* disk radius around the backbone, along the camera's right and up axes */
    mjvGLCamera c = mjv_averageCamera(&V.scn.camera[0], &V.scn.camera[1]);
    double f[3] = {c.forward[0], c.forward[1], c.forward[2]}, u[3] = {c.up[0], c.up[1], c.up[2]}, rt[3];
    mju_cross(rt, f, u);
    double rad = V.tube_radius[k] / 0.55;
    for (int i = 0; i <= 32; i++) {
      double p[3], px[2];
      if (cusp_backbone_point(V.d, k, L * i / 32, p, NULL)) continue;
      for (int e = 0; e < 4; e++) {
        double sgn = e & 1 ? -rad : rad, *ax = e < 2 ? rt : u, pe[3];
        for (int j = 0; j < 3; j++) pe[j] = p[j] + sgn * ax[j];
        if (project(&V.scn, w, h, pe, px)) continue;
        for (int j = 0; j < 2; j++) lo[j] = fmin(lo[j], px[j]), hi[j] = fmax(hi[j], px[j]);
      }
    }
    s->bbox[0] = fmax(lo[0], 0);
    s->bbox[1] = fmax(lo[1], 0);
    s->bbox[2] = fmin(hi[0], w - 1);
    s->bbox[3] = fmin(hi[1], h - 1);
    s->bbox_visible = isfinite(lo[0]) && s->bbox[0] <= s->bbox[2] && s->bbox[1] <= s->bbox[3];
  }
}

/* Renders one frame offscreen and reads it back. */
static int headless_frame(const options *o, mjrRect rect, char *err, int errn) {
  /* positions of the current state without running cusp's callback */
  if (guarded(CALL_FWDPOSITION, V.m, V.d)) {
    msgf(err, errn, "%s", mj_error_text);
    return -1;
  }
  render(rect, o->overlay, o->plots, NULL);
  if (read_pixels(rect)) {
    msgf(err, errn, "out of memory for pixels");
    return -1;
  }
  return 0;
}

static int run_headless(const options *o) {
  char err[1024];
  int w = o->width, h = o->height;
  /* checked before simulating: a bad output path is bad input */
  if (o->png && !parent_writable(o->png)) {
    fprintf(stderr, "cusp-view: cannot write the PNG '%s': its directory is missing or not writable\n", o->png);
    return 2;
  }
  if (o->video && !parent_writable(o->video)) {
    fprintf(stderr, "cusp-view: cannot write the video '%s': its directory is missing or not writable\n",
            o->video);
    return 2;
  }
  if (o->frames && !parent_writable(o->frames)) {
    fprintf(stderr, "cusp-view: cannot create the frames directory '%s': its parent is missing or not writable\n",
            o->frames);
    return 2;
  }
  if (load_scene(o->scene, o, err, sizeof err)) {
    fprintf(stderr, "cusp-view: %s\n", err);
    return 2;
  }
  if (setup_camera(o, (double)w / h, err, sizeof err)) {
    fprintf(stderr, "cusp-view: %s\n", err);
    return 2;
  }
  double hstep = V.m->opt.timestep;
  if (o->seconds / hstep > 1e12) {
    fprintf(stderr, "cusp-view: %g s at a timestep of %g s is too many steps\n", o->seconds, hstep);
    return 2;
  }

  /* an invisible window only for the OpenGL context */
  if (!glfwInit()) {
    fprintf(stderr, "cusp-view: cannot initialize GLFW (no X display? run under xvfb-run)\n");
    return 1;
  }
  glfwWindowHint(GLFW_VISIBLE, 0);
  glfwWindowHint(GLFW_DOUBLEBUFFER, GLFW_FALSE);
  V.window = glfwCreateWindow(64, 64, "cusp-view", NULL, NULL);
  if (!V.window) {
    fprintf(stderr, "cusp-view: cannot create an OpenGL context (GLFW window)\n");
    return 1;
  }
  glfwMakeContextCurrent(V.window);
  V.fontscale = mjFONTSCALE_100;
  if (make_render(w, h, err, sizeof err)) {
    fprintf(stderr, "cusp-view: %s\n", err);
    return 1;
  }
  mjr_setBuffer(mjFB_OFFSCREEN, &V.con);
  mjrRect rect = {0, 0, w, h};

  int rc = 0;
  char outerr[1024] = "";
  int recording = o->video || o->frames;
  recorder vid, frm;
  memset(&vid, 0, sizeof vid);
  memset(&frm, 0, sizeof frm);
  if (o->video && recorder_open(&vid, o->video, NULL, w, h, o->fps, err, sizeof err)) {
    fprintf(stderr, "cusp-view: %s\n", err);
    return 2;
  }
  if (o->frames && recorder_open(&frm, NULL, o->frames, w, h, o->fps, err, sizeof err)) {
    fprintf(stderr, "cusp-view: %s\n", err);
    recorder_close(&vid, err, sizeof err);
    return 2;
  }

  long nstep = (long)ceil(o->seconds / hstep - 1e-6), steps = 0;
  if (nstep < 1) nstep = 1;
  double frame_dt = 1 / o->fps, next_frame = 0, t0 = wall_seconds(), next_progress = t0 + PROGRESS_WALL_S;
  double sim_time = V.d->time;
  for (;;) {
    if (recording && V.d->time >= next_frame - 0.5 * hstep) {
      if (headless_frame(o, rect, err, sizeof err) ||
          (o->video && recorder_write(&vid, V.pixels, err, sizeof err)) ||
          (o->frames && recorder_write(&frm, V.pixels, err, sizeof err))) {
        msgf(outerr, sizeof outerr, "%s", err);
        break;
      }
      next_frame += frame_dt;
    }
    if (steps >= nstep) break;
    if (sim_step(steps + 1)) break;
    steps++;
    sim_time = V.d->time;
    double t = wall_seconds();
    V.rtf = t > t0 ? sim_time / (t - t0) : 0;
    if (t >= next_progress) {
      fprintf(stderr, "cusp-view: t = %.3f of %.3f s, %.2fx realtime\n", V.d->time, o->seconds,
              V.d->time / (t - t0));
      next_progress = t + PROGRESS_WALL_S;
    }
  }
  double wall = wall_seconds() - t0;
  if (!outerr[0] && o->png && !V.failed) {
    if (headless_frame(o, rect, err, sizeof err) || write_png(o->png, V.pixels, w, h, err, sizeof err))
      msgf(outerr, sizeof outerr, "%s", err);
  }
  soft_view *sv = calloc(V.ninst ? V.ninst : 1, sizeof *sv);
  if (sv) soft_views(sv, w, h);
  long frames = o->video ? vid.frames : frm.frames;
  char video_dir[4096];
  msgf(video_dir, sizeof video_dir, "%s", vid.dir); /* frames instead of a video: no ffmpeg */
  if (o->video && recorder_close(&vid, err, sizeof err) && !outerr[0]) msgf(outerr, sizeof outerr, "%s", err);
  if (o->frames) recorder_close(&frm, err, sizeof err);
  if (V.failed) fprintf(stderr, "cusp-view: simulation failed: %s\n", V.failure);
  if (outerr[0]) fprintf(stderr, "cusp-view: output failed: %s\n", outerr);
  rc = V.failed || outerr[0] ? 1 : 0;

  const cusp_step_report *r = cusp_report(V.d);
  long nan_events = r ? r->nan_events : 0;
  if (o->json) {
    printf("{\"scene\": ");
    json_string(stdout, o->scene);
    printf(", \"sim_time\": ");
    json_number(sim_time);
    printf(", \"target_time\": ");
    json_number(o->seconds);
    printf(", \"steps\": %ld, \"wall_s\": ", steps);
    json_number(wall);
    printf(", \"realtime_factor\": ");
    json_number(wall > 0 ? sim_time / wall : NAN);
    printf(", \"width\": %d, \"height\": %d, \"fps\": ", w, h);
    json_number(o->fps);
    printf(", \"frames\": %ld", frames);
    printf(", \"outputs\": {");
    int first = 1;
    if (o->png) {
      printf("\"png\": ");
      json_string(stdout, o->png);
      first = 0;
    }
    if (o->video) {
      printf("%s\"video\": ", first ? "" : ", ");
      json_string(stdout, o->video);
      printf(", \"video_frames_dir\": ");
      if (video_dir[0]) json_string(stdout, video_dir);
      else printf("null");
      first = 0;
    }
    if (o->frames) {
      printf("%s\"frames_dir\": ", first ? "" : ", ");
      json_string(stdout, o->frames);
    }
    printf("}, \"completed\": %s, \"failure\": ", rc == 0 ? "true" : "false");
    if (V.failed || outerr[0]) json_string(stdout, V.failed ? V.failure : outerr);
    else printf("null");
    printf(", \"nan_events\": %ld, \"mujoco_warnings\": %d", nan_events, nwarning);
    printf(", \"camera\": {\"type\": \"%s\", \"source\": \"%s\", \"azimuth\": ", V.cam.type == mjCAMERA_FIXED ? "fixed" : "free",
           V.camera_source);
    json_number(V.cam.azimuth);
    printf(", \"elevation\": ");
    json_number(V.cam.elevation);
    printf(", \"distance\": ");
    json_number(V.cam.distance);
    printf(", \"lookat\": ");
    json_array(V.cam.lookat, 3);
    printf("}, \"soft\": {");
    for (int k = 0; k < V.ninst && sv; k++) {
      printf("%s", k ? ", " : "");
      json_string(stdout, cusp_instance_name(V.m, k));
      printf(": {\"tip_pos\": ");
      json_array(sv[k].tip, 3);
      printf(", \"tip_pixel\": ");
      if (sv[k].tip_visible) json_array(sv[k].tip_px, 2);
      else printf("null");
      printf(", \"bbox_pixels\": ");
      if (sv[k].bbox_visible) json_array(sv[k].bbox, 4);
      else printf("null");
      printf("}");
    }
    printf("}}\n");
  } else {
    printf("scene      %s (%d soft instance%s)\n", o->scene, V.ninst, V.ninst == 1 ? "" : "s");
    printf("simulated  %.4g of %.4g s in %ld steps of %g s: %s\n", sim_time, o->seconds, steps, hstep,
           rc == 0 ? "completed" : V.failed ? V.failure : outerr);
    printf("wall time  %.3f s, %.3gx realtime\n", wall, wall > 0 ? sim_time / wall : NAN);
    if (o->png) printf("png        %s (%dx%d)\n", o->png, w, h);
    if (o->video)
      printf("video      %s (%ld frames at %g fps)\n", video_dir[0] ? video_dir : o->video, frames, o->fps);
    if (o->frames) printf("frames     %s (PNG frames at %g fps)\n", o->frames, o->fps);
    for (int k = 0; k < V.ninst && sv; k++)
      printf("tip        %s at (%.4f, %.4f, %.4f) m, pixel %s\n", cusp_instance_name(V.m, k), sv[k].tip[0],
             sv[k].tip[1], sv[k].tip[2], sv[k].tip_visible ? "in view" : "out of view");
    if (nan_events) printf("nan events %ld\n", nan_events);
  }
  free(sv);
  return rc;
}

/* ---------- interactive ---------- */

static void screenshot(void) {
  int w, h;
  glfwGetFramebufferSize(V.window, &w, &h);
  mjrRect rect = {0, 0, w, h};
  char name[64], err[512];
  time_t now = time(NULL);
  struct tm tmv;
  localtime_r(&now, &tmv);
  strftime(name, sizeof name, "cusp-view-%Y%m%d-%H%M%S.png", &tmv);
  if (read_pixels(rect) || write_png(name, V.pixels, w, h, err, sizeof err))
    set_status("screenshot failed: %s", err);
  else
    set_status("screenshot saved to %s", name);
}

static void toggle_recording(void) {
  char err[512];
  if (V.recording) {
    long n = V.rec.frames;
    char path[4096];
    msgf(path, sizeof path, "%s", V.rec.path);
    V.recording = 0;
    if (recorder_close(&V.rec, err, sizeof err)) set_status("recording failed: %s", err);
    else set_status("recorded %ld frames to %s", n, path);
    return;
  }
  int w, h;
  glfwGetFramebufferSize(V.window, &w, &h);
  char name[64];
  time_t now = time(NULL);
  struct tm tmv;
  localtime_r(&now, &tmv);
  strftime(name, sizeof name, "cusp-view-%Y%m%d-%H%M%S.mp4", &tmv);
  if (recorder_open(&V.rec, name, NULL, w, h, 30, err, sizeof err)) {
    set_status("cannot record: %s", err);
    return;
  }
  V.recording = 1;
  set_status("recording to %s (V stops)", V.rec.path);
}

static void do_reset(void) {
  mju_zero(V.d->xfrc_applied, 6 * V.m->nbody);
  drag_release();
  V.pert.active = 0;
  if (guarded(CALL_RESET, V.m, V.d)) {
    set_status("reset failed: %s", mj_error_text);
    return;
  }
  V.d->warning[mjWARN_BADQACC].number = V.d->warning[mjWARN_BADQVEL].number = 0;
  V.d->warning[mjWARN_BADQPOS].number = 0;
  V.failed = 0;
  V.failure[0] = 0;
  V.prev_solves = 0;
  clear_plots();
  set_status("reset");
}

static void on_key(GLFWwindow *w, int key, int scancode, int act, int mods) {
  (void)w;
  (void)scancode;
  if (act == GLFW_RELEASE) return;
  int ctrl = mods & GLFW_MOD_CONTROL;
  switch (key) {
    case GLFW_KEY_F1: case GLFW_KEY_H: V.show_help = !V.show_help; break;
    case GLFW_KEY_SPACE:
      if (V.failed) set_status("the simulation failed: press Backspace to reset");
      else V.paused = !V.paused;
      break;
    case GLFW_KEY_RIGHT:
      if (V.paused && !V.failed && !sim_step(0)) {
        if (guarded(CALL_FWDPOSITION, V.m, V.d)) set_status("%s", mj_error_text);
      }
      if (V.failed) set_status("simulation failed: %s", V.failure);
      break;
    case GLFW_KEY_BACKSPACE: do_reset(); break;
    case GLFW_KEY_MINUS: case GLFW_KEY_KP_SUBTRACT:
      if (V.slowdown < MAX_SLOWDOWN) V.slowdown *= 2;
      break;
    case GLFW_KEY_EQUAL: case GLFW_KEY_KP_ADD:
      if (V.slowdown > 1) V.slowdown /= 2;
      break;
    case GLFW_KEY_C: toggle_contact_model(); break;
    case GLFW_KEY_S: cycle_solver(); break;
    case GLFW_KEY_1: case GLFW_KEY_2: case GLFW_KEY_3: toggle_stage(key - GLFW_KEY_1); break;
    case GLFW_KEY_0: toggle_stage(-1); break;
    case GLFW_KEY_P: screenshot(); break;
    case GLFW_KEY_V: toggle_recording(); break;
    case GLFW_KEY_G: V.show_plots = !V.show_plots; break;
    case GLFW_KEY_I: V.show_info = !V.show_info; break;
    case GLFW_KEY_F: V.show_contacts = !V.show_contacts; break;
    case GLFW_KEY_T: V.show_tube = !V.show_tube; break;
    case GLFW_KEY_TAB:
      V.camera_index = V.camera_index + 1 >= V.m->ncam ? -1 : V.camera_index + 1;
      if (V.camera_index < 0) V.cam.type = mjCAMERA_FREE;
      else {
        V.cam.type = mjCAMERA_FIXED;
        V.cam.fixedcamid = V.camera_index;
      }
      break;
    case GLFW_KEY_ESCAPE:
      V.show_help = 0;
      drag_release();
      V.pert.select = 0;
      V.pert.active = 0;
      V.soft_inst = -1;
      break;
    case GLFW_KEY_Q:
      if (ctrl) glfwSetWindowShouldClose(V.window, 1);
      break;
    default: break;
  }
}

/* Double-click left selects a body or a soft disk (dragged through
 * cusp_apply_force at the disk's arc length), double-click right moves the
 * camera's look-at point there. */
static void select_at(int button) {
  int w, h;
  glfwGetWindowSize(V.window, &w, &h);
  if (w < 1 || h < 1) return;
  mjtNum pnt[3];
  int geom = -1, skin = -1;
  int body = mjv_select(V.m, V.d, &V.opt, (mjtNum)w / h, V.lastx / w, (h - V.lasty) / h, &V.scn, pnt, &geom, &skin);
  if (button == GLFW_MOUSE_BUTTON_RIGHT) {
    if (body >= 0) {
      mju_copy3(V.cam.lookat, pnt);
      V.cam.type = mjCAMERA_FREE;
      V.camera_index = -1;
    }
    return;
  }
  drag_release();
  if (body <= 0 || body == V.pert.select) {
    V.pert.select = 0;
    V.pert.active = 0;
    V.soft_inst = -1;
    return;
  }
  int inst;
  double s;
  char contact[32] = "";
  /* a native arm's disks are MuJoCo bodies: dragged like any rigid body */
  if (!cusp_disk_of_body(V.m, body, &inst, &s) && !cusp_get(V.d, inst, "contact", contact, sizeof contact) &&
      strcmp(contact, "native")) {
    /* a soft disk: pulled at its backbone point, which the disk body's frame is */
    mju_zero3(V.pert.localpos);
    V.pert.select = body;
    V.pert.skinselect = -1;
    V.pert.active = 0;
    V.soft_inst = inst;
    V.soft_s = s;
    set_status("selected soft arm \"%s\" at s = %.3f m: Ctrl+right drag pulls, Ctrl+left drag twists",
               cusp_instance_name(V.m, inst), s);
    return;
  }
  V.soft_inst = -1;
  /* the grab point in body coordinates, so force acts where the user clicked */
  mjtNum rel[3];
  mju_sub3(rel, pnt, V.d->xpos + 3 * body);
  mju_mulMatTVec(V.pert.localpos, V.d->xmat + 9 * body, rel, 3, 3);
  V.pert.select = body;
  V.pert.skinselect = -1;
  V.pert.active = 0;
  const char *name = mj_id2name(V.m, mjOBJ_BODY, body);
  set_status("selected body %s: Ctrl+left drag rotates, Ctrl+right drag moves", name ? name : "(unnamed)");
}

/* Ctrl + a button on the selected body starts perturbing it (simulate's gesture). */
static void begin_drag(int button) {
  if (V.pert.select <= 0 || V.failed) return;
  int kind = button == GLFW_MOUSE_BUTTON_RIGHT ? mjPERT_TRANSLATE : mjPERT_ROTATE;
  if (!V.pert.active) {
    mjv_initPerturb(V.m, V.d, &V.scn, &V.pert);
    if (V.soft_inst >= 0) {
      /* the target starts on the backbone point itself, not on the drawn disk body */
      double R[9];
      if (!cusp_backbone_point(V.d, V.soft_inst, V.soft_s, V.pert.refpos, R)) mju_mat2Quat(V.pert.refquat, R);
      cusp_tip_pose(V.d, V.soft_inst, V.soft_grab_tip, NULL);
      V.soft_have_prev = 0;
      V.soft_peak = 0;
    }
    mju_copy3(V.rigid_grab, V.d->xpos + 3 * V.pert.select);
  }
  V.pert.active = kind;
}

/* Mouse motion: moves the perturbation target while dragging, else the camera. */
static void drag_move(double dx, double dy, int shift, int height) {
  int action = V.button_right ? (shift ? mjMOUSE_MOVE_H : mjMOUSE_MOVE_V)
               : V.button_left ? (shift ? mjMOUSE_ROTATE_H : mjMOUSE_ROTATE_V)
                               : mjMOUSE_ZOOM;
  if (V.pert.active) mjv_movePerturb(V.m, V.d, action, dx / height, dy / height, &V.scn, &V.pert);
  else mjv_moveCamera(V.m, action, dx / height, dy / height, &V.scn, &V.cam);
}

static void on_button(GLFWwindow *w, int button, int act, int mods) {
  V.button_left = glfwGetMouseButton(w, GLFW_MOUSE_BUTTON_LEFT) == GLFW_PRESS;
  V.button_right = glfwGetMouseButton(w, GLFW_MOUSE_BUTTON_RIGHT) == GLFW_PRESS;
  V.button_middle = glfwGetMouseButton(w, GLFW_MOUSE_BUTTON_MIDDLE) == GLFW_PRESS;
  glfwGetCursorPos(w, &V.lastx, &V.lasty);
  if (act == GLFW_RELEASE) {
    drag_release();
    V.pert.active = 0;
    return;
  }
  double now = glfwGetTime();
  if (button == V.last_click_button && now - V.last_click_time < 0.3) {
    select_at(button);
    V.last_click_time = 0;
    return;
  }
  V.last_click_time = now;
  V.last_click_button = button;
  if (mods & GLFW_MOD_CONTROL) begin_drag(button);
}

static void on_cursor(GLFWwindow *w, double x, double y) {
  double dx = x - V.lastx, dy = y - V.lasty;
  V.lastx = x;
  V.lasty = y;
  if (!V.button_left && !V.button_right && !V.button_middle) return;
  int width, height;
  glfwGetWindowSize(w, &width, &height);
  if (height < 1) return;
  int shift = glfwGetKey(w, GLFW_KEY_LEFT_SHIFT) == GLFW_PRESS || glfwGetKey(w, GLFW_KEY_RIGHT_SHIFT) == GLFW_PRESS;
  drag_move(dx, dy, shift, height);
}

static void on_scroll(GLFWwindow *w, double xoff, double yoff) {
  (void)w;
  (void)xoff;
  mjv_moveCamera(V.m, mjMOUSE_ZOOM, 0, -0.05 * yoff, &V.scn, &V.cam);
}

static void on_drop(GLFWwindow *w, int count, const char **paths) {
  (void)w;
  if (count > 0) msgf(V.pending_load, sizeof V.pending_load, "%s", paths[0]);
}

/* Drops the current scene for the dropped one; keeps it when that fails. */
static void load_dropped(const options *o) {
  char path[4096], err[1024];
  msgf(path, sizeof path, "%s", V.pending_load);
  V.pending_load[0] = 0;
  if (V.recording) toggle_recording();
  /* the command line's --set names instances of the first scene only */
  if (load_scene(path, NULL, err, sizeof err)) {
    set_status("cannot open %s", err);
    return;
  }
  options none = *o;
  none.camera = NULL;
  none.has_azimuth = none.has_elevation = none.has_distance = none.has_lookat = 0;
  int w, h;
  glfwGetFramebufferSize(V.window, &w, &h);
  setup_camera(&none, h > 0 ? (double)w / h : (double)WINDOW_W / WINDOW_H, err, sizeof err);
  if (make_render(w, h, err, sizeof err)) {
    /* no rendering context left to draw with */
    fprintf(stderr, "cusp-view: %s\n", err);
    V.render_lost = 1;
    glfwSetWindowShouldClose(V.window, 1);
    return;
  }
  set_status("opened %s (%d soft instance%s)", path, V.ninst, V.ninst == 1 ? "" : "s");
}

/* A scripted key press (--keys), as on_key would get it. */
static void press_scripted(char c) {
  int key = c >= 'a' && c <= 'z' ? GLFW_KEY_A + (c - 'a')
            : c >= 'A' && c <= 'Z' ? GLFW_KEY_A + (c - 'A')
            : c >= '0' && c <= '9' ? GLFW_KEY_0 + (c - '0')
            : c == '-' ? GLFW_KEY_MINUS
            : c == '=' ? GLFW_KEY_EQUAL
            : c == ' ' ? GLFW_KEY_SPACE
            : c == '>' ? GLFW_KEY_RIGHT
            : c == '<' ? GLFW_KEY_BACKSPACE
            : c == '?' ? GLFW_KEY_F1
                       : GLFW_KEY_UNKNOWN;
  if (key == GLFW_KEY_UNKNOWN) set_status("--keys: no key for '%c'", c);
  else on_key(V.window, key, 0, GLFW_PRESS, 0);
}

static int run_interactive(const options *o) {
  char err[1024];
  if (!glfwInit()) {
    fprintf(stderr, "cusp-view: cannot initialize GLFW (no display? use --headless, or run under xvfb-run)\n");
    return 1;
  }
  int scene_ok = 0;
  if (o->scene) {
    if (load_scene(o->scene, o, err, sizeof err)) {
      fprintf(stderr, "cusp-view: %s\n", err);
      return 2;
    }
    if (setup_camera(o, (double)WINDOW_W / WINDOW_H, err, sizeof err)) {
      fprintf(stderr, "cusp-view: %s\n", err);
      return 2;
    }
    scene_ok = 1;
  } else {
    /* an empty world until a file is dropped */
    fprintf(stderr, "cusp-view: no scene given: drop an MJCF file on the window\n");
    static const char empty[] = "<mujoco><worldbody><light pos='0 0 3'/>"
                                "<geom type='plane' size='1 1 0.1' rgba='.4 .4 .4 1'/></worldbody></mujoco>";
    char dir[] = "/tmp/cusp-view-XXXXXX";
    if (!mkdtemp(dir)) {
      fprintf(stderr, "cusp-view: cannot create a temporary directory: %s\n", strerror(errno));
      return 1;
    }
    char path[64];
    msgf(path, sizeof path, "%s/empty.xml", dir);
    FILE *f = fopen(path, "w");
    int ok = f && fputs(empty, f) >= 0;
    if (f && fclose(f)) ok = 0;
    int loaded = ok && !load_scene(path, NULL, err, sizeof err);
    remove(path);
    rmdir(dir);
    if (!loaded) {
      fprintf(stderr, "cusp-view: cannot build an empty scene: %s\n", ok ? err : strerror(errno));
      return 1;
    }
    options none = *o;
    setup_camera(&none, (double)WINDOW_W / WINDOW_H, err, sizeof err);
  }

  glfwWindowHint(GLFW_SAMPLES, 4);
  V.window = glfwCreateWindow(WINDOW_W, WINDOW_H, "cusp-view", NULL, NULL);
  if (!V.window) {
    fprintf(stderr, "cusp-view: cannot create the window (no display or no OpenGL?)\n");
    return 1;
  }
  glfwMakeContextCurrent(V.window);
  glfwSwapInterval(1);
  float sx = 1, sy = 1;
  glfwGetWindowContentScale(V.window, &sx, &sy);
  V.fontscale = sx > 1.25f ? mjFONTSCALE_150 : mjFONTSCALE_100;
  int w, h;
  glfwGetFramebufferSize(V.window, &w, &h);
  if (make_render(w, h, err, sizeof err)) {
    fprintf(stderr, "cusp-view: %s\n", err);
    return 1;
  }
  glfwSetKeyCallback(V.window, on_key);
  glfwSetMouseButtonCallback(V.window, on_button);
  glfwSetCursorPosCallback(V.window, on_cursor);
  glfwSetScrollCallback(V.window, on_scroll);
  glfwSetDropCallback(V.window, on_drop);
  glfwSetWindowTitle(V.window, scene_ok ? V.scene : "cusp-view: drop a scene");
  if (!scene_ok) set_status("drop an MJCF scene on the window (F1: help)");
  else set_status("opened %s (%d soft instance%s); F1 or H: help", V.scene, V.ninst, V.ninst == 1 ? "" : "s");

  double wall_prev = glfwGetTime(), rtf_sim = 0, rtf_wall = 0;
  long step_count = 0;
  const char *keys = o->keys;
  double t_open = glfwGetTime();
  int drag_frames = o->has_drag ? -1 : 0; /* --drag: -1 to select, then 20 moves */
  long frame = 0;
  while (!glfwWindowShouldClose(V.window)) {
    glfwPollEvents();
    frame++;
    if (keys && *keys) {
      press_scripted(*keys++);
      t_open = glfwGetTime();
    } else if (drag_frames < 0 && scene_ok && frame > 2) { /* picking needs a rendered scene */
      /* a double-click's selection, then Ctrl + right button, as a user does */
      V.lastx = o->drag[0];
      V.lasty = o->drag[1];
      select_at(GLFW_MOUSE_BUTTON_LEFT);
      V.button_right = 1;
      begin_drag(GLFW_MOUSE_BUTTON_RIGHT);
      drag_frames = V.pert.active ? 20 : 0;
      if (!V.pert.active) set_status("--drag: nothing to drag at (%g, %g)", o->drag[0], o->drag[1]);
      t_open = glfwGetTime();
    } else if (drag_frames > 0) {
      int ww, wh;
      glfwGetWindowSize(V.window, &ww, &wh);
      if (wh > 0) drag_move(o->drag[2] / 20, o->drag[3] / 20, 0, wh);
      drag_frames--;
      t_open = glfwGetTime();
    }
    if (o->quit_after > 0 && glfwGetTime() - t_open >= o->quit_after) glfwSetWindowShouldClose(V.window, 1);
    if (V.pending_load[0]) {
      load_dropped(o);
      if (V.render_lost) break;
      glfwSetWindowTitle(V.window, V.scene);
      wall_prev = glfwGetTime();
    }
    double now = glfwGetTime(), dt_wall = now - wall_prev;
    wall_prev = now;
    if (!V.paused && !V.failed) {
      /* catch up with the wall clock, at most 1/15 s of it per frame */
      double t_start = V.d->time, budget = fmin(dt_wall, 1.0 / 15) / V.slowdown;
      double target = V.d->time + budget, hstep = V.m->opt.timestep;
      while (V.d->time < target - 0.5 * hstep && glfwGetTime() - now < 1.0 / 30)
        if (sim_step(++step_count)) {
          set_status("simulation failed: %s (Backspace resets)", V.failure);
          break;
        }
      if (guarded(CALL_FWDPOSITION, V.m, V.d) && !V.failed) {
        V.failed = 1;
        msgf(V.failure, sizeof V.failure, "%s", mj_error_text);
      }
      rtf_sim = 0.9 * rtf_sim + (V.d->time - t_start);
      rtf_wall = 0.9 * rtf_wall + dt_wall;
      V.rtf = rtf_wall > 0 ? rtf_sim / rtf_wall : 0;
    } else if (!V.failed) {
      /* paused: the perturbation moves the body itself */
      if (V.pert.select > 0 && V.pert.active && V.soft_inst < 0) mjv_applyPerturbPose(V.m, V.d, &V.pert, 1);
      mju_zero(V.d->xfrc_applied, 6 * V.m->nbody);
      if (guarded(CALL_FORWARD, V.m, V.d)) {
        V.failed = 1;
        msgf(V.failure, sizeof V.failure, "%s", mj_error_text);
      }
      V.rtf = 0;
    }

    glfwGetFramebufferSize(V.window, &w, &h);
    mjrRect rect = {0, 0, w, h};
    render(rect, V.show_info && !V.show_help, V.show_plots, &V.pert);  /* help covers the info */
    if (V.show_help) draw_help(rect);
    char top[1024];
    msgf(top, sizeof top, "%s", now - V.status_time < 6 ? V.status : "");
    if (V.failed) msgf(top, sizeof top, "simulation failed: %s  (Backspace resets)", V.failure);
    if (top[0]) mjr_overlay(mjFONT_NORMAL, V.show_help ? mjGRID_BOTTOMRIGHT : mjGRID_TOPLEFT, rect, top, "", &V.con);
    if (V.recording) {
      if (w != V.rec.w || h != V.rec.h) {
        toggle_recording();
        set_status("recording stopped: the window was resized");
      } else if (read_pixels(rect) || recorder_write(&V.rec, V.pixels, err, sizeof err)) {
        toggle_recording();
        set_status("recording stopped: %s", err);
      }
    }
    glfwSwapBuffers(V.window);
  }
  if (V.pert.active) {
    drag_release();
    V.pert.active = 0;
    V.button_right = 0;
  }
  if (V.recording) toggle_recording();
  return V.failed || V.render_lost ? 1 : 0;
}

int main(int argc, char **argv) {
  options o;
  memset(&o, 0, sizeof o);
  o.seconds = 2;
  o.fps = 30;
  o.width = 1280;
  o.height = 720;
  o.overlay = 1;
  o.overrides = calloc(argc, sizeof *o.overrides);
  o.copies = calloc(argc, sizeof *o.copies);
  V.fig = calloc(NPLOT, sizeof *V.fig);
  if (!o.overrides || !o.copies || !V.fig) {
    fprintf(stderr, "cusp-view: out of memory\n");
    return 2;
  }
  int help = 0;
  int rc = parse_args(argc, argv, &o, &help);
  if (help) {
    usage(NULL);
    rc = 0;
  }
  if (!rc && !help) {
    /* a dead ffmpeg must not kill us with SIGPIPE: fwrite reports it */
    signal(SIGPIPE, SIG_IGN);
    mju_user_warning = on_warning;
    mju_user_error = on_error;
    glfwSetErrorCallback(on_glfw_error);
    mjv_defaultCamera(&V.cam);
    mjv_defaultOption(&V.opt);
    mjv_defaultPerturb(&V.pert);
    V.slowdown = 1;
    V.show_info = V.show_contacts = V.show_tube = V.show_plots = 1;
    init_figures();
    rc = o.headless ? run_headless(&o) : run_interactive(&o);
  }
  if (V.recording) {
    char err[256];
    recorder_close(&V.rec, err, sizeof err);
  }
  if (V.have_scene) {
    mjr_freeContext(&V.con);
    mjv_freeScene(&V.scn);
  }
  if (V.window) glfwDestroyWindow(V.window);
  /* No glfwTerminate: it dlcloses mesa's driver, whose still-referenced
   * allocations then show up as leaks of an unknown module (LeakSanitizer
   * cannot even name the library); the process ends here anyway. */
  free_scene_model(V.m, V.d);
  free(V.tube_radius);
  free(V.inst_of_body);
  free(V.pixels);
  free(V.fig);
  for (int i = 0; i < argc; i++) free(o.copies[i]);
  free(o.copies);
  free(o.overrides);
  return rc;
}
