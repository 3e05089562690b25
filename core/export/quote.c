/* Spec text in exported files, one way per place (quote.h). */
#include "export/quote.h"

#include <string.h>

char *tpuci__quote_github_text(const char *s) {
  tpuci__buf_t b;
  const char *hit;
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "");
  while ((hit = strstr(s, "${{")) != NULL) {
    tpuci__buf_add(&b, s, (size_t) (hit - s));
    tpuci__buf_adds(&b, "${{ '${{' }}");
    s = hit + 3;
  }
  tpuci__buf_adds(&b, s);
  return tpuci__buf_steal(&b);
}

char *tpuci__quote_github_literal(const char *s) {
  int format = strstr(s, "${{") != NULL;
  tpuci__buf_t b;
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, format ? "format('" : "'");
  for (; *s; s++) {
    if (*s == '\'') tpuci__buf_adds(&b, "''");
    else if (format && *s == '$') tpuci__buf_adds(&b, "{0}");
    else if (format && (*s == '{' || *s == '}')) tpuci__buf_addf(&b, "%c%c", *s, *s);
    else tpuci__buf_add(&b, s, 1);
  }
  tpuci__buf_adds(&b, format ? "', '$')" : "'");
  return tpuci__buf_steal(&b);
}
