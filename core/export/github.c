/* The GitHub Actions workflow of a spec (see export_github.h and
 * docs/github.md), written event by event with libyaml's emitter so that
 * every string is quoted as it must be. libyaml returns 1 on success and
 * 0 on failure, and yaml_emitter_emit() frees its event either way; the
 * helpers below keep that convention and tpuci__export_github() turns it
 * into 0 or a negative code. */
#include "export/github_doc.h"
#include "kind/pytest/config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

void tpuci__export_opts_init(tpuci__export_opts_t *opts) { memset(opts, 0, sizeof(*opts)); }

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
 * backslash (base/wildmatch.h quotes with it). Job names from a spec have
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
/* Emitting: GitHub text (the other helpers are base/emit.h's)         */

int tpuci__gh_text(yaml_emitter_t *e, const char *s) {
  char *q = tpuci__quote_github_text(s);
  int ok = tpuci__emit_str(e, q);
  free(q);
  return ok;
}

int tpuci__gh_kv_text(yaml_emitter_t *e, const char *key, const char *value) {
  return tpuci__emit_plain(e, key) && tpuci__gh_text(e, value);
}

/* ------------------------------------------------------------------ */
/* Images and registries                                               */

char *tpuci__image_registry(const char *ref) {
  const char *slash = ref ? strchr(ref, '/') : NULL;
  size_t n;
  char *host;
  if (slash == NULL) return NULL;
  n = (size_t) (slash - ref);
  /* Docker's rule: the first part is a registry when it has a '.' or a
   * ':' or is localhost; else the image is on Docker Hub. */
  if (memchr(ref, '.', n) == NULL && memchr(ref, ':', n) == NULL &&
      !(n == 9 && strncmp(ref, "localhost", 9) == 0))
    return NULL;
  host = tpuci__printf("%.*s", (int) n, ref);
  if (strcmp(host, "localhost") == 0 || strncmp(host, "localhost:", 10) == 0 ||
      strncmp(host, "127.", 4) == 0) {
    free(host); /* nothing to log in to on a runner */
    return NULL;
  }
  return host;
}

char *tpuci__registry_secret(const char *host, const char *what) {
  tpuci__buf_t b;
  const char *p;
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "TPUCI_REGISTRY_");
  for (p = host; *p; p++) {
    char c = *p;
    if (c >= 'a' && c <= 'z') c = (char) (c - 'a' + 'A');
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) c = '_';
    tpuci__buf_add(&b, &c, 1);
  }
  tpuci__buf_addf(&b, "_%s", what);
  return tpuci__buf_steal(&b);
}

static void tpuci__strv_add_once(tpuci__strv_t *v, const char *s) {
  size_t k;
  for (k = 0; k < v->len; k++)
    if (strcmp(v->items[k], s) == 0) return;
  tpuci__strv_push(v, s);
}

/* ------------------------------------------------------------------ */
/* The workflow                                                        */

static int tpuci__gh_matrix(yaml_emitter_t *e, const tpuci__gh_doc_t *d) {
  size_t i, k;
  int ok = tpuci__emit_plain(e, "strategy") && tpuci__emit_map(e) &&
           tpuci__emit_plain(e, "fail-fast") && tpuci__emit_plain(e, "false") &&
           tpuci__emit_plain(e, "matrix") && tpuci__emit_map(e) &&
           tpuci__emit_plain(e, "include") && tpuci__emit_seq(e, YAML_BLOCK_SEQUENCE_STYLE);
  for (i = 0; ok && i < d->nentries; i++) {
    const tpuci__gh_entry_t *en = &d->entries[i];
    /* Matrix values are evaluated: spec text is GitHub text. */
    ok = tpuci__emit_map(e) && tpuci__gh_kv_text(e, "job", en->job) &&
         tpuci__gh_kv_text(e, "only", en->only) && tpuci__gh_kv_text(e, "slug", en->slug);
    /* The images this entry needs: pulled, or built by the user's step. */
    if (ok && d->pull.len > 0) {
      ok = tpuci__emit_plain(e, "pull") && tpuci__emit_seq(e, YAML_FLOW_SEQUENCE_STYLE);
      for (k = 0; ok && k < en->pull.len; k++) ok = tpuci__gh_text(e, en->pull.items[k]);
      ok = ok && tpuci__emit_seq_end(e);
    }
    if (ok && d->build.len > 0) {
      ok = tpuci__emit_plain(e, "build") && tpuci__emit_seq(e, YAML_FLOW_SEQUENCE_STYLE);
      for (k = 0; ok && k < en->build.len; k++) ok = tpuci__gh_text(e, en->build.items[k]);
      ok = ok && tpuci__emit_seq_end(e);
    }
    ok = ok && tpuci__emit_map_end(e);
  }
  return ok && tpuci__emit_seq_end(e) && tpuci__emit_map_end(e) && tpuci__emit_map_end(e);
}

/* The triggers: every push and pull request, by hand (workflow_dispatch),
 * and on the schedule when there is one. */
static int tpuci__gh_on(yaml_emitter_t *e, const tpuci__gh_doc_t *d) {
  static const char *const events[] = {"push", "pull_request", "workflow_dispatch"};
  size_t k;
  int ok = 1;
  if (d->opts->schedule == NULL) {
    ok = tpuci__emit_seq(e, YAML_FLOW_SEQUENCE_STYLE);
    for (k = 0; ok && k < sizeof(events) / sizeof(events[0]); k++)
      ok = tpuci__emit_plain(e, events[k]);
    return ok && tpuci__emit_seq_end(e);
  }
  ok = tpuci__emit_map(e);
  for (k = 0; ok && k < sizeof(events) / sizeof(events[0]); k++) {
    yaml_event_t ev;
    ok = tpuci__emit_plain(e, events[k]) &&
         yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_FLOW_MAPPING_STYLE) &&
         yaml_emitter_emit(e, &ev) && tpuci__emit_map_end(e);
  }
  return ok && tpuci__emit_plain(e, "schedule") && tpuci__emit_seq(e, YAML_BLOCK_SEQUENCE_STYLE) &&
         tpuci__emit_map(e) && tpuci__emit_kv(e, "cron", d->opts->schedule) &&
         tpuci__emit_map_end(e) && tpuci__emit_seq_end(e) && tpuci__emit_map_end(e);
}

static int tpuci__gh_document(yaml_emitter_t *e, const tpuci__gh_doc_t *d) {
  const tpuci__export_opts_t *o = d->opts;
  int timings_jobs = d->per_job && d->pytest;
  yaml_event_t ev;
  char num[32];
  int ok;

  if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) || !yaml_emitter_emit(e, &ev) ||
      !yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) || !yaml_emitter_emit(e, &ev))
    return 0;
  /* `on` is a boolean to YAML 1.1 readers; quoted, it is the string
   * GitHub wants to every reader. */
  ok = tpuci__emit_map(e) && tpuci__emit_kv(e, "name", d->name) &&
       tpuci__emit_scalar(e, "on", YAML_DOUBLE_QUOTED_SCALAR_STYLE) && tpuci__gh_on(e, d) &&
       tpuci__emit_plain(e, "permissions") && tpuci__emit_map(e) &&
       tpuci__emit_kv(e, "contents", "read") &&
       (!d->ghcr || tpuci__emit_kv(e, "packages", "read")) && tpuci__emit_map_end(e);
  if (ok && o->concurrency != NULL)
    ok = tpuci__emit_plain(e, "concurrency") && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, "group", o->concurrency) && tpuci__emit_plain(e, "cancel-in-progress") &&
         tpuci__emit_plain(e, o->cancel_in_progress ? "true" : "false") && tpuci__emit_map_end(e);
  ok = ok && tpuci__emit_plain(e, "jobs") && tpuci__emit_map(e) &&
       (!timings_jobs || tpuci__gh_timings_job(e, d)) && tpuci__emit_plain(e, "tpuci") &&
       tpuci__emit_map(e) &&
       tpuci__emit_kv(e, "name", d->per_job ? "${{ matrix.job }}" : "tpuci") &&
       (!timings_jobs || tpuci__emit_kv(e, "needs", "timings")) && tpuci__gh_runs_on(e, d);
  if (ok && o->timeout_minutes > 0) {
    snprintf(num, sizeof(num), "%d", o->timeout_minutes);
    ok = tpuci__emit_plain(e, "timeout-minutes") && tpuci__emit_plain(e, num);
  }
  ok = ok && (!d->per_job || tpuci__gh_matrix(e, d)) && tpuci__gh_steps(e, d) &&
       tpuci__emit_map_end(e) && (!timings_jobs || tpuci__gh_timings_save_job(e, d)) &&
       (!d->per_job || tpuci__gh_report_job(e, d)) && tpuci__emit_map_end(e) &&
       tpuci__emit_map_end(e);
  return ok && yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(e, &ev) &&
         yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev) &&
         yaml_emitter_flush(e);
}

/* A slug for `base` that no entry has yet ("a/b" and "a:b" both give
 * "a-b": the later ones get "-2", "-3"...). */
static char *tpuci__gh_unique_slug(const tpuci__gh_doc_t *d, const char *base) {
  char *first = tpuci__github_id(base), *slug = tpuci__strdup(first);
  int n = 1;
  for (;;) {
    size_t k;
    for (k = 0; k < d->nentries; k++)
      if (strcmp(d->entries[k].slug, slug) == 0) break;
    if (k == d->nentries) break;
    free(slug);
    slug = tpuci__printf("%s-%d", first, ++n);
  }
  free(first);
  return slug;
}

/* The entry for (job, shard): shard 0 is the whole job. */
static tpuci__gh_entry_t *tpuci__gh_entry(tpuci__gh_doc_t *d, const char *job, int shard,
                                          int shards) {
  tpuci__gh_entry_t *en;
  size_t k;
  char *base;
  for (k = 0; k < d->nentries; k++) {
    en = &d->entries[k];
    if (strcmp(en->job, job) == 0 && shard == 0) return en;
  }
  if (shard > 0) {
    char *name = tpuci__printf("%s (shard %d/%d)", job, shard, shards);
    for (k = 0; k < d->nentries; k++)
      if (strcmp(d->entries[k].job, name) == 0) {
        free(name);
        return &d->entries[k];
      }
    free(name);
  }
  d->entries = tpuci__realloc(d->entries, (d->nentries + 1) * sizeof(*d->entries));
  en = &d->entries[d->nentries];
  memset(en, 0, sizeof(*en));
  if (shard == 0) {
    en->job = tpuci__strdup(job);
    en->only = tpuci__gh_glob_quote(job);
    base = tpuci__strdup(job);
  } else {
    /* Every instance of the job that is shard i of N, whatever its other
     * matrix values: "job[...shard=i/N]" or "job[...shard=i/N,...]". */
    char *q = tpuci__gh_glob_quote(job);
    en->job = tpuci__printf("%s (shard %d/%d)", job, shard, shards);
    en->only = tpuci__printf("%s\\[*shard=%d/%d[],]*", q, shard, shards);
    base = tpuci__printf("%s-shard-%d", job, shard);
    free(q);
  }
  en->slug = tpuci__gh_unique_slug(d, base);
  free(base);
  d->nentries++;
  return en;
}

/* Gathers the entries (per job and shard), the images and registries. */
static void tpuci__gh_collect(tpuci__gh_doc_t *d, const tpuci__plan_t *plan) {
  tpuci__strv_t jobs = {0};
  size_t i;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *in = &plan->instances[i];
    const char *job = in->job ? in->job : in->name;
    const tpuci__image_t *img =
        in->image >= 0 && (size_t) in->image < plan->nimages ? &plan->images[in->image] : NULL;
    tpuci__gh_entry_t *en;
    if (job == NULL) continue;
    tpuci__strv_add_once(&jobs, job);
    if (tpuci__pytest_of(in)) d->pytest = 1;
    en = tpuci__gh_entry(d, job, d->per_job && in->shards > 1 ? in->shard : 0,
                         tpuci__pytest_of(in) ? in->shards : 1);
    if (img == NULL || !tpuci__runtime_props(in->runtime)->builds_images || img->ref == NULL)
      continue;
    if (img->pull == TPUCI__PULL_NEVER) {
      tpuci__strv_add_once(&d->build, img->ref);
      tpuci__strv_add_once(&en->build, img->ref);
    } else {
      char *host = tpuci__image_registry(img->ref);
      tpuci__strv_add_once(&d->pull, img->ref);
      tpuci__strv_add_once(&en->pull, img->ref);
      if (host) {
        tpuci__strv_add_once(&d->registries, host);
        if (strcmp(host, "ghcr.io") == 0) d->ghcr = 1;
        free(host);
      }
    }
  }
  d->njobs = jobs.len;
  tpuci__strv_free(&jobs);
}

static void tpuci__gh_doc_free(tpuci__gh_doc_t *d) {
  size_t i;
  for (i = 0; i < d->nentries; i++) {
    free(d->entries[i].job);
    free(d->entries[i].only);
    free(d->entries[i].slug);
    tpuci__strv_free(&d->entries[i].pull);
    tpuci__strv_free(&d->entries[i].build);
  }
  free(d->entries);
  tpuci__strv_free(&d->pull);
  tpuci__strv_free(&d->build);
  tpuci__strv_free(&d->registries);
}

static int tpuci__gh_fail(tpuci__err_t *err, int code, const char *msg) {
  if (err) tpuci__err_set(err, code, "%s", msg);
  return code;
}

/* Where the workflow gets tpuci: a package, or a repository and a
 * revision, given or else the ones this tpuci was built from. There is
 * no fallback: a workflow must never build some other tpuci than the one
 * meant. 0, or TPUCI_EUSAGE with the one line that says what to pass. */
static int tpuci__gh_source(tpuci__gh_doc_t *d, const tpuci__export_opts_t *o, tpuci__err_t *err) {
  if (o->package != NULL) {
    if (o->source_url != NULL || o->source_ref != NULL)
      return tpuci__gh_fail(err, TPUCI_EUSAGE,
                            "--package installs tpuci from a .deb, --source and --ref build "
                            "it from git: give one or the other");
    if (*o->package == '\0' || !tpuci__utf8_valid(o->package))
      return tpuci__gh_fail(err, TPUCI_EUSAGE, "the package's URL must be valid UTF-8, not empty");
    d->package = o->package;
    return 0;
  }
  d->url = o->source_url ? o->source_url : o->build_url;
  d->ref = o->source_ref ? o->source_ref : o->build_commit;
  if (d->url == NULL)
    return tpuci__gh_fail(err, TPUCI_EUSAGE,
                          "this tpuci was not built from a git checkout with a remote, so "
                          "the workflow has no tpuci to build: pass --source URL (its git "
                          "repository) and --ref REF, or --package URL of a .deb");
  if (d->ref == NULL)
    return tpuci__gh_fail(err, TPUCI_EUSAGE,
                          "this tpuci was not built from a git checkout, so the workflow has "
                          "no commit of it to build: pass --ref REF (a branch, tag or commit "
                          "of --source)");
  if (*d->url == '\0' || *d->ref == '\0')
    return tpuci__gh_fail(err, TPUCI_EUSAGE, "--source and --ref must not be empty");
  return 0;
}

int tpuci__export_github(const tpuci__plan_t *plan, const tpuci__export_opts_t *opts,
                         tpuci__buf_t *out, tpuci__err_t *err) {
  tpuci__export_opts_t defaults;
  tpuci__gh_doc_t d;
  yaml_emitter_t e;
  size_t start = out->len, i;
  char *msg = NULL;
  int r = 0;

  if (opts == NULL) {
    tpuci__export_opts_init(&defaults);
    opts = &defaults;
  }
  memset(&d, 0, sizeof(d));
  d.spec = opts->spec ? opts->spec : plan->spec_path;
  d.plan = plan;
  d.name = opts->name ? opts->name : "tpuci";
  d.per_job = opts->per_job != 0;
  d.real = opts->real != 0;
  d.opts = opts;

  if (d.spec == NULL || *d.spec == '\0')
    return tpuci__gh_fail(err, TPUCI_EUSAGE,
                          "the spec's path is unknown: give it relative to the "
                          "repository's root");
  if ((r = tpuci__gh_source(&d, opts, err)) != 0) return r;
  if (!tpuci__utf8_valid(d.spec) || (d.url && !tpuci__utf8_valid(d.url)) ||
      (d.ref && !tpuci__utf8_valid(d.ref)) || !tpuci__utf8_valid(d.name))
    return tpuci__gh_fail(err, TPUCI_EUSAGE,
                          "the spec's path, the workflow's name and tpuci's source "
                          "must be valid UTF-8");
  if (d.spec[0] == '/') {
    msg = tpuci__printf("%s: the workflow runs the spec from the repository's root: "
                        "give its path relative to the root",
                        d.spec);
    r = tpuci__gh_fail(err, TPUCI_EUSAGE, msg);
    free(msg);
    return r;
  }
  for (i = 0; i < opts->n_runs_on; i++) {
    if (opts->runs_on[i] == NULL || *opts->runs_on[i] == '\0' ||
        !tpuci__utf8_valid(opts->runs_on[i]))
      return tpuci__gh_fail(err, TPUCI_EUSAGE, "a runs-on label must be valid UTF-8, not empty");
  }
  if (opts->concurrency != NULL &&
      (*opts->concurrency == '\0' || !tpuci__utf8_valid(opts->concurrency)))
    return tpuci__gh_fail(err, TPUCI_EUSAGE,
                          "the concurrency group must be valid UTF-8, not empty");
  if (opts->schedule != NULL && (msg = tpuci__github_cron_check(opts->schedule)) != NULL) {
    char *m = tpuci__printf("the workflow's schedule: %s", msg);
    r = tpuci__gh_fail(err, TPUCI_EUSAGE, m);
    free(m);
    free(msg);
    return r;
  }
  if (opts->timeout_minutes < 0 || opts->timeout_minutes > TPUCI__GITHUB_TIMEOUT_MAX) {
    msg = tpuci__printf("timeout-minutes must be from 1 to %d (GitHub's limit), not %d",
                        TPUCI__GITHUB_TIMEOUT_MAX, opts->timeout_minutes);
    r = tpuci__gh_fail(err, TPUCI_EUSAGE, msg);
    free(msg);
    return r;
  }
  tpuci__gh_collect(&d, plan);
  for (i = 0; i < d.nentries; i++) {
    if (!tpuci__utf8_valid(d.entries[i].job)) {
      msg = tpuci__printf("%s: the name of job %zu (of %zu) is not valid UTF-8", d.spec, i + 1,
                          d.nentries);
      r = TPUCI_EUSAGE;
      goto done;
    }
  }
  for (i = 0; i < d.pull.len + d.build.len; i++) {
    const char *ref = i < d.pull.len ? d.pull.items[i] : d.build.items[i - d.pull.len];
    if (!tpuci__utf8_valid(ref)) {
      msg = tpuci__printf("%s: an image's ref is not valid UTF-8", d.spec);
      r = TPUCI_EUSAGE;
      goto done;
    }
  }
  if (d.per_job && d.nentries == 0) {
    msg = tpuci__printf("%s: no job to export: the spec declares none", d.spec);
    r = TPUCI_EUSAGE;
    goto done;
  }
  if (d.per_job && d.nentries > TPUCI__GITHUB_MATRIX_MAX) {
    if (d.nentries == d.njobs)
      msg = tpuci__printf("%s: %zu jobs exceed GitHub's limit of %d matrix entries per "
                          "workflow job; export without per-job to run them all in one "
                          "workflow job, or split the spec (%zu too many)",
                          d.spec, d.nentries, TPUCI__GITHUB_MATRIX_MAX,
                          d.nentries - TPUCI__GITHUB_MATRIX_MAX);
    else
      msg = tpuci__printf("%s: %zu jobs and their shards (one entry each) make %zu matrix "
                          "entries, over GitHub's limit of %d per workflow job; export "
                          "without per-job, use fewer shards or split the spec (%zu too many)",
                          d.spec, d.njobs, d.nentries, TPUCI__GITHUB_MATRIX_MAX,
                          d.nentries - TPUCI__GITHUB_MATRIX_MAX);
    r = TPUCI_EUSAGE;
    goto done;
  }

  /* A comment cannot be an event: it goes in front of the stream. */
  msg = tpuci__printf("Generated by tpuci from %s. Change the spec and export again", d.spec);
  tpuci__quote_comment(out, msg);
  free(msg);
  msg = NULL;
  tpuci__quote_comment(out, "(tpuci export github) rather than editing this file.");

  memset(&e, 0, sizeof(e));
  if (!yaml_emitter_initialize(&e)) {
    msg = tpuci__strdup("cannot start the YAML emitter");
    r = TPUCI_ENOMEM;
    goto done;
  }
  yaml_emitter_set_output(&e, tpuci__emit_write, out);
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
