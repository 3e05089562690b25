/* The run folder and the records written into it. */
#include "rundir.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int tpuci__rundir_create(tpuci__rundir_t *rd, const char *state_dir,
                         tpuci__err_t *err) {
  char stamp[32], *runs, *jsonl;
  time_t now = time(NULL);
  struct tm tm;
  int r, tries;

  memset(rd, 0, sizeof(*rd));
  rd->jsonl_fd = -1;
  gmtime_r(&now, &tm);
  strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  runs = tpuci__printf("%s/runs", state_dir);
  r = tpuci__mkdir_p(runs, 0755);
  if (r != 0) {
    tpuci__err_set(err, r, "cannot create %s: %s", runs, uv_strerror(r));
    free(runs);
    return r;
  }
  /* The id is the UTC time and a counter that makes it unique. */
  for (tries = 0; ; tries++) {
    rd->id = tries ? tpuci__printf("%s-%d", stamp, tries + 1)
                   : tpuci__strdup(stamp);
    rd->dir = tpuci__printf("%s/%s", runs, rd->id);
    if (mkdir(rd->dir, 0755) == 0) break;
    r = TPUCI__ERRNO;
    free(rd->id);
    free(rd->dir);
    rd->id = rd->dir = NULL;
    if (r != UV_EEXIST || tries > 1000) {
      tpuci__err_set(err, r, "cannot create a run folder in %s: %s", runs,
                     uv_strerror(r));
      free(runs);
      return r;
    }
  }
  /* runs/latest -> <id>, replaced atomically. */
  {
    char *l2 = tpuci__printf("%s/latest", runs);
    char *t2 = tpuci__printf("%s/.latest.%d", runs, (int) getpid());
    unlink(t2);
    if (symlink(rd->id, t2) == 0 && rename(t2, l2) != 0) unlink(t2);
    free(l2);
    free(t2);
  }
  free(runs);

  jsonl = tpuci__printf("%s/attempts.jsonl", rd->dir);
  rd->jsonl_fd = open(jsonl, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (rd->jsonl_fd < 0) {
    r = TPUCI__ERRNO;
    tpuci__err_set(err, r, "cannot create %s: %s", jsonl, uv_strerror(r));
    free(jsonl);
    return r;
  }
  free(jsonl);
  return 0;
}

static json_t *tpuci__attempt_json(int number,
                                   const tpuci__attempt_result_t *res) {
  json_t *o = json_object();
  json_object_set_new(o, "attempt", json_integer(number));
  json_object_set_new(o, "outcome", json_string(tpuci_outcome_name(res->outcome)));
  json_object_set_new(o, "exit_code", res->exit_code >= 0
                                          ? json_integer(res->exit_code)
                                          : json_null());
  json_object_set_new(o, "signal", res->term_signal
                                       ? json_integer(res->term_signal)
                                       : json_null());
  json_object_set_new(o, "start_ms", json_integer((json_int_t) res->start_ms));
  json_object_set_new(o, "duration_ms", json_integer((json_int_t) res->duration_ms));
  json_object_set_new(o, "cause", json_string(res->cause ? res->cause : ""));
  json_object_set_new(o, "log", res->log_path ? json_string(res->log_path)
                                               : json_null());
  return o;
}

void tpuci__rundir_append(tpuci__rundir_t *rd, const tpuci__instance_t *inst,
                          int number, const tpuci__attempt_result_t *res) {
  json_t *o;
  char *line;
  size_t len, off = 0;

  if (rd->jsonl_fd < 0) return;
  o = tpuci__attempt_json(number, res);
  json_object_set_new(o, "instance", json_string(inst->name));
  line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  if (line == NULL) return;
  len = strlen(line);
  line[len++] = '\n'; /* json_dumps leaves room: replace the NUL. */
  while (off < len) {
    ssize_t n = write(rd->jsonl_fd, line + off, len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += (size_t) n;
  }
  free(line);
}

int tpuci__rundir_summary(tpuci__rundir_t *rd, const tpuci__plan_t *plan,
                          const tpuci__instance_result_t *results,
                          uint64_t start_ms, uint64_t duration_ms,
                          int exit_code, const char *error,
                          tpuci__err_t *err) {
  json_t *root = json_object(), *insts = json_array(), *counts = json_object();
  size_t i, k, n[TPUCI_OUTCOME__COUNT] = {0};
  char *text, *path;
  int o, r;

  json_object_set_new(root, "version", json_integer(1));
  json_object_set_new(root, "run_id", json_string(rd->id));
  json_object_set_new(root, "spec", json_string(plan->spec_path ? plan->spec_path : ""));
  json_object_set_new(root, "start_ms", json_integer((json_int_t) start_ms));
  json_object_set_new(root, "duration_ms", json_integer((json_int_t) duration_ms));
  json_object_set_new(root, "exit_code", json_integer(exit_code));
  json_object_set_new(root, "error", error ? json_string(error) : json_null());
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    const tpuci__instance_result_t *res = &results[i];
    json_t *jo, *ja;
    if (!inst->selected) continue;
    jo = json_object();
    ja = json_array();
    json_object_set_new(jo, "name", json_string(inst->name));
    json_object_set_new(jo, "job", json_string(inst->job));
    json_object_set_new(jo, "outcome", json_string(tpuci_outcome_name(res->outcome)));
    for (k = 0; k < res->nattempts; k++)
      json_array_append_new(ja, tpuci__attempt_json((int) k + 1, &res->attempts[k]));
    json_object_set_new(jo, "attempts", ja);
    json_array_append_new(insts, jo);
    n[res->outcome]++;
  }
  for (o = 1; o < TPUCI_OUTCOME__COUNT; o++)
    json_object_set_new(counts, tpuci_outcome_name((tpuci_outcome_t) o),
                        json_integer((json_int_t) n[o]));
  json_object_set_new(root, "counts", counts);
  json_object_set_new(root, "instances", insts);
  text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(root);
  if (text == NULL) return tpuci__err_set(err, TPUCI_ENOMEM, "cannot encode summary");
  path = tpuci__printf("%s/summary.json", rd->dir);
  r = tpuci__write_file_atomic(path, text, strlen(text));
  if (r != 0) tpuci__err_set(err, r, "cannot write %s: %s", path, uv_strerror(r));
  free(path);
  free(text);
  return r;
}

void tpuci__rundir_close(tpuci__rundir_t *rd) {
  if (rd->jsonl_fd >= 0) close(rd->jsonl_fd);
  free(rd->id);
  free(rd->dir);
  memset(rd, 0, sizeof(*rd));
  rd->jsonl_fd = -1;
}
