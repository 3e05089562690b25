/* Only what a change can affect, in a run of the pytest kind (kind.h,
 * deps.h): each instance with select = "affected" (or every pytest
 * instance with --affected) belongs to a group of its name without the
 * shard, whose record says which tests the run leaves out; its attempts
 * record what each test needs, and the record is made new after the run. */
#include <stdlib.h>
#include <string.h>

#include "pytest/kind_run.h"
#include "pytest/progress.h"

/* Where a rootdir-relative file of the group is on this machine. */
static char *tpuci__pd_path(void *ud, const char *rootdir, const char *rel) {
  const tpuci__instance_t *inst = ud;
  return tpuci__pytest_host_path(inst, rootdir, rel);
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
    const char *key = kr->o.keys ? kr->o.keys[i] : NULL;
    tpuci__pdeps_t *d;
    char *name;
    kr->deps_of[i] = -1;
    if (!inst->selected || inst->pytest == NULL || (kr->o.done && kr->o.done[i]) ||
        kr->o.no_first || (!inst->pytest->select_affected && !kr->o.affected) ||
        kr->select[i] != NULL || kr->o.state_dir == NULL)
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
    tpuci__deps_select(d->has_rec ? &d->rec : NULL, key, &inst->pytest->select_always,
                       tpuci__pd_path, (void *) inst, TPUCI__ONLY_MAX_BYTES, &d->sel);
    if (kr->o.no_select && !d->sel.all) {
      tpuci__deps_sel_free(&d->sel);
      tpuci__idmap_init(&d->sel.unaffected);
      d->sel.all = 1;
      d->sel.why = tpuci__strdup("--no-select: every test runs");
      d->sel.arg = tpuci__strdup("record");
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
                               tpuci__pdeps_t *d) {
  const tpuci__instance_t *inst = &kr->plan->instances[p->index];
  tpuci__strv_t ids = {0};
  size_t i;
  if (inst->pytest->shard > 1) return;
  tpuci__progress_unaffected(p->results_dir, &ids);
  for (i = 0; i < ids.len; i++) {
    size_t k = tpuci__idmap_get(&d->rec.tmap, ids.items[i]);
    tpuci__history_unaffected(kr->results[p->index].history, p->number, ids.items[i],
                              k != TPUCI__IDMAP_NONE ? d->rec.tests[k].run : NULL);
  }
  tpuci__strv_free(&ids);
}

void tpuci__pk_deps_ended(tpuci__kind_run_t *kr, const tpuci__kind_proc_t *p) {
  tpuci__pdeps_t *d;
  const tpuci__history_t *h = kr->results[p->index].history;
  if (kr->deps_of == NULL || kr->deps_of[p->index] < 0) return;
  d = &kr->deps[kr->deps_of[p->index]];
  if (d->off || p->results_dir == NULL) return;
  tpuci__deps_fresh_add(&d->fresh, p->results_dir, h ? h->rootdir : NULL);
  if (h != NULL) tpuci__pk_left_out(kr, p, d);
}

size_t tpuci__pytest_kind_deps_save(tpuci__kind_run_t *kr, const char *run_id,
                                    tpuci__strv_t *warnings) {
  size_t g, i, n = 0;
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
      if (kr->deps_of[i] == (int) g && kr->results[i].history) hs[nh++] = kr->results[i].history;
    if (d->fresh.off != NULL) {
      tpuci__strv_take(warnings, tpuci__printf("%s: select affected: nothing recorded (%s)",
                                               d->name, d->fresh.off));
    } else if (tpuci__deps_update(&out, d->has_rec ? &d->rec : NULL, &d->sel, &d->fresh, hs, nh,
                                  d->key, run_id, tpuci__pd_path,
                                  (void *) &kr->plan->instances[d->first]) == 0) {
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
    tpuci__deps_rec_free(&kr->deps[g].rec);
    tpuci__deps_sel_free(&kr->deps[g].sel);
    tpuci__deps_fresh_free(&kr->deps[g].fresh);
  }
  free(kr->deps);
  free(kr->deps_of);
}
