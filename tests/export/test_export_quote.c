/* Spec text in exported files, one way per place (core/export/quote.h,
 * core/base/emit.h, core/pod/pod.h):
 * comments, YAML scalar styles, GitHub text and expression literals,
 * Kubernetes' $(VAR) expansion; and every style picked reads back as
 * the same string through libyaml's parser. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/emit.h"
#include "export/quote.h"
#include "pod/pod.h"

static void comment_is(const char *text, const char *want) {
  tpuci__buf_t b;
  tpuci__buf_init(&b);
  tpuci__quote_comment(&b, text);
  if (strcmp(b.data, want) != 0) fail_msg("comment of '%s' is '%s', want '%s'", text, b.data, want);
  tpuci__buf_free(&b);
}

static void test_comment(void **state) {
  (void) state;
  comment_is("", "#\n");
  comment_is("plain text", "# plain text\n");
  /* Line breaks of YAML 1.1 and 1.2. */
  comment_is("a\nb\rc\xc2\x85" "d\xe2\x80\xa8" "e\xe2\x80\xa9" "f", "# a?b?c?d?e?f\n");
  /* Controls, DEL, C1, BOM, U+FFFE, U+FFFF, bytes that are not UTF-8. */
  comment_is("\x01\x1b[1m\x7f\xc2\x80\xc2\x9f\xef\xbb\xbf\xef\xbf\xbe\xef\xbf\xbf\xff\xc3",
             "# ??[1m????????\n");
  /* Other Unicode stays: NBSP, accents, emoji, right-to-left text. */
  comment_is("\xc2\xa0\xc3\xa9 \xf0\x9f\x98\x80 \xd7\xa9", "# \xc2\xa0\xc3\xa9 \xf0\x9f\x98\x80 \xd7\xa9\n");
}

static void style_is(const char *s, yaml_scalar_style_t want) {
  yaml_scalar_style_t got = tpuci__quote_yaml_style(s);
  if (got != want) fail_msg("style of '%s' is %d, want %d", s, (int) got, (int) want);
}

static void test_style(void **state) {
  (void) state;
  style_is("plain", YAML_PLAIN_SCALAR_STYLE);
  style_is("a: b #c", YAML_PLAIN_SCALAR_STYLE); /* libyaml quotes it */
  style_is("3.10", YAML_DOUBLE_QUOTED_SCALAR_STYLE);
  style_is("on", YAML_DOUBLE_QUOTED_SCALAR_STYLE);
  style_is("two\nlines\n", YAML_LITERAL_SCALAR_STYLE);
  style_is("a\xe2\x80\xa8" "b", YAML_DOUBLE_QUOTED_SCALAR_STYLE);
  style_is("a\nb\xe2\x80\xa9" "c", YAML_DOUBLE_QUOTED_SCALAR_STYLE);
  style_is("x\xc2\x85y", YAML_DOUBLE_QUOTED_SCALAR_STYLE);
  style_is("a\r\nb", YAML_DOUBLE_QUOTED_SCALAR_STYLE);
}

static void text_is(char *got, const char *want) {
  if (strcmp(got, want) != 0) fail_msg("'%s', want '%s'", got, want);
  free(got);
}

static void test_github(void **state) {
  (void) state;
  text_is(tpuci__quote_github_text(""), "");
  text_is(tpuci__quote_github_text("no expression $ {{ }}"), "no expression $ {{ }}");
  text_is(tpuci__quote_github_text("a${{ secrets.X }}b"), "a${{ '${{' }} secrets.X }}b");
  text_is(tpuci__quote_github_text("${{${{"), "${{ '${{' }}${{ '${{' }}");
  text_is(tpuci__quote_github_text("$${{{"), "$${{ '${{' }}{");
  text_is(tpuci__quote_github_literal("ghcr.io/o/i:1"), "'ghcr.io/o/i:1'");
  text_is(tpuci__quote_github_literal("it's $x {y}"), "'it''s $x {y}'");
  text_is(tpuci__quote_github_literal("a${{ b }}'c"), "format('a{0}{{{{ b }}}}''c', '$')");
  text_is(tpuci__quote_github_literal("$${{"), "format('{0}{0}{{{{', '$')");
}

static void test_k8s(void **state) {
  (void) state;
  text_is(tpuci__quote_k8s("$(HOME) $$ $x $"), "$$(HOME) $$$ $x $");
  text_is(tpuci__quote_k8s("no dollar"), "no dollar");
}

/* Every string, emitted in its style, parses back as itself. */
static void test_round_trip(void **state) {
  static const char *const strings[] = {
      "plain", "a: b #c", "- x", "[y]", "{z}", "&a *b !t |", "3.10", "on", "null", "~",
      "two\nlines\n", " lead", "trail ", "\ttab", "a\xe2\x80\xa8" "b", "a\nb\xe2\x80\xa9" "c",
      "x\xc2\x85y", "a\r\nb", "--- x", "...", "${{ '${{' }}", "\"q\" \\ '", "\xef\xbb\xbf" "bom",
      "end\n\n", "\n"};
  size_t i;
  (void) state;
  for (i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
    tpuci__buf_t out;
    yaml_emitter_t e;
    yaml_parser_t p;
    yaml_event_t ev;
    int found = 0, done = 0;
    tpuci__buf_init(&out);
    assert_true(yaml_emitter_initialize(&e));
    yaml_emitter_set_output(&e, tpuci__emit_write, &out);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_width(&e, -1);
    assert_true(yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) &&
                yaml_emitter_emit(&e, &ev));
    assert_true(yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) &&
                yaml_emitter_emit(&e, &ev));
    assert_true(tpuci__emit_map(&e) && tpuci__emit_plain(&e, "k") && tpuci__emit_str(&e, strings[i]) &&
                tpuci__emit_map_end(&e));
    assert_true(yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&e, &ev));
    assert_true(yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&e, &ev));
    yaml_emitter_delete(&e);
    assert_true(yaml_parser_initialize(&p));
    yaml_parser_set_input_string(&p, (const unsigned char *) out.data, out.len);
    while (!done) {
      assert_true(yaml_parser_parse(&p, &ev));
      if (ev.type == YAML_SCALAR_EVENT && strcmp((char *) ev.data.scalar.value, "k") != 0) {
        if (strcmp((char *) ev.data.scalar.value, strings[i]) != 0)
          fail_msg("'%s' read back as '%s' from %s", strings[i], (char *) ev.data.scalar.value,
                   out.data);
        found++;
      }
      done = ev.type == YAML_STREAM_END_EVENT;
      yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    assert_int_equal(found, 1);
    tpuci__buf_free(&out);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_comment), cmocka_unit_test(test_style),
      cmocka_unit_test(test_github),  cmocka_unit_test(test_k8s),
      cmocka_unit_test(test_round_trip),
  };
  return cmocka_run_group_tests_name("export_quote", tests, NULL, NULL);
}
