/* Reading a TPU catalogue from YAML: the format of
 * topology_catalogue.yaml, whose header says what an entry holds and what
 * is checked. libyaml's document loader gives the tree and each node's
 * line and column; every refusal names them ("NAME:12:7: v4-16: ...").
 *
 * The checks: known keys only, each once; every value in range; a type's
 * name "<prefix>-N" agreeing with its layout (N counts chips or
 * TensorCores, as its generation says); its topology equal to host
 * bounds times chips-per-host bounds; every type listed once per layout,
 * the layouts of a type next to each other; and a source for every
 * value. */
#include "plan/topology.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#define TPUCI__MAX_HOSTS 256

struct tpuci__tpu_catalogue_s {
  tpuci__tpu_gen_t *gens;
  size_t ngens;
  tpuci__tpu_type_t *rows;
  size_t nrows;
  tpuci__strv_t strings; /* what gens and rows point to */
};

/* Keys of `sources`, in the order tpuci shows them. */
static const char *const tpuci__source_keys[TPUCI__TPU_NSOURCES] = {
    "layout",  "topology",    "host_bounds",    "chips_per_host_bounds", "cores_per_chip",
    "devices", "name_counts", "process_bounds", "gke_accelerator",       "machine_type"};

static const char *const tpuci__gen_keys[] = {"generation",  "cores_per_chip", "devices",
                                              "name_counts", "process_bounds", "gke_accelerator",
                                              "sources",     "types",          NULL};
static const char *const tpuci__type_keys[] = {"type",         "layout",  "topology", "host_bounds",
                                               "machine_type", "sources", NULL};

const char *tpuci__tpu_source_key(size_t i) {
  return i < TPUCI__TPU_NSOURCES ? tpuci__source_keys[i] : NULL;
}

int tpuci__tpu_chips_per_dim(int chips, int dim[3]) {
  dim[2] = 1;
  switch (chips) {
    case 1:
      dim[0] = 1;
      dim[1] = 1;
      return 0;
    case 2:
      dim[0] = 1;
      dim[1] = 2;
      return 0;
    case 4:
      dim[0] = 2;
      dim[1] = 2;
      return 0;
    case 8:
      dim[0] = 2;
      dim[1] = 4;
      return 0;
    default: return -1;
  }
}

typedef struct {
  const char *name; /* the file, for messages */
  yaml_document_t doc;
  tpuci__tpu_catalogue_t *c;
  const char *what; /* "generation v4: ", "v4-16: " or "" */
  char what_buf[96];
  const char *gen; /* the generation being read */
  tpuci__err_t *err;
} tpuci__reader_t;

/* Refuses node `n`: "NAME:LINE:COL: <what><message>". */
static int tpuci__bad(tpuci__reader_t *r, const yaml_node_t *n, const char *fmt, ...)
    TPUCI__PRINTF(3, 4);
static int tpuci__bad(tpuci__reader_t *r, const yaml_node_t *n, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return tpuci__err_set(r->err, TPUCI_ESPEC, "%s:%lu:%lu: %s%s", r->name,
                        (unsigned long) n->start_mark.line + 1,
                        (unsigned long) n->start_mark.column + 1, r->what, msg);
}

static yaml_node_t *tpuci__node(tpuci__reader_t *r, int id) {
  return yaml_document_get_node(&r->doc, id);
}

static const char *tpuci__text(const yaml_node_t *n) {
  return n->type == YAML_SCALAR_NODE ? (const char *) n->data.scalar.value : NULL;
}

static int tpuci__is_null(const yaml_node_t *n) {
  const char *s = tpuci__text(n);
  return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
         (*s == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0);
}

static const char *tpuci__keep(tpuci__reader_t *r, const char *s) {
  tpuci__strv_push(&r->c->strings, s);
  return r->c->strings.items[r->c->strings.len - 1];
}

static int tpuci__in(const char *const *list, const char *s) {
  for (; *list; list++)
    if (strcmp(*list, s) == 0) return 1;
  return 0;
}

/* A mapping whose keys are all in `keys` (a NULL-ended list), each once. */
static int tpuci__check_map(tpuci__reader_t *r, const yaml_node_t *m, const char *const *keys,
                            const char *what) {
  yaml_node_pair_t *p, *q;
  if (m->type != YAML_MAPPING_NODE) return tpuci__bad(r, m, "%s must be a mapping", what);
  for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
    yaml_node_t *k = tpuci__node(r, p->key);
    const char *s = tpuci__text(k);
    if (s == NULL || !tpuci__in(keys, s))
      return tpuci__bad(r, k, "unknown key '%s' in %s", s ? s : "(not text)", what);
    for (q = m->data.mapping.pairs.start; q < p; q++)
      if (strcmp(tpuci__text(tpuci__node(r, q->key)), s) == 0)
        return tpuci__bad(r, k, "'%s' is given twice", s);
  }
  return 0;
}

/* The value of `key` in mapping m, or NULL. */
static yaml_node_t *tpuci__get(tpuci__reader_t *r, const yaml_node_t *m, const char *key) {
  yaml_node_pair_t *p;
  for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
    const char *k = tpuci__text(tpuci__node(r, p->key));
    if (k != NULL && strcmp(k, key) == 0) return tpuci__node(r, p->value);
  }
  return NULL;
}

/* What messages start with: "<prefix><name>: " when the mapping has a
 * `key` with text, else "generation <gen>: " (or nothing before one). */
static void tpuci__about(tpuci__reader_t *r, const yaml_node_t *m, const char *key,
                         const char *prefix) {
  yaml_node_t *v = m->type == YAML_MAPPING_NODE ? tpuci__get(r, m, key) : NULL;
  const char *name = v ? tpuci__text(v) : NULL;
  if (name == NULL) {
    prefix = r->gen ? "generation " : "";
    name = r->gen;
  }
  if (name == NULL) r->what = "";
  else {
    snprintf(r->what_buf, sizeof(r->what_buf), "%s%s: ", prefix, name);
    r->what = r->what_buf;
  }
}

/* The text of a required scalar; NULL (with *err set) when it is missing,
 * not a scalar, or null. */
static const char *tpuci__need(tpuci__reader_t *r, const yaml_node_t *m, const char *key) {
  yaml_node_t *v = tpuci__get(r, m, key);
  if (v == NULL) tpuci__bad(r, m, "no '%s'", key);
  else if (tpuci__text(v) == NULL || tpuci__is_null(v)) tpuci__bad(r, v, "'%s' must be text", key);
  else return tpuci__text(v);
  return NULL;
}

/* One of `words` (NULL-ended): its index, or -1 with *err set. */
static int tpuci__word(tpuci__reader_t *r, const yaml_node_t *m, const char *key,
                       const char *const *words) {
  const char *s = tpuci__need(r, m, key);
  int i;
  if (s == NULL) return -1;
  for (i = 0; words[i]; i++)
    if (strcmp(s, words[i]) == 0) return i;
  tpuci__bad(r, tpuci__get(r, m, key), "'%s' must be %s or %s, got '%s'", key, words[0], words[1],
             s);
  return -1;
}

/* "AxB" or "AxBxC" (TPU_TOPOLOGY, a layout) or "a,b,c" (bounds): the
 * numbers, each 1..4096. Returns how many, or 0 when malformed. */
static int tpuci__dims(const char *s, char sep, int out[3]) {
  int n = 0;
  while (n < 3) {
    char *end;
    long v;
    if (*s < '1' || *s > '9') return 0;
    v = strtol(s, &end, 10);
    if (v > 4096) return 0;
    out[n++] = (int) v;
    if (*end == '\0') return n;
    if (*end != sep) return 0;
    s = end + 1;
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Sources                                                             */

/* Fills src[] from a `sources` mapping (each value non-empty text). */
static int tpuci__read_sources(tpuci__reader_t *r, const yaml_node_t *m,
                               const char *src[TPUCI__TPU_NSOURCES]) {
  yaml_node_pair_t *p;
  size_t i;
  const char *keys[TPUCI__TPU_NSOURCES + 1];
  for (i = 0; i < TPUCI__TPU_NSOURCES; i++) keys[i] = tpuci__source_keys[i];
  keys[i] = NULL;
  if (tpuci__check_map(r, m, keys, "sources")) return -1;
  for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
    yaml_node_t *v = tpuci__node(r, p->value);
    const char *k = tpuci__text(tpuci__node(r, p->key));
    if (tpuci__text(v) == NULL || *tpuci__text(v) == '\0' || tpuci__is_null(v))
      return tpuci__bad(r, v, "the source of '%s' must be text", k);
    for (i = 0; strcmp(tpuci__source_keys[i], k) != 0; i++) continue;
    src[i] = tpuci__keep(r, tpuci__text(v));
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Types                                                               */

/* The numbers of a row that come from its layout and strings. */
static int tpuci__read_shape(tpuci__reader_t *r, const yaml_node_t *m, const tpuci__tpu_gen_t *g,
                             tpuci__tpu_type_t *t) {
  int lay[3], topo[3], hb[3], cb[3], nt, i;
  long want;
  const char *dash;
  char buf[48];

  if (tpuci__dims(t->layout, 'x', lay) != 2 || lay[0] > TPUCI__MAX_HOSTS ||
      tpuci__tpu_chips_per_dim(lay[1], cb) != 0)
    return tpuci__bad(r, tpuci__get(r, m, "layout"),
                      "layout '%s' must be <hosts 1..%d>x<chips 1, 2, 4 "
                      "or 8>",
                      t->layout, TPUCI__MAX_HOSTS);
  snprintf(buf, sizeof(buf), "%dx%d", lay[0], lay[1]);
  if (strcmp(buf, t->layout) != 0)
    return tpuci__bad(r, tpuci__get(r, m, "layout"), "write layout '%s' as '%s'", t->layout, buf);
  t->hosts = lay[0];
  t->chips_per_host = lay[1];
  t->cores_per_chip = g->cores_per_chip;
  t->devices_per_host = t->chips_per_host * (g->device_per_core ? g->cores_per_chip : 1);

  dash = strrchr(t->type, '-');
  want = (long) t->hosts * t->chips_per_host * (g->name_counts_chips ? 1 : g->cores_per_chip);
  if (dash == NULL || dash == t->type || dash[1] < '1' || dash[1] > '9' ||
      strtol(dash + 1, NULL, 10) != want || strspn(dash + 1, "0123456789") != strlen(dash + 1))
    return tpuci__bad(r, tpuci__get(r, m, "type"),
                      "a layout of %s has %ld %s: the name must be "
                      "<prefix>-%ld",
                      t->layout, want, g->name_counts_chips ? "chips" : "TensorCores", want);

  nt = tpuci__dims(t->topology, 'x', topo);
  if (nt < 2)
    return tpuci__bad(r, tpuci__get(r, m, "topology"), "topology '%s' must be AxB or AxBxC",
                      t->topology);
  if (nt == 2) topo[2] = 1;
  if (tpuci__dims(t->host_bounds, ',', hb) != 3)
    return tpuci__bad(r, tpuci__get(r, m, "host_bounds"), "host_bounds '%s' must be a,b,c",
                      t->host_bounds);
  if (hb[0] * hb[1] * hb[2] != t->hosts)
    return tpuci__bad(r, tpuci__get(r, m, "host_bounds"),
                      "host_bounds %s make %d host%s, layout %s has %d", t->host_bounds,
                      hb[0] * hb[1] * hb[2], hb[0] * hb[1] * hb[2] == 1 ? "" : "s", t->layout,
                      t->hosts);
  for (i = 0; i < 3; i++)
    if (topo[i] != hb[i] * cb[i])
      return tpuci__bad(r, tpuci__get(r, m, "topology"),
                        "topology %s is not host bounds %s x chips per host "
                        "bounds %d,%d,%d",
                        t->topology, t->host_bounds, cb[0], cb[1], cb[2]);
  snprintf(buf, sizeof(buf), "%d,%d,%d", cb[0], cb[1], cb[2]);
  t->chips_per_host_bounds = tpuci__keep(r, buf);
  return 0;
}

/* Type names are unique but for the layouts of one type, which are next
 * to each other; the first is the default. `t` is the row after the last
 * one read. */
static int tpuci__check_row(tpuci__reader_t *r, const yaml_node_t *m, tpuci__tpu_type_t *t) {
  const tpuci__tpu_catalogue_t *c = r->c;
  const tpuci__tpu_type_t *prev = c->nrows ? &c->rows[c->nrows - 1] : NULL;
  size_t j;
  t->is_default_layout = prev == NULL || strcmp(prev->type, t->type) != 0;
  for (j = 0; j < c->nrows; j++) {
    const tpuci__tpu_type_t *o = &c->rows[j];
    if (strcmp(o->type, t->type) != 0) continue;
    if (strcmp(o->layout, t->layout) == 0)
      return tpuci__bad(r, m, "layout %s is listed twice", t->layout);
    if (t->is_default_layout)
      return tpuci__bad(r, m, "the layouts of %s must be next to each other", t->type);
  }
  return 0;
}

static int tpuci__read_type(tpuci__reader_t *r, const yaml_node_t *m, const tpuci__tpu_gen_t *g,
                            const char *const gen_src[TPUCI__TPU_NSOURCES], tpuci__tpu_type_t *t) {
  const char *s;
  yaml_node_t *v;
  size_t i;

  tpuci__about(r, m, "type", "");
  if (tpuci__check_map(r, m, tpuci__type_keys, "a type")) return -1;
  if ((s = tpuci__need(r, m, "type")) == NULL) return -1;
  t->type = tpuci__keep(r, s);
  t->generation = g->name;
  t->gen = g;
  t->gke_accelerator = g->gke_accelerator;
  if ((s = tpuci__need(r, m, "layout")) == NULL) return -1;
  t->layout = tpuci__keep(r, s);
  if ((s = tpuci__need(r, m, "topology")) == NULL) return -1;
  t->topology = tpuci__keep(r, s);
  if ((s = tpuci__need(r, m, "host_bounds")) == NULL) return -1;
  t->host_bounds = tpuci__keep(r, s);
  v = tpuci__get(r, m, "machine_type");
  if (g->gke_accelerator == NULL && v != NULL)
    return tpuci__bad(r, v,
                      "a machine_type needs the generation's "
                      "gke_accelerator");
  if (g->gke_accelerator != NULL) {
    if ((s = tpuci__need(r, m, "machine_type")) == NULL) return -1;
    t->machine_type = tpuci__keep(r, s);
  }
  if (tpuci__read_shape(r, m, g, t)) return -1;
  if (tpuci__check_row(r, m, t)) return -1;

  for (i = 0; i < TPUCI__TPU_NSOURCES; i++) t->sources[i] = gen_src[i];
  v = tpuci__get(r, m, "sources");
  if (v != NULL && tpuci__read_sources(r, v, t->sources)) return -1;
  for (i = 0; i < TPUCI__TPU_NSOURCES; i++) {
    if (t->machine_type == NULL && strcmp(tpuci__source_keys[i], "machine_type") == 0) {
      t->sources[i] = NULL;
      continue;
    }
    if (t->sources[i] == NULL)
      return tpuci__bad(r, m,
                        "no source for '%s' (give one in the "
                        "generation's or the type's sources)",
                        tpuci__source_keys[i]);
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Generations                                                         */

static int tpuci__read_gen(tpuci__reader_t *r, const yaml_node_t *m, tpuci__tpu_gen_t *g) {
  static const char *const devices[] = {"per_chip", "per_core", NULL};
  static const char *const counts[] = {"cores", "chips", NULL};
  static const char *const bools[] = {"false", "true", NULL};
  const char *src[TPUCI__TPU_NSOURCES] = {NULL};
  yaml_node_t *v, *types;
  yaml_node_item_t *it;
  const char *s;
  int w;

  r->gen = NULL;
  tpuci__about(r, m, "generation", "generation ");
  if (tpuci__check_map(r, m, tpuci__gen_keys, "a generation")) return -1;
  if ((s = tpuci__need(r, m, "generation")) == NULL) return -1;
  g->name = tpuci__keep(r, s);
  r->gen = g->name;
  if ((s = tpuci__need(r, m, "cores_per_chip")) == NULL) return -1;
  if (strcmp(s, "1") != 0 && strcmp(s, "2") != 0)
    return tpuci__bad(r, tpuci__get(r, m, "cores_per_chip"),
                      "cores_per_chip must be 1 or 2, got '%s'", s);
  g->cores_per_chip = *s - '0';
  if ((w = tpuci__word(r, m, "devices", devices)) < 0) return -1;
  g->device_per_core = w;
  if ((w = tpuci__word(r, m, "name_counts", counts)) < 0) return -1;
  g->name_counts_chips = w;
  if ((w = tpuci__word(r, m, "process_bounds", bools)) < 0) return -1;
  g->process_bounds = w;
  v = tpuci__get(r, m, "gke_accelerator");
  if (v == NULL)
    return tpuci__bad(r, m,
                      "no 'gke_accelerator' (~ when GKE does not "
                      "offer it)");
  if (!tpuci__is_null(v)) {
    if ((s = tpuci__need(r, m, "gke_accelerator")) == NULL) return -1;
    g->gke_accelerator = tpuci__keep(r, s);
  }
  if ((v = tpuci__get(r, m, "sources")) == NULL) return tpuci__bad(r, m, "no 'sources'");
  if (tpuci__read_sources(r, v, src)) return -1;

  types = tpuci__get(r, m, "types");
  if (types == NULL || types->type != YAML_SEQUENCE_NODE ||
      types->data.sequence.items.start == types->data.sequence.items.top)
    return tpuci__bad(r, types ? types : m,
                      "'types' must be a list of "
                      "types");
  for (it = types->data.sequence.items.start; it < types->data.sequence.items.top; it++) {
    tpuci__tpu_type_t *t = &r->c->rows[r->c->nrows];
    if (tpuci__read_type(r, tpuci__node(r, *it), g, src, t)) return -1;
    r->c->nrows++;
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* The file                                                            */

static int tpuci__read_root(tpuci__reader_t *r, yaml_node_t *root) {
  yaml_node_item_t *it;
  size_t n = 0;
  if (root->type != YAML_SEQUENCE_NODE ||
      root->data.sequence.items.start == root->data.sequence.items.top)
    return tpuci__bad(r, root,
                      "the catalogue must be a list of "
                      "generations");
  /* Room for every row first: rows point at their generation. */
  for (it = root->data.sequence.items.start; it < root->data.sequence.items.top; it++) {
    yaml_node_t *g = tpuci__node(r, *it), *types;
    if (g->type != YAML_MAPPING_NODE) return tpuci__bad(r, g, "a generation must be a mapping");
    types = tpuci__get(r, g, "types");
    if (types != NULL && types->type == YAML_SEQUENCE_NODE)
      n += (size_t) (types->data.sequence.items.top - types->data.sequence.items.start);
  }
  r->c->gens =
      tpuci__calloc((size_t) (root->data.sequence.items.top - root->data.sequence.items.start),
                    sizeof(*r->c->gens));
  r->c->rows = tpuci__calloc(n, sizeof(*r->c->rows));
  for (it = root->data.sequence.items.start; it < root->data.sequence.items.top; it++) {
    size_t j;
    tpuci__tpu_gen_t *g = &r->c->gens[r->c->ngens];
    if (tpuci__read_gen(r, tpuci__node(r, *it), g)) return -1;
    r->what = "";
    for (j = 0; j < r->c->ngens; j++)
      if (strcmp(r->c->gens[j].name, g->name) == 0)
        return tpuci__bad(r, tpuci__node(r, *it),
                          "generation %s is listed "
                          "twice",
                          g->name);
    r->c->ngens++;
  }
  return 0;
}

int tpuci__tpu_catalogue_read(const char *name, const char *text, size_t len,
                              tpuci__tpu_catalogue_t **out, tpuci__err_t *err) {
  tpuci__reader_t r;
  yaml_parser_t parser;
  yaml_document_t next;
  yaml_node_t *root;
  int rc = TPUCI_ESPEC;

  *out = NULL;
  memset(&r, 0, sizeof(r));
  r.name = name;
  r.what = "";
  r.err = err;
  r.c = tpuci__calloc(1, sizeof(*r.c));
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, (const unsigned char *) text, len);
  if (!yaml_parser_load(&parser, &r.doc)) {
    tpuci__err_set(err, TPUCI_ESPEC, "%s:%lu:%lu: %s%s%s", name,
                   (unsigned long) parser.problem_mark.line + 1,
                   (unsigned long) parser.problem_mark.column + 1,
                   parser.problem ? parser.problem : "not YAML", parser.context ? " " : "",
                   parser.context ? parser.context : "");
    yaml_parser_delete(&parser);
    tpuci__tpu_catalogue_free(r.c);
    return TPUCI_ESPEC;
  }
  root = yaml_document_get_root_node(&r.doc);
  if (root == NULL) {
    tpuci__err_set(err, TPUCI_ESPEC, "%s:1:1: the catalogue is empty", name);
  } else if (tpuci__read_root(&r, root) == 0) {
    /* One document only. */
    if (!yaml_parser_load(&parser, &next)) {
      tpuci__err_set(err, TPUCI_ESPEC, "%s:%lu:%lu: %s", name,
                     (unsigned long) parser.problem_mark.line + 1,
                     (unsigned long) parser.problem_mark.column + 1,
                     parser.problem ? parser.problem : "not YAML");
    } else {
      if (yaml_document_get_root_node(&next) != NULL)
        tpuci__err_set(err, TPUCI_ESPEC, "%s:%lu:1: a second document", name,
                       (unsigned long) next.start_mark.line + 1);
      else rc = 0;
      yaml_document_delete(&next);
    }
  }
  yaml_document_delete(&r.doc);
  yaml_parser_delete(&parser);
  if (rc != 0) {
    tpuci__tpu_catalogue_free(r.c);
    return rc;
  }
  *out = r.c;
  return 0;
}

void tpuci__tpu_catalogue_free(tpuci__tpu_catalogue_t *c) {
  if (c == NULL) return;
  free(c->gens);
  free(c->rows);
  tpuci__strv_free(&c->strings);
  free(c);
}

size_t tpuci__tpu_catalogue_rows(const tpuci__tpu_catalogue_t *c) { return c->nrows; }

const tpuci__tpu_type_t *tpuci__tpu_catalogue_row(const tpuci__tpu_catalogue_t *c, size_t i) {
  return i < c->nrows ? &c->rows[i] : NULL;
}
