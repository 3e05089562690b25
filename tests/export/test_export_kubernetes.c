/* The Kubernetes export (core/export/k8s/) on specs loaded with the real spec
 * loader, the manifests read back with libyaml's parser: every catalogue
 * row against GKE's values written by hand from
 * /work/shared/tpu-topology.md, names and label values, the kubelet's
 * '$' escapes, the environment of each mode, the options and every
 * refusal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yaml.h>

#include "export/k8s/export.h"
#include "kind/kinds.h"
#include "plan/plan.h"
#include "spec/spec.h"
#include "plan/topology.h"
#include "base/util.h"

/* ------------------------------------------------------------------ */
/* GKE's values for every catalogue row                                */

typedef struct {
  const char *type, *layout;
  /* NULL: GKE does not offer the type. */
  const char *accelerator, *topology;
  int chips, hosts;
} gke_row_t;

/* tpu-topology.md 4a (the accelerator table: topology, hosts x chips per
 * VM, "GKE gke-tpu-accelerator") and 4c (node labels
 * cloud.google.com/gke-tpu-accelerator and gke-tpu-topology, resource
 * google.com/tpu = chips per VM). v2 and v3 have "–" for GKE. tpu7x-16
 * and -32: 4a gives tpu7x-8 2x2x1 and the rule "chips/4 VMs x 4"; their
 * 3-D shapes are inferred, as in the catalogue. */
/* clang-format off */
static const gke_row_t gke_rows[] = {
  {"v2-8", "1x4", NULL, NULL, 4, 1},
  {"v2-32", "4x4", NULL, NULL, 4, 4},
  {"v3-8", "1x4", NULL, NULL, 4, 1},
  {"v3-32", "4x4", NULL, NULL, 4, 4},
  {"v3-64", "8x4", NULL, NULL, 4, 8},
  {"v3-128", "16x4", NULL, NULL, 4, 16},
  {"v3-256", "32x4", NULL, NULL, 4, 32},
  {"v3-512", "64x4", NULL, NULL, 4, 64},
  {"v4-8", "1x4", "tpu-v4-podslice", "2x2x1", 4, 1},
  {"v4-16", "2x4", "tpu-v4-podslice", "2x2x2", 4, 2},
  {"v4-32", "4x4", "tpu-v4-podslice", "2x2x4", 4, 4},
  {"v4-64", "8x4", "tpu-v4-podslice", "2x4x4", 4, 8},
  {"v4-128", "16x4", "tpu-v4-podslice", "4x4x4", 4, 16},
  {"v5p-8", "1x4", "tpu-v5p-slice", "2x2x1", 4, 1},
  {"v5p-16", "2x4", "tpu-v5p-slice", "2x2x2", 4, 2},
  {"v5p-32", "4x4", "tpu-v5p-slice", "2x2x4", 4, 4},
  {"v5litepod-1", "1x1", "tpu-v5-lite-podslice", "1x1", 1, 1},
  {"v5litepod-4", "1x4", "tpu-v5-lite-podslice", "2x2", 4, 1},
  {"v5litepod-8", "2x4", "tpu-v5-lite-podslice", "2x4", 4, 2},
  {"v5litepod-8", "1x8", "tpu-v5-lite-podslice", "2x4", 8, 1},
  {"v5litepod-16", "4x4", "tpu-v5-lite-podslice", "4x4", 4, 4},
  {"v5litepod-32", "8x4", "tpu-v5-lite-podslice", "4x8", 4, 8},
  {"v5litepod-64", "16x4", "tpu-v5-lite-podslice", "8x8", 4, 16},
  {"v5litepod-256", "64x4", "tpu-v5-lite-podslice", "16x16", 4, 64},
  {"v6e-1", "1x1", "tpu-v6e-slice", "1x1", 1, 1},
  {"v6e-4", "1x4", "tpu-v6e-slice", "2x2", 4, 1},
  {"v6e-8", "1x8", "tpu-v6e-slice", "2x4", 8, 1},
  {"v6e-8", "2x4", "tpu-v6e-slice", "2x4", 4, 2},
  {"v6e-16", "4x4", "tpu-v6e-slice", "4x4", 4, 4},
  {"v6e-32", "8x4", "tpu-v6e-slice", "4x8", 4, 8},
  {"v6e-64", "16x4", "tpu-v6e-slice", "8x8", 4, 16},
  {"tpu7x-8", "1x4", "tpu7x", "2x2x1", 4, 1},
  {"tpu7x-16", "2x4", "tpu7x", "2x2x2", 4, 2},
  {"tpu7x-32", "4x4", "tpu7x", "2x2x4", 4, 4},
};
/* clang-format on */
#define NGKE (sizeof(gke_rows) / sizeof(gke_rows[0]))

/* ------------------------------------------------------------------ */
/* Loading, exporting, reading back                                    */

static void load(tpuci__plan_t *plan, const char *spec) {
  const tpuci__kind_spec_t *kinds[TPUCI__NKINDS + 1];
  tpuci__spec_limits_t limits = {10000, 256u << 20, 0, kinds};
  tpuci__err_t err = {0, NULL};
  int r;
  tpuci__kind_specs(kinds);
  tpuci__plan_init(plan);
  plan->spec_path = tpuci__strdup("spec.lua");
  plan->spec_dir = tpuci__strdup("/tmp");
  r = tpuci__spec_load(plan, spec, strlen(spec), "spec.lua", "/tmp", &limits, &err);
  if (r != 0) fail_msg("spec: %s", err.msg);
}

/* Exports; returns the text (caller frees), or NULL with *msg set. */
static char *export_spec(const char *spec, const tpuci__k8s_opts_t *opts, int *code,
                         char **msg) {
  tpuci__plan_t plan;
  tpuci__err_t err = {0, NULL};
  tpuci__buf_t b;
  int r;

  load(&plan, spec);
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "");
  r = tpuci__export_kubernetes(&plan, opts, &b, &err);
  tpuci__plan_free(&plan);
  if (code) *code = r;
  if (r != 0) {
    assert_int_equal(b.len, 0); /* nothing written on error */
    tpuci__buf_free(&b);
    if (msg) *msg = err.msg;
    else tpuci__err_clear(&err);
    return NULL;
  }
  if (msg) *msg = NULL;
  return tpuci__buf_steal(&b);
}

static char *export_ok(const char *spec, const tpuci__k8s_opts_t *opts) {
  char *msg = NULL;
  int code;
  char *text = export_spec(spec, opts, &code, &msg);
  if (text == NULL) fail_msg("export failed (%d): %s", code, msg ? msg : "?");
  return text;
}

/* The error message of an export that must fail with `want`. */
static char *export_err(const char *spec, const tpuci__k8s_opts_t *opts, int want) {
  char *msg = NULL;
  int code = 0;
  char *text = export_spec(spec, opts, &code, &msg);
  if (text != NULL) fail_msg("export succeeded, want error %d:\n%s", want, text);
  assert_int_equal(code, want);
  assert_non_null(msg);
  return msg;
}

#define MAXDOCS 128

typedef struct {
  yaml_document_t docs[MAXDOCS];
  int n;
} stream_t;

static void parse(const char *text, stream_t *s) {
  yaml_parser_t p;
  memset(s, 0, sizeof(*s));
  assert_true(yaml_parser_initialize(&p));
  yaml_parser_set_input_string(&p, (const unsigned char *) text, strlen(text));
  for (;;) {
    assert_true(s->n < MAXDOCS);
    if (!yaml_parser_load(&p, &s->docs[s->n]))
      fail_msg("YAML error: %s at line %zu", p.problem, p.problem_mark.line + 1);
    if (yaml_document_get_root_node(&s->docs[s->n]) == NULL) {
      yaml_document_delete(&s->docs[s->n]);
      break;
    }
    s->n++;
  }
  yaml_parser_delete(&p);
}

static void stream_free(stream_t *s) {
  int i;
  for (i = 0; i < s->n; i++) yaml_document_delete(&s->docs[i]);
}

/* A node by a path of mapping keys and "#N" sequence indexes, ended by
 * NULL; NULL when absent. */
static yaml_node_t *at(yaml_document_t *d, yaml_node_t *n, ...) {
  va_list ap;
  const char *k;
  va_start(ap, n);
  while (n != NULL && (k = va_arg(ap, const char *)) != NULL) {
    yaml_node_t *next = NULL;
    if (k[0] == '#' && n->type == YAML_SEQUENCE_NODE) {
      long i = strtol(k + 1, NULL, 10);
      if (i < n->data.sequence.items.top - n->data.sequence.items.start)
        next = yaml_document_get_node(d, n->data.sequence.items.start[i]);
    } else if (n->type == YAML_MAPPING_NODE) {
      yaml_node_pair_t *pair;
      for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
        yaml_node_t *key = yaml_document_get_node(d, pair->key);
        if (key->type == YAML_SCALAR_NODE && strcmp((char *) key->data.scalar.value, k) == 0) {
          next = yaml_document_get_node(d, pair->value);
          break;
        }
      }
    }
    n = next;
  }
  va_end(ap);
  return n;
}

static const char *str(yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *) n->data.scalar.value : NULL;
}

/* A scalar as the Kubernetes API reads it: a string only when quoted or
 * not resolvable as anything else; `want_string` says which it must be. */
static void assert_scalar(yaml_node_t *n, const char *want, int want_string) {
  assert_non_null(n);
  assert_int_equal(n->type, YAML_SCALAR_NODE);
  assert_string_equal(str(n), want);
  if (want_string && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
    /* Plain is fine only for what no reader takes as a number or bool. */
    assert_false(tpuci__yaml_ambiguous(want));
  }
  if (!want_string) assert_int_equal(n->data.scalar.style, YAML_PLAIN_SCALAR_STYLE);
}

static yaml_node_t *root(stream_t *s, int i) {
  return yaml_document_get_root_node(&s->docs[i]);
}

/* The index of the object of `kind` whose tpuci.instance annotation (Job)
 * or name prefix matches; -1 when none. */
static int find_job(stream_t *s, const char *instance) {
  int i;
  for (i = 0; i < s->n; i++) {
    yaml_document_t *d = &s->docs[i];
    const char *kind = str(at(d, root(s, i), "kind", NULL));
    const char *inst = str(at(d, root(s, i), "metadata", "annotations", "tpuci.instance", NULL));
    if (kind && strcmp(kind, "Job") == 0 && inst && strcmp(inst, instance) == 0) return i;
  }
  return -1;
}

static int count_kind(stream_t *s, const char *kind) {
  int i, n = 0;
  for (i = 0; i < s->n; i++) {
    const char *k = str(at(&s->docs[i], root(s, i), "kind", NULL));
    if (k && strcmp(k, kind) == 0) n++;
  }
  return n;
}

static yaml_node_t *container(stream_t *s, int i) {
  return at(&s->docs[i], root(s, i), "spec", "template", "spec", "containers", "#0", NULL);
}

/* The env entry named `name` of job i's container, or NULL. */
static yaml_node_t *env(stream_t *s, int i, const char *name) {
  yaml_document_t *d = &s->docs[i];
  yaml_node_t *list = at(d, container(s, i), "env", NULL);
  yaml_node_item_t *it;
  if (list == NULL) return NULL;
  for (it = list->data.sequence.items.start; it < list->data.sequence.items.top; it++) {
    yaml_node_t *e = yaml_document_get_node(d, *it);
    const char *n = str(at(d, e, "name", NULL));
    if (n && strcmp(n, name) == 0) return e;
  }
  return NULL;
}

static const char *env_value(stream_t *s, int i, const char *name) {
  return str(at(&s->docs[i], env(s, i, name), "value", NULL));
}

static int env_indexed(stream_t *s, int i, const char *name) {
  const char *f = str(at(&s->docs[i], env(s, i, name), "valueFrom", "fieldRef", "fieldPath", NULL));
  return f && strcmp(f, TPUCI__K8S_INDEX_FIELD) == 0;
}

static int valid_dns1035(const char *s, size_t max) {
  size_t n = strlen(s), i;
  if (n == 0 || n > max || !(s[0] >= 'a' && s[0] <= 'z') || s[n - 1] == '-') return 0;
  for (i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-')) return 0;
  return 1;
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */

/* Every catalogue row: the mapping, then the manifest of a job on it. */
static void test_gke_catalogue(void **state) {
  size_t i, k;
  (void) state;
  /* The table covers the catalogue exactly, row for row. */
  assert_int_equal(tpuci__tpu_catalogue_size(), NGKE);
  for (i = 0; i < NGKE; i++) {
    const gke_row_t *w = &gke_rows[i];
    const tpuci__tpu_type_t *row = tpuci__tpu_find_layout(w->type, w->layout);
    tpuci__gke_tpu_t g;
    char spec[512], *text;
    stream_t s;
    int j, code = 0;

    assert_non_null(row);
    assert_int_equal(row->hosts, w->hosts);
    for (k = 0; k < i; k++)
      assert_false(strcmp(gke_rows[k].type, w->type) == 0 &&
                   strcmp(gke_rows[k].layout, w->layout) == 0);
    if (w->accelerator == NULL) {
      assert_int_equal(tpuci__gke_tpu(row, &g), -1);
    } else {
      assert_int_equal(tpuci__gke_tpu(row, &g), 0);
      assert_string_equal(g.accelerator, w->accelerator);
      assert_string_equal(g.topology, w->topology);
      assert_int_equal(g.chips, w->chips);
    }

    snprintf(spec, sizeof(spec),
             "image \"img\" { ref = \"registry.example/ml:1.0\" }\n"
             "topology \"%s\" { %s%s%s }\n"
             "job \"j\" { image = \"img\", topology = \"%s\", run = \"python3 t.py\" }\n",
             w->type, tpuci__tpu_layout_count(w->type) > 1 ? "layout = \"" : "",
             tpuci__tpu_layout_count(w->type) > 1 ? w->layout : "",
             tpuci__tpu_layout_count(w->type) > 1 ? "\"" : "", w->type);
    if (w->accelerator == NULL) {
      tpuci__k8s_opts_t o;
      char *msg = export_err(spec, NULL, TPUCI_EUSAGE), *want;
      want = tpuci__printf("spec.lua:3: job 'j': topology '%s' (spec.lua:2) is a %s type, "
                           "which GKE does not offer",
                           w->type, row->generation);
      assert_memory_equal(msg, want, strlen(want));
      free(want);
      free(msg);
      /* Emulated, it exports. */
      tpuci__k8s_opts_init(&o);
      o.emulated = 1;
      text = export_ok(spec, &o);
      free(text);
      continue;
    }
    text = export_spec(spec, NULL, &code, NULL);
    assert_non_null(text);
    parse(text, &s);
    j = find_job(&s, "j");
    assert_true(j >= 0);
    assert_int_equal(count_kind(&s, "Service"), w->hosts > 1 ? 1 : 0);
    {
      yaml_document_t *d = &s.docs[j];
      yaml_node_t *r = root(&s, j), *pod = at(d, r, "spec", "template", "spec", NULL);
      char chips[16], hosts[16];
      snprintf(chips, sizeof(chips), "%d", w->chips);
      snprintf(hosts, sizeof(hosts), "%d", w->hosts);
      assert_scalar(at(d, pod, "nodeSelector", TPUCI__GKE_LABEL_ACCELERATOR, NULL),
                    w->accelerator, 1);
      assert_scalar(at(d, pod, "nodeSelector", TPUCI__GKE_LABEL_TOPOLOGY, NULL), w->topology,
                    1);
      assert_scalar(at(d, container(&s, j), "resources", "limits", "google.com/tpu", NULL),
                    chips, 1);
      assert_scalar(at(d, container(&s, j), "resources", "requests", "google.com/tpu", NULL),
                    chips, 1);
      assert_scalar(at(d, r, "spec", "completions", NULL), hosts, 0);
      assert_scalar(at(d, r, "spec", "parallelism", NULL), hosts, 0);
      assert_string_equal(str(at(d, pod, "tolerations", "#0", "key", NULL)), "google.com/tpu");
      /* Real TPUs set their TPU_* variables; no emulation switch. */
      assert_null(env(&s, j, "TPU_WORKER_ID"));
      assert_null(env(&s, j, "TPU_ACCELERATOR_TYPE"));
      assert_null(env(&s, j, "PJRT_DEVICE"));
      assert_null(env(&s, j, "CLOUD_TPU_TASK_ID"));
      assert_string_equal(env_value(&s, j, "WORLD_SIZE"), hosts);
      assert_true(w->hosts == 1 ? env_value(&s, j, "RANK") != NULL : env_indexed(&s, j, "RANK"));
    }
    stream_free(&s);
    free(text);
  }
}

static void test_names(void **state) {
  char *n, *v, longname[400];
  (void) state;

  n = tpuci__k8s_name(NULL, "tpu[python=3.11,shard=1/2]");
  assert_memory_equal(n, "tpu-python-3-11-shard-1-2-", 26);
  assert_int_equal(strlen(n), 26 + 8);
  assert_true(valid_dns1035(n, TPUCI__K8S_NAME_MAX));
  free(n);
  /* The hash is of the exact name: these differ. */
  n = tpuci__k8s_name(NULL, "a.b");
  v = tpuci__k8s_name(NULL, "a_b");
  assert_memory_equal(n, "a-b-", 4);
  assert_string_not_equal(n, v);
  free(n);
  free(v);
  /* Digits first, upper case, nothing usable, a run id. */
  n = tpuci__k8s_name(NULL, "3.10");
  assert_memory_equal(n, "tpuci-3-10-", 11);
  assert_true(valid_dns1035(n, TPUCI__K8S_NAME_MAX));
  free(n);
  n = tpuci__k8s_name(NULL, "\xc3\xa9\xc3\xa9");
  assert_memory_equal(n, "tpuci-", 6);
  assert_int_equal(strlen(n), 6 + 8);
  free(n);
  n = tpuci__k8s_name("Run 42", "Unit");
  assert_memory_equal(n, "run-42-unit-", 12);
  free(n);
  n = tpuci__k8s_name("r-", "[x]");
  assert_memory_equal(n, "r-x-", 4);
  free(n);
  memset(longname, 'x', sizeof(longname) - 1);
  longname[sizeof(longname) - 1] = '\0';
  n = tpuci__k8s_name("r", longname);
  assert_int_equal(strlen(n), TPUCI__K8S_NAME_MAX);
  assert_true(valid_dns1035(n, TPUCI__K8S_NAME_MAX));
  free(n);
  longname[50] = '-';
  n = tpuci__k8s_name("9", longname);
  assert_true(valid_dns1035(n, TPUCI__K8S_NAME_MAX));
  free(n);

  /* Label values: valid ones stay, the rest get a hash. */
  v = tpuci__k8s_label_value("unit");
  assert_string_equal(v, "unit");
  free(v);
  v = tpuci__k8s_label_value("tpu[python=3.11]");
  assert_memory_equal(v, "tpu-python-3.11-", 16);
  assert_int_equal(strlen(v), 16 + 8);
  assert_true(tpuci__k8s_label_value_valid(v));
  free(v);
  v = tpuci__k8s_label_value(longname);
  assert_true(strlen(v) <= TPUCI__K8S_LABEL_MAX);
  assert_true(tpuci__k8s_label_value_valid(v));
  free(v);
  v = tpuci__k8s_label_value("");
  assert_int_equal(strlen(v), 8);
  assert_true(tpuci__k8s_label_value_valid(v));
  free(v);
  v = tpuci__k8s_label_value("-x-");
  assert_memory_equal(v, "x-", 2);
  free(v);
  assert_false(tpuci__k8s_label_value_valid("a b"));
  assert_false(tpuci__k8s_label_value_valid("-a"));

  assert_true(tpuci__k8s_subdomain_valid("results.v1-x"));
  assert_false(tpuci__k8s_subdomain_valid("Results"));
  assert_false(tpuci__k8s_subdomain_valid("-r"));
  assert_true(tpuci__k8s_env_name_valid("TPUCI_MATRIX_X"));
  assert_true(tpuci__k8s_env_name_valid("nproc_per_node"));
  assert_false(tpuci__k8s_env_name_valid("1X"));
  assert_false(tpuci__k8s_env_name_valid("A B"));
}

/* '$' that the kubelet would expand is doubled, nothing else. */
static void test_dollar_escapes(void **state) {
  char *text = export_ok("image \"i\" { ref = \"a/b:1\" }\n"
                         "job \"d\" { image = \"i\", run = \"echo $$ $(date) $HOME $\",\n"
                         "  env = { X = \"$(HOME)$$\", Y = \"yes\", Z = \"3.10\" } }\n",
                         NULL);
  stream_t s;
  int j;
  (void) state;
  parse(text, &s);
  j = find_job(&s, "d");
  assert_true(j >= 0);
  assert_string_equal(str(at(&s.docs[j], container(&s, j), "command", "#2", NULL)),
                      "echo $$$ $$(date) $HOME $");
  assert_string_equal(env_value(&s, j, "X"), "$$(HOME)$$$");
  /* Strings a YAML 1.1 reader would take for a bool or a number stay
   * strings. */
  assert_scalar(at(&s.docs[j], env(&s, j, "Y"), "value", NULL), "yes", 1);
  assert_scalar(at(&s.docs[j], env(&s, j, "Z"), "value", NULL), "3.10", 1);
  stream_free(&s);
  free(text);
}

/* An emulated gang: the per-host variables from the completion index,
 * the hostnames those of the pods under the Service. */
static void test_emulated_gang(void **state) {
  tpuci__k8s_opts_t o;
  char *text, *name, want[256];
  stream_t s;
  int j;
  (void) state;

  tpuci__k8s_opts_init(&o);
  o.emulated = 1;
  text = export_ok("image \"i\" { ref = \"a/b:1\" }\n"
                   "topology \"v4-32\" { emulate = \"jax\" }\n"
                   "job \"g\" { image = \"i\", topology = \"v4-32\", cmd = { \"python3\", \"x.py\" },\n"
                   "  env = { RANK = \"7\" } }\n",
                   &o);
  parse(text, &s);
  j = find_job(&s, "g");
  assert_true(j >= 0);
  assert_int_equal(count_kind(&s, "Service"), 1);
  name = tpuci__k8s_name(NULL, "g");
  assert_string_equal(str(at(&s.docs[j], root(&s, j), "metadata", "name", NULL)), name);
  assert_string_equal(str(at(&s.docs[j], root(&s, j), "spec", "template", "spec", "subdomain",
                             NULL)),
                      name);
  snprintf(want, sizeof(want), "%s-0.%s,%s-1.%s,%s-2.%s,%s-3.%s", name, name, name, name, name,
           name, name, name);
  assert_string_equal(env_value(&s, j, "TPU_WORKER_HOSTNAMES"), want);
  snprintf(want, sizeof(want), "%s-0.%s:8482", name, name);
  assert_string_equal(env_value(&s, j, "JAX_COORDINATOR_ADDRESS"), want);
  assert_true(env_indexed(&s, j, "TPU_WORKER_ID"));
  assert_true(env_indexed(&s, j, "CLOUD_TPU_TASK_ID"));
  assert_true(env_indexed(&s, j, "TPUCI_JAX_PROCESS_ID"));
  assert_true(env_indexed(&s, j, "TPUCI_HOST"));
  assert_string_equal(env_value(&s, j, "TPU_ACCELERATOR_TYPE"), "v4-32");
  assert_string_equal(env_value(&s, j, "JAX_PLATFORMS"), "cpu");
  assert_string_equal(env_value(&s, j, "TPUCI_HOSTS"), "4");
  /* The job's env wins over tpuci's per-host value. */
  assert_string_equal(env_value(&s, j, "RANK"), "7");
  assert_null(at(&s.docs[j], root(&s, j), "spec", "template", "spec", "nodeSelector", NULL));
  assert_null(at(&s.docs[j], container(&s, j), "resources", NULL));
  assert_string_equal(str(at(&s.docs[j], root(&s, j), "metadata", "annotations", "tpuci.mode",
                             NULL)),
                      "emulated");
  free(name);
  stream_free(&s);
  free(text);
}

static void test_options(void **state) {
  static const char spec[] =
      "image \"i\" { ref = \"a/b:1\", pull = \"never\" }\n"
      "topology \"v6e-4\" {}\n"
      "job \"p\" { image = \"i\", topology = \"v6e-4\", workdir = \"/src\",\n"
      "  mounts = { [\".\"] = \"/src\", [\"data\"] = { target = \"/data\", readonly = true } },\n"
      "  pytest = { markers = \"tpu\", args = { \"tests/\" } },\n"
      "  timeout = \"90.5s\", grace = \"10s\", cpus = 0.5, memory = \"3m\",\n"
      "  retries = { attempts = 4, on = { \"failed\" } } }\n";
  tpuci__k8s_opts_t o;
  yaml_document_t *d;
  yaml_node_t *pod, *c;
  char *text, *msg, *name;
  stream_t s;
  int j;
  size_t k;
  (void) state;

  /* Mounts are refused unless --no-mounts. */
  msg = export_err(spec, NULL, TPUCI_EUSAGE);
  assert_memory_equal(msg, "spec.lua:3: job 'p': mounts /tmp at /src", 40);
  free(msg);

  tpuci__k8s_opts_init(&o);
  o.no_mounts = 1;
  o.run = "nightly-7";
  o.results_claim = "ci-results";
  text = export_ok(spec, &o);
  parse(text, &s);
  j = find_job(&s, "p");
  assert_true(j >= 0);
  d = &s.docs[j];
  pod = at(d, root(&s, j), "spec", "template", "spec", NULL);
  c = container(&s, j);
  name = tpuci__k8s_name("nightly-7", "p");
  assert_memory_equal(name, "nightly-7-p-", 12);
  assert_string_equal(str(at(d, root(&s, j), "metadata", "name", NULL)), name);
  assert_string_equal(str(at(d, root(&s, j), "metadata", "labels", "tpuci.run", NULL)),
                      "nightly-7");
  assert_string_equal(env_value(&s, j, "TPUCI_RUN_ID"), "nightly-7");
  assert_null(env(&s, j, "TPUCI_ATTEMPT"));
  assert_string_equal(str(at(d, root(&s, j), "metadata", "annotations", "tpuci.dropped-mounts",
                             NULL)),
                      "/src,/data");
  assert_string_equal(str(at(d, root(&s, j), "metadata", "annotations", "tpuci.retry-on",
                             NULL)),
                      "failed");
  assert_scalar(at(d, root(&s, j), "spec", "backoffLimit", NULL), "3", 0);
  assert_scalar(at(d, pod, "activeDeadlineSeconds", NULL), "91", 0);
  assert_scalar(at(d, pod, "terminationGracePeriodSeconds", NULL), "10", 0);
  assert_string_equal(str(at(d, c, "imagePullPolicy", NULL)), "Never");
  assert_string_equal(str(at(d, c, "workingDir", NULL)), "/src");
  assert_scalar(at(d, c, "resources", "limits", "cpu", NULL), "500m", 1);
  assert_scalar(at(d, c, "resources", "limits", "memory", NULL), "3Mi", 1);
  assert_string_equal(str(at(d, pod, "volumes", "#0", "persistentVolumeClaim", "claimName",
                             NULL)),
                      "ci-results");
  assert_null(at(d, pod, "volumes", "#1", NULL));
  {
    char *sub = tpuci__printf("%s/$(JOB_COMPLETION_INDEX)", name);
    assert_string_equal(str(at(d, c, "volumeMounts", "#0", "subPathExpr", NULL)), sub);
    free(sub);
  }
  /* With a claim the pytest command runs as it is, no log wrapper. */
  assert_string_equal(str(at(d, c, "command", "#0", NULL)), "python3");
  {
    yaml_node_t *cmd = at(d, c, "command", NULL);
    int junit = 0;
    for (k = 0; k < (size_t) (cmd->data.sequence.items.top - cmd->data.sequence.items.start);
         k++) {
      const char *a = str(yaml_document_get_node(d, cmd->data.sequence.items.start[k]));
      if (strcmp(a, "--junitxml=/tpuci/results/junit.xml") == 0) junit = 1;
    }
    assert_true(junit);
  }
  free(name);
  stream_free(&s);
  free(text);

  /* Without a claim: an emptyDir, and the JUnit file printed to the log. */
  o.results_claim = NULL;
  o.run = NULL;
  text = export_ok(spec, &o);
  parse(text, &s);
  j = find_job(&s, "p");
  d = &s.docs[j];
  assert_non_null(at(d, root(&s, j), "spec", "template", "spec", "volumes", "#0", "emptyDir",
                     NULL));
  assert_string_equal(str(at(d, container(&s, j), "command", "#0", NULL)), "/bin/sh");
  assert_non_null(strstr(str(at(d, container(&s, j), "command", "#2", NULL)),
                         "--- tpuci junit.xml begin ---"));
  assert_null(env(&s, j, "TPUCI_RUN_ID"));
  assert_null(at(d, root(&s, j), "metadata", "labels", "tpuci.run", NULL));
  stream_free(&s);
  free(text);
}

static void test_errors(void **state) {
  static const struct {
    const char *spec;
    int code;
    const char *msg;
  } cases[] = {
      {"job \"lint\" { run = \"ruff check .\" }\n", TPUCI_EUSAGE,
       "spec.lua:1: job 'lint': runs as a local process, and a pod runs an image"},
      {"image \"i\" { ref = \"a/b:1\" }\n"
       "job \"l\" { image = \"i\", runtime = \"local\", run = \"true\" }\n",
       TPUCI_EUSAGE, "spec.lua:2: job 'l': runs as a local process, and a pod runs an image"},
      {"image \"i\" { ref = \"a/b:1\" }\njob \"n\" { image = \"i\", run = \"true\", network = \"host\" }\n",
       TPUCI_EUSAGE, "spec.lua:2: job 'n': network = \"host\" is a Docker network mode"},
      {"image \"i\" { ref = \"a/b:1\" }\ntopology \"v5p-16\" {}\n"
       "job \"s\" { image = \"i\", topology = \"v5p-16\", pytest = { shards = 2 } }\n",
       TPUCI_EUSAGE, "spec.lua:3: job 's': pytest shards on a 2-host topology are not supported"},
  };
  tpuci__k8s_opts_t o;
  tpuci__plan_t plan;
  tpuci__err_t err = {0, NULL};
  tpuci__buf_t b;
  size_t i;
  (void) state;

  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *msg;
    msg = export_err(cases[i].spec, NULL, cases[i].code);
    if (strncmp(msg, cases[i].msg, strlen(cases[i].msg)) != 0)
      fail_msg("case %zu: got '%s', want '%s...'", i, msg, cases[i].msg);
    free(msg);
  }

  /* Nothing selected; a bad claim; an empty run id. The buffer keeps
   * what it had. */
  load(&plan, "image \"i\" { ref = \"a/b:1\" }\njob \"a\" { image = \"i\", run = \"true\" }\n");
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "keep");
  plan.instances[0].selected = 0;
  assert_int_equal(tpuci__export_kubernetes(&plan, NULL, &b, &err), TPUCI_ENOMATCH);
  assert_string_equal(err.msg, "spec.lua: no job instance selected");
  tpuci__err_clear(&err);
  plan.instances[0].selected = 1;
  tpuci__k8s_opts_init(&o);
  o.results_claim = "Not_A_Claim";
  assert_int_equal(tpuci__export_kubernetes(&plan, &o, &b, &err), TPUCI_EUSAGE);
  assert_non_null(strstr(err.msg, "cannot name a PersistentVolumeClaim"));
  tpuci__err_clear(&err);
  o.results_claim = NULL;
  o.run = "";
  assert_int_equal(tpuci__export_kubernetes(&plan, &o, &b, &err), TPUCI_EUSAGE);
  tpuci__err_clear(&err);
  assert_string_equal(b.data, "keep");
  /* With err NULL too. */
  assert_int_equal(tpuci__export_kubernetes(&plan, &o, &b, NULL), TPUCI_EUSAGE);
  tpuci__buf_free(&b);
  tpuci__plan_free(&plan);
}

/* The accelerator options a pod can have, where each goes; and what a
 * pod cannot have, refused with the key. */
static void test_accelerators(void **state) {
  static const struct {
    const char *body, *msg;
  } refused[] = {
      {"devices = { \"/dev/null:/dev/accel0\" }",
       "spec.lua:2: job 'x': devices: a pod cannot name a device of its node"},
      {"topology = \"v4-8\", devices = { \"/dev/accel*\", \"/dev/nvidia0\" }",
       "spec.lua:2: job 'x': devices: a pod cannot name a device of its node (a device "
       "plugin's resource gives them: on a GKE TPU slice google.com/tpu brings /dev/accel* and "
       "/dev/vfio, which are left out then); remove '/dev/nvidia0'"},
      {"ulimits = { nofile = 10 }", "spec.lua:2: job 'x': ulimits: a pod spec has no resource limits"},
      {"gpus = \"all\"", "spec.lua:2: job 'x': gpus = \"all\": a pod asks for a number of GPUs"},
      {"gpus = { \"0\" }", "spec.lua:2: job 'x': gpus: a pod asks for a number of GPUs (nvidia.com/gpu), not for device ids"},
      {"gpus = { count = 1, driver = \"amd\" }", "spec.lua:2: job 'x': gpus.driver = \"amd\""},
      {"gpus = { count = 1, capabilities = { \"utility\" } }", "spec.lua:2: job 'x': gpus.capabilities"},
      /* Not an accelerator option, refused the same way. */
      {"idle_timeout = \"10m\"", "spec.lua:2: job 'x': idle_timeout: a Kubernetes Job cannot stop a pod that goes quiet"},
  };
  char *text = export_ok("image \"i\" { ref = \"a/b:1\" }\n"
                         "job \"tpu\" { image = \"i\", topology = \"v4-8\", run = \"true\", "
                         "shm_size = \"16g\", privileged = true, devices = { \"/dev/accel*\" }, "
                         "cap_add = { \"SYS_RESOURCE\" }, cap_drop = { \"ALL\" }, "
                         "sysctls = { [\"net.core.somaxconn\"] = 1024 } }\n"
                         "job \"gpu\" { image = \"i\", run = \"true\", gpus = 2, ipc = \"host\" }\n",
                         NULL);
  stream_t s;
  yaml_document_t *d;
  yaml_node_t *pod, *c;
  size_t i;
  int j;
  (void) state;

  parse(text, &s);
  j = find_job(&s, "tpu");
  assert_true(j >= 0);
  d = &s.docs[j];
  pod = at(d, root(&s, j), "spec", "template", "spec", NULL);
  c = container(&s, j);
  /* shm_size: a memory emptyDir at /dev/shm, first of the volumes. */
  assert_string_equal(str(at(d, pod, "volumes", "#0", "name", NULL)), "tpuci-shm");
  assert_string_equal(str(at(d, pod, "volumes", "#0", "emptyDir", "medium", NULL)), "Memory");
  assert_scalar(at(d, pod, "volumes", "#0", "emptyDir", "sizeLimit", NULL), "16Gi", 1);
  assert_string_equal(str(at(d, c, "volumeMounts", "#0", "name", NULL)), "tpuci-shm");
  assert_string_equal(str(at(d, c, "volumeMounts", "#0", "mountPath", NULL)), "/dev/shm");
  assert_string_equal(str(at(d, c, "volumeMounts", "#1", "name", NULL)), "tpuci-results");
  /* privileged and capabilities: the container's securityContext. */
  assert_scalar(at(d, c, "securityContext", "privileged", NULL), "true", 0);
  assert_string_equal(str(at(d, c, "securityContext", "capabilities", "add", "#0", NULL)),
                      "SYS_RESOURCE");
  assert_string_equal(str(at(d, c, "securityContext", "capabilities", "drop", "#0", NULL)), "ALL");
  /* sysctls: the pod's securityContext, values as strings. */
  assert_string_equal(str(at(d, pod, "securityContext", "sysctls", "#0", "name", NULL)),
                      "net.core.somaxconn");
  assert_scalar(at(d, pod, "securityContext", "sysctls", "#0", "value", NULL), "1024", 1);
  assert_null(at(d, pod, "hostIPC", NULL));
  /* The TPU's devices come with google.com/tpu. */
  assert_string_equal(str(at(d, root(&s, j), "metadata", "annotations", "tpuci.dropped-devices", NULL)),
                      "/dev/accel*");
  assert_scalar(at(d, c, "resources", "limits", "google.com/tpu", NULL), "4", 1);

  j = find_job(&s, "gpu");
  assert_true(j >= 0);
  d = &s.docs[j];
  pod = at(d, root(&s, j), "spec", "template", "spec", NULL);
  c = container(&s, j);
  assert_scalar(at(d, pod, "hostIPC", NULL), "true", 0);
  assert_scalar(at(d, c, "resources", "limits", "nvidia.com/gpu", NULL), "2", 1);
  assert_scalar(at(d, c, "resources", "requests", "nvidia.com/gpu", NULL), "2", 1);
  assert_null(at(d, c, "securityContext", NULL));
  assert_null(at(d, pod, "securityContext", NULL));
  assert_string_equal(str(at(d, pod, "volumes", "#0", "name", NULL)), "tpuci-results");
  assert_null(at(d, root(&s, j), "metadata", "annotations", "tpuci.dropped-devices", NULL));
  stream_free(&s);
  free(text);

  for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
    char *spec = tpuci__printf("image \"i\" { ref = \"a/b:1\" }\n"
                               "job \"x\" { image = \"i\", run = \"true\", %s }\n",
                               refused[i].body);
    char *msg = export_err(spec, NULL, TPUCI_EUSAGE);
    if (strncmp(msg, refused[i].msg, strlen(refused[i].msg)) != 0)
      fail_msg("%s: got '%s', want '%s...'", refused[i].body, msg, refused[i].msg);
    free(msg);
    free(spec);
  }
}

/* A plain job and a multi-document stream: one Job each, in spec order,
 * every document explicit. */
static void test_stream(void **state) {
  char *text = export_ok("image \"i\" { ref = \"a/b:1\" }\n"
                         "job \"a\" { image = \"i\", run = \"true\", matrix = { v = { \"1\", \"2\" } } }\n"
                         "job \"b\" { image = \"i\", cmd = { \"true\" } }\n",
                         NULL);
  stream_t s;
  (void) state;
  assert_memory_equal(text, "# Generated by tpuci from spec.lua", 34);
  parse(text, &s);
  assert_int_equal(s.n, 3);
  assert_int_equal(count_kind(&s, "Service"), 0);
  assert_int_equal(find_job(&s, "a[v=1]"), 0);
  assert_int_equal(find_job(&s, "a[v=2]"), 1);
  assert_int_equal(find_job(&s, "b"), 2);
  assert_string_equal(str(at(&s.docs[0], root(&s, 0), "metadata", "annotations", "tpuci.mode",
                             NULL)),
                      "plain");
  assert_string_equal(env_value(&s, 0, "TPUCI_MATRIX_V"), "1");
  assert_null(at(&s.docs[0], root(&s, 0), "spec", "template", "spec", "activeDeadlineSeconds",
                 NULL));
  assert_scalar(at(&s.docs[0], root(&s, 0), "spec", "backoffLimit", NULL), "0", 0);
  stream_free(&s);
  free(text);
}

/* The object of `kind` whose tpuci.instance annotation is `instance`;
 * -1 when none. */
static int find_kind(stream_t *s, const char *kind, const char *instance) {
  int i;
  for (i = 0; i < s->n; i++) {
    yaml_document_t *d = &s->docs[i];
    const char *k = str(at(d, root(s, i), "kind", NULL));
    const char *inst = str(at(d, root(s, i), "metadata", "annotations", "tpuci.instance", NULL));
    if (k && strcmp(k, kind) == 0 && inst && strcmp(inst, instance) == 0) return i;
  }
  return -1;
}

/* --jobset: a gang is one JobSet (restarted whole up to the retries, its
 * hosts named as the JobSet controller names them), one host stays an
 * Indexed Job, and names fit the JobSet webhook's pod name rule. */
static void test_jobset(void **state) {
  static const char spec[] =
      "image \"i\" { ref = \"a/b:1\" }\n"
      "topology \"v4-16\" {}\n"
      "topology \"c\" { hosts = 2, chips_per_host = 4, cores_per_chip = 1, emulate = \"jax\" }\n"
      "job \"tpu\" { image = \"i\", topology = \"v4-16\", run = \"true\", retries = 3 }\n"
      "job \"one\" { image = \"i\", run = \"true\" }\n"
      "job \"a-very-long-job-name-that-goes-on-and-on-and-on-for-ever\" {\n"
      "  image = \"i\", topology = \"c\", run = \"true\" }\n";
  const char *longname = "a-very-long-job-name-that-goes-on-and-on-and-on-for-ever";
  tpuci__k8s_opts_t o;
  yaml_document_t *d;
  yaml_node_t *rj, *pod;
  char *text, want[512];
  const char *name;
  stream_t s;
  int j;
  (void) state;

  tpuci__k8s_opts_init(&o);
  text = export_ok(spec, &o);
  parse(text, &s);
  assert_int_equal(count_kind(&s, "JobSet"), 0);
  assert_int_equal(count_kind(&s, "Service"), 2);
  stream_free(&s);
  free(text);

  o.jobset = 1;
  text = export_ok(spec, &o);
  parse(text, &s);
  assert_int_equal(count_kind(&s, "JobSet"), 2);
  assert_int_equal(count_kind(&s, "Service"), 0); /* the JobSet makes it */
  assert_int_equal(count_kind(&s, "Job"), 1);
  assert_true(find_kind(&s, "Job", "one") >= 0);

  j = find_kind(&s, "JobSet", "tpu");
  assert_true(j >= 0);
  d = &s.docs[j];
  assert_scalar(at(d, root(&s, j), "apiVersion", NULL), "jobset.x-k8s.io/v1alpha2", 1);
  assert_scalar(at(d, root(&s, j), "spec", "failurePolicy", "maxRestarts", NULL), "3", 0);
  assert_scalar(at(d, root(&s, j), "spec", "network", "enableDNSHostnames", NULL), "true", 0);
  assert_scalar(at(d, root(&s, j), "metadata", "annotations",
                   "alpha.jobset.sigs.k8s.io/exclusive-topology", NULL),
                "cloud.google.com/gke-nodepool", 1);
  rj = at(d, root(&s, j), "spec", "replicatedJobs", NULL);
  assert_int_equal(rj->data.sequence.items.top - rj->data.sequence.items.start, 1);
  rj = at(d, rj, "#0", NULL);
  assert_scalar(at(d, rj, "name", NULL), "slice", 1);
  assert_scalar(at(d, rj, "replicas", NULL), "1", 0);
  assert_scalar(at(d, rj, "template", "spec", "completionMode", NULL), "Indexed", 1);
  assert_scalar(at(d, rj, "template", "spec", "completions", NULL), "2", 0);
  assert_scalar(at(d, rj, "template", "spec", "parallelism", NULL), "2", 0);
  assert_scalar(at(d, rj, "template", "spec", "backoffLimit", NULL), "0", 0);
  pod = at(d, rj, "template", "spec", "template", "spec", NULL);
  assert_null(at(d, pod, "subdomain", NULL));
  assert_scalar(at(d, pod, "nodeSelector", "cloud.google.com/gke-tpu-topology", NULL), "2x2x2", 1);
  assert_scalar(at(d, pod, "containers", "#0", "resources", "limits", "google.com/tpu", NULL),
                "4", 1);

  j = find_kind(&s, "JobSet", longname);
  assert_true(j >= 0);
  d = &s.docs[j];
  name = str(at(d, root(&s, j), "metadata", "name", NULL));
  assert_true(valid_dns1035(name, TPUCI__K8S_JOBSET_NAME_MAX));
  /* The webhook's longest pod name: <name>-slice-<job>-<pod>-abcde. */
  snprintf(want, sizeof(want), "%s-slice-0-255-abcde", name);
  assert_true(valid_dns1035(want, 63));
  assert_null(at(d, root(&s, j), "metadata", "annotations",
                 "alpha.jobset.sigs.k8s.io/exclusive-topology", NULL));
  rj = at(d, root(&s, j), "spec", "replicatedJobs", "#0", NULL);
  pod = at(d, rj, "template", "spec", "template", "spec", NULL);
  {
    yaml_node_t *list = at(d, pod, "containers", "#0", "env", NULL);
    yaml_node_item_t *it;
    const char *hosts = NULL, *master = NULL, *worker = NULL;
    for (it = list->data.sequence.items.start; it < list->data.sequence.items.top; it++) {
      yaml_node_t *e = yaml_document_get_node(d, *it);
      const char *n = str(at(d, e, "name", NULL));
      if (strcmp(n, "TPU_WORKER_HOSTNAMES") == 0) hosts = str(at(d, e, "value", NULL));
      if (strcmp(n, "MASTER_ADDR") == 0) master = str(at(d, e, "value", NULL));
      if (strcmp(n, "TPU_WORKER_ID") == 0)
        worker = str(at(d, e, "valueFrom", "fieldRef", "fieldPath", NULL));
    }
    snprintf(want, sizeof(want), "%s-slice-0-0.%s,%s-slice-0-1.%s", name, name, name, name);
    assert_non_null(hosts);
    assert_string_equal(hosts, want);
    snprintf(want, sizeof(want), "%s-slice-0-0.%s", name, name);
    assert_non_null(master);
    assert_string_equal(master, want);
    assert_non_null(worker);
    assert_string_equal(worker, TPUCI__K8S_INDEX_FIELD);
  }
  stream_free(&s);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gke_catalogue),  cmocka_unit_test(test_names),
      cmocka_unit_test(test_dollar_escapes), cmocka_unit_test(test_emulated_gang),
      cmocka_unit_test(test_options),        cmocka_unit_test(test_errors),
      cmocka_unit_test(test_stream),         cmocka_unit_test(test_accelerators),
      cmocka_unit_test(test_jobset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
