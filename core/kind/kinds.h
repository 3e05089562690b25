/* The table of job kinds, as runtime.c's is of runtime drivers: one row
 * per kind, each with its name, its operations (kind.h), the constructor
 * and destructor of its state for one run, and the loader of the record
 * a job has for it (plan/kind_spec.h: the job key that makes a job of
 * it). core/api/ hands the spec loader every kind's loader
 * (tpuci__kind_specs), makes every kind's state through the table and
 * hands the scheduler the rows in order; the scheduler takes, for each
 * instance, the first kind that claims it (the command kind, last,
 * claims every one). A kind's own folder (kind/pytest/) is reached from
 * below the API only through this table (tests/layout/includes.py,
 * KINDS). Adding a kind: docs/architecture.md, "Adding a job kind". */
#ifndef TPUCI_KIND_KINDS_H
#define TPUCI_KIND_KINDS_H

#include "kind/kind.h"
#include "plan/kind_spec.h"

typedef struct {
  const tpuci__kind_t *ops; /* ops->name is the kind's name */
  /* How a job's record under spec->key ("pytest") makes each of its
   * instances this kind's (plan/kind_spec.h); NULL for the command kind,
   * which is every other job's (`run`). */
  const tpuci__kind_spec_t *spec;
  /* Its state for one run, made before the scheduler starts and freed
   * after the run's records are written. */
  tpuci__kind_run_t *(*run_new)(const tpuci__kind_args_t *a);
  void (*run_free)(tpuci__kind_run_t *kr);
} tpuci__kind_entry_t;

/* The rows, the command kind last. */
#define TPUCI__NKINDS 2
extern const tpuci__kind_entry_t tpuci__kinds[TPUCI__NKINDS];

/* The spec loader's kinds (tpuci__spec_limits_t's): every row's loader
 * in the table's order, then NULL. */
void tpuci__kind_specs(const tpuci__kind_spec_t *out[TPUCI__NKINDS + 1]);

/* The row whose operations are `ops`, or NULL. */
const tpuci__kind_entry_t *tpuci__kind_entry(const tpuci__kind_t *ops);

#endif /* TPUCI_KIND_KINDS_H */
