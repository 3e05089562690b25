/* What github.c gathers from a plan and the options, and what
 * github_steps.c writes from it: the steps of the workflow job and the
 * jobs around it. Nothing outside core/export/github*.c includes this. */
#ifndef TPUCI_EXPORT_GITHUB_DOC_H
#define TPUCI_EXPORT_GITHUB_DOC_H

#include <yaml.h>

#include "export/github.h"
#include "export/quote.h"

/* One matrix entry of a per-job workflow. */
typedef struct {
  char *job;           /* shown as the workflow job's name */
  char *only;          /* the --only glob */
  char *slug;          /* unique id, for artifact names */
  tpuci__strv_t pull;  /* images it pulls */
  tpuci__strv_t build; /* pull = "never" images it needs */
} tpuci__gh_entry_t;

typedef struct {
  const char *spec;
  const tpuci__plan_t *plan;
  const char *url; /* tpuci's git repository and revision, or */
  const char *ref;
  const char *package; /* a .deb's URL (then url and ref are NULL) */
  const char *name;
  int per_job;
  int real; /* the run step is `tpuci run --real` */
  const tpuci__export_opts_t *opts;
  tpuci__gh_entry_t *entries;
  size_t nentries;
  size_t njobs;             /* distinct tpuci jobs */
  tpuci__strv_t pull;       /* every image to pull, first-seen order */
  tpuci__strv_t build;      /* every pull = "never" image */
  tpuci__strv_t registries; /* hosts to log in to */
  int ghcr;                 /* an image on ghcr.io: packages: read */
  int pytest;               /* some job is a pytest job: timings */
} tpuci__gh_doc_t;

/* The steps of the workflow job (`steps:` and its sequence). */
int tpuci__gh_steps(yaml_emitter_t *e, const tpuci__gh_doc_t *d);
/* The steps that build tpuci or restore its build (github_steps.c). */
int tpuci__gh_build_steps(yaml_emitter_t *e, const tpuci__gh_doc_t *d);
/* Per job: the last workflow job, which merges every entry's run into one
 * report (github_report.c). */
int tpuci__gh_report_job(yaml_emitter_t *e, const tpuci__gh_doc_t *d);
/* Per-job with pytest jobs: the job that finds the newest recorded
 * durations before the matrix starts ("timings"), and the one that merges
 * what every entry recorded and saves it ("timings-save"); each is a key
 * and its mapping. */
int tpuci__gh_timings_job(yaml_emitter_t *e, const tpuci__gh_doc_t *d);
int tpuci__gh_timings_save_job(yaml_emitter_t *e, const tpuci__gh_doc_t *d);
/* runs-on: the options' labels, else ubuntu-latest. */
int tpuci__gh_runs_on(yaml_emitter_t *e, const tpuci__gh_doc_t *d);
/* Spec text where GitHub evaluates expressions (export/quote.h): the
 * string through tpuci__quote_github_text(), then tpuci__emit_str(); and
 * key: that. Like the other emitting helpers, 1 or 0. */
int tpuci__gh_text(yaml_emitter_t *e, const char *s);
int tpuci__gh_kv_text(yaml_emitter_t *e, const char *key, const char *value);
/* - name: NAME (opens the step's mapping) */
int tpuci__gh_step_start(yaml_emitter_t *e, const char *name);

#endif /* TPUCI_EXPORT_GITHUB_DOC_H */
