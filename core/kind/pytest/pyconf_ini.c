/* pytest's configuration (pyconf.h): the INI reader (pytest.ini, tox.ini,
 * setup.cfg), the values' splitting shared with the TOML reader, and
 * finding the file pytest would use in a folder.
 *
 * The INI rules are iniconfig's, which pytest reads these files with: a
 * line whose first non-blank character is '#' or ';' is a comment; a
 * line starting with '[' is a section header (a '#' or ';' ends it, and
 * it must end with ']'; the name is kept as written); a line starting
 * with any other non-blank character is `key = value` or `key: value`
 * (split at the first '=', unless the part before it holds a ':'); an
 * indented line continues the last value (joined with a newline), blank
 * and comment lines between them notwithstanding. A key before any
 * section, a continuation before any key and any other line are errors,
 * as they are to pytest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "kind/pytest/pyconf.h"

/* The keys kept, in `given`'s bit order. */
static const char *const tpuci__pyconf_keys[] = {"markers", "testpaths", "python_files"};

void tpuci__pyconf_init(tpuci__pyconf_t *conf) { memset(conf, 0, sizeof(*conf)); }

void tpuci__pyconf_free(tpuci__pyconf_t *conf) {
  free(conf->file);
  free(conf->section);
  tpuci__strv_free(&conf->testpaths);
  tpuci__strv_free(&conf->markers);
  tpuci__strv_free(&conf->python_files);
  memset(conf, 0, sizeof(*conf));
}

static int tpuci__pyconf_fail(tpuci__err_t *err, const char *name, int line, const char *what) {
  return tpuci__err_set(err, TPUCI_ESPEC, "%s:%d: %s", name, line, what);
}

/* ------------------------------------------------------------------ */
/* Values                                                              */

int tpuci__pyconf_split_args(const char *text, tpuci__strv_t *out) {
  const char *p = text;
  tpuci__buf_t w;
  int in_word = 0;

  tpuci__buf_init(&w);
  for (;;) {
    char c = *p;
    if (c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (in_word) tpuci__strv_take(out, tpuci__buf_steal(&w));
      in_word = 0;
      if (c == '\0') break;
      p++;
      continue;
    }
    in_word = 1;
    if (c == '\'') {
      const char *q = strchr(p + 1, '\'');
      if (q == NULL) goto unclosed;
      tpuci__buf_add(&w, p + 1, (size_t) (q - p - 1));
      p = q + 1;
    } else if (c == '"') {
      /* Inside double quotes a backslash escapes only '"' and '\'. */
      for (p++; *p != '"'; p++) {
        if (*p == '\0') goto unclosed;
        if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;
        tpuci__buf_add(&w, p, 1);
      }
      p++;
    } else if (c == '\\') {
      if (p[1] == '\0') goto unclosed;
      /* A backslash and a newline are nothing; before anything else, that. */
      if (p[1] != '\n') tpuci__buf_add(&w, p + 1, 1);
      p += 2;
    } else {
      tpuci__buf_add(&w, p, 1);
      p++;
    }
  }
  tpuci__buf_free(&w);
  return 0;
unclosed:
  tpuci__buf_free(&w);
  return -1;
}

char *tpuci__pyconf_marker_name(const char *line) {
  size_t n = strcspn(line, ":(");
  size_t a = 0, i;
  char *name;
  while (a < n && (line[a] == ' ' || line[a] == '\t')) a++;
  while (n > a && (line[n - 1] == ' ' || line[n - 1] == '\t')) n--;
  if (n == a) return NULL;
  for (i = a; i < n; i++) {
    char c = line[i];
    int letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(i > a && c >= '0' && c <= '9')) return NULL;
  }
  name = tpuci__strndup(line + a, n - a);
  if (strcmp(name, "and") == 0 || strcmp(name, "or") == 0 || strcmp(name, "not") == 0) {
    free(name);
    return NULL;
  }
  return name;
}

static int tpuci__pyconf_key(const char *key) {
  int k;
  for (k = 0; k < 3; k++)
    if (strcmp(key, tpuci__pyconf_keys[k]) == 0) return k;
  return -1;
}

static tpuci__strv_t *tpuci__pyconf_list(tpuci__pyconf_t *conf, int k) {
  return k == 0 ? &conf->markers : k == 1 ? &conf->testpaths : &conf->python_files;
}

int tpuci__pyconf_set_list(tpuci__pyconf_t *conf, const char *key, const tpuci__strv_t *items,
                           const char *name, int line, tpuci__err_t *err) {
  int k = tpuci__pyconf_key(key);
  tpuci__strv_t *dst;
  char *msg;
  size_t i;
  if (k < 0) return 0;
  if (conf->given & (1u << k)) {
    msg = tpuci__printf("%s is given twice", key);
    goto fail;
  }
  conf->given |= 1u << k;
  if (items->len > TPUCI__PYCONF_MAX_ITEMS) {
    msg = tpuci__printf("%s has more than %d entries", key, TPUCI__PYCONF_MAX_ITEMS);
    goto fail;
  }
  dst = tpuci__pyconf_list(conf, k);
  for (i = 0; i < items->len; i++) {
    if (strlen(items->items[i]) > TPUCI__PYCONF_MAX_VALUE) {
      msg = tpuci__printf("an entry of %s is longer than %d bytes", key, TPUCI__PYCONF_MAX_VALUE);
      goto fail;
    }
    tpuci__strv_push(dst, items->items[i]);
  }
  return 0;
fail:
  tpuci__pyconf_fail(err, name, line, msg);
  free(msg);
  return TPUCI_ESPEC;
}

/* markers: a line each, stripped, blank lines left out. */
static void tpuci__pyconf_lines(const char *text, tpuci__strv_t *out) {
  const char *p = text;
  while (*p) {
    size_t n = strcspn(p, "\n"), a = 0, b = n;
    while (a < b && strchr(" \t\r\f\v", p[a])) a++;
    while (b > a && strchr(" \t\r\f\v", p[b - 1])) b--;
    if (b > a) tpuci__strv_take(out, tpuci__strndup(p + a, b - a));
    p += n;
    if (*p == '\n') p++;
  }
}

int tpuci__pyconf_set_text(tpuci__pyconf_t *conf, const char *key, const char *text,
                           const char *name, int line, tpuci__err_t *err) {
  tpuci__strv_t items = {0};
  int k = tpuci__pyconf_key(key), r;
  if (k < 0) return 0;
  if (k == 0) {
    tpuci__pyconf_lines(text, &items);
  } else if (tpuci__pyconf_split_args(text, &items) != 0) {
    char *msg = tpuci__printf("%s: a quote does not close", key);
    tpuci__pyconf_fail(err, name, line, msg);
    free(msg);
    tpuci__strv_free(&items);
    return TPUCI_ESPEC;
  }
  r = tpuci__pyconf_set_list(conf, key, &items, name, line, err);
  tpuci__strv_free(&items);
  return r;
}

/* ------------------------------------------------------------------ */
/* INI                                                                 */

typedef struct {
  const char *name;    /* the file, for messages */
  const char *section; /* pytest's section */
  tpuci__pyconf_t *conf;
  tpuci__err_t *err;
  int in_section;  /* the current section is pytest's */
  int any_section; /* a section header was seen */
  char *key;       /* the current key of pytest's section, or NULL */
  int key_line;
  tpuci__buf_t value; /* its value so far */
  int have_key;       /* some key (of any section) can be continued */
} tpuci__ini_t;

/* The value of pytest's current key is complete. */
static int tpuci__ini_flush(tpuci__ini_t *in) {
  int r = 0;
  if (in->key != NULL)
    r = tpuci__pyconf_set_text(in->conf, in->key, in->value.data ? in->value.data : "", in->name,
                               in->key_line, in->err);
  free(in->key);
  in->key = NULL;
  in->value.len = 0;
  if (in->value.data) in->value.data[0] = '\0';
  return r;
}

static int tpuci__ini_section(tpuci__ini_t *in, const char *s, size_t n, int line) {
  size_t end = 0;
  int r = tpuci__ini_flush(in);
  if (r != 0) return r;
  /* A '#' or ';' ends the header (the line is not NUL-terminated). */
  while (end < n && s[end] != '#' && s[end] != ';') end++;
  n = end;
  while (n > 0 && strchr(" \t\f\v", s[n - 1])) n--;
  if (n < 2 || s[n - 1] != ']')
    return tpuci__pyconf_fail(in->err, in->name, line,
                              "a section header that does not end with ']'");
  if (n == 2) return tpuci__pyconf_fail(in->err, in->name, line, "a section without a name");
  in->any_section = 1;
  in->have_key = 0;
  in->in_section = strlen(in->section) == n - 2 && memcmp(s + 1, in->section, n - 2) == 0;
  if (in->in_section) {
    if (in->conf->found)
      return tpuci__pyconf_fail(in->err, in->name, line, "the section is there twice");
    in->conf->found = 1;
  }
  return 0;
}

/* "key = value" or "key: value" (the first '=', unless a ':' is before it). */
static int tpuci__ini_pair(tpuci__ini_t *in, const char *s, size_t n, int line) {
  const char *eq = memchr(s, '=', n), *colon = memchr(s, ':', n), *sep;
  size_t a = 0, b;
  int r = tpuci__ini_flush(in);
  if (r != 0) return r;
  sep = eq != NULL && (colon == NULL || eq < colon) ? eq : colon;
  if (sep == NULL)
    return tpuci__pyconf_fail(in->err, in->name, line,
                              "neither a section ([name]), a key (key = value) nor an indented "
                              "continuation");
  if (!in->any_section)
    return tpuci__pyconf_fail(in->err, in->name, line, "a key before any section");
  in->have_key = 1;
  if (!in->in_section) return 0;
  b = (size_t) (sep - s);
  while (b > 0 && strchr(" \t\f\v", s[b - 1])) b--;
  in->key = tpuci__strndup(s, b);
  in->key_line = line;
  a = (size_t) (sep - s) + 1;
  while (a < n && strchr(" \t\f\v", s[a])) a++;
  tpuci__buf_add(&in->value, s + a, n - a);
  return 0;
}

static int tpuci__ini_line(tpuci__ini_t *in, const char *s, size_t n, int line) {
  size_t a = 0;
  while (n > 0 && strchr(" \t\r\f\v", s[n - 1])) n--;
  while (a < n && strchr(" \t\f\v", s[a])) a++;
  if (a == n || s[a] == '#' || s[a] == ';') return 0; /* blank or a comment */
  if (a == 0 && s[0] == '[') return tpuci__ini_section(in, s, n, line);
  if (a == 0) return tpuci__ini_pair(in, s, n, line);
  if (!in->have_key)
    return tpuci__pyconf_fail(in->err, in->name, line, "an indented line without a key before it");
  if (in->key == NULL) return 0; /* another section's value */
  if (in->value.len > 0) tpuci__buf_add(&in->value, "\n", 1);
  tpuci__buf_add(&in->value, s + a, n - a);
  if (in->value.len > TPUCI__PYCONF_MAX_BYTES)
    return tpuci__pyconf_fail(in->err, in->name, line, "a value too long");
  return 0;
}

int tpuci__pyconf_ini(const char *text, size_t len, const char *name, const char *section,
                      tpuci__pyconf_t *conf, tpuci__err_t *err) {
  tpuci__ini_t in;
  const char *p = text, *end = text + len;
  size_t at;
  int line = 1, r = 0;
  const char *bad = tpuci__text_problem(text, len, &at);

  if (bad != NULL) {
    const char *q;
    for (q = text; q < text + at; q++)
      if (*q == '\n') line++;
    return tpuci__pyconf_fail(err, name, line, bad);
  }
  memset(&in, 0, sizeof(in));
  in.name = name;
  in.section = section;
  in.conf = conf;
  in.err = err;
  tpuci__buf_init(&in.value);
  while (r == 0 && p < end) {
    const char *nl = memchr(p, '\n', (size_t) (end - p));
    size_t n = nl ? (size_t) (nl - p) : (size_t) (end - p);
    r = tpuci__ini_line(&in, p, n, line);
    p += n + (nl != NULL);
    line++;
  }
  if (r == 0) r = tpuci__ini_flush(&in);
  free(in.key);
  tpuci__buf_free(&in.value);
  return r;
}

/* ------------------------------------------------------------------ */
/* Finding pytest's file                                               */

/* Reads dir/file into *text: 1, 0 when it is not there, or an error. */
static int tpuci__pyconf_read(const char *dir, const char *file, char **text, size_t *len,
                              tpuci__err_t *err) {
  char *path = tpuci__printf("%s/%s", dir, file);
  int r = tpuci__read_file_max(path, TPUCI__PYCONF_MAX_BYTES, text, len);
  if (r == UV_ENOENT) {
    free(path);
    return 0;
  }
  if (r == UV_EFBIG)
    tpuci__err_set(err, TPUCI_ESPEC, "%s: over %u bytes: not a configuration tpuci reads", file,
                   TPUCI__PYCONF_MAX_BYTES);
  else if (r != 0) {
    char *why = tpuci__read_why(path, r);
    tpuci__err_set(err, TPUCI_ESPEC, "%s: %s", file, why);
    free(why);
  }
  free(path);
  return r == 0 ? 1 : TPUCI_ESPEC;
}

int tpuci__pyconf_find(const char *dir, tpuci__pyconf_t *conf, tpuci__err_t *err) {
  /* pytest's order; each file counts only when it has pytest's section,
   * but for pytest.ini, which is pytest's whatever it holds. */
  static const struct {
    const char *file, *ini_section, *shown;
  } files[] = {{"pytest.ini", "pytest", "[pytest]"},
               {".pytest.ini", "pytest", "[pytest]"},
               {"pyproject.toml", NULL, "[tool.pytest.ini_options]"},
               {"tox.ini", "pytest", "[pytest]"},
               {"setup.cfg", "tool:pytest", "[tool:pytest]"}};
  size_t k;
  for (k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
    char *text = NULL;
    size_t len = 0;
    int r = tpuci__pyconf_read(dir, files[k].file, &text, &len, err);
    if (r <= 0) {
      if (r < 0) return r;
      continue;
    }
    tpuci__pyconf_free(conf);
    r = files[k].ini_section
            ? tpuci__pyconf_ini(text, len, files[k].file, files[k].ini_section, conf, err)
            : tpuci__pyconf_toml(text, len, files[k].file, conf, err);
    free(text);
    if (r != 0) return r;
    if (conf->found || k < 2) {
      conf->file = tpuci__strdup(files[k].file);
      if (conf->section == NULL) conf->section = tpuci__strdup(files[k].shown);
      return 0;
    }
  }
  tpuci__pyconf_free(conf);
  return 0;
}
