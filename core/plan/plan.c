/* The plan: instances and what they refer to, and its JSON and text
 * forms for `tpuci plan`. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "plan/plan.h"
#include "plan/host_env.h"
#include "plan/topology.h"

void tpuci__plan_init(tpuci__plan_t *p) { memset(p, 0, sizeof(*p)); }

void tpuci__instance_free(tpuci__instance_t *in) {
  size_t i;
  free(in->name);
  free(in->job);
  free(in->where);
  tpuci__kv_free(&in->matrix);
  tpuci__strv_free(&in->argv);
  free(in->run);
  tpuci__kv_free(&in->env);
  free(in->workdir);
  for (i = 0; i < in->nmounts; i++) {
    free(in->mounts[i].source);
    free(in->mounts[i].target);
  }
  free(in->mounts);
  free(in->network);
  free(in->expect_devices);
  tpuci__ctr_opts_free(&in->ctr);
  tpuci__strv_free(&in->inputs);
  if (in->kind != NULL) in->kind->free(in->kind_config);
}

void tpuci__plan_free(tpuci__plan_t *p) {
  size_t i;
  free(p->spec_path);
  free(p->spec_dir);
  for (i = 0; i < p->nimages; i++) {
    free(p->images[i].name);
    free(p->images[i].ref);
    free(p->images[i].where);
    free(p->images[i].id);
    if (p->images[i].build != NULL) {
      free(p->images[i].build->context);
      free(p->images[i].build->dockerfile);
      free(p->images[i].build->target);
      tpuci__strv_free(&p->images[i].build->args);
      free(p->images[i].build);
    }
  }
  free(p->images);
  for (i = 0; i < p->ntopologies; i++) {
    free(p->topologies[i].name);
    free(p->topologies[i].base);
    free(p->topologies[i].emulate);
    free(p->topologies[i].where);
  }
  free(p->topologies);
  for (i = 0; i < p->nhostsets; i++) tpuci__hostset_free(&p->hostsets[i]);
  free(p->hostsets);
  for (i = 0; i < p->ninstances; i++) tpuci__instance_free(&p->instances[i]);
  free(p->instances);
  tpuci__strv_free(&p->warnings);
  tpuci__plan_init(p);
}

void tpuci__instance_copy(tpuci__instance_t *dst, const tpuci__instance_t *src) {
  size_t i;
  *dst = *src;
  dst->name = tpuci__strdup(src->name);
  dst->job = tpuci__strdup(src->job);
  dst->where = tpuci__strdup(src->where);
  memset(&dst->matrix, 0, sizeof(dst->matrix));
  tpuci__kv_copy(&dst->matrix, &src->matrix);
  memset(&dst->argv, 0, sizeof(dst->argv));
  tpuci__strv_copy(&dst->argv, &src->argv);
  dst->run = tpuci__strdup(src->run);
  memset(&dst->env, 0, sizeof(dst->env));
  tpuci__kv_copy(&dst->env, &src->env);
  dst->workdir = tpuci__strdup(src->workdir);
  dst->mounts = src->nmounts ? tpuci__calloc(src->nmounts, sizeof(*dst->mounts)) : NULL;
  for (i = 0; i < src->nmounts; i++) {
    dst->mounts[i].source = tpuci__strdup(src->mounts[i].source);
    dst->mounts[i].target = tpuci__strdup(src->mounts[i].target);
    dst->mounts[i].read_only = src->mounts[i].read_only;
  }
  dst->network = tpuci__strdup(src->network);
  dst->expect_devices = tpuci__strdup(src->expect_devices);
  tpuci__ctr_opts_copy(&dst->ctr, &src->ctr);
  memset(&dst->inputs, 0, sizeof(dst->inputs));
  tpuci__strv_copy(&dst->inputs, &src->inputs);
  dst->kind_config = src->kind != NULL ? src->kind->copy(src->kind_config) : NULL;
}

const tpuci__instance_t *tpuci__plan_instance(const tpuci__plan_t *p, size_t i) {
  return p != NULL && i < p->ninstances ? &p->instances[i] : NULL;
}

tpuci__instance_t *tpuci__plan_add_instance(tpuci__plan_t *p) {
  tpuci__instance_t *in;
  if (p->ninstances == p->cap_instances) {
    p->cap_instances = p->cap_instances ? p->cap_instances * 2 : 16;
    p->instances = tpuci__realloc(p->instances, p->cap_instances * sizeof(*p->instances));
  }
  in = &p->instances[p->ninstances++];
  memset(in, 0, sizeof(*in));
  in->image = -1;
  in->topology = -1;
  in->hostset = -1;
  return in;
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */

const char *tpuci__pull_name(tpuci__pull_t pull) {
  switch (pull) {
    case TPUCI__PULL_ALWAYS: return "always";
    case TPUCI__PULL_NEVER: return "never";
    default: return "missing";
  }
}

/* A string or null. */
static json_t *tpuci__json_str(const char *s) { return s ? json_string(s) : json_null(); }

static json_t *tpuci__json_kv(const tpuci__kvlist_t *l) {
  json_t *o = json_object();
  size_t i;
  for (i = 0; i < l->len; i++)
    json_object_set_new(o, l->items[i].key, json_string(l->items[i].value));
  return o;
}

/* The environment each emulated host of an instance gets from its
 * topology (tpuci__topology_host_env: the job's env wins), in host
 * order; names "worker-<i>" for a gang, "localhost" for one host. */
typedef struct {
  int n;
  tpuci__kvlist_t *env; /* n of them */
} tpuci__plan_hosts_t;

/* Returns the number of hosts (0 without a topology), or -1 with err. */
static int tpuci__plan_host_envs(const tpuci__plan_t *p, const tpuci__instance_t *in,
                                 tpuci__plan_hosts_t *out, tpuci__err_t *err) {
  tpuci__slice_t slice;
  int i;
  memset(out, 0, sizeof(*out));
  if (in->topology < 0 || (size_t) in->topology >= p->ntopologies) return 0;
  if (tpuci__topology_slice(&p->topologies[in->topology], &slice, err) != 0) return -1;
  out->env = tpuci__calloc((size_t) slice.hosts, sizeof(*out->env));
  out->n = slice.hosts;
  for (i = 0; i < slice.hosts; i++)
    if (tpuci__topology_host_env(in, &slice, i, NULL, &out->env[i], err) != 0) {
      tpuci__slice_free(&slice);
      return -1;
    }
  tpuci__slice_free(&slice);
  return out->n;
}

static void tpuci__plan_hosts_free(tpuci__plan_hosts_t *h) {
  int i;
  for (i = 0; i < h->n; i++) tpuci__kv_free(&h->env[i]);
  free(h->env);
  memset(h, 0, sizeof(*h));
}

static void tpuci__host_name(char *buf, size_t size, int n, int i) {
  if (n > 1) snprintf(buf, size, TPUCI__GANG_HOST_FMT, i);
  else snprintf(buf, size, "localhost");
}

json_t *tpuci__plan_instance_json(const tpuci__plan_t *p, const tpuci__instance_t *in) {
  json_t *o = json_object(), *a, *r, *on;
  tpuci__devices_expect_t dev;
  tpuci__err_t derr = {0, NULL};
  size_t i;
  int k;

  json_object_set_new(o, "name", json_string(in->name));
  json_object_set_new(o, "job", json_string(in->job));
  json_object_set_new(o, "where", json_string(in->where));
  json_object_set_new(o, "matrix", tpuci__json_kv(&in->matrix));
  json_object_set_new(o, "runtime", json_string(tpuci__runtime_kind_name(in->runtime)));
  a = json_array();
  for (i = 0; i < in->argv.len; i++) json_array_append_new(a, json_string(in->argv.items[i]));
  json_object_set_new(o, "argv", a);
  json_object_set_new(o, "run", tpuci__json_str(in->run));
  json_object_set_new(o, "env", tpuci__json_kv(&in->env));
  json_object_set_new(o, "workdir", tpuci__json_str(in->workdir));
  json_object_set_new(o, "timeout_ms", json_integer((json_int_t) in->timeout_ms));
  json_object_set_new(o, "idle_timeout_ms", json_integer((json_int_t) in->idle_timeout_ms));
  json_object_set_new(o, "start_timeout_ms", json_integer((json_int_t) in->start_timeout_ms));
  json_object_set_new(o, "grace_ms", json_integer((json_int_t) in->grace_ms));
  r = json_object();
  json_object_set_new(r, "attempts", json_integer(in->retry.attempts));
  on = json_array();
  for (k = 0; k < TPUCI_OUTCOME__COUNT; k++)
    if (in->retry.on & (1u << k))
      json_array_append_new(on, json_string(tpuci_outcome_name((tpuci_outcome_t) k)));
  json_object_set_new(r, "on", on);
  json_object_set_new(r, "backoff_ms", json_integer((json_int_t) in->retry.backoff_ms));
  json_object_set_new(r, "factor", json_real(in->retry.factor));
  json_object_set_new(r, "max_backoff_ms", json_integer((json_int_t) in->retry.max_backoff_ms));
  if (in->kind != NULL && in->kind->partial_retries)
    json_object_set_new(r, "rerun",
                        json_string(in->retry.rerun_unfinished ? "unfinished" : "failed"));
  if (tpuci__runtime_props(in->runtime)->capacity) {
    json_t *c = json_object();
    json_object_set_new(c, "attempts", json_integer(in->retry.capacity_attempts));
    json_object_set_new(c, "wait_ms", json_integer((json_int_t) in->retry.capacity_wait_ms));
    json_object_set_new(r, "capacity", c);
  }
  json_object_set_new(o, "retry", r);
  json_object_set_new(o, "image",
                      in->image >= 0 && (size_t) in->image < p->nimages
                          ? json_string(p->images[in->image].ref)
                          : json_null());
  json_object_set_new(o, "topology",
                      in->topology >= 0 && (size_t) in->topology < p->ntopologies
                          ? json_string(p->topologies[in->topology].name)
                          : json_null());
  a = json_array();
  for (i = 0; i < in->nmounts; i++) {
    json_t *m = json_object();
    json_object_set_new(m, "source", json_string(in->mounts[i].source));
    json_object_set_new(m, "target", json_string(in->mounts[i].target));
    json_object_set_new(m, "readonly", json_boolean(in->mounts[i].read_only));
    json_array_append_new(a, m);
  }
  json_object_set_new(o, "mounts", a);
  json_object_set_new(o, "cpus", json_real(in->cpus));
  json_object_set_new(o, "memory_bytes", json_integer((json_int_t) in->memory_bytes));
  json_object_set_new(o, "network", tpuci__json_str(in->network));
  json_object_set_new(o, "container", tpuci__ctr_opts_json(&in->ctr));
  json_object_set_new(o, "ssh",
                      in->hostset >= 0 && (size_t) in->hostset < p->nhostsets
                          ? tpuci__hostset_json(&p->hostsets[in->hostset])
                          : json_null());
  if (in->topology >= 0 && (size_t) in->topology < p->ntopologies) {
    /* The emulated hosts and what their topology gives each. */
    tpuci__plan_hosts_t h;
    tpuci__err_t err = {0, NULL};
    int n = tpuci__plan_host_envs(p, in, &h, &err);
    a = json_array();
    for (k = 0; k < n; k++) {
      json_t *ho = json_object();
      char name[32];
      tpuci__host_name(name, sizeof(name), n, k);
      json_object_set_new(ho, "name", json_string(name));
      json_object_set_new(ho, "env", tpuci__json_kv(&h.env[k]));
      json_array_append_new(a, ho);
    }
    json_object_set_new(o, "hosts", a);
    tpuci__plan_hosts_free(&h);
    tpuci__err_clear(&err);
  }
  /* Only when given: plans without them read as before. */
  if (tpuci__devices_expect(p, in, &dev, &derr) == 1)
    json_object_set_new(o, "expect_devices",
                        json_pack("{s:s, s:s*, s:s, s:i, s:i}", "frameworks", dev.frameworks,
                                  "emulated", dev.emulated, "platform", dev.platform, "devices",
                                  dev.devices, "chips", dev.chips));
  tpuci__err_clear(&derr);
  if (in->no_cache) json_object_set_new(o, "cache", json_false());
  if (in->inputs.len > 0) {
    a = json_array();
    for (i = 0; i < in->inputs.len; i++) json_array_append_new(a, json_string(in->inputs.items[i]));
    json_object_set_new(o, "inputs", a);
  }
  /* Its kind's part, last: plans of the command kind read as before. */
  if (in->kind != NULL) json_object_set_new(o, in->kind->name, in->kind->json(in));
  return o;
}

/* Appends `v` dumped with an indent of 2, each line after the first
 * indented by `depth` more spaces (its place in the document). */
static void tpuci__json_put(tpuci__buf_t *b, const json_t *v, int depth) {
  char *text = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
  const char *p, *nl;
  if (text == NULL) {
    tpuci__buf_adds(b, "null");
    return;
  }
  for (p = text; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
    tpuci__buf_add(b, p, (size_t) (nl - p) + 1);
    tpuci__buf_addf(b, "%*s", depth, "");
  }
  tpuci__buf_adds(b, p);
  free(text);
}

const char *tpuci__image_engine_ref(const tpuci__image_t *img) {
  return img->id != NULL ? img->id : img->ref;
}

char *tpuci__plan_to_json(const tpuci__plan_t *p) { return tpuci__plan_to_json_x(p, NULL, NULL); }

/* {"context", "dockerfile", "target", "args": {NAME: value}}. */
static json_t *tpuci__plan_build_json(const tpuci__image_build_t *b) {
  json_t *o = json_object(), *args = json_object();
  size_t k;
  json_object_set_new(o, "context", json_string(b->context));
  json_object_set_new(o, "dockerfile", tpuci__json_str(b->dockerfile));
  json_object_set_new(o, "target", tpuci__json_str(b->target));
  for (k = 0; k + 1 < b->args.len; k += 2)
    json_object_set_new(args, b->args.items[k], json_string(b->args.items[k + 1]));
  json_object_set_new(o, "args", args);
  return o;
}

/* The document is written piece by piece, one instance at a time, so
 * that a plan of 100,000 instances never has all of them as JSON trees
 * at once (the same bytes json_dumps(JSON_INDENT(2)) would give). */
char *tpuci__plan_to_json_x(const tpuci__plan_t *p,
                            void (*extra)(void *ud, const tpuci__instance_t *inst, json_t *o),
                            void *ud) {
  json_t *root = json_object(), *a;
  tpuci__buf_t b;
  const char *key;
  json_t *v;
  size_t i, n = 0;

  json_object_set_new(root, "spec", tpuci__json_str(p->spec_path));
  a = json_array();
  for (i = 0; i < p->nimages; i++) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(p->images[i].name));
    json_object_set_new(o, "ref", json_string(p->images[i].ref));
    json_object_set_new(o, "pull", json_string(tpuci__pull_name(p->images[i].pull)));
    json_object_set_new(o, "where", tpuci__json_str(p->images[i].where));
    if (p->images[i].build != NULL)
      json_object_set_new(o, "build", tpuci__plan_build_json(p->images[i].build));
    json_array_append_new(a, o);
  }
  json_object_set_new(root, "images", a);
  a = json_array();
  for (i = 0; i < p->ntopologies; i++) {
    const tpuci__topology_t *t = &p->topologies[i];
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(t->name));
    json_object_set_new(o, "base", tpuci__json_str(t->base));
    json_object_set_new(o, "hosts", json_integer(t->hosts));
    json_object_set_new(o, "chips_per_host", json_integer(t->chips_per_host));
    json_object_set_new(o, "cores_per_chip", json_integer(t->cores_per_chip));
    json_object_set_new(o, "emulate", tpuci__json_str(t->emulate));
    json_object_set_new(o, "where", tpuci__json_str(t->where));
    json_array_append_new(a, o);
  }
  json_object_set_new(root, "topologies", a);
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "{");
  json_object_foreach(root, key, v) {
    json_t *k = json_string(key);
    tpuci__buf_adds(&b, n++ ? ",\n  " : "\n  ");
    tpuci__json_put(&b, k, 2);
    tpuci__buf_adds(&b, ": ");
    tpuci__json_put(&b, v, 2);
    json_decref(k);
  }
  json_decref(root);
  tpuci__buf_adds(&b, ",\n  \"instances\": [");
  n = 0;
  for (i = 0; i < p->ninstances; i++) {
    json_t *o;
    if (!p->instances[i].selected) continue;
    o = tpuci__plan_instance_json(p, &p->instances[i]);
    if (extra) extra(ud, &p->instances[i], o);
    tpuci__buf_adds(&b, n++ ? ",\n    " : "\n    ");
    tpuci__json_put(&b, o, 4);
    json_decref(o);
  }
  tpuci__buf_adds(&b, n ? "\n  ]" : "]");
  a = json_array();
  for (i = 0; i < p->warnings.len; i++) json_array_append_new(a, json_string(p->warnings.items[i]));
  tpuci__buf_adds(&b, ",\n  \"warnings\": ");
  tpuci__json_put(&b, a, 2);
  json_decref(a);
  tpuci__buf_adds(&b, "\n}\n");
  return tpuci__buf_steal(&b);
}

/* ------------------------------------------------------------------ */
/* Text                                                                */

static void tpuci__text_retry(tpuci__buf_t *b, const tpuci__retry_t *r) {
  char d1[32], d2[32];
  int k, first = 1;

  if (r->attempts <= 1) {
    tpuci__buf_adds(b, "none");
    return;
  }
  tpuci__buf_addf(b, "%d attempts on ", r->attempts);
  for (k = 0; k < TPUCI_OUTCOME__COUNT; k++) {
    if (!(r->on & (1u << k))) continue;
    tpuci__buf_addf(b, "%s%s", first ? "" : ",", tpuci_outcome_name((tpuci_outcome_t) k));
    first = 0;
  }
  if (first) tpuci__buf_adds(b, "nothing");
  tpuci__buf_addf(
      b, ", backoff %s x%g up to %s", tpuci__duration_format(r->backoff_ms, d1, sizeof(d1)),
      r->factor,
      r->max_backoff_ms ? tpuci__duration_format(r->max_backoff_ms, d2, sizeof(d2)) : "no limit");
  if (r->rerun_unfinished) tpuci__buf_adds(b, ", rerunning unfinished tests only");
}

/* A topology's hosts: what every host gets, then what differs. */
static void tpuci__text_hosts(tpuci__buf_t *b, const tpuci__plan_t *p,
                              const tpuci__instance_t *in) {
  tpuci__plan_hosts_t h;
  tpuci__err_t err = {0, NULL};
  int n = tpuci__plan_host_envs(p, in, &h, &err);
  size_t k;
  int i, j;

  if (n < 0) {
    tpuci__buf_addf(b, "  hosts:    cannot be shown: %s\n", err.msg ? err.msg : "?");
  } else if (n == 1) {
    tpuci__buf_adds(b, "  env of the host (one container; the job's env wins over these):\n");
    for (k = 0; k < h.env[0].len; k++) {
      tpuci__buf_addf(b, "    %s=", h.env[0].items[k].key);
      tpuci__buf_add_shell(b, h.env[0].items[k].value);
      tpuci__buf_adds(b, "\n");
    }
  } else if (n > 1) {
    tpuci__buf_addf(b,
                    "  gang:     %d hosts " TPUCI__GANG_HOST_FMT ".." TPUCI__GANG_HOST_FMT
                    ", %s, taking %d slots\n",
                    n, 0, n - 1,
                    !tpuci__runtime_props(in->runtime)->workers
                        ? "one container each on a private network"
                    : in->image >= 0 ? "one container each on its worker's engine, over SSH"
                                     : "one process each on its worker over SSH",
                    n);
    if (in->start_timeout_ms) {
      char d[32];
      tpuci__buf_addf(b,
                      "  start:    every host up and every name resolving within %s "
                      "(start_timeout), else infra\n",
                      tpuci__duration_format(in->start_timeout_ms, d, sizeof(d)));
    } else {
      tpuci__buf_adds(b, "  start:    no start barrier (start_timeout = 0)\n");
    }
    tpuci__buf_adds(b, "  env of every host (the job's env wins over these):\n");
    for (k = 0; k < h.env[0].len; k++) {
      const char *v = h.env[0].items[k].value;
      int same = 1;
      for (j = 1; j < n && same; j++) {
        const char *w = tpuci__kv_get(&h.env[j], h.env[0].items[k].key);
        same = w != NULL && strcmp(v, w) == 0;
      }
      if (!same) continue;
      tpuci__buf_addf(b, "    %s=", h.env[0].items[k].key);
      tpuci__buf_add_shell(b, v);
      tpuci__buf_adds(b, "\n");
    }
    for (i = 0; i < n; i++) {
      tpuci__buf_addf(b, "  env of " TPUCI__GANG_HOST_FMT ":", i);
      for (k = 0; k < h.env[i].len; k++) {
        const char *key = h.env[i].items[k].key;
        const char *v = h.env[i].items[k].value;
        int same = 1;
        for (j = 0; j < n && same; j++) {
          const char *w = tpuci__kv_get(&h.env[j], key);
          same = w != NULL && strcmp(v, w) == 0;
        }
        if (same) continue;
        tpuci__buf_addf(b, " %s=", key);
        tpuci__buf_add_shell(b, v);
      }
      tpuci__buf_adds(b, "\n");
    }
  }
  tpuci__plan_hosts_free(&h);
  tpuci__err_clear(&err);
}

char *tpuci__plan_to_text(const tpuci__plan_t *p) {
  tpuci__devices_expect_t dev;
  tpuci__err_t derr = {0, NULL};
  tpuci__buf_t b;
  char d[32];
  size_t i, k, shown = 0;

  tpuci__buf_init(&b);
  for (i = 0; i < p->ninstances; i++) {
    const tpuci__instance_t *in = &p->instances[i];
    if (!in->selected) continue;
    if (shown++) tpuci__buf_adds(&b, "\n");
    tpuci__buf_addf(&b, "%s  (%s)\n", in->name, in->where);
    tpuci__buf_addf(&b, "  runtime:  %s\n", tpuci__runtime_kind_name(in->runtime));
    if (in->image >= 0 && (size_t) in->image < p->nimages)
      tpuci__buf_addf(&b, "  image:    %s\n", p->images[in->image].ref);
    if (in->topology >= 0 && (size_t) in->topology < p->ntopologies) {
      const tpuci__topology_t *t = &p->topologies[in->topology];
      tpuci__buf_addf(&b, "  topology: %s (%d host%s x %d chip%s, %s)\n", t->name, t->hosts,
                      t->hosts == 1 ? "" : "s", t->chips_per_host,
                      t->chips_per_host == 1 ? "" : "s", t->emulate ? t->emulate : "none");
    }
    tpuci__buf_adds(&b, "  command:  ");
    if (in->run != NULL) {
      tpuci__buf_adds(&b, in->run);
    } else {
      for (k = 0; k < in->argv.len; k++) {
        if (k) tpuci__buf_adds(&b, " ");
        tpuci__buf_add_shell(&b, in->argv.items[k]);
      }
    }
    tpuci__buf_adds(&b, "\n");
    if (in->workdir) tpuci__buf_addf(&b, "  workdir:  %s\n", in->workdir);
    if (in->env.len > 0) {
      tpuci__buf_adds(&b, "  env:     ");
      for (k = 0; k < in->env.len; k++) {
        tpuci__buf_addf(&b, " %s=", in->env.items[k].key);
        tpuci__buf_add_shell(&b, in->env.items[k].value);
      }
      tpuci__buf_adds(&b, "\n");
    }
    for (k = 0; k < in->nmounts; k++)
      tpuci__buf_addf(&b, "  mount:    %s -> %s%s\n", in->mounts[k].source, in->mounts[k].target,
                      in->mounts[k].read_only ? " (read-only)" : "");
    tpuci__ctr_opts_text(&in->ctr, &b);
    if (in->hostset >= 0 && (size_t) in->hostset < p->nhostsets)
      tpuci__hostset_text(&p->hostsets[in->hostset], &b);
    tpuci__buf_addf(&b, "  timeout:  %s\n",
                    in->timeout_ms ? tpuci__duration_format(in->timeout_ms, d, sizeof(d)) : "none");
    if (in->idle_timeout_ms)
      tpuci__buf_addf(&b, "  idle:     no output for %s: timeout\n",
                      tpuci__duration_format(in->idle_timeout_ms, d, sizeof(d)));
    tpuci__text_hosts(&b, p, in);
    tpuci__buf_adds(&b, "  retries:  ");
    tpuci__text_retry(&b, &in->retry);
    tpuci__buf_adds(&b, "\n");
    if (tpuci__runtime_props(in->runtime)->capacity)
      tpuci__buf_addf(&b,
                      "  capacity: %d more attempt%s after a preempted or no-capacity one, "
                      "%s apart (retries.capacity)\n",
                      in->retry.capacity_attempts, in->retry.capacity_attempts == 1 ? "" : "s",
                      tpuci__duration_format(in->retry.capacity_wait_ms, d, sizeof(d)));
    if (tpuci__devices_expect(p, in, &dev, &derr) == 1)
      tpuci__buf_addf(
          &b, "  devices:  %s must see %d %s device%s (%d chip%s) %s\n",
          dev.emulated && strcmp(dev.frameworks, "auto") == 0
              ? (dev.emulated[0] == 'j' ? "jax, if it imports," : "torch_xla, if it imports,")
          : strcmp(dev.frameworks, "auto") == 0 ? "jax and torch_xla, if they import,"
                                                : dev.frameworks,
          dev.devices, dev.platform, dev.devices == 1 ? "" : "s", dev.chips,
          dev.chips == 1 ? "" : "s",
          in->kind != NULL && in->kind->devices_when ? in->kind->devices_when
                                                     : "before the command");
    tpuci__err_clear(&derr);
    if (in->no_cache) tpuci__buf_adds(&b, "  cache:    off (cache = false)\n");
    for (k = 0; k < in->inputs.len; k++)
      tpuci__buf_addf(&b, "%s%s%s", k ? ", " : "  inputs:   ", in->inputs.items[k],
                      k + 1 == in->inputs.len ? "\n" : "");
  }
  return tpuci__buf_steal(&b);
}
