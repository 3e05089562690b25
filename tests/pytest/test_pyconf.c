/* pytest's configuration as `tpuci init` reads it (core/kind/pytest/pyconf.h)
 * and the starting spec it writes (core/kind/pytest/init.h): the INI reader
 * with iniconfig's rules, the TOML reader on what pyproject.toml files
 * hold (and on what they must not be mistaken for), hostile input (each
 * an error with its line, none a crash or a read past the end: run under
 * ASan), pytest's splitting of values, and specs that load without a
 * warning. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kind/pytest/init.h"
#include "kind/pytest/pyconf.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

/* Reads text as `file` would be (".toml": TOML, else INI with
 * `section`): 0 or the error, whose message goes to *msg (or is
 * dropped). The text is copied into a buffer of exactly its length, so
 * ASan sees any read past it. */
static int read_as(const char *file, const char *section, const char *text, size_t len,
                   tpuci__pyconf_t *conf, char **msg) {
  tpuci__err_t err = {0, NULL};
  char *copy = malloc(len ? len : 1);
  int r;
  memcpy(copy, text, len);
  tpuci__pyconf_init(conf);
  r = strstr(file, ".toml") ? tpuci__pyconf_toml(copy, len, file, conf, &err)
                            : tpuci__pyconf_ini(copy, len, file, section, conf, &err);
  free(copy);
  if (r != 0) assert_non_null(err.msg);
  if (msg) *msg = err.msg ? tpuci__strdup(err.msg) : NULL;
  tpuci__err_clear(&err);
  return r;
}

static void toml_ok(const char *text, tpuci__pyconf_t *conf) {
  char *msg = NULL;
  if (read_as("pyproject.toml", NULL, text, strlen(text), conf, &msg) != 0)
    fail_msg("refused: %s\n%s", msg, text);
  free(msg);
}

static void ini_ok(const char *text, const char *section, tpuci__pyconf_t *conf) {
  char *msg = NULL;
  if (read_as("pytest.ini", section, text, strlen(text), conf, &msg) != 0)
    fail_msg("refused: %s\n%s", msg, text);
  free(msg);
}

/* Refused, with exactly `want` as the message (NULL: any one line). */
static void refused(const char *file, const char *text, size_t len, const char *want) {
  tpuci__pyconf_t conf;
  char *msg = NULL;
  assert_int_equal(read_as(file, "pytest", text, len, &conf, &msg), TPUCI_ESPEC);
  if (want && strcmp(msg, want) != 0) fail_msg("message '%s', want '%s'", msg, want);
  assert_null(strchr(msg, '\n'));
  free(msg);
  tpuci__pyconf_free(&conf);
}

#define REFUSED(file, literal, want) refused(file, literal, sizeof(literal) - 1, want)
#define REFUSED_TEXT(text, want) refused("tox.ini", text, strlen(text), want)

static void assert_strv(const tpuci__strv_t *v, ...) {
  va_list ap;
  const char *s;
  size_t k = 0;
  va_start(ap, v);
  while ((s = va_arg(ap, const char *)) != NULL) {
    if (k >= v->len) fail_msg("only %zu items, want '%s' next", v->len, s);
    assert_string_equal(v->items[k], s);
    k++;
  }
  va_end(ap);
  if (k != v->len) fail_msg("%zu items, want %zu (extra '%s')", v->len, k, v->items[k]);
}

/* ------------------------------------------------------------------ */
/* INI                                                                 */

static void test_ini(void **state) {
  tpuci__pyconf_t conf;
  (void) state;
  /* pytest.ini's markers over continuation lines, a comment and a blank
   * line among them, testpaths split as shell words, `key: value`. */
  ini_ok("# a comment\n"
         "[pytest]\n"
         "minversion = 7.0\n"
         "markers =\n"
         "    tpu: needs a TPU\n"
         "    ; not a marker\n"
         "\n"
         "    slow(reason): takes a while\n"
         "testpaths = tests \"integration tests\" 'a b'\n"
         "python_files: test_*.py check_*.py\n"
         "addopts = -ra\n"
         "[other]\n"
         "markers = nope\n",
         "pytest", &conf);
  assert_true(conf.found);
  assert_strv(&conf.markers, "tpu: needs a TPU", "slow(reason): takes a while", NULL);
  assert_strv(&conf.testpaths, "tests", "integration tests", "a b", NULL);
  assert_strv(&conf.python_files, "test_*.py", "check_*.py", NULL);
  tpuci__pyconf_free(&conf);
  /* setup.cfg's section; another section's keys are not pytest's; CRLF. */
  ini_ok("[metadata]\r\nname = x\r\n[tool:pytest]\r\nmarkers =\r\n  gpu\r\n", "tool:pytest", &conf);
  assert_true(conf.found);
  assert_strv(&conf.markers, "gpu", NULL);
  tpuci__pyconf_free(&conf);
  /* No pytest section: found stays 0. A ':' before the '=' splits there. */
  ini_ok("[tox]\nenvlist = py3\nurl: http://x=y\n", "pytest", &conf);
  assert_false(conf.found);
  assert_int_equal(conf.markers.len, 0);
  tpuci__pyconf_free(&conf);
  /* The section's name is kept as written: "[ pytest ]" is another. */
  ini_ok("[ pytest ]\nmarkers = a\n", "pytest", &conf);
  assert_false(conf.found);
  tpuci__pyconf_free(&conf);
  /* A section header's comment. */
  ini_ok("[pytest] # here\nmarkers = a\n", "pytest", &conf);
  assert_strv(&conf.markers, "a", NULL);
  tpuci__pyconf_free(&conf);
}

static void test_ini_refused(void **state) {
  (void) state;
  REFUSED("tox.ini", "key = value\n", "tox.ini:1: a key before any section");
  REFUSED("tox.ini", "[pytest]\n  continued\n",
          "tox.ini:2: an indented line without a key before it");
  REFUSED("tox.ini", "[pytest]\nmarkers = a\njust words\n",
          "tox.ini:3: neither a section ([name]), a key (key = value) nor an indented "
          "continuation");
  REFUSED("tox.ini", "[pytest\n", "tox.ini:1: a section header that does not end with ']'");
  REFUSED("tox.ini", "[]\n", "tox.ini:1: a section without a name");
  REFUSED("tox.ini", "[pytest]\na = 1\n[pytest]\n", "tox.ini:3: the section is there twice");
  REFUSED("tox.ini", "[pytest]\nmarkers = a\nmarkers = b\n", "tox.ini:3: markers is given twice");
  REFUSED("tox.ini", "[pytest]\ntestpaths = 'tests\n", "tox.ini:2: testpaths: a quote does not close");
  REFUSED("tox.ini", "[pytest]\nmarkers = a\xff\n", "tox.ini:2: not valid UTF-8");
  REFUSED("tox.ini", "[pytest]\nmarkers = a\0b\n", "tox.ini:2: contains a NUL byte");
}

/* Where libinih, which the INI reader is built on, reads otherwise than
 * iniconfig (pyconf_ini.c says how the reader keeps pytest's meaning;
 * pyconf_check.py compares the same cases with iniconfig itself). */
static void test_ini_inih(void **state) {
  tpuci__pyconf_t conf;
  tpuci__buf_t b;
  char *want;
  int k;
  (void) state;
  /* Inline comments: a ';' after a blank ends a value for inih, not for
   * iniconfig; nor does a '#'. On key lines and continuation lines. */
  ini_ok("[pytest]\ntestpaths = a ;b c#d\nmarkers = m0 ; x\n  m1: x ; y\n  m2 # z\n", "pytest",
         &conf);
  assert_strv(&conf.testpaths, "a", ";b", "c#d", NULL);
  assert_strv(&conf.markers, "m0 ; x", "m1: x ; y", "m2 # z", NULL);
  tpuci__pyconf_free(&conf);
  /* A ';' in a key's name; a comment line (either character, indented
   * or not) among continuation lines. */
  ini_ok("[pytest]\na;b = 1\nmarkers = a\n# c\n  ; d\n  b\n", "pytest", &conf);
  assert_strv(&conf.markers, "a", "b", NULL);
  tpuci__pyconf_free(&conf);
  /* inih calls its handler the same way for a continuation line and for
   * a key given again: the second is an error, the first is not. */
  REFUSED("tox.ini", "[pytest]\nmarkers = a\n  b\naddopts = -x\nmarkers = c\n",
          "tox.ini:5: markers is given twice");
  /* inih merges a section given twice; iniconfig refuses it. */
  REFUSED("tox.ini", "[pytest]\n[x]\n[pytest]\n", "tox.ini:3: the section is there twice");
  /* inih takes an indented line after a header for a key. */
  REFUSED("tox.ini", "[pytest]\n  markers = a\n",
          "tox.ini:2: an indented line without a key before it");
  REFUSED("tox.ini", "[x]\na = 1\n[pytest]\n  markers = a\n",
          "tox.ini:4: an indented line without a key before it");
  /* inih skips a UTF-8 BOM; iniconfig reads it as a character of the line. */
  REFUSED("tox.ini", "\xef\xbb\xbf[pytest]\n",
          "tox.ini:1: neither a section ([name]), a key (key = value) nor an indented "
          "continuation");
  /* "[pytest]]" is the section "pytest]" (inih: "pytest"). */
  ini_ok("[pytest]]\nmarkers = a\n", "pytest", &conf);
  assert_false(conf.found);
  tpuci__pyconf_free(&conf);
  /* An empty section is there (inih calls the handler for keys only). */
  ini_ok("[pytest]\n", "pytest", &conf);
  assert_true(conf.found);
  tpuci__pyconf_free(&conf);
  /* inih continues no key of an empty name: its next line would be a
   * key, or a header that does not end. */
  ini_ok("[o]\n: z\n  more = 1\n[pytest]\n= x\n  [y\nmarkers = a\n  b\n", "pytest", &conf);
  assert_strv(&conf.markers, "a", "b", NULL);
  tpuci__pyconf_free(&conf);
  /* Control characters stand for the pre-processing's markers. */
  REFUSED("tox.ini", "[pytest]\nmarkers = a\x03\n", "tox.ini:2: a control character");
  /* Lines longer than inih's buffer (200 bytes): a value of words with
   * runs of blanks everywhere (so some fall at a cut), a long key before
   * it, a long header and a long comment. */
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "[pytest]\n# ");
  for (k = 0; k < 100; k++) tpuci__buf_adds(&b, "comment ");
  tpuci__buf_adds(&b, "\n[");
  for (k = 0; k < 100; k++) tpuci__buf_adds(&b, "header");
  tpuci__buf_adds(&b, "]\n");
  for (k = 0; k < 100; k++) tpuci__buf_adds(&b, "key");
  tpuci__buf_adds(&b, " = x\n  y\n[pytest2]\nmarkers = x\n[tool:pytest]\nmarkers = m\n  ");
  for (k = 1; k < 80; k++) tpuci__buf_addf(&b, "%.*s%*s", k % 13 + 1, "abcdefghijklm", k % 7, "");
  tpuci__buf_adds(&b, "\n  last\n");
  ini_ok(b.data, "tool:pytest", &conf);
  tpuci__buf_free(&b);
  assert_true(conf.found);
  tpuci__buf_init(&b);
  for (k = 1; k < 80; k++) tpuci__buf_addf(&b, "%.*s%*s", k % 13 + 1, "abcdefghijklm", k % 7, "");
  while (b.len > 0 && b.data[b.len - 1] == ' ') b.data[--b.len] = '\0';
  want = tpuci__buf_steal(&b);
  assert_strv(&conf.markers, "m", want, "last", NULL);
  free(want);
  tpuci__pyconf_free(&conf);
  /* One line of 200 000 bytes: testpaths of 20 000 words. */
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "[pytest]\ntestpaths =");
  for (k = 0; k < 20000; k++) tpuci__buf_addf(&b, " d%07d", k);
  tpuci__buf_adds(&b, "\n");
  REFUSED_TEXT(b.data, "tox.ini:2: testpaths has more than 256 entries");
  tpuci__buf_free(&b);
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "[pytest]\ntestpaths =");
  for (k = 0; k < 256; k++) tpuci__buf_addf(&b, " %0700d", k);
  tpuci__buf_adds(&b, "\n");
  ini_ok(b.data, "pytest", &conf);
  tpuci__buf_free(&b);
  assert_int_equal(conf.testpaths.len, 256);
  for (k = 0; k < 256; k++) {
    char item[701];
    snprintf(item, sizeof item, "%0700d", k);
    assert_string_equal(conf.testpaths.items[k], item);
  }
  tpuci__pyconf_free(&conf);
}

/* ------------------------------------------------------------------ */
/* TOML                                                                */

static void test_toml(void **state) {
  tpuci__pyconf_t conf;
  (void) state;
  /* What pyproject.toml files hold: other tables first (strings that look
   * like pytest's table, arrays and inline tables over several lines),
   * then pytest's with multi-line arrays, comments and trailing commas. */
  toml_ok("[project]\n"
          "name = \"mylib\"\n"
          "description = \"\"\"\n"
          "[tool.pytest.ini_options]\n"
          "markers = [\"decoy\"]\n"
          "\"\"\"\n"
          "dependencies = [\n"
          "  \"numpy>=1.26\",  # a comment\n"
          "  'jax[cpu]',\n"
          "]\n"
          "authors = [{ name = \"A\", email = \"a@example.com\" }]\n"
          "[tool.black]\n"
          "line-length = 100\n"
          "target-version = ['py311']\n"
          "exclude = '''\n"
          "markers = [\"decoy\"]\n"
          "'''\n"
          "when = 1979-05-27 07:32:00Z\n"
          "[[tool.mypy.overrides]]\n"
          "module = \"x.*\"\n"
          "\n"
          "[tool.pytest.ini_options]   # pytest's\n"
          "minversion = \"7.0\"\n"
          "addopts = \"-ra -q\"\n"
          "markers = [\n"
          "    \"tpu: needs a TPU\",\n"
          "    # a comment between entries\n"
          "    'multihost: needs 2 hosts',\n"
          "    \"\"\"slow: \"quoted\" \\u00e9\"\"\",\n"
          "]\n"
          "testpaths = [\"tests\", \"integration\"]\n"
          "python_files = \"test_*.py *_check.py\"\n"
          "xfail_strict = true\n"
          "filterwarnings = [\"error\", \"ignore::DeprecationWarning\"]\n",
          &conf);
  assert_true(conf.found);
  assert_string_equal(conf.section, "[tool.pytest.ini_options]");
  assert_strv(&conf.markers, "tpu: needs a TPU", "multihost: needs 2 hosts",
              "slow: \"quoted\" \xc3\xa9", NULL);
  assert_strv(&conf.testpaths, "tests", "integration", NULL);
  assert_strv(&conf.python_files, "test_*.py", "*_check.py", NULL);
  tpuci__pyconf_free(&conf);

  /* Dotted keys, quoted keys and inline tables reach the same keys. */
  toml_ok("tool.pytest.ini_options.markers = [\"a\"]\n", &conf);
  assert_strv(&conf.markers, "a", NULL);
  tpuci__pyconf_free(&conf);
  toml_ok("[tool]\npytest = { ini_options = { testpaths = [\"t\"], markers = \"x: y\\nz\" } }\n",
          &conf);
  assert_strv(&conf.testpaths, "t", NULL);
  assert_strv(&conf.markers, "x: y", "z", NULL);
  tpuci__pyconf_free(&conf);
  toml_ok("[ \"tool\" . 'pytest' . ini_options ]\nmarkers = ['q']\n", &conf);
  assert_strv(&conf.markers, "q", NULL);
  tpuci__pyconf_free(&conf);
  /* pytest 9's [tool.pytest]. */
  toml_ok("[tool.pytest]\nmarkers = [\"n\"]\n", &conf);
  assert_true(conf.found);
  assert_string_equal(conf.section, "[tool.pytest]");
  assert_strv(&conf.markers, "n", NULL);
  tpuci__pyconf_free(&conf);
  /* An empty table is pytest's file all the same; no table, not. */
  toml_ok("[tool.pytest.ini_options]\n", &conf);
  assert_true(conf.found);
  tpuci__pyconf_free(&conf);
  toml_ok("[tool.ruff]\nselect = [\"E\"]\n# [tool.pytest.ini_options]\n", &conf);
  assert_false(conf.found);
  tpuci__pyconf_free(&conf);
  /* A line-ending backslash, escapes, two quotes before the closing three. */
  toml_ok("[tool.pytest.ini_options]\nmarkers = [\"\"\"a \\\n   b\"\"\", '''c''''', \"\\t\\\"\"]\n",
          &conf);
  assert_strv(&conf.markers, "a b", "c''", "\t\"", NULL);
  tpuci__pyconf_free(&conf);
  /* A byte order mark; a file without a last newline. */
  toml_ok("\xef\xbb\xbf[tool.pytest.ini_options]\nmarkers = ['x']", &conf);
  assert_strv(&conf.markers, "x", NULL);
  tpuci__pyconf_free(&conf);
}

static void test_toml_refused(void **state) {
  char *deep, *many;
  size_t k;
  (void) state;
  REFUSED("pyproject.toml", "[tool.pytest.ini_options]\nmarkers = 3\n",
          "pyproject.toml:2: markers must be a string or an array of strings");
  REFUSED("pyproject.toml", "[tool.pytest.ini_options]\nmarkers = [\"a\", 1]\n",
          "pyproject.toml:2: markers must be a string or an array of strings");
  REFUSED("pyproject.toml", "a = \"open\n", "pyproject.toml:1: a string that does not end on its line");
  REFUSED("pyproject.toml", "a = \"\"\"open\n\n", "pyproject.toml:3: a string that does not end");
  REFUSED("pyproject.toml", "a = [1, 2\n", "pyproject.toml:2: ',' or ']' was expected in an array");
  REFUSED("pyproject.toml", "a = {b = 1\n",
          "pyproject.toml:2: ',' or '}' was expected in an inline table");
  REFUSED("pyproject.toml", "[tool.pytest\n", "pyproject.toml:1: ']' was expected");
  REFUSED("pyproject.toml", "a = 1 b\n", "pyproject.toml:1: more after a value on its line");
  REFUSED("pyproject.toml", "= 1\n", "pyproject.toml:1: a key was expected");
  REFUSED("pyproject.toml", "a 1\n", "pyproject.toml:1: '=' was expected after a key");
  REFUSED("pyproject.toml", "a =\n", "pyproject.toml:1: a value was expected");
  REFUSED("pyproject.toml", "a = \"\\q\"\n", "pyproject.toml:1: an unknown escape in a string");
  REFUSED("pyproject.toml", "a = \"\\uD800\"\n",
          "pyproject.toml:1: an escape of no Unicode scalar value (or of NUL)");
  REFUSED("pyproject.toml", "a = \"\\u12\"\n", "pyproject.toml:1: an escape without its hex digits");
  REFUSED("pyproject.toml", "a = \"x\ry\"\n", "pyproject.toml:1: a control character in a string");
  REFUSED("pyproject.toml", "# \x01\n", "pyproject.toml:1: a control character in a comment");
  REFUSED("pyproject.toml", "\n\na = '\xc3'\n", "pyproject.toml:3: not valid UTF-8");
  REFUSED("pyproject.toml", "a = 'x\0'\n", "pyproject.toml:1: contains a NUL byte");
  REFUSED("pyproject.toml", "a = \"\"\"x\"\"\"\"\"\"\n",
          "pyproject.toml:1: too many quotes closing a string");
  REFUSED("pyproject.toml", "\"\"\"k\"\"\" = 1\n",
          "pyproject.toml:1: a key cannot be a string of several lines");
  {
    static const char twice[] = "[tool.pytest.ini_options]\nmarkers = ['a']\n"
                                "[tool.pytest.ini_options.x]\n[tool.pytest.ini_options]\n"
                                "markers = ['b']\n";
    refused("pyproject.toml", twice, sizeof(twice) - 1, "pyproject.toml:5: markers is given twice");
  }
  /* Nesting past the cap, arrays and inline tables alike; no stack runs out. */
  deep = malloc(100011);
  memcpy(deep, "a = ", 4);
  memset(deep + 4, '[', 100000);
  memcpy(deep + 100004, "\n", 1);
  refused("pyproject.toml", deep, 100005, "pyproject.toml:1: values nested too deep");
  for (k = 0; k < 40; k++) memcpy(deep + 4 + 7 * k, "{ a = ", 6), deep[4 + 7 * k + 6] = ' ';
  memcpy(deep + 4 + 7 * 40, "\n", 1);
  refused("pyproject.toml", deep, 4 + 7 * 40 + 1, NULL);
  free(deep);
  /* Too many markers: refused, not kept. */
  many = malloc(300 * 6 + 64);
  strcpy(many, "[tool.pytest.ini_options]\nmarkers = [");
  for (k = 0; k < 300; k++) strcat(many, "'m',");
  strcat(many, "]\n");
  refused("pyproject.toml", many, strlen(many), "pyproject.toml:2: markers has more than 256 entries");
  free(many);
}

/* Every prefix of a valid file is read or refused, never past its end
 * (ASan), and so is every one-byte change of it. */
static void test_hostile_prefixes(void **state) {
  static const char *const files[][2] = {
      {"pyproject.toml",
       "[tool.pytest.ini_options] # x\nmarkers = [\n \"a: b\", '''c\nd''',\n  \"\"\"e\\\n f\"\"\",\n"
       "]\ntestpaths = { x = [1, {y = \"\\u00e9\"}] }\nt = 1979-05-27 07:32:00\n"},
      {"pytest.ini", "[pytest]\nmarkers =\n  a: b\n  c\n; x\ntestpaths = \"a b\" 'c' d\\ e\n[x]"}};
  size_t f, n;
  int c;
  (void) state;
  for (f = 0; f < 2; f++) {
    const char *text = files[f][1];
    size_t len = strlen(text);
    char *copy = malloc(len);
    for (n = 0; n <= len; n++) {
      tpuci__pyconf_t conf;
      read_as(files[f][0], "pytest", text, n, &conf, NULL);
      tpuci__pyconf_free(&conf);
    }
    for (n = 0; n < len; n++) {
      for (c = 0; c < 256; c += 17) {
        tpuci__pyconf_t conf;
        memcpy(copy, text, len);
        copy[n] = (char) c;
        read_as(files[f][0], "pytest", copy, len, &conf, NULL);
        tpuci__pyconf_free(&conf);
      }
    }
    free(copy);
  }
}

/* ------------------------------------------------------------------ */
/* Values                                                              */

static void test_values(void **state) {
  static const char *const names[][2] = {
      {"tpu: needs a TPU", "tpu"}, {"  slow  ", "slow"}, {"x(a, b): c", "x"}, {"_p9", "_p9"}, {"9x", NULL}, {"a-b", NULL}, {": nothing", NULL}, {"and", NULL}, {"not: x", NULL}, {"caf\xc3\xa9", NULL}, {"", NULL}};
  tpuci__strv_t v = {0};
  size_t k;
  (void) state;
  for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
    char *name = tpuci__pyconf_marker_name(names[k][0]);
    if (names[k][1] == NULL) assert_null(name);
    else assert_string_equal(name, names[k][1]);
    free(name);
  }
  assert_int_equal(tpuci__pyconf_split_args("a  'b c'\t\"d \\\" e\" f\\ g h'i'j \"\"", &v), 0);
  assert_strv(&v, "a", "b c", "d \" e", "f g", "hij", "", NULL);
  tpuci__strv_free(&v);
  assert_int_equal(tpuci__pyconf_split_args("\"open", &v), -1);
  tpuci__strv_free(&v);
  assert_int_equal(tpuci__pyconf_split_args("x\\", &v), -1);
  tpuci__strv_free(&v);
}

/* ------------------------------------------------------------------ */
/* The starting spec                                                   */

/* The spec init writes for conf loads without a warning; *names gets its
 * instances' names and -m expressions ("job|markers|topology"). */
static char *spec_of(const tpuci__pyconf_t *conf, const char *jax, char **summary) {
  tpuci__init_opts_t o = {"tpuci.lua", ".", "mylib", 0, jax, 0, {0}};
  return tpuci__init_spec(conf, &o, summary);
}

static void spec_loads(const char *text, const char *want_jobs) {
  tpuci_ctx_t *ctx;
  tpuci__buf_t got;
  size_t i;
  assert_int_equal(tpuci_ctx_new(&ctx, NULL), 0);
  if (tpuci_load_string(ctx, text, strlen(text), "tpuci.lua") != 0)
    fail_msg("the spec does not load: %s\n%s", tpuci_last_error(ctx), text);
  if (tpuci_warning_count(ctx) != 0) fail_msg("a warning: %s", tpuci_warning(ctx, 0));
  tpuci__buf_init(&got);
  for (i = 0; i < tpuci_instance_count(ctx); i++)
    tpuci__buf_addf(&got, "%s%s", i ? " " : "", tpuci_instance_name(ctx, i));
  if (strcmp(got.data ? got.data : "", want_jobs) != 0)
    fail_msg("jobs '%s', want '%s'", got.data ? got.data : "", want_jobs);
  tpuci__buf_free(&got);
  tpuci_ctx_free(ctx);
}

static void test_spec_families(void **state) {
  tpuci__pyconf_t conf;
  char *text, *summary;
  (void) state;
  /* One family of each kind, pytest's own markers left out, a marker
   * named twice once, a line that names nothing left out. */
  ini_ok("[pytest]\ntestpaths = tests\nmarkers =\n  tpu: needs a TPU\n  tpu_v5: a v5\n"
         "  distributed: torch.distributed\n  multi_host: 2 hosts\n  slow\n  slow_io\n"
         "  integration: with a db\n  skip: pytest's\n  tpu\n  9bad: no\n",
         "pytest", &conf);
  conf.file = tpuci__strdup("pytest.ini");
  conf.section = tpuci__strdup("[pytest]");
  text = spec_of(&conf, NULL, &summary);
  spec_loads(text, "unmarked slow integration tpu distributed");
  assert_string_equal(summary, "from pytest.ini ([pytest]): 7 markers and 1 test path, 5 jobs: "
                               "unmarked, slow, integration, tpu on a v4-8, distributed on a "
                               "v4-16");
  /* Each test in one job: the expressions partition the markers. */
  assert_non_null(strstr(text, "markers = \"(distributed or multi_host)\", args = { \"tests\" }"));
  assert_non_null(strstr(text, "markers = \"(tpu or tpu_v5) and not distributed and not "
                               "multi_host\""));
  assert_non_null(strstr(text, "markers = \"(slow or slow_io) and not distributed and not "
                               "multi_host and not tpu and not tpu_v5\""));
  assert_non_null(strstr(text, "markers = \"integration and not distributed and not multi_host "
                               "and not tpu and not tpu_v5 and not slow and not slow_io\""));
  assert_non_null(strstr(text, "markers = \"not distributed and not multi_host and not tpu and "
                               "not tpu_v5 and not slow and not slow_io and not integration\""));
  assert_non_null(strstr(text, "topology \"v4-16\" { emulate = \"none\" }"));
  assert_non_null(strstr(text, "topology \"v4-8\"  { emulate = \"pjrt\" }"));
  assert_non_null(strstr(text, "1 marker line of pytest.ini names no marker"));
  assert_null(strstr(text, "\"skip"));
  free(text);
  free(summary);
  /* With JAX, both topologies emulate it, and the comment names the file. */
  text = spec_of(&conf, "tests/test_x.py", NULL);
  assert_non_null(strstr(text, "topology \"v4-16\" { emulate = \"jax\" }"));
  assert_non_null(strstr(text, "The project names JAX (tests/test_x.py)"));
  spec_loads(text, "unmarked slow integration tpu distributed");
  free(text);
  tpuci__pyconf_free(&conf);
}

static void test_spec_edges(void **state) {
  tpuci__pyconf_t conf;
  tpuci__buf_t ini;
  char *text, *summary;
  int k;
  (void) state;
  /* No configuration: one job for every test. */
  tpuci__pyconf_init(&conf);
  text = spec_of(&conf, NULL, &summary);
  spec_loads(text, "tests");
  assert_string_equal(summary, "without a pytest configuration, 1 job: tests");
  assert_null(strstr(text, "markers ="));
  free(text);
  free(summary);
  /* A marker named like the rest's job: the rest's gives way. More plain
   * families than the cap: the others run with the rest ("rest"). */
  tpuci__buf_init(&ini);
  tpuci__buf_adds(&ini, "[pytest]\nmarkers =\n  unmarked\n  tests\n");
  for (k = 0; k < 10; k++) tpuci__buf_addf(&ini, "  m%d\n", k);
  ini_ok(ini.data, "pytest", &conf);
  conf.file = tpuci__strdup("pytest.ini");
  conf.section = tpuci__strdup("[pytest]");
  text = spec_of(&conf, NULL, NULL);
  spec_loads(text, "rest unmarked tests m0 m1 m2 m3 m4 m5");
  assert_non_null(strstr(text, "those marked m6, m7, m8 or m9 too"));
  free(text);
  tpuci__pyconf_free(&conf);
  tpuci__buf_free(&ini);
  ini_ok("[pytest]\nmarkers = rest\n  unmarked\n", "pytest", &conf);
  conf.file = tpuci__strdup("pytest.ini");
  conf.section = tpuci__strdup("[pytest]");
  text = spec_of(&conf, NULL, NULL);
  spec_loads(text, "unmarked-tests rest unmarked");
  free(text);
  tpuci__pyconf_free(&conf);
  /* An empty test path ('') is left out; pytest's own splitting kept it. */
  ini_ok("[pytest]\ntestpaths = '' tests \"\"\n", "pytest", &conf);
  assert_strv(&conf.testpaths, "", "tests", "", NULL);
  conf.file = tpuci__strdup("pytest.ini");
  conf.section = tpuci__strdup("[pytest]");
  text = spec_of(&conf, NULL, &summary);
  spec_loads(text, "tests");
  assert_non_null(strstr(text, "args = { \"tests\" }"));
  assert_string_equal(summary, "from pytest.ini ([pytest]): 0 markers and 1 test path, 1 job: tests");
  free(text);
  free(summary);
  tpuci__pyconf_free(&conf);
  /* Test paths with quotes, backslashes, `${matrix.` and Unicode reach
   * pytest as they are; a description with a control character does
   * not end its comment. */
  toml_ok("[tool.pytest.ini_options]\ntestpaths = ['a\"b', 'c\\d', '${matrix.x}', "
          "'\xc3\xa9', \"new\\nline } job 'x' {\"]\nmarkers = [\"gpu: one\\rtwo\\n-- three\"]\n",
          &conf);
  conf.file = tpuci__strdup("pyproject.toml");
  text = spec_of(&conf, NULL, NULL);
  spec_loads(text, "unmarked gpu");
  assert_non_null(strstr(text, "args = { \"a\\\"b\", \"c\\\\d\", \"$${matrix.x}\", \"\xc3\xa9\", "
                               "\"new\\010line } job 'x' {\" }"));
  /* The header names the test paths in a comment: the newline is a space there. */
  assert_non_null(strstr(text, "new line } job 'x' {"));
  assert_non_null(strstr(text, "-- gpu: \"one two -- three\" (pyproject.toml)\n"));
  free(text);
  tpuci__pyconf_free(&conf);
}

/* The plan's pytest arguments (its JSON) of a spec init wrote. */
static char *plan_of(const char *text) {
  tpuci_ctx_t *ctx;
  char *json = NULL;
  size_t len;
  assert_int_equal(tpuci_ctx_new(&ctx, NULL), 0);
  if (tpuci_load_string(ctx, text, strlen(text), "tpuci.lua") != 0)
    fail_msg("the spec does not load: %s\n%s", tpuci_last_error(ctx), text);
  assert_int_equal(tpuci_plan_json(ctx, &json, &len), 0);
  tpuci_ctx_free(ctx);
  return json;
}

/* Test paths that look like the spec's matrix references reach pytest
 * as their text: the templates read "${matrix...", "${ matrix }" and a
 * run of dollars before one as references and escapes, so init writes
 * one dollar more before each; an even run of dollars before one is no
 * text a spec can say: that path is left out, and the spec says so. */
static void test_spec_matrix_text(void **state) {
  static const char *const want[] = {"${matrix}", "${ matrix .x}", "$$${matrix[1]}",
                                     "a$", "$HOME/$$", "${matrixx}"};
  tpuci__pyconf_t conf;
  char *text, *json;
  size_t i;
  (void) state;
  toml_ok("[tool.pytest.ini_options]\ntestpaths = ['${matrix}', '${ matrix .x}', "
          "'$${matrix.x}', '$$${matrix[1]}', 'a$', '$HOME/$$', '${matrixx}']\n",
          &conf);
  conf.file = tpuci__strdup("pyproject.toml");
  text = spec_of(&conf, NULL, NULL);
  spec_loads(text, "tests");
  assert_non_null(strstr(text, "args = { \"$${matrix}\", \"$${ matrix .x}\", "
                               "\"$$$${matrix[1]}\", \"a$\", \"$HOME/$$\", \"${matrixx}\" }"));
  assert_non_null(strstr(text, "-- 1 test path of pyproject.toml left out: it has an even run"));
  json = plan_of(text);
  for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
    char *quoted = tpuci__printf("\"%s\"", want[i]);
    if (strstr(json, quoted) == NULL) fail_msg("the plan has no argument %s:\n%s", quoted, json);
    free(quoted);
  }
  assert_null(strstr(json, "\"$${matrix.x}\""));
  tpuci_free(json);
  free(text);
  tpuci__pyconf_free(&conf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ini),
      cmocka_unit_test(test_ini_refused),
      cmocka_unit_test(test_ini_inih),
      cmocka_unit_test(test_toml),
      cmocka_unit_test(test_toml_refused),
      cmocka_unit_test(test_hostile_prefixes),
      cmocka_unit_test(test_values),
      cmocka_unit_test(test_spec_families),
      cmocka_unit_test(test_spec_edges),
      cmocka_unit_test(test_spec_matrix_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
