/* Building the run report and writing it as JSON and YAML. */
#include "report/report.h"
#include "report/report_html.h"
#include "kind/pytest/config.h"
#include "kind/pytest/kind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#define TPUCI__TAIL_BYTES 4096
#define TPUCI__TAIL_LINES 40

/* The last lines of a log file, at most TPUCI__TAIL_BYTES, as a JSON
 * string: every byte kept (a NUL too: jansson writes it as \u0000), the
 * bytes that are not UTF-8 as '?'. */
static json_t *tpuci__log_tail(const char *path) {
  FILE *f;
  long size;
  char buf[TPUCI__TAIL_BYTES], *p, *end;
  size_t n;
  json_t *j;
  int lines = 0;

  if (path == NULL || (f = fopen(path, "rb")) == NULL) return json_null();
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, size > TPUCI__TAIL_BYTES ? size - TPUCI__TAIL_BYTES : 0, SEEK_SET);
  n = fread(buf, 1, TPUCI__TAIL_BYTES, f);
  fclose(f);
  end = buf + n;
  /* Keep whole lines, at most TPUCI__TAIL_LINES of them. */
  p = end;
  if (p > buf && p[-1] == '\n') p--;
  while (p > buf) {
    if (p[-1] == '\n' && ++lines == TPUCI__TAIL_LINES) break;
    p--;
  }
  if (p == buf && size > TPUCI__TAIL_BYTES) {
    char *nl = memchr(buf, '\n', n);
    p = nl ? nl + 1 : buf;
  }
  /* Logs are bytes; JSON strings must be UTF-8: if they are not, the
   * bytes outside ASCII become '?'. */
  if ((j = json_stringn(p, (size_t) (end - p))) != NULL) return j;
  for (char *q = p; q < end; q++)
    if ((unsigned char) *q >= 0x80) *q = '?';
  return json_stringn(p, (size_t) (end - p));
}

char *tpuci__report_log_tail(const char *path, size_t *len) {
  json_t *j = tpuci__log_tail(path);
  char *s = NULL;
  *len = 0;
  if (json_is_string(j)) {
    *len = json_string_length(j);
    s = tpuci__malloc(*len + 1);
    memcpy(s, json_string_value(j), *len);
    s[*len] = '\0';
  }
  json_decref(j);
  return s;
}

json_t *tpuci__report_attempt(int number, const tpuci__attempt_result_t *res, int with_tail) {
  json_t *o = json_object();
  json_object_set_new(o, "attempt", json_integer(number));
  json_object_set_new(o, "outcome", json_string(tpuci_outcome_name(res->outcome)));
  json_object_set_new(o, "exit_code",
                      res->exit_code >= 0 ? json_integer(res->exit_code) : json_null());
  json_object_set_new(o, "signal", res->term_signal ? json_integer(res->term_signal) : json_null());
  json_object_set_new(o, "start_ms", json_integer((json_int_t) res->start_ms));
  json_object_set_new(o, "duration_ms", json_integer((json_int_t) res->duration_ms));
  json_object_set_new(o, "cause", json_string(res->cause ? res->cause : ""));
  json_object_set_new(o, "log", res->log_path ? json_string(res->log_path) : json_null());
  if (with_tail) json_object_set_new(o, "log_tail", tpuci__log_tail(res->log_path));
  return o;
}

/* How an order-dependent test's order mattered (docs/reports.md). */
static json_t *tpuci__report_order(const tpuci__test_hist_t *t) {
  json_t *o = json_object(), *c = json_array();
  size_t i;
  json_object_set_new(o, "failed_in", json_integer(t->fail_attempt));
  json_object_set_new(o, "passed_in", json_integer(t->pass_attempt));
  json_object_set_new(o, "brittle", json_boolean(t->order_brittle));
  for (i = 0; i < t->candidates.len; i++)
    json_array_append_new(c, json_string(t->candidates.items[i]));
  json_object_set_new(o, "candidates", c);
  json_object_set_new(o, "confirmed", json_boolean(t->order_confirmed));
  json_object_set_new(o, "polluter", t->polluter ? json_string(t->polluter) : json_null());
  json_object_set_new(o, "checks", json_integer(t->order_checks));
  json_object_set_new(o, "passed_apart", json_integer(t->order_apart));
  json_object_set_new(o, "text", t->order_note ? json_string(t->order_note) : json_null());
  return o;
}

/* The failing-first process of a pytest instance (null: none): the tests
 * it moved there and why, and how it ended; and its order checks. */
static void tpuci__report_first(json_t *jo, const tpuci__instance_result_t *ir) {
  const tpuci__pytest_result_t *res = tpuci__res_pytest_of(ir);
  json_t *first = json_null(), *checks = json_array();
  size_t i;
  if (res->first != NULL) {
    json_t *ids = json_array();
    first = tpuci__report_attempt(0, res->first, 0);
    json_object_del(first, "attempt");
    for (i = 0; i < res->first_tests.len; i++)
      json_array_append_new(ids, json_string(res->first_tests.items[i]));
    json_object_set_new(first, "tests", ids);
    json_object_set_new(first, "why",
                        json_string("failed in the last run (pytest.failed_first): "
                                    "run first, in a process of their own"));
  }
  json_object_set_new(jo, "first", first);
  for (i = 0; i < res->nchecks; i++) {
    const tpuci__order_check_t *k = &res->checks[i];
    json_t *o = json_object();
    json_object_set_new(o, "test", json_string(k->test));
    json_object_set_new(o, "before", json_integer((json_int_t) k->before));
    json_object_set_new(o, "result",
                        json_string(k->failed > 0    ? "failed"
                                    : k->failed == 0 ? "passed"
                                                     : "unknown"));
    json_object_set_new(o, "start_ms", json_integer((json_int_t) k->start_ms));
    json_object_set_new(o, "duration_ms", json_integer((json_int_t) k->duration_ms));
    json_object_set_new(o, "cause", json_string(k->cause ? k->cause : ""));
    json_object_set_new(o, "log", k->log_path ? json_string(k->log_path) : json_null());
    json_array_append_new(checks, o);
  }
  json_object_set_new(jo, "order_checks", checks);
}

/* A pytest instance's tests: each once, with its final result. */
static json_t *tpuci__report_tests(const tpuci__history_t *h) {
  json_t *a = json_array();
  size_t i, r;
  for (i = 0; i < h->len; i++) {
    const tpuci__test_hist_t *t = &h->tests[i];
    const tpuci__test_t *fin = tpuci__history_final(t);
    const char *msg = NULL;
    json_t *o = json_object();
    for (r = t->len; r > 0; r--)
      if (tpuci__test_outcome_failing(t->runs[r - 1].result.outcome)) {
        msg = t->runs[r - 1].result.message;
        break;
      }
    json_object_set_new(o, "id", json_string(t->id));
    json_object_set_new(
        o, "outcome",
        json_string(fin ? tpuci__test_outcome_name(fin->outcome) : TPUCI__TEST_NOT_RUN));
    json_object_set_new(o, "flaky", json_boolean(tpuci__history_flaky(t)));
    json_object_set_new(o, "order_dependent", json_boolean(t->order_dep));
    if (t->missed) json_object_set_new(o, "missed", json_true());
    if (t->order_dep) json_object_set_new(o, "order", tpuci__report_order(t));
    if (fin != NULL && fin->outcome == TPUCI_TEST_UNAFFECTED)
      json_object_set_new(o, "unaffected_since", fin->text ? json_string(fin->text) : json_null());
    json_object_set_new(o, "runs", json_integer((json_int_t) t->len));
    json_object_set_new(o, "duration_s", json_real(fin ? fin->time_s : 0.0));
    {
      json_t *m = msg ? json_string(msg) : NULL; /* NULL too if not UTF-8 */
      json_object_set_new(o, "message", m ? m : json_null());
    }
    json_array_append_new(a, o);
  }
  return a;
}

const char *tpuci__report_verdict(int code) {
  switch (code) {
    case 0: return "passed";
    case 130: return "interrupted";
    case 3: return "not-run";
    default: return "failed";
  }
}

int tpuci__report_verdict_code(const char *verdict) {
  static const int codes[] = {0, 1, 130, 3};
  size_t k;
  for (k = 0; verdict && k < sizeof(codes) / sizeof(codes[0]); k++)
    if (strcmp(verdict, tpuci__report_verdict(codes[k])) == 0) return codes[k];
  return -1;
}

void tpuci__report_set_records(json_t *report, int exit_code, const tpuci__strv_t *paths,
                               const tpuci__strv_t *errors) {
  json_t *a = json_array();
  size_t i;
  for (i = 0; i < paths->len; i++) {
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string(paths->items[i]));
    json_object_set_new(o, "error", json_string(errors->items[i]));
    json_array_append_new(a, o);
  }
  json_object_set_new(report, "exit_code", json_integer(exit_code));
  json_object_set_new(report, "write_errors", a);
}

json_t *tpuci__report_build(const tpuci__plan_t *plan, const tpuci__instance_result_t *results,
                            const tpuci__run_info_t *info) {
  json_t *root = json_object(), *insts = json_array();
  size_t i, k, n[TPUCI_OUTCOME__COUNT] = {0}, total = 0;

  json_object_set_new(root, "version", json_integer(TPUCI__REPORT_VERSION));
  json_object_set_new(root, "run_id", json_string(info->run_id));
  json_object_set_new(root, "run_dir", json_string(info->run_dir));
  json_object_set_new(root, "spec", json_string(plan->spec_path ? plan->spec_path : ""));
  json_object_set_new(root, "start_ms", json_integer((json_int_t) info->start_ms));
  json_object_set_new(root, "duration_ms", json_integer((json_int_t) info->duration_ms));
  json_object_set_new(root, "jobs", json_integer(info->jobs));
  json_object_set_new(root, "exit_code", json_integer(info->exit_code));
  json_object_set_new(root, "verdict", json_string(tpuci__report_verdict(info->verdict)));
  json_object_set_new(root, "error", info->error ? json_string(info->error) : json_null());
  json_object_set_new(root, "tpuci_version", json_string(tpuci_version()));
  json_object_set_new(root, "commit", info->commit ? json_string(info->commit) : json_null());
  json_object_set_new(root, "write_errors", json_array());
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    const tpuci__instance_result_t *res = &results[i];
    json_t *jo, *ja, *jm;
    if (!inst->selected) continue;
    jo = json_object();
    ja = json_array();
    jm = json_object();
    json_object_set_new(jo, "name", json_string(inst->name));
    json_object_set_new(jo, "job", json_string(inst->job));
    json_object_set_new(jo, "where", json_string(inst->where ? inst->where : ""));
    for (k = 0; k < inst->matrix.len; k++)
      json_object_set_new(jm, inst->matrix.items[k].key, json_string(inst->matrix.items[k].value));
    json_object_set_new(jo, "matrix", jm);
    /* Where it ran: the image's ref and the topology's name. */
    json_object_set_new(jo, "image",
                        inst->image >= 0 && (size_t) inst->image < plan->nimages
                            ? json_string(plan->images[inst->image].ref)
                            : json_null());
    json_object_set_new(jo, "topology",
                        inst->topology >= 0 && (size_t) inst->topology < plan->ntopologies
                            ? json_string(plan->topologies[inst->topology].name)
                            : json_null());
    json_object_set_new(
        jo, "outcome",
        json_string(res->outcome == TPUCI_OUTCOME_NONE ? "not-run"
                                                       : tpuci_outcome_name(res->outcome)));
    for (k = 0; k < res->nattempts; k++) {
      json_t *jt = tpuci__report_attempt((int) k + 1, &res->attempts[k], 1);
      /* Slots it held: one per emulated host (the HTML timeline). */
      json_object_set_new(jt, "slots", json_integer(tpuci__plan_hosts(plan, inst)));
      json_array_append_new(ja, jt);
    }
    json_object_set_new(jo, "attempts", ja);
    if (tpuci__res_history(res))
      json_object_set_new(jo, "tests", tpuci__report_tests(tpuci__res_history(res)));
    if (tpuci__pytest_of(inst)) tpuci__report_first(jo, res);
    json_array_append_new(insts, jo);
    n[res->outcome]++;
    total++;
  }
  json_object_set_new(root, "counts", tpuci__report_counts(n, total));
  json_object_set_new(root, "instances", insts);
  return root;
}

json_t *tpuci__report_counts(const size_t n[TPUCI_OUTCOME__COUNT], size_t total) {
  json_t *counts = json_object();
  int o;
  for (o = 1; o < TPUCI_OUTCOME__COUNT; o++)
    json_object_set_new(counts, tpuci_outcome_name((tpuci_outcome_t) o),
                        json_integer((json_int_t) n[o]));
  json_object_set_new(counts, "not-run", json_integer((json_int_t) n[TPUCI_OUTCOME_NONE]));
  json_object_set_new(counts, "total", json_integer((json_int_t) total));
  return counts;
}

char *tpuci__report_json_text(const json_t *report) {
  char *s = json_dumps(report, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  size_t n;
  if (s == NULL) return NULL;
  /* Grown in place for its newline, not copied: a run of 2000 instances
   * held two 1.5 MB copies at its peak. */
  n = strlen(s);
  s = tpuci__realloc(s, n + 2);
  s[n] = '\n';
  s[n + 1] = '\0';
  return s;
}

/* ------------------------------------------------------------------ */
/* YAML: the JSON tree, event by event. libyaml returns 1 on success.  */

static int tpuci__yaml_write(void *data, unsigned char *buf, size_t size) {
  tpuci__buf_add(data, (const char *) buf, size);
  return 1;
}

static int tpuci__yaml_scalar(yaml_emitter_t *e, const char *s, size_t len, int plain_ok) {
  yaml_event_t ev;
  /* Strings are quoted whenever a plain scalar could read back as
   * something else (a number, true, null, a date). */
  if (!yaml_scalar_event_initialize(
          &ev, NULL, NULL, (yaml_char_t *) s, (int) len, plain_ok, !plain_ok ? 1 : 0,
          plain_ok ? YAML_PLAIN_SCALAR_STYLE : YAML_DOUBLE_QUOTED_SCALAR_STYLE))
    return 0;
  return yaml_emitter_emit(e, &ev);
}

/* Whether a string can be written plain and still read back as the same
 * string: letters, digits and a few punctuation marks, not starting with
 * a flow indicator, and nothing YAML would read as another type. */
static int tpuci__yaml_plain_safe(const char *s, size_t len) {
  size_t i;
  if (len == 0 || len > 200 || memchr(s, '\0', len) != NULL) return 0;
  for (i = 0; i < len; i++) {
    unsigned char c = (unsigned char) s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          strchr("_./=-[],()+", c)))
      return 0;
  }
  if (strchr("-[],", s[0])) return 0;
  return !tpuci__yaml_ambiguous(s);
}

static int tpuci__yaml_node(yaml_emitter_t *e, json_t *v) {
  yaml_event_t ev;
  char num[64];
  switch (json_typeof(v)) {
    case JSON_OBJECT: {
      const char *key;
      json_t *val;
      if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
          !yaml_emitter_emit(e, &ev))
        return 0;
      json_object_foreach(v, key, val) {
        if (!tpuci__yaml_scalar(e, key, strlen(key), tpuci__yaml_plain_safe(key, strlen(key))) ||
            !tpuci__yaml_node(e, val))
          return 0;
      }
      return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
    }
    case JSON_ARRAY: {
      size_t i;
      json_t *val;
      if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
          !yaml_emitter_emit(e, &ev))
        return 0;
      json_array_foreach(v, i, val) {
        if (!tpuci__yaml_node(e, val)) return 0;
      }
      return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
    }
    case JSON_STRING: {
      const char *s = json_string_value(v);
      size_t len = json_string_length(v);
      if (memchr(s, '\n', len) != NULL) {
        /* Logs read best as literal blocks. */
        if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *) s, (int) len, 0, 1,
                                          YAML_LITERAL_SCALAR_STYLE))
          return 0;
        return yaml_emitter_emit(e, &ev);
      }
      return tpuci__yaml_scalar(e, s, len, tpuci__yaml_plain_safe(s, len));
    }
    case JSON_INTEGER:
      snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
      return tpuci__yaml_scalar(e, num, strlen(num), 1);
    case JSON_REAL:
      snprintf(num, sizeof(num), "%.17g", json_real_value(v));
      return tpuci__yaml_scalar(e, num, strlen(num), 1);
    case JSON_TRUE: return tpuci__yaml_scalar(e, "true", 4, 1);
    case JSON_FALSE: return tpuci__yaml_scalar(e, "false", 5, 1);
    case JSON_NULL: return tpuci__yaml_scalar(e, "null", 4, 1);
  }
  return 0;
}

int tpuci__report_yaml_text(const json_t *report, char **out, tpuci__err_t *err) {
  yaml_emitter_t e;
  yaml_event_t ev;
  tpuci__buf_t b;
  int ok;

  memset(&e, 0, sizeof(e));
  tpuci__buf_init(&b);
  if (!yaml_emitter_initialize(&e))
    return tpuci__err_set(err, TPUCI_ENOMEM, "cannot start the YAML emitter");
  yaml_emitter_set_output(&e, tpuci__yaml_write, &b);
  yaml_emitter_set_unicode(&e, 1);
  yaml_emitter_set_width(&e, 120);
  ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(&e, &ev) &&
       yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0) &&
       yaml_emitter_emit(&e, &ev) && tpuci__yaml_node(&e, (json_t *) report) &&
       yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&e, &ev) &&
       yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&e, &ev) &&
       yaml_emitter_flush(&e);
  if (!ok) {
    int r = tpuci__err_set(err, TPUCI_EIO, "cannot write the YAML report: %s",
                           e.problem ? e.problem : "emitter error");
    yaml_emitter_delete(&e);
    tpuci__buf_free(&b);
    return r;
  }
  yaml_emitter_delete(&e);
  *out = tpuci__buf_steal(&b);
  return 0;
}

/* The JSON report written into a file as it is encoded, through 64 KB
 * at a time: a run of 100,000 instances never holds its text whole. */
typedef struct {
  const json_t *report;
  int fd, r;
  size_t n;
  char buf[65536];
} tpuci__json_sink_t;

static int tpuci__json_sink_flush(tpuci__json_sink_t *k) {
  if (k->r == 0 && k->n > 0) k->r = tpuci__write_all(k->fd, k->buf, k->n);
  k->n = 0;
  return k->r;
}

static int tpuci__json_sink_add(const char *s, size_t n, void *arg) {
  tpuci__json_sink_t *k = arg;
  while (n > 0 && k->r == 0) {
    size_t m = sizeof(k->buf) - k->n < n ? sizeof(k->buf) - k->n : n;
    memcpy(k->buf + k->n, s, m);
    k->n += m;
    s += m;
    n -= m;
    if (k->n == sizeof(k->buf)) tpuci__json_sink_flush(k);
  }
  return k->r == 0 ? 0 : -1;
}

static int tpuci__json_fill(int fd, void *arg) {
  tpuci__json_sink_t *k = arg;
  k->fd = fd;
  if (json_dump_callback(k->report, tpuci__json_sink_add, k,
                         JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0)
    return k->r != 0 ? k->r : TPUCI_ENOMEM;
  tpuci__json_sink_add("\n", 1, k);
  return tpuci__json_sink_flush(k);
}

int tpuci__report_write(const json_t *report, const char *format, const char *path,
                        tpuci__err_t *err) {
  char *text = NULL;
  int r;
  if (strcmp(format, "yaml") == 0) {
    r = tpuci__report_yaml_text(report, &text, err);
    if (r != 0) return r;
  } else if (strcmp(format, "html") == 0) {
    /* Log links are relative to the page's folder. */
    const char *slash = strrchr(path, '/');
    char *dir = slash == NULL   ? tpuci__strdup(".")
                : slash == path ? tpuci__strdup("/")
                                : tpuci__printf("%.*s", (int) (slash - path), path);
    tpuci__buf_t b;
    tpuci__buf_init(&b);
    r = tpuci__report_html_at(report, dir, &b, err);
    free(dir);
    if (r != 0) {
      tpuci__buf_free(&b);
      return r;
    }
    text = tpuci__buf_steal(&b);
  } else {
    tpuci__json_sink_t *k = tpuci__calloc(1, sizeof(*k));
    k->report = report;
    r = tpuci__write_file_atomic_by(path, tpuci__json_fill, k);
    free(k);
    if (r == TPUCI_ENOMEM) return tpuci__err_set(err, r, "cannot encode the report");
    if (r != 0) tpuci__err_set(err, r, "cannot write %s: %s", path, uv_strerror(r));
    return r;
  }
  r = tpuci__write_file_atomic(path, text, strlen(text));
  if (r != 0) tpuci__err_set(err, r, "cannot write %s: %s", path, uv_strerror(r));
  free(text);
  return r;
}
