/* core/base/safetext.c: untrusted text made safe for a terminal and for
 * GitHub's workflow commands (tpuci__safe, tpuci_text_safe). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/util.h"

static void assert_safe(const char *in, int lines, const char *want) {
  char *got = tpuci__safe(in, lines);
  if (strcmp(got, want) != 0) fail_msg("'%s': want '%s', got '%s'", in, want, got);
  free(got);
}

/* What every output must be: no byte below 0x20 (but a newline in lines
 * mode), no DEL, valid UTF-8, no line that starts a command, no "##[". */
static void assert_clean(const char *out, int lines) {
  const char *p;
  int start = 1;
  assert_null(tpuci__text_problem(out, strlen(out), NULL));
  assert_null(strstr(out, "##["));
  for (p = out; *p; p++) {
    unsigned char c = (unsigned char) *p;
    if (start) {
      const char *q = p;
      while (*q == ' ') q++;
      if (q[0] == ':' && q[1] == ':') fail_msg("a command line in '%s'", out);
      start = 0;
    }
    if (c == '\n' && lines) {
      start = 1;
      continue;
    }
    if (c < 0x20 || c == 0x7F) fail_msg("control 0x%02x in '%s'", c, out);
  }
}

static void test_plain_text_unchanged(void **state) {
  (void) state;
  assert_safe("tests/test_a.py::test_x[1-2]", 0, "tests/test_a.py::test_x[1-2]");
  assert_safe("caf\xc3\xa9 \xe2\x9c\x93 C:\\path", 0, "caf\xc3\xa9 \xe2\x9c\x93 C:\\path");
  assert_safe("", 0, "");
  assert_null(tpuci__safe(NULL, 0));
}

static void test_controls(void **state) {
  (void) state;
  assert_safe("\033]0;owned\a[failed ] x", 0, "\\u001b]0;owned\\u0007[failed ] x");
  assert_safe("a\rb\nc\x7f", 0, "a\\u000db\\u000ac\\u007f");
  assert_safe("a\rb\nc", 1, "a\\u000db\nc");
  assert_safe("a\tb", 0, "a b");
  /* C1 CSI, a bidi override, a line separator; a byte that is not UTF-8. */
  assert_safe("x\xc2\x9b" "31m", 0, "x\\u009b31m");
  assert_safe("\xe2\x80\xae" "evil", 0, "\\u202eevil");
  assert_safe("a\xe2\x80\xa8" "b", 0, "a\\u2028b");
  assert_safe("\xff\xfe", 0, "\\xff\\xfe");
}

static void test_commands(void **state) {
  (void) state;
  assert_safe("::error::forged", 0, "\\u003a:error::forged");
  assert_safe("  ::add-mask::x", 0, "  \\u003a:add-mask::x");
  assert_safe("\t::group::x", 0, " \\u003a:group::x");
  /* A no-break space is white space to the runner. */
  assert_safe("\xc2\xa0::warning::x", 0, "\xc2\xa0\\u003a:warning::x");
  assert_safe("id\n::error::x", 0, "id\\u000a::error::x");
  assert_safe("id\n  ::error::x\nok::", 1, "id\n  \\u003a:error::x\nok::");
  assert_safe("a ##[error]b", 0, "a ##\\u005berror]b");
  /* Not at the start of a line: text. */
  assert_safe("t.py::test_x", 0, "t.py::test_x");
  assert_safe(":x", 0, ":x");
}

static void test_every_byte(void **state) {
  char in[3];
  int a, b;
  (void) state;
  in[2] = '\0';
  for (a = 1; a < 256; a++)
    for (b = 1; b < 256; b++) {
      char *out;
      in[0] = (char) a;
      in[1] = (char) b;
      out = tpuci__safe(in, b & 1);
      assert_clean(out, b & 1);
      free(out);
    }
}

/* JSON as jansson writes it stays the same JSON: every escape but an
 * invalid byte's is "\\uNNNN". */
static void test_json_unchanged(void **state) {
  json_t *in = json_pack("{s:s, s:s}", "id", "::error::x ##[add-mask]y \x7f\xc2\x9b\xe2\x80\xae",
                         "m", "a\033[31mb\r\n");
  char *text = json_dumps(in, JSON_INDENT(2)), *safe = tpuci__safe(text, 1);
  json_t *back = json_loads(safe, 0, NULL);
  (void) state;
  assert_non_null(back);
  assert_true(json_equal(in, back));
  assert_null(strstr(safe, "##["));
  json_decref(back);
  json_decref(in);
  free(text);
  free(safe);
}

static void test_public(void **state) {
  char *s = tpuci_text_safe("\033[2J::x", 0);
  (void) state;
  assert_string_equal(s, "\\u001b[2J::x");
  tpuci_free(s);
  s = tpuci_text_safe("::x\n\r", 1);
  assert_string_equal(s, "\\u003a:x\n\\u000d");
  tpuci_free(s);
  assert_null(tpuci_text_safe(NULL, 1));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plain_text_unchanged),
      cmocka_unit_test(test_controls),
      cmocka_unit_test(test_commands),
      cmocka_unit_test(test_every_byte),
      cmocka_unit_test(test_json_unchanged),
      cmocka_unit_test(test_public),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
