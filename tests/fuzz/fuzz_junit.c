/* libFuzzer harness for the untrusted inputs of per-test results: a JUnit
 * report (tpuci__junit_parse), `pytest --collect-only -q` output, a
 * timings file and a failure's traceback (pytest/trace.h), all from the
 * same bytes.
 *
 * Oracles beyond "no crash, no sanitizer report": a failed parse has a
 * message with a position; every test has an id and bounded texts; the
 * merged report written from what was parsed parses again, with every
 * test case. See run.sh (clang, -fsanitize=fuzzer) and replay.c (any
 * compiler, the corpus only). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind/pytest/junit.h"
#include "kind/pytest/shard.h"
#include "kind/pytest/timings.h"
#include "kind/pytest/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                        \
  do {                                                                  \
    if (!(c)) {                                                         \
      fprintf(stderr, "fuzz_junit: %s:%d: check failed: %s\n", __FILE__, \
              __LINE__, #c);                                            \
      abort();                                                          \
    }                                                                   \
  } while (0)

static void check_test(const tpuci__test_t *t) {
  CHECK(t->id != NULL && t->classname != NULL && t->name != NULL);
  CHECK(t->outcome >= TPUCI_TEST_PASSED && t->outcome < TPUCI_TEST__COUNT);
  CHECK(t->time_s >= 0 && t->time_s <= 1e12);
  CHECK(t->message == NULL || strlen(t->message) < TPUCI__JUNIT_MESSAGE_MAX + 64);
  CHECK(t->text == NULL || strlen(t->text) < TPUCI__JUNIT_TEXT_MAX + 64);
  CHECK(t->system_out == NULL || strlen(t->system_out) < TPUCI__JUNIT_TEXT_MAX + 64);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The test cases the merged report writes for h's tests: one per
 * distinct (classname, name) of each test's last run. */
static size_t distinct_cases(const tpuci__history_t *h) {
  char **keys;
  size_t i, n = 0;
  if (h->len == 0) return 0;
  keys = calloc(h->len, sizeof(*keys));
  CHECK(keys != NULL);
  for (i = 0; i < h->len; i++) {
    const tpuci__test_t *f = &h->tests[i].runs[h->tests[i].len - 1].result;
    keys[i] = tpuci__printf("%s%c%s", f->classname ? f->classname : "", 1,
                            f->name ? f->name : "");
  }
  qsort(keys, h->len, sizeof(*keys), cmp_str);
  for (i = 0; i < h->len; i++)
    if (i == 0 || strcmp(keys[i], keys[i - 1]) != 0) n++;
  for (i = 0; i < h->len; i++) free(keys[i]);
  free(keys);
  return n;
}

static size_t count_of(const char *s, const char *what) {
  size_t n = 0;
  for (s = s ? strstr(s, what) : NULL; s; s = strstr(s + 1, what)) n++;
  return n;
}

/* `tpuci merge`'s JUnit: the merged report twice is one document with
 * every test case twice and the totals doubled; with the input first, an
 * input that is not such a report is an error with a position. */
static void fuzz_merge(const char *s, size_t n, const tpuci__buf_t *report, size_t cases) {
  tpuci__junit_doc_t docs[2];
  tpuci__junit_t back = {0};
  tpuci__err_t err = {0};
  tpuci__buf_t out;
  docs[0].name = docs[1].name = "report";
  docs[0].data = docs[1].data = report->data;
  docs[0].len = docs[1].len = report->len;
  tpuci__buf_init(&out);
  CHECK(tpuci__junit_merge_docs(&out, docs, 2, &err) == 0);
  if (tpuci__junit_parse(out.data, out.len, &back, &err) != 0) {
    fprintf(stderr, "fuzz_junit: two merged reports made one do not parse: %s\n", err.msg);
    abort();
  }
  /* Parsing joins a test case named twice: count the suites instead. */
  CHECK(back.len == cases && count_of(out.data, "\n  <testsuite ") ==
                                 2 * count_of(report->data, "\n  <testsuite "));
  tpuci__junit_free(&back);
  tpuci__buf_free(&out);
  tpuci__buf_init(&out);
  docs[0].name = "input";
  docs[0].data = s;
  docs[0].len = n;
  if (tpuci__junit_merge_docs(&out, docs, 2, &err) != 0) {
    CHECK(err.msg != NULL && strncmp(err.msg, "input:", 6) == 0);
    tpuci__err_clear(&err);
  }
  tpuci__buf_free(&out);
}

static void fuzz_junit(const char *s, size_t n, unsigned char mode) {
  tpuci__junit_t j = {0}, back = {0};
  tpuci__err_t err = {0};
  tpuci__history_t h;
  tpuci__history_summary_t sum;
  tpuci__junit_attempt_t a;
  tpuci__strv_t again = {0};
  const tpuci__history_t *hs[1];
  tpuci__buf_t out;
  size_t i, expect, tpuci_named = 0;
  int r = tpuci__junit_parse(s, n, &j, &err);

  if (r != 0) {
    CHECK(r == TPUCI_EIO);
    CHECK(err.msg != NULL && strncmp(err.msg, "junit:", 6) == 0);
    tpuci__err_clear(&err);
  }
  for (i = 0; i < j.len; i++) {
    check_test(&j.items[i]);
    if (strcmp(j.items[i].classname, "tpuci") == 0) tpuci_named++;
  }

  /* Two attempts: the report (as a failure or a timeout), then a crash. */
  tpuci__history_init(&h, (mode & 4) ? "py <&> \"x\"" : "unit");
  memset(&a, 0, sizeof(a));
  a.outcome = (mode & 1) ? TPUCI_OUTCOME_TIMEOUT : TPUCI_OUTCOME_FAILED;
  a.exit_code = (mode & 1) ? -1 : 1;
  a.cause = "fuzz";
  tpuci__history_add(&h, &a, r == 0 || (mode & 8) ? &j : NULL);
  if (mode & 2) {
    a.outcome = TPUCI_OUTCOME_OOM;
    tpuci__history_add(&h, &a, NULL);
  }
  tpuci__history_failed_ids(&h, &again, NULL);
  tpuci__history_summarize(&h, &sum);
  CHECK(again.len <= h.len);
  tpuci__strv_free(&again);

  tpuci__buf_init(&out);
  hs[0] = &h;
  tpuci__junit_write_merged(&out, hs, 1);
  r = tpuci__junit_parse(out.data, out.len, &back, &err);
  if (r != 0) {
    fprintf(stderr, "fuzz_junit: the merged report does not parse: %s\n", err.msg);
    fwrite(out.data, 1, out.len, stderr);
    abort();
  }
  /* Every test case comes back, but the merged report carries no `file`
   * (neither Surefire's nor Jenkins' schema has it): two tests whose ids
   * differed only in where `file` put them are one test case when read
   * back. So: one per distinct classname and name written. */
  expect = distinct_cases(&h) + sum.abnormal_attempts;
  /* A test case the input named like ours may merge with one of ours. */
  CHECK(back.len == expect || (tpuci_named > 0 && back.len < expect));
  fuzz_merge(s, n, &out, back.len);
  tpuci__junit_free(&back);
  tpuci__buf_free(&out);
  tpuci__history_free(&h);
  tpuci__junit_free(&j);
}

static void fuzz_collect_and_timings(const char *s, size_t n) {
  tpuci__strv_t ids = {0};
  tpuci__err_t err = {0};
  tpuci__timings_t t;
  tpuci__shard_plan_t p;
  size_t i, total = 0;

  if (tpuci__collect_parse(s, n, &ids, &err) != 0) {
    CHECK(err.msg != NULL);
    tpuci__err_clear(&err);
  }
  for (i = 0; i < ids.len; i++) CHECK(strstr(ids.items[i], "::") != NULL);

  tpuci__timings_init(&t);
  if (tpuci__timings_load_string(&t, s, n, "fuzz", &err) != 0) {
    CHECK(err.msg != NULL && t.len == 0);
    tpuci__err_clear(&err);
  } else {
    char *dump = tpuci__timings_dump(&t);
    tpuci__timings_t u;
    tpuci__timings_init(&u);
    CHECK(tpuci__timings_load_string(&u, dump, strlen(dump), "dump", &err) == 0);
    CHECK(u.len == t.len);
    tpuci__timings_free(&u);
    free(dump);
  }
  CHECK(tpuci__shard_plan(&(tpuci__shard_ask_t){.ids = (const char *const *) ids.items,
                                                .n = ids.len,
                                                .timings = &t,
                                                .shards = 3,
                                                .by = TPUCI__SHARD_BY_TEST},
                          &p, &err) == 0);
  for (i = 0; i < p.n; i++) total += p.shards[i].ids.len;
  CHECK(total == ids.len);
  tpuci__shard_plan_free(&p);
  tpuci__timings_free(&t);
  tpuci__strv_free(&ids);
}

/* A traceback: every frame has a path and a line; the exception's class
 * is a dotted name. */
static void fuzz_trace(const char *s, size_t n) {
  char *text = tpuci__strndup(s, n), *exc;
  tpuci__trace_frame_t *f = NULL;
  size_t nf = 0, i;
  tpuci__trace_frames(text, &f, &nf);
  for (i = 0; i < nf; i++) CHECK(f[i].path[0] != '\0' && f[i].line > 0);
  tpuci__trace_frames_free(f, nf);
  exc = tpuci__trace_exception(text, text);
  CHECK(exc == NULL || (exc[0] != '\0' && strspn(exc, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                  "0123456789_.") == strlen(exc)));
  free(exc);
  free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  unsigned char mode = 0;
  if (size > 0) mode = (unsigned char) (data[size - 1] & 0x0F);
  fuzz_junit((const char *) data, size, mode);
  fuzz_collect_and_timings((const char *) data, size);
  fuzz_trace((const char *) data, size);
  return 0;
}
