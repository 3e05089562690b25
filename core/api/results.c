/* What a run left: outcomes, attempts, tests, reports; exports, the TPU
 * catalogue and engine maintenance. */
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "api/ctx.h"
#include "export/github.h"
#include "export/k8s/export.h"
#include "report/report.h"
#include "report/report_html.h"
#include "runtime/tpuvm.h"

/* ------------------------------------------------------------------ */
/* Results                                                             */

int tpuci_run_exit_code(const tpuci_run_t *run) { return run->exit_code; }

const char *tpuci_run_verdict(const tpuci_run_t *run) {
  return run->ran && !run->running ? tpuci__report_verdict(run->verdict) : NULL;
}

size_t tpuci_run_write_errors(const tpuci_run_t *run) { return run->write_paths.len; }

const char *tpuci_run_summary_path(const tpuci_run_t *run) { return run->summary_path; }

const char *tpuci_run_id(const tpuci_run_t *run) { return run->rd.id; }

const char *tpuci_run_dir(const tpuci_run_t *run) { return run->rd.dir; }

uint64_t tpuci_run_duration_ms(const tpuci_run_t *run) { return run->duration_ms; }

size_t tpuci_outcome_count(const tpuci_run_t *run, tpuci_outcome_t outcome) {
  size_t i, n = 0;
  for (i = 0; i < run->nresults; i++)
    if (run->plan.instances[i].selected && run->results[i].outcome == outcome) n++;
  return n;
}

tpuci_outcome_t tpuci_instance_outcome(const tpuci_run_t *run, size_t i) {
  return i < run->nresults ? run->results[i].outcome : TPUCI_OUTCOME_NONE;
}

size_t tpuci_attempt_count(const tpuci_run_t *run, size_t i) {
  return i < run->nresults ? run->results[i].nattempts : 0;
}

int tpuci_running_info(tpuci_run_t *run, size_t i, tpuci_running_info_t *out) {
  tpuci__running_t now;
  tpuci_running_info_t full;
  if (run == NULL || out == NULL) return TPUCI_EUSAGE;
  if (!run->running || run->sched == NULL || tpuci__sched_running(run->sched, i, &now) != 0)
    return TPUCI_ESTATE;
  memset(&full, 0, sizeof(full));
  full.size = sizeof(full);
  full.attempt = now.attempt;
  full.elapsed_ms = now.elapsed_ms;
  full.output_bytes = now.output_bytes;
  full.quiet_ms = now.quiet_ms;
  full.test = now.test;
  full.test_ms = now.test_ms;
  return tpuci__struct_out(out, &full, sizeof(full), TPUCI__RUNNING_INFO_MIN);
}

int tpuci_attempt_info(const tpuci_run_t *run, size_t i, size_t k, tpuci_attempt_info_t *out) {
  const tpuci__attempt_result_t *a;
  tpuci_attempt_info_t full;
  if (run == NULL || out == NULL) return TPUCI_EUSAGE;
  if (i >= run->nresults || k >= run->results[i].nattempts) return TPUCI_EUSAGE;
  a = &run->results[i].attempts[k];
  memset(&full, 0, sizeof(full));
  full.size = sizeof(full);
  full.outcome = a->outcome;
  full.exit_code = a->exit_code;
  full.term_signal = a->term_signal;
  full.start_ms = a->start_ms;
  full.duration_ms = a->duration_ms;
  full.cause = a->cause;
  full.log_path = a->log_path;
  return tpuci__struct_out(out, &full, sizeof(full), TPUCI__ATTEMPT_INFO_MIN);
}

int tpuci_report(const tpuci_run_t *run, const char *format, char **out) {
  if (run == NULL || format == NULL || out == NULL) return TPUCI_EUSAGE;
  if (run->report == NULL) return TPUCI_ESTATE;
  if (strcmp(format, "json") == 0) {
    *out = tpuci__report_json_text(run->report);
    return *out ? 0 : TPUCI_ENOMEM;
  }
  if (strcmp(format, "yaml") == 0) return tpuci__report_yaml_text(run->report, out, NULL);
  if (strcmp(format, "html") == 0) {
    tpuci__buf_t b;
    int r;
    tpuci__buf_init(&b);
    r = tpuci__report_html(run->report, &b, NULL);
    if (r != 0) {
      tpuci__buf_free(&b);
      return r;
    }
    *out = tpuci__buf_steal(&b);
    return 0;
  }
  return TPUCI_EUSAGE;
}

void tpuci_export_options_init(tpuci_export_options_t *opts) {
  memset(opts, 0, sizeof(*opts));
  opts->size = sizeof(*opts);
}

/* A workflow builds the commit this tpuci was built from: warnings when
 * that is not quite this tpuci (changes it lacks) or may not be there to
 * fetch (not on origin's branches; with another source, unknown). */
static void tpuci__build_warnings(tpuci_ctx_t *ctx, const char *source_url) {
  const char *commit = tpuci__build_source_commit_get();
  char *msg;
  if (commit == NULL) return;
  if (tpuci__build_source_is_modified()) {
    msg = tpuci__printf("this tpuci was built with changes that commit %.12s lacks; the "
                        "workflow builds the commit as it is (commit them, or pass --ref)",
                        commit);
    tpuci__strv_push(&ctx->plan.warnings, msg);
    free(msg);
  }
  if (source_url == NULL && !tpuci__build_source_is_pushed()) {
    msg = tpuci__printf("commit %.12s, which this tpuci was built from, is not on a branch "
                        "of %s as far as the checkout knows: push it, or the workflow cannot "
                        "fetch it (or pass --ref)",
                        commit, tpuci__build_source_url_get());
    tpuci__strv_push(&ctx->plan.warnings, msg);
    free(msg);
  }
}

int tpuci_export(tpuci_ctx_t *ctx, const char *format, const tpuci_export_options_t *opts,
                 char **out) {
  tpuci_export_options_t o;
  tpuci__export_opts_t eo;
  tpuci__err_t e = {0, NULL};
  tpuci__buf_t b;
  int r;

  if (ctx == NULL || format == NULL || out == NULL) return TPUCI_EUSAGE;
  tpuci_export_options_init(&o);
  if (opts != NULL && tpuci__struct_in(&o, sizeof(o), opts, TPUCI__EXPORT_OPTIONS_MIN) != 0)
    return TPUCI_EUSAGE;
  if (!ctx->loaded) {
    tpuci__err_set(&e, TPUCI_ESTATE, "no spec loaded");
    return tpuci__fail(ctx, &e);
  }
  if (strcmp(format, "kubernetes") == 0) {
    tpuci__k8s_opts_t ko;
    tpuci__k8s_opts_init(&ko);
    ko.emulated = o.emulated;
    ko.no_mounts = o.no_mounts;
    ko.run = o.run;
    ko.results_claim = o.results_claim;
    ko.jobset = o.jobset;
    tpuci__buf_init(&b);
    r = tpuci__export_kubernetes(&ctx->plan, &ko, &b, &e);
    if (r != 0) {
      tpuci__buf_free(&b);
      return tpuci__fail(ctx, &e);
    }
    *out = tpuci__buf_steal(&b);
    return 0;
  }
  if (strcmp(format, "github") != 0) {
    tpuci__err_set(&e, TPUCI_EUSAGE, "unknown export format '%s' (known: github, kubernetes)",
                   format);
    return tpuci__fail(ctx, &e);
  }
  tpuci__export_opts_init(&eo);
  eo.real = ctx->real;
  eo.spec = o.spec;
  eo.source_url = o.source_url;
  eo.source_ref = o.source_ref;
  eo.name = o.name;
  eo.per_job = o.per_job;
  eo.runs_on = o.runs_on;
  eo.n_runs_on = o.n_runs_on;
  eo.timeout_minutes = o.timeout_minutes;
  eo.concurrency = o.concurrency;
  eo.cancel_in_progress = o.cancel_in_progress;
  eo.schedule = o.schedule;
  eo.package = o.package;
  eo.build_url = tpuci__build_source_url_get();
  eo.build_commit = tpuci__build_source_commit_get();
  tpuci__buf_init(&b);
  r = tpuci__export_github(&ctx->plan, &eo, &b, &e);
  if (r != 0) {
    tpuci__buf_free(&b);
    return tpuci__fail(ctx, &e);
  }
  if (eo.package == NULL && eo.source_ref == NULL) tpuci__build_warnings(ctx, eo.source_url);
  *out = tpuci__buf_steal(&b);
  return 0;
}

int tpuci_build_source(tpuci_build_source_t *out) {
  tpuci_build_source_t full;
  if (out == NULL) return TPUCI_EUSAGE;
  memset(&full, 0, sizeof(full));
  full.size = sizeof(full);
  full.url = tpuci__build_source_url_get();
  full.commit = tpuci__build_source_commit_get();
  full.modified = tpuci__build_source_is_modified();
  full.pushed = tpuci__build_source_is_pushed();
  return tpuci__struct_out(out, &full, sizeof(full), TPUCI__BUILD_SOURCE_MIN);
}

/* ------------------------------------------------------------------ */
/* The TPU catalogue                                                   */

int tpuci_topologies(tpuci_ctx_t *ctx, const char *type, const char *emulate, char **out) {
  tpuci__err_t e = {0, NULL};
  if (ctx == NULL || out == NULL) return TPUCI_EUSAGE;
  if (type == NULL) {
    *out = tpuci__tpu_catalogue_text();
    return 0;
  }
  *out = tpuci__tpu_describe(type, emulate ? emulate : "pjrt", &e);
  if (*out == NULL) {
    if (e.msg == NULL) tpuci__err_set(&e, TPUCI_EUSAGE, "unknown TPU type '%s'", type);
    if (e.code == 0) e.code = TPUCI_EUSAGE;
    return tpuci__fail(ctx, &e);
  }
  return 0;
}

size_t tpuci_test_count(const tpuci_run_t *run, size_t i) {
  if (run == NULL || i >= run->nresults) return 0;
  if (tpuci__res_history(&run->results[i]) == NULL)
    return json_array_size(json_object_get(tpuci__record_instance(run, i), "tests"));
  return tpuci__res_history(&run->results[i])->len;
}

/* A record's test (a loaded or merged run's summary.json): what the
 * report says of it. Its file and line are not recorded. */
static void tpuci__record_test(json_t *jt, tpuci_test_info_t *full) {
  const char *o = json_string_value(json_object_get(jt, "outcome"));
  json_t *q = json_object_get(jt, "quarantine");
  full->id = json_string_value(json_object_get(jt, "id"));
  full->outcome = o ? o : TPUCI__TEST_NOT_RUN;
  full->failing = strcmp(full->outcome, "failed") == 0 || strcmp(full->outcome, "error") == 0 ||
                  strcmp(full->outcome, TPUCI__TEST_NOT_RUN) == 0;
  full->flaky = json_is_true(json_object_get(jt, "flaky"));
  full->order_dependent = json_is_true(json_object_get(jt, "order_dependent"));
  full->order = json_string_value(json_object_get(json_object_get(jt, "order"), "text"));
  full->order_polluter =
      json_string_value(json_object_get(json_object_get(jt, "order"), "polluter"));
  full->runs = (int) json_integer_value(json_object_get(jt, "runs"));
  full->duration_s = json_number_value(json_object_get(jt, "duration_s"));
  full->message = json_string_value(json_object_get(jt, "message"));
  full->unaffected_since = json_string_value(json_object_get(jt, "unaffected_since"));
  if (json_is_object(q)) {
    full->quarantined = 1;
    full->quarantine_where = json_string_value(json_object_get(q, "where"));
    full->quarantine_reason = json_string_value(json_object_get(q, "reason"));
    full->quarantine_owner = json_string_value(json_object_get(q, "owner"));
    full->quarantine_until = json_string_value(json_object_get(q, "until"));
    full->release_ready = json_is_true(json_object_get(q, "ready_to_release"));
  }
}

int tpuci_test_info(const tpuci_run_t *run, size_t i, size_t k, tpuci_test_info_t *out) {
  const tpuci__test_hist_t *t;
  const tpuci__test_t *fin;
  tpuci_test_info_t full;
  size_t r;
  if (out == NULL || k >= tpuci_test_count(run, i)) return TPUCI_EUSAGE;
  if (tpuci__res_history(&run->results[i]) == NULL) {
    memset(&full, 0, sizeof(full));
    full.size = sizeof(full);
    tpuci__record_test(json_array_get(json_object_get(tpuci__record_instance(run, i), "tests"), k),
                       &full);
    return tpuci__struct_out(out, &full, sizeof(full), TPUCI__TEST_INFO_MIN);
  }
  t = &tpuci__res_history(&run->results[i])->tests[k];
  fin = tpuci__history_final(t);
  memset(&full, 0, sizeof(full));
  full.size = sizeof(full);
  full.id = t->id;
  full.runs = (int) t->len;
  if (fin == NULL) {
    full.outcome = TPUCI__TEST_NOT_RUN;
    full.failing = 1;
  } else {
    full.outcome = tpuci__test_outcome_name(fin->outcome);
    full.failing = tpuci__test_outcome_failing(fin->outcome);
    full.flaky = tpuci__history_flaky(t);
    full.order_dependent = t->order_dep;
    full.order = t->order_note;
    full.order_polluter = t->polluter;
    full.duration_s = fin->time_s;
    full.file = t->path ? t->path : fin->file;
    full.line = fin->line >= 0 ? fin->line + 1 : 0;
    full.failure_file = t->fail_path;
    full.failure_line = t->fail_path ? t->fail_line : 0;
    if (fin->outcome == TPUCI_TEST_UNAFFECTED) full.unaffected_since = fin->text;
    for (r = t->len; r > 0; r--) {
      const tpuci__test_t *tr = &t->runs[r - 1].result;
      if (tpuci__test_outcome_failing(tr->outcome)) {
        full.message = tr->message;
        break;
      }
    }
  }
  {
    /* While the run goes on, the entry is looked up as tests finish. */
    const tpuci__quarantine_entry_t *q = run->qtests
                                             ? (run->qtests[i] ? run->qtests[i][k].entry : NULL)
                                             : tpuci__quarantine_match(&run->quar, t->id);
    if (q != NULL) {
      full.quarantined = 1;
      full.quarantine_where = q->where;
      full.quarantine_reason = q->reason;
      full.quarantine_owner = q->owner;
      full.quarantine_until = q->until;
      full.release_ready = run->qtests && run->qtests[i][k].ready;
    }
  }
  return tpuci__struct_out(out, &full, sizeof(full), TPUCI__TEST_INFO_MIN);
}

/* ------------------------------------------------------------------ */
/* Engine maintenance                                                  */

int tpuci_engine_gc(tpuci_ctx_t *ctx, int dry_run, char **report) {
  tpuci__buf_t b;
  tpuci__err_t e = {0, NULL};
  int r;
  tpuci__buf_init(&b);
  r = tpuci__runtime_gc(ctx->loaded ? &ctx->plan : NULL, dry_run, &b, &e);
  *report = tpuci__buf_steal(&b);
  if (r < 0) return tpuci__fail(ctx, &e);
  return r;
}

int tpuci_tpu_doctor(tpuci_ctx_t *ctx, char **report) {
  tpuci__buf_t b;
  tpuci__err_t e = {0, NULL};
  int r;
  if (ctx == NULL || report == NULL) return TPUCI_EUSAGE;
  tpuci__buf_init(&b);
  r = tpuci__tpuvm_doctor(ctx->loaded ? &ctx->plan : NULL, &b, &e);
  *report = tpuci__buf_steal(&b);
  if (r != 0) return tpuci__fail(ctx, &e);
  return 0;
}

int tpuci_engine_doctor(tpuci_ctx_t *ctx, char **report) {
  tpuci__buf_t b;
  tpuci__err_t e = {0, NULL};
  int r;
  tpuci__buf_init(&b);
  r = tpuci__runtime_doctor(ctx->loaded ? &ctx->plan : NULL, &b, &e);
  *report = tpuci__buf_steal(&b);
  if (r < 0) return tpuci__fail(ctx, &e);
  return r;
}
