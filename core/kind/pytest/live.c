/* The test a running pytest attempt is in (live.h). */
#include "kind/pytest/live.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "kind/pytest/pytest_run.h"

/* A look reads at most this much; the rest waits for the next look. */
#define TPUCI__LIVE_READ_MAX (1024 * 1024)

void tpuci__live_init(tpuci__live_t *lv, const char *results_dir, int hosts) {
  size_t i;
  memset(lv, 0, sizeof(*lv));
  lv->n = hosts > 1 ? (size_t) hosts : 1;
  lv->hosts = tpuci__calloc(lv->n, sizeof(*lv->hosts));
  for (i = 0; i < lv->n; i++)
    lv->hosts[i].path =
        hosts > 1 ? tpuci__printf("%s/worker-%zu/%s", results_dir, i, TPUCI__PROGRESS_FILE)
                  : tpuci__printf("%s/%s", results_dir, TPUCI__PROGRESS_FILE);
  tpuci__idmap_init(&lv->failed_seen);
}

void tpuci__live_fail_free(tpuci__live_fail_t *f) {
  free(f->id);
  free(f->message);
}

tpuci__live_fail_t *tpuci__live_failed(tpuci__live_t *lv, size_t *n) {
  tpuci__live_fail_t *out = lv->failed;
  *n = lv->nfailed;
  lv->failed = NULL;
  lv->nfailed = lv->capfailed = 0;
  return out;
}

/* A report line of a test that failed: kept once (host 0's: a gang's
 * report is host 0's), with the first line of what was raised. */
static void tpuci__live_fail(tpuci__live_t *lv, const char *id, json_t *o) {
  const char *crash = json_string_value(json_object_get(o, "crash"));
  const char *msg = json_string_value(json_object_get(o, "message"));
  tpuci__live_fail_t *f;
  char *line = crash ? tpuci__strdup(crash) : msg ? tpuci__pytest_failure_line(msg) : NULL;
  if (tpuci__idmap_get(&lv->failed_seen, id) != TPUCI__IDMAP_NONE) {
    free(line);
    return;
  }
  tpuci__strv_push(&lv->failed_ids, id);
  tpuci__idmap_put(&lv->failed_seen, lv->failed_ids.items[lv->failed_ids.len - 1], 0);
  if (line != NULL && strchr(line, '\n') != NULL) *strchr(line, '\n') = '\0';
  if (lv->nfailed == lv->capfailed) {
    lv->capfailed = lv->capfailed ? 2 * lv->capfailed : 4;
    lv->failed = tpuci__realloc(lv->failed, lv->capfailed * sizeof(*lv->failed));
  }
  f = &lv->failed[lv->nfailed++];
  f->id = tpuci__strdup(id);
  f->message = line;
}

void tpuci__live_free(tpuci__live_t *lv) {
  size_t i;
  for (i = 0; i < lv->n; i++) {
    free(lv->hosts[i].path);
    free(lv->hosts[i].partial);
    free(lv->hosts[i].running);
  }
  for (i = 0; i < lv->nfailed; i++) tpuci__live_fail_free(&lv->failed[i]);
  free(lv->failed);
  tpuci__idmap_free(&lv->failed_seen);
  tpuci__strv_free(&lv->failed_ids);
  free(lv->hosts);
  memset(lv, 0, sizeof(*lv));
}

/* One whole progress line: a test starts, or its teardown ends it; a
 * test failed (host 0's lines: `lv` given). */
static void tpuci__live_line(tpuci__live_host_t *h, tpuci__live_t *lv, const char *line, size_t len,
                             uint64_t now_ms) {
  json_t *o;
  const char *v, *id, *when, *outcome;
  /* The collection's line lists every node id: nothing to see there. */
  if (len > 12 && memcmp(line, "{\"collected\"", 12) == 0) return;
  if ((o = json_loadb(line, len, 0, NULL)) == NULL) return;
  if ((v = json_string_value(json_object_get(o, "start"))) != NULL) {
    free(h->running);
    h->running = tpuci__strdup(v);
    /* When the test started, by the clock of the machine (container)
     * it runs on; the first look at it when none is given. */
    h->since_ms = json_is_number(json_object_get(o, "t"))
                      ? (uint64_t) (json_number_value(json_object_get(o, "t")) * 1000.0)
                      : now_ms;
  }
  id = json_string_value(json_object_get(o, "id"));
  when = json_string_value(json_object_get(o, "when"));
  outcome = json_string_value(json_object_get(o, "outcome"));
  if (lv != NULL && id != NULL && outcome != NULL && strcmp(outcome, "failed") == 0)
    tpuci__live_fail(lv, id, o);
  if (id && when && strcmp(when, "teardown") == 0 && h->running && strcmp(h->running, id) == 0) {
    free(h->running);
    h->running = NULL;
  }
  json_decref(o);
}

static void tpuci__live_host_poll(tpuci__live_host_t *h, tpuci__live_t *lv, uint64_t now_ms) {
  char *buf;
  ssize_t got;
  size_t start, i;
  int fd = open(h->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  buf = tpuci__malloc(TPUCI__LIVE_READ_MAX);
  do {
    got = pread(fd, buf, TPUCI__LIVE_READ_MAX, (off_t) h->offset);
  } while (got < 0 && errno == EINTR);
  close(fd);
  if (got <= 0) {
    free(buf);
    return;
  }
  h->offset += (uint64_t) got;
  for (start = 0, i = 0; i < (size_t) got; i++) {
    if (buf[i] != '\n') continue;
    if (h->partial_len > 0) {
      h->partial = tpuci__realloc(h->partial, h->partial_len + (i - start));
      memcpy(h->partial + h->partial_len, buf + start, i - start);
      tpuci__live_line(h, lv, h->partial, h->partial_len + (i - start), now_ms);
      h->partial_len = 0;
    } else {
      tpuci__live_line(h, lv, buf + start, i - start, now_ms);
    }
    start = i + 1;
  }
  if (start < (size_t) got) {
    h->partial = tpuci__realloc(h->partial, h->partial_len + ((size_t) got - start));
    memcpy(h->partial + h->partial_len, buf + start, (size_t) got - start);
    h->partial_len += (size_t) got - start;
  }
  free(buf);
}

void tpuci__live_poll(tpuci__live_t *lv, uint64_t now_ms) {
  size_t i;
  for (i = 0; i < lv->n; i++) tpuci__live_host_poll(&lv->hosts[i], i == 0 ? lv : NULL, now_ms);
}

void tpuci__running_list_text(tpuci__buf_t *b, const char *const *running, size_t n) {
  size_t i, busy = 0, same = 1;
  const char *first = NULL, *sep = "";
  for (i = 0; i < n; i++) {
    if (running[i] == NULL) continue;
    if (first == NULL) first = running[i];
    else if (strcmp(first, running[i]) != 0) same = 0;
    busy++;
  }
  if (busy == 0) return;
  if (n == 1) {
    tpuci__buf_adds(b, first);
  } else if (same && busy == n) {
    tpuci__buf_addf(b, "%s on all %zu hosts", first, n);
  } else {
    for (i = 0; i < n; i++) {
      if (running[i] == NULL) continue;
      tpuci__buf_addf(b, "%s%s on worker-%zu", sep, running[i], i);
      sep = ", ";
    }
  }
}

char *tpuci__live_text(const tpuci__live_t *lv, uint64_t *since_ms) {
  const char **running = tpuci__calloc(lv->n, sizeof(*running));
  tpuci__buf_t b;
  size_t i;
  *since_ms = 0;
  for (i = 0; i < lv->n; i++) {
    running[i] = lv->hosts[i].running;
    if (running[i] && (*since_ms == 0 || lv->hosts[i].since_ms < *since_ms))
      *since_ms = lv->hosts[i].since_ms;
  }
  tpuci__buf_init(&b);
  tpuci__running_list_text(&b, running, lv->n);
  free(running);
  if (b.len == 0) {
    tpuci__buf_free(&b);
    return NULL;
  }
  return tpuci__buf_steal(&b);
}
