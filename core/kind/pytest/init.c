/* The starting spec of `tpuci init` (init.h): families of markers, each
 * one's job and why, written as Lua with a comment for every choice. */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "kind/pytest/init.h"

enum { TPUCI__FAM_MULTIHOST, TPUCI__FAM_TPU, TPUCI__FAM_PLAIN };

typedef struct {
  int kind;
  char *key;           /* the family: "multihost", "tpu", a first word */
  char *job;           /* its job's name */
  tpuci__strv_t names; /* its markers */
  tpuci__strv_t descs; /* what the configuration says of each ("": nothing) */
  int folded;          /* a plain family past the cap: runs with the rest */
} tpuci__fam_t;

typedef struct {
  tpuci__fam_t *items;
  size_t len;
  tpuci__strv_t skipped; /* lines that name no marker -m can select */
} tpuci__fams_t;

/* pytest's own markers: registered or not, they are no family. */
static const char *const tpuci__builtin_markers[] = {"skip",        "skipif",      "xfail",
                                                     "parametrize", "usefixtures", "filterwarnings",
                                                     "tryfirst",    "trylast",     NULL};

/* ------------------------------------------------------------------ */
/* Families                                                            */

static int tpuci__has_word(const char *lower, const char *word) {
  const char *p = lower;
  size_t n = strlen(word);
  while ((p = strstr(p, word)) != NULL) {
    if ((p == lower || p[-1] == '_' || p[-1] == '-') &&
        (p[n] == '\0' || p[n] == '_' || p[n] == '-'))
      return 1;
    p++;
  }
  return 0;
}

/* Which kind of family a marker's name says. */
static int tpuci__marker_kind(const char *name) {
  static const char *const multi[] = {"multihost",   "multinode",   "multislice",
                                      "multiworker", "distributed", NULL};
  char *lower = tpuci__strdup(name), *flat = tpuci__strdup(name), *q;
  const char *p;
  size_t k;
  int kind = TPUCI__FAM_PLAIN;
  for (q = lower; *q; q++)
    if (*q >= 'A' && *q <= 'Z') *q = (char) (*q - 'A' + 'a');
  /* Without '_' and '-': multi_host, multi-node. */
  for (p = lower, q = flat; *p; p++)
    if (*p != '_' && *p != '-') *q++ = *p;
  *q = '\0';
  for (k = 0; multi[k]; k++)
    if (strstr(flat, multi[k])) kind = TPUCI__FAM_MULTIHOST;
  if (tpuci__has_word(lower, "pod") || tpuci__has_word(lower, "dist")) kind = TPUCI__FAM_MULTIHOST;
  if (kind == TPUCI__FAM_PLAIN && strstr(lower, "tpu")) kind = TPUCI__FAM_TPU;
  free(lower);
  free(flat);
  return kind;
}

/* A plain family's key: the name's first word, in lower case. */
static char *tpuci__plain_key(const char *name) {
  size_t n = strcspn(name + (name[0] == '_'), "_-") + (name[0] == '_');
  char *key = tpuci__strndup(name, n), *q;
  for (q = key; *q; q++)
    if (*q >= 'A' && *q <= 'Z') *q = (char) (*q - 'A' + 'a');
  return key;
}

/* What the configuration says of a marker: its line after the first
 * ':', one line of at most 100 bytes (cut at a character). */
static char *tpuci__marker_desc(const char *line) {
  const char *colon = strchr(line, ':');
  size_t n;
  char *d, *q;
  if (colon == NULL) return tpuci__strdup("");
  colon++;
  while (*colon == ' ' || *colon == '\t') colon++;
  n = strlen(colon);
  if (n > 100) {
    n = 100;
    while (n > 0 && ((unsigned char) colon[n] & 0xc0) == 0x80) n--;
  }
  d = tpuci__strndup(colon, n);
  for (q = d; *q; q++)
    if ((unsigned char) *q < 0x20 || *q == 0x7f) *q = ' ';
  return d;
}

static tpuci__fam_t *tpuci__fam_get(tpuci__fams_t *f, int kind, const char *key) {
  size_t i;
  for (i = 0; i < f->len; i++)
    if (f->items[i].kind == kind && strcmp(f->items[i].key, key) == 0) return &f->items[i];
  f->items = tpuci__realloc(f->items, (f->len + 1) * sizeof(*f->items));
  memset(&f->items[f->len], 0, sizeof(*f->items));
  f->items[f->len].kind = kind;
  f->items[f->len].key = tpuci__strdup(key);
  return &f->items[f->len++];
}

static int tpuci__fams_have(const tpuci__fams_t *f, const char *name) {
  size_t i, k;
  for (i = 0; i < f->len; i++)
    for (k = 0; k < f->items[i].names.len; k++)
      if (strcmp(f->items[i].names.items[k], name) == 0) return 1;
  return 0;
}

/* The families of conf's markers, multi-host first, then TPU, then the
 * others in the order their first marker was registered. */
static void tpuci__fams_make(const tpuci__pyconf_t *conf, tpuci__fams_t *f) {
  tpuci__fams_t raw;
  size_t i, k, plain = 0;
  int kind;

  memset(&raw, 0, sizeof(raw));
  memset(f, 0, sizeof(*f));
  for (i = 0; i < conf->markers.len; i++) {
    const char *line = conf->markers.items[i];
    char *name = tpuci__pyconf_marker_name(line), *key;
    tpuci__fam_t *fam;
    int builtin = 0;
    if (name == NULL) {
      tpuci__strv_push(&f->skipped, line);
      continue;
    }
    for (k = 0; tpuci__builtin_markers[k]; k++)
      builtin |= strcmp(name, tpuci__builtin_markers[k]) == 0;
    if (builtin || tpuci__fams_have(&raw, name)) {
      free(name);
      continue;
    }
    kind = tpuci__marker_kind(name);
    key = kind == TPUCI__FAM_PLAIN ? tpuci__plain_key(name)
                                   : tpuci__strdup(kind == TPUCI__FAM_TPU ? "tpu" : "multihost");
    fam = tpuci__fam_get(&raw, kind, key);
    free(key);
    tpuci__strv_take(&fam->names, name);
    tpuci__strv_take(&fam->descs, tpuci__marker_desc(line));
  }
  /* In the order of precedence. */
  for (kind = TPUCI__FAM_MULTIHOST; kind <= TPUCI__FAM_PLAIN; kind++)
    for (i = 0; i < raw.len; i++)
      if (raw.items[i].kind == kind) {
        f->items = tpuci__realloc(f->items, (f->len + 1) * sizeof(*f->items));
        f->items[f->len] = raw.items[i];
        if (kind == TPUCI__FAM_PLAIN && ++plain > TPUCI__INIT_MAX_PLAIN)
          f->items[f->len].folded = 1;
        f->len++;
      }
  free(raw.items);
}

static void tpuci__fams_free(tpuci__fams_t *f) {
  size_t i;
  for (i = 0; i < f->len; i++) {
    free(f->items[i].key);
    free(f->items[i].job);
    tpuci__strv_free(&f->items[i].names);
    tpuci__strv_free(&f->items[i].descs);
  }
  free(f->items);
  tpuci__strv_free(&f->skipped);
}

/* Job names: a TPU family's is "tpu" when a marker has that name, else
 * its first marker's, as a multi-host family's; a plain one's its key.
 * The rest's is "unmarked" (or "rest" when folded families run there);
 * a name taken gets "-tests". */
static char *tpuci__unique(tpuci__strv_t *taken, const char *want) {
  char *name = tpuci__strdup(want);
  size_t k;
  for (;;) {
    for (k = 0; k < taken->len && strcmp(taken->items[k], name) != 0; k++) {}
    if (k == taken->len) break;
    {
      char *longer = tpuci__printf("%s-tests", name);
      free(name);
      name = longer;
    }
  }
  tpuci__strv_push(taken, name);
  return name;
}

static void tpuci__fams_name(tpuci__fams_t *f, tpuci__strv_t *taken) {
  size_t i, k;
  for (i = 0; i < f->len; i++) {
    tpuci__fam_t *fam = &f->items[i];
    const char *want = fam->names.items[0];
    if (fam->folded) continue;
    if (fam->kind == TPUCI__FAM_PLAIN) want = fam->key;
    for (k = 0; fam->kind == TPUCI__FAM_TPU && k < fam->names.len; k++)
      if (strcmp(fam->names.items[k], "tpu") == 0) want = "tpu";
    fam->job = tpuci__unique(taken, want);
  }
}

/* ------------------------------------------------------------------ */
/* Writing Lua                                                         */

/* Whether p (at a '{') starts a matrix reference as the spec's templates
 * see one (lua/prelude.lua's `template`): "{", space, "matrix", space,
 * then '.', '}' or '['. */
static int tpuci__matrix_ref_at(const char *p) {
  static const char space[] = " \t\n\v\f\r";
  if (*p++ != '{') return 0;
  p += strspn(p, space);
  if (strncmp(p, "matrix", 6) != 0) return 0;
  p += 6;
  p += strspn(p, space);
  return *p == '.' || *p == '}' || *p == '[';
}

/* Whether a spec string can hold s as its text: the templates read a
 * run of k dollars before a matrix reference as k - 1 dollars and the
 * text when k is even, as k - 1 dollars and a reference when k is odd,
 * so an even run before one is no text a spec can say. */
static int tpuci__spec_text_ok(const char *s) {
  const char *p = s;
  while ((p = strchr(p, '$')) != NULL) {
    size_t k = strspn(p, "$");
    if (k % 2 == 0 && tpuci__matrix_ref_at(p + k)) return 0;
    p += k;
  }
  return 1;
}

/* A Lua string literal of s (valid UTF-8, no NUL, tpuci__spec_text_ok):
 * a run of dollars before a matrix reference gets one more, which the
 * spec reads back as the text. */
static void tpuci__lua_str(tpuci__buf_t *b, const char *s) {
  const char *p;
  tpuci__buf_add(b, "\"", 1);
  for (p = s; *p; p++) {
    unsigned char c = (unsigned char) *p;
    if (c == '"' || c == '\\') tpuci__buf_addf(b, "\\%c", c);
    else if (c < 0x20 || c == 0x7f) tpuci__buf_addf(b, "\\%03u", c);
    else if (c == '$') {
      size_t k = strspn(p, "$");
      tpuci__buf_add(b, p, k);
      if (tpuci__matrix_ref_at(p + k)) tpuci__buf_add(b, "$", 1);
      p += k - 1;
    } else tpuci__buf_add(b, p, 1);
  }
  tpuci__buf_add(b, "\"", 1);
}

/* "a, b and c" of a list of names (at most 12, then "and N more"). */
static void tpuci__and_list(tpuci__buf_t *b, const tpuci__strv_t *v, const char *conj) {
  size_t k, shown = v->len > 12 ? 11 : v->len;
  for (k = 0; k < shown; k++)
    tpuci__buf_addf(b, "%s%s", k == 0 ? "" : k + 1 == v->len ? conj : ", ", v->items[k]);
  if (shown < v->len) tpuci__buf_addf(b, " and %zu more", v->len - shown);
}

/* The -m expression of family i: its markers, without the earlier
 * families'. */
static void tpuci__fam_expr(tpuci__buf_t *b, const tpuci__fams_t *f, size_t i) {
  const tpuci__fam_t *fam = &f->items[i];
  size_t j, k;
  if (fam->names.len > 1) tpuci__buf_add(b, "(", 1);
  for (k = 0; k < fam->names.len; k++)
    tpuci__buf_addf(b, "%s%s", k ? " or " : "", fam->names.items[k]);
  if (fam->names.len > 1) tpuci__buf_add(b, ")", 1);
  for (j = 0; j < i; j++)
    for (k = 0; k < f->items[j].names.len; k++)
      tpuci__buf_addf(b, " and not %s", f->items[j].names.items[k]);
}

/* The rest's: none of the (unfolded) families' markers; "" when none. */
static void tpuci__rest_expr(tpuci__buf_t *b, const tpuci__fams_t *f) {
  size_t i, k;
  for (i = 0; i < f->len; i++)
    for (k = 0; !f->items[i].folded && k < f->items[i].names.len; k++)
      tpuci__buf_addf(b, "%snot %s", b->len ? " and " : "", f->items[i].names.items[k]);
}

/* `  pytest   = { markers = "...", args = { ... } },` */
static void tpuci__pytest_line(tpuci__buf_t *b, const char *expr, const tpuci__pyconf_t *conf) {
  size_t k;
  tpuci__buf_adds(b, "  pytest   = {");
  if (*expr) {
    tpuci__buf_adds(b, " markers = ");
    tpuci__lua_str(b, expr);
  }
  if (conf->testpaths.len > 0) {
    tpuci__buf_adds(b, *expr ? ", args = {" : " args = {");
    for (k = 0; k < conf->testpaths.len; k++) {
      tpuci__buf_adds(b, k ? ", " : " ");
      tpuci__lua_str(b, conf->testpaths.items[k]);
    }
    tpuci__buf_adds(b, " }");
  }
  tpuci__buf_adds(b, " },\n");
}

/* A comment of a family: each marker and what the configuration says. */
static void tpuci__fam_comment(tpuci__buf_t *b, const tpuci__fam_t *fam, const char *file) {
  size_t k;
  for (k = 0; k < fam->names.len; k++) {
    if (*fam->descs.items[k])
      tpuci__buf_addf(b, "-- %s: \"%s\" (%s)\n", fam->names.items[k], fam->descs.items[k], file);
    else tpuci__buf_addf(b, "-- %s (%s)\n", fam->names.items[k], file);
  }
}

/* Prose as comment lines of at most 76 columns, broken at spaces. A
 * control character of the text (a newline in a quoted test path) is a
 * space: nothing ends a comment early and becomes Lua. */
static void tpuci__comment(tpuci__buf_t *b, const char *prose) {
  char *text = tpuci__strdup(prose), *q;
  const char *p = text;
  for (q = text; *q; q++)
    if ((unsigned char) *q < 0x20 || *q == 0x7f) *q = ' ';
  while (*p) {
    size_t n = strlen(p), cut = n;
    if (n > 73) {
      for (cut = 73; cut > 0 && p[cut] != ' '; cut--) {}
      if (cut == 0) cut = strcspn(p, " ");
    }
    tpuci__buf_adds(b, "--");
    if (cut > 0) tpuci__buf_addf(b, " %.*s", (int) cut, p);
    tpuci__buf_add(b, "\n", 1);
    p += cut;
    while (*p == ' ') p++;
  }
  free(text);
}

static void tpuci__commentf_take(tpuci__buf_t *b, char *text) {
  tpuci__comment(b, text);
  free(text);
}

/* ------------------------------------------------------------------ */
/* The spec                                                            */

static void tpuci__spec_header(tpuci__buf_t *b, const tpuci__pyconf_t *conf, const tpuci__fams_t *f,
                               const tpuci__init_opts_t *o) {
  tpuci__buf_t t;
  tpuci__strv_t names = {0};
  size_t i, k;

  tpuci__buf_init(&t);
  /* The markers in the order they were registered. */
  for (i = 0; i < conf->markers.len; i++) {
    char *name = tpuci__pyconf_marker_name(conf->markers.items[i]);
    for (k = 0; name && k < names.len && strcmp(names.items[k], name) != 0; k++) {}
    if (name && k == names.len && tpuci__fams_have(f, name)) tpuci__strv_take(&names, name);
    else free(name);
  }
  tpuci__buf_addf(&t, "%s: a starting spec for this project, written by `tpuci init` ",
                  o->spec_name);
  if (conf->file == NULL) {
    tpuci__buf_adds(&t, "without a pytest configuration (no pytest.ini, pyproject.toml with "
                        "[tool.pytest.ini_options], tox.ini with [pytest] or setup.cfg with "
                        "[tool:pytest] here): one job runs every test.");
  } else {
    tpuci__buf_addf(&t, "from %s, section %s: ", conf->file, conf->section);
    if (conf->testpaths.len > 0) {
      tpuci__buf_adds(&t, "testpaths ");
      tpuci__and_list(&t, &conf->testpaths, " and ");
    } else {
      tpuci__buf_adds(&t, "no testpaths");
    }
    tpuci__buf_adds(&t, names.len ? "; markers " : "; no markers");
    tpuci__and_list(&t, &names, " and ");
    tpuci__buf_adds(&t, ".");
  }
  tpuci__comment(b, t.data);
  t.len = 0;
  tpuci__buf_addf(&t, "Each job runs pytest in a container of the image below, on this folder "
                      "mounted read-only; together they run every test once. Change what does "
                      "not fit (docs/spec.md has every key), then:");
  tpuci__comment(b, t.data);
  tpuci__buf_addf(b, "--   tpuci plan %s    what it expands to, nothing run\n", o->spec_name);
  tpuci__buf_addf(b, "--   tpuci run %s     run it (once the image is built)\n", o->spec_name);
  if (conf->python_files.len > 0) {
    t.len = 0;
    tpuci__buf_adds(&t, "pytest collects the files named ");
    tpuci__and_list(&t, &conf->python_files, " or ");
    tpuci__buf_addf(&t, " (python_files, in %s): it reads that itself.", conf->file);
    tpuci__comment(b, t.data);
  }
  if (f->skipped.len > 0) {
    t.len = 0;
    tpuci__buf_addf(&t,
                    "%zu marker line%s of %s name%s no marker that -m can select, so no job "
                    "is made for %s.",
                    f->skipped.len, f->skipped.len == 1 ? "" : "s", conf->file,
                    f->skipped.len == 1 ? "s" : "", f->skipped.len == 1 ? "it" : "them");
    tpuci__comment(b, t.data);
  }
  tpuci__buf_add(b, "\n", 1);
  tpuci__buf_free(&t);
  tpuci__strv_free(&names);
}

static void tpuci__spec_image(tpuci__buf_t *b, const tpuci__init_opts_t *o) {
  char *ref = tpuci__printf("%s-test:latest", o->image_name);
  if (o->dockerfile) {
    tpuci__commentf_take(b, tpuci__printf("The image the tests run in: it needs python3, pytest "
                                          "and what the tests import. This folder has a "
                                          "Dockerfile: build it with `docker build -t %s .` "
                                          "(again when it changes).",
                                          ref));
  } else {
    tpuci__comment(b, "The image the tests run in: it needs python3, pytest and what the tests "
                      "import, but not the project itself: the tests import the tree mounted "
                      "at /src (a copy installed in the image would be tested instead, and "
                      "tpuci stops such an attempt). Build one, for example from a "
                      "Dockerfile in this folder holding");
    tpuci__buf_adds(b, "--   FROM python:3.12-slim\n"
                       "--   RUN pip install pytest   # and the project's dependencies\n");
    tpuci__commentf_take(b, tpuci__printf("with `docker build -t %s .`, or name an image you "
                                          "have.",
                                          ref));
  }
  tpuci__comment(b,
                 "pull = \"never\": the image is this machine's, tpuci pulls nothing (\"missing\" "
                 "pulls it from its registry when it is not here).");
  tpuci__buf_adds(b, "image \"test\" { ref = ");
  tpuci__lua_str(b, ref);
  tpuci__buf_adds(b, ", pull = \"never\" }\n\n");
  free(ref);
}

static void tpuci__spec_helper(tpuci__buf_t *b, const tpuci__pyconf_t *conf,
                               const tpuci__init_opts_t *o) {
  tpuci__commentf_take(
      b, tpuci__printf(
             "What every job shares: that image, the project mounted read-only at /src, and pytest "
             "started there%s%s%s. A job gets 30 minutes unless it says.",
             conf->file ? ", so that it reads " : "", conf->file ? conf->file : "",
             conf->file ? " as it does here" : ""));
  tpuci__buf_adds(b, "local function project(t)\n"
                     "  t.image   = \"test\"\n"
                     "  t.mounts  = { [");
  tpuci__lua_str(b, o->project);
  tpuci__buf_adds(b, "] = { target = \"/src\", readonly = true } }\n"
                     "  t.workdir = \"/src\"\n"
                     "  t.timeout = t.timeout or \"30m\"\n");
  if (o->src_layout) {
    tpuci__comment(b, "A src/ layout: the tests import the tree's packages from src/.");
    tpuci__buf_adds(b, "  t.env     = t.env or { PYTHONPATH = \"src\" }\n");
  }
  if (o->counted.len > 0) {
    size_t i;
    tpuci__comment(b, "What counts for the results cache (docs/cache.md): the project but its "
                      "docs, so a README edit reruns nothing. Name here anything else the "
                      "tests read.");
    tpuci__buf_adds(b, "  t.inputs  = t.inputs or {");
    for (i = 0; i < o->counted.len; i++) {
      char *g = strcmp(o->project, ".") == 0
                    ? tpuci__strdup(o->counted.items[i])
                    : tpuci__printf("%s/%s", o->project, o->counted.items[i]);
      tpuci__buf_adds(b, i ? ", " : " ");
      tpuci__lua_str(b, g);
      free(g);
    }
    tpuci__buf_adds(b, " }\n");
  }
  tpuci__buf_adds(b, "  return t\n"
                     "end\n\n");
}

/* The job of the tests no family takes. */
static void tpuci__spec_rest(tpuci__buf_t *b, const tpuci__pyconf_t *conf, const tpuci__fams_t *f,
                             const char *job) {
  tpuci__buf_t expr;
  tpuci__strv_t folded = {0};
  size_t i, k;

  tpuci__buf_init(&expr);
  tpuci__rest_expr(&expr, f);
  for (i = 0; i < f->len; i++)
    for (k = 0; f->items[i].folded && k < f->items[i].names.len; k++)
      tpuci__strv_push(&folded, f->items[i].names.items[k]);
  if (expr.len == 0) {
    tpuci__comment(b, "Every test. `shards = 4` in pytest splits them over 4 containers, balanced "
                      "by the durations the last run recorded.");
  } else {
    tpuci__buf_t t;
    tpuci__buf_init(&t);
    tpuci__buf_adds(&t, "The tests none of the jobs below takes");
    if (folded.len > 0) {
      tpuci__buf_adds(&t, ", those marked ");
      tpuci__and_list(&t, &folded, " or ");
      tpuci__buf_addf(&t,
                      " too (more than %d kinds of markers: give them jobs of their own if "
                      "they need it)",
                      TPUCI__INIT_MAX_PLAIN);
    }
    tpuci__buf_adds(&t, ". `shards = 4` in pytest splits them over 4 containers, balanced by the "
                        "durations the last run recorded.");
    tpuci__comment(b, t.data);
    tpuci__buf_free(&t);
  }
  tpuci__buf_adds(b, "job ");
  tpuci__lua_str(b, job);
  tpuci__buf_adds(b, " (project {\n");
  tpuci__pytest_line(b, expr.data ? expr.data : "", conf);
  tpuci__buf_adds(b, "})\n\n");
  tpuci__buf_free(&expr);
  tpuci__strv_free(&folded);
}

/* Why a family's job leaves tests out: the earlier families' markers. */
static void tpuci__but_not(tpuci__buf_t *t, const tpuci__fams_t *f, size_t i) {
  tpuci__strv_t earlier = {0};
  size_t j, k;
  for (j = 0; j < i; j++)
    for (k = 0; k < f->items[j].names.len; k++)
      tpuci__strv_push(&earlier, f->items[j].names.items[k]);
  if (earlier.len > 0) {
    tpuci__buf_adds(t, ", but not those marked ");
    tpuci__and_list(t, &earlier, " or ");
    tpuci__buf_adds(t, i > 1 ? " (their jobs run them)" : " (its job runs them)");
  }
  tpuci__strv_free(&earlier);
}

static void tpuci__spec_family(tpuci__buf_t *b, const tpuci__pyconf_t *conf, const tpuci__fams_t *f,
                               size_t i) {
  const tpuci__fam_t *fam = &f->items[i];
  tpuci__buf_t t, expr;

  tpuci__buf_init(&t);
  tpuci__buf_init(&expr);
  tpuci__fam_comment(b, fam, conf->file);
  tpuci__buf_adds(&t, "Tests marked ");
  tpuci__and_list(&t, &fam->names, " or ");
  tpuci__but_not(&t, f, i);
  if (fam->kind == TPUCI__FAM_TPU) tpuci__buf_adds(&t, ", on one emulated TPU v4 host (4 chips).");
  else if (fam->kind == TPUCI__FAM_MULTIHOST)
    tpuci__buf_adds(&t, ", on both hosts of an emulated v4-16 at once: a gang of two containers "
                        "on a network of their own, each starting the same pytest with its "
                        "host's TPU_WORKER_ID, RANK and WORLD_SIZE, and MASTER_ADDR naming host "
                        "0. A gang that could not start is tried once more.");
  else tpuci__buf_adds(&t, ".");
  tpuci__comment(b, t.data);
  tpuci__fam_expr(&expr, f, i);
  tpuci__buf_adds(b, "job ");
  tpuci__lua_str(b, fam->job);
  tpuci__buf_adds(b, " (project {\n");
  if (fam->kind == TPUCI__FAM_TPU) tpuci__buf_adds(b, "  topology = \"v4-8\",\n");
  if (fam->kind == TPUCI__FAM_MULTIHOST) tpuci__buf_adds(b, "  topology = \"v4-16\",\n");
  tpuci__pytest_line(b, expr.data, conf);
  if (fam->kind == TPUCI__FAM_MULTIHOST)
    tpuci__buf_adds(b, "  retries  = { attempts = 2, on = { \"infra\" } },\n");
  tpuci__buf_adds(b, "})\n\n");
  tpuci__buf_free(&t);
  tpuci__buf_free(&expr);
}

/* The topologies the TPU and multi-host jobs name, and why each
 * emulation. */
static void tpuci__spec_topologies(tpuci__buf_t *b, int tpu, int multi, const char *jax) {
  tpuci__comment(b, "Emulated TPU slices (docs/topology.md): on CPU, each host gets the "
                    "environment a TPU VM of that slice has (TPU_ACCELERATOR_TYPE, "
                    "TPU_WORKER_ID, ...).");
  if (jax)
    tpuci__commentf_take(b, tpuci__printf("The project names JAX (%s): emulate = \"jax\" also "
                                          "gives each host JAX's CPU devices, and a gang's hosts "
                                          "what jax.distributed needs to connect.",
                                          jax));
  else {
    if (tpu)
      tpuci__comment(b, "emulate = \"pjrt\" sets torch_xla's PJRT_DEVICE=CPU and its device "
                        "count (\"jax\" would set JAX's).");
    if (multi)
      tpuci__comment(b, "The gang's emulate = \"none\" sets no CPU client: torch.distributed's "
                        "gloo backend connects the hosts with the rendezvous variables every "
                        "host gets (with \"pjrt\" each host would be a CPU client of its own, "
                        "whose collectives never cross hosts).");
  }
  if (tpu)
    tpuci__buf_addf(b, "topology \"v4-8\"  { emulate = \"%s\" }   -- 1 host x 4 chips\n",
                    jax ? "jax" : "pjrt");
  if (multi)
    tpuci__buf_addf(b, "topology \"v4-16\" { emulate = \"%s\" }   -- 2 hosts x 4 chips\n",
                    jax ? "jax" : "none");
  tpuci__buf_add(b, "\n", 1);
}

/* The one line `tpuci init` prints: "from pytest.ini ([pytest]): 3
 * markers and 1 test path, 4 jobs: unmarked, slow, tpu on a v4-8,
 * multihost on a v4-16". */
static char *tpuci__init_summary(const tpuci__pyconf_t *conf, const tpuci__fams_t *f,
                                 const char *rest) {
  tpuci__buf_t s;
  size_t i, jobs = 1, markers = 0;
  int kind;
  tpuci__buf_init(&s);
  for (i = 0; i < f->len; i++) {
    markers += f->items[i].names.len;
    jobs += !f->items[i].folded;
  }
  if (conf->file == NULL) tpuci__buf_adds(&s, "without a pytest configuration");
  else
    tpuci__buf_addf(&s, "from %s (%s): %zu marker%s", conf->file, conf->section, markers,
                    markers == 1 ? "" : "s");
  if (conf->file != NULL && conf->testpaths.len == 0) tpuci__buf_adds(&s, " and no test paths");
  else if (conf->file != NULL)
    tpuci__buf_addf(&s, " and %zu test path%s", conf->testpaths.len,
                    conf->testpaths.len == 1 ? "" : "s");
  tpuci__buf_addf(&s, ", %zu job%s: %s", jobs, jobs == 1 ? "" : "s", rest);
  /* In the spec's order: plain, TPU, multi-host. */
  for (kind = TPUCI__FAM_PLAIN; kind >= TPUCI__FAM_MULTIHOST; kind--)
    for (i = 0; i < f->len; i++) {
      const tpuci__fam_t *fam = &f->items[i];
      if (fam->folded || fam->kind != kind) continue;
      tpuci__buf_addf(&s, ", %s%s", fam->job,
                      kind == TPUCI__FAM_TPU         ? " on a v4-8"
                      : kind == TPUCI__FAM_MULTIHOST ? " on a v4-16"
                                                     : "");
    }
  return tpuci__buf_steal(&s);
}

char *tpuci__init_spec(const tpuci__pyconf_t *given, const tpuci__init_opts_t *o, char **summary) {
  tpuci__pyconf_t view = *given;
  const tpuci__pyconf_t *conf = &view;
  tpuci__fams_t f;
  tpuci__strv_t taken = {0}, paths = {0};
  tpuci__buf_t b;
  char *rest;
  size_t i;
  size_t unwritable = 0;
  int tpu = 0, multi = 0, folded = 0;

  /* An empty test path ('' in pytest.ini) is no argument a spec takes,
   * nor one a spec string cannot hold (said below the header). */
  for (i = 0; i < given->testpaths.len; i++) {
    const char *path = given->testpaths.items[i];
    if (!tpuci__spec_text_ok(path)) unwritable++;
    else if (*path) tpuci__strv_push(&paths, path);
  }
  view.testpaths = paths;
  tpuci__fams_make(conf, &f);
  for (i = 0; i < f.len; i++) {
    tpu |= f.items[i].kind == TPUCI__FAM_TPU;
    multi |= f.items[i].kind == TPUCI__FAM_MULTIHOST;
    folded |= f.items[i].folded;
  }
  /* The families' names first: the rest's gives way. */
  tpuci__fams_name(&f, &taken);
  rest = tpuci__unique(&taken, f.len == 0 ? "tests" : folded ? "rest" : "unmarked");
  tpuci__buf_init(&b);
  tpuci__spec_header(&b, conf, &f, o);
  if (unwritable > 0) {
    char *note = tpuci__printf("%zu test path%s of %s left out: %s an even run of '$' before "
                               "'{matrix', which a spec string cannot hold as text.",
                               unwritable, unwritable == 1 ? "" : "s", conf->file,
                               unwritable == 1 ? "it has" : "each has");
    tpuci__comment(&b, note);
    tpuci__buf_add(&b, "\n", 1);
    free(note);
  }
  tpuci__spec_image(&b, o);
  tpuci__spec_helper(&b, conf, o);
  tpuci__spec_rest(&b, conf, &f, rest);
  for (i = 0; i < f.len; i++)
    if (f.items[i].kind == TPUCI__FAM_PLAIN && !f.items[i].folded)
      tpuci__spec_family(&b, conf, &f, i);
  if (tpu || multi) tpuci__spec_topologies(&b, tpu, multi, o->jax);
  for (i = 0; i < f.len; i++)
    if (f.items[i].kind == TPUCI__FAM_TPU) tpuci__spec_family(&b, conf, &f, i);
  for (i = 0; i < f.len; i++)
    if (f.items[i].kind == TPUCI__FAM_MULTIHOST) tpuci__spec_family(&b, conf, &f, i);
  /* One newline at the end. */
  while (b.len > 1 && b.data[b.len - 1] == '\n' && b.data[b.len - 2] == '\n')
    b.data[--b.len] = '\0';
  if (summary) *summary = tpuci__init_summary(conf, &f, rest);
  free(rest);
  tpuci__strv_free(&taken);
  tpuci__strv_free(&paths);
  tpuci__fams_free(&f);
  return tpuci__buf_steal(&b);
}
