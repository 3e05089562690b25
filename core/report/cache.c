/* The results cache's store (cache.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/cache.h"
#include "kind/pytest/config.h"
#include "kind/pytest/kind.h"

/* ------------------------------------------------------------------ */
/* Entries                                                             */

static int tpuci__passing_test(tpuci__test_outcome_t o) {
  return o == TPUCI_TEST_PASSED || o == TPUCI_TEST_SKIPPED || o == TPUCI_TEST_XFAIL ||
         o == TPUCI_TEST_UNAFFECTED;
}

int tpuci__cache_storable(const tpuci__instance_result_t *r) {
  const tpuci__history_t *h = tpuci__res_history(r);
  size_t i, k;
  if (r->outcome != TPUCI_OUTCOME_PASSED || r->nattempts == 0) return 0;
  for (k = 0; k < r->nattempts; k++)
    if (r->attempts[k].outcome != TPUCI_OUTCOME_PASSED) return 0;
  if (h == NULL) return 1;
  if (!tpuci__history_all_pass(h)) return 0;
  for (k = 0; k < h->n_attempts; k++)
    if (tpuci__attempt_abnormal(&h->attempts[k])) return 0;
  for (i = 0; i < h->len; i++) {
    const tpuci__test_t *f = tpuci__history_final(&h->tests[i]);
    if (f == NULL || !tpuci__passing_test(f->outcome) || tpuci__history_flaky(&h->tests[i]))
      return 0;
    for (k = 0; k < h->tests[i].len; k++)
      if (!tpuci__passing_test(h->tests[i].runs[k].result.outcome)) return 0;
  }
  return 1;
}

static void tpuci__set_str(json_t *o, const char *k, const char *v) {
  if (v != NULL) json_object_set_new(o, k, json_string(v));
}

json_t *tpuci__cache_entry(const tpuci__instance_t *inst, const tpuci__instance_result_t *r,
                           const char *key, const char *run_id) {
  json_t *e = json_object();
  uint64_t dur = 0;
  size_t k;
  for (k = 0; k < r->nattempts; k++) dur += r->attempts[k].duration_ms;
  json_object_set_new(e, "format", json_integer(TPUCI__CACHE_FORMAT));
  json_object_set_new(e, "key", json_string(key));
  json_object_set_new(e, "instance", json_string(inst->name));
  json_object_set_new(e, "run", json_string(run_id));
  json_object_set_new(e, "stored_ms", json_integer((json_int_t) tpuci__now_ms()));
  json_object_set_new(e, "start_ms",
                      json_integer((json_int_t) (r->nattempts ? r->attempts[0].start_ms : 0)));
  json_object_set_new(e, "duration_ms", json_integer((json_int_t) dur));
  if (r->nattempts > 0) tpuci__set_str(e, "log", r->attempts[r->nattempts - 1].log_path);
  if (tpuci__res_history(r) != NULL) {
    json_t *tests = json_array();
    const tpuci__history_t *h = tpuci__res_history(r);
    size_t i;
    for (i = 0; i < h->len; i++) {
      const tpuci__test_t *f = tpuci__history_final(&h->tests[i]);
      json_t *t = json_object();
      if (f == NULL) continue;
      json_object_set_new(t, "id", json_string(h->tests[i].id));
      tpuci__set_str(t, "classname", f->classname);
      tpuci__set_str(t, "name", f->name);
      tpuci__set_str(t, "file", f->file);
      json_object_set_new(t, "line", json_integer(f->line));
      json_object_set_new(t, "outcome", json_string(tpuci__test_outcome_name(f->outcome)));
      json_object_set_new(t, "time", json_real(f->time_s));
      tpuci__set_str(t, "type", f->type);
      tpuci__set_str(t, "message", f->message);
      tpuci__set_str(t, "path", h->tests[i].path);
      json_array_append_new(tests, t);
    }
    json_object_set_new(e, "tests", tests);
    tpuci__set_str(e, "rootdir", h->rootdir);
  }
  return e;
}

/* ------------------------------------------------------------------ */
/* The files                                                           */

static char *tpuci__entry_path(const char *state_dir, const char *key) {
  return tpuci__printf("%s/" TPUCI__CACHE_DIR "/%s.json", state_dir, key);
}

/* Keys are SHA-256 in hex: nothing else becomes a file name. */
static int tpuci__valid_key(const char *key) {
  return strlen(key) == 64 && strspn(key, "0123456789abcdef") == 64;
}

/* Why an entry is unusable, or NULL when it is fine. */
static const char *tpuci__entry_problem(const json_t *e, const char *key, const char *name) {
  const json_t *tests = json_object_get(e, "tests"), *t;
  size_t i;
  if (!json_is_object(e)) return "not a JSON object";
  if (json_integer_value(json_object_get(e, "format")) != TPUCI__CACHE_FORMAT)
    return "another format";
  if (!json_is_string(json_object_get(e, "key")) ||
      strcmp(json_string_value(json_object_get(e, "key")), key) != 0)
    return "it names another key";
  if (!json_is_string(json_object_get(e, "instance")) ||
      strcmp(json_string_value(json_object_get(e, "instance")), name) != 0)
    return "it names another instance";
  if (!json_is_string(json_object_get(e, "run"))) return "no run";
  if (!json_is_integer(json_object_get(e, "duration_ms"))) return "no duration";
  if (tests != NULL && !json_is_array(tests)) return "tests is not a list";
  if (json_array_size(tests) > TPUCI__CACHE_TESTS_MAX)
    return "more tests than an entry may hold (" TPUCI__CACHE_TESTS_MAX_TEXT ")";
  json_array_foreach(tests, i, t) {
    const char *o = json_string_value(json_object_get(t, "outcome"));
    const char *id = json_string_value(json_object_get(t, "id"));
    if (id == NULL || *id == '\0' || o == NULL) return "a test without an id or an outcome";
    if (strcmp(o, "passed") != 0 && strcmp(o, "skipped") != 0 && strcmp(o, "xfail") != 0 &&
        strcmp(o, "unaffected") != 0)
      return "a test that did not pass";
  }
  return NULL;
}

/* Whether s is a run id of the usual form: YYYYMMDD-HHMMSS-xxxx
 * (rundir.c). */
static int tpuci__run_id_form(const char *s, size_t n) {
  static const char form[] = "99999999-999999-ffff";
  size_t i;
  if (n != sizeof(form) - 1) return 0;
  for (i = 0; i < n; i++) {
    if (form[i] == '-'   ? s[i] != '-'
        : form[i] == '9' ? !(s[i] >= '0' && s[i] <= '9')
                         : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return 0;
  }
  return 1;
}

/* Whether an entry's log may be shown: a regular file that is, once
 * every link and ".." is resolved, inside <state_dir>/runs/<run>/ where
 * <run> is the entry's own run and has the usual form. Anything else
 * (/etc/shadow, ~/.docker/config.json, a link out of runs/) is never
 * read: the reports attach a log's last lines. */
static int tpuci__log_trusted(const char *state_dir, const char *run, const char *log) {
  char *runs = tpuci__printf("%s/runs", state_dir), *real_runs, *real_log;
  struct stat st;
  size_t n;
  int ok = 0;
  real_runs = realpath(runs, NULL);
  real_log = log != NULL && log[0] == '/' ? realpath(log, NULL) : NULL;
  free(runs);
  if (real_runs != NULL && real_log != NULL && run != NULL) {
    n = strlen(real_runs);
    if (strncmp(real_log, real_runs, n) == 0 && real_log[n] == '/') {
      const char *id = real_log + n + 1, *slash = strchr(id, '/');
      ok = slash != NULL && slash[1] != '\0' && tpuci__run_id_form(id, (size_t) (slash - id)) &&
           strncmp(id, run, (size_t) (slash - id)) == 0 && run[slash - id] == '\0' &&
           stat(real_log, &st) == 0 && S_ISREG(st.st_mode);
    }
  }
  free(real_runs);
  free(real_log);
  return ok;
}

int tpuci__cache_get(const char *state_dir, const char *key, const char *name, int touch,
                     json_t **out, tpuci__err_t *err) {
  char *path, *text = NULL;
  const char *problem;
  json_error_t je;
  json_t *e;
  size_t len;
  int r;
  *out = NULL;
  if (!tpuci__valid_key(key)) return 0;
  path = tpuci__entry_path(state_dir, key);
  r = tpuci__read_file_max(path, TPUCI__CACHE_ENTRY_MAX, &text, &len);
  if (r == UV_ENOENT) {
    free(path);
    return 0;
  }
  if (r == UV_EFBIG) {
    tpuci__err_set(err, TPUCI_ELIMIT, "%s: over the %zu MiB an entry may have", path,
                   TPUCI__CACHE_ENTRY_MAX >> 20);
    free(path);
    return -1;
  }
  if (r != 0) {
    char *why = tpuci__read_why(path, r);
    tpuci__err_set(err, r, "%s: %s", path, why);
    free(why);
    free(path);
    return -1;
  }
  e = json_loadb(text, len, 0, &je);
  free(text);
  if (e == NULL) {
    tpuci__err_set(err, TPUCI_EIO, "%s:%d: %s", path, je.line, je.text);
    free(path);
    return -1;
  }
  if ((problem = tpuci__entry_problem(e, key, name)) != NULL) {
    tpuci__err_set(err, TPUCI_EIO, "%s: %s", path, problem);
    json_decref(e);
    free(path);
    return -1;
  }
  /* A log this run may not show: the pass stands, without its log. */
  if (json_object_get(e, "log") != NULL &&
      !tpuci__log_trusted(state_dir, json_string_value(json_object_get(e, "run")),
                          json_string_value(json_object_get(e, "log"))))
    json_object_del(e, "log");
  /* Recently used: the last to go. */
  if (touch) utimensat(AT_FDCWD, path, NULL, 0);
  free(path);
  *out = e;
  return 1;
}

int tpuci__cache_put(const char *state_dir, const char *key, const json_t *entry,
                     tpuci__err_t *err) {
  static unsigned counter;
  char *dir, *path, *tmp, *text;
  int fd, r;
  if (!tpuci__valid_key(key)) return tpuci__err_set(err, TPUCI_EUSAGE, "bad key '%s'", key);
  if (json_array_size(json_object_get(entry, "tests")) > TPUCI__CACHE_TESTS_MAX)
    return tpuci__err_set(err, TPUCI_ELIMIT,
                          "'%s' not stored: %zu tests, at most %d in an "
                          "entry (shard it: each shard has an entry of its own)",
                          json_string_value(json_object_get(entry, "instance")),
                          json_array_size(json_object_get(entry, "tests")), TPUCI__CACHE_TESTS_MAX);
  text = json_dumps(entry, JSON_COMPACT);
  if (strlen(text) > TPUCI__CACHE_ENTRY_MAX) {
    r = tpuci__err_set(err, TPUCI_ELIMIT, "'%s' not stored: its entry is over %zu MiB",
                       json_string_value(json_object_get(entry, "instance")),
                       TPUCI__CACHE_ENTRY_MAX >> 20);
    free(text);
    return r;
  }
  dir = tpuci__printf("%s/" TPUCI__CACHE_DIR, state_dir);
  if ((r = tpuci__mkdir_p(dir, 0755)) != 0) {
    tpuci__err_set(err, r, "%s: %s", dir, tpuci__strerror(r));
    free(dir);
    free(text);
    return r;
  }
  free(dir);
  path = tpuci__entry_path(state_dir, key);
  /* A name of this process's own: two runs never write one file. */
  tmp = tpuci__printf("%s.%ld.%u.tmp", path, (long) getpid(), counter++);
  fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  r = fd < 0 ? -errno : tpuci__write_all(fd, text, strlen(text));
  if (fd >= 0 && close(fd) != 0 && r == 0) r = -errno;
  if (r == 0 && rename(tmp, path) != 0) r = -errno;
  if (r != 0) {
    tpuci__err_set(err, r, "%s: %s", path, tpuci__strerror(r));
    unlink(tmp);
  }
  free(text);
  free(tmp);
  free(path);
  return r;
}

int tpuci__cache_refutes(const tpuci__instance_result_t *r) {
  size_t k;
  if (r->outcome == TPUCI_OUTCOME_FLAKY || r->outcome == TPUCI_OUTCOME_ORDER_DEPENDENT) return 1;
  for (k = 0; k < r->nattempts; k++) {
    tpuci_outcome_t o = r->attempts[k].outcome;
    if (o == TPUCI_OUTCOME_FAILED || o == TPUCI_OUTCOME_TIMEOUT || o == TPUCI_OUTCOME_OOM) return 1;
  }
  return 0;
}

int tpuci__cache_remove(const char *state_dir, const char *key, tpuci__err_t *err) {
  char *path;
  int r = 0;
  if (!tpuci__valid_key(key)) return tpuci__err_set(err, TPUCI_EUSAGE, "bad key '%s'", key);
  path = tpuci__entry_path(state_dir, key);
  if (unlink(path) != 0) {
    r = errno == ENOENT ? 1 : -errno;
    if (r < 0) tpuci__err_set(err, r, "%s: %s", path, tpuci__strerror(r));
  }
  free(path);
  return r;
}

typedef struct {
  char *name;
  int64_t mtime_ns;
  uint64_t bytes;
} tpuci__cfile_t;

static int tpuci__cmp_age(const void *a, const void *b) {
  const tpuci__cfile_t *x = a, *y = b;
  if (x->mtime_ns != y->mtime_ns) return x->mtime_ns < y->mtime_ns ? -1 : 1;
  return strcmp(x->name, y->name);
}

size_t tpuci__cache_trim(const char *state_dir, size_t max_entries, uint64_t max_bytes) {
  char *dir = tpuci__printf("%s/" TPUCI__CACHE_DIR, state_dir);
  DIR *d = opendir(dir);
  struct dirent *de;
  tpuci__cfile_t *v = NULL;
  size_t n = 0, cap = 0, i, gone = 0;
  uint64_t bytes = 0;
  int64_t old = ((int64_t) tpuci__now_ms() - 3600 * 1000) * 1000000;
  if (d == NULL) {
    free(dir);
    return 0;
  }
  while ((de = readdir(d)) != NULL) {
    size_t len = strlen(de->d_name);
    char *path;
    struct stat st;
    int tmp = len > 4 && strcmp(de->d_name + len - 4, ".tmp") == 0;
    if (!tmp && !(len == 69 && strcmp(de->d_name + 64, ".json") == 0)) continue;
    path = tpuci__printf("%s/%s", dir, de->d_name);
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) {
      int64_t m = (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
      if (tmp) {
        if (m < old) unlink(path); /* a run killed while it wrote */
      } else {
        if (n == cap) {
          cap = cap ? cap * 2 : 256;
          v = tpuci__realloc(v, cap * sizeof(*v));
        }
        v[n].name = path;
        v[n].mtime_ns = m;
        v[n].bytes = (uint64_t) st.st_size;
        bytes += v[n].bytes;
        n++;
        path = NULL;
      }
    }
    free(path);
  }
  closedir(d);
  qsort(v, n, sizeof(*v), tpuci__cmp_age);
  for (i = 0; i < n; i++) {
    if (n - gone > max_entries || bytes > max_bytes) {
      /* Another run may have removed it first: that is the same. */
      if (unlink(v[i].name) == 0 || errno == ENOENT) {
        gone++;
        bytes -= v[i].bytes;
      }
    }
    free(v[i].name);
  }
  free(v);
  free(dir);
  return gone;
}

/* ------------------------------------------------------------------ */
/* Restoring                                                           */

static char *tpuci__jdup(const json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return s ? tpuci__strdup(s) : NULL;
}

void tpuci__cache_restore(const json_t *entry, const tpuci__instance_t *inst,
                          tpuci__instance_result_t *r) {
  const char *run = json_string_value(json_object_get(entry, "run"));
  const char *log = json_string_value(json_object_get(entry, "log"));
  uint64_t dur = (uint64_t) json_integer_value(json_object_get(entry, "duration_ms"));
  const json_t *tests = json_object_get(entry, "tests"), *t;
  tpuci__attempt_result_t *a;
  char d[32];
  size_t i;

  memset(r, 0, sizeof(*r));
  r->attempts = tpuci__calloc(1, sizeof(*r->attempts));
  r->nattempts = 1;
  a = &r->attempts[0];
  a->outcome = TPUCI_OUTCOME_CACHED;
  a->exit_code = 0;
  a->start_ms = tpuci__now_ms();
  a->cause = tpuci__printf("passed in run %s (%s)", run, tpuci__duration_format(dur, d, sizeof(d)));
  /* The log of that pass, while the run folder keeps it (tpuci__cache_get
   * dropped one outside the state folder's runs/). */
  if (log != NULL && access(log, R_OK) == 0) a->log_path = tpuci__strdup(log);
  r->outcome = TPUCI_OUTCOME_CACHED;
  if (tpuci__pytest_of(inst) == NULL || !json_is_array(tests)) return;

  {
    tpuci__junit_t report;
    tpuci__junit_attempt_t ja;
    const char **ids = tpuci__calloc(json_array_size(tests) + 1, sizeof(*ids));
    memset(&report, 0, sizeof(report));
    report.suites = 1;
    report.items = tpuci__calloc(json_array_size(tests) + 1, sizeof(*report.items));
    json_array_foreach(tests, i, t) {
      tpuci__test_t *x = &report.items[report.len++];
      const char *o = json_string_value(json_object_get(t, "outcome"));
      x->id = tpuci__jdup(t, "id");
      x->classname = tpuci__jdup(t, "classname");
      x->name = tpuci__jdup(t, "name");
      x->file = tpuci__jdup(t, "file");
      x->line = json_is_integer(json_object_get(t, "line"))
                    ? (int) json_integer_value(json_object_get(t, "line"))
                    : -1;
      x->outcome = strcmp(o, "skipped") == 0      ? TPUCI_TEST_SKIPPED
                   : strcmp(o, "xfail") == 0      ? TPUCI_TEST_XFAIL
                   : strcmp(o, "unaffected") == 0 ? TPUCI_TEST_UNAFFECTED
                                                  : TPUCI_TEST_PASSED;
      x->time_s = json_number_value(json_object_get(t, "time"));
      x->type = tpuci__jdup(t, "type");
      x->message = tpuci__jdup(t, "message");
      if (x->classname == NULL) x->classname = tpuci__strdup("");
      if (x->name == NULL) x->name = tpuci__strdup("");
      ids[i] = json_string_value(json_object_get(t, "id"));
    }
    report.cap = report.len;
    memset(&ja, 0, sizeof(ja));
    ja.outcome = TPUCI_OUTCOME_PASSED;
    ja.exit_code = 0;
    ja.cause = a->cause;
    ja.time_s = (double) dur / 1000.0;
    ja.collected = ids;
    ja.n_collected = json_array_size(tests);
    ja.has_collection = 1;
    tpuci__history_t *h = tpuci__calloc(1, sizeof(*h));
    tpuci__res_pytest(r)->history = h;
    tpuci__history_init(h, inst->name);
    h->rootdir = tpuci__jdup(entry, "rootdir");
    tpuci__history_add(h, &ja, &report);
    json_array_foreach(tests, i, t) {
      const char *path = json_string_value(json_object_get(t, "path"));
      size_t at = tpuci__idmap_get(&h->map, ids[i]);
      if (path == NULL || at >= h->len) continue;
      free(h->tests[at].path);
      h->tests[at].path = tpuci__strdup(path);
    }
    free(ids);
  }
}
