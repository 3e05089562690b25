/* What the history store's report and its quarantine proposals are made
 * from (flaky.h): the window's runs, the tree each was of, and each
 * test's outcomes, runs, fails and flips with the runs they rest on.
 * Internal to core/kind/pytest/: flaky.c reads the store, quarantine.c
 * proposes entries from it. */
#ifndef TPUCI_PYTEST_FLAKY_STATS_H
#define TPUCI_PYTEST_FLAKY_STATS_H

#include <stddef.h>

#include <jansson.h>

#include "base/util.h"

typedef struct {
  char *instance; /* its identity: the instance without its shard */
  const char *id;
  char *key; /* instance \x1f id: the map's key */
  char *seq; /* one code a run of the window: '-' not in it,
                           'x' an infra run of its job (left out) */
  size_t fails, runs, flips;
  /* Per run of the window, 1 when a flip rests on it (a run flaky or
   * order-dependent within itself, or one end of a change of result
   * between two runs of one tree); NULL: no flip. */
  unsigned char *rests;
  const char *last_run, *last_msg;
} tpuci__flaky_test_t;

/* A job's run left out of flip rates: more than half its tests failed. */
typedef struct {
  const char *run;
  char *instance;
  size_t tests, failed;
} tpuci__flaky_infra_t;

typedef struct {
  tpuci__strv_t lines;
  json_t **all;    /* every run of the store, parsed */
  json_t **parsed; /* the window's: all + first */
  size_t nrun;
  /* Per run of the window: its tree (flaky.h) or NULL, and the tree's
   * number among the window's distinct ones or -1. */
  const char **tree;
  int *tree_ix;
  size_t ntrees;
  tpuci__flaky_test_t *tests; /* most flips first */
  size_t ntests;
  tpuci__flaky_infra_t *infra;
  size_t ninfra;
} tpuci__flaky_stats_t;

/* Reads the store at `path`, its last `runs` runs (0: all), into `s`
 * (zeroed first). 0, or a negative code with err set (a missing store is
 * TPUCI_ENOMATCH). */
int tpuci__flaky_stats(const char *path, int runs, tpuci__flaky_stats_t *s, tpuci__err_t *err);
void tpuci__flaky_stats_free(tpuci__flaky_stats_t *s);

/* flips / runs, 0 without runs. */
double tpuci__flaky_rate(const tpuci__flaky_test_t *t);

/* A tree as said to people: the commit's first 7 hex digits and the
 * files' first 8 ("1a2b3c4:5e6f7a8b"), into out. */
void tpuci__flaky_tree_short(const char *tree, char out[24]);

#endif /* TPUCI_PYTEST_FLAKY_STATS_H */
