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
 * as they are to pytest.
 *
 * libinih (Debian's libinih1, built with its defaults: see <ini.h>)
 * reads the text: it splits keys from values, strips them and hands
 * continuation lines to the key they continue. Where it reads otherwise
 * than iniconfig, a pre-processing step (tpuci__ini_next(), the reader
 * inih calls) keeps pytest's meaning:
 *   - inih ends a value at a ';' after a blank (an inline comment);
 *     iniconfig does not: each ';' goes to inih as TPUCI__INI_SEMI;
 *   - inih calls its handler the same way for a continuation line and
 *     for a key given again: a key's own line is marked (TPUCI__INI_KEY)
 *     so that the second `markers =` is "given twice", as to iniconfig;
 *   - inih calls the handler for keys only, merges a section given twice
 *     and reads an indented line right after a header as a key; it
 *     names a section by what comes before the first ']': the reader
 *     checks headers and indented lines by iniconfig's rules itself and
 *     hands inih "[p]" for pytest's section, "[o]" for any other;
 *   - inih reads a line in a buffer of 200 bytes and takes the rest of a
 *     longer line for a line of its own: the reader hands such a line
 *     on in pieces the handler joins back (tpuci__ini_read());
 *   - inih skips a UTF-8 BOM at the start; iniconfig reads it as a
 *     character (a line that is no key): inih's first line is an empty
 *     one of the reader's;
 *   - a key longer than TPUCI__INI_LONG_KEY (none of pytest's) goes as
 *     "\x06", so that its separator is in inih's first piece; so does an
 *     empty key ("= x"), whose continuation lines inih would read as keys.
 * The markers are control characters, which the reader refuses in the
 * text (pytest does not; no configuration needs them). A header that
 * does not end with ']' is an error here; iniconfig reads it as a
 * continuation line (tests/pytest/pyconf_check.py compares both). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>
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

/* The markers the pre-processing puts in what inih reads (the text has
 * no control characters: tpuci__ini_next() refuses them). */
#define TPUCI__INI_SEMI '\x02' /* a ';' of the text */
#define TPUCI__INI_KEY '\x03'  /* after a key's separator: a key's own line */
#define TPUCI__INI_CUT '\x04'  /* a piece of a long line ends here, more comes */
#define TPUCI__INI_MORE '\x05' /* the next piece of that line */
/* A key longer than this is none of pytest's: inih gets it as "\x06",
 * and so an empty one (inih continues no key of an empty name). */
#define TPUCI__INI_LONG_KEY 64

typedef struct {
  const char *name;    /* the file, for messages */
  const char *section; /* pytest's section */
  tpuci__pyconf_t *conf;
  tpuci__err_t *err;
  int failed; /* err is set: the reader ends the text */
  /* The reader's side: the text and the physical line inih is on. */
  const char *p, *end;
  int line;
  int any_section;  /* a section header was seen */
  int have_key;     /* some key of the current section can be continued */
  tpuci__buf_t out; /* that line as inih gets it, without its '\n' */
  size_t at;        /* how much of it inih has had */
  int pending;      /* out has not been handed on whole */
  int *lines;       /* the physical line of each line inih got */
  size_t nlines, cap;
  /* The handler's side. */
  char *key; /* the current key of pytest's section, or NULL */
  int key_line;
  tpuci__buf_t value; /* its value so far */
  tpuci__buf_t piece; /* the physical line being put together */
  int piece_key;      /* ... is a key's line, not a continuation */
} tpuci__ini_t;

static int tpuci__ini_fail(tpuci__ini_t *in, int line, const char *what) {
  in->failed = 1;
  return tpuci__pyconf_fail(in->err, in->name, line, what);
}

/* s[0..n) into out, each ';' as TPUCI__INI_SEMI. */
static void tpuci__ini_escape(tpuci__buf_t *out, const char *s, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    char c = s[i] == ';' ? TPUCI__INI_SEMI : s[i];
    tpuci__buf_add(out, &c, 1);
  }
}

static void tpuci__ini_header(tpuci__ini_t *in, const char *s, size_t n) {
  size_t end = 0;
  int ours;
  /* A '#' or ';' ends the header (iniconfig cuts the line there). */
  while (end < n && s[end] != '#' && s[end] != ';') end++;
  n = end;
  while (n > 0 && strchr(" \t\f\v", s[n - 1])) n--;
  if (n < 2 || s[n - 1] != ']') {
    tpuci__ini_fail(in, in->line, "a section header that does not end with ']'");
    return;
  }
  if (n == 2) {
    tpuci__ini_fail(in, in->line, "a section without a name");
    return;
  }
  in->any_section = 1;
  in->have_key = 0;
  ours = strlen(in->section) == n - 2 && memcmp(s + 1, in->section, n - 2) == 0;
  if (ours) {
    if (in->conf->found) {
      tpuci__ini_fail(in, in->line, "the section is there twice");
      return;
    }
    in->conf->found = 1;
  }
  tpuci__buf_adds(&in->out, ours ? "[p]" : "[o]");
}

/* The next physical line, classified by iniconfig's rules, into in->out. */
static void tpuci__ini_next(tpuci__ini_t *in) {
  const char *s = in->p, *nl = memchr(s, '\n', (size_t) (in->end - s)), *sep;
  size_t n = nl ? (size_t) (nl - s) : (size_t) (in->end - s), a = 0, i;

  in->p += n + (nl != NULL);
  in->line++;
  in->out.len = 0;
  in->at = 0;
  in->pending = 1;
  for (i = 0; i < n; i++) {
    unsigned char c = (unsigned char) s[i];
    if (c < 0x20 && c != '\t' && c != '\v' && c != '\f' && c != '\r') {
      tpuci__ini_fail(in, in->line, "a control character");
      return;
    }
  }
  while (n > 0 && strchr(" \t\r\f\v", s[n - 1])) n--;
  while (a < n && strchr(" \t\f\v", s[a])) a++;
  if (a == n || s[a] == '#' || s[a] == ';') return; /* blank or a comment: an empty line */
  if (a == 0 && s[0] == '[') {
    tpuci__ini_header(in, s, n);
    return;
  }
  if (a > 0) {
    /* Continues the last key's value. inih would take it for a key of
     * its own after a section header: iniconfig refuses it. */
    if (!in->have_key) {
      tpuci__ini_fail(in, in->line, "an indented line without a key before it");
      return;
    }
    tpuci__buf_add(&in->out, " ", 1);
    tpuci__ini_escape(&in->out, s + a, n - a);
    return;
  }
  /* "key = value" or "key: value": at the first '=' or ':', for iniconfig
   * (the first '=', unless a ':' is before it) as for inih. */
  for (sep = s; sep < s + n && *sep != '=' && *sep != ':'; sep++) {}
  if (sep == s + n) {
    tpuci__ini_fail(in, in->line,
                    "neither a section ([name]), a key (key = value) nor an indented "
                    "continuation");
    return;
  }
  if (!in->any_section) {
    tpuci__ini_fail(in, in->line, "a key before any section");
    return;
  }
  in->have_key = 1;
  if (sep == s || sep - s > TPUCI__INI_LONG_KEY) tpuci__buf_add(&in->out, "\x06", 1);
  else tpuci__ini_escape(&in->out, s, (size_t) (sep - s));
  tpuci__buf_add(&in->out, sep, 1);
  tpuci__buf_add(&in->out, "\x03", 1);
  tpuci__ini_escape(&in->out, sep + 1, n - (size_t) (sep + 1 - s));
}

/* inih's reader (fgets'): hands on the text a line, or a piece of a line,
 * at a time. A line longer than inih's buffer (`num`, 200 bytes in
 * Debian's build) would be cut there and its rest read as a line of its
 * own: it goes as pieces instead, each but the last ending with
 * TPUCI__INI_CUT, each but the first a continuation line starting with
 * TPUCI__INI_MORE, which the handler joins back (the markers keep inih
 * from stripping the blanks at a cut). */
static char *tpuci__ini_read(char *str, int num, void *stream) {
  tpuci__ini_t *in = stream;
  size_t room, n, k = 0;
  if (in->failed) return NULL;
  if (num < 16) {
    /* Not Debian's build (200 bytes): no room for a piece. */
    tpuci__ini_fail(in, in->line > 0 ? in->line : 1, "libinih's line buffer is too small");
    return NULL;
  }
  room = (size_t) num - 5; /* " \x05", the cut, '\n' and the NUL */
  if (in->nlines == 0) {
    /* A first line of its own, so that inih's skipping of a UTF-8 BOM
     * (which iniconfig does not skip) finds none. */
    in->line = 0;
  } else if (!in->pending) {
    if (in->p >= in->end) return NULL;
    tpuci__ini_next(in);
    if (in->failed) return NULL;
  }
  if (in->at > 0) {
    str[k++] = ' ';
    str[k++] = TPUCI__INI_MORE;
  }
  n = in->out.len - in->at < room ? in->out.len - in->at : room;
  if (n > 0) memcpy(str + k, in->out.data + in->at, n);
  k += n;
  in->at += n;
  if (in->at < in->out.len) str[k++] = TPUCI__INI_CUT;
  else in->pending = 0;
  str[k++] = '\n';
  str[k] = '\0';
  if (in->nlines == in->cap) {
    in->cap = in->cap ? 2 * in->cap : 64;
    in->lines = tpuci__realloc(in->lines, in->cap * sizeof(*in->lines));
  }
  in->lines[in->nlines++] = in->line > 0 ? in->line : 1;
  return str;
}

/* The value of pytest's current key is complete. */
static int tpuci__ini_flush(tpuci__ini_t *in) {
  int r = 0;
  if (in->key != NULL)
    r = tpuci__pyconf_set_text(in->conf, in->key, in->value.data ? in->value.data : "", in->name,
                               in->key_line, in->err);
  if (r != 0) in->failed = 1;
  free(in->key);
  in->key = NULL;
  in->value.len = 0;
  if (in->value.data) in->value.data[0] = '\0';
  return r;
}

/* A physical line is whole in in->piece: stripped, its ';' given back, it
 * is the value of pytest's key or the next line of it. */
static int tpuci__ini_piece_done(tpuci__ini_t *in) {
  char *s = in->piece.data ? in->piece.data : "";
  size_t a = 0, n = in->piece.len, i;
  if (in->key == NULL) return 1; /* another section's or another key's */
  while (a < n && strchr(" \t\r\f\v", s[a])) a++;
  while (n > a && strchr(" \t\r\f\v", s[n - 1])) n--;
  for (i = a; i < n; i++)
    if (s[i] == TPUCI__INI_SEMI) s[i] = ';';
  if (!in->piece_key && in->value.len > 0) tpuci__buf_add(&in->value, "\n", 1);
  tpuci__buf_add(&in->value, s + a, n - a);
  if (in->value.len > TPUCI__PYCONF_MAX_BYTES) {
    tpuci__ini_fail(in, in->line, "a value too long");
    return 0;
  }
  return 1;
}

/* inih's handler: a key's line (its value starts with TPUCI__INI_KEY), a
 * continuation line, or the next piece of a long line. inih calls it with
 * the key's name for all three; iniconfig's "given twice" needs the first
 * told from the others, hence the marker. */
static int tpuci__ini_pair(void *user, const char *section, const char *name, const char *value) {
  tpuci__ini_t *in = user;
  size_t n;
  if (in->failed) return 0;
  if (value[0] == TPUCI__INI_KEY) {
    if (tpuci__ini_flush(in) != 0) return 0;
    in->piece.len = 0;
    in->piece_key = 1;
    if (strcmp(section, "p") == 0) {
      char *k;
      in->key = tpuci__strdup(name);
      for (k = in->key; *k; k++)
        if (*k == TPUCI__INI_SEMI) *k = ';';
      in->key_line = in->line;
    }
    value++;
  } else if (value[0] == TPUCI__INI_MORE) {
    value++;
  } else {
    in->piece.len = 0;
    in->piece_key = 0;
  }
  n = strlen(value);
  if (n > 0 && value[n - 1] == TPUCI__INI_CUT) {
    tpuci__buf_add(&in->piece, value, n - 1);
    return 1;
  }
  tpuci__buf_add(&in->piece, value, n);
  return tpuci__ini_piece_done(in);
}

int tpuci__pyconf_ini(const char *text, size_t len, const char *name, const char *section,
                      tpuci__pyconf_t *conf, tpuci__err_t *err) {
  tpuci__ini_t in;
  size_t at;
  int line = 1, r;
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
  in.p = text;
  in.end = text + len;
  tpuci__buf_init(&in.out);
  tpuci__buf_init(&in.value);
  tpuci__buf_init(&in.piece);
  r = ini_parse_stream(tpuci__ini_read, &in, tpuci__ini_pair, &in);
  if (!in.failed && r != 0) /* The pre-processing hands inih only lines it reads: not reached. */
    tpuci__ini_fail(&in, r > 0 && (size_t) r <= in.nlines ? in.lines[r - 1] : in.line,
                    "a line libinih does not read");
  if (!in.failed) tpuci__ini_flush(&in);
  free(in.key);
  free(in.lines);
  tpuci__buf_free(&in.out);
  tpuci__buf_free(&in.value);
  tpuci__buf_free(&in.piece);
  return in.failed ? TPUCI_ESPEC : 0;
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
