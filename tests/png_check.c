/* png_check: asserts facts about a rendered PNG for the viewer tests.
 *
 *   png_check FILE [--min-stddev S] [--color R,G,B --min-count N]
 *                  [--region X0,Y0,X1,Y1 --min-region-count N]
 *
 * Prints one line of statistics. A pixel "has the colour" when its hue is
 * within 15 degrees of the colour's and it is saturated and bright enough:
 * shading scales a lit surface's RGB and specular light whitens it, but
 * neither moves its hue much. Region: inclusive pixel box, y down from the
 * top. Exit 0 when every check passes, 1 when one fails, 2 on bad input. */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hsv(double r, double g, double b, double *h, double *s, double *v) {
  double mx = fmax(r, fmax(g, b)), mn = fmin(r, fmin(g, b)), c = mx - mn;
  *v = mx;
  *s = mx > 0 ? c / mx : 0;
  if (c <= 0) *h = 0;
  else if (mx == r) *h = 60 * fmod((g - b) / c + 6, 6);
  else if (mx == g) *h = 60 * ((b - r) / c + 2);
  else *h = 60 * ((r - g) / c + 4);
}

static int parse_list(const char *s, double *x, int n) {
  for (int i = 0; i < n; i++) {
    char *end;
    x[i] = strtod(s, &end);
    if (end == s || !isfinite(x[i])) return -1;
    if (i < n - 1 && *end != ',') return -1;
    s = end + (i < n - 1);
    if (i == n - 1 && *end) return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: png_check FILE [--min-stddev S] [--color R,G,B --min-count N] "
                    "[--region X0,Y0,X1,Y1 --min-region-count N]\n");
    return 2;
  }
  const char *path = argv[1];
  double min_std = -1, color[3] = {0}, region[4] = {0};
  long min_count = -1, min_region = -1;
  int has_color = 0, has_region = 0;
  for (int i = 2; i < argc; i += 2) { /* option, value */
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int bad = !v;
    if (!bad && !strcmp(a, "--min-stddev")) bad = parse_list(v, &min_std, 1);
    else if (!bad && !strcmp(a, "--color")) bad = parse_list(v, color, 3), has_color = 1;
    else if (!bad && !strcmp(a, "--region")) bad = parse_list(v, region, 4), has_region = 1;
    else if (!bad && !strcmp(a, "--min-count")) min_count = strtol(v, NULL, 10);
    else if (!bad && !strcmp(a, "--min-region-count")) min_region = strtol(v, NULL, 10);
    else bad = 1;
    if (bad) {
      fprintf(stderr, "png_check: bad option '%s'\n", a);
      return 2;
    }
  }
  if ((min_count >= 0 || min_region >= 0) && !has_color) {
    fprintf(stderr, "png_check: --min-count and --min-region-count need --color\n");
    return 2;
  }
  if (min_region >= 0 && !has_region) {
    fprintf(stderr, "png_check: --min-region-count needs --region\n");
    return 2;
  }

  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path)) {
    fprintf(stderr, "png_check: cannot read '%s': %s\n", path, img.message);
    return 2;
  }
  img.format = PNG_FORMAT_RGB;
  size_t size = PNG_IMAGE_SIZE(img);
  unsigned char *px = malloc(size);
  if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL)) {
    fprintf(stderr, "png_check: cannot decode '%s': %s\n", path, px ? img.message : "out of memory");
    free(px);
    png_image_free(&img);
    return 2;
  }
  int w = (int)img.width, h = (int)img.height;

  /* blankness: standard deviation of all channel values */
  double sum = 0, sum2 = 0;
  size_t n = (size_t)w * h * 3;
  for (size_t i = 0; i < n; i++) {
    sum += px[i];
    sum2 += (double)px[i] * px[i];
  }
  double mean = sum / n, stddev = sqrt(fmax(sum2 / n - mean * mean, 0));

  double th, ts, tv;
  hsv(color[0], color[1], color[2], &th, &ts, &tv);
  long count = 0, in_region = 0;
  for (int y = 0; y < h && has_color; y++)
    for (int x = 0; x < w; x++) {
      const unsigned char *p = px + 3 * ((size_t)y * w + x);
      double ph, ps, pv;
      hsv(p[0] / 255.0, p[1] / 255.0, p[2] / 255.0, &ph, &ps, &pv);
      double dh = fabs(ph - th);
      dh = fmin(dh, 360 - dh);
      if (dh > 15 || ps < 0.5 * ts || pv < 0.15) continue;
      count++;
      if (has_region && x >= region[0] && x <= region[2] && y >= region[1] && y <= region[3]) in_region++;
    }
  printf("png_check: %s %dx%d mean %.1f stddev %.1f", path, w, h, mean, stddev);
  if (has_color) printf(" colour_pixels %ld", count);
  if (has_region) printf(" in_region %ld", in_region);
  printf("\n");

  int fail = 0;
  if (min_std >= 0 && !(stddev >= min_std)) {
    printf("png_check: FAIL the image looks blank: stddev %.2f < %.2f\n", stddev, min_std);
    fail = 1;
  }
  if (min_count >= 0 && count < min_count) {
    printf("png_check: FAIL %ld pixels of colour %g,%g,%g < %ld\n", count, color[0], color[1], color[2], min_count);
    fail = 1;
  }
  if (min_region >= 0 && in_region < min_region) {
    printf("png_check: FAIL %ld pixels of the colour in region %g,%g,%g,%g < %ld\n", in_region, region[0],
           region[1], region[2], region[3], min_region);
    fail = 1;
  }
  free(px);
  png_image_free(&img);
  return fail;
}
