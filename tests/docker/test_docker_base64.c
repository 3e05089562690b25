/* The engine client's one base64 (runtime/engine/base64.h): the encoder,
 * and the decoder in both its modes, the lenient one of Docker configs
 * and registry headers and the strict one of a results folder's pieces
 * in a task's log (logres.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/engine/base64.h"

static void expect_enc(const char *data, size_t len, int url, const char *want) {
  char *s = tpuci__base64((const unsigned char *) data, len, url);
  assert_string_equal(s, want);
  free(s);
}

/* Decodes s (len bytes) with `flags` into a buffer of exactly the room
 * base64.h asks for (the sanitizers see a byte past it); the length, or
 * -1. The bytes go to *out (new) when decoded. */
static long dec(const char *s, size_t len, int flags, unsigned char **out) {
  unsigned char *buf = malloc(len / 4 * 3 + 2);
  long n = tpuci__base64_decode_to(s, len, flags, buf);
  if (n < 0 || out == NULL) free(buf);
  else *out = buf;
  return n;
}

static void expect_dec(const char *s, int flags, const char *want, size_t want_len) {
  unsigned char *out = NULL;
  long n = dec(s, strlen(s), flags, &out);
  if (n != (long) want_len) fail_msg("'%s' (flags %d): %ld bytes, want %zu", s, flags, n, want_len);
  assert_memory_equal(out, want, want_len);
  free(out);
}

static void expect_bad(const char *s, size_t len, int flags) {
  if (dec(s, len, flags, NULL) != -1) fail_msg("'%.*s' (flags %d) decoded", (int) len, s, flags);
}

static void test_encode(void **state) {
  (void) state;
  expect_enc("alice:s3cret", 12, 0, "YWxpY2U6czNjcmV0");
  expect_enc("abc", 3, 0, "YWJj");
  expect_enc("ab", 2, 0, "YWI=");
  expect_enc("a", 1, 0, "YQ==");
  expect_enc("", 0, 0, "");
  /* The URL alphabet: 0xfb 0xff -> "+/8=" in standard, "-_8=" in url. */
  expect_enc("\xfb\xff", 2, 0, "+/8=");
  expect_enc("\xfb\xff", 2, 1, "-_8=");
}

/* Docker configs and the engine's header: either alphabet, padding
 * optional. */
static void test_decode_lenient(void **state) {
  char *d;
  size_t len;
  (void) state;
  expect_dec("-_8=", 0, "\xfb\xff", 2);
  expect_dec("+/8=", 0, "\xfb\xff", 2);
  expect_dec("-/8", 0, "\xfb\xff", 2);    /* mixed, no padding */
  expect_dec("YWI", 0, "ab", 2);
  expect_dec("YQ", 0, "a", 1);
  expect_dec("YQ=", 0, "a", 1);           /* some of the padding */
  expect_dec("", 0, "", 0);
  expect_bad("Y", 1, 0);                  /* six bits: no byte */
  expect_bad("YWJjZ", 5, 0);
  expect_bad("Y=", 2, 0);
  expect_bad("YQ===", 5, 0);              /* three '=' */
  expect_bad("YW=x", 4, 0);               /* '=' inside */
  expect_bad("YW*x", 4, 0);
  expect_bad("YW x", 4, 0);               /* no whitespace */
  expect_bad("YWI=\n", 5, 0);
  expect_bad("YW\0x", 4, 0);              /* a NUL inside */
  expect_bad("YW\xc3\xa9", 4, 0);         /* not ASCII */
  /* The allocating form: NUL-terminated, nothing set on failure. */
  assert_int_equal(tpuci__base64_decode("YWxpY2U6czNjcmV0", &d, &len), 0);
  assert_int_equal(len, 12);
  assert_string_equal(d, "alice:s3cret");
  free(d);
  d = (char *) "untouched";
  assert_int_equal(tpuci__base64_decode("YQ===", &d, &len), -1);
  assert_string_equal(d, "untouched");
}

/* A results piece: the standard alphabet, whole groups with padding. */
static void test_decode_strict(void **state) {
  const int S = TPUCI__B64_STRICT;
  (void) state;
  expect_dec("YWJj", S, "abc", 3);
  expect_dec("YWI=", S, "ab", 2);
  expect_dec("YQ==", S, "a", 1);
  expect_dec("+/8=", S, "\xfb\xff", 2);
  expect_dec("YWJjYWJj", S, "abcabc", 6);
  expect_dec("", S, "", 0);
  /* The unused low bits of the last group are not checked. */
  expect_dec("YR==", S, "a", 1);
  expect_bad("-_8=", 4, S);               /* the URL alphabet */
  expect_bad("YWI", 3, S);                /* padding left out */
  expect_bad("YQ=", 3, S);
  expect_bad("YQ", 2, S);
  expect_bad("Y===", 4, S);
  expect_bad("====", 4, S);
  expect_bad("YW=j", 4, S);               /* '=' then data */
  expect_bad("YQ==YWJj", 8, S);           /* padding before the end */
  expect_bad("YWJj\n", 5, S);
  expect_bad("YWJ\0", 4, S);
}

/* Every byte value comes back, through both alphabets. */
static void test_roundtrip(void **state) {
  unsigned char data[256];
  size_t n;
  int i, url;
  (void) state;
  for (i = 0; i < 256; i++) data[i] = (unsigned char) i;
  for (n = 0; n <= sizeof(data); n += (n < 8 ? 1 : 37)) {
    for (url = 0; url < 2; url++) {
      char *s = tpuci__base64(data, n, url);
      unsigned char *out = NULL;
      long got = dec(s, strlen(s), 0, &out);
      assert_int_equal(got, (long) n);
      if (n > 0) assert_memory_equal(out, data, n);
      free(out);
      out = NULL;
      if (!url) {
        got = dec(s, strlen(s), TPUCI__B64_STRICT, &out);
        assert_int_equal(got, (long) n);
        if (n > 0) assert_memory_equal(out, data, n);
        free(out);
      } else if (strpbrk(s, "-_") != NULL) {
        assert_int_equal(dec(s, strlen(s), TPUCI__B64_STRICT, NULL), -1);
      }
      free(s);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_encode),
    cmocka_unit_test(test_decode_lenient),
    cmocka_unit_test(test_decode_strict),
    cmocka_unit_test(test_roundtrip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
