/* Durations ("1h30m") and sizes ("2g"). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define TPUCI__MAX_MS (100.0 * 365 * 24 * 3600 * 1000)

/* Reads a non-negative decimal number ("1", "1.5", ".5") at *s. */
static int tpuci__number(const char **s, double *out) {
  const char *p = *s;
  double v = 0, scale = 1;
  int digits = 0;

  while (isdigit((unsigned char) *p)) {
    v = v * 10 + (*p++ - '0');
    digits++;
  }
  if (*p == '.') {
    p++;
    while (isdigit((unsigned char) *p)) {
      scale /= 10;
      v += (*p++ - '0') * scale;
      digits++;
    }
  }
  if (digits == 0) return -1;
  *s = p;
  *out = v;
  return 0;
}

int tpuci__duration_parse(const char *s, uint64_t *out_ms) {
  static const struct {
    const char *unit;
    double ms;
  } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
  const char *p = s;
  double total = 0, v;
  int last = (int) (sizeof(units) / sizeof(units[0]));
  size_t i;

  if (s == NULL || *s == '\0') return -1;
  if (tpuci__number(&p, &v) == 0 && *p == '\0') {
    total = v * 1000;
    goto done;
  }
  p = s;
  while (*p) {
    int found = -1;
    if (tpuci__number(&p, &v) != 0) return -1;
    /* Longest unit first: "ms" before "m". */
    for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
      size_t n = strlen(units[i].unit);
      if (strncmp(p, units[i].unit, n) == 0 && !isalpha((unsigned char) p[n])) {
        found = (int) i;
        p += n;
        break;
      }
    }
    /* Units must come in decreasing order and only once: "1h30m". */
    if (found < 0 || found >= last) return -1;
    last = found;
    total += v * units[found].ms;
  }
done:
  if (total > TPUCI__MAX_MS) return -1;
  *out_ms = (uint64_t) llround(total);
  return 0;
}

char *tpuci__duration_format(uint64_t ms, char *buf, size_t size) {
  if (ms < 1000) {
    snprintf(buf, size, "%llums", (unsigned long long) ms);
  } else if (ms < 60000) {
    /* Tenths are cut, not rounded: 59999 ms is "59.9s", never "60.0s". */
    if (ms % 1000 == 0) snprintf(buf, size, "%llus", (unsigned long long) (ms / 1000));
    else
      snprintf(buf, size, "%llu.%llus", (unsigned long long) (ms / 1000),
               (unsigned long long) (ms % 1000 / 100));
  } else {
    unsigned long long s = ms / 1000, h = s / 3600, m = (s / 60) % 60;
    unsigned long long sec = s % 60;
    if (h) snprintf(buf, size, "%lluh%02llum%02llus", h, m, sec);
    else snprintf(buf, size, "%llum%02llus", m, sec);
  }
  return buf;
}

int tpuci__size_parse(const char *s, uint64_t *out_bytes) {
  const char *p = s;
  double v, mul = 1;
  char unit[8];
  size_t n = 0;

  if (s == NULL || tpuci__number(&p, &v) != 0) return -1;
  while (*p && n < sizeof(unit) - 1) unit[n++] = (char) tolower((unsigned char) *p++);
  if (*p) return -1;
  unit[n] = '\0';
  if (n == 0 || strcmp(unit, "b") == 0) mul = 1;
  else if (!strcmp(unit, "k") || !strcmp(unit, "kb") || !strcmp(unit, "kib")) mul = 1024.0;
  else if (!strcmp(unit, "m") || !strcmp(unit, "mb") || !strcmp(unit, "mib")) mul = 1024.0 * 1024;
  else if (!strcmp(unit, "g") || !strcmp(unit, "gb") || !strcmp(unit, "gib"))
    mul = 1024.0 * 1024 * 1024;
  else if (!strcmp(unit, "t") || !strcmp(unit, "tb") || !strcmp(unit, "tib"))
    mul = 1024.0 * 1024 * 1024 * 1024;
  else return -1;
  v *= mul;
  if (v > 1e18) return -1;
  *out_bytes = (uint64_t) llround(v);
  return 0;
}
