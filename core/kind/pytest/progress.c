/* Reading what the bootstrap writes into progress.jsonl (progress.h),
 * and the failure line of a clipped traceback (pytest_run.h). */
#include "kind/pytest/progress.h"
#include "kind/pytest/pytest_run.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

void tpuci__progress_free(tpuci__progress_t *pr) {
  free(pr->rootdir);
  free(pr->running);
  tpuci__strv_free(&pr->collected);
  memset(pr, 0, sizeof(*pr));
}

/* A test report line's outcome: setup and teardown failures are errors,
 * a call decides the rest. pytest reports a non-strict xfail that passed
 * (XPASS) as passed with `wasxfail`, which is a pass, and a strict one as
 * failed. Returns 0 for a passing setup or teardown, which says nothing
 * yet. */
static int tpuci__progress_outcome(const char *when, const char *outcome, int xfail,
                                   tpuci__test_outcome_t *oc) {
  if (strcmp(outcome, "failed") == 0)
    *oc = strcmp(when, "call") == 0 ? TPUCI_TEST_FAILED : TPUCI_TEST_ERROR;
  else if (strcmp(outcome, "skipped") == 0) *oc = xfail ? TPUCI_TEST_XFAIL : TPUCI_TEST_SKIPPED;
  else if (strcmp(when, "call") == 0) *oc = TPUCI_TEST_PASSED;
  else return 0;
  return 1;
}

/* progress.jsonl's collection line: the node ids, replacing any before. */
static void tpuci__progress_collected(tpuci__progress_t *pr, const json_t *ids) {
  size_t i;
  json_t *v;
  tpuci__strv_free(&pr->collected);
  pr->has_collection = 1;
  json_array_foreach(ids, i, v) {
    if (json_is_string(v)) tpuci__strv_push(&pr->collected, json_string_value(v));
  }
}

/* The text of results_dir's progress.jsonl, or NULL when it cannot be
 * read (pytest never started its plugin). */
static char *tpuci__progress_text(const char *results_dir) {
  char *path = tpuci__printf("%s/%s", results_dir, TPUCI__PROGRESS_FILE);
  char *text = NULL;
  if (tpuci__read_file(path, &text, NULL) != 0) text = NULL;
  free(path);
  return text;
}

int tpuci__progress_read(const char *results_dir, tpuci__junit_t *j, tpuci__progress_t *pr) {
  char *text = tpuci__progress_text(results_dir), *line, *next;
  tpuci__idmap_t seen;
  int added = 0;

  if (text == NULL) return 0;
  tpuci__idmap_init(&seen);
  for (line = text; line && *line; line = next) {
    json_t *o, *ids;
    const char *id, *when, *outcome, *msg, *file, *v;
    size_t at;
    tpuci__test_t *t;
    tpuci__test_outcome_t oc;

    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    if ((o = json_loads(line, 0, NULL)) == NULL) continue; /* a cut last line */
    if ((v = json_string_value(json_object_get(o, "rootdir"))) != NULL) {
      free(pr->rootdir);
      pr->rootdir = tpuci__strdup(v);
    }
    if (json_is_array(ids = json_object_get(o, "collected"))) tpuci__progress_collected(pr, ids);
    if ((v = json_string_value(json_object_get(o, "start"))) != NULL) {
      free(pr->running);
      pr->running = tpuci__strdup(v);
    }
    id = json_string_value(json_object_get(o, "id"));
    when = json_string_value(json_object_get(o, "when"));
    outcome = json_string_value(json_object_get(o, "outcome"));
    if (id == NULL || when == NULL || outcome == NULL) {
      json_decref(o);
      continue;
    }
    /* Its teardown reported: the test is over. */
    if (strcmp(when, "teardown") == 0 && pr->running && strcmp(pr->running, id) == 0) {
      free(pr->running);
      pr->running = NULL;
    }
    if (j == NULL ||
        !tpuci__progress_outcome(when, outcome, json_is_true(json_object_get(o, "xfail")), &oc)) {
      json_decref(o);
      continue;
    }
    at = tpuci__idmap_get(&seen, id);
    if (at == TPUCI__IDMAP_NONE) {
      if (j->len == j->cap) {
        j->cap = j->cap ? 2 * j->cap : 16;
        j->items = tpuci__realloc(j->items, j->cap * sizeof(*j->items));
      }
      at = j->len++;
      t = &j->items[at];
      memset(t, 0, sizeof(*t));
      t->id = tpuci__strdup(id);
      tpuci__junit_mangle(id, &t->classname, &t->name);
      file = json_string_value(json_object_get(o, "file"));
      t->file = file && *file ? tpuci__strdup(file) : NULL;
      t->line = json_is_integer(json_object_get(o, "line"))
                    ? (int) json_integer_value(json_object_get(o, "line"))
                    : -1;
      t->outcome = oc;
      tpuci__idmap_put(&seen, t->id, at);
      added = 1;
    } else {
      t = &j->items[at];
      /* A teardown error after a passed call makes the test an error. */
      if (tpuci__test_outcome_failing(oc) && !tpuci__test_outcome_failing(t->outcome))
        t->outcome = oc;
    }
    t->time_s += json_number_value(json_object_get(o, "duration"));
    msg = json_string_value(json_object_get(o, "message"));
    if (msg && t->message == NULL) {
      /* A failure's message is a traceback's clipped tail: the message is
       * the exception's line (pytest's own, else found in the tail), the
       * tail the failure's text. */
      const char *crash = json_string_value(json_object_get(o, "crash"));
      char *first = crash && *crash                  ? tpuci__strdup(crash)
                    : strcmp(outcome, "failed") == 0 ? tpuci__pytest_failure_line(msg)
                                                     : NULL;
      if (first != NULL && t->text == NULL) t->text = tpuci__strdup(msg);
      t->message = first != NULL ? first : tpuci__strdup(msg);
    }
    json_decref(o);
  }
  tpuci__idmap_free(&seen);
  free(text);
  return added;
}

/* Whether a line is pytest's "E   " line of an exception's text. */
static int tpuci__e_line(const char *p, size_t n) {
  return n >= 2 && p[0] == 'E' && (p[1] == ' ' || p[1] == '\t');
}

/* Whether a line starts with a name that names an exception
 * ("ValueError: x", "torch.OutOfMemoryError", "KeyboardInterrupt"). */
static int tpuci__exc_line(const char *p, size_t n) {
  static const char *const ends[] = {"Error", "Exception", "Interrupt",
                                     "Exit",  "Warning",   "Failed"};
  size_t i = 0, k;
  while (i < n && (isalnum((unsigned char) p[i]) || p[i] == '_' || p[i] == '.')) i++;
  if (i == 0 || (i < n && p[i] != ':')) return 0;
  for (k = 0; k < sizeof(ends) / sizeof(ends[0]); k++) {
    size_t l = strlen(ends[k]);
    if (i >= l && strncmp(p + i - l, ends[k], l) == 0) return 1;
  }
  return 0;
}

char *tpuci__pytest_failure_line(const char *tail) {
  const char *p, *e_first = NULL, *exc = NULL, *prev_e = NULL;
  size_t e_len = 0, exc_len = 0;
  if (tail == NULL) return NULL;
  for (p = tail; *p;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t) (nl - p) : strlen(p);
    if (tpuci__e_line(p, n)) {
      if (prev_e == NULL) { /* the first line of a group of E lines */
        e_first = p;
        e_len = n;
      }
      prev_e = p;
    } else {
      prev_e = NULL;
      if (tpuci__exc_line(p, n)) {
        exc = p;
        exc_len = n;
      }
    }
    p = nl ? nl + 1 : p + n;
  }
  if (e_first != NULL) {
    size_t i = 1;
    while (i < e_len && (e_first[i] == ' ' || e_first[i] == '\t')) i++;
    if (i < e_len) return tpuci__strndup(e_first + i, e_len - i);
  }
  if (exc != NULL) return tpuci__strndup(exc, exc_len);
  return NULL;
}

int tpuci__pytest_suite_seen(const char *results_dir, unsigned long *count, unsigned long *crc) {
  char *text = tpuci__progress_text(results_dir), *line, *next;
  int found = 0;

  if (text == NULL) return 0;
  for (line = text; line && *line && !found; line = next) {
    json_t *o, *v;
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    /* Only the line that starts so: the others are not parsed. */
    if (strncmp(line, "{\"suite\": [", 11) != 0 || (o = json_loads(line, 0, NULL)) == NULL)
      continue;
    v = json_object_get(o, "suite");
    if (json_is_array(v) && json_array_size(v) == 2 && json_is_integer(json_array_get(v, 0)) &&
        json_is_integer(json_array_get(v, 1))) {
      *count = (unsigned long) json_integer_value(json_array_get(v, 0));
      *crc = (unsigned long) json_integer_value(json_array_get(v, 1));
      found = 1;
    }
    json_decref(o);
  }
  free(text);
  return found;
}

void tpuci__progress_unaffected(const char *results_dir, tpuci__strv_t *out) {
  char *text = tpuci__progress_text(results_dir), *line, *next;
  if (text == NULL) return;
  for (line = text; line && *line; line = next) {
    json_t *o, *v;
    size_t i;
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    /* Only the line that starts so: the others are not parsed. */
    if (strncmp(line, "{\"unaffected\": [", 16) != 0 || (o = json_loads(line, 0, NULL)) == NULL)
      continue;
    json_array_foreach(json_object_get(o, "unaffected"), i, v) if (json_is_string(v))
        tpuci__strv_push(out, json_string_value(v));
    json_decref(o);
  }
  free(text);
}
