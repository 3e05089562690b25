/* Failing first's list from the history store (flaky.h,
 * tpuci__flaky_last_failed): the tests that ran and failed in each
 * identity's newest run, and which of them fail steadily. */
#include "kind/pytest/flaky.h"
#include "kind/pytest/pytest_run.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/idmap.h"

/* One identity's tests that failed last time, being read (newest run
 * first): its newest run gives them, older runs say which fail steadily. */
typedef struct {
  tpuci__strv_t ids;
  tpuci__idmap_t at; /* id -> index in ids */
  size_t *fails;     /* runs in which it failed, newest first, unbroken */
  unsigned char *settled;
  size_t open; /* ids not settled yet */
  int state;   /* 0: no run of it read yet; 1: reading older runs; 2: done */
} tpuci__last_t;

/* One row of a run's "tests" ([identity, node id, code, seconds,
 * message]) when it is of `identity` and has a code: 1 with *id, *code
 * and *not_run (a failure no attempt reached, TPUCI__FLAKY_NOT_RUN). */
static int tpuci__last_row(json_t *row, const char *identity, const char **id, char *code,
                           int *not_run) {
  const char *inst = json_string_value(json_array_get(row, 0));
  const char *c = json_string_value(json_array_get(row, 2));
  const char *msg = json_string_value(json_array_get(row, 4));
  char *ident;
  int mine;
  *id = json_string_value(json_array_get(row, 1));
  if (inst == NULL || *id == NULL || c == NULL || !*c) return 0;
  ident = tpuci__group_name_of(inst);
  mine = strcmp(ident, identity) == 0;
  free(ident);
  *code = c[0];
  *not_run = c[0] == 'f' && msg != NULL && strcmp(msg, TPUCI__FLAKY_NOT_RUN) == 0;
  return mine;
}

/* The newest run of `k`: its failed tests (not the unreached), none when
 * most of them failed. */
static void tpuci__last_newest(tpuci__last_t *l, json_t *tests, const char *identity,
                               int want_steady) {
  size_t j, ran = 0, failed = 0;
  json_t *row;
  json_array_foreach(tests, j, row) {
    const char *id;
    char code;
    int not_run;
    if (!tpuci__last_row(row, identity, &id, &code, &not_run) || strchr("pfko", code) == NULL)
      continue;
    ran++;
    if (code != 'f') continue;
    failed++;
    if (not_run || tpuci__idmap_get(&l->at, id) != TPUCI__IDMAP_NONE) continue;
    /* The map keeps the pointer: the list's copy outlives the run's. */
    tpuci__strv_push(&l->ids, id);
    tpuci__idmap_put(&l->at, l->ids.items[l->ids.len - 1], l->ids.len - 1);
  }
  /* An infra run says nothing of any one test (tpuci flaky's rule). */
  if (ran >= TPUCI__FLAKY_INFRA_MIN && failed * 2 > ran) {
    tpuci__strv_free(&l->ids);
    memset(&l->ids, 0, sizeof(l->ids));
  }
  l->fails = tpuci__calloc(l->ids.len + 1, sizeof(*l->fails));
  l->settled = tpuci__calloc(l->ids.len + 1, 1);
  for (j = 0; j < l->ids.len; j++) l->fails[j] = 1;
  l->open = l->ids.len;
  l->state = want_steady && l->open > 0 ? 1 : 2;
}

/* An older run of `k`: each unsettled test's code there. */
static void tpuci__last_older(tpuci__last_t *l, json_t *tests, const char *identity) {
  size_t j, x;
  json_t *row;
  json_array_foreach(tests, j, row) {
    const char *id;
    char code;
    int not_run;
    /* Most rows are not of a test still open: looked up first. */
    id = json_string_value(json_array_get(row, 1));
    if (id == NULL || (x = tpuci__idmap_get(&l->at, id)) == TPUCI__IDMAP_NONE || l->settled[x] ||
        !tpuci__last_row(row, identity, &id, &code, &not_run) || not_run)
      continue;
    if (code == 'f' && ++l->fails[x] < TPUCI__FLAKY_STEADY_RUNS) continue;
    if (code != 'f' && strchr("pko", code) == NULL) continue; /* a skip says nothing */
    l->settled[x] = 1;
    l->open--;
  }
  if (l->open == 0) l->state = 2;
}

void tpuci__flaky_last_failed(const char *path, const char *const *identities, size_t n,
                              tpuci__strv_t *out, tpuci__strv_t *steady) {
  tpuci__last_t *last = tpuci__calloc(n + 1, sizeof(*last));
  unsigned char *here = tpuci__calloc(n + 1, 1);
  tpuci__idmap_t want;
  char *text = NULL;
  size_t len = 0, left = n, end, k, j;

  tpuci__idmap_init(&want);
  for (k = 0; k < n; k++) {
    tpuci__idmap_put(&want, identities[k], k);
    tpuci__idmap_init(&last[k].at);
  }
  if (n == 0 || tpuci__read_file_max(path, TPUCI__FLAKY_MAX_BYTES * 2, &text, &len) != 0) len = 0;
  /* Newest first, each line parsed only when reached: most often the
   * last run has every identity, and a test that failed there settles
   * within a few older runs. A line that is not a run is skipped. */
  for (end = len; end > 0 && left > 0;) {
    size_t startl = end;
    json_t *o, *tests, *row;
    while (startl > 0 && text[startl - 1] != '\n') startl--;
    o = end > startl ? json_loadb(text + startl, end - startl, 0, NULL) : NULL;
    end = startl > 0 ? startl - 1 : 0;
    if (o == NULL) continue;
    tests = json_object_get(o, "tests");
    memset(here, 0, n);
    json_array_foreach(tests, j, row) {
      const char *inst = json_string_value(json_array_get(row, 0));
      char *identity;
      if (inst == NULL) continue;
      identity = tpuci__group_name_of(inst);
      k = tpuci__idmap_get(&want, identity);
      free(identity);
      if (k != TPUCI__IDMAP_NONE) here[k] = 1;
    }
    for (k = 0; k < n; k++) {
      if (!here[k] || last[k].state == 2) continue;
      if (last[k].state == 0) tpuci__last_newest(&last[k], tests, identities[k], steady != NULL);
      else tpuci__last_older(&last[k], tests, identities[k]);
      if (last[k].state == 2) left--;
    }
    json_decref(o);
  }
  for (k = 0; k < n; k++) {
    for (j = 0; j < last[k].ids.len; j++)
      tpuci__strv_push(
          steady != NULL && last[k].fails[j] >= TPUCI__FLAKY_STEADY_RUNS ? &steady[k] : &out[k],
          last[k].ids.items[j]);
    tpuci__strv_free(&last[k].ids);
    tpuci__idmap_free(&last[k].at);
    free(last[k].fails);
    free(last[k].settled);
  }
  tpuci__idmap_free(&want);
  free(text);
  free(here);
  free(last);
}
