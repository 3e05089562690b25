/* A workflow's cron schedule (`tpuci export github --schedule`), checked
 * as GitHub reads one (POSIX cron, 5 fields), so that a typo is an error
 * at export time instead of a workflow that never runs. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "export/github.h"

typedef struct {
  const char *what;
  int min, max;
  const char *const *names; /* names for min, min+1, ..., or NULL */
} tpuci__cron_field_t;

static const char *const tpuci__months[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                            "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
static const char *const tpuci__days[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

static const tpuci__cron_field_t tpuci__cron_fields[5] = {
    {"minute", 0, 59, NULL},
    {"hour", 0, 23, NULL},
    {"day of the month", 1, 31, NULL},
    {"month", 1, 12, tpuci__months},
    {"day of the week", 0, 6, tpuci__days},
};

/* A number or (where the field has them) a name at *p, in the field's
 * range: its value, *p past it; -1 when there is none, -2 out of range. */
static int tpuci__cron_value(const tpuci__cron_field_t *f, const char **p) {
  const char *s = *p;
  long v = 0;
  int k;
  if (isdigit((unsigned char) *s)) {
    while (isdigit((unsigned char) *s) && v < 1000) v = v * 10 + (*s++ - '0');
    if (isdigit((unsigned char) *s)) return -2;
    *p = s;
    return v < f->min || v > f->max ? -2 : (int) v;
  }
  for (k = 0; f->names && k <= f->max - f->min; k++)
    if (strncasecmp(s, f->names[k], 3) == 0 && !isalpha((unsigned char) s[3])) {
      *p = s + 3;
      return f->min + k;
    }
  return -1;
}

/* One comma-separated item of a field: NULL, or what is wrong. */
static char *tpuci__cron_item(const tpuci__cron_field_t *f, const char *item, size_t n) {
  char *copy = tpuci__strndup(item, n), *msg = NULL;
  const char *p = copy;
  int lo, hi = -1;
  if (*p == '*') {
    p++;
  } else {
    if ((lo = tpuci__cron_value(f, &p)) < 0) goto bad;
    if (*p == '-') {
      p++;
      if ((hi = tpuci__cron_value(f, &p)) < 0) goto bad;
      if (hi < lo) {
        msg = tpuci__printf("the %s range '%s' runs backwards", f->what, copy);
        goto done;
      }
    }
  }
  if (*p == '/') {
    long step = 0;
    p++;
    if (!isdigit((unsigned char) *p)) goto bad;
    while (isdigit((unsigned char) *p) && step < 1000) step = step * 10 + (*p++ - '0');
    if (step < 1 || step > f->max) goto bad;
  }
  if (*p == '\0') goto done;
bad:
  msg = tpuci__printf("the %s '%s' is not %d-%d%s, a range or a step of them", f->what, copy,
                      f->min, f->max,
                      f->names == tpuci__months ? " (or JAN-DEC)"
                      : f->names == tpuci__days ? " (or SUN-SAT)"
                                                : "");
done:
  free(copy);
  return msg;
}

char *tpuci__github_cron_check(const char *cron) {
  const char *p = cron ? cron : "";
  const char *start[6], *end[6];
  size_t n = 0, k;
  char *msg = NULL;

  while (*p) {
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '\0') break;
    if (n < 6) start[n] = p;
    while (*p && *p != ' ' && *p != '\t') p++;
    if (n < 6) end[n] = p;
    n++;
  }
  if (n != 5)
    return tpuci__printf("a cron schedule has 5 fields (minute, hour, day of the month, month, "
                         "day of the week, as in \"0 3 * * 1\"); '%s' has %zu",
                         cron ? cron : "", n);
  for (k = 0; k < 5 && msg == NULL; k++) {
    const char *q = start[k];
    while (q < end[k] && msg == NULL) {
      const char *comma = memchr(q, ',', (size_t) (end[k] - q));
      const char *stop = comma ? comma : end[k];
      msg = tpuci__cron_item(&tpuci__cron_fields[k], q, (size_t) (stop - q));
      q = comma ? comma + 1 : end[k];
      if (comma && q == end[k] && msg == NULL)
        msg = tpuci__printf("the %s ends with a comma", tpuci__cron_fields[k].what);
    }
  }
  return msg;
}
