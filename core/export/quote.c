/* Spec text in exported files, one way per place (quote.h). */
#include "export/quote.h"

#include <string.h>

/* The length of the UTF-8 character at p (1 for ASCII), or 0 when the
 * bytes there are not one. */
static size_t tpuci__q_char(const unsigned char *p, const unsigned char *end) {
  return *p < 0x80 ? 1 : tpuci__utf8_len(p, end);
}

/* Whether the n-byte character at p is a line break to some YAML reader
 * other than LF: CR, U+0085 (NEL), U+2028, U+2029. */
static int tpuci__q_break(const unsigned char *p, size_t n) {
  return (n == 1 && *p == '\r') || (n == 2 && p[0] == 0xc2 && p[1] == 0x85) ||
         (n == 3 && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9));
}

void tpuci__quote_comment(tpuci__buf_t *out, const char *text) {
  const unsigned char *p = (const unsigned char *) text, *end = p + strlen(text);
  tpuci__buf_adds(out, *text ? "# " : "#");
  while (p < end) {
    size_t n = tpuci__q_char(p, end);
    int bad = n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f)) ||
              (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) || tpuci__q_break(p, n) ||
              (n == 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf) ||
              (n == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe);
    if (bad) tpuci__buf_add(out, "?", 1);
    else tpuci__buf_add(out, (const char *) p, n);
    p += n ? n : 1;
  }
  tpuci__buf_adds(out, "\n");
}

yaml_scalar_style_t tpuci__quote_yaml_style(const char *s) {
  const unsigned char *p = (const unsigned char *) s, *end = p + strlen(s);
  while (p < end) {
    size_t n = tpuci__q_char(p, end);
    if (tpuci__q_break(p, n)) return YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    p += n ? n : 1;
  }
  if (strchr(s, '\n') != NULL) return YAML_LITERAL_SCALAR_STYLE;
  return tpuci__yaml_ambiguous(s) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE;
}

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

char *tpuci__quote_k8s(const char *s) {
  tpuci__buf_t b;
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "");
  for (; *s; s++) {
    if (*s == '$' && (s[1] == '$' || s[1] == '(')) tpuci__buf_add(&b, "$", 1);
    tpuci__buf_add(&b, s, 1);
  }
  return tpuci__buf_steal(&b);
}
