/* libFuzzer harness for the spec loader: the input is a spec, loaded
 * through the real loader (the sandbox, the prelude, expansion) with
 * small caps: 50 ms and 16 MiB.
 *
 * Oracles beyond "no crash, no sanitizer report": the load ends within
 * its time cap (plus slack for a slow machine), whatever the spec does;
 * a refused spec gives TPUCI_ESPEC or TPUCI_ELIMIT, one line naming the
 * file, and no instances; a loaded one has at most the instance cap, and
 * every string of its plan is valid UTF-8 without NUL bytes, so its JSON
 * and text forms can be made. See run.sh (clang, -fsanitize=fuzzer) and
 * replay.c (any compiler, the corpus only). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "kind/kinds.h"
#include "plan/plan.h"
#include "spec/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP_MS 50
#define CAP_MEMORY ((size_t) 16 * 1024 * 1024)
/* Sanitizers slow everything down; a stop after the deadline is at most
 * a millisecond of work away, then the state is freed. */
#define SLACK_MS 3000

#define CHECK(c)                                                        \
  do {                                                                  \
    if (!(c)) {                                                         \
      fprintf(stderr, "fuzz_spec: %s:%d: check failed: %s\n", __FILE__, \
              __LINE__, #c);                                            \
      abort();                                                          \
    }                                                                   \
  } while (0)

static void check_text(const char *s) {
  if (s == NULL) return;
  CHECK(tpuci__text_problem(s, strlen(s), NULL) == NULL);
}

static void check_strv(const tpuci__strv_t *v) {
  size_t i;
  for (i = 0; i < v->len; i++) check_text(v->items[i]);
}

static void check_kv(const tpuci__kvlist_t *kv) {
  size_t i;
  for (i = 0; i < kv->len; i++) {
    check_text(kv->items[i].key);
    check_text(kv->items[i].value);
  }
}

static void check_plan(const tpuci__plan_t *p) {
  size_t i, k;
  char *s;
  CHECK(p->ninstances >= 1 || p->ninstances == 0);
  CHECK(p->ninstances <= 100000);
  for (i = 0; i < p->ninstances; i++) {
    const tpuci__instance_t *in = &p->instances[i];
    check_text(in->name);
    check_text(in->job);
    check_text(in->run);
    check_text(in->workdir);
    check_strv(&in->argv);
    check_kv(&in->env);
    check_kv(&in->matrix);
    for (k = 0; k < in->nmounts; k++) {
      check_text(in->mounts[k].source);
      check_text(in->mounts[k].target);
    }
    CHECK(in->image < 0 || (size_t) in->image < p->nimages);
    CHECK(in->topology < 0 || (size_t) in->topology < p->ntopologies);
  }
  check_strv(&p->warnings);
  s = tpuci__plan_to_json(p);
  CHECK(s != NULL);
  free(s);
  s = tpuci__plan_to_text(p);
  CHECK(s != NULL);
  free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tpuci__plan_t plan;
  tpuci__err_t err = {0, NULL};
  const tpuci__kind_spec_t *kinds[TPUCI__NKINDS + 1];
  tpuci__spec_limits_t limits;
  uint64_t t0, dt;
  int r;

  limits.timeout_ms = CAP_MS;
  limits.memory_bytes = CAP_MEMORY;
  limits.real = 0;
  tpuci__kind_specs(kinds);
  limits.kinds = kinds;
  tpuci__plan_init(&plan);
  t0 = tpuci__now_ms();
  r = tpuci__spec_load(&plan, (const char *) data, size, "fuzz.lua",
                       "/nonexistent/tpuci-fuzz", &limits, &err);
  dt = tpuci__now_ms() - t0;
  if (dt > CAP_MS + SLACK_MS) {
    fprintf(stderr, "fuzz_spec: the load took %llu ms (cap %d ms): %s\n",
            (unsigned long long) dt, CAP_MS, err.msg ? err.msg : "loaded");
    abort();
  }
  if (r != 0) {
    CHECK(r == TPUCI_ESPEC || r == TPUCI_ELIMIT);
    CHECK(err.msg != NULL);
    CHECK(strncmp(err.msg, "fuzz.lua", 8) == 0);
    CHECK(strchr(err.msg, '\n') == NULL);
    CHECK(plan.ninstances == 0);
    check_strv(&plan.warnings);
  } else {
    check_plan(&plan);
  }
  tpuci__plan_free(&plan);
  tpuci__err_clear(&err);
  return 0;
}
