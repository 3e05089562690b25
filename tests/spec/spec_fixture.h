/* The loader tests' shared fixture: one plan and one error per test file,
 * reset around each test (cmocka's setup and teardown) and before each
 * load. Include it once, after cmocka.h, in a test's .c file. */
#ifndef TPUCI_TESTS_SPEC_FIXTURE_H
#define TPUCI_TESTS_SPEC_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind/kinds.h"
#include "plan/plan.h"
#include "spec/spec.h"

static tpuci__plan_t plan;
static tpuci__err_t err;

static int setup(void **state) {
  (void) state;
  tpuci__plan_init(&plan);
  err.code = 0;
  err.msg = NULL;
  return 0;
}

static int teardown(void **state) {
  (void) state;
  tpuci__plan_free(&plan);
  tpuci__err_clear(&err);
  return 0;
}

/* The limits a test loads with: the given caps (0: the defaults),
 * emulated, and every job kind's record (kind/kinds.h), as core/api/
 * loads. `kinds` holds the kinds' loaders. */
static inline tpuci__spec_limits_t spec_limits(uint64_t timeout_ms, size_t memory,
                                               const tpuci__kind_spec_t **kinds) {
  tpuci__spec_limits_t limits;
  memset(&limits, 0, sizeof(limits));
  limits.timeout_ms = timeout_ms;
  limits.memory_bytes = memory;
  tpuci__kind_specs(kinds);
  limits.kinds = kinds;
  return limits;
}

/* Loads src as "spec.lua" in the folder dir into a fresh plan, with the
 * given caps (0: the defaults), emulated. */
static int load_with(const char *src, const char *dir, uint64_t timeout_ms,
                     size_t memory) {
  const tpuci__kind_spec_t *kinds[TPUCI__NKINDS + 1];
  tpuci__spec_limits_t limits = spec_limits(timeout_ms, memory, kinds);
  tpuci__plan_free(&plan);
  tpuci__plan_init(&plan);
  tpuci__err_clear(&err);
  return tpuci__spec_load(&plan, src, strlen(src), "spec.lua", dir, &limits, &err);
}

/* Writes text to dir/name (the test fails when it cannot). */
static inline void write_file_in(const char *dir, const char *name, const char *text) {
  char *path = tpuci__printf("%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  free(path);
}

#endif
