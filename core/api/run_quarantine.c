/* A run's quarantine (docs/quarantine.md, kind/pytest/quarantine.h): the file
 * read when the run starts, each test's entry, the instances that failed
 * only by quarantined tests (they do not fail the verdict), which
 * quarantined tests are ready to release, and what the records say of
 * it (the report's "quarantine" fields, JUnit properties); and
 * `tpuci flaky --release`. */
#include <stdlib.h>
#include <string.h>

#include "api/ctx.h"
#include "kind/pytest/flaky.h"
#include "kind/pytest/pytest_run.h"

int tpuci__quar_start(tpuci__run_t *run, tpuci__strv_t *warnings, tpuci__err_t *e) {
  const char *given = run->ropts.quarantine;
  char *path = given ? tpuci__strdup(given)
                     : tpuci__printf("%s/%s", run->plan.spec_dir ? run->plan.spec_dir : ".",
                                     TPUCI__QUARANTINE_FILE);
  int r;
  tpuci__quarantine_free(&run->quar);
  /* Named as the console shows paths (relative to the current folder
   * when below it): in messages, entries' places, JUnit properties. */
  r = tpuci__quarantine_load(tpuci__path_shown(path), &run->quar, e);
  free(path);
  if (r == UV_ENOENT && given == NULL) {
    /* No quarantine beside the spec: none. */
    tpuci__err_clear(e);
    return 0;
  }
  if (r != 0) return r == TPUCI_ESPEC ? r : (e->code = TPUCI_EUSAGE);
  tpuci__quarantine_expire(&run->quar, tpuci__quarantine_today(), warnings);
  tpuci__quarantine_lint(&run->quar, warnings);
  return 0;
}

/* Says what each entry covered in the run (an entry that covered
 * nothing says nothing; summary.json lists every entry), at most
 * TPUCI__QUAR_SAID lines. */
#define TPUCI__QUAR_SAID 20
static void tpuci__quar_say(tpuci__run_t *run) {
  size_t k, said = 0, more = 0;
  for (k = 0; k < run->quar.n; k++) {
    const tpuci__quarantine_entry_t *e = &run->quar.entries[k];
    char *msg;
    if (e->covered == 0) continue;
    if (said == TPUCI__QUAR_SAID) {
      more++;
      continue;
    }
    msg = tpuci__printf("quarantine %s: '%s' covered %zu test%s in this run, %zu failing", e->where,
                        e->test, e->covered, e->covered == 1 ? "" : "s", e->covered_failing);
    tpuci__message(run, msg);
    free(msg);
    said++;
  }
  if (more > 0) {
    char *msg = tpuci__printf("quarantine: %zu more %s covered tests (summary.json's "
                              "quarantine.matched lists each)",
                              more, more == 1 ? "entry" : "entries");
    tpuci__message(run, msg);
    free(msg);
  }
}

/* Whether instance i failed only by tests that entries cover: pytest's
 * exit 1 (tests failed, nothing else went wrong), and every failing test
 * quarantined. */
static int tpuci__quar_forgiven(const tpuci__run_t *run, size_t i) {
  const tpuci__instance_result_t *res = &run->results[i];
  const tpuci__history_t *h = tpuci__res_history(res);
  size_t k, failing = 0;
  if (run->quar.n == 0 || h == NULL || res->outcome != TPUCI_OUTCOME_FAILED ||
      res->nattempts == 0 || res->attempts[res->nattempts - 1].exit_code != 1)
    return 0;
  for (k = 0; k < h->len; k++) {
    const tpuci__test_t *fin = tpuci__history_final(&h->tests[k]);
    if (fin != NULL && !tpuci__test_outcome_failing(fin->outcome)) continue;
    if (tpuci__quarantine_match(&run->quar, h->tests[k].id) == NULL) return 0;
    failing++;
  }
  return failing > 0;
}

void tpuci__quar_apply(tpuci__run_t *run) {
  size_t i, k;
  if (run->quar.n == 0 || run->nresults == 0) return;
  run->qtests = tpuci__calloc(run->nresults, sizeof(*run->qtests));
  run->forgiven = tpuci__calloc(run->nresults, 1);
  for (i = 0; i < run->nresults; i++) {
    const tpuci__history_t *h = tpuci__res_history(&run->results[i]);
    if (!run->plan.instances[i].selected || h == NULL) continue;
    run->qtests[i] = tpuci__calloc(h->len ? h->len : 1, sizeof(*run->qtests[i]));
    for (k = 0; k < h->len; k++) {
      const tpuci__quarantine_entry_t *e = tpuci__quarantine_match(&run->quar, h->tests[k].id);
      const tpuci__test_t *fin = tpuci__history_final(&h->tests[k]);
      run->qtests[i][k].entry = e;
      if (e == NULL) continue;
      run->quar.entries[e - run->quar.entries].covered++;
      if (fin == NULL || tpuci__test_outcome_failing(fin->outcome))
        run->quar.entries[e - run->quar.entries].covered_failing++;
    }
    run->forgiven[i] = (unsigned char) tpuci__quar_forgiven(run, i);
  }
  tpuci__quar_say(run);
}

void tpuci__quar_ready(tpuci__run_t *run) {
  int need = run->ropts.release_after > 0 ? run->ropts.release_after : TPUCI__RELEASE_AFTER;
  size_t i, k;
  if (run->qtests == NULL || run->recent == NULL) return;
  for (i = 0; i < run->nresults; i++) {
    const tpuci__history_t *h = tpuci__res_history(&run->results[i]);
    char *identity;
    if (run->qtests[i] == NULL) continue;
    /* The history keeps a test under the instance without its shard. */
    identity = tpuci__group_name_of(h->instance);
    for (k = 0; k < h->len; k++) {
      char *key;
      if (run->qtests[i][k].entry == NULL) continue;
      key = tpuci__printf("%s\x1f%s", identity, h->tests[k].id);
      run->qtests[i][k].ready =
          tpuci__quarantine_released(json_string_value(json_object_get(run->recent, key)), need);
      free(key);
    }
    free(identity);
  }
}

void tpuci__quar_props(const tpuci__run_t *run, size_t i, tpuci__strv_t *out) {
  const tpuci__history_t *h = tpuci__res_history(&run->results[i]);
  size_t k;
  if (run->qtests == NULL || run->qtests[i] == NULL) return;
  if (run->forgiven[i]) {
    tpuci__strv_push(out, "tpuci.quarantined_failure");
    tpuci__strv_push(out, "true");
  }
  for (k = 0; k < h->len; k++) {
    const tpuci__quarantine_entry_t *e = run->qtests[i][k].entry;
    if (e == NULL) continue;
    tpuci__strv_push(out, "tpuci.quarantined");
    tpuci__strv_take(out, tpuci__printf("%s: %s (owner %s, until %s, %s)", h->tests[k].id,
                                        e->reason, e->owner, e->until, e->where));
    if (run->qtests[i][k].ready) {
      tpuci__strv_push(out, "tpuci.release_ready");
      tpuci__strv_push(out, h->tests[k].id);
    }
  }
}

void tpuci__quar_report(tpuci__run_t *run) {
  json_t *insts = json_object_get(run->report, "instances"), *q, *expired;
  size_t i, j = 0, k;
  if (run->quar.n == 0) {
    json_object_set_new(run->report, "quarantine", json_null());
    return;
  }
  q = json_object();
  expired = json_array();
  json_object_set_new(q, "file", json_string(run->quar.path));
  json_object_set_new(q, "entries", json_integer((json_int_t) run->quar.n));
  for (k = 0; k < run->quar.n; k++)
    if (run->quar.entries[k].expired)
      json_array_append_new(expired, json_string(run->quar.entries[k].where));
  json_object_set_new(q, "expired", expired);
  {
    json_t *matched = json_array();
    for (k = 0; k < run->quar.n; k++) {
      const tpuci__quarantine_entry_t *e = &run->quar.entries[k];
      json_array_append_new(
          matched, json_pack("{s:s, s:s, s:I, s:I}", "where", e->where, "test", e->test, "tests",
                             (json_int_t) e->covered, "failing", (json_int_t) e->covered_failing));
    }
    json_object_set_new(q, "matched", matched);
  }
  json_object_set_new(run->report, "quarantine", q);
  for (i = 0; run->qtests && i < run->nresults; i++) {
    json_t *inst, *tests;
    if (!run->plan.instances[i].selected) continue;
    inst = json_array_get(insts, j++);
    if (run->qtests[i] == NULL || inst == NULL) continue;
    if (run->forgiven[i]) json_object_set_new(inst, "quarantined", json_true());
    tests = json_object_get(inst, "tests");
    for (k = 0; k < tpuci__res_history(&run->results[i])->len; k++) {
      const tpuci__quarantine_entry_t *e = run->qtests[i][k].entry;
      json_t *o;
      if (e == NULL) continue;
      o = json_object();
      json_object_set_new(o, "where", json_string(e->where));
      json_object_set_new(o, "test", json_string(e->test));
      json_object_set_new(o, "reason", json_string(e->reason));
      json_object_set_new(o, "owner", json_string(e->owner));
      json_object_set_new(o, "until", json_string(e->until));
      json_object_set_new(o, "ready_to_release", json_boolean(run->qtests[i][k].ready));
      json_object_set_new(json_array_get(tests, k), "quarantine", o);
    }
  }
}

void tpuci__quar_free(tpuci__run_t *run) {
  size_t i;
  for (i = 0; run->qtests && i < run->nresults; i++) free(run->qtests[i]);
  free(run->qtests);
  run->qtests = NULL;
  free(run->forgiven);
  run->forgiven = NULL;
  tpuci__quarantine_free(&run->quar);
}

int tpuci_instance_quarantined(const tpuci_run_t *run, size_t i) {
  json_t *rec;
  if (run == NULL || i >= run->nresults) return 0;
  if ((rec = tpuci__record_instance(run, i)) != NULL)
    return json_is_true(json_object_get(rec, "quarantined"));
  /* While the run goes on, as each instance finishes. */
  return run->forgiven ? run->forgiven[i] : tpuci__quar_forgiven(run, i);
}

int tpuci_flaky_release(tpuci_ctx_t *ctx, const char *state_dir, const char *quarantine,
                        int release_after, char **out) {
  tpuci__quarantine_t q;
  tpuci__err_t e = {0, NULL};
  const char *qpath = quarantine ? quarantine : TPUCI__QUARANTINE_FILE;
  char *path;
  json_t *recent;
  size_t n;
  int r;
  if (ctx == NULL || out == NULL || release_after < 0) return TPUCI_EUSAGE;
  *out = NULL;
  tpuci__quarantine_init(&q);
  if ((r = tpuci__quarantine_load(qpath, &q, &e)) != 0) {
    if (e.msg == NULL) tpuci__err_set(&e, r, "%s: cannot read the quarantine", qpath);
    e.code = r == TPUCI_ESPEC ? r : TPUCI_EUSAGE;
    tpuci__quarantine_free(&q);
    return tpuci__fail(ctx, &e);
  }
  tpuci__quarantine_expire(&q, tpuci__quarantine_today(), NULL);
  path = tpuci__printf("%s/%s", state_dir ? state_dir : ".tpuci", TPUCI__FLAKY_FILE);
  recent = tpuci__flaky_recent(path, 0);
  if (recent == NULL) {
    tpuci__err_set(&e, TPUCI_ENOMATCH,
                   "%s: no history yet (every `tpuci run` with pytest jobs adds to it)", path);
    free(path);
    tpuci__quarantine_free(&q);
    return tpuci__fail(ctx, &e);
  }
  free(path);
  *out = tpuci__quarantine_release_report(
      &q, recent, release_after > 0 ? release_after : TPUCI__RELEASE_AFTER, &n);
  json_decref(recent);
  tpuci__quarantine_free(&q);
  return 0;
}

int tpuci_flaky_propose(tpuci_ctx_t *ctx, const char *state_dir, const char *quarantine,
                        const char *codeowners, int runs, double min_rate, char **out) {
  tpuci__quarantine_t q;
  tpuci__codeowners_t owners;
  tpuci__flaky_propose_t o;
  tpuci__err_t e = {0, NULL};
  char *path = NULL;
  int r, have_owners = 0;
  if (ctx == NULL || out == NULL || runs < 0 || !(min_rate >= 0 && min_rate <= 1))
    return TPUCI_EUSAGE;
  *out = NULL;
  tpuci__quarantine_init(&q);
  memset(&owners, 0, sizeof(owners));
  /* The quarantine beside: its tests are not proposed again. */
  r = tpuci__quarantine_load(quarantine ? quarantine : TPUCI__QUARANTINE_FILE, &q, &e);
  if (r == UV_ENOENT && quarantine == NULL) {
    tpuci__err_clear(&e);
    r = 0;
  }
  if (r == 0) {
    r = codeowners ? tpuci__codeowners_load(codeowners, &owners, &e)
                   : tpuci__codeowners_find(".", &owners, &e);
    have_owners = r == 0;
    if (r == TPUCI_ENOMATCH && codeowners == NULL) r = 0;
  }
  /* A file named (or found) that cannot be read is the caller's to fix. */
  if (r != 0 && r != TPUCI_ESPEC) r = TPUCI_EUSAGE;
  if (r == 0) {
    tpuci__quarantine_expire(&q, tpuci__quarantine_today(), NULL);
    memset(&o, 0, sizeof(o));
    o.runs = runs;
    o.min_rate = min_rate;
    o.today = tpuci__quarantine_today();
    o.quarantine = &q;
    o.owners = have_owners ? &owners : NULL;
    path = tpuci__printf("%s/%s", state_dir ? state_dir : ".tpuci", TPUCI__FLAKY_FILE);
    r = tpuci__flaky_propose(path, &o, out, NULL, &e);
  }
  free(path);
  tpuci__codeowners_free(&owners);
  tpuci__quarantine_free(&q);
  if (r == 0) return 0;
  if (e.msg == NULL) tpuci__err_set(&e, r, "%s", tpuci_strerror(r));
  e.code = r;
  return tpuci__fail(ctx, &e);
}
