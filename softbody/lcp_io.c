/* Reader for the peer set's .dat LCP files, Siconos numerics' text format:
 *   n, storage (0 dense, 1 sparse block), the matrix, q (n values),
 *   then free text.
 * Dense: rows, cols, "n n" again, n*n values column-major.
 * Sparse block (a SparseBlockStructuredMatrix dump): rows, cols, nbblocks,
 * block rows, block columns, their cumulative ends, the CSR-like row
 * pointers and block column indices, then each block as its index followed
 * by its values column-major.
 * Every token is checked; a failure names the file, the line and the
 * entry, and frees everything. */
#include "lcp.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sb_util.h"

#define DAT_MAX_N SB_LCP_DAT_MAX_N
/* The largest file read: a dense problem of the largest n written with 17
 * digits takes about 420 MB. Also keeps the line counter within an int. */
#define DAT_MAX_BYTES (1l << 30)

typedef struct {
  const char *path;
  char *text;      /* the whole file, NUL-terminated; tokens are cut in place */
  char *pos, *end;
  int line;        /* line of the next unread character */
  int token_line;  /* line of the token last returned */
  char *error;
  int error_size;
} dat_reader;

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

static int load_file(dat_reader *r) {
  FILE *f = fopen(r->path, "rb");
  if (!f) {
    sb_errorf(r->error, r->error_size, "%s: cannot open: %s", r->path, strerror(errno));
    return -1;
  }
  size_t len = 0, cap = 4096;
  char *text = malloc(cap);
  while (text) {
    len += fread(text + len, 1, cap - 1 - len, f);
    if (len < cap - 1) break;
    if (len >= (size_t)DAT_MAX_BYTES) {
      free(text);
      fclose(f);
      sb_errorf(r->error, r->error_size, "%s: file is larger than the limit of %ld bytes (a dense problem of "
                "the largest n, %d, takes about 420 MB)", r->path, DAT_MAX_BYTES, DAT_MAX_N);
      return -1;
    }
    size_t grown = 2 * cap < (size_t)DAT_MAX_BYTES + 2 ? 2 * cap : (size_t)DAT_MAX_BYTES + 2;
    char *bigger = realloc(text, grown);
    if (!bigger) {
      free(text);
      text = NULL;
      break;
    }
    text = bigger;
    cap = grown;
  }
  int read_failed = ferror(f), read_errno = errno;
  fclose(f);
  if (!text) {
    sb_errorf(r->error, r->error_size, "%s: out of memory reading the file", r->path);
    return -1;
  }
  if (read_failed) {
    free(text);
    sb_errorf(r->error, r->error_size, "%s: read error: %s", r->path, strerror(read_errno));
    return -1;
  }
  text[len] = '\0';
  r->text = r->pos = text;
  r->end = text + len;
  r->line = 1;
  return 0;
}

/* The next whitespace-separated token, NUL-terminated in place; NULL at the end. */
static char *next_token(dat_reader *r) {
  while (r->pos < r->end && is_blank(*r->pos)) r->line += *r->pos++ == '\n';
  if (r->pos == r->end) return NULL;
  char *start = r->pos;
  r->token_line = r->line;
  while (r->pos < r->end && !is_blank(*r->pos)) r->pos++;
  if (r->pos < r->end) {
    r->line += *r->pos == '\n';
    *r->pos++ = '\0';
  }
  return start;
}

/* Tokens left, counted up to `limit`, so that a truncated file is reported
 * before a large allocation is made for it. */
static long long tokens_left(const dat_reader *r, long long limit) {
  long long count = 0;
  const char *p = r->pos;
  while (count < limit) {
    while (p < r->end && is_blank(*p)) p++;
    if (p == r->end) break;
    count++;
    while (p < r->end && !is_blank(*p)) p++;
  }
  return count;
}

static int need_tokens(dat_reader *r, long long count, const char *what) {
  long long have = tokens_left(r, count);
  if (have >= count) return 0;
  sb_errorf(r->error, r->error_size, "%s: expected %lld %s, file ends after %lld", r->path, count, what, have);
  return -1;
}

/* An integer in [lo, hi]; `what` names it in messages. */
static int read_int(dat_reader *r, const char *what, long lo, long hi, int *out) {
  char *tok = next_token(r);
  if (!tok) {
    sb_errorf(r->error, r->error_size, "%s: file ends before %s", r->path, what);
    return -1;
  }
  char *endp;
  errno = 0;
  long v = strtol(tok, &endp, 10);
  if (endp == tok || *endp) {
    sb_errorf(r->error, r->error_size, "%s:%d: %s: '%.32s' is not an integer", r->path, r->token_line, what, tok);
    return -1;
  }
  if (errno == ERANGE || v < lo || v > hi) {
    sb_errorf(r->error, r->error_size, "%s:%d: %s = %.32s is outside [%ld, %ld]", r->path, r->token_line, what, tok,
              lo, hi);
    return -1;
  }
  *out = (int)v;
  return 0;
}

/* A finite number; the entry is named M(i,j) (0-based) or, with j < 0, q[i]. */
static int read_value(dat_reader *r, int i, int j, double *out) {
  char name[48];
  if (j >= 0) snprintf(name, sizeof name, "M(%d,%d)", i, j);
  else snprintf(name, sizeof name, "q[%d]", i);
  char *tok = next_token(r);
  if (!tok) {
    sb_errorf(r->error, r->error_size, "%s: file ends before %s", r->path, name);
    return -1;
  }
  char *endp;
  double v = strtod(tok, &endp);
  if (endp == tok || *endp) {
    sb_errorf(r->error, r->error_size, "%s:%d: %s: '%.32s' is not a number", r->path, r->token_line, name, tok);
    return -1;
  }
  if (!isfinite(v)) {
    sb_errorf(r->error, r->error_size, "%s:%d: %s = '%.32s' is not finite", r->path, r->token_line, name, tok);
    return -1;
  }
  *out = v;
  return 0;
}

/* Dense: "n n" again, then n*n values column-major. *M is allocated only
 * once the file is known to hold them. */
static int read_dense(dat_reader *r, int n, double **M) {
  int rows, cols;
  if (read_int(r, "dense header rows", 0, DAT_MAX_N, &rows) || read_int(r, "dense header columns", 0, DAT_MAX_N, &cols))
    return -1;
  if (rows != n || cols != n) {
    sb_errorf(r->error, r->error_size, "%s:%d: dense header says %d x %d, but n = %d", r->path, r->token_line, rows,
              cols, n);
    return -1;
  }
  long long count = (long long)n * n;
  if (need_tokens(r, count, "matrix values")) return -1;
  if (!(*M = malloc(sizeof(double) * count))) {
    sb_errorf(r->error, r->error_size, "%s: out of memory for a %d x %d matrix", r->path, n, n);
    return -1;
  }
  for (long long k = 0; k < count; k++)
    if (read_value(r, (int)(k % n), (int)(k / n), &(*M)[k])) return -1;
  return 0;
}

/* Cumulative block ends: strictly increasing, the last one equal to n. */
static int read_block_ends(dat_reader *r, const char *name, int count, int n, int *ends) {
  if (need_tokens(r, count, name)) return -1;
  for (int k = 0; k < count; k++) {
    if (read_int(r, name, 1, n, &ends[k])) return -1;
    if (k > 0 && ends[k] <= ends[k - 1]) {
      sb_errorf(r->error, r->error_size, "%s:%d: %s[%d] = %d does not increase (previous %d)", r->path, r->token_line,
                name, k, ends[k], ends[k - 1]);
      return -1;
    }
  }
  if (ends[count - 1] != n) {
    sb_errorf(r->error, r->error_size, "%s:%d: %s ends at %d, but n = %d", r->path, r->token_line, name,
              ends[count - 1], n);
    return -1;
  }
  return 0;
}

/* Sparse block: the structure, then the blocks; M is zero outside them. */
static int read_sparse_block(dat_reader *r, int n, double **Mout) {
  int nbblocks, nrows, ncols, filled1, filled2, status = -1;
  int *row_end = NULL, *col_end = NULL, *row_ptr = NULL, *block_col = NULL;
  double *M = NULL;
  long max_blocks = (long)n * n; /* n <= DAT_MAX_N: below INT_MAX */
  if (read_int(r, "nbblocks", 0, max_blocks, &nbblocks) || read_int(r, "blocknumber0", 1, n, &nrows) ||
      read_int(r, "blocknumber1", 1, n, &ncols))
    return -1;
  if ((long long)nbblocks > (long long)nrows * ncols) {
    sb_errorf(r->error, r->error_size, "%s: %d blocks do not fit in %d x %d block rows and columns", r->path,
              nbblocks, nrows, ncols);
    return -1;
  }
  /* each block takes a column index and a label at least: refused before
   * memory is reserved for a count the file cannot hold */
  long long left = tokens_left(r, 2 * (long long)nbblocks);
  if (left < 2 * (long long)nbblocks) {
    sb_errorf(r->error, r->error_size, "%s:%d: nbblocks = %d, but the file holds only %lld more values (each block "
              "needs 2 at least)", r->path, r->token_line, nbblocks, left);
    return -1;
  }
  row_end = malloc(sizeof(int) * nrows);
  col_end = malloc(sizeof(int) * ncols);
  row_ptr = malloc(sizeof(int) * ((size_t)nrows + 1));
  block_col = malloc(sizeof(int) * ((size_t)nbblocks + 1));
  if (!row_end || !col_end || !row_ptr || !block_col) {
    sb_errorf(r->error, r->error_size, "%s: out of memory for the block structure", r->path);
    goto done;
  }
  if (read_block_ends(r, "blocksize0", nrows, n, row_end) || read_block_ends(r, "blocksize1", ncols, n, col_end))
    goto done;
  if (read_int(r, "filled1", 0, n + 1, &filled1) || read_int(r, "filled2", 0, nbblocks, &filled2)) goto done;
  if (filled1 != nrows + 1 || filled2 != nbblocks) {
    sb_errorf(r->error, r->error_size,
              "%s:%d: filled1 = %d and filled2 = %d, expected blocknumber0 + 1 = %d and nbblocks = %d", r->path,
              r->token_line, filled1, filled2, nrows + 1, nbblocks);
    goto done;
  }
  /* Row pointers: from 0, non-decreasing, up to the block count. */
  if (need_tokens(r, filled1, "row pointers (index1_data)")) goto done;
  for (int k = 0; k < filled1; k++) {
    if (read_int(r, "index1_data", 0, nbblocks, &row_ptr[k])) goto done;
    if ((k == 0 && row_ptr[0] != 0) || (k > 0 && row_ptr[k] < row_ptr[k - 1])) {
      sb_errorf(r->error, r->error_size, "%s:%d: index1_data[%d] = %d breaks the row pointers (0, non-decreasing)",
                r->path, r->token_line, k, row_ptr[k]);
      goto done;
    }
  }
  if (row_ptr[nrows] != nbblocks) {
    sb_errorf(r->error, r->error_size, "%s:%d: index1_data ends at %d, but there are %d blocks", r->path,
              r->token_line, row_ptr[nrows], nbblocks);
    goto done;
  }
  /* Block columns: strictly increasing within a block row (no duplicate). */
  if (need_tokens(r, nbblocks, "block column indices (index2_data)")) goto done;
  for (int br = 0; br < nrows; br++)
    for (int k = row_ptr[br]; k < row_ptr[br + 1]; k++) {
      if (read_int(r, "index2_data", 0, ncols - 1, &block_col[k])) goto done;
      if (k > row_ptr[br] && block_col[k] <= block_col[k - 1]) {
        sb_errorf(r->error, r->error_size, "%s:%d: index2_data[%d] = %d repeats or goes back in block row %d", r->path,
                  r->token_line, k, block_col[k], br);
        goto done;
      }
    }
  /* The blocks: their numbers and values, checked present before reading. */
  long long needed = 0;
  for (int br = 0; br < nrows; br++)
    for (int k = row_ptr[br]; k < row_ptr[br + 1]; k++) {
      int bc = block_col[k];
      long long rows = row_end[br] - (br ? row_end[br - 1] : 0), cols = col_end[bc] - (bc ? col_end[bc - 1] : 0);
      needed += 1 + rows * cols;
    }
  if (need_tokens(r, needed, "block numbers and values") || need_tokens(r, needed + n, "block values, then the values of q"))
    goto done;
  /* zero pages until written: memory follows the blocks the file holds */
  M = *Mout = calloc((size_t)n * n, sizeof(double));
  if (!M) {
    sb_errorf(r->error, r->error_size, "%s: out of memory for a %d x %d matrix", r->path, n, n);
    goto done;
  }
  for (int br = 0; br < nrows; br++) {
    int row0 = br ? row_end[br - 1] : 0, rows = row_end[br] - row0;
    for (int k = row_ptr[br]; k < row_ptr[br + 1]; k++) {
      int bc = block_col[k], col0 = bc ? col_end[bc - 1] : 0, cols = col_end[bc] - col0, label;
      if (read_int(r, "block number", 0, INT_MAX, &label)) goto done;
      if (label != k) {
        sb_errorf(r->error, r->error_size, "%s:%d: block %d is labelled %d", r->path, r->token_line, k, label);
        goto done;
      }
      for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++)
          if (read_value(r, row0 + i, col0 + j, &M[(row0 + i) + (size_t)(col0 + j) * n])) goto done;
    }
  }
  status = 0;
done:
  free(row_end);
  free(col_end);
  free(row_ptr);
  free(block_col);
  return status;
}

int sb_lcp_read_dat(const char *path, int *n_out, double **M_out, double **q_out, char *error, int error_size) {
  sb_errorf(error, error_size, "%s", "");
  if (M_out) *M_out = NULL;
  if (q_out) *q_out = NULL;
  if (!path || !n_out || !M_out || !q_out) {
    sb_errorf(error, error_size, "sb_lcp_read_dat: NULL argument");
    return -1;
  }
  dat_reader r = {.path = path, .error = error, .error_size = error_size};
  if (load_file(&r)) return -1;
  double *M = NULL, *q = NULL;
  int n, storage, status = -1;
  if (r.pos == r.end) {
    sb_errorf(error, error_size, "%s: file is empty", path);
    goto done;
  }
  if (read_int(&r, "n", 1, INT_MAX, &n)) goto done;
  if (n > DAT_MAX_N) {
    sb_errorf(error, error_size, "%s:%d: n = %d is above the limit %d (M is returned dense, n x n: %.0f MB at "
              "the limit)", path, r.token_line, n, DAT_MAX_N, 8e-6 * DAT_MAX_N * (double)DAT_MAX_N);
    goto done;
  }
  if (read_int(&r, "storage (0 dense, 1 sparse block)", 0, 1, &storage)) goto done;
  int rows, cols;
  if (read_int(&r, "matrix rows", 0, DAT_MAX_N, &rows) || read_int(&r, "matrix columns", 0, DAT_MAX_N, &cols))
    goto done;
  if (rows != n || cols != n) {
    sb_errorf(error, error_size, "%s:%d: matrix is %d x %d, but n = %d", path, r.token_line, rows, cols, n);
    goto done;
  }
  if (storage == 0 ? read_dense(&r, n, &M) : read_sparse_block(&r, n, &M)) goto done;
  if (need_tokens(&r, n, "values of q")) goto done;
  if (!(q = malloc(sizeof(double) * n))) {
    sb_errorf(error, error_size, "%s: out of memory for q", path);
    goto done;
  }
  for (int i = 0; i < n; i++)
    if (read_value(&r, i, -1, &q[i])) goto done;
  status = 0;
done:
  free(r.text);
  if (status) {
    free(M);
    free(q);
    return -1;
  }
  *n_out = n;
  *M_out = M;
  *q_out = q;
  return 0;
}

int sb_lcp_write_dat(const char *path, int n, const double *M, const double *q, const char *comment,
                     char *error, int error_size) {
  if (!path || n < 1 || !M || !q) {
    sb_errorf(error, error_size, "sb_lcp_write_dat: %s", !path ? "no path" : n < 1 ? "n < 1" : "NULL M or q");
    return -1;
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    sb_errorf(error, error_size, "%s: cannot write (%s)", path, strerror(errno));
    return -1;
  }
  /* %.17g: the file reads back bit for bit */
  fprintf(f, "%d\n0\n%d\n%d\n%d\t%d\n", n, n, n, n, n);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) fprintf(f, "%.17g%c", M[(size_t)j * n + i], i + 1 < n ? ' ' : '\n');
  for (int i = 0; i < n; i++) fprintf(f, "%.17g%c", q[i], i + 1 < n ? ' ' : '\n');
  if (comment && comment[0]) fprintf(f, "%s\n", comment);
  int bad = ferror(f);
  if (fclose(f) || bad) {
    sb_errorf(error, error_size, "%s: write failed", path);
    return -1;
  }
  return 0;
}
