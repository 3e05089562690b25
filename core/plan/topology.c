/* Resolved slices, the environment each emulated host gets, and the
 * combinations that cannot work on CPU. Facts: tpu-topology.md (cited
 * below by section, "the doc"); docs/topology.md explains every variable. */
#include "plan/topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TPUCI__MAX_HOSTS 256

static const char *const tpuci__emulate_names[TPUCI__EMULATE__COUNT] = {"pjrt", "xrt", "jax",
                                                                        "none", "real"};

const char *tpuci__emulate_name(tpuci__emulate_t e) {
  return (unsigned) e < TPUCI__EMULATE__COUNT ? tpuci__emulate_names[e] : "?";
}

int tpuci__emulate_parse(const char *name, tpuci__emulate_t *out) {
  int i;
  if (name == NULL) return -1;
  for (i = 0; i < TPUCI__EMULATE__COUNT; i++) {
    if (strcmp(name, tpuci__emulate_names[i]) == 0) {
      *out = (tpuci__emulate_t) i;
      return 0;
    }
  }
  return -1;
}

/* ------------------------------------------------------------------ */
/* Rules                                                               */

/* A generation's rules (topology_catalogue.yaml says where each comes
 * from). A custom slice without a generation counts TensorCores as
 * devices (cores_per_chip = 2 means two devices per chip) and gets
 * process bounds. */
static int tpuci__devices_per_chip(const tpuci__tpu_gen_t *gen, int cores_per_chip) {
  return gen == NULL || gen->device_per_core ? cores_per_chip : 1;
}

static int tpuci__has_process_bounds(const tpuci__tpu_gen_t *gen) {
  return gen == NULL || gen->process_bounds;
}

static int tpuci__valid_name(const char *s) {
  if (s == NULL || *s == '\0') return 0;
  for (; *s; s++) {
    unsigned char c = (unsigned char) *s;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == '-'))
      return 0;
  }
  return 1;
}

/* ------------------------------------------------------------------ */
/* Resolving                                                           */

void tpuci__slice_free(tpuci__slice_t *s) {
  if (s == NULL) return;
  free(s->name);
  free(s->accelerator_type);
  free(s->generation);
  free(s->topology);
  free(s->host_bounds);
  free(s->chips_per_host_bounds);
  free(s->process_bounds);
  free(s->chips_per_process_bounds);
  memset(s, 0, sizeof(*s));
}

static void tpuci__slice_from_row(tpuci__slice_t *s, const char *name, const tpuci__tpu_type_t *t) {
  s->name = tpuci__strdup(name);
  s->accelerator_type = tpuci__strdup(t->type);
  s->generation = tpuci__strdup(t->generation);
  s->row = t;
  s->hosts = t->hosts;
  s->chips_per_host = t->chips_per_host;
  s->cores_per_chip = t->cores_per_chip;
  s->devices_per_host = t->devices_per_host;
  s->topology = tpuci__strdup(t->topology);
  s->host_bounds = tpuci__strdup(t->host_bounds);
  s->chips_per_host_bounds = tpuci__strdup(t->chips_per_host_bounds);
  if (tpuci__has_process_bounds(t->gen)) {
    s->process_bounds = tpuci__strdup(t->host_bounds);
    s->chips_per_process_bounds = tpuci__strdup(t->chips_per_host_bounds);
  }
}

/* Numbers not in the catalogue (r's name, hosts, chips_per_host and
 * cores_per_chip, all given), for accelerator type `type` of generation
 * `gen` (may be NULL): chips-per-host bounds from the device plugin's
 * table, host bounds 1,1,N, the topology their product. */
static void tpuci__slice_compute(tpuci__slice_t *s, const tpuci__slice_req_t *r, const char *type,
                                 const tpuci__tpu_gen_t *gen) {
  int hosts = r->hosts, chips = r->chips_per_host, cores = r->cores_per_chip;
  int d[3] = {1, 1, 1};
  tpuci__tpu_chips_per_dim(chips, d); /* validated by the caller */
  s->name = tpuci__strdup(r->name);
  s->accelerator_type = tpuci__strdup(type);
  s->generation = gen ? tpuci__strdup(gen->name) : NULL;
  s->row = NULL;
  s->hosts = hosts;
  s->chips_per_host = chips;
  s->cores_per_chip = cores;
  s->devices_per_host = chips * tpuci__devices_per_chip(gen, cores);
  s->topology = tpuci__printf("%dx%dx%d", d[0], d[1], d[2] * hosts);
  s->host_bounds = tpuci__printf("1,1,%d", hosts);
  s->chips_per_host_bounds = tpuci__printf("%d,%d,%d", d[0], d[1], d[2]);
  if (tpuci__has_process_bounds(gen)) {
    s->process_bounds = tpuci__strdup(s->host_bounds);
    s->chips_per_process_bounds = tpuci__strdup(s->chips_per_host_bounds);
  }
}

static int tpuci__check_numbers(const tpuci__slice_req_t *r, tpuci__err_t *err) {
  int d[3] = {1, 1, 1};
  if (r->hosts < 0 || r->hosts > TPUCI__MAX_HOSTS)
    return tpuci__err_set(err, TPUCI_ESPEC, "hosts must be 1..%d, got %d", TPUCI__MAX_HOSTS,
                          r->hosts);
  if (r->chips_per_host < 0 ||
      (r->chips_per_host > 0 && tpuci__tpu_chips_per_dim(r->chips_per_host, d)))
    return tpuci__err_set(err, TPUCI_ESPEC, "chips_per_host must be 1, 2, 4 or 8, got %d",
                          r->chips_per_host);
  if (r->cores_per_chip < 0 || r->cores_per_chip > 2)
    return tpuci__err_set(err, TPUCI_ESPEC, "cores_per_chip must be 1 or 2, got %d",
                          r->cores_per_chip);
  return 0;
}

/* "did you mean" tail for an unknown type, or "". */
static const char *tpuci__did_you_mean(const char *type, char *buf, size_t size) {
  const char *s = tpuci__tpu_suggest(type);
  if (s == NULL) return "";
  snprintf(buf, size, " (did you mean '%s'?)", s);
  return buf;
}

/* Lists the layouts of a type: "2x4 (2 hosts, default), 1x8 (1 host)". */
static char *tpuci__layout_list(const char *type) {
  tpuci__buf_t b;
  size_t i, n = tpuci__tpu_catalogue_size();
  tpuci__buf_init(&b);
  for (i = 0; i < n; i++) {
    const tpuci__tpu_type_t *t = tpuci__tpu_catalogue_at(i);
    if (strcmp(t->type, type) != 0) continue;
    tpuci__buf_addf(&b, "%s%s (%d host%s%s)", b.len ? ", " : "", t->layout, t->hosts,
                    t->hosts == 1 ? "" : "s", t->is_default_layout ? ", default" : "");
  }
  return tpuci__buf_steal(&b);
}

/* `name` is a catalogue type: pick the layout, check given numbers. */
static int tpuci__resolve_type(tpuci__slice_t *s, const tpuci__slice_req_t *r, tpuci__err_t *err) {
  const tpuci__tpu_type_t *t = NULL;
  char *list;

  if (r->layout != NULL) {
    t = tpuci__tpu_find_layout(r->name, r->layout);
    if (t == NULL || (r->hosts && t->hosts != r->hosts)) {
      list = tpuci__layout_list(r->name);
      if (t == NULL)
        tpuci__err_set(err, TPUCI_ESPEC, "%s has no layout '%s' (layouts: %s)", r->name, r->layout,
                       list);
      else
        tpuci__err_set(err, TPUCI_ESPEC, "layout '%s' of %s has %d host%s, not %d (layouts: %s)",
                       r->layout, r->name, t->hosts, t->hosts == 1 ? "" : "s", r->hosts, list);
      free(list);
      return TPUCI_ESPEC;
    }
  } else {
    t = tpuci__tpu_find(r->name, r->hosts);
    if (t == NULL) {
      list = tpuci__layout_list(r->name);
      tpuci__err_set(err, TPUCI_ESPEC,
                     "%s has no layout with %d host%s (layouts: %s); for "
                     "other numbers declare a custom topology with base = "
                     "\"%s\"",
                     r->name, r->hosts, r->hosts == 1 ? "" : "s", list, r->name);
      free(list);
      return TPUCI_ESPEC;
    }
  }
  if (r->chips_per_host && r->chips_per_host != t->chips_per_host)
    return tpuci__err_set(err, TPUCI_ESPEC,
                          "%s has %d chip%s per host, not %d; for other "
                          "numbers declare a custom topology with base = "
                          "\"%s\"",
                          t->type, t->chips_per_host, t->chips_per_host == 1 ? "" : "s",
                          r->chips_per_host, t->type);
  if (r->cores_per_chip && r->cores_per_chip != t->cores_per_chip)
    return tpuci__err_set(err, TPUCI_ESPEC,
                          "%s has %d TensorCore%s per chip, not %d; for "
                          "other numbers declare a custom topology with "
                          "base = \"%s\"",
                          t->type, t->cores_per_chip, t->cores_per_chip == 1 ? "" : "s",
                          r->cores_per_chip, t->type);
  tpuci__slice_from_row(s, r->name, t);
  return 0;
}

/* A slice of the base's generation with some numbers changed. */
static int tpuci__resolve_based(tpuci__slice_t *s, const tpuci__slice_req_t *r, tpuci__err_t *err) {
  const tpuci__tpu_type_t *b, *t;
  char hint[96], *prefix, *type;
  const char *dash;
  int hosts, chips, cores, n;

  b = tpuci__tpu_find_layout(r->base, r->layout);
  if (b == NULL) {
    if (tpuci__tpu_find(r->base, 0) == NULL)
      return tpuci__err_set(err, TPUCI_ESPEC, "base: unknown TPU type '%s'%s", r->base,
                            tpuci__did_you_mean(r->base, hint, sizeof(hint)));
    {
      char *list = tpuci__layout_list(r->base);
      tpuci__err_set(err, TPUCI_ESPEC, "%s has no layout '%s' (layouts: %s)", r->base, r->layout,
                     list);
      free(list);
      return TPUCI_ESPEC;
    }
  }
  /* With only `hosts` given, a layout of the base itself may fit. */
  if (r->layout == NULL && r->hosts && !r->chips_per_host &&
      tpuci__tpu_find(r->base, r->hosts) != NULL)
    b = tpuci__tpu_find(r->base, r->hosts);
  hosts = r->hosts ? r->hosts : b->hosts;
  chips = r->chips_per_host ? r->chips_per_host : b->chips_per_host;
  cores = r->cores_per_chip ? r->cores_per_chip : b->cores_per_chip;

  /* The accelerator type these numbers make, by the doc's naming rule. */
  dash = strrchr(b->type, '-');
  prefix = tpuci__strndup(b->type, (size_t) (dash - b->type));
  n = hosts * chips;
  if (!b->gen->name_counts_chips) n *= cores;
  type = tpuci__printf("%s-%d", prefix, n);
  free(prefix);

  t = tpuci__tpu_find(type, hosts);
  if (t != NULL && t->chips_per_host == chips && t->cores_per_chip == cores) {
    tpuci__slice_from_row(s, r->name, t);
  } else {
    tpuci__slice_req_t shape = {
        .name = r->name, .hosts = hosts, .chips_per_host = chips, .cores_per_chip = cores};
    tpuci__slice_compute(s, &shape, type, b->gen);
  }
  free(type);
  return 0;
}

int tpuci__slice_resolve(tpuci__slice_t *s, const tpuci__slice_req_t *r, tpuci__err_t *err) {
  tpuci__emulate_t emulate = TPUCI__EMULATE_PJRT;
  char hint[96];
  int rc;

  memset(s, 0, sizeof(*s));
  if (r->name == NULL || *r->name == '\0')
    return tpuci__err_set(err, TPUCI_ESPEC, "a topology needs a name");
  if (!tpuci__valid_name(r->name))
    return tpuci__err_set(err, TPUCI_ESPEC, "name '%s': use letters, digits, '.', '_' and '-'",
                          r->name);
  if (r->emulate != NULL && tpuci__emulate_parse(r->emulate, &emulate) != 0)
    return tpuci__err_set(err, TPUCI_ESPEC,
                          "emulate must be \"pjrt\", \"xrt\", \"jax\", "
                          "\"none\" or \"real\", got \"%s\"",
                          r->emulate);
  rc = tpuci__check_numbers(r, err);
  if (rc != 0) return rc;

  if (r->base != NULL) {
    if (tpuci__tpu_find(r->name, 0) != NULL)
      return tpuci__err_set(err, TPUCI_ESPEC,
                            "'%s' is a catalogue type; a topology with a "
                            "base needs another name",
                            r->name);
    rc = tpuci__resolve_based(s, r, err);
  } else if (tpuci__tpu_find(r->name, 0) != NULL) {
    rc = tpuci__resolve_type(s, r, err);
  } else {
    const char *close = tpuci__tpu_suggest(r->name);
    /* Custom numbers: missing ones are 1. */
    tpuci__slice_req_t shape = {.name = r->name,
                                .hosts = r->hosts ? r->hosts : 1,
                                .chips_per_host = r->chips_per_host ? r->chips_per_host : 1,
                                .cores_per_chip = r->cores_per_chip ? r->cores_per_chip : 1};
    if (r->layout != NULL)
      return tpuci__err_set(err, TPUCI_ESPEC,
                            "layout '%s' needs a catalogue type, and '%s' is "
                            "not one%s",
                            r->layout, r->name, tpuci__did_you_mean(r->name, hint, sizeof(hint)));
    if (close != NULL)
      return tpuci__err_set(err, TPUCI_ESPEC,
                            "unknown TPU type '%s' (did you mean '%s'?); a "
                            "custom topology with a name this close to a "
                            "catalogue type needs a base",
                            r->name, close);
    tpuci__slice_compute(s, &shape, r->name, NULL);
    rc = 0;
  }
  if (rc != 0) {
    tpuci__slice_free(s);
    return rc;
  }
  s->emulate = emulate;
  return 0;
}

int tpuci__slice_from_type(tpuci__slice_t *s, const char *type, int hosts, const char *emulate,
                           tpuci__err_t *err) {
  tpuci__slice_req_t r;
  char hint[96];
  memset(&r, 0, sizeof(r));
  r.name = type;
  r.hosts = hosts;
  r.emulate = emulate;
  if (type != NULL && tpuci__tpu_find(type, 0) == NULL) {
    memset(s, 0, sizeof(*s));
    return tpuci__err_set(err, TPUCI_ESPEC, "unknown TPU type '%s'%s", type,
                          tpuci__did_you_mean(type, hint, sizeof(hint)));
  }
  return tpuci__slice_resolve(s, &r, err);
}

int tpuci__slice_custom(tpuci__slice_t *s, const tpuci__slice_req_t *r, tpuci__err_t *err) {
  tpuci__slice_req_t custom = *r;
  memset(s, 0, sizeof(*s));
  /* Here every number is required: 0 is out of range, not "not given". */
  if (r->hosts < 1 || r->hosts > TPUCI__MAX_HOSTS)
    return tpuci__err_set(err, TPUCI_ESPEC, "hosts must be 1..%d, got %d", TPUCI__MAX_HOSTS,
                          r->hosts);
  if (r->chips_per_host < 1)
    return tpuci__err_set(err, TPUCI_ESPEC, "chips_per_host must be 1, 2, 4 or 8, got %d",
                          r->chips_per_host);
  if (r->cores_per_chip < 1)
    return tpuci__err_set(err, TPUCI_ESPEC, "cores_per_chip must be 1 or 2, got %d",
                          r->cores_per_chip);
  if (r->name != NULL && tpuci__tpu_find(r->name, 0) != NULL)
    return tpuci__err_set(err, TPUCI_ESPEC,
                          "'%s' is a catalogue type; a custom topology "
                          "needs another name",
                          r->name);
  /* Custom numbers, on no catalogue type or layout. */
  custom.base = NULL;
  custom.layout = NULL;
  return tpuci__slice_resolve(s, &custom, err);
}

/* ------------------------------------------------------------------ */
/* Environment                                                         */

static int tpuci__check_port(int *port, int dflt, const char *what, tpuci__err_t *err) {
  if (*port == 0) *port = dflt;
  if (*port < 1 || *port > 65535)
    return tpuci__err_set(err, TPUCI_EUSAGE, "%s must be 1..65535, got %d", what, *port);
  return 0;
}

static void tpuci__set_int(tpuci__kvlist_t *l, const char *key, int v) {
  char num[16];
  snprintf(num, sizeof(num), "%d", v);
  tpuci__kv_set(l, key, num);
}

/* What host `host` of a slice knows of its gang: every host's name (a
 * comma list ordered by worker id), host 0's, and the coordinator ports
 * (defaults applied). */
typedef struct {
  int host;
  const char *names;
  const char *host0;
  int jax_port;
  int xrt_port;
} tpuci__host_view_t;

/* What a TPU VM / GKE pod of this slice has (doc 4b, 2b), and the CPU
 * emulation switches: the variables real hardware brings itself. */
static void tpuci__emulated_env(const tpuci__slice_t *s, const tpuci__host_view_t *v,
                                tpuci__kvlist_t *e) {
  int host = v->host;
  char tmp[160];

  tpuci__set_int(e, "TPU_WORKER_ID", host);
  tpuci__kv_set(e, "TPU_WORKER_HOSTNAMES", v->names);
  tpuci__kv_set(e, "TPU_ACCELERATOR_TYPE", s->accelerator_type);
  tpuci__kv_set(e, "TPU_TOPOLOGY", s->topology);
  tpuci__kv_set(e, "TPU_HOST_BOUNDS", s->host_bounds);
  tpuci__kv_set(e, "TPU_CHIPS_PER_HOST_BOUNDS", s->chips_per_host_bounds);
  if (s->process_bounds != NULL) {
    tpuci__kv_set(e, "TPU_PROCESS_BOUNDS", s->process_bounds);
    tpuci__kv_set(e, "TPU_CHIPS_PER_PROCESS_BOUNDS", s->chips_per_process_bounds);
  }
  /* Global process index; one process per host makes it the worker id. */
  tpuci__set_int(e, "CLOUD_TPU_TASK_ID", host);
  tpuci__kv_set(e, "TPU_SKIP_MDS_QUERY", "true");

  /* The CPU emulation switches. Never PJRT_DEVICE=TPU, never a
   * JAX_PLATFORMS with tpu (doc 6). */
  switch (s->emulate) {
    case TPUCI__EMULATE_PJRT:
      tpuci__kv_set(e, "PJRT_DEVICE", "CPU");
      tpuci__set_int(e, "CPU_NUM_DEVICES", s->devices_per_host);
      break;
    case TPUCI__EMULATE_XRT:
      /* pytorch/xla's and ignite's CI values (doc 1, 2a). XLA CPU holds one
       * device per process: with CPU_NUM_DEVICES=N, xmp.spawn forks N
       * processes and gives each its own CPU:i map and port (doc 2a). */
      tpuci__kv_set(e, "XRT_DEVICE_MAP",
                    "CPU:0;/job:localservice/replica:0/task:0/device:XLA_CPU:0");
      snprintf(tmp, sizeof(tmp), "localservice:0;grpc://localhost:%d", v->xrt_port);
      tpuci__kv_set(e, "XRT_WORKERS", tmp);
      tpuci__set_int(e, "CPU_NUM_DEVICES", s->devices_per_host);
      break;
    case TPUCI__EMULATE_JAX:
      tpuci__kv_set(e, "JAX_PLATFORMS", "cpu");
      snprintf(tmp, sizeof(tmp), "--xla_force_host_platform_device_count=%d", s->devices_per_host);
      tpuci__kv_set(e, "XLA_FLAGS", tmp);
      tpuci__set_int(e, "JAX_NUM_CPU_DEVICES", s->devices_per_host);
      /* jax.distributed.initialize reads these two (doc 3); host 0 is the
       * coordinator, as on a TPU slice (first worker, port 8482, doc 4b). */
      snprintf(tmp, sizeof(tmp), "%s:%d", v->host0, v->jax_port);
      tpuci__kv_set(e, "JAX_COORDINATOR_ADDRESS", tmp);
      tpuci__set_int(e, "JAX_COORDINATOR_PORT", v->jax_port);
      /* The default since jax 0.5.1; explicit for older versions. */
      if (s->hosts > 1) tpuci__kv_set(e, "JAX_CPU_COLLECTIVES_IMPLEMENTATION", "gloo");
      /* JAX reads no variable for these; scripts pass them on. */
      tpuci__set_int(e, "TPUCI_JAX_PROCESS_ID", host);
      tpuci__set_int(e, "TPUCI_JAX_NUM_PROCESSES", s->hosts);
      break;
    default: break;
  }
}

int tpuci__slice_host_env(const tpuci__slice_t *s, int host, const tpuci__gang_net_t *net,
                          tpuci__kvlist_t *env, tpuci__err_t *err) {
  tpuci__kvlist_t e = {NULL, 0, 0};
  tpuci__buf_t names;
  const char *host0;
  int master_port = net ? net->master_port : 0;
  int jax_port = net ? net->jax_port : 0;
  int xrt_port = net ? net->xrt_port : 0;
  int i, n;

  if (s == NULL || s->hosts < 1) return tpuci__err_set(err, TPUCI_EUSAGE, "no slice");
  if (host < 0 || host >= s->hosts)
    return tpuci__err_set(err, TPUCI_EUSAGE, "host %d is out of range (the slice has %d host%s)",
                          host, s->hosts, s->hosts == 1 ? "" : "s");
  if (tpuci__check_port(&master_port, TPUCI__MASTER_PORT_DEFAULT, "master_port", err) ||
      tpuci__check_port(&jax_port, TPUCI__JAX_PORT_DEFAULT, "jax_port", err) ||
      tpuci__check_port(&xrt_port, TPUCI__XRT_PORT_DEFAULT, "xrt_port", err))
    return err ? err->code : TPUCI_EUSAGE;

  /* TPU_WORKER_HOSTNAMES: comma list ordered by worker id (doc 4b). A
   * single host gets "localhost", as the GKE device plugin sets it. */
  tpuci__buf_init(&names);
  n = s->hosts;
  if (n == 1) {
    tpuci__buf_adds(&names, "localhost");
  } else {
    for (i = 0; i < n; i++) {
      const char *h = net && net->hostnames ? net->hostnames[i] : NULL;
      if (net && net->hostnames && !tpuci__valid_name(h)) {
        tpuci__buf_free(&names);
        return tpuci__err_set(err, TPUCI_EUSAGE,
                              "hostname %d is %s%s%s: use letters, digits, "
                              "'.', '_' and '-'",
                              i, h ? "'" : "missing", h ? h : "", h ? "'" : "");
      }
      if (i) tpuci__buf_adds(&names, ",");
      if (h) tpuci__buf_adds(&names, h);
      else tpuci__buf_addf(&names, "worker-%d", i);
    }
  }
  host0 = n == 1 ? "localhost" : net && net->hostnames ? net->hostnames[0] : "worker-0";

  if (s->emulate != TPUCI__EMULATE_REAL) {
    tpuci__host_view_t v = {.host = host,
                            .names = names.data,
                            .host0 = host0,
                            .jax_port = jax_port,
                            .xrt_port = xrt_port};
    tpuci__emulated_env(s, &v, &e);
  }
  tpuci__buf_free(&names);

  /* torch.distributed rendezvous, one process per host, and the names
   * ignite's multi-node tests read (doc 1). */
  tpuci__kv_set(&e, "MASTER_ADDR", host0);
  tpuci__set_int(&e, "MASTER_PORT", master_port);
  tpuci__set_int(&e, "WORLD_SIZE", s->hosts);
  tpuci__set_int(&e, "RANK", host);
  tpuci__set_int(&e, "LOCAL_RANK", 0);
  tpuci__set_int(&e, "LOCAL_WORLD_SIZE", 1);
  tpuci__set_int(&e, "NODE_RANK", host);
  tpuci__set_int(&e, "NNODES", s->hosts);
  tpuci__set_int(&e, "nnodes", s->hosts);
  tpuci__set_int(&e, "nproc_per_node", 1);
  tpuci__set_int(&e, "node_id", host);

  for (i = 0; i < (int) e.len; i++) tpuci__kv_set(env, e.items[i].key, e.items[i].value);
  tpuci__kv_free(&e);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Warnings                                                            */

void tpuci__slice_warnings(const tpuci__slice_t *s, tpuci__strv_t *out) {
  if (s->emulate == TPUCI__EMULATE_PJRT && s->hosts > 1)
    tpuci__strv_take(
        out, tpuci__printf("emulate = \"pjrt\" with %d hosts: torch_xla's PJRT CPU client "
                           "has no cross-process coordinator, so each host is a separate "
                           "%d-device CPU client and XLA collectives never cross hosts; "
                           "use torch.distributed with the gloo backend (MASTER_ADDR, RANK "
                           "and WORLD_SIZE are set) for cross-host tests, emulate = \"jax\" "
                           "(jax.distributed over gloo), or a single-host type",
                           s->hosts, s->devices_per_host));
  if (s->emulate == TPUCI__EMULATE_XRT && s->hosts > 1)
    tpuci__strv_take(
        out, tpuci__printf("emulate = \"xrt\" with %d hosts: XRT's CPU emulation is one "
                           "local service per host (XRT_WORKERS=localservice:0); the "
                           "cross-host XRT mesh (XRT_MESH_SERVICE_ADDRESS, XRT_SHARD_*) was "
                           "only ever set up by xla_dist for real TPU pods, so XLA "
                           "collectives never cross hosts; use torch.distributed with the "
                           "gloo backend for cross-host tests, or a single-host type",
                           s->hosts));
  if (s->row == NULL && s->generation != NULL)
    tpuci__strv_take(out, tpuci__printf("%d host%s x %d chips is not a %s layout in the catalogue: "
                                        "TPU_TOPOLOGY=%s and TPU_HOST_BOUNDS=%s follow tpuci's "
                                        "convention for custom slices, not a real TPU",
                                        s->hosts, s->hosts == 1 ? "" : "s", s->chips_per_host,
                                        s->generation, s->topology, s->host_bounds));
}
