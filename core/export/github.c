/* The GitHub Actions workflow of a spec (see export_github.h and
 * docs/github.md), written event by event with libyaml's emitter so that
 * every string is quoted as it must be. libyaml returns 1 on success and
 * 0 on failure, and yaml_emitter_emit() frees its event either way; the
 * helpers below keep that convention and tpuci__export_github() turns it
 * into 0 or a negative code. */
#include "export/github.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

/* What building tpuci needs on ubuntu-latest (tests are not built, so
 * cmocka is not needed). */
static const char tpuci__gh_deps[] =
    "build-essential cmake pkg-config git liblua5.4-dev libuv1-dev libyaml-dev "
    "libcurl4-openssl-dev libjansson-dev libexpat1-dev";

/* The files `tpuci run` writes and the workflow uploads. */
static const char tpuci__gh_reports[] =
    "--report-json tpuci-report.json --report-yaml tpuci-report.yaml "
    "--junit tpuci-junit.xml";
static const char tpuci__gh_paths[] =
    "tpuci-report.json\n"
    "tpuci-report.yaml\n"
    "tpuci-junit.xml\n"
    ".tpuci/runs/\n"
    "!.tpuci/runs/latest/**\n";

void tpuci__export_opts_init(tpuci__export_opts_t *opts) {
  memset(opts, 0, sizeof(*opts));
}

/* ------------------------------------------------------------------ */
/* Names                                                               */

char *tpuci__github_id(const char *name) {
  tpuci__buf_t b;
  const char *p;
  int dropped = 0;

  tpuci__buf_init(&b);
  for (p = name ? name : ""; *p && b.len < 64; p++) {
    char c = *p;
    int letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(c >= '0' && c <= '9') && c != '-') {
      /* A run of other characters (a multi-byte one included) becomes
       * one '-' between the parts it separates. */
      dropped = 1;
      continue;
    }
    if (b.len == 0 && !letter) tpuci__buf_add(&b, "_", 1);
    else if (dropped && b.len > 0) tpuci__buf_add(&b, "-", 1);
    tpuci__buf_add(&b, &c, 1);
    dropped = 0;
  }
  if (b.len == 0) tpuci__buf_adds(&b, "_");
  if (b.len > 64) {
    b.len = 64;
    b.data[64] = '\0';
  }
  return tpuci__buf_steal(&b);
}

/* The --only glob that matches exactly `name`: glob characters get a
 * backslash (fnmatch without FNM_NOESCAPE). Job names from a spec have
 * none, so this is the name itself. */
static char *tpuci__gh_glob_quote(const char *name) {
  tpuci__buf_t b;
  const char *p;
  tpuci__buf_init(&b);
  for (p = name; *p; p++) {
    if (strchr("*?[]\\", *p)) tpuci__buf_add(&b, "\\", 1);
    tpuci__buf_add(&b, p, 1);
  }
  return tpuci__buf_steal(&b);
}

static int tpuci__utf8_valid(const char *s) {
  const unsigned char *p = (const unsigned char *) s, *end = p + strlen(s);
  while (p < end) {
    size_t n = *p < 0x80 ? 1 : tpuci__utf8_len(p, end);
    if (n == 0) return 0;
    p += n;
  }
  return 1;
}

/* ------------------------------------------------------------------ */
/* Emitting (the helpers are shared: see export_github.h)              */

int tpuci__gh_write(void *data, unsigned char *buf, size_t size) {
  tpuci__buf_add(data, (const char *) buf, size);
  return 1;
}


int tpuci__gh_scalar(yaml_emitter_t *e, const char *s,
                     yaml_scalar_style_t style) {
  yaml_event_t ev;
  size_t len = strlen(s);
  if (len > INT_MAX) return 0;
  if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *) s, (int) len,
                                    1, 1, style))
    return 0;
  return yaml_emitter_emit(e, &ev);
}

/* A string: multi-line text as a literal block, ambiguous text in double
 * quotes, the rest plain when libyaml allows it. */
int tpuci__gh_str(yaml_emitter_t *e, const char *s) {
  yaml_scalar_style_t style = strchr(s, '\n') ? YAML_LITERAL_SCALAR_STYLE
                              : tpuci__yaml_ambiguous(s) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
                                                       : YAML_PLAIN_SCALAR_STYLE;
  return tpuci__gh_scalar(e, s, style);
}

/* A scalar written as it is: keys and booleans such as "false". */
int tpuci__gh_plain(yaml_emitter_t *e, const char *s) {
  return tpuci__gh_scalar(e, s, YAML_PLAIN_SCALAR_STYLE);
}

int tpuci__gh_map(yaml_emitter_t *e) {
  yaml_event_t ev;
  if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE))
    return 0;
  return yaml_emitter_emit(e, &ev);
}

int tpuci__gh_map_end(yaml_emitter_t *e) {
  yaml_event_t ev;
  if (!yaml_mapping_end_event_initialize(&ev)) return 0;
  return yaml_emitter_emit(e, &ev);
}

int tpuci__gh_seq(yaml_emitter_t *e, yaml_sequence_style_t style) {
  yaml_event_t ev;
  if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, style)) return 0;
  return yaml_emitter_emit(e, &ev);
}

int tpuci__gh_seq_end(yaml_emitter_t *e) {
  yaml_event_t ev;
  if (!yaml_sequence_end_event_initialize(&ev)) return 0;
  return yaml_emitter_emit(e, &ev);
}

/* key: value, the key plain, the value a string. */
int tpuci__gh_kv(yaml_emitter_t *e, const char *key, const char *value) {
  return tpuci__gh_plain(e, key) && tpuci__gh_str(e, value);
}

/* ------------------------------------------------------------------ */
/* The workflow                                                        */

typedef struct {
  const char *spec;
  const char *url;
  const char *ref;
  const char *name;
  int per_job;
  tpuci__strv_t jobs;   /* job names, first-seen order */
  tpuci__strv_t globs;  /* the --only glob of each */
  tpuci__strv_t slugs;  /* a unique id for each, for artifact names */
} tpuci__gh_doc_t;

/* - name: NAME
 *   uses: ACTION           (or run: SCRIPT) */
static int tpuci__gh_step_start(yaml_emitter_t *e, const char *name) {
  return tpuci__gh_map(e) && tpuci__gh_kv(e, "name", name);
}

static int tpuci__gh_steps(yaml_emitter_t *e, const tpuci__gh_doc_t *d) {
  tpuci__buf_t s;
  int ok;

  tpuci__buf_init(&s);
  ok = tpuci__gh_plain(e, "steps") && tpuci__gh_seq(e, YAML_BLOCK_SEQUENCE_STYLE) &&
       tpuci__gh_step_start(e, "Check out the repository") &&
       tpuci__gh_kv(e, "uses", "actions/checkout@v4") && tpuci__gh_map_end(e);

  tpuci__buf_addf(&s, "sudo apt-get update\n"
                      "sudo apt-get install -y --no-install-recommends %s\n",
                  tpuci__gh_deps);
  ok = ok && tpuci__gh_step_start(e, "Install tpuci's build dependencies") &&
       tpuci__gh_kv(e, "run", s.data) && tpuci__gh_map_end(e);

  /* The source and ref go through the environment, never into the
   * script's text, so no value can change what the shell runs. A fetch by
   * ref works for branches, tags and commits alike. */
  s.len = 0;
  tpuci__buf_adds(&s, "git init -q tpuci\n"
                      "git -C tpuci fetch -q --depth 1 \"$TPUCI_SOURCE\" \"$TPUCI_REF\"\n"
                      "git -C tpuci checkout -q FETCH_HEAD\n"
                      "cmake -S tpuci -B tpuci/build -DTPUCI_BUILD_TESTS=OFF\n"
                      "cmake --build tpuci/build -j\n"
                      "sudo cmake --install tpuci/build\n");
  ok = ok && tpuci__gh_step_start(e, "Build and install tpuci") &&
       tpuci__gh_kv(e, "working-directory", "${{ runner.temp }}") &&
       tpuci__gh_plain(e, "env") && tpuci__gh_map(e) &&
       tpuci__gh_kv(e, "TPUCI_SOURCE", d->url) && tpuci__gh_kv(e, "TPUCI_REF", d->ref) &&
       tpuci__gh_map_end(e) && tpuci__gh_kv(e, "run", s.data) && tpuci__gh_map_end(e);

  s.len = 0;
  tpuci__buf_addf(&s, "tpuci run %s%s \"$TPUCI_SPEC\"",
                  d->per_job ? "--only \"$TPUCI_ONLY\" " : "", tpuci__gh_reports);
  ok = ok && tpuci__gh_step_start(e, "Run the spec") && tpuci__gh_plain(e, "env") &&
       tpuci__gh_map(e) && tpuci__gh_kv(e, "TPUCI_SPEC", d->spec) &&
       (!d->per_job || tpuci__gh_kv(e, "TPUCI_ONLY", "${{ matrix.only }}")) &&
       tpuci__gh_map_end(e) && tpuci__gh_kv(e, "run", s.data) && tpuci__gh_map_end(e);

  /* Uploaded whatever happened; .tpuci is hidden, which upload-artifact
   * skips unless told, and `latest` only links to the run. */
  ok = ok && tpuci__gh_step_start(e, "Upload the reports and the run folder") &&
       tpuci__gh_kv(e, "if", "always()") &&
       tpuci__gh_kv(e, "uses", "actions/upload-artifact@v4") &&
       tpuci__gh_plain(e, "with") && tpuci__gh_map(e) &&
       tpuci__gh_kv(e, "name", d->per_job ? "tpuci-${{ matrix.slug }}" : "tpuci-reports") &&
       tpuci__gh_kv(e, "path", tpuci__gh_paths) &&
       tpuci__gh_plain(e, "include-hidden-files") && tpuci__gh_plain(e, "true") &&
       tpuci__gh_kv(e, "if-no-files-found", "warn") && tpuci__gh_map_end(e) &&
       tpuci__gh_map_end(e);

  ok = ok && tpuci__gh_seq_end(e);
  tpuci__buf_free(&s);
  return ok;
}

static int tpuci__gh_matrix(yaml_emitter_t *e, const tpuci__gh_doc_t *d) {
  size_t i;
  int ok = tpuci__gh_plain(e, "strategy") && tpuci__gh_map(e) &&
           tpuci__gh_plain(e, "fail-fast") && tpuci__gh_plain(e, "false") &&
           tpuci__gh_plain(e, "matrix") && tpuci__gh_map(e) &&
           tpuci__gh_plain(e, "include") && tpuci__gh_seq(e, YAML_BLOCK_SEQUENCE_STYLE);
  for (i = 0; ok && i < d->jobs.len; i++)
    ok = tpuci__gh_map(e) && tpuci__gh_kv(e, "job", d->jobs.items[i]) &&
         tpuci__gh_kv(e, "only", d->globs.items[i]) &&
         tpuci__gh_kv(e, "slug", d->slugs.items[i]) && tpuci__gh_map_end(e);
  return ok && tpuci__gh_seq_end(e) && tpuci__gh_map_end(e) && tpuci__gh_map_end(e);
}

static int tpuci__gh_document(yaml_emitter_t *e, const tpuci__gh_doc_t *d) {
  yaml_event_t ev;
  int ok;

  if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) ||
      !yaml_emitter_emit(e, &ev) ||
      !yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) ||
      !yaml_emitter_emit(e, &ev))
    return 0;
  /* `on` is a boolean to YAML 1.1 readers; quoted, it is the string
   * GitHub wants to every reader. */
  ok = tpuci__gh_map(e) && tpuci__gh_kv(e, "name", d->name) &&
       tpuci__gh_scalar(e, "on", YAML_DOUBLE_QUOTED_SCALAR_STYLE) &&
       tpuci__gh_seq(e, YAML_FLOW_SEQUENCE_STYLE) && tpuci__gh_plain(e, "push") &&
       tpuci__gh_plain(e, "pull_request") && tpuci__gh_seq_end(e) &&
       tpuci__gh_plain(e, "permissions") && tpuci__gh_map(e) &&
       tpuci__gh_kv(e, "contents", "read") && tpuci__gh_map_end(e) &&
       tpuci__gh_plain(e, "jobs") && tpuci__gh_map(e) && tpuci__gh_plain(e, "tpuci") &&
       tpuci__gh_map(e) &&
       tpuci__gh_kv(e, "name", d->per_job ? "${{ matrix.job }}" : "tpuci") &&
       tpuci__gh_kv(e, "runs-on", "ubuntu-latest") &&
       (!d->per_job || tpuci__gh_matrix(e, d)) && tpuci__gh_steps(e, d) &&
       tpuci__gh_map_end(e) && tpuci__gh_map_end(e) && tpuci__gh_map_end(e);
  return ok && yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(e, &ev) &&
         yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev) &&
         yaml_emitter_flush(e);
}

/* Gathers the plan's job names with their globs and unique ids. */
static void tpuci__gh_collect(tpuci__gh_doc_t *d, const tpuci__plan_t *plan) {
  size_t i, k;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *in = &plan->instances[i];
    const char *job = in->job ? in->job : in->name;
    char *slug;
    int n = 1;
    if (job == NULL) continue;
    for (k = 0; k < d->jobs.len; k++)
      if (strcmp(d->jobs.items[k], job) == 0) break;
    if (k < d->jobs.len) continue;
    tpuci__strv_push(&d->jobs, job);
    tpuci__strv_take(&d->globs, tpuci__gh_glob_quote(job));
    /* Names that differ only in dropped characters ("a/b", "a:b") get
     * "-2", "-3"... */
    slug = tpuci__github_id(job);
    for (;;) {
      for (k = 0; k < d->slugs.len; k++)
        if (strcmp(d->slugs.items[k], slug) == 0) break;
      if (k == d->slugs.len) break;
      {
        char *base = tpuci__github_id(job), *next;
        next = tpuci__printf("%s-%d", base, ++n);
        free(base);
        free(slug);
        slug = next;
      }
    }
    tpuci__strv_take(&d->slugs, slug);
  }
}

static void tpuci__gh_doc_free(tpuci__gh_doc_t *d) {
  tpuci__strv_free(&d->jobs);
  tpuci__strv_free(&d->globs);
  tpuci__strv_free(&d->slugs);
}

static int tpuci__gh_fail(tpuci__err_t *err, int code, const char *msg) {
  if (err) tpuci__err_set(err, code, "%s", msg);
  return code;
}

int tpuci__export_github(const tpuci__plan_t *plan,
                         const tpuci__export_opts_t *opts, tpuci__buf_t *out,
                         tpuci__err_t *err) {
  tpuci__export_opts_t defaults;
  tpuci__gh_doc_t d;
  yaml_emitter_t e;
  size_t start = out->len, i;
  const char *p;
  char *msg = NULL;
  int r = 0;

  if (opts == NULL) {
    tpuci__export_opts_init(&defaults);
    opts = &defaults;
  }
  memset(&d, 0, sizeof(d));
  d.spec = opts->spec ? opts->spec : plan->spec_path;
  d.url = opts->source_url ? opts->source_url : TPUCI__GITHUB_SOURCE_URL;
  d.ref = opts->source_ref ? opts->source_ref : TPUCI__GITHUB_SOURCE_REF;
  d.name = opts->name ? opts->name : "tpuci";
  d.per_job = opts->per_job != 0;

  if (d.spec == NULL || *d.spec == '\0')
    return tpuci__gh_fail(err, TPUCI_EUSAGE,
                          "the spec's path is unknown: give it relative to the "
                          "repository's root");
  if (!tpuci__utf8_valid(d.spec) || !tpuci__utf8_valid(d.url) ||
      !tpuci__utf8_valid(d.ref) || !tpuci__utf8_valid(d.name))
    return tpuci__gh_fail(err, TPUCI_EUSAGE,
                          "the spec's path, the workflow's name and tpuci's source "
                          "must be valid UTF-8");
  if (d.spec[0] == '/') {
    msg = tpuci__printf("%s: the workflow runs the spec from the repository's root: "
                        "give its path relative to the root", d.spec);
    r = tpuci__gh_fail(err, TPUCI_EUSAGE, msg);
    free(msg);
    return r;
  }
  tpuci__gh_collect(&d, plan);
  for (i = 0; i < d.jobs.len; i++) {
    if (!tpuci__utf8_valid(d.jobs.items[i])) {
      msg = tpuci__printf("%s: the name of job %zu (of %zu) is not valid UTF-8", d.spec,
                          i + 1, d.jobs.len);
      r = TPUCI_EUSAGE;
      goto done;
    }
  }
  if (d.per_job && d.jobs.len == 0) {
    msg = tpuci__printf("%s: no job to export: the spec declares none", d.spec);
    r = TPUCI_EUSAGE;
    goto done;
  }
  if (d.per_job && d.jobs.len > TPUCI__GITHUB_MATRIX_MAX) {
    msg = tpuci__printf("%s: %zu jobs exceed GitHub's limit of %d matrix entries per "
                        "workflow job; export without per-job to run them all in one "
                        "workflow job, or split the spec (%zu too many)",
                        d.spec, d.jobs.len, TPUCI__GITHUB_MATRIX_MAX,
                        d.jobs.len - TPUCI__GITHUB_MATRIX_MAX);
    r = TPUCI_EUSAGE;
    goto done;
  }

  /* A comment cannot be an event: it goes in front of the stream. Bytes
   * that would end it early become '?'. */
  tpuci__buf_adds(out, "# Generated by tpuci from ");
  for (p = d.spec; *p; p++)
    tpuci__buf_add(out, (unsigned char) *p < 0x20 || *p == 0x7F ? "?" : p, 1);
  tpuci__buf_adds(out, ". Change the spec and export again\n"
                       "# (tpuci export github) rather than editing this file.\n");

  memset(&e, 0, sizeof(e));
  if (!yaml_emitter_initialize(&e)) {
    msg = tpuci__strdup("cannot start the YAML emitter");
    r = TPUCI_ENOMEM;
    goto done;
  }
  yaml_emitter_set_output(&e, tpuci__gh_write, out);
  yaml_emitter_set_unicode(&e, 1);
  yaml_emitter_set_indent(&e, 2);
  /* No folding: commands stay on their lines. */
  yaml_emitter_set_width(&e, -1);
  if (!tpuci__gh_document(&e, &d)) {
    msg = tpuci__printf("%s: cannot write the workflow: %s", d.spec,
                        e.problem ? e.problem : "out of memory");
    r = e.error == YAML_MEMORY_ERROR || e.problem == NULL ? TPUCI_ENOMEM : TPUCI_EIO;
  }
  yaml_emitter_delete(&e);

done:
  if (r != 0) {
    if (err) tpuci__err_set(err, r, "%s", msg);
    out->len = start;
    if (out->data) out->data[start] = '\0';
  }
  free(msg);
  tpuci__gh_doc_free(&d);
  return r;
}
