/* pytest's configuration (pyconf.h): the TOML reader for pyproject.toml.
 *
 * It reads the whole file, so that no string, array or inline table of
 * another tool's table can pass for pytest's: comments, table headers
 * ([a.b], [[a.b]]), bare, quoted and dotted keys, basic and literal
 * strings on one line or several (with TOML's escapes and line-ending
 * backslashes), arrays and inline tables (over several lines, trailing
 * commas allowed), and every other value as one token (numbers, booleans,
 * dates and times, a date and time with a space between). It keeps only
 * markers, testpaths and python_files under tool.pytest.ini_options (or
 * pytest 9's tool.pytest), however they are written: in the table's
 * header, as dotted keys, or in an inline table. It checks what it reads
 * but is no validator: a key defined twice elsewhere in the file passes.
 *
 * Each function returns 0 or TPUCI_ESPEC with "NAME:LINE: what" in the
 * error; a value's nesting is capped (TPUCI__PYCONF_MAX_DEPTH), so no
 * input can exhaust the stack. */
#include <stdlib.h>
#include <string.h>

#include "kind/pytest/pyconf.h"

typedef struct {
  const char *p, *end; /* what is left to read */
  const char *name;    /* the file, for messages */
  int line;
  tpuci__pyconf_t *conf;
  tpuci__err_t *err;
  tpuci__strv_t table; /* the current table's keys */
} tpuci__toml_t;

/* A value read: a string, an array of strings (`items`), or anything
 * else. */
enum { TPUCI__TV_STRING, TPUCI__TV_STRINGS, TPUCI__TV_OTHER };
typedef struct {
  int kind;
  char *str;
  tpuci__strv_t items;
} tpuci__tval_t;

static void tpuci__tval_free(tpuci__tval_t *v) {
  free(v->str);
  tpuci__strv_free(&v->items);
  memset(v, 0, sizeof(*v));
}

static int tpuci__toml_fail(tpuci__toml_t *t, const char *what) {
  return tpuci__err_set(t->err, TPUCI_ESPEC, "%s:%d: %s", t->name, t->line, what);
}

static int tpuci__toml_at(const tpuci__toml_t *t, const char *s) {
  size_t n = strlen(s);
  return (size_t) (t->end - t->p) >= n && memcmp(t->p, s, n) == 0;
}

static void tpuci__toml_blanks(tpuci__toml_t *t) {
  while (t->p < t->end && (*t->p == ' ' || *t->p == '\t')) t->p++;
}

/* A newline ("\n" or "\r\n"): 1 and past it, else 0. */
static int tpuci__toml_newline(tpuci__toml_t *t) {
  if (tpuci__toml_at(t, "\n")) t->p += 1;
  else if (tpuci__toml_at(t, "\r\n")) t->p += 2;
  else return 0;
  t->line++;
  return 1;
}

/* A comment up to the end of its line (not the newline). */
static int tpuci__toml_comment(tpuci__toml_t *t) {
  if (t->p >= t->end || *t->p != '#') return 0;
  while (t->p < t->end && *t->p != '\n') {
    unsigned char c = (unsigned char) *t->p;
    if ((c < 0x20 && c != '\t' && !(c == '\r' && tpuci__toml_at(t, "\r\n"))) || c == 0x7f)
      return tpuci__toml_fail(t, "a control character in a comment");
    t->p++;
  }
  return 0;
}

/* Blanks, newlines and comments (between an array's values). */
static int tpuci__toml_space(tpuci__toml_t *t) {
  for (;;) {
    tpuci__toml_blanks(t);
    if (t->p < t->end && *t->p == '#') {
      if (tpuci__toml_comment(t) != 0) return TPUCI_ESPEC;
    } else if (!tpuci__toml_newline(t)) {
      return 0;
    }
  }
}

/* After a key/value or a header: blanks, a comment, then a newline or
 * the end. */
static int tpuci__toml_eol(tpuci__toml_t *t) {
  tpuci__toml_blanks(t);
  if (tpuci__toml_comment(t) != 0) return TPUCI_ESPEC;
  if (t->p >= t->end || tpuci__toml_newline(t)) return 0;
  return tpuci__toml_fail(t, "more after a value on its line");
}

/* ------------------------------------------------------------------ */
/* Strings                                                             */

static int tpuci__hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static void tpuci__utf8_put(tpuci__buf_t *b, unsigned long cp) {
  char s[4];
  size_t n;
  if (cp < 0x80) {
    s[0] = (char) cp;
    n = 1;
  } else if (cp < 0x800) {
    s[0] = (char) (0xc0 | (cp >> 6));
    s[1] = (char) (0x80 | (cp & 0x3f));
    n = 2;
  } else if (cp < 0x10000) {
    s[0] = (char) (0xe0 | (cp >> 12));
    s[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
    s[2] = (char) (0x80 | (cp & 0x3f));
    n = 3;
  } else {
    s[0] = (char) (0xf0 | (cp >> 18));
    s[1] = (char) (0x80 | ((cp >> 12) & 0x3f));
    s[2] = (char) (0x80 | ((cp >> 6) & 0x3f));
    s[3] = (char) (0x80 | (cp & 0x3f));
    n = 4;
  }
  tpuci__buf_add(b, s, n);
}

/* The escape after a backslash of a basic string (t->p past the '\'). */
static int tpuci__toml_escape(tpuci__toml_t *t, tpuci__buf_t *b) {
  static const char from[] = "btnfre\"\\", to[] = "\b\t\n\f\r\x1b\"\\";
  const char *hit;
  int digits = 0, i;
  unsigned long cp = 0;
  if (t->p >= t->end) return tpuci__toml_fail(t, "a string that does not end");
  if ((hit = strchr(from, *t->p)) != NULL && *t->p != '\0') {
    tpuci__buf_add(b, &to[hit - from], 1);
    t->p++;
    return 0;
  }
  digits = *t->p == 'u' ? 4 : *t->p == 'U' ? 8 : *t->p == 'x' ? 2 : 0;
  if (digits == 0) return tpuci__toml_fail(t, "an unknown escape in a string");
  t->p++;
  for (i = 0; i < digits; i++) {
    int h = t->p < t->end ? tpuci__hexval(*t->p) : -1;
    if (h < 0) return tpuci__toml_fail(t, "an escape without its hex digits");
    cp = cp * 16 + (unsigned long) h;
    t->p++;
  }
  if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0)
    return tpuci__toml_fail(t, "an escape of no Unicode scalar value (or of NUL)");
  tpuci__utf8_put(b, cp);
  return 0;
}

/* One character of a string's body into b; newlines only when `multi`. */
static int tpuci__toml_char(tpuci__toml_t *t, tpuci__buf_t *b, int multi) {
  unsigned char c = (unsigned char) *t->p;
  if (c == '\n' || (c == '\r' && tpuci__toml_at(t, "\r\n"))) {
    if (!multi) return tpuci__toml_fail(t, "a string that does not end on its line");
    tpuci__buf_add(b, "\n", 1);
    tpuci__toml_newline(t);
    return 0;
  }
  if ((c < 0x20 && c != '\t') || c == 0x7f)
    return tpuci__toml_fail(t, "a control character in a string");
  tpuci__buf_add(b, t->p, 1);
  t->p++;
  if (b->len > TPUCI__PYCONF_MAX_BYTES) return tpuci__toml_fail(t, "a string too long");
  return 0;
}

/* A string at t->p ('"', '\'', '"""' or '\'\'\''): its value in *out. */
static int tpuci__toml_string(tpuci__toml_t *t, char **out) {
  char q = *t->p;
  int multi = tpuci__toml_at(t, q == '"' ? "\"\"\"" : "'''"), r = 0;
  tpuci__buf_t b;

  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "");
  t->p += multi ? 3 : 1;
  if (multi) tpuci__toml_newline(t); /* a newline right after the quotes is not kept */
  for (;;) {
    if (t->p >= t->end) {
      r = tpuci__toml_fail(t, "a string that does not end");
      break;
    }
    if (*t->p == q) {
      size_t n = 0;
      while (t->p + n < t->end && t->p[n] == q) n++;
      if (!multi) {
        t->p++;
        break;
      }
      if (n >= 3) {
        /* Up to two quotes just before the closing three belong to it. */
        if (n > 5) {
          r = tpuci__toml_fail(t, "too many quotes closing a string");
          break;
        }
        tpuci__buf_add(&b, t->p, n - 3);
        t->p += n;
        break;
      }
      tpuci__buf_add(&b, t->p, n);
      t->p += n;
      continue;
    }
    if (q == '"' && *t->p == '\\') {
      const char *save = ++t->p;
      if (multi) {
        /* A line-ending backslash: the white space up to the next
         * non-blank character is not kept. */
        tpuci__toml_blanks(t);
        if (tpuci__toml_newline(t)) {
          for (;;) {
            if (t->p < t->end && (*t->p == ' ' || *t->p == '\t')) t->p++;
            else if (!tpuci__toml_newline(t)) break;
          }
          continue;
        }
        t->p = save;
      }
      if ((r = tpuci__toml_escape(t, &b)) != 0) break;
      continue;
    }
    if ((r = tpuci__toml_char(t, &b, multi)) != 0) break;
  }
  if (r != 0) {
    tpuci__buf_free(&b);
    return r;
  }
  *out = tpuci__buf_steal(&b);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Keys                                                                */

static int tpuci__bare_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

/* A dotted key (a.b."c d".'e'), its parts appended to path. */
static int tpuci__toml_key(tpuci__toml_t *t, tpuci__strv_t *path) {
  for (;;) {
    tpuci__toml_blanks(t);
    if (t->p < t->end && (*t->p == '"' || *t->p == '\'')) {
      char *part;
      if (tpuci__toml_at(t, "\"\"\"") || tpuci__toml_at(t, "'''"))
        return tpuci__toml_fail(t, "a key cannot be a string of several lines");
      if (tpuci__toml_string(t, &part) != 0) return TPUCI_ESPEC;
      tpuci__strv_take(path, part);
    } else {
      const char *a = t->p;
      while (t->p < t->end && tpuci__bare_key_char(*t->p)) t->p++;
      if (t->p == a) return tpuci__toml_fail(t, "a key was expected");
      tpuci__strv_take(path, tpuci__strndup(a, (size_t) (t->p - a)));
    }
    if (path->len > TPUCI__PYCONF_MAX_DEPTH) return tpuci__toml_fail(t, "a key of too many parts");
    tpuci__toml_blanks(t);
    if (t->p >= t->end || *t->p != '.') return 0;
    t->p++;
  }
}

/* The key of pytest's table that path names ("markers"), or NULL. */
static const char *tpuci__toml_pytest_key(const tpuci__strv_t *path) {
  size_t n = path->len;
  if (n < 3 || strcmp(path->items[0], "tool") != 0 || strcmp(path->items[1], "pytest") != 0)
    return NULL;
  if (n == 4 && strcmp(path->items[2], "ini_options") == 0) return path->items[3];
  if (n == 3 && strcmp(path->items[2], "ini_options") != 0) return path->items[2];
  return NULL;
}

/* Whether path is pytest's table or in it: the file is pytest's then,
 * its section [tool.pytest.ini_options] when that is there, else pytest
 * 9's [tool.pytest]. */
static void tpuci__toml_mark(tpuci__toml_t *t, const tpuci__strv_t *path) {
  int ini;
  if (path->len < 2 || strcmp(path->items[0], "tool") != 0 || strcmp(path->items[1], "pytest") != 0)
    return;
  ini = path->len >= 3 && strcmp(path->items[2], "ini_options") == 0;
  t->conf->found = 1;
  if (t->conf->section == NULL || (ini && strcmp(t->conf->section, "[tool.pytest]") == 0)) {
    free(t->conf->section);
    t->conf->section = tpuci__strdup(ini ? "[tool.pytest.ini_options]" : "[tool.pytest]");
  }
}

/* ------------------------------------------------------------------ */
/* Values                                                              */

static int tpuci__toml_value(tpuci__toml_t *t, const tpuci__strv_t *path, int depth,
                             tpuci__tval_t *v);

/* A key = value pair inside `base` (a table or an inline table): kept
 * when it is one of pytest's. */
static int tpuci__toml_pair(tpuci__toml_t *t, const tpuci__strv_t *base, int depth) {
  tpuci__strv_t path = {0};
  tpuci__tval_t v;
  const char *key;
  int line, r;

  memset(&v, 0, sizeof(v));
  tpuci__strv_copy(&path, base);
  r = tpuci__toml_key(t, &path);
  if (r == 0) {
    tpuci__toml_blanks(t);
    if (t->p >= t->end || *t->p != '=') r = tpuci__toml_fail(t, "'=' was expected after a key");
  }
  if (r == 0) {
    t->p++;
    tpuci__toml_blanks(t);
    line = t->line;
    tpuci__toml_mark(t, &path);
    r = tpuci__toml_value(t, &path, depth, &v);
    key = r == 0 ? tpuci__toml_pytest_key(&path) : NULL;
    if (key != NULL && (strcmp(key, "markers") == 0 || strcmp(key, "testpaths") == 0 ||
                        strcmp(key, "python_files") == 0)) {
      if (v.kind == TPUCI__TV_STRING)
        r = tpuci__pyconf_set_text(t->conf, key, v.str, t->name, line, t->err);
      else if (v.kind == TPUCI__TV_STRINGS)
        r = tpuci__pyconf_set_list(t->conf, key, &v.items, t->name, line, t->err);
      else
        r = tpuci__err_set(t->err, TPUCI_ESPEC,
                           "%s:%d: %s must be a string or an array of "
                           "strings",
                           t->name, line, key);
    }
  }
  tpuci__tval_free(&v);
  tpuci__strv_free(&path);
  return r;
}

/* [ v, v, ... ] over any lines; an array of strings keeps them. */
static int tpuci__toml_array(tpuci__toml_t *t, const tpuci__strv_t *path, int depth,
                             tpuci__tval_t *v) {
  int strings = 1, r;
  t->p++;
  for (;;) {
    tpuci__tval_t item;
    if ((r = tpuci__toml_space(t)) != 0) return r;
    if (t->p < t->end && *t->p == ']') break;
    memset(&item, 0, sizeof(item));
    if ((r = tpuci__toml_value(t, path, depth + 1, &item)) != 0) {
      tpuci__tval_free(&item);
      return r;
    }
    if (item.kind == TPUCI__TV_STRING && strings && v->items.len < TPUCI__PYCONF_MAX_ITEMS + 1) {
      tpuci__strv_take(&v->items, item.str);
      item.str = NULL;
    } else if (item.kind != TPUCI__TV_STRING) {
      strings = 0;
    }
    tpuci__tval_free(&item);
    if ((r = tpuci__toml_space(t)) != 0) return r;
    if (t->p < t->end && *t->p == ',') {
      t->p++;
      continue;
    }
    if (t->p < t->end && *t->p == ']') break;
    return tpuci__toml_fail(t, "',' or ']' was expected in an array");
  }
  t->p++;
  v->kind = strings ? TPUCI__TV_STRINGS : TPUCI__TV_OTHER;
  return 0;
}

/* { k = v, ... }: its pairs are keys under path. */
static int tpuci__toml_inline(tpuci__toml_t *t, const tpuci__strv_t *path, int depth) {
  int r;
  t->p++;
  for (;;) {
    if ((r = tpuci__toml_space(t)) != 0) return r;
    if (t->p < t->end && *t->p == '}') break;
    if ((r = tpuci__toml_pair(t, path, depth + 1)) != 0) return r;
    if ((r = tpuci__toml_space(t)) != 0) return r;
    if (t->p < t->end && *t->p == ',') {
      t->p++;
      continue;
    }
    if (t->p < t->end && *t->p == '}') break;
    return tpuci__toml_fail(t, "',' or '}' was expected in an inline table");
  }
  t->p++;
  return 0;
}

/* Any other value (a number, a boolean, a date, a time) as one token;
 * "1979-05-27 07:32:00" is one too. */
static int tpuci__toml_token(tpuci__toml_t *t) {
  const char *a = t->p;
  while (t->p < t->end && (tpuci__bare_key_char(*t->p) || strchr("+.:", *t->p))) t->p++;
  if (t->p == a) return tpuci__toml_fail(t, "a value was expected");
  if (t->p - a == 10 && a[4] == '-' && a[7] == '-' && t->end - t->p >= 2 && *t->p == ' ' &&
      t->p[1] >= '0' && t->p[1] <= '9') {
    t->p++;
    while (t->p < t->end && (tpuci__bare_key_char(*t->p) || strchr("+.:", *t->p))) t->p++;
  }
  return 0;
}

static int tpuci__toml_value(tpuci__toml_t *t, const tpuci__strv_t *path, int depth,
                             tpuci__tval_t *v) {
  if (depth > TPUCI__PYCONF_MAX_DEPTH) return tpuci__toml_fail(t, "values nested too deep");
  if (t->p >= t->end) return tpuci__toml_fail(t, "a value was expected");
  if (*t->p == '"' || *t->p == '\'') {
    v->kind = TPUCI__TV_STRING;
    return tpuci__toml_string(t, &v->str);
  }
  v->kind = TPUCI__TV_OTHER;
  if (*t->p == '[') return tpuci__toml_array(t, path, depth, v);
  if (*t->p == '{') return tpuci__toml_inline(t, path, depth);
  return tpuci__toml_token(t);
}

/* ------------------------------------------------------------------ */
/* The document                                                        */

/* [a.b] or [[a.b]]: the table the next pairs are in. */
static int tpuci__toml_header(tpuci__toml_t *t) {
  int array = tpuci__toml_at(t, "[[");
  t->p += array ? 2 : 1;
  tpuci__strv_free(&t->table);
  if (tpuci__toml_key(t, &t->table) != 0) return TPUCI_ESPEC;
  if (!tpuci__toml_at(t, array ? "]]" : "]"))
    return tpuci__toml_fail(t, array ? "']]' was expected" : "']' was expected");
  t->p += array ? 2 : 1;
  tpuci__toml_mark(t, &t->table);
  return tpuci__toml_eol(t);
}

int tpuci__pyconf_toml(const char *text, size_t len, const char *name, tpuci__pyconf_t *conf,
                       tpuci__err_t *err) {
  tpuci__toml_t t;
  size_t at;
  const char *bad = tpuci__text_problem(text, len, &at);
  int r = 0;

  memset(&t, 0, sizeof(t));
  t.p = text;
  t.end = text + len;
  t.name = name;
  t.line = 1;
  t.conf = conf;
  t.err = err;
  if (bad != NULL) {
    const char *q;
    for (q = text; q < text + at; q++)
      if (*q == '\n') t.line++;
    return tpuci__toml_fail(&t, bad);
  }
  if (tpuci__toml_at(&t, "\xef\xbb\xbf")) t.p += 3; /* a byte order mark */
  while (r == 0 && t.p < t.end) {
    tpuci__toml_blanks(&t);
    if (tpuci__toml_newline(&t)) continue;
    if (t.p >= t.end) break;
    if (*t.p == '#') r = tpuci__toml_comment(&t);
    else if (*t.p == '[') r = tpuci__toml_header(&t);
    else if ((r = tpuci__toml_pair(&t, &t.table, 0)) == 0) r = tpuci__toml_eol(&t);
  }
  tpuci__strv_free(&t.table);
  return r;
}
