/* A job's own escape sequences (ECMA-48: CSI, OSC and the other control
 * strings, and the short ESC sequences), found so that the console can
 * leave them out of what it shows: the board, alive lines, and plain
 * output without --color=always; and whether the console writes any
 * itself (--color=auto). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "console.h"

/* A control string (OSC, DCS, SOS, PM, APC) ends at ST (ESC \) or BEL. */
static size_t string_end(const char *s, size_t len, size_t i) {
  for (; i < len; i++) {
    if (s[i] == '\a') return i + 1;
    if (s[i] == '\033' && i + 1 < len && s[i + 1] == '\\') return i + 2;
  }
  return len;
}

size_t tpuci_console__esc_len(const char *s, size_t len) {
  size_t i;
  unsigned char c;
  if (len == 0 || s[0] != '\033') return 0;
  if (len == 1) return 1;
  c = (unsigned char) s[1];
  if (c == '[') { /* CSI: parameters, intermediates, one final byte */
    for (i = 2; i < len; i++) {
      c = (unsigned char) s[i];
      if (c >= 0x40 && c <= 0x7e) return i + 1;
      if (c < 0x20 || c > 0x3f) return i; /* broken: drop what came */
    }
    return len;
  }
  if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') return string_end(s, len, 2);
  /* ESC, intermediates (0x20-0x2f), one final byte (0x30-0x7e). */
  for (i = 1; i < len; i++) {
    c = (unsigned char) s[i];
    if (c >= 0x30 && c <= 0x7e) return i + 1;
    if (c < 0x20 || c > 0x2f) return i;
  }
  return len;
}

size_t tpuci_console__strip_esc(char *s, size_t len) {
  size_t r = 0, w = 0;
  while (r < len) {
    size_t n = s[r] == '\033' ? tpuci_console__esc_len(s + r, len - r) : 0;
    if (n > 0) {
      r += n;
      continue;
    }
    s[w++] = s[r++];
  }
  if (w < len) s[w] = '\0';
  return w;
}

void tpuci_console__sanitize(char *s) {
  size_t len = 0, n;
  char *p;
  while (s[len]) len++;
  n = tpuci_console__strip_esc(s, len);
  s[n] = '\0';
  for (p = s; *p; p++)
    if ((unsigned char) *p < 0x20 || (unsigned char) *p == 0x7f) *p = ' ';
}

void tpuci_console__put(tpuci_console_t *c, const char *s, size_t len) {
  size_t i = 0, start = 0;
  if (c->color) {
    fwrite(s, 1, len, c->out);
    return;
  }
  while (i < len) {
    size_t n = s[i] == '\033' ? tpuci_console__esc_len(s + i, len - i) : 0;
    if (n == 0) {
      i++;
      continue;
    }
    fwrite(s + start, 1, i - start, c->out);
    i += n;
    start = i;
  }
  fwrite(s + start, 1, len - start, c->out);
}

int tpuci_console__in_ci(void) {
  const char *ci = getenv("CI");
  return ci && *ci && strcmp(ci, "0") != 0 && strcmp(ci, "false") != 0;
}

int tpuci_console__dumb_term(void) {
  const char *term = getenv("TERM");
  return term && strcmp(term, "dumb") == 0;
}

int tpuci_console__color_auto(void) {
  const char *no = getenv("NO_COLOR");
  return isatty(STDOUT_FILENO) && (no == NULL || *no == '\0') && !tpuci_console__in_ci() &&
         !tpuci_console__dumb_term();
}

const char *tpuci_console__safe(const char *s, int lines) {
  static char *ring[8];
  static unsigned next;
  char **slot = &ring[next++ % (sizeof(ring) / sizeof(ring[0]))];
  tpuci_free(*slot);
  *slot = tpuci_text_safe(s, lines);
  return *slot != NULL ? *slot : "";
}

void tpuci_console__puts_safe(FILE *f, const char *text) {
  char *s = tpuci_text_safe(text, 1);
  if (s != NULL) fputs(s, f);
  tpuci_free(s);
}
