/* The engine's stdout/stderr stream demultiplexer. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/engine/demux.h"
#include "base/util.h"

typedef struct {
  tpuci__buf_t out[3];  /* by stream */
  tpuci__buf_t order;   /* stream ids of consecutive pieces, merged */
  size_t calls;
} sink_t;

static void sink_cb(void *data, int stream, const char *buf, size_t len) {
  sink_t *s = data;
  char id = (char) ('0' + stream);
  assert_true(stream == 1 || stream == 2);
  assert_true(len > 0);
  tpuci__buf_add(&s->out[stream], buf, len);
  if (s->order.len == 0 || s->order.data[s->order.len - 1] != id)
    tpuci__buf_add(&s->order, &id, 1);
  s->calls++;
}

static void sink_init(sink_t *s) {
  memset(s, 0, sizeof(*s));
  tpuci__buf_init(&s->out[1]);
  tpuci__buf_init(&s->out[2]);
  tpuci__buf_init(&s->order);
  tpuci__buf_add(&s->out[1], "", 0);
  tpuci__buf_add(&s->out[2], "", 0);
  tpuci__buf_add(&s->order, "", 0);
}

static void sink_free(sink_t *s) {
  tpuci__buf_free(&s->out[1]);
  tpuci__buf_free(&s->out[2]);
  tpuci__buf_free(&s->order);
}

/* Appends one frame. */
static void frame(tpuci__buf_t *b, int stream, const char *payload, size_t n) {
  unsigned char h[8] = {(unsigned char) stream, 0, 0, 0,
                        (unsigned char) (n >> 24), (unsigned char) (n >> 16),
                        (unsigned char) (n >> 8), (unsigned char) n};
  tpuci__buf_add(b, (const char *) h, 8);
  tpuci__buf_add(b, payload, n);
}

static void sample(tpuci__buf_t *b) {
  tpuci__buf_init(b);
  frame(b, 1, "hello\n", 6);
  frame(b, 2, "oops\n", 5);
  frame(b, 1, "", 0);            /* empty frames happen */
  frame(b, 1, "world\n", 6);
  frame(b, 2, "x", 1);
}

static void check_sample(sink_t *s) {
  assert_string_equal(s->out[1].data, "hello\nworld\n");
  assert_string_equal(s->out[2].data, "oops\nx");
  assert_string_equal(s->order.data, "1212");
}

static void test_whole(void **state) {
  tpuci__buf_t b;
  tpuci__demux_t d;
  sink_t s;
  (void) state;
  sample(&b);
  sink_init(&s);
  tpuci__demux_init(&d);
  assert_int_equal(tpuci__demux_feed(&d, b.data, b.len, sink_cb, &s), 0);
  check_sample(&s);
  assert_int_equal(d.frames, 5);
  assert_false(tpuci__demux_partial(&d));
  sink_free(&s);
  tpuci__buf_free(&b);
}

/* Two chunks, split at every byte position. */
static void test_split_everywhere(void **state) {
  tpuci__buf_t b;
  size_t cut;
  (void) state;
  sample(&b);
  for (cut = 0; cut <= b.len; cut++) {
    tpuci__demux_t d;
    sink_t s;
    sink_init(&s);
    tpuci__demux_init(&d);
    assert_int_equal(tpuci__demux_feed(&d, b.data, cut, sink_cb, &s), 0);
    assert_int_equal(tpuci__demux_feed(&d, b.data + cut, b.len - cut, sink_cb, &s), 0);
    check_sample(&s);
    assert_false(tpuci__demux_partial(&d));
    sink_free(&s);
  }
  tpuci__buf_free(&b);
}

/* One byte at a time, and three-way splits. */
static void test_bytewise_and_three_way(void **state) {
  tpuci__buf_t b;
  size_t i, j;
  tpuci__demux_t d;
  sink_t s;
  (void) state;
  sample(&b);
  sink_init(&s);
  tpuci__demux_init(&d);
  for (i = 0; i < b.len; i++) tpuci__demux_feed(&d, b.data + i, 1, sink_cb, &s);
  check_sample(&s);
  sink_free(&s);
  for (i = 0; i <= b.len; i++)
    for (j = i; j <= b.len; j++) {
      sink_init(&s);
      tpuci__demux_init(&d);
      tpuci__demux_feed(&d, b.data, i, sink_cb, &s);
      tpuci__demux_feed(&d, b.data + i, j - i, sink_cb, &s);
      tpuci__demux_feed(&d, b.data + j, b.len - j, sink_cb, &s);
      check_sample(&s);
      sink_free(&s);
    }
  tpuci__buf_free(&b);
}

/* A 3 MiB frame (the size needs all four length bytes) in odd chunks. */
static void test_large_frame(void **state) {
  size_t n = 3u * 1024 * 1024 + 17, i, off;
  char *payload = malloc(n);
  tpuci__buf_t b;
  tpuci__demux_t d;
  sink_t s;
  (void) state;
  for (i = 0; i < n; i++) payload[i] = (char) ('a' + i % 26);
  tpuci__buf_init(&b);
  frame(&b, 2, payload, n);
  frame(&b, 1, "end", 3);
  sink_init(&s);
  tpuci__demux_init(&d);
  for (off = 0; off < b.len;) {
    size_t k = 65537;
    if (k > b.len - off) k = b.len - off;
    tpuci__demux_feed(&d, b.data + off, k, sink_cb, &s);
    off += k;
  }
  assert_int_equal(s.out[2].len, n);
  assert_memory_equal(s.out[2].data, payload, n);
  assert_string_equal(s.out[1].data, "end");
  assert_int_equal(d.frames, 2);
  sink_free(&s);
  tpuci__buf_free(&b);
  free(payload);
}

/* Stream 0 counts as stdout, 3 (engine errors) as stderr. */
static void test_stream_ids(void **state) {
  tpuci__buf_t b;
  tpuci__demux_t d;
  sink_t s;
  (void) state;
  tpuci__buf_init(&b);
  frame(&b, 0, "in", 2);
  frame(&b, 3, "engine", 6);
  sink_init(&s);
  tpuci__demux_init(&d);
  tpuci__demux_feed(&d, b.data, b.len, sink_cb, &s);
  assert_string_equal(s.out[1].data, "in");
  assert_string_equal(s.out[2].data, "engine");
  sink_free(&s);
  tpuci__buf_free(&b);
}

/* A TTY stream has no headers: it passes through as stdout. */
static void test_raw(void **state) {
  const char *text = "plain output from a tty\nsecond line\n";
  tpuci__demux_t d;
  sink_t s;
  (void) state;
  sink_init(&s);
  tpuci__demux_init(&d);
  assert_int_equal(tpuci__demux_feed(&d, text, 5, sink_cb, &s), 0);
  assert_int_equal(tpuci__demux_feed(&d, text + 5, strlen(text) - 5, sink_cb, &s), 1);
  assert_string_equal(s.out[1].data, text);
  assert_int_equal(s.out[2].len, 0);
  sink_free(&s);
  /* Shorter than a header: flushed at the end. */
  sink_init(&s);
  tpuci__demux_init(&d);
  tpuci__demux_feed(&d, "hi\n", 3, sink_cb, &s);
  assert_int_equal(s.out[1].len, 0);
  tpuci__demux_flush(&d, sink_cb, &s);
  assert_string_equal(s.out[1].data, "hi\n");
  sink_free(&s);
}

/* A stream cut inside a frame is reported as partial. */
static void test_partial(void **state) {
  tpuci__buf_t b;
  tpuci__demux_t d;
  sink_t s;
  (void) state;
  tpuci__buf_init(&b);
  frame(&b, 1, "abcdef", 6);
  sink_init(&s);
  tpuci__demux_init(&d);
  tpuci__demux_feed(&d, b.data, b.len - 2, sink_cb, &s);
  assert_true(tpuci__demux_partial(&d));
  assert_string_equal(s.out[1].data, "abcd");
  tpuci__demux_flush(&d, sink_cb, &s); /* frames were seen: nothing more */
  assert_string_equal(s.out[1].data, "abcd");
  sink_free(&s);
  tpuci__buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_whole),
      cmocka_unit_test(test_split_everywhere),
      cmocka_unit_test(test_bytewise_and_three_way),
      cmocka_unit_test(test_large_frame),
      cmocka_unit_test(test_stream_ids),
      cmocka_unit_test(test_raw),
      cmocka_unit_test(test_partial),
  };
  return cmocka_run_group_tests_name("docker_demux", tests, NULL, NULL);
}
