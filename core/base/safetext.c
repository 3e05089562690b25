/* Untrusted text made safe to print (util.h, tpuci_text_safe in
 * tpuci.h): on a terminal, where an escape sequence or a carriage return
 * would rewrite what the reader sees, and in a GitHub Actions log, where
 * a line that starts with `::` (after white space) or holds `##[` is a
 * workflow command. Every escape but an invalid byte's is JSON's own
 * "\uNNNN": made safe, JSON that jansson wrote stays the same JSON. */
#include <string.h>

#include "base/util.h"

/* The code point of the valid UTF-8 sequence of n bytes at p. */
static unsigned long tpuci__cp(const unsigned char *p, size_t n) {
  unsigned long cp = n == 2 ? (p[0] & 0x1Fu) : n == 3 ? (p[0] & 0x0Fu) : (p[0] & 0x07u);
  size_t i;
  for (i = 1; i < n; i++) cp = (cp << 6) | (p[i] & 0x3Fu);
  return cp;
}

/* Code points that move or reorder what a terminal shows: C1 controls
 * (U+0080..U+009F: 0x9B is CSI to some terminals), the line and
 * paragraph separators and the bidirectional embeddings, overrides and
 * isolates (text shown in another order than it is read). */
static int tpuci__cp_control(unsigned long cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E ||
         cp == 0x200F || cp == 0x061C;
}

/* White space as .NET's String.TrimStart() (the runner's command
 * parser) takes it, besides ASCII's: U+00A0, U+1680, U+2000..U+200A,
 * U+202F, U+205F, U+3000 (U+0085, U+2028 and U+2029 are escaped). */
static int tpuci__cp_space(unsigned long cp) {
  return cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

/* Whether the line that starts at p (before end) reads as a workflow
 * command: white space, then "::". */
static int tpuci__command_line(const unsigned char *p, const unsigned char *end) {
  while (p < end) {
    size_t n;
    if (*p == ' ' || *p == '\t') {
      p++;
      continue;
    }
    if (*p < 0x80) break;
    n = tpuci__utf8_len(p, end);
    if (n == 0 || !tpuci__cp_space(tpuci__cp(p, n))) break;
    p += n;
  }
  return end - p >= 2 && p[0] == ':' && p[1] == ':';
}

void tpuci__safe_add(tpuci__buf_t *b, const char *s, size_t len, int lines) {
  const unsigned char *p = (const unsigned char *) s, *end = p + len;
  int line_start = 1;
  while (p < end) {
    size_t n;
    if (line_start) {
      line_start = 0;
      if (tpuci__command_line(p, end)) {
        /* The first ':' written as an escape: no longer a command. */
        while (*p != ':') {
          tpuci__buf_add(b, *p == '\t' ? " " : (const char *) p, 1);
          p++;
        }
        tpuci__buf_adds(b, "\\u003a");
        p++;
        continue;
      }
    }
    if (*p == '\n' && lines) {
      tpuci__buf_add(b, "\n", 1);
      line_start = 1;
      p++;
    } else if (*p == '\t') {
      tpuci__buf_add(b, " ", 1);
      p++;
    } else if (*p < 0x20 || *p == 0x7F) {
      tpuci__buf_addf(b, "\\u%04x", *p);
      p++;
    } else if (*p == '#' && end - p >= 3 && p[1] == '#' && p[2] == '[') {
      /* The runner's older form, `##[command]`, anywhere in a line. */
      tpuci__buf_adds(b, "##\\u005b");
      p += 3;
    } else if (*p < 0x80) {
      tpuci__buf_add(b, (const char *) p, 1);
      p++;
    } else if ((n = tpuci__utf8_len(p, end)) == 0) {
      tpuci__buf_addf(b, "\\x%02x", *p);
      p++;
    } else if (tpuci__cp_control(tpuci__cp(p, n))) {
      tpuci__buf_addf(b, "\\u%04lx", tpuci__cp(p, n));
      p += n;
    } else {
      tpuci__buf_add(b, (const char *) p, n);
      p += n;
    }
  }
}

char *tpuci__safe(const char *s, int lines) {
  tpuci__buf_t b;
  if (s == NULL) return NULL;
  tpuci__buf_init(&b);
  tpuci__safe_add(&b, s, strlen(s), lines);
  return tpuci__buf_steal(&b);
}

char *tpuci_text_safe(const char *text, int lines) { return tpuci__safe(text, lines); }
