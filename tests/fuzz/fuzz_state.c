/* libFuzzer harness for the files tpuci reads that someone else can
 * write, all from the same bytes: a gcloud describe file (a spec's
 * `hosts { gcloud = ... }`), a results cache entry (the CI cache restores
 * another branch's), the history (.tpuci/history.jsonl), a quarantine
 * file, timings.json, collections.json and a TPU VM's `tpu-env` metadata;
 * and the text they hold made safe to print (tpuci__safe).
 *
 * Oracles beyond "no crash, no sanitizer report":
 * - gcloud: refused with "gcloud: 'FILE'...", or 1 to 256 workers, each
 *   an address of [0-9A-Za-z.:-] that does not start with '-';
 * - cache entry ("@STATE@" is the harness's state folder): an error
 *   naming the entry's path, or a hit that
 *   restores one cached attempt whose log (if any) is the one log file of
 *   <state>/runs/<run>/ and whose tests all passed, skipped or xfailed;
 *   never more than TPUCI__CACHE_TESTS_MAX of them;
 * - history: `tpuci flaky --json` is JSON; each test's recent codes are
 *   one of "pfkso-" a run, as many as there are runs; a run appended to the
 *   store reads back as the last code of its test;
 * - quarantine: refused with "q.yaml:" and no entry, or entries with every
 *   field, a valid date, "q.yaml:LINE" places, each covering its own test;
 * - timings and collections: refused with the file's name, or dumped and
 *   read back to the same dump;
 * - safe text: no control character (but newlines with `lines`), valid
 *   UTF-8, no line that starts a workflow command, no "##[".
 * See run.sh (clang, -fsanitize=fuzzer) and replay.c (any compiler, the
 * corpus only). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kind/pytest/collection.h"
#include "kind/pytest/flaky.h"
#include "kind/pytest/quarantine.h"
#include "kind/pytest/timings.h"
#include "report/cache.h"
#include "runtime/tpuvm.h"
#include "kind/pytest/config.h"
#include "kind/pytest/kind.h"
#include "spec/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                         \
  do {                                                                   \
    if (!(c)) {                                                          \
      fprintf(stderr, "fuzz_state: %s:%d: check failed: %s\n", __FILE__, \
              __LINE__, #c);                                             \
      abort();                                                           \
    }                                                                    \
  } while (0)

static const char *const KEY = "1111111111111111111111111111111111111111111111111111111111111111";
static char state[64]; /* a state folder of the harness's own */
static char *real_log; /* its one log: runs/20261204-161212-f7a3/unit/attempt-1.log */

static void write_file(const char *path, const char *s, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  CHECK(fwrite(s, 1, n, f) == n || n == 0);
  fclose(f);
}

static void cleanup(void) {
  char *cmd = tpuci__printf("rm -rf '%s'", state);
  if (system(cmd) != 0) fprintf(stderr, "fuzz_state: could not remove %s\n", state);
  free(cmd);
  free(real_log);
}

static void setup(void) {
  char *p;
  if (state[0] != '\0') return;
  snprintf(state, sizeof(state), "/tmp/tpuci-fuzz-state.XXXXXX");
  CHECK(mkdtemp(state) != NULL);
  atexit(cleanup);
  p = tpuci__printf("%s/runs/20261204-161212-f7a3/unit", state);
  CHECK(tpuci__mkdir_p(p, 0755) == 0);
  free(p);
  p = tpuci__printf("%s/cache", state);
  CHECK(tpuci__mkdir_p(p, 0755) == 0);
  free(p);
  p = tpuci__printf("%s/runs/20261204-161212-f7a3/unit/attempt-1.log", state);
  write_file(p, "the log\n", 8);
  real_log = realpath(p, NULL);
  CHECK(real_log != NULL);
  free(p);
}

/* The invariants of text made safe. */
static void check_safe(const char *out, int lines) {
  const char *p;
  int start = 1;
  CHECK(tpuci__text_problem(out, strlen(out), NULL) == NULL);
  CHECK(strstr(out, "##[") == NULL);
  for (p = out; *p; p++) {
    unsigned char c = (unsigned char) *p;
    if (start) {
      const char *q = p;
      while (*q == ' ') q++;
      CHECK(!(q[0] == ':' && q[1] == ':'));
      start = 0;
    }
    if (c == '\n' && lines) {
      start = 1;
      continue;
    }
    CHECK(c >= 0x20 && c != 0x7F);
  }
}

static void fuzz_safe(const char *s) {
  char *a = tpuci__safe(s, 0), *b = tpuci__safe(s, 1);
  check_safe(a, 0);
  check_safe(b, 1);
  free(a);
  free(b);
}

static void fuzz_gcloud(const char *s, size_t n) {
  tpuci__hostset_t hs;
  char *msg;
  size_t i;
  memset(&hs, 0, sizeof(hs));
  hs.gcloud = tpuci__strdup("fuzz.json");
  msg = tpuci__gcloud_parse(&hs, s, n, "me");
  if (msg != NULL) {
    CHECK(strncmp(msg, "gcloud: 'fuzz.json'", 19) == 0);
    free(msg);
  } else {
    CHECK(hs.nhosts >= 1 && hs.nhosts <= 256);
    for (i = 0; i < hs.nhosts; i++) {
      const char *h = hs.hosts[i].host;
      CHECK(h != NULL && h[0] != '\0' && h[0] != '-');
      CHECK(strspn(h, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.:-") ==
            strlen(h));
      CHECK(strcmp(hs.hosts[i].user, "me") == 0);
    }
  }
  tpuci__hostset_free(&hs);
}

/* s[0..n) with every "@STATE@" as the state folder's path: an entry
 * may name the harness's own log. */
static char *with_state(const char *s, size_t n, size_t *len) {
  tpuci__buf_t b;
  size_t i = 0;
  tpuci__buf_init(&b);
  while (i < n) {
    if (n - i >= 7 && memcmp(s + i, "@STATE@", 7) == 0) {
      tpuci__buf_adds(&b, state);
      i += 7;
    } else {
      tpuci__buf_add(&b, s + i, 1);
      i++;
    }
  }
  *len = b.len;
  return tpuci__buf_steal(&b);
}

static void fuzz_cache(const char *raw, size_t rawlen) {
  char *path = tpuci__printf("%s/cache/%s.json", state, KEY);
  size_t n;
  char *s = with_state(raw, rawlen, &n);
  tpuci__instance_t inst;
  tpuci__pytest_t py;
  tpuci__instance_result_t r;
  tpuci__err_t err = {0, NULL};
  json_t *entry = NULL;
  size_t i;
  int got;
  write_file(path, s, n);
  got = tpuci__cache_get(state, KEY, "unit", 0, &entry, &err);
  CHECK(got == 1 || got == -1);
  if (got < 0) {
    CHECK(entry == NULL && err.msg != NULL && strncmp(err.msg, path, strlen(path)) == 0);
    tpuci__err_clear(&err);
    free(path);
    free(s);
    return;
  }
  memset(&inst, 0, sizeof(inst));
  memset(&py, 0, sizeof(py));
  inst.name = "unit";
  inst.kind = &tpuci__pytest_config;
  inst.kind_config = &py;
  tpuci__cache_restore(entry, &inst, &r);
  json_decref(entry);
  CHECK(r.outcome == TPUCI_OUTCOME_CACHED && r.nattempts == 1);
  CHECK(r.attempts[0].outcome == TPUCI_OUTCOME_CACHED && r.attempts[0].cause != NULL);
  if (r.attempts[0].log_path != NULL) {
    char *real = realpath(r.attempts[0].log_path, NULL);
    CHECK(real != NULL && strcmp(real, real_log) == 0);
    free(real);
  }
  if (tpuci__res_history(&r) != NULL) {
    CHECK(tpuci__res_history(&r)->len <= TPUCI__CACHE_TESTS_MAX);
    for (i = 0; i < tpuci__res_history(&r)->len; i++) {
      const tpuci__test_t *f = tpuci__history_final(&tpuci__res_history(&r)->tests[i]);
      CHECK(tpuci__res_history(&r)->tests[i].id != NULL && tpuci__res_history(&r)->tests[i].id[0] != '\0');
      CHECK(f == NULL || f->outcome == TPUCI_TEST_PASSED || f->outcome == TPUCI_TEST_SKIPPED ||
            f->outcome == TPUCI_TEST_XFAIL);
    }
  }
  fuzz_safe(r.attempts[0].cause);
  tpuci__instance_result_free(&r);
  free(path);
  free(s);
}

/* A history of one passing test, "t.py::fuzzed" of instance "fz". */
static void one_pass(tpuci__history_t *h) {
  tpuci__junit_t rep;
  tpuci__junit_attempt_t a;
  memset(&rep, 0, sizeof(rep));
  rep.suites = 1;
  rep.items = tpuci__calloc(1, sizeof(*rep.items));
  rep.len = rep.cap = 1;
  rep.items[0].id = tpuci__strdup("t.py::fuzzed");
  rep.items[0].classname = tpuci__strdup("t");
  rep.items[0].name = tpuci__strdup("fuzzed");
  rep.items[0].outcome = TPUCI_TEST_PASSED;
  rep.items[0].line = -1;
  memset(&a, 0, sizeof(a));
  a.outcome = TPUCI_OUTCOME_PASSED;
  tpuci__history_init(h, "fz");
  tpuci__history_add(h, &a, &rep);
  tpuci__junit_free(&rep);
}

static void check_recent(json_t *recent, size_t *runs) {
  const char *key;
  json_t *v;
  size_t len = (size_t) -1;
  CHECK(recent != NULL && json_is_object(recent));
  json_object_foreach(recent, key, v) {
    const char *seq = json_string_value(v);
    CHECK(strchr(key, '\x1f') != NULL && seq != NULL);
    CHECK(strspn(seq, "pfkso-") == strlen(seq) && strlen(seq) > 0);
    CHECK(len == (size_t) -1 || len == strlen(seq));
    len = strlen(seq);
  }
  if (runs) *runs = len;
}

static void fuzz_history(const char *s, size_t n) {
  char *path = tpuci__printf("%s/history.jsonl", state), *out = NULL;
  tpuci__err_t err = {0, NULL};
  tpuci__history_t h;
  const tpuci__history_t *hs[1];
  tpuci__flaky_run_t run;
  json_t *recent, *doc;
  const char *seq;
  write_file(path, s, n);
  if (tpuci__flaky_report(path, 0, 1, &out, &err) == 0) {
    doc = json_loads(out, 0, NULL);
    CHECK(doc != NULL);
    json_decref(doc);
    free(out);
    out = NULL;
    CHECK(tpuci__flaky_report(path, 0, 0, &out, &err) == 0);
    fuzz_safe(out);
    free(out);
  } else {
    CHECK(err.msg != NULL);
    tpuci__err_clear(&err);
  }
  recent = tpuci__flaky_recent(path, 0);
  check_recent(recent, NULL);
  json_decref(recent);
  /* tpuci's own run appended to it: there, last. */
  one_pass(&h);
  hs[0] = &h;
  memset(&run, 0, sizeof(run));
  run.run_id = "20261204-161212-f7a3";
  run.start_ms = 1796347360000ull;
  run.histories = hs;
  run.n = 1;
  if (tpuci__flaky_append(path, &run, 0, &recent, NULL, &err) == 0) {
    check_recent(recent, NULL);
    seq = json_string_value(json_object_get(recent, "fz\x1ft.py::fuzzed"));
    CHECK(seq != NULL && seq[strlen(seq) - 1] == 'p');
    json_decref(recent);
  } else {
    CHECK(err.msg != NULL);
    tpuci__err_clear(&err);
  }
  tpuci__history_free(&h);
  free(path);
}

static void fuzz_quarantine(const char *s, size_t n) {
  tpuci__quarantine_t q;
  tpuci__err_t err = {0, NULL};
  tpuci__strv_t warn = {0};
  size_t i;
  tpuci__quarantine_init(&q);
  if (tpuci__quarantine_parse(s, n, "q.yaml", &q, &err) != 0) {
    CHECK(err.msg != NULL && strncmp(err.msg, "q.yaml", 6) == 0 && q.n == 0);
    tpuci__err_clear(&err);
    return;
  }
  CHECK(q.n <= TPUCI__QUARANTINE_MAX);
  tpuci__quarantine_expire(&q, 0, &warn);
  tpuci__quarantine_lint(&q, &warn);
  for (i = 0; i < q.n; i++) {
    const tpuci__quarantine_entry_t *e = &q.entries[i], *m;
    CHECK(e->test && e->test[0] && e->reason && e->reason[0] && e->owner && e->owner[0]);
    CHECK(e->until_day >= 0 && strncmp(e->where, "q.yaml:", 7) == 0);
    /* Its own test is covered, by it or an entry before it. */
    m = tpuci__quarantine_match(&q, e->test);
    CHECK(m != NULL && m <= e);
  }
  for (i = 0; i < warn.len; i++) fuzz_safe(warn.items[i]);
  tpuci__strv_free(&warn);
  tpuci__quarantine_free(&q);
}

static void fuzz_timings(const char *s, size_t n) {
  tpuci__timings_t t, u;
  tpuci__err_t err = {0, NULL};
  char *dump, *again;
  tpuci__timings_init(&t);
  if (tpuci__timings_load_string(&t, s, n, "timings.json", &err) != 0) {
    CHECK(err.msg != NULL && strstr(err.msg, "timings.json") != NULL && t.len == 0);
    tpuci__err_clear(&err);
    tpuci__timings_free(&t);
    return;
  }
  dump = tpuci__timings_dump(&t);
  tpuci__timings_init(&u);
  CHECK(tpuci__timings_load_string(&u, dump, strlen(dump), "dump", &err) == 0);
  again = tpuci__timings_dump(&u);
  CHECK(strcmp(dump, again) == 0);
  free(again);
  free(dump);
  tpuci__timings_free(&u);
  tpuci__timings_free(&t);
}

static void fuzz_collections(const char *s, size_t n) {
  tpuci__collections_t c, d;
  tpuci__err_t err = {0, NULL};
  char *dump, *again;
  tpuci__collections_init(&c);
  if (tpuci__collections_load_string(&c, s, n, "collections.json", &err) != 0) {
    CHECK(err.msg != NULL && c.len == 0);
    tpuci__err_clear(&err);
    tpuci__collections_free(&c);
    return;
  }
  dump = tpuci__collections_dump(&c);
  tpuci__collections_init(&d);
  CHECK(tpuci__collections_load_string(&d, dump, strlen(dump), "dump", &err) == 0);
  again = tpuci__collections_dump(&d);
  CHECK(strcmp(dump, again) == 0);
  free(again);
  free(dump);
  tpuci__collections_free(&d);
  tpuci__collections_free(&c);
}

/* tpu-env (doctor --real): a value is a part of one line of the text. */
static void fuzz_tpu_env(const char *s) {
  static const char *const keys[] = {"ACCELERATOR_TYPE", "WORKER_ID", "A"};
  size_t i;
  for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
    char *v = tpuci__tpu_env_value(s, keys[i]);
    if (v == NULL) continue;
    CHECK(strchr(v, '\n') == NULL && strlen(v) < strlen(s));
    CHECK(*v == '\0' || strstr(s, v) != NULL);
    free(v);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = tpuci__strndup((const char *) data, size);
  setup();
  fuzz_safe(s);
  fuzz_gcloud((const char *) data, size);
  fuzz_cache((const char *) data, size);
  fuzz_history((const char *) data, size);
  fuzz_quarantine((const char *) data, size);
  fuzz_timings((const char *) data, size);
  fuzz_collections((const char *) data, size);
  fuzz_tpu_env(s);
  free(s);
  return 0;
}
