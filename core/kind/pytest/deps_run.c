/* Only what a change can affect, in a run of the pytest kind (kind.h,
 * deps.h): each instance with select = "affected" (or every pytest
 * instance with --affected) belongs to a group of its name without the
 * shard, whose record says which tests the run leaves out; its attempts
 * record what each test needs, and the record is made new after the run. */
#include <stdlib.h>
#include <string.h>

#include "kind/pytest/kind_run.h"
#include "kind/pytest/progress.h"
#include "kind/pytest/pytest_run.h"
#include "kind/pytest/select_stats.h"

/* `to` relative to the folder `from` (both absolute, normal): "." when the
 * same, "../x" above. A new string. */
static char *tpuci__pd_relative(const char *from, const char *to) {
  tpuci__buf_t b;
  size_t common = 0, i;
  const char *rest;
  if (strcmp(from, "/") == 0) from = "";
  if (strcmp(to, "/") == 0) to = "";
  for (i = 0; from[i] && from[i] == to[i]; i++)
    if (from[i] == '/') common = i;
  if ((from[i] == '\0' && (to[i] == '/' || to[i] == '\0')) || (from[i] == '/' && to[i] == '\0'))
    common = i;
  tpuci__buf_init(&b);
  for (i = common; from[i]; i++)
    if (from[i] == '/') tpuci__buf_adds(&b, b.len ? "/.." : "..");
  rest = to + common;
  if (*rest == '/') rest++;
  if (*rest) tpuci__buf_addf(&b, "%s%s", b.len ? "/" : "", rest);
  if (b.len == 0) tpuci__buf_adds(&b, ".");
  return tpuci__buf_steal(&b);
}

/* pytest's working folder as it sees it (a container's path), or NULL. */
static char *tpuci__pd_cwd(const tpuci__kind_run_t *kr, const tpuci__instance_t *inst) {
  const char *cwd = inst->workdir;
  if (cwd == NULL && !tpuci__runtime_props(inst->runtime)->containers) cwd = kr->plan->spec_dir;
  if (cwd == NULL || cwd[0] != '/') return NULL;
  return tpuci__path_normal(cwd);
}

/* The rootdir as pytest sees it from the record's `root`, or NULL. */
static char *tpuci__pd_rootdir(const tpuci__pdeps_t *d, const char *root) {
  char *joined, *out;
  if (root == NULL) return d->cwd ? tpuci__strdup(d->cwd) : NULL;
  if (root[0] == '/') return tpuci__path_normal(root);
  if (d->cwd == NULL) return NULL;
  joined = tpuci__printf("%s/%s", d->cwd, root);
  out = tpuci__path_normal(joined);
  free(joined);
  return out;
}

/* What the record keeps as its root for the rootdir pytest reported. */
static char *tpuci__pd_root_saved(const tpuci__pdeps_t *d, const char *rootdir) {
  char *norm = tpuci__path_normal(rootdir), *out;
  if (d->cwd == NULL) return norm;
  out = tpuci__pd_relative(d->cwd, norm);
  free(norm);
  return out;
}

static void tpuci__pd_where(const tpuci__kind_run_t *kr, const tpuci__pdeps_t *d, const char *root,
                            tpuci__deps_where_t *w) {
  const tpuci__pytest_t *py = tpuci__pytest_of(&kr->plan->instances[d->first]);
  memset(w, 0, sizeof(*w));
  w->root = root;
  w->ignore = &py->select_ignore;
  w->always = &py->select_always;
  w->exclude = (const char *const *) d->excluded;
  w->nexclude = d->nexcluded;
  w->audit = kr->o.no_select ? 0 : py->select_audit;
  w->seed = (unsigned long) uv_hrtime();
}

/* The rootdir `rootdir` (as pytest sees it) on this machine, or NULL. */
static char *tpuci__pd_host(const tpuci__instance_t *inst, const char *rootdir) {
  return rootdir ? tpuci__pytest_host_path(inst, rootdir, ".") : NULL;
}

/* What the tree leaves out: the state folder, and the spec (what of it
 * matters to a job is its plan entry, in the key). */
static void tpuci__pd_excluded(const tpuci__kind_run_t *kr, tpuci__pdeps_t *d) {
  const tpuci__plan_t *p = kr->plan;
  char *state = realpath(kr->o.state_dir, NULL), *spec = NULL;
  if (p->spec_path != NULL && p->spec_dir != NULL) {
    const char *base = strrchr(p->spec_path, '/');
    char *joined = tpuci__printf("%s/%s", p->spec_dir, base ? base + 1 : p->spec_path);
    spec = realpath(joined, NULL);
    free(joined);
  }
  if (state != NULL) d->excluded[d->nexcluded++] = tpuci__strdup(state);
  if (spec != NULL) d->excluded[d->nexcluded++] = tpuci__strdup(spec);
  free(state);
  free(spec);
}

static tpuci__pdeps_t *tpuci__pd_group(tpuci__kind_run_t *kr, const char *name, size_t first) {
  size_t g;
  tpuci__pdeps_t *d;
  for (g = 0; g < kr->ndeps; g++)
    if (strcmp(kr->deps[g].name, name) == 0) return &kr->deps[g];
  kr->deps = tpuci__realloc(kr->deps, (kr->ndeps + 1) * sizeof(*kr->deps));
  d = &kr->deps[kr->ndeps++];
  memset(d, 0, sizeof(*d));
  d->name = tpuci__strdup(name);
  d->first = first;
  tpuci__deps_rec_init(&d->rec);
  tpuci__deps_fresh_init(&d->fresh);
  return d;
}

void tpuci__pk_deps_begin(tpuci__kind_run_t *kr) {
  size_t i;
  kr->deps_of = tpuci__malloc((kr->n + 1) * sizeof(*kr->deps_of));
  for (i = 0; i < kr->n; i++) {
    const tpuci__instance_t *inst = &kr->plan->instances[i];
    const tpuci__pytest_t *py = tpuci__pytest_of(inst);
    const char *key = kr->o.keys ? kr->o.keys[i] : NULL;
    tpuci__pdeps_t *d;
    char *name;
    kr->deps_of[i] = -1;
    if (!inst->selected || py == NULL || (kr->o.done && kr->o.done[i]) || kr->o.no_first ||
        (!py->select_affected && !kr->o.affected) || kr->select[i] != NULL ||
        kr->o.state_dir == NULL)
      continue;
    name = tpuci__group_name_of(inst->name);
    d = tpuci__pd_group(kr, name, i);
    free(name);
    kr->deps_of[i] = (int) (d - kr->deps);
    if (d->begun) continue;
    d->begun = 1;
    d->key = key ? tpuci__strdup(key) : NULL;
    if (key == NULL) {
      /* No key (an image not on the engine, the ssh runtime): it runs
       * every test, and records nothing it could not check later. */
      memset(&d->sel, 0, sizeof(d->sel));
      tpuci__idmap_init(&d->sel.unaffected);
      tpuci__idmap_init(&d->sel.audited);
      tpuci__dtree_init(&d->sel.start);
      d->sel.all = 1;
      d->sel.why = tpuci__strdup("its inputs have no key here (docs/cache.md): every test runs");
      d->off = 1;
      continue;
    }
    {
      tpuci__err_t e = {0, NULL};
      int r = tpuci__deps_load(kr->o.state_dir, d->name, &d->rec, &e);
      d->has_rec = r == 0;
      if (r < 0) d->load_problem = tpuci__strdup(e.msg);
      tpuci__err_clear(&e);
    }
    {
      tpuci__deps_where_t w;
      char *rootdir;
      tpuci__pd_excluded(kr, d);
      d->cwd = tpuci__pd_cwd(kr, inst);
      rootdir = tpuci__pd_rootdir(d, d->has_rec ? d->rec.root : NULL);
      d->root = tpuci__pd_host(inst, rootdir);
      free(rootdir);
      tpuci__pd_where(kr, d, d->root, &w);
      tpuci__deps_select(d->has_rec ? &d->rec : NULL, key, &w, TPUCI__ONLY_MAX_BYTES, &d->sel);
    }
    if (kr->o.no_select && !d->sel.all) {
      char *arg = d->sel.arg;
      d->sel.arg = NULL;
      d->sel.all = 1;
      d->sel.why = tpuci__strdup("--no-select: every test runs");
      tpuci__idmap_free(&d->sel.unaffected);
      tpuci__idmap_init(&d->sel.unaffected);
      tpuci__idmap_free(&d->sel.audited);
      tpuci__idmap_init(&d->sel.audited);
      d->sel.nunaffected = d->sel.naudit = 0;
      d->sel.arg = tpuci__strdup("record");
      free(arg);
    }
  }
}

const char *tpuci__pk_deps_arg(const tpuci__kind_run_t *kr, size_t index) {
  const tpuci__pdeps_t *d;
  if (kr->deps_of == NULL || kr->deps_of[index] < 0) return NULL;
  d = &kr->deps[kr->deps_of[index]];
  if (d->off) return NULL;
  /* A selection of node ids (a retry's, a shard's part) says what runs. */
  if (kr->select[index] != NULL) return "record";
  return d->sel.arg;
}

int tpuci__pk_unaffected(const tpuci__kind_run_t *kr, size_t index, const char *id) {
  const tpuci__pdeps_t *d;
  if (kr->deps_of == NULL || kr->deps_of[index] < 0) return 0;
  d = &kr->deps[kr->deps_of[index]];
  return !d->sel.all && tpuci__idmap_get(&d->sel.unaffected, id) != TPUCI__IDMAP_NONE;
}

void tpuci__pk_deps_tell(tpuci__kind_run_t *kr, size_t index) {
  tpuci__pdeps_t *d;
  char *text, *msg;
  if (kr->deps_of == NULL || kr->deps_of[index] < 0) return;
  d = &kr->deps[kr->deps_of[index]];
  if (d->told) return;
  d->told = 1;
  text = tpuci__deps_sel_text(&d->sel);
  msg = tpuci__printf("%s: select affected: %s%s%s", d->name, text,
                      d->load_problem ? "; the record could not be read: " : "",
                      d->load_problem ? d->load_problem : "");
  kr->host->message(kr->host->sched, msg);
  free(msg);
  free(text);
}

/* The tests the attempt left out as unaffected (its progress.jsonl's
 * {"unaffected": [...]}), into its history: said once, by the unsharded
 * instance or the first shard. */
static void tpuci__pk_left_out(tpuci__kind_run_t *kr, const tpuci__kind_proc_t *p,
                               tpuci__pdeps_t *d, const char *dir) {
  const tpuci__instance_t *inst = &kr->plan->instances[p->index];
  tpuci__strv_t ids = {0};
  size_t i;
  if (inst->shard > 1) return;
  tpuci__progress_unaffected(dir, &ids);
  for (i = 0; i < ids.len; i++) {
    size_t k = tpuci__idmap_get(&d->rec.tmap, ids.items[i]);
    tpuci__history_unaffected(tpuci__res_history(&kr->results[p->index]), p->number, ids.items[i],
                              k != TPUCI__IDMAP_NONE ? d->rec.tests[k].run : NULL);
  }
  tpuci__strv_free(&ids);
}

/* The audited tests of the process that failed: misses of the selection,
 * said once each. */
static void tpuci__pk_missed(tpuci__kind_run_t *kr, tpuci__history_t *h, tpuci__pdeps_t *d) {
  size_t i;
  for (i = 0; i < h->len; i++) {
    tpuci__test_hist_t *t = &h->tests[i];
    const tpuci__test_t *fin = tpuci__history_final(t);
    char *id, *msg;
    if (t->missed || fin == NULL || !tpuci__test_outcome_failing(fin->outcome) ||
        tpuci__idmap_get(&d->sel.audited, t->id) == TPUCI__IDMAP_NONE)
      continue;
    t->missed = 1;
    d->missed++;
    id = tpuci__safe(t->id, 0);
    msg = tpuci__printf("%s: missed by the selection: %s (left out as unaffected, run by "
                        "select.audit, and it failed: a defect of the selection)",
                        d->name, id);
    kr->host->message(kr->host->sched, msg);
    free(msg);
    free(id);
  }
}

void tpuci__pk_deps_ended(tpuci__kind_run_t *kr, const tpuci__kind_proc_t *p) {
  tpuci__pdeps_t *d;
  tpuci__history_t *h = tpuci__res_history(&kr->results[p->index]);
  tpuci__strv_t dirs = {0};
  size_t i;
  if (kr->deps_of == NULL || kr->deps_of[p->index] < 0) return;
  d = &kr->deps[kr->deps_of[p->index]];
  if (d->off || p->results_dir == NULL) return;
  /* A gang's hosts each record (worker-<i>/, host 0 first): merged. */
  tpuci__results_host_dirs(p->results_dir, &dirs);
  for (i = 0; i < dirs.len; i++)
    tpuci__deps_fresh_add(&d->fresh, dirs.items[i], h ? h->rootdir : NULL);
  if (h != NULL && dirs.len > 0) tpuci__pk_left_out(kr, p, d, dirs.items[0]);
  tpuci__strv_free(&dirs);
  if (h != NULL && d->sel.naudit > 0) tpuci__pk_missed(kr, h, d);
}

/* The record after the run, from the rootdir pytest reported: when it is
 * not the folder the selection walked (no record yet said where), that
 * folder is walked now and the record knows it was late. 0, or 1. */
static int tpuci__pd_update(tpuci__kind_run_t *kr, tpuci__pdeps_t *d, const tpuci__history_t **hs,
                            size_t nh, const char *run_id, tpuci__deps_rec_t *out) {
  const tpuci__instance_t *inst = &kr->plan->instances[d->first];
  tpuci__deps_ran_t ran = {.sel = &d->sel,
                           .fresh = &d->fresh,
                           .hs = (const tpuci__history_t *const *) hs,
                           .nh = nh,
                           .key = d->key,
                           .run = run_id};
  tpuci__deps_where_t w;
  char *host, *saved;
  int r;
  if (d->fresh.rootdir == NULL) {
    tpuci__deps_rec_init(out);
    return 1;
  }
  host = tpuci__pd_host(inst, d->fresh.rootdir);
  saved = tpuci__pd_root_saved(d, d->fresh.rootdir);
  tpuci__pd_where(kr, d, host, &w);
  if (host != NULL && (d->root == NULL || strcmp(host, d->root) != 0)) {
    tpuci__dtree_opts_t o = {w.ignore, w.exclude, w.nexclude, NULL};
    tpuci__err_t e = {0, NULL};
    tpuci__dtree_free(&d->sel.start);
    d->sel.has_start = tpuci__dtree_walk(host, &o, &d->sel.start, &e) == 0;
    tpuci__err_clear(&e);
    w.late = 1;
  }
  ran.old = d->has_rec ? &d->rec : NULL;
  ran.root_saved = saved;
  r = tpuci__deps_update(out, &ran, &w);
  free(host);
  free(saved);
  return r;
}

/* What group `d`'s selection saved this run (select_stats.h). */
static void tpuci__pd_line(const tpuci__kind_run_t *kr, const tpuci__pdeps_t *d, const char *run_id,
                           tpuci__select_line_t *l) {
  size_t i;
  double s;
  memset(l, 0, sizeof(*l));
  l->run = run_id;
  l->instance = d->name;
  l->all = d->sel.all;
  l->recorded = d->sel.recorded;
  l->left_out = d->sel.nunaffected;
  l->audited = d->sel.naudit;
  l->missed = d->missed;
  for (i = 0; d->has_rec && kr->o.timings != NULL && i < d->rec.ntests; i++) {
    const char *id = d->rec.tests[i].id;
    if (!tpuci__timings_get_traced(kr->o.timings, id, &s)) continue;
    l->time_total_s += s;
    if (tpuci__idmap_get(&d->sel.unaffected, id) != TPUCI__IDMAP_NONE) l->time_left_s += s;
  }
}

/* One line per group into the state folder's select.jsonl. */
static void tpuci__pd_stats(const tpuci__kind_run_t *kr, const char *run_id,
                            tpuci__strv_t *warnings) {
  tpuci__select_line_t *lines = tpuci__calloc(kr->ndeps + 1, sizeof(*lines));
  tpuci__err_t e = {0, NULL};
  size_t g, n = 0;
  for (g = 0; g < kr->ndeps; g++)
    if (!kr->deps[g].off && kr->deps[g].key != NULL)
      tpuci__pd_line(kr, &kr->deps[g], run_id, &lines[n++]);
  if (n > 0 && tpuci__select_stats_append(kr->o.state_dir, lines, n, &e) != 0)
    tpuci__strv_take(warnings, tpuci__printf("select affected: %s", e.msg));
  tpuci__err_clear(&e);
  free(lines);
}

size_t tpuci__pytest_kind_deps_save(tpuci__kind_run_t *kr, const char *run_id,
                                    tpuci__strv_t *warnings) {
  size_t g, i, n = 0;
  if (kr != NULL && kr->ndeps > 0) tpuci__pd_stats(kr, run_id, warnings);
  for (g = 0; kr != NULL && g < kr->ndeps; g++) {
    tpuci__pdeps_t *d = &kr->deps[g];
    const tpuci__history_t **hs = tpuci__calloc(kr->n + 1, sizeof(*hs));
    tpuci__deps_rec_t out;
    tpuci__err_t e = {0, NULL};
    size_t nh = 0;
    if (d->off || d->key == NULL) {
      free(hs);
      continue;
    }
    for (i = 0; i < kr->n; i++)
      if (kr->deps_of[i] == (int) g && tpuci__res_history(&kr->results[i]))
        hs[nh++] = tpuci__res_history(&kr->results[i]);
    if (d->fresh.off != NULL) {
      tpuci__strv_take(warnings, tpuci__printf("%s: select affected: nothing recorded (%s)",
                                               d->name, d->fresh.off));
    } else if (tpuci__pd_update(kr, d, hs, nh, run_id, &out) == 0) {
      if (tpuci__deps_save(kr->o.state_dir, d->name, &out, &e) == 0) n++;
      else tpuci__strv_take(warnings, tpuci__printf("select affected: %s", e.msg));
    }
    tpuci__deps_rec_free(&out);
    tpuci__err_clear(&e);
    free(hs);
  }
  return n;
}

void tpuci__pk_deps_free(tpuci__kind_run_t *kr) {
  size_t g;
  for (g = 0; g < kr->ndeps; g++) {
    free(kr->deps[g].name);
    free(kr->deps[g].key);
    free(kr->deps[g].load_problem);
    free(kr->deps[g].cwd);
    free(kr->deps[g].root);
    free(kr->deps[g].excluded[0]);
    free(kr->deps[g].excluded[1]);
    tpuci__deps_rec_free(&kr->deps[g].rec);
    tpuci__deps_sel_free(&kr->deps[g].sel);
    tpuci__deps_fresh_free(&kr->deps[g].fresh);
  }
  free(kr->deps);
  free(kr->deps_of);
}
