/* What the plan holds of a pytest instance (its kind_config, plan.h:
 * the record below, freed, copied and shown through
 * tpuci__pytest_config in config.c), and how a job's pytest record makes
 * it: the kind's loader (spec.c), which core/spec/ calls through
 * kind/kinds.c's row (plan/kind_spec.h). Everything above the plan reads
 * the record through tpuci__pytest_of(). */
#ifndef TPUCI_PYTEST_CONFIG_H
#define TPUCI_PYTEST_CONFIG_H

#include "plan/kind_spec.h"
#include "plan/plan.h"

/* How a sharded suite is split (pytest.shard_by): test by test, or
 * keeping each file's (each class's) tests together, in their order. */
typedef enum {
  TPUCI__SHARD_BY_FILE = 0,
  TPUCI__SHARD_BY_CLASS,
  TPUCI__SHARD_BY_TEST
} tpuci__shard_by_t;

/* A job given as `pytest = { ... }`. Its argv (the whole suite) ends with
 * `nargs` arguments (pytest.args) that an attempt running only some tests
 * replaces by their node ids; every attempt also gets a JUnit file in its
 * results folder. Which shard an instance is, and whether it runs on a
 * chip of its own, are the instance's (shards, shard, per_chip). */
typedef struct {
  char *markers; /* -m, or NULL */
  char *k;       /* -k, or NULL */
  size_t nargs;
  tpuci__shard_by_t shard_by; /* how the instance's shards split the suite */
  int allow_empty;            /* pytest's exit 5 (nothing collected) passes */
  int failed_first;           /* tests that failed last time run first */
  int failed_first_steady;    /* failed_first = "always": those that fail
                                 steadily too (flaky.h) */
  int retry_steady;           /* retries run when only tests that fail
                                 steadily failed (flaky.h) */
  /* Only the tests a change can affect run (select = "affected"), and
   * globs of test files that always do (select_always). */
  int select_affected;
  tpuci__strv_t select_always;
  /* Globs of files whose changes never matter (select_ignore), and the
   * fraction of the tests left out that run as an audit (select.audit). */
  tpuci__strv_t select_ignore;
  double select_audit;
  uint64_t test_timeout_ms; /* one test's longest (pytest.test_timeout), 0: none */
  int new_tests_runs;       /* runs a test new to the history gets (new_tests.runs), 0: one */
  /* pytest.setup: shell commands the bootstrap runs in the attempt before
   * it imports pytest, one a line (TPUCI_SETUP in the environment), or
   * NULL. */
  char *setup;
} tpuci__pytest_t;

/* What the plan does with a pytest instance's record (config.c): free,
 * copy, its "pytest" object in `tpuci plan --json`. */
extern const tpuci__kind_config_t tpuci__pytest_config;

/* The pytest record's loader: its key "pytest", its parts
 * (pytest.per_chip: one per chip) and each instance's record (spec.c). */
extern const tpuci__kind_spec_t tpuci__pytest_spec;

/* inst's pytest record, or NULL when inst is not a pytest instance. */
const tpuci__pytest_t *tpuci__pytest_of(const tpuci__instance_t *inst);

#endif /* TPUCI_PYTEST_CONFIG_H */
