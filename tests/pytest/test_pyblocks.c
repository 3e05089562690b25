/* The top-level functions of Python source (core/kind/pytest/pyblocks.h): the
 * lines and names of blocks through what makes Python's lines hard
 * (headers over several lines, strings of every kind, brackets,
 * continuations, tabs, CRLF, form feeds, f-strings nested as Python 3.12
 * reads them), scopes that are and are not blocks, repeated names, text
 * refused as a whole, and the hashes: what a change in a body changes and
 * what it leaves alone. pyblocks_check.py compares the same scanner with
 * Python's own parser on whole libraries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/util.h"
#include "kind/pytest/pyblocks.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

/* Scans [text, text + len) from a buffer of exactly that length (ASan
 * sees any read past it) and returns the scanner's answer. */
static int scan_n(const char *text, size_t len, tpuci__pyblocks_t *b) {
  char *copy = malloc(len ? len : 1);
  int r;
  memcpy(copy, text, len);
  r = tpuci__pyblocks_scan(copy, len, b);
  free(copy);
  return r;
}

/* The blocks of text, one "FIRST-LAST@BODY NAME\n" each. */
static char *listing(const tpuci__pyblocks_t *b) {
  tpuci__buf_t out;
  size_t i;
  tpuci__buf_init(&out);
  tpuci__buf_adds(&out, "");
  for (i = 0; i < b->n; i++)
    tpuci__buf_addf(&out, "%d-%d@%d %s\n", b->blocks[i].first, b->blocks[i].last,
                    b->blocks[i].body, b->blocks[i].name);
  return tpuci__buf_steal(&out);
}

/* Scans text, which must be scanned, and checks its blocks' listing. */
static void blocks_are(const char *text, const char *want) {
  tpuci__pyblocks_t b;
  char *got;
  if (scan_n(text, strlen(text), &b) != 0) fail_msg("refused:\n%s", text);
  got = listing(&b);
  if (strcmp(got, want) != 0) fail_msg("blocks:\n%swant:\n%s\nof:\n%s", got, want, text);
  free(got);
  tpuci__pyblocks_free(&b);
}

/* Text refused as a whole: no blocks, top the hash of all of it. */
static void refused_n(const char *text, size_t len) {
  tpuci__pyblocks_t b;
  char whole[65];
  if (scan_n(text, len, &b) != -1) fail_msg("scanned:\n%s", text);
  assert_int_equal(b.n, 0);
  assert_null(b.blocks);
  tpuci__sha256_hex(text, len, whole);
  assert_string_equal(b.top, whole);
  tpuci__pyblocks_free(&b);
}

#define REFUSED(literal) refused_n(literal, sizeof(literal) - 1)

/* Scans text, which must be scanned (the caller frees b). */
static void scan_ok(const char *text, tpuci__pyblocks_t *b) {
  if (scan_n(text, strlen(text), b) != 0) fail_msg("refused:\n%s", text);
}

/* The hash of the block named name in text. */
static void hash_of(const char *text, const char *name, char hash[65]) {
  tpuci__pyblocks_t b;
  const tpuci__pyblock_t *k;
  scan_ok(text, &b);
  k = tpuci__pyblocks_find(&b, name);
  if (k == NULL) fail_msg("no block %s in:\n%s", name, text);
  memcpy(hash, k->hash, 65);
  tpuci__pyblocks_free(&b);
}

static void top_of(const char *text, char top[65]) {
  tpuci__pyblocks_t b;
  scan_ok(text, &b);
  memcpy(top, b.top, 65);
  tpuci__pyblocks_free(&b);
}

/* ------------------------------------------------------------------ */
/* Lines and names                                                     */

static void test_headers(void **state) {
  (void) state;
  /* A header over several lines, with defaults that hold ':' and "def"
   * and a return annotation: the body starts after the final ':'. A
   * one-line def is no block; the trailing comment is not in the body. */
  blocks_are("import os\n"
             "\n"
             "def f(a,\n"
             "      b=\"x: def g():\",\n"
             "      c={'k': 1},\n"
             "      d=lambda x: x) -> dict[str,\n"
             "                            int]:\n"
             "    return a\n"
             "    # a trailing comment\n"
             "\n"
             "def one(): return 1\n"
             "def two(x): pass  # c\n"
             "async def co(\n"
             "):  # a comment after the colon\n"
             "    await x\n"
             "\n"
             "    return 2\n",
             "3-8@8 f\n"
             "13-17@15 co\n");
  /* A lambda in the return annotation does not end the header, a body
   * that starts after a backslash is on the header's line. */
  blocks_are("def f() -> (lambda: int):\n"
             "    pass\n"
             "def g(): \\\n"
             "    return 1\n",
             "1-2@2 f\n");
}

static void test_decorators(void **state) {
  tpuci__pyblocks_t b;
  const tpuci__pyblock_t *k;
  (void) state;
  /* first is the first decorator's line (co_firstlineno), over comments
   * and a decorator spanning lines. */
  scan_ok("@a\n"
          "# between\n"
          "@b(x=1,\n"
          "   y=2)\n"
          "\n"
          "def f():\n"
          "    return 1\n"
          "x = 1\n",
          &b);
  assert_int_equal(b.n, 1);
  k = tpuci__pyblocks_at(&b, 1);
  assert_non_null(k);
  assert_string_equal(k->name, "f");
  assert_int_equal(k->first, 1);
  assert_int_equal(k->body, 7);
  assert_int_equal(k->last, 7);
  assert_ptr_equal(tpuci__pyblocks_at(&b, 4), k);
  assert_ptr_equal(tpuci__pyblocks_at(&b, 6), k);
  assert_null(tpuci__pyblocks_at(&b, 0));
  assert_null(tpuci__pyblocks_at(&b, 8));
  assert_null(tpuci__pyblocks_at(&b, 100));
  assert_ptr_equal(tpuci__pyblocks_find(&b, "f"), k);
  assert_null(tpuci__pyblocks_find(&b, "g"));
  tpuci__pyblocks_free(&b);
  /* A decorated class: its methods only. */
  blocks_are("@dataclass\n"
             "class A:\n"
             "    @staticmethod\n"
             "    def s():\n"
             "        pass\n",
             "3-5@5 A.s\n");
}

static void test_strings(void **state) {
  (void) state;
  /* Strings of every prefix whose text looks like code at column 0, '#'
   * in strings, escaped quotes (raw ones too), a comment with a quote. */
  blocks_are("def f():\n"
             "    s = '''\n"
             "def not_a_block():\n"
             "    pass\n"
             "'''\n"
             "    t = \"\"\"x\"\"\" + r'\\'' + b\"\\\"#\" + Rb'''a''' + bR\"x\" + U'#'\n"
             "    u = f\"{s!r}\" + Fr'\\{s}' + rF\"\" + fR'''\n"
             "class X:\n"
             "'''\n"
             "    return s  # it's a comment\n"
             "def g():\n"
             "    '#'; x = \"'\"  # \"\n"
             "    pass\n"
             "x = '''\n"
             "def h():\n"
             "    pass'''\n",
             "1-10@2 f\n"
             "11-13@12 g\n");
  /* f-strings as Python 3.12 reads them: the same quote and a '#' in a
   * field, a field over lines in a one-quote f-string, {{ }} and \N{...}
   * (no fields), a backslash before a field, format specs with a nested
   * field, with '#', starting with '=' (no `:=`). */
  blocks_are("def f(d):\n"
             "    return f\"{d[\"k\"]} {'#'} {{#}} \\N{EM DASH} {d:{\"#\"}>{w}} {d:#x} {d:=#9}\"\n"
             "def g(x):\n"
             "    return f\"list: {\", \".join([\n"
             "        'a',  # } \"\n"
             "    ])}\" + f'{x:=^10}' + f'{f\"{f'{x}'}\"}' + f\"{\n"
             "x}\" + rf\"\\{\"#\"}\" + (\n"
             "1)\n"
             "def h():\n"
             "    pass\n",
             "1-2@2 f\n"
             "3-8@4 g\n"
             "9-10@10 h\n");
}

static void test_lines(void **state) {
  (void) state;
  /* Brackets and backslashes carry text to column 0 without ending a
   * body; a comment at column 0 does not end it either. */
  blocks_are("def f():\n"
             "    x = [1,\n"
             "2]\n"
             "# a comment at column 0\n"
             "    y = 1 + \\\n"
             "2\n"
             "    return (x,\n"
             "    y)\n"
             "z = 3\n",
             "1-8@2 f\n");
  /* Tabs to the next multiple of 8: a tab and 8 spaces are one level. */
  blocks_are("class A:\n"
             "\tdef f(self):\n"
             "\t\treturn 1\n"
             "\tdef g(self):\n"
             "\t    x = 1\n"
             "\t    return x\n"
             "\tx = 2\n",
             "2-3@3 A.f\n"
             "4-6@5 A.g\n");
  /* CRLF line ends; a form feed at a line's start resets its column. */
  blocks_are("def f():\r\n"
             "    return 1\r\n"
             "\r\n"
             "\fdef g():\r\n"
             "    \f  pass\r\n"
             "\f\r\n",
             "1-2@2 f\n"
             "4-5@5 g\n");
  /* A byte order mark, the last line without a line end. */
  blocks_are("\xef\xbb\xbf"
             "def f():\n"
             "    pass",
             "1-2@2 f\n");
  blocks_are("", "");
  blocks_are("\n\n# only comments\n", "");
}

static void test_scopes(void **state) {
  (void) state;
  /* Classes name their methods (a class header over lines with a
   * metaclass); defs in a def are its body, so is a class in a def; a def
   * under if / else / try / with / match / case at module level is a
   * block named as at module level, in a class as the class's method. */
  blocks_are("class Outer(Base,\n"
             "            metaclass=M):\n"
             "    x = 1\n"
             "    class Inner:\n"
             "        def m(self):\n"
             "            def nested():\n"
             "                pass\n"
             "            class Local:\n"
             "                def lm(self): pass\n"
             "                def ln(self):\n"
             "                    pass\n"
             "            return nested\n"
             "    if x:\n"
             "        def c(self):\n"
             "            pass\n"
             "if True:\n"
             "    def a():\n"
             "        pass\n"
             "else:\n"
             "    try:\n"
             "        def b():\n"
             "            pass\n"
             "    except E:\n"
             "        with x:\n"
             "            async def d():\n"
             "                pass\n"
             "match command:\n"
             "    case [x, *_]:\n"
             "        def e():\n"
             "            pass\n"
             "    case _:\n"
             "        pass\n"
             "class One: pass\n",
             "5-12@6 Outer.Inner.m\n"
             "14-15@15 Outer.c\n"
             "17-18@18 a\n"
             "21-22@22 b\n"
             "25-26@26 d\n"
             "29-30@30 e\n");
}

static void test_repeated_names(void **state) {
  tpuci__pyblocks_t b;
  (void) state;
  /* A property's getter and setter, a def defined twice under if/else,
   * the same method name in two classes. */
  blocks_are("class C:\n"
             "    @property\n"
             "    def x(self):\n"
             "        return 1\n"
             "    @x.setter\n"
             "    def x(self, v):\n"
             "        pass\n"
             "    @x.deleter\n"
             "    def x(self):\n"
             "        pass\n"
             "class D:\n"
             "    def x(self):\n"
             "        pass\n"
             "if y:\n"
             "    def f():\n"
             "        pass\n"
             "else:\n"
             "    def f():\n"
             "        pass\n",
             "2-4@4 C.x\n"
             "5-7@7 C.x#2\n"
             "8-10@10 C.x#3\n"
             "12-13@13 D.x\n"
             "15-16@16 f\n"
             "18-19@19 f#2\n");
  scan_ok("def f():\n  pass\ndef f():\n  pass\n", &b);
  assert_int_equal(tpuci__pyblocks_find(&b, "f#2")->first, 3);
  assert_int_equal(tpuci__pyblocks_find(&b, "f")->first, 1);
  tpuci__pyblocks_free(&b);
}

static void test_refused(void **state) {
  char *many;
  size_t i, n = TPUCI__PYBLOCKS_MAX_LINES + 1;
  (void) state;
  REFUSED("def f():\n    s = 'open\n    pass\n");       /* unterminated string */
  REFUSED("def f():\n    s = '''open\n    pass\n");     /* unterminated triple */
  REFUSED("def f():\n    x = (1,\n    pass\n");         /* unterminated bracket */
  REFUSED("def f():\n    x = f\"{1\"\n");               /* unterminated field */
  REFUSED("x = 1)\n");                                  /* closes nothing */
  REFUSED("if x:\n    if y:\n        pass\n  z = 1\n"); /* inconsistent dedent */
  REFUSED("x = 1\n    y = 2\n");                        /* unexpected indent */
  REFUSED("  x = 1\n");
  REFUSED("def f():\nx = 1\n"); /* no indented body */
  REFUSED("def f():\n");
  REFUSED("def f():\n    x = 1 \\ y\n"); /* a stray backslash */
  REFUSED("def f():\n    pass\n\\");
  REFUSED("def f():\n    return '\0'\n"); /* a NUL byte */
  REFUSED("def f():\r    pass\r");        /* lone CRs */
  /* Deeper than Python's 100 levels. */
  {
    tpuci__buf_t deep;
    tpuci__buf_init(&deep);
    for (i = 0; i < 101; i++) {
      size_t k;
      for (k = 0; k < i; k++) tpuci__buf_adds(&deep, " ");
      tpuci__buf_adds(&deep, "if x:\n");
    }
    for (i = 0; i < 101; i++) tpuci__buf_adds(&deep, " ");
    tpuci__buf_adds(&deep, "pass\n");
    refused_n(deep.data, deep.len);
    tpuci__buf_free(&deep);
  }
  /* Over the cap of line ends; at it, scanned. */
  many = malloc(n);
  memset(many, '\n', n);
  refused_n(many, n);
  {
    tpuci__pyblocks_t b;
    assert_int_equal(scan_n(many, n - 1, &b), 0);
    tpuci__pyblocks_free(&b);
  }
  free(many);
  /* A qualified name over the cap. */
  {
    tpuci__buf_t big;
    tpuci__buf_init(&big);
    tpuci__buf_adds(&big, "class A:\n    def ");
    for (i = 0; i < TPUCI__PYBLOCKS_MAX_NAME; i++) tpuci__buf_adds(&big, "m");
    tpuci__buf_adds(&big, "():\n        pass\n");
    refused_n(big.data, big.len);
    tpuci__buf_free(&big);
  }
}

/* ------------------------------------------------------------------ */
/* Hashes                                                              */

#define BASE           \
  "import os\n"        \
  "LIMIT = 3\n"        \
  "\n"                 \
  "@cache\n"           \
  "def f(a, b=1):\n"   \
  "    return a + b\n" \
  "\n"                 \
  "class C:\n"         \
  "    def g(self):\n" \
  "        return LIMIT\n"

static void test_hashes(void **state) {
  const char *cut = "import os\nLIMIT = 3\n\n@cache\ndef f(a, b=1):\n\nclass C:\n    def g(self):\n";
  char top[65], other[65], f[65], g[65], h[65];
  tpuci__pyblocks_t b;
  (void) state;
  top_of(BASE, top);
  hash_of(BASE, "f", f);
  hash_of(BASE, "C.g", g);
  /* A block's hash is its body's bytes, line ends and all. */
  tpuci__sha256_hex("    return a + b\n", 17, h);
  assert_string_equal(f, h);
  /* top is the text with the bodies cut out. */
  scan_ok(BASE, &b);
  tpuci__sha256_hex(cut, strlen(cut), h);
  assert_string_equal(b.top, h);
  tpuci__pyblocks_free(&b);

  /* A change in f's body: top and g unchanged, f changed. */
  top_of("import os\nLIMIT = 3\n\n@cache\ndef f(a, b=1):\n    return a - b\n\n"
         "class C:\n    def g(self):\n        return LIMIT\n",
         other);
  assert_string_equal(other, top);
  hash_of("import os\nLIMIT = 3\n\n@cache\ndef f(a, b=1):\n    return a - b\n\n"
          "class C:\n    def g(self):\n        return LIMIT\n",
          "f", h);
  assert_string_not_equal(h, f);
  /* f's body grows by lines: g's hash stays though its lines moved. */
  hash_of("import os\nLIMIT = 3\n\n@cache\ndef f(a, b=1):\n    x = 1\n\n    y = 2\n"
          "    return a + b\n\nclass C:\n    def g(self):\n        return LIMIT\n",
          "C.g", h);
  assert_string_equal(h, g);
  /* A default argument, a decorator, a module constant: top changes. */
  top_of("import os\nLIMIT = 3\n\n@cache\ndef f(a, b=2):\n    return a + b\n\n"
         "class C:\n    def g(self):\n        return LIMIT\n",
         other);
  assert_string_not_equal(other, top);
  top_of("import os\nLIMIT = 3\n\n@cache(1)\ndef f(a, b=1):\n    return a + b\n\n"
         "class C:\n    def g(self):\n        return LIMIT\n",
         other);
  assert_string_not_equal(other, top);
  top_of("import os\nLIMIT = 4\n\n@cache\ndef f(a, b=1):\n    return a + b\n\n"
         "class C:\n    def g(self):\n        return LIMIT\n",
         other);
  assert_string_not_equal(other, top);
  /* A comment after the body is top-level text. */
  top_of("import os\nLIMIT = 3\n\n@cache\ndef f(a, b=1):\n    return a + b\n    # note\n"
         "class C:\n    def g(self):\n        return LIMIT\n",
         other);
  assert_string_not_equal(other, top);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_headers),
      cmocka_unit_test(test_decorators),
      cmocka_unit_test(test_strings),
      cmocka_unit_test(test_lines),
      cmocka_unit_test(test_scopes),
      cmocka_unit_test(test_repeated_names),
      cmocka_unit_test(test_refused),
      cmocka_unit_test(test_hashes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
