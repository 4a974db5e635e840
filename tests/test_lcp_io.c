/* The .dat reader (block files equal their dense twins; every malformed
 * input is refused with a message naming the file and the problem), the
 * cusp-lcp app end to end (exit codes, JSON last line), and bad input at
 * the solver level. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lcp.h"
#include "testutil.h"

#ifndef CUSP_LCP_DATA
#define CUSP_LCP_DATA "tests/data/lcp"
#endif
#ifndef CUSP_LCP_APP
#define CUSP_LCP_APP "./cusp-lcp"
#endif

static const char *data_dir(void) {
  const char *dir = getenv("CUSP_LCP_DATA");
  return dir && *dir ? dir : CUSP_LCP_DATA;
}

static void data_path(char *out, size_t size, const char *file) { snprintf(out, size, "%s/%s", data_dir(), file); }

/* Temporary files, removed at the end. */
static char temp_paths[64][64];
static int ntemp;

static const char *write_temp(const char *content) {
  if (ntemp == 64) return NULL;
  char *path = temp_paths[ntemp];
  const char *tmpdir = getenv("TMPDIR");
  snprintf(path, sizeof temp_paths[0], "%s/cusp_lcp_XXXXXX", tmpdir && *tmpdir && strlen(tmpdir) < 40 ? tmpdir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) return NULL;
  size_t len = strlen(content);
  ssize_t written = write(fd, content, len);
  close(fd);
  ntemp++;
  return written == (ssize_t)len ? path : NULL;
}

/* ---------- reader ---------- */

static void twins_are_equal(const char *dense_file, const char *block_file) {
  char dense_path[1024], block_path[1024], err[256];
  data_path(dense_path, sizeof dense_path, dense_file);
  data_path(block_path, sizeof block_path, block_file);
  int n1, n2;
  double *M1, *q1, *M2, *q2;
  int rc1 = sb_lcp_read_dat(dense_path, &n1, &M1, &q1, err, sizeof err);
  EXPECT(rc1 == 0, "%s", err);
  int rc2 = sb_lcp_read_dat(block_path, &n2, &M2, &q2, err, sizeof err);
  EXPECT(rc2 == 0, "%s", err);
  if (rc1 == 0 && rc2 == 0) {
    EXPECT(n1 == n2, "%s: n = %d, %s: n = %d", dense_file, n1, block_file, n2);
    if (n1 == n2) {
      int same = 1;
      for (int k = 0; k < n1 * n1; k++) same &= M1[k] == M2[k];
      for (int i = 0; i < n1; i++) same &= q1[i] == q2[i];
      EXPECT(same, "%s and %s differ", dense_file, block_file);
    }
  }
  if (rc1 == 0) {
    free(M1);
    free(q1);
  }
  if (rc2 == 0) {
    free(M2);
    free(q2);
  }
}

/* A deudeu_block variant: the fields are spliced in as text. */
static const char *block_file(const char *structure, const char *blocks) {
  static char text[1024];
  snprintf(text, sizeof text, "2\n1\n2\n2\n%s\n%s\n-5 -6\n", structure, blocks);
  return write_temp(text);
}

static void refused(const char *name, const char *path, const char *must_mention, const char *must_mention2) {
  char err[256] = "";
  int n = -7;
  double sentinel = 0, *M = &sentinel, *q = &sentinel; /* must be reset to NULL */
  int rc = path ? sb_lcp_read_dat(path, &n, &M, &q, err, sizeof err) : -2;
  EXPECT(rc == -1, "%s: accepted (rc %d)", name, rc);
  EXPECT(M == NULL && q == NULL, "%s: M or q not NULL after a refusal", name);
  EXPECT(path && strstr(err, path), "%s: message \"%s\" does not name the file", name, err);
  EXPECT(strstr(err, must_mention), "%s: message \"%s\" does not mention \"%s\"", name, err, must_mention);
  if (must_mention2)
    EXPECT(strstr(err, must_mention2), "%s: message \"%s\" does not mention \"%s\"", name, err, must_mention2);
  if (rc == 0) {
    free(M);
    free(q);
  }
}

/* Every prefix of a peer file that ends before its last token (the last
 * value of q; these files have no comment) is refused, naming the file. */
static void prefixes_refused(const char *file) {
  char path[1024], err[256];
  data_path(path, sizeof path, file);
  FILE *f = fopen(path, "rb");
  static char text[1 << 16];
  size_t len = f ? fread(text, 1, sizeof text, f) : 0;
  if (f) fclose(f);
  EXPECT(len > 0 && len < sizeof text, "cannot read %s", path);
  size_t last = len;
  while (last > 0 && strchr(" \t\r\n", text[last - 1])) last--;
  while (last > 0 && !strchr(" \t\r\n", text[last - 1])) last--;
  const char *tmp = write_temp("");
  int all_refused = 1;
  for (size_t cut = 0; tmp && cut < last; cut++) {
    FILE *out = fopen(tmp, "wb");
    if (!out) break;
    fwrite(text, 1, cut, out);
    fclose(out);
    int n;
    double *M, *q;
    if (sb_lcp_read_dat(tmp, &n, &M, &q, err, sizeof err) == 0) {
      free(M);
      free(q);
      all_refused = 0;
      fprintf(stderr, "%s cut at %zu bytes: accepted\n", file, cut);
    } else if (!strstr(err, tmp)) {
      all_refused = 0;
      fprintf(stderr, "%s cut at %zu bytes: message \"%s\" does not name the file\n", file, cut, err);
    }
  }
  EXPECT(tmp && all_refused, "%s: every prefix before the last value is refused (%zu prefixes)", file, last);
}

static void reader_tests(void) {
  twins_are_equal("lcp_deudeu.dat", "lcp_deudeu_block.dat");
  twins_are_equal("lcp_ortiz.dat", "lcp_ortiz_block.dat");
  twins_are_equal("lcp_trivial.dat", "lcp_trivial_block.dat");

  /* Values land column-major; tabs, CRLF and a trailing comment are fine. */
  const char *good = write_temp("2\r\n0\r\n2\r\n2\r\n2\t2\r\n1 2\r\n3 4\r\n-1 -2\r\nfree text 5 6 nan\r\n");
  int n;
  double *M, *q;
  char err[256];
  EXPECT(good && sb_lcp_read_dat(good, &n, &M, &q, err, sizeof err) == 0, "good file refused: %s", err);
  if (good && n == 2) {
    EXPECT(M[0] == 1 && M[1] == 2 && M[2] == 3 && M[3] == 4 && q[0] == -1 && q[1] == -2, "column-major layout");
    free(M);
    free(q);
  }

  prefixes_refused("lcp_deudeu.dat");
  prefixes_refused("lcp_deudeu_block.dat");
  prefixes_refused("lcp_ortiz_block.dat");

  char missing[300];
  data_path(missing, sizeof missing, "no_such_problem.dat");
  refused("nonexistent path", missing, "cannot open", NULL);
  refused("directory", "/", "read error", NULL);
  refused("empty file", write_temp(""), "empty", NULL);
  refused("blank file", write_temp(" \n\t\n"), "file ends before n", NULL);
  refused("truncated header", write_temp("2 0 2"), "file ends before matrix columns", NULL);
  refused("truncated matrix", write_temp("2 0 2 2 2\t2 1 0 0"), "expected 4 matrix values, file ends after 3", NULL);
  refused("truncated q", write_temp("2 0 2 2 2 2 1 0 0 1 -1"), "expected 2 values of q, file ends after 1", NULL);
  refused("non-numeric matrix entry", write_temp("2 0 2 2 2 2 1 x 0 1 -1 -1"), "'x' is not a number", "M(1,0)");
  refused("non-numeric q entry", write_temp("2 0 2 2 2 2 1 0 0 1 -1 abc"), "'abc' is not a number", "q[1]");
  refused("number with trailing junk", write_temp("2 0 2 2 2 2 1 0 0 1.5.2 -1 -1"), "M(1,1)", NULL);
  refused("n = 0", write_temp("0 0 0 0 0 0"), "n = 0", NULL);
  refused("negative n", write_temp("-3 0 -3 -3 -3 -3"), "n = -3", NULL);
  refused("fractional n", write_temp("2.5 0 2 2 2 2"), "not an integer", NULL);
  refused("huge n", write_temp("100001 0 100001 100001 100001 100001 1"), "n = 100001", NULL);
  refused("n beyond int", write_temp("99999999999999999999 0"), "n = 99999999999999999999", NULL);
  refused("n one above the limit", write_temp("4097 1 4097 4097 1"), "n = 4097 is above the limit 4096", NULL);
  refused("n = INT_MAX", write_temp("2147483647 1 2147483647 2147483647 2147483647"),
          "n = 2147483647 is above the limit 4096", NULL);
  /* n^2 blocks declared by a file that holds a few values: refused before any allocation */
  refused("nbblocks the file cannot hold", write_temp("4096 1 4096 4096 16777216 4096 4096 1 2 3"),
          "nbblocks = 16777216", "holds only");
  refused("bad storage code", write_temp("1 2 1 1 1 1 1 -1"), "storage", "2");
  refused("sizes not matching n", write_temp("2 0 3 3 3 3 1 0 0 0 1 0 0 0 1 -1 -1 -1"), "matrix is 3 x 3, but n = 2",
          NULL);
  refused("dense header not matching n", write_temp("2 0 2 2 2 3 1 0 0 1 -1 -1"), "dense header says 2 x 3", NULL);
  refused("NaN in M", write_temp("1 0 1 1 1 1 nan -1"), "M(0,0)", "not finite");
  refused("Inf in q", write_temp("1 0 1 1 1 1 2 inf"), "q[0]", "not finite");
  refused("overflowing entry", write_temp("2 0 2 2 2 2 1 0 0 -1e999 -1 -1"), "M(1,1)", "not finite");

  /* Sparse block structure (deudeu_block: one 2 x 2 block, labelled 0). */
  const char *blocks = "0\n2\n1\n1\n2";
  const char *ok = block_file("1 1 1 2 2 2 1 0 1 0", blocks);
  EXPECT(ok && sb_lcp_read_dat(ok, &n, &M, &q, err, sizeof err) == 0, "block file refused: %s", err);
  if (ok && n == 2) {
    EXPECT(M[0] == 2 && M[1] == 1 && M[2] == 1 && M[3] == 2, "block values");
    free(M);
    free(q);
  }
  refused("block labelled wrongly", block_file("1 1 1 2 2 2 1 0 1 0", "1 2 1 1 2"), "block 0 is labelled 1", NULL);
  refused("block rows short of n", block_file("1 1 1 1 2 2 1 0 1 0", blocks), "blocksize0 ends at 1, but n = 2",
          NULL);
  refused("block rows decreasing", block_file("1 2 1 2 1 2 3 1 0 1 1 0", blocks), "blocksize0[1] = 1", NULL);
  refused("block column out of range", block_file("1 1 1 2 2 2 1 0 1 1", blocks), "index2_data", NULL);
  refused("filled1 inconsistent", block_file("1 1 1 2 2 3 1 0 1 0", blocks), "filled1 = 3", NULL);
  refused("row pointers not ending at nbblocks", block_file("1 1 1 2 2 2 1 0 0 0", blocks), "index1_data ends at 0",
          NULL);
  refused("more blocks than slots", block_file("2 1 1 2 2 2 2 0 2 0 0", blocks), "2 blocks do not fit", NULL);
  refused("truncated block", write_temp("2 1 2 2 1 1 1 2 2 2 1 0 1 0 0 2 1"), "expected 5 block numbers and values",
          "file ends after 3");
  refused("NaN in a block", block_file("1 1 1 2 2 2 1 0 1 0", "0 2 NaN 1 2"), "M(1,0)", "not finite");

  /* Small or missing message buffers. */
  const char *bad = write_temp("0");
  char tiny[8];
  memset(tiny, 'x', sizeof tiny);
  EXPECT(sb_lcp_read_dat(bad, &n, &M, &q, tiny, sizeof tiny) == -1 && memchr(tiny, '\0', sizeof tiny),
         "a small message buffer stays terminated");
  EXPECT(sb_lcp_read_dat(bad, &n, &M, &q, NULL, 0) == -1, "refused without a message buffer");
  EXPECT(sb_lcp_read_dat(NULL, &n, &M, &q, err, sizeof err) == -1 && err[0], "NULL path refused: %s", err);
}

/* ---------- cusp-lcp ---------- */

/* Runs the app; returns its exit code (-1 when it did not exit) and its
 * stdout in out[] (stderr too with merge_stderr). */
static int run_app(const char *args, int merge_stderr, char *out, size_t size) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' %s%s", CUSP_LCP_APP, args, merge_stderr ? " 2>&1" : "");
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  size_t len = fread(out, 1, size - 1, p);
  out[len] = '\0';
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A minimal JSON syntax check: returns the end of one value, or NULL. The
 * members of the top-level object are recorded. */
typedef struct {
  int nkeys;
  char key[32][32];
  const char *value[32];
} json_members;

static const char *json_ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  return p;
}

static const char *json_string_end(const char *p) { /* p at the opening quote */
  for (p++; *p && *p != '"'; p++) {
    if ((unsigned char)*p < 0x20) return NULL;
    if (*p == '\\') {
      p++;
      if (*p == 'u') {
        for (int k = 1; k <= 4; k++)
          if (!strchr("0123456789abcdefABCDEF", p[k]) || !p[k]) return NULL;
        p += 4;
      } else if (!*p || !strchr("\"\\/bfnrt", *p)) return NULL;
    }
  }
  return *p == '"' ? p + 1 : NULL;
}

static const char *json_number_end(const char *p) {
  const char *s = p;
  if (*p == '-') p++;
  if (*p == '0') p++;
  else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
  else return NULL;
  if (*p == '.') {
    if (!(*++p >= '0' && *p <= '9')) return NULL;
    while (*p >= '0' && *p <= '9') p++;
  }
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-') p++;
    if (!(*p >= '0' && *p <= '9')) return NULL;
    while (*p >= '0' && *p <= '9') p++;
  }
  return p > s ? p : NULL;
}

static const char *json_value(const char *p, int depth, json_members *top) {
  p = json_ws(p);
  if (depth > 16) return NULL;
  if (*p == '"') return json_string_end(p);
  if (!strncmp(p, "true", 4)) return p + 4;
  if (!strncmp(p, "false", 5)) return p + 5;
  if (!strncmp(p, "null", 4)) return p + 4;
  if (*p == '[' || *p == '{') {
    char close = *p == '[' ? ']' : '}';
    p = json_ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
      if (close == '}') {
        if (*p != '"') return NULL;
        const char *kend = json_string_end(p);
        if (!kend) return NULL;
        if (depth == 0 && top->nkeys < 32) {
          snprintf(top->key[top->nkeys], sizeof top->key[0], "%.*s", (int)(kend - p - 2), p + 1);
        }
        p = json_ws(kend);
        if (*p++ != ':') return NULL;
        if (depth == 0 && top->nkeys < 32) top->value[top->nkeys++] = json_ws(p);
      }
      p = json_value(p, depth + 1, top);
      if (!p) return NULL;
      p = json_ws(p);
      if (*p == close) return p + 1;
      if (*p++ != ',') return NULL;
      p = json_ws(p);
    }
  }
  return json_number_end(p);
}

/* The last line of out[] as a JSON object; 0 when it parses. */
static int parse_last_line(char *out, json_members *m) {
  size_t len = strlen(out);
  while (len && out[len - 1] == '\n') out[--len] = '\0';
  char *line = strrchr(out, '\n');
  line = line ? line + 1 : out;
  memset(m, 0, sizeof *m);
  if (json_ws(line)[0] != '{') return -1;
  const char *end = json_value(line, 0, m);
  return end && *json_ws(end) == '\0' ? 0 : -1;
}

static const char *member(const json_members *m, const char *key) {
  for (int k = 0; k < m->nkeys; k++)
    if (!strcmp(m->key[k], key)) return m->value[k];
  return NULL;
}

/* Entries of the number array at p (NAN where one is not a number). */
static int json_numbers(const char *p, double *out, int max) {
  int count = 0;
  p = json_ws(p);
  if (*p++ != '[') return -1;
  for (p = json_ws(p); *p && *p != ']'; p = json_ws(p)) {
    char *end;
    double v = strtod(p, &end);
    if (end == p) return -1;
    if (count < max) out[count] = json_number_end(p) == end ? v : NAN;
    count++;
    p = json_ws(end);
    if (*p == ',') p++;
  }
  return count;
}

static void app_solves(const char *file, const char *extra, int n, const double *z_expected, const char *solver) {
  char path[1024], args[2200], out[1 << 16];
  data_path(path, sizeof path, file);
  snprintf(args, sizeof args, "'%s' --json %s", path, extra);
  int rc = run_app(args, 0, out, sizeof out);
  EXPECT(rc == 0, "cusp-lcp %s: exit %d", args, rc);
  json_members m;
  EXPECT(parse_last_line(out, &m) == 0, "cusp-lcp %s: last line is not one JSON object:\n%s", args, out);
  const char *keys[] = {"file", "n", "solver", "status", "iterations", "residual", "complementarity", "time_us", "z"};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
    EXPECT(member(&m, keys[k]), "cusp-lcp %s: no \"%s\" in the JSON", args, keys[k]);
  if (!member(&m, "z") || !member(&m, "n") || !member(&m, "status") || !member(&m, "residual")) return;
  EXPECT(atoi(member(&m, "n")) == n, "cusp-lcp %s: n", args);
  EXPECT(!strncmp(member(&m, "status"), "\"solved\"", 8), "cusp-lcp %s: status %.12s", args, member(&m, "status"));
  EXPECT(strtod(member(&m, "residual"), NULL) <= 1e-9, "cusp-lcp %s: residual", args);
  if (solver)
    EXPECT(member(&m, "solver") && !strncmp(member(&m, "solver") + 1, solver, strlen(solver)),
           "cusp-lcp %s: solver %.10s", args, member(&m, "solver"));
  double z[64];
  int nz = json_numbers(member(&m, "z"), z, 64);
  EXPECT(nz == n, "cusp-lcp %s: z has %d entries", args, nz);
  if (nz == n) EXPECT(tu_relerr(z, z_expected, n, 1) < 1e-9, "cusp-lcp %s: z differs from the known solution", args);
}

/* cusp-lcp --lemke-form F: the JSON's lemke_form_ran names the form Lemke ran in (auto, the
 * default, by the problem's size against SB_LCP_LEMKE_AUTO_MIN_N). */
static void app_form_ran(const char *file, const char *form, const char *want) {
  char path[1024], args[2200], out[1 << 16];
  data_path(path, sizeof path, file);
  snprintf(args, sizeof args, "'%s' --json --solver lemke%s%s", path, form ? " --lemke-form " : "", form ? form : "");
  int rc = run_app(args, 0, out, sizeof out);
  json_members m;
  const char *ran = rc == 0 && parse_last_line(out, &m) == 0 ? member(&m, "lemke_form_ran") : NULL;
  EXPECT(ran && !strncmp(ran, want, strlen(want)), "cusp-lcp %s: exit %d, lemke_form_ran %.12s (want %s)", args, rc,
         ran ? ran : "-", want);
}

static void app_tests(void) {
  char out[1 << 16], args[2200], path[1024];
  double z_trivial[9], z_deudeu[2] = {4.0 / 3, 7.0 / 3}; /* 2 z1 + z2 = 5, z1 + 2 z2 = 6 */
  for (int i = 0; i < 9; i++) z_trivial[i] = 1.0 / (i + 1);
  app_solves("lcp_trivial.dat", "", 9, z_trivial, NULL);
  app_solves("lcp_deudeu.dat", "", 2, z_deudeu, NULL);
  app_solves("lcp_deudeu_block.dat", "--solver lemke --no-ruiz", 2, z_deudeu, "lemke");
  app_solves("lcp_trivial_block.dat", "--solver pgs --tikhonov 0", 9, z_trivial, "pgs");
  app_solves("lcp_ortiz.dat", "--solver fb", 4, (const double[]){2.0 / 3, 0, 1.0 / 3, 0}, "fb");
  app_solves("lcp_trivial.dat", "--solver lemke --lemke-form revised", 9, z_trivial, "lemke");
  app_solves("lcp_deudeu.dat", "--solver lemke --lemke-form tableau", 2, z_deudeu, "lemke");
  _Static_assert(SB_LCP_LEMKE_AUTO_MIN_N > 2 && SB_LCP_LEMKE_AUTO_MIN_N <= 40, "auto's threshold between the files");
  app_form_ran("lcp_tobenna.dat", NULL, "\"revised\""); /* n = 40, one component */
  app_form_ran("lcp_deudeu.dat", NULL, "\"tableau\"");  /* n = 2 */
  app_form_ran("lcp_tobenna.dat", "tableau", "\"tableau\"");
  app_form_ran("lcp_deudeu.dat", "revised", "\"revised\"");
  app_form_ran("lcp_deudeu.dat", "auto", "\"tableau\"");

  /* Human output. */
  data_path(path, sizeof path, "lcp_deudeu.dat");
  snprintf(args, sizeof args, "'%s'", path);
  EXPECT(run_app(args, 0, out, sizeof out) == 0 && strstr(out, "status") && strstr(out, "solved") &&
             strstr(out, "residual"),
         "cusp-lcp human output:\n%s", out);
  EXPECT(run_app("--help", 1, out, sizeof out) == 0 && strstr(out, "usage"), "cusp-lcp --help");

  /* No solution: w = -z - 1 < 0 for every z >= 0. */
  const char *hopeless = write_temp("1\n0\n1\n1\n1\t1\n-1\n-1\n");
  snprintf(args, sizeof args, "'%s' --json", hopeless);
  json_members m;
  EXPECT(run_app(args, 0, out, sizeof out) == 1, "cusp-lcp on an LCP without solution: exit 1");
  EXPECT(parse_last_line(out, &m) == 0 && member(&m, "status") && strncmp(member(&m, "status"), "\"solved\"", 8),
         "cusp-lcp on an LCP without solution: JSON with a failed status:\n%s", out);
  snprintf(args, sizeof args, "'%s' --json --solver lemke", hopeless);
  EXPECT(run_app(args, 0, out, sizeof out) == 1 && parse_last_line(out, &m) == 0 && member(&m, "status") &&
             !strncmp(member(&m, "status"), "\"ray\"", 5),
         "cusp-lcp --solver lemke on an LCP without solution: ray:\n%s", out);
  double z[1];
  EXPECT(member(&m, "z") && json_numbers(member(&m, "z"), z, 1) == 1 && isfinite(z[0]), "finite z after a failure");
  data_path(path, sizeof path, "lcp_Pang_isolated_sol_perturbed.dat");
  snprintf(args, sizeof args, "'%s'", path);
  EXPECT(run_app(args, 0, out, sizeof out) == 1, "cusp-lcp on Pang's perturbed problem (no solution): exit 1");

  /* Bad input and arguments: exit 2 with the problem named. */
  data_path(path, sizeof path, "no_such_problem.dat");
  snprintf(args, sizeof args, "'%s' --json", path);
  EXPECT(run_app(args, 1, out, sizeof out) == 2 && strstr(out, "no_such_problem.dat") && strstr(out, "cannot open"),
         "missing file: exit 2 naming it:\n%s", out);
  snprintf(args, sizeof args, "'%s'", write_temp("2 0 2 2 2 2 1 0 0"));
  EXPECT(run_app(args, 1, out, sizeof out) == 2 && strstr(out, "expected 4 matrix values"),
         "truncated file: exit 2 naming the problem:\n%s", out);
  data_path(path, sizeof path, "lcp_deudeu.dat");
  struct { const char *args, *mention; } bad[] = {
    {"--solver bogus", "bogus"}, {"--solver", "--solver"}, {"--tikhonov -1", "-1"},
    {"--tikhonov abc", "abc"},   {"--tikhonov nan", "nan"}, {"--frobnicate", "--frobnicate"},
    {"--lemke-form dense", "dense"}, {"--lemke-form", "--lemke-form"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    snprintf(args, sizeof args, "'%s' %s", path, bad[k].args);
    EXPECT(run_app(args, 1, out, sizeof out) == 2 && strstr(out, bad[k].mention), "cusp-lcp ... %s: exit 2:\n%s",
           bad[k].args, out);
  }
  EXPECT(run_app("", 1, out, sizeof out) == 2 && strstr(out, "no LCP file"), "no file: exit 2:\n%s", out);
  snprintf(args, sizeof args, "'%s' '%s'", path, path);
  EXPECT(run_app(args, 1, out, sizeof out) == 2, "two files: exit 2");
}

/* Runs the app like run_app and returns its peak resident memory in kB in *rss_kb. */
static int run_app_rss(const char *args, char *out, size_t size, long *rss_kb) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "exec '%s' %s", CUSP_LCP_APP, args);
  int fd[2];
  if (pipe(fd)) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  size_t len = 0;
  ssize_t k;
  while (len + 1 < size && (k = read(fd[0], out + len, size - 1 - len)) > 0) len += (size_t)k;
  out[len] = '\0';
  close(fd[0]);
  int status;
  struct rusage ru;
  if (pid < 0 || wait4(pid, &status, 0, &ru) != pid) return -1;
  *rss_kb = ru.ru_maxrss;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A sparse .dat declaring n = 4000 that holds one 1 x 1 block and q (about
 * 10 KB): its cost follows what it holds. Every row but the first is zero;
 * q = -1 on the first (z_0 = 1/2), 0, 1 or 2 elsewhere (z = 0 solves them),
 * or one -1 there: no solution, named by its row. Before, the dense solvers
 * took minutes and 555 MB on it; the memory is checked here (not the time). */
static void sparse_declared_large(void) {
  enum { n = 4000 };
  static char text[64 + 4 * n];
  for (int bad_row = 0; bad_row < 2; bad_row++) {
    int o = snprintf(text, sizeof text, "%d\n1\n%d\n%d\n1\n2\n2\n1 %d\n1 %d\n3\n1\n0 1 1\n0\n0\n2\n-1", n, n,
                     n, n, n);
    for (int i = 1; i < n; i++) o += snprintf(text + o, sizeof text - o, " %s", bad_row && i == 1234 ? "-1" : i % 3 == 0 ? "0" : i % 3 == 1 ? "1" : "2");
    snprintf(text + o, sizeof text - o, "\n");
    const char *path = write_temp(text);
    char args[256], out[1 << 16];
    snprintf(args, sizeof args, "'%s' --json", path);
    long rss = 0;
    int rc = run_app_rss(args, out, sizeof out, &rss);
    json_members m;
    int parsed = parse_last_line(out, &m) == 0 && member(&m, "status") && member(&m, "z");
    EXPECT(parsed, "sparse n = 4000: JSON last line:\n%.300s", out);
    if (!parsed) continue;
    static double z[n];
    int nz = json_numbers(member(&m, "z"), z, n);
    if (!bad_row) {
      int zero_rest = 1;
      for (int i = 1; i < nz; i++) zero_rest &= z[i] == 0;
      EXPECT(rc == 0 && !strncmp(member(&m, "status"), "\"solved\"", 8) && nz == n && fabs(z[0] - 0.5) < 1e-15 &&
                 zero_rest,
             "sparse n = 4000: exit %d, status %.10s, z_0 = %g", rc, member(&m, "status"), nz ? z[0] : NAN);
      EXPECT(member(&m, "unknowns_left") && atoi(member(&m, "unknowns_left")) < n / 2,
             "sparse n = 4000: the zero rows with q > 0 are fixed (%.8s left)", member(&m, "unknowns_left"));
    } else {
      EXPECT(rc == 1 && !strncmp(member(&m, "status"), "\"ray\"", 5) && member(&m, "message") &&
                 strstr(member(&m, "message"), "row 1234"),
             "sparse n = 4000 with no solution: exit %d, %.160s", rc, member(&m, "message"));
    }
    EXPECT(rss > 0 && rss < 64 * 1024, "sparse n = 4000: peak memory %ld kB (a dense workspace: 555 MB)", rss);
  }
}

/* sb_lcp_solve_split against the plain conditioned solve of the whole
 * problem: block-diagonal P-matrices with their blocks' indices shuffled,
 * plus zero rows with q > 0 whose columns are not zero (fixing them empties
 * rows further on: z_i = 0 is then forced there too). */
static void split_agrees(void) {
  enum { n = 24 };
  static double M[n * n], q[n], z1[n], z2[n], w[n];
  sb_lcp_work *work = sb_lcp_work_create(n);
  unsigned long long x = 0x1234567ULL;
  int worst_ok = 1;
  for (int trial = 0; trial < 20; trial++) {
    int perm[n], comp[n];
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      int j = (int)(x % (unsigned)(i + 1)), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    for (int i = 0; i < n; i++) comp[perm[i]] = i / 5; /* components of 5 (the last of 4) */
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double v = (double)(x >> 11) / 9007199254740992.0 - 0.5;
        M[j * n + i] = comp[i] == comp[j] ? (i == j ? 3 + v : v) : 0;
      }
    for (int i = 0; i < n; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      q[i] = (double)(x >> 11) / 9007199254740992.0 * 4 - 2;
    }
    if (trial % 2) { /* rows 0, 1 zero with q > 0; row 2's only entry is in column 0 */
      for (int j = 0; j < n; j++) M[j * n + 0] = M[j * n + 1] = M[j * n + 2] = 0;
      M[0 * n + 2] = 1;
      M[0 * n + 5] = M[1 * n + 6] = 0.5; /* columns 0 and 1 reach other rows */
      q[0] = 1;
      q[1] = 2;
      q[2] = 3;
    }
    sb_lcp_options opt = sb_lcp_default_options();
    sb_lcp_info i1, i2;
    int ncomp, nleft;
    sb_lcp_status s1 = sb_lcp_solve_split(n, M, q, z1, w, 10, 0, &opt, &i1, &ncomp, &nleft);
    sb_lcp_status s2 = sb_lcp_condition_solve(work, n, M, q, z2, NULL, 10, 0, &opt, &i2);
    double d = tu_relerr(z1, z2, n, 1);
    int expect_comp = trial % 2 ? 0 : 5;
    int ok = s1 == SB_LCP_SOLVED && s2 == SB_LCP_SOLVED && d < 1e-9 && (trial % 2 ? nleft == n - 3 : ncomp == 5);
    if (!ok)
      fprintf(stderr, "split trial %d: %s / %s, |z - z_whole| %.3g, %d components (%d expected), %d left\n", trial,
              sb_lcp_status_name(s1), sb_lcp_status_name(s2), d, ncomp, expect_comp, nleft);
    worst_ok &= ok;
  }
  EXPECT(worst_ok, "sb_lcp_solve_split agrees with the whole problem's solve");
  sb_lcp_work_free(work);
}

/* ---------- solver input checks ---------- */

static void bad_solver_input(const char *name, sb_lcp_work *work, int n, const double *M, const double *q,
                             int prefill_nan) {
  for (int c = 0; c < 3; c++) {
    double z[8], w[8];
    for (int i = 0; i < 8; i++) z[i] = w[i] = prefill_nan ? NAN : 0.5;
    sb_lcp_info info;
    memset(&info, 0, sizeof info);
    sb_lcp_options opt = sb_lcp_default_options();
    sb_lcp_status st = c == 0   ? sb_lcp_solve(work, n, M, q, z, w, &opt, &info)
                       : c == 1 ? sb_lcp_solve_with(work, SB_LCP_LEMKE, n, M, q, z, w, &opt, &info)
                                : sb_lcp_condition_solve(work, n, M, q, z, w, 10, 0, &opt, &info);
    const char *call = c == 0 ? "sb_lcp_solve" : c == 1 ? "sb_lcp_solve_with" : "sb_lcp_condition_solve";
    EXPECT(st == SB_LCP_BAD_INPUT && info.status == SB_LCP_BAD_INPUT, "%s, %s: status %s", name, call,
           sb_lcp_status_name(st));
    EXPECT(info.message[0], "%s, %s: no message", name, call);
    int finite = 1;
    for (int i = 0; i < n && i < 8; i++) finite &= isfinite(z[i]) && isfinite(w[i]);
    EXPECT(finite, "%s, %s: z or w not finite", name, call);
  }
}

static void solver_input_tests(void) {
  sb_lcp_work *work = sb_lcp_work_create(4);
  double M[64], q[8];
  for (int k = 0; k < 64; k++) M[k] = 0;
  for (int i = 0; i < 8; i++) M[i + 8 * i] = 2, q[i] = -1;
  bad_solver_input("n = 0", work, 0, M, q, 0);
  bad_solver_input("n = -1", work, -1, M, q, 0);
  bad_solver_input("n above the workspace", work, 5, M, q, 0);
  double M2[4] = {2, 1, 1, 2}, q2[2] = {-5, -6};
  M2[1] = NAN;
  bad_solver_input("NaN in M", work, 2, M2, q2, 1);
  M2[1] = 1;
  q2[1] = INFINITY;
  bad_solver_input("Inf in q", work, 2, M2, q2, 1);
  q2[1] = -6;
  /* A non-finite warm start is not a solution: finite z afterwards either way. */
  double z[2] = {NAN, 1}, w[2];
  sb_lcp_options opt = sb_lcp_default_options();
  opt.warm_start = 1;
  sb_lcp_info info;
  sb_lcp_status st = sb_lcp_solve(work, 2, M2, q2, z, w, &opt, &info);
  EXPECT(isfinite(z[0]) && isfinite(z[1]), "NaN warm start: z finite (status %s)", sb_lcp_status_name(st));
  sb_lcp_work_free(work);
}

/* ---------- writer ---------- */

/* Values that need all 17 digits come back bit for bit; bad arguments and
 * unwritable paths are refused with a message. */
static void writer_tests(void) {
  enum { n = 7 };
  double M[n * n], q[n];
  unsigned long long x = 88172645463325252ULL;
  for (int i = 0; i < n * n + n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    double v = ((double)(x >> 11) / 9007199254740992.0 - 0.5) * pow(10, (int)(x % 41) - 20);
    if (i < n * n) M[i] = v;
    else q[i - n * n] = v;
  }
  M[3] = -0.0;
  q[2] = 5e-324; /* subnormal */
  const char *path = write_temp("");
  char err[256] = "";
  EXPECT(path && sb_lcp_write_dat(path, n, M, q, "written by test_lcp_io", err, sizeof err) == 0, "write: %s", err);
  int n2 = 0;
  double *M2 = NULL, *q2 = NULL;
  EXPECT(sb_lcp_read_dat(path, &n2, &M2, &q2, err, sizeof err) == 0, "read back: %s", err);
  if (M2 && q2 && n2 == n) {
    EXPECT(memcmp(M, M2, sizeof M) == 0 && memcmp(q, q2, sizeof q) == 0, "write/read round trip is exact");
  } else {
    EXPECT(0, "read back n = %d", n2);
  }
  free(M2);
  free(q2);
  err[0] = 0;
  EXPECT(sb_lcp_write_dat("/nonexistent-dir/x.dat", n, M, q, NULL, err, sizeof err) == -1 &&
             strstr(err, "/nonexistent-dir/x.dat"), "unwritable path refused: %s", err);
  err[0] = 0;
  EXPECT(sb_lcp_write_dat(path, 0, M, q, NULL, err, sizeof err) == -1 && strstr(err, "n < 1"), "n = 0 refused: %s", err);
}

int main(void) {
  reader_tests();
  writer_tests();
  app_tests();
  sparse_declared_large();
  split_agrees();
  solver_input_tests();
  for (int k = 0; k < ntemp; k++) unlink(temp_paths[k]);
  return test_report("lcp_io");
}
