/* The pytest kind's state for one run, shared by its files (kind.c,
 * shard_group.c, order_run.c; kind.h says what each holds). Nothing
 * outside core/kind/pytest/ includes this. */
#ifndef TPUCI_PYTEST_KIND_RUN_H
#define TPUCI_PYTEST_KIND_RUN_H

#include "kind/pytest/deps.h"
#include "kind/pytest/kind.h"
#include "kind/pytest/live.h"
#include "kind/pytest/order.h"
#include "kind/pytest/pytest_run.h"
#include "kind/pytest/shard.h"

/* A shard group: the shards of one instance, which share one collection. */
typedef struct {
  int used;
  char *name;
  int ready; /* split (from the collection, or a record) */
  tpuci__shard_plan_t plan;
  char *key;       /* tpuci__collection_key() of its shards */
  int from_record; /* split from the last run's collection */
  int told;        /* the split was said */
  size_t left_out; /* tests the split left out as unaffected */
  /* Each shard collects the suite itself and keeps its part (the
   * bootstrap's assignment, per shard); 0: the shards run node ids. */
  int filter;
  char **assign;
  tpuci__strv_t ids; /* what the collection pass listed */
  /* The first shard's whole collection (tpuci__pytest_suite_seen), which
   * every other shard's must equal. */
  int seen;
  unsigned long seen_count, seen_crc;
  size_t seen_by; /* that shard's instance */
  int warned;
} tpuci__pgroup_t;

/* The order checks of one instance (order_run.c): its cases, the search
 * of the one being checked, the processes they took. */
typedef struct {
  tpuci__order_cases_t cases;
  size_t at;
  tpuci__order_search_t search;
  int procs;
  int searching;
  int queued;            /* a check is queued or runs */
  tpuci__strv_t running; /* what the queued or running check runs */
} tpuci__ochecks_t;

/* An instance's tests by what they need (deps_run.c): a group of the
 * instances of one name without the shard, its record, what this run
 * leaves out, what its attempts recorded. */
typedef struct {
  char *name;
  size_t first; /* its first instance (the path mapping) */
  int begun;
  char *key; /* its non-file inputs, or NULL: none */
  int off;   /* nothing recorded or left out (no key) */
  tpuci__deps_rec_t rec;
  int has_rec;
  char *load_problem; /* the record could not be read: why */
  tpuci__deps_sel_t sel;
  tpuci__deps_fresh_t fresh;
  int told;
  char *cwd;  /* pytest's working folder as it sees it, or NULL */
  char *root; /* the rootdir on this machine the selection walked */
  /* Left out of the tree: the state folder and the spec, absolute (the
   * spec's part is in the key). */
  char *excluded[2];
  size_t nexcluded;
  size_t missed; /* audited tests that failed */
} tpuci__pdeps_t;

/* An instance's new tests run again (new_run.c). */
typedef struct tpuci__pnew_s tpuci__pnew_t;

/* What the kind keeps of a running process (tpuci__kind_proc_t.data). */
typedef struct {
  tpuci__live_t live; /* the test each host is in */
  char *text;         /* what the last look said */
} tpuci__pproc_t;

struct tpuci__kind_run_s {
  const tpuci__plan_t *plan;
  tpuci__instance_result_t *results;
  tpuci__kind_args_t o;
  const tpuci__kind_host_t *host;
  size_t n;                /* instances */
  tpuci__strv_t **select;  /* per instance: node ids its next attempt runs */
  int *group_of;           /* per instance: the scheduler's group, or -1 */
  tpuci__pgroup_t *groups; /* by the scheduler's group number */
  size_t ngroups;
  /* Per instance: its failing-first process's tests and whether that is
   * still to end; its order checks. */
  tpuci__strv_t **first;
  unsigned char *first_pending;
  tpuci__ochecks_t **ochecks;
  int order_procs;      /* order checks started in the run */
  uint64_t order_ms;    /* and the time they took together */
  tpuci__pdeps_t *deps; /* deps_run.c */
  size_t ndeps;
  int *deps_of;         /* per instance: its group in deps, or -1 */
  tpuci__pnew_t **news; /* per instance: its new tests' runs, or NULL */
  /* Per instance: its last attempt lacked its setup (no interpreter, no
   * pytest: tpuci__pytest_setup_problem): no retry. */
  unsigned char *setup_failed;
  tpuci__idmap_t known_jobs; /* the jobs the history has runs of */
  tpuci__strv_t known_names; /* their names (the map's keys) */
  /* The project's files as the run started (tpuci__history_t.tree), or
   * NULL: each history this kind makes gets a copy. */
  char *tree;
};

/* kind.c: instance `index`'s history, made (with the run's tree) when it
 * has none yet. */
tpuci__history_t *tpuci__pk_history(tpuci__kind_run_t *kr, size_t index);

/* shard_group.c */
char *tpuci__pk_group(tpuci__kind_run_t *kr, size_t i);
int tpuci__pk_group_begin(tpuci__kind_run_t *kr, int g, const char *name, const size_t *members,
                          size_t n);
int tpuci__pk_step_done(tpuci__kind_run_t *kr, int g, const tpuci__kind_proc_t *p,
                        const tpuci__proc_end_t *end, tpuci_outcome_t *outcome, char **cause);
int tpuci__pk_part(tpuci__kind_run_t *kr, size_t index, tpuci__part_skip_t *out);
/* After an attempt of shard `index` that kept its part of the whole suite. */
void tpuci__pk_shard_seen(tpuci__kind_run_t *kr, size_t index, const char *results_dir);
void tpuci__pk_groups_free(tpuci__kind_run_t *kr);

/* deps_run.c */
void tpuci__pk_deps_begin(tpuci__kind_run_t *kr);
/* The DEPS argument of an attempt of instance `index`, or NULL. */
const char *tpuci__pk_deps_arg(const tpuci__kind_run_t *kr, size_t index);
/* Whether this run leaves test `id` of instance `index` out. */
int tpuci__pk_unaffected(const tpuci__kind_run_t *kr, size_t index, const char *id);
/* Says once per group what the run leaves out. */
void tpuci__pk_deps_tell(tpuci__kind_run_t *kr, size_t index);
/* After an attempt: what it recorded, and the tests it left out. */
void tpuci__pk_deps_ended(tpuci__kind_run_t *kr, const tpuci__kind_proc_t *p);
void tpuci__pk_deps_free(tpuci__kind_run_t *kr);

/* order_run.c */
void tpuci__pk_ready(tpuci__kind_run_t *kr, size_t index);
/* The tests a process besides the attempts runs, into out. */
void tpuci__pk_side_only(const tpuci__kind_run_t *kr, const tpuci__kind_proc_t *p,
                         tpuci__strv_t *out);
/* Its log's name: "first.log", "check-N.log" (a new string). */
char *tpuci__pk_side_name(const tpuci__kind_run_t *kr, const tpuci__kind_proc_t *p);
tpuci_outcome_t tpuci__pk_side_ended(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p,
                                     const tpuci__proc_end_t *end, char **cause);
int tpuci__pk_settle(tpuci__kind_run_t *kr, size_t index, int dropped);
void tpuci__pk_order_free(tpuci__kind_run_t *kr);

/* new_run.c */
void tpuci__pk_new_begin(tpuci__kind_run_t *kr);
void tpuci__pk_new_free(tpuci__kind_run_t *kr);
/* Once the attempts and order checks are over: 1 when a process that
 * runs the new tests again is queued or runs, 0 when it is all over (a
 * new test that failed a run has its final result made a failure). */
int tpuci__pk_new_next(tpuci__kind_run_t *kr, size_t index);
/* Whether instance `index`'s side process is a run of its new tests;
 * its tests; its log's name ("new-N"); what it found. */
int tpuci__pk_new_queued(const tpuci__kind_run_t *kr, size_t index);
void tpuci__pk_new_only(const tpuci__kind_run_t *kr, size_t index, tpuci__strv_t *out);
char *tpuci__pk_new_name(const tpuci__kind_run_t *kr, size_t index);
tpuci_outcome_t tpuci__pk_new_done(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p,
                                   const tpuci__proc_end_t *end, char **cause);
/* The instance is dropped: what was queued will not run. */
void tpuci__pk_new_dropped(tpuci__kind_run_t *kr, size_t index);

#endif /* TPUCI_PYTEST_KIND_RUN_H */
