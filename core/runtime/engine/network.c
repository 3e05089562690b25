/* An attempt's own network (network.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "runtime/engine/network.h"

char *tpuci__name_suffixed(const char *name, size_t max) {
  unsigned tag = (unsigned) ((uint64_t) uv_hrtime() ^ ((uint64_t) getpid() << 16));
  char *base = tpuci__strdup(name);
  char *s;
  if (max > 7 && strlen(base) > max - 7) base[max - 7] = '\0';
  s = tpuci__printf("%s-%06x", base, tag & 0xffffffu);
  free(base);
  return s;
}

static void tpuci__net_on_created(void *p, const tpuci__engine_res_t *res) {
  tpuci__net_t *n = p;
  if (res->status == 409 && n->tries < 3 && !*n->stop) {
    char *name = tpuci__name_suffixed(n->name, n->name_max);
    free(n->name);
    n->name = name;
    n->tries++;
    json_object_set_new(n->body, "Name", json_string(name));
    tpuci__engine_network_create(n->eng, n->body, tpuci__net_on_created, n);
    return;
  }
  if (res->ok) {
    const char *id = json_string_value(json_object_get(res->json, "Id"));
    if (id != NULL) n->id = tpuci__strdup(id);
  }
  n->done(n->data, res);
}

void tpuci__net_create(tpuci__net_t *n, const int *stop, tpuci__engine_cb done, void *data) {
  n->stop = stop;
  n->done = done;
  n->data = data;
  tpuci__engine_network_create(n->eng, n->body, tpuci__net_on_created, n);
}

int tpuci__net_remove(tpuci__net_t *n, tpuci__engine_cb done, void *data) {
  if (n->id == NULL) return 0;
  n->rm_tries++;
  tpuci__engine_network_remove(n->eng, n->id, done, data);
  return 1;
}

char *tpuci__net_kept(const tpuci__net_t *n, const char *why) {
  if (n->id == NULL) return NULL;
  return tpuci__printf("kept network %s (%s); `tpuci gc` removes it", n->name, why);
}

int tpuci__net_remove_again(const tpuci__net_t *n, const tpuci__engine_res_t *res, int max) {
  return !res->ok && res->status != 404 && res->error == 0 && res->status != 0 && n->rm_tries < max;
}

void tpuci__net_free(tpuci__net_t *n) {
  free(n->name);
  free(n->id);
  json_decref(n->body);
  n->name = n->id = NULL;
  n->body = NULL;
}
