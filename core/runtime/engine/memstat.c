#include "runtime/engine/memstat.h"

#include <string.h>

void tpuci__memstat_init(tpuci__memstat_t *m) {
  memset(m, 0, sizeof(*m));
  tpuci__buf_init(&m->line);
}

void tpuci__memstat_free(tpuci__memstat_t *m) { tpuci__buf_free(&m->line); }

static uint64_t tpuci__memstat_u64(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t) json_integer_value(v) : 0;
}

void tpuci__memstat_sample(tpuci__memstat_t *m, json_t *stats) {
  json_t *ms = json_object_get(stats, "memory_stats");
  uint64_t usage = tpuci__memstat_u64(ms, "usage");
  uint64_t max = tpuci__memstat_u64(ms, "max_usage");
  uint64_t limit = tpuci__memstat_u64(ms, "limit");
  /* A container that does not run (yet, or any more) has none. */
  if (usage == 0 && max == 0) return;
  m->samples++;
  if (usage > m->peak) m->peak = usage;
  if (max > m->peak) m->peak = max;
  if (limit > 0) m->limit = limit;
}

static void tpuci__memstat_line(tpuci__memstat_t *m, const char *s, size_t n) {
  json_t *o = json_loadb(s, n, 0, NULL);
  if (o == NULL) return;
  tpuci__memstat_sample(m, o);
  json_decref(o);
}

void tpuci__memstat_chunk(void *p, const char *buf, size_t len) {
  tpuci__memstat_t *m = p;
  while (len > 0) {
    const char *nl = memchr(buf, '\n', len);
    size_t n = nl ? (size_t) (nl - buf) : len;
    tpuci__buf_add(&m->line, buf, n);
    if (nl == NULL) return;
    if (m->line.len > 0) tpuci__memstat_line(m, m->line.data, m->line.len);
    m->line.len = 0;
    buf += n + 1;
    len -= n + 1;
  }
}

int tpuci__memstat_reached(const tpuci__memstat_t *m, uint64_t limit) {
  uint64_t l = m->limit ? m->limit : limit;
  return m->samples > 0 && l > 0 && m->peak >= l - l / 100;
}
