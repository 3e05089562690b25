/* Pure functions of core/base/duration.c and core/sched/outcome.c: durations, sizes,
 * retry delays, how an attempt's end becomes an outcome, and an
 * instance's final outcome. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "plan/plan.h"
#include "sched/scheduler.h"
#include "base/util.h"

static void assert_duration(const char *s, uint64_t want) {
  uint64_t ms = 12345;
  if (tpuci__duration_parse(s, &ms) != 0) fail_msg("'%s' refused", s);
  if (ms != want)
    fail_msg("'%s': want %llu ms, got %llu", s, (unsigned long long) want,
             (unsigned long long) ms);
}

static void assert_bad_duration(const char *s) {
  uint64_t ms = 12345;
  if (tpuci__duration_parse(s, &ms) == 0)
    fail_msg("'%s' accepted as %llu ms", s ? s : "(null)", (unsigned long long) ms);
  assert_int_equal(ms, 12345); /* Untouched on failure. */
}

static void test_duration_parse(void **state) {
  (void) state;
  assert_duration("90s", 90000);
  assert_duration("20m", 1200000);
  assert_duration("1h30m", 5400000);
  assert_duration("1h30m15s", 5415000);
  assert_duration("500ms", 500);
  assert_duration("1.5s", 1500);
  assert_duration(".5s", 500);
  assert_duration("2d", 172800000);
  assert_duration("1m500ms", 60500);
  /* A bare number is seconds. */
  assert_duration("90", 90000);
  assert_duration("0.25", 250);
  assert_duration("0", 0);
  /* 100 years is the largest. */
  assert_duration("36500d", 36500ULL * 86400000ULL);

  assert_bad_duration(NULL);
  assert_bad_duration("");
  assert_bad_duration("10 minutes");
  assert_bad_duration("1h 30m");
  assert_bad_duration("1h30");      /* a unit on every number */
  assert_bad_duration("1m1h");      /* units in decreasing order */
  assert_bad_duration("1h1h");      /* each unit once */
  assert_bad_duration("1ms5s");
  assert_bad_duration("-5s");
  assert_bad_duration("5x");
  assert_bad_duration("5S");
  assert_bad_duration("s");
  assert_bad_duration("ms");
  assert_bad_duration("5sm");
  assert_bad_duration("1.5.5s");
  assert_bad_duration("1e3");
  assert_bad_duration("36501d");
}

static void assert_format(uint64_t ms, const char *want) {
  char buf[32];
  assert_string_equal(tpuci__duration_format(ms, buf, sizeof(buf)), want);
}

static void test_duration_format(void **state) {
  (void) state;
  assert_format(0, "0ms");
  assert_format(150, "150ms");
  assert_format(999, "999ms");
  assert_format(1000, "1s");
  assert_format(2500, "2.5s");
  assert_format(5000, "5s");
  assert_format(60000, "1m00s");
  assert_format(90000, "1m30s");
  assert_format(3600000, "1h00m00s");
  assert_format(5400000, "1h30m00s");
  assert_format(3 * 86400000ULL, "72h00m00s");
}

static void test_duration_format_rounding(void **state) {
  char buf[32];
  (void) state;
  /* Tenths are cut, never rounded up into the next unit. */
  tpuci__duration_format(59999, buf, sizeof(buf));
  assert_string_equal(buf, "59.9s");
  tpuci__duration_format(1050, buf, sizeof(buf));
  assert_string_equal(buf, "1.0s");
}

static void assert_size(const char *s, uint64_t want) {
  uint64_t n = 7;
  if (tpuci__size_parse(s, &n) != 0) fail_msg("'%s' refused", s);
  if (n != want)
    fail_msg("'%s': want %llu, got %llu", s, (unsigned long long) want,
             (unsigned long long) n);
}

static void test_size_parse(void **state) {
  uint64_t n = 7;
  static const char *bad[] = {"", "2 g", "g", "2x", "-1", "1e3", "2gbb",
                              "1000000000000000000000", NULL};
  size_t i;
  (void) state;
  assert_size("512m", 512ULL << 20);
  assert_size("2g", 2ULL << 30);
  assert_size("2G", 2ULL << 30);
  assert_size("1.5GiB", 3ULL << 29);
  assert_size("2gb", 2ULL << 30);
  assert_size("10k", 10240);
  assert_size("1kb", 1024);
  assert_size("1KiB", 1024);
  assert_size("2TiB", 2ULL << 40);
  assert_size("100b", 100);
  assert_size("1048576", 1048576);
  assert_size("0", 0);
  assert_int_equal(tpuci__size_parse(NULL, &n), -1);
  for (i = 0; bad[i]; i++)
    if (tpuci__size_parse(bad[i], &n) == 0)
      fail_msg("'%s' accepted as %llu", bad[i], (unsigned long long) n);
}

static void test_retry_delay(void **state) {
  tpuci__retry_t r;
  (void) state;
  r.attempts = 10;
  r.on = 0;
  r.backoff_ms = 1000;
  r.factor = 2.0;
  r.max_backoff_ms = 60000;
  /* Attempt 2 waits the backoff; each later one `factor` times longer. */
  assert_int_equal(tpuci__retry_delay(&r, 2), 1000);
  assert_int_equal(tpuci__retry_delay(&r, 3), 2000);
  assert_int_equal(tpuci__retry_delay(&r, 4), 4000);
  assert_int_equal(tpuci__retry_delay(&r, 7), 32000);
  /* Capped. */
  assert_int_equal(tpuci__retry_delay(&r, 8), 60000);
  assert_int_equal(tpuci__retry_delay(&r, 100), 60000);
  assert_int_equal(tpuci__retry_delay(&r, 1000000), 60000);
  /* A backoff above the cap is cut to it. */
  r.backoff_ms = 90000;
  assert_int_equal(tpuci__retry_delay(&r, 2), 60000);
  /* Fractional factors. */
  r.backoff_ms = 1000;
  r.factor = 1.5;
  assert_int_equal(tpuci__retry_delay(&r, 3), 1500);
  assert_int_equal(tpuci__retry_delay(&r, 4), 2250);
  /* A factor of 1 is a constant delay; a zero backoff retries at once. */
  r.factor = 1.0;
  assert_int_equal(tpuci__retry_delay(&r, 50), 1000);
  r.backoff_ms = 0;
  r.factor = 2.0;
  assert_int_equal(tpuci__retry_delay(&r, 5), 0);
  /* No cap given: never more than a day, and no overflow. */
  r.backoff_ms = 1000;
  r.max_backoff_ms = 0;
  assert_int_equal(tpuci__retry_delay(&r, 100000), 24u * 3600 * 1000);
  /* No cap (max 0), for a few attempts. */
  r.backoff_ms = 1000;
  r.max_backoff_ms = 0;
  assert_int_equal(tpuci__retry_delay(&r, 10), 256000);
}

static void test_retry_wants(void **state) {
  tpuci__retry_t r;
  (void) state;
  memset(&r, 0, sizeof(r));
  r.on = (1u << TPUCI_OUTCOME_FAILED) | (1u << TPUCI_OUTCOME_TIMEOUT) |
         (1u << TPUCI_OUTCOME_OOM) | (1u << TPUCI_OUTCOME_INFRA);
  assert_true(tpuci__retry_wants(&r, TPUCI_OUTCOME_FAILED));
  assert_true(tpuci__retry_wants(&r, TPUCI_OUTCOME_TIMEOUT));
  assert_true(tpuci__retry_wants(&r, TPUCI_OUTCOME_OOM));
  assert_true(tpuci__retry_wants(&r, TPUCI_OUTCOME_INFRA));
  assert_false(tpuci__retry_wants(&r, TPUCI_OUTCOME_PASSED));
  assert_false(tpuci__retry_wants(&r, TPUCI_OUTCOME_NONE));
  assert_false(tpuci__retry_wants(&r, TPUCI_OUTCOME_CANCELLED));
  assert_false(tpuci__retry_wants(&r, TPUCI_OUTCOME_FLAKY));
  assert_false(tpuci__retry_wants(&r, -1));
  assert_false(tpuci__retry_wants(&r, 40));
  /* A passed attempt is never retried, whatever the mask says. */
  r.on = ~0u;
  assert_false(tpuci__retry_wants(&r, TPUCI_OUTCOME_PASSED));
  r.on = 1u << TPUCI_OUTCOME_TIMEOUT;
  assert_false(tpuci__retry_wants(&r, TPUCI_OUTCOME_FAILED));
  assert_true(tpuci__retry_wants(&r, TPUCI_OUTCOME_TIMEOUT));
}

static tpuci_outcome_t classify(int exit_code, int sig, int oom, int infra,
                                int timed_out, int cancelled) {
  tpuci__exit_t ex;
  memset(&ex, 0, sizeof(ex));
  ex.exit_code = exit_code;
  ex.term_signal = sig;
  ex.oom = oom;
  ex.infra = infra;
  return tpuci__classify(&ex, timed_out, cancelled);
}

static void test_classify(void **state) {
  (void) state;
  assert_int_equal(classify(0, 0, 0, 0, 0, 0), TPUCI_OUTCOME_PASSED);
  assert_int_equal(classify(1, 0, 0, 0, 0, 0), TPUCI_OUTCOME_FAILED);
  assert_int_equal(classify(-1, 9, 0, 0, 0, 0), TPUCI_OUTCOME_FAILED);
  assert_int_equal(classify(0, 15, 0, 0, 0, 0), TPUCI_OUTCOME_FAILED);
  assert_int_equal(classify(137, 0, 1, 0, 0, 0), TPUCI_OUTCOME_OOM);
  assert_int_equal(classify(-1, 0, 0, 1, 0, 0), TPUCI_OUTCOME_INFRA);
  /* What tpuci did wins over how the attempt ended... */
  assert_int_equal(classify(143, 0, 0, 0, 1, 0), TPUCI_OUTCOME_TIMEOUT);
  assert_int_equal(classify(0, 0, 0, 0, 1, 0), TPUCI_OUTCOME_TIMEOUT);
  assert_int_equal(classify(137, 0, 1, 1, 1, 0), TPUCI_OUTCOME_TIMEOUT);
  assert_int_equal(classify(0, 0, 0, 0, 1, 1), TPUCI_OUTCOME_CANCELLED);
  assert_int_equal(classify(0, 0, 0, 0, 0, 1), TPUCI_OUTCOME_CANCELLED);
  /* ... and an engine failure over an OOM report. */
  assert_int_equal(classify(137, 0, 1, 1, 0, 0), TPUCI_OUTCOME_INFRA);
}

static tpuci_outcome_t final2(tpuci_outcome_t a, tpuci_outcome_t b) {
  tpuci_outcome_t v[2];
  v[0] = a;
  v[1] = b;
  return tpuci__final_outcome(v, 2);
}

static void test_final_outcome(void **state) {
  tpuci_outcome_t one = TPUCI_OUTCOME_PASSED;
  tpuci_outcome_t three[3] = {TPUCI_OUTCOME_TIMEOUT, TPUCI_OUTCOME_INFRA,
                              TPUCI_OUTCOME_PASSED};
  (void) state;
  /* Never ran. */
  assert_int_equal(tpuci__final_outcome(NULL, 0), TPUCI_OUTCOME_CANCELLED);
  assert_int_equal(tpuci__final_outcome(&one, 1), TPUCI_OUTCOME_PASSED);
  one = TPUCI_OUTCOME_TIMEOUT;
  assert_int_equal(tpuci__final_outcome(&one, 1), TPUCI_OUTCOME_TIMEOUT);
  /* Failed, then passed: flaky, never hidden as passed. */
  assert_int_equal(final2(TPUCI_OUTCOME_FAILED, TPUCI_OUTCOME_PASSED),
                   TPUCI_OUTCOME_FLAKY);
  assert_int_equal(final2(TPUCI_OUTCOME_INFRA, TPUCI_OUTCOME_PASSED),
                   TPUCI_OUTCOME_FLAKY);
  assert_int_equal(tpuci__final_outcome(three, 3), TPUCI_OUTCOME_FLAKY);
  /* The last attempt decides otherwise. */
  assert_int_equal(final2(TPUCI_OUTCOME_FAILED, TPUCI_OUTCOME_FAILED),
                   TPUCI_OUTCOME_FAILED);
  assert_int_equal(final2(TPUCI_OUTCOME_FAILED, TPUCI_OUTCOME_TIMEOUT),
                   TPUCI_OUTCOME_TIMEOUT);
  assert_int_equal(final2(TPUCI_OUTCOME_FAILED, TPUCI_OUTCOME_CANCELLED),
                   TPUCI_OUTCOME_CANCELLED);
  /* A cancelled attempt before a pass is not a failure. */
  assert_int_equal(final2(TPUCI_OUTCOME_CANCELLED, TPUCI_OUTCOME_PASSED),
                   TPUCI_OUTCOME_PASSED);
}

static void test_outcome_names(void **state) {
  int o;
  (void) state;
  for (o = 0; o < TPUCI_OUTCOME__COUNT; o++)
    assert_int_equal(tpuci__outcome_parse(tpuci_outcome_name((tpuci_outcome_t) o)), o);
  assert_string_equal(tpuci_outcome_name(TPUCI_OUTCOME_FLAKY), "flaky");
  assert_string_equal(tpuci_outcome_name(TPUCI_OUTCOME_NONE), "none");
  assert_int_equal(tpuci__outcome_parse("timeout"), TPUCI_OUTCOME_TIMEOUT);
  assert_int_equal(tpuci__outcome_parse("Timeout"), -1);
  assert_int_equal(tpuci__outcome_parse("timout"), -1);
  assert_int_equal(tpuci__outcome_parse(""), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_duration_parse),
    cmocka_unit_test(test_duration_format),
    cmocka_unit_test(test_duration_format_rounding),
    cmocka_unit_test(test_size_parse),
    cmocka_unit_test(test_retry_delay),
    cmocka_unit_test(test_retry_wants),
    cmocka_unit_test(test_classify),
    cmocka_unit_test(test_final_outcome),
    cmocka_unit_test(test_outcome_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
