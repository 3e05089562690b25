/* Text for `tpuci topologies [TYPE] [--emulate X]`: the catalogue as a
 * table, and one type with the environment of each of its hosts. */
#include "plan/topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TPUCI__NCOLS 12

static const char *const tpuci__col_names[TPUCI__NCOLS] = {"TYPE",
                                                           "LAYOUT",
                                                           "GEN",
                                                           "HOSTS",
                                                           "CHIPS/HOST",
                                                           "TC/CHIP",
                                                           "DEV/HOST",
                                                           "TOPOLOGY",
                                                           "HOST_BOUNDS",
                                                           "CHIPS/HOST_BOUNDS",
                                                           "GKE_ACCELERATOR",
                                                           "MACHINE_TYPE"};

/* Cell c of row t, in `buf` when it is a number. */
static const char *tpuci__cell(const tpuci__tpu_type_t *t, int c, char *buf, size_t size) {
  switch (c) {
    case 0: return t->type;
    case 1:
      if (tpuci__tpu_layout_count(t->type) < 2) return t->layout;
      snprintf(buf, size, "%s%s", t->layout, t->is_default_layout ? "*" : "");
      return buf;
    case 2: return t->generation;
    case 3: snprintf(buf, size, "%d", t->hosts); return buf;
    case 4: snprintf(buf, size, "%d", t->chips_per_host); return buf;
    case 5: snprintf(buf, size, "%d", t->cores_per_chip); return buf;
    case 6: snprintf(buf, size, "%d", t->devices_per_host); return buf;
    case 7: return t->topology;
    case 8: return t->host_bounds;
    case 9: return t->chips_per_host_bounds;
    case 10: return t->gke_accelerator ? t->gke_accelerator : "-";
    default: return t->machine_type ? t->machine_type : "-";
  }
}

char *tpuci__tpu_catalogue_text(void) {
  size_t width[TPUCI__NCOLS], i, n = tpuci__tpu_catalogue_size();
  char buf[32];
  tpuci__buf_t b;
  int c;

  for (c = 0; c < TPUCI__NCOLS; c++) width[c] = strlen(tpuci__col_names[c]);
  for (i = 0; i < n; i++) {
    for (c = 0; c < TPUCI__NCOLS; c++) {
      size_t w = strlen(tpuci__cell(tpuci__tpu_catalogue_at(i), c, buf, sizeof(buf)));
      if (w > width[c]) width[c] = w;
    }
  }
  tpuci__buf_init(&b);
  for (i = 0; i <= n; i++) {
    for (c = 0; c < TPUCI__NCOLS; c++) {
      const char *cell = i == 0 ? tpuci__col_names[c]
                                : tpuci__cell(tpuci__tpu_catalogue_at(i - 1), c, buf, sizeof(buf));
      if (c == TPUCI__NCOLS - 1) tpuci__buf_addf(&b, "%s\n", cell);
      else tpuci__buf_addf(&b, "%-*s  ", (int) width[c], cell);
    }
  }
  tpuci__buf_adds(&b, "\nLAYOUT is VMs x chips per VM; * marks the default of a "
                      "type with two layouts.\nTC = TensorCores; DEV = devices "
                      "a framework sees (CPU_NUM_DEVICES when emulated).\n"
                      "`tpuci topologies TYPE` shows a type's sources and the "
                      "environment of each host.\n");
  return tpuci__buf_steal(&b);
}

static void tpuci__add_env(tpuci__buf_t *b, const tpuci__kvlist_t *env) {
  size_t i;
  for (i = 0; i < env->len; i++)
    tpuci__buf_addf(b, "  %s=%s\n", env->items[i].key, env->items[i].value);
}

char *tpuci__tpu_describe(const char *type, const char *emulate, tpuci__err_t *err) {
  const tpuci__tpu_type_t *t;
  tpuci__slice_req_t req;
  tpuci__slice_t s;
  tpuci__strv_t warn = {NULL, 0, 0};
  tpuci__buf_t b;
  char *name, *layout, **names;
  const char *colon, *hint;
  size_t i, n;
  int h, rc;

  if (type == NULL || *type == '\0') {
    tpuci__err_set(err, TPUCI_EUSAGE, "no TPU type given");
    return NULL;
  }
  colon = strchr(type, ':');
  name = colon ? tpuci__strndup(type, (size_t) (colon - type)) : tpuci__strdup(type);
  layout = colon ? tpuci__strdup(colon + 1) : NULL;
  if (tpuci__tpu_find(name, 0) == NULL) {
    hint = tpuci__tpu_suggest(name);
    if (hint)
      tpuci__err_set(err, TPUCI_EUSAGE, "unknown TPU type '%s' (did you mean '%s'?)", name, hint);
    else
      tpuci__err_set(err, TPUCI_EUSAGE, "unknown TPU type '%s' (`tpuci topologies` lists them)",
                     name);
    free(name);
    free(layout);
    return NULL;
  }
  memset(&req, 0, sizeof(req));
  req.name = name;
  req.layout = layout;
  req.emulate = emulate;
  rc = tpuci__slice_resolve(&s, &req, err);
  if (rc != 0) {
    if (err) err->code = TPUCI_EUSAGE;
    free(name);
    free(layout);
    return NULL;
  }
  t = s.row;

  tpuci__buf_init(&b);
  tpuci__buf_addf(&b,
                  "%s (layout %s%s): TPU %s, %d host%s x %d chip%s, "
                  "%d TensorCore%s per chip, %d device%s per host\n",
                  t->type, t->layout, t->is_default_layout ? ", default" : "", t->generation,
                  t->hosts, t->hosts == 1 ? "" : "s", t->chips_per_host,
                  t->chips_per_host == 1 ? "" : "s", t->cores_per_chip,
                  t->cores_per_chip == 1 ? "" : "s", t->devices_per_host,
                  t->devices_per_host == 1 ? "" : "s");
  tpuci__buf_addf(&b,
                  "  topology %s, host bounds %s, chips per host bounds "
                  "%s\n",
                  t->topology, t->host_bounds, t->chips_per_host_bounds);
  if (t->gke_accelerator)
    tpuci__buf_addf(&b,
                    "  GKE: cloud.google.com/gke-tpu-accelerator=%s, "
                    "machine type %s\n",
                    t->gke_accelerator, t->machine_type);
  else tpuci__buf_adds(&b, "  GKE: none (not offered on GKE)\n");
  if (tpuci__tpu_layout_count(t->type) > 1) {
    tpuci__buf_adds(&b, "  other layouts:");
    n = tpuci__tpu_catalogue_size();
    for (i = 0; i < n; i++) {
      const tpuci__tpu_type_t *o = tpuci__tpu_catalogue_at(i);
      if (o == t || strcmp(o->type, t->type) != 0) continue;
      tpuci__buf_addf(&b, " %s:%s (%d host%s x %d chip%s, %s)", o->type, o->layout, o->hosts,
                      o->hosts == 1 ? "" : "s", o->chips_per_host,
                      o->chips_per_host == 1 ? "" : "s", o->machine_type);
    }
    tpuci__buf_adds(&b, "\n");
  }
  tpuci__buf_adds(&b, "  source: tpu-topology.md (its sections), by value:\n");
  for (i = 0; i < TPUCI__TPU_NSOURCES; i++)
    if (t->sources[i] != NULL)
      tpuci__buf_addf(&b, "    %s: %s\n", tpuci__tpu_source_key(i), t->sources[i]);
  tpuci__buf_addf(&b, "emulate: %s\n", tpuci__emulate_name(s.emulate));
  tpuci__slice_warnings(&s, &warn);
  for (i = 0; i < warn.len; i++) tpuci__buf_addf(&b, "warning: %s\n", warn.items[i]);
  tpuci__strv_free(&warn);

  /* Hosts worker-0..N-1; past four, the middle ones are elided. */
  names = tpuci__calloc((size_t) s.hosts, sizeof(*names));
  for (h = 0; h < s.hosts; h++) names[h] = tpuci__printf("worker-%d", h);
  {
    tpuci__gang_net_t net;
    memset(&net, 0, sizeof(net));
    net.hostnames = (const char *const *) names;
    for (h = 0; h < s.hosts; h++) {
      tpuci__kvlist_t env = {NULL, 0, 0};
      if (s.hosts > 4 && h >= 2 && h < s.hosts - 1) {
        if (h == 2)
          tpuci__buf_addf(&b,
                          "\n(hosts 2..%d: the same, with their own "
                          "TPU_WORKER_ID, CLOUD_TPU_TASK_ID, RANK, NODE_RANK, "
                          "node_id%s)\n",
                          s.hosts - 2,
                          s.emulate == TPUCI__EMULATE_JAX ? ", TPUCI_JAX_PROCESS_ID" : "");
        continue;
      }
      tpuci__slice_host_env(&s, h, &net, &env, NULL);
      tpuci__buf_addf(&b, "\nhost %d (%s):\n", h, s.hosts == 1 ? "localhost" : names[h]);
      tpuci__add_env(&b, &env);
      tpuci__kv_free(&env);
    }
  }
  for (h = 0; h < s.hosts; h++) free(names[h]);
  free(names);
  tpuci__slice_free(&s);
  free(name);
  free(layout);
  return tpuci__buf_steal(&b);
}
