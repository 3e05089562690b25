/* The table of job kinds, as runtime.c's is of runtime drivers: one row
 * per kind, each with its name, the job keys that make a job of it, its
 * operations (kind.h) and the constructor and destructor of its state
 * for one run. core/api/ makes every kind's state through it and hands
 * the scheduler the rows in order; the scheduler takes, for each
 * instance, the first kind that claims it (the command kind, last,
 * claims every one). A kind's own folder (kind/pytest/) is reached from
 * below the API only through this table (tests/layout/includes.py,
 * KINDS). Adding a kind: docs/architecture.md, "Adding a job kind". */
#ifndef TPUCI_KIND_KINDS_H
#define TPUCI_KIND_KINDS_H

#include "kind/kind.h"

typedef struct {
  const tpuci__kind_t *ops; /* ops->name is the kind's name */
  /* The job keys of a spec that make a job this kind ("pytest"),
   * NULL-terminated; none for the command kind, which is every other
   * job's (`run`). */
  const char *const *spec_keys;
  /* Its state for one run, made before the scheduler starts and freed
   * after the run's records are written. */
  tpuci__kind_run_t *(*run_new)(const tpuci__kind_args_t *a);
  void (*run_free)(tpuci__kind_run_t *kr);
} tpuci__kind_entry_t;

/* The rows, the command kind last. */
#define TPUCI__NKINDS 2
extern const tpuci__kind_entry_t tpuci__kinds[TPUCI__NKINDS];

/* The row whose operations are `ops`, or NULL. */
const tpuci__kind_entry_t *tpuci__kind_entry(const tpuci__kind_t *ops);

#endif /* TPUCI_KIND_KINDS_H */
