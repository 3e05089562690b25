/* The built-in catalogue of TPU accelerator types, lookup and suggestions.
 *
 * The rows are data: topology_catalogue.yaml beside this file, with the
 * source of every value. cmake/embed.cmake compiles it into the library
 * as tpuci__data_topology_catalogue; it is read (topology_read.c) once, on
 * the first lookup, and kept for the life of the process. The build runs
 * the same reader on the file (cmake/check_catalogue.c), so a refusal here
 * cannot happen in a library this project's build made; should it happen
 * anyway, the message goes to stderr and the process aborts, as on
 * running out of memory (topology.h). */
#include "plan/topology.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

extern const char tpuci__data_topology_catalogue[];
extern const size_t tpuci__data_topology_catalogue_len;

static uv_once_t tpuci__builtin_once = UV_ONCE_INIT;
static tpuci__tpu_catalogue_t *tpuci__builtin;

static void tpuci__builtin_read(void) {
  tpuci__err_t err = {0, NULL};
  if (tpuci__tpu_catalogue_read("topology_catalogue.yaml", tpuci__data_topology_catalogue,
                                tpuci__data_topology_catalogue_len, &tpuci__builtin, &err) != 0) {
    char *msg = tpuci__printf("tpuci: built-in TPU catalogue: %s\n", err.msg);
    ssize_t w = write(2, msg, strlen(msg));
    (void) w;
    abort();
  }
}

static const tpuci__tpu_catalogue_t *tpuci__catalogue(void) {
  uv_once(&tpuci__builtin_once, tpuci__builtin_read);
  return tpuci__builtin;
}

size_t tpuci__tpu_catalogue_size(void) { return tpuci__tpu_catalogue_rows(tpuci__catalogue()); }

const tpuci__tpu_type_t *tpuci__tpu_catalogue_at(size_t i) {
  return tpuci__tpu_catalogue_row(tpuci__catalogue(), i);
}

const tpuci__tpu_type_t *tpuci__tpu_find(const char *type, int hosts) {
  const tpuci__tpu_type_t *t;
  size_t i;
  if (type == NULL) return NULL;
  for (i = 0; (t = tpuci__tpu_catalogue_at(i)) != NULL; i++) {
    if (strcmp(t->type, type) != 0) continue;
    if (hosts == 0 ? t->is_default_layout : t->hosts == hosts) return t;
  }
  return NULL;
}

const tpuci__tpu_type_t *tpuci__tpu_find_layout(const char *type, const char *layout) {
  const tpuci__tpu_type_t *t;
  size_t i;
  if (type == NULL) return NULL;
  if (layout == NULL) return tpuci__tpu_find(type, 0);
  for (i = 0; (t = tpuci__tpu_catalogue_at(i)) != NULL; i++) {
    if (strcmp(t->type, type) == 0 && strcmp(t->layout, layout) == 0) return t;
  }
  return NULL;
}

int tpuci__tpu_layout_count(const char *type) {
  const tpuci__tpu_type_t *t;
  size_t i;
  int n = 0;
  if (type == NULL) return 0;
  for (i = 0; (t = tpuci__tpu_catalogue_at(i)) != NULL; i++)
    if (strcmp(t->type, type) == 0) n++;
  return n;
}

/* A type by its generation's name and its -N where the two differ:
 * "v5e-16" is what people call v5litepod-16 (jax device kind "TPU v5e",
 * doc 3), while the accelerator type says v5litepod. */
static const char *tpuci__by_generation(const char *type) {
  const tpuci__tpu_type_t *t;
  size_t i;
  for (i = 0; (t = tpuci__tpu_catalogue_at(i)) != NULL; i++) {
    size_t g = strlen(t->generation);
    if (strncmp(type, t->generation, g) == 0 && strcmp(type + g, strrchr(t->type, '-')) == 0)
      return t->type;
  }
  return NULL;
}

const char *tpuci__tpu_suggest(const char *type) {
  const tpuci__tpu_type_t *t;
  const char *best;
  size_t i, cap, best_d, best_p;

  if (type == NULL || *type == '\0') return NULL;
  if (tpuci__tpu_find(type, 0) != NULL) return NULL;
  best = tpuci__by_generation(type);
  if (best != NULL) return best;
  cap = strlen(type) > 6 ? 3 : 2;
  best_d = cap + 1;
  best_p = 0;
  for (i = 0; (t = tpuci__tpu_catalogue_at(i)) != NULL; i++) {
    const char *name = t->type;
    size_t d = tpuci__edit_distance(type, name, cap), p = 0;
    while (type[p] && type[p] == name[p]) p++;
    /* Ties go to the longer common prefix ("v5p-64": v5p-8, not v3-64),
     * then to the earlier row. */
    if (d < best_d || (d == best_d && d <= cap && p > best_p)) {
      best_d = d;
      best_p = p;
      best = name;
    }
  }
  return best;
}
