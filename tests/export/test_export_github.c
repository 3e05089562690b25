/* The GitHub Actions export on hand-built plans, read back with libyaml's
 * parser and compared as trees: the whole workflow, per-job matrices with
 * names that need quoting, ids, the 256-entry limit and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include <jansson.h>
#include <yaml.h>

#include "export/github.h"
#include "kind/pytest/config.h"
#include "plan/plan.h"
#include "base/util.h"

/* ------------------------------------------------------------------ */
/* YAML to a JSON tree, resolving plain scalars as YAML 1.1 does          */

static void next_event(yaml_parser_t *p, yaml_event_t *ev) {
  if (!yaml_parser_parse(p, ev))
    fail_msg("YAML parse error: %s at line %zu", p->problem ? p->problem : "?",
             p->problem_mark.line + 1);
}

/* A scalar's value. Quoted and block scalars are strings; plain ones are
 * read the way PyYAML (YAML 1.1) reads them, the strictest reader a
 * workflow may meet: null, booleans (yes/no/on/off too), numbers. So a
 * name the exporter forgot to quote comes back as something else. */
static json_t *resolve(const yaml_event_t *ev) {
  static const char *const truthy[] = {"true", "yes", "on", "y", NULL};
  static const char *const falsy[] = {"false", "no", "off", "n", NULL};
  const char *s = (const char *) ev->data.scalar.value;
  size_t len = ev->data.scalar.length, k;
  char *end;

  assert_null(ev->data.scalar.anchor);
  assert_null(ev->data.scalar.tag);
  if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return json_stringn(s, len);
  if (len == 0 || strcmp(s, "~") == 0 || strcasecmp(s, "null") == 0) return json_null();
  for (k = 0; truthy[k]; k++)
    if (strcasecmp(s, truthy[k]) == 0) return json_true();
  for (k = 0; falsy[k]; k++)
    if (strcasecmp(s, falsy[k]) == 0) return json_false();
  if (strchr("+-.0123456789", s[0])) {
    long long i = strtoll(s, &end, 0);
    if (*end == '\0') return json_integer(i);
    {
      double d = strtod(s, &end);
      if (*end == '\0' || strcasecmp(s, ".inf") == 0 || strcasecmp(s, ".nan") == 0)
        return json_real(*end == '\0' ? d : 0);
    }
    if (strchr(s, ':') && s[0] >= '0' && s[0] <= '9') return json_integer(-1); /* 1:30 */
  }
  return json_stringn(s, len);
}

static json_t *load_node(yaml_parser_t *p, yaml_event_t *ev) {
  json_t *v = NULL;
  switch (ev->type) {
    case YAML_SCALAR_EVENT:
      v = resolve(ev);
      yaml_event_delete(ev);
      return v;
    case YAML_SEQUENCE_START_EVENT:
      assert_null(ev->data.sequence_start.anchor);
      yaml_event_delete(ev);
      v = json_array();
      for (;;) {
        yaml_event_t item;
        next_event(p, &item);
        if (item.type == YAML_SEQUENCE_END_EVENT) {
          yaml_event_delete(&item);
          return v;
        }
        json_array_append_new(v, load_node(p, &item));
      }
    case YAML_MAPPING_START_EVENT:
      assert_null(ev->data.mapping_start.anchor);
      yaml_event_delete(ev);
      v = json_object();
      for (;;) {
        yaml_event_t k, val;
        json_t *key;
        char *name;
        next_event(p, &k);
        if (k.type == YAML_MAPPING_END_EVENT) {
          yaml_event_delete(&k);
          return v;
        }
        assert_int_equal(k.type, YAML_SCALAR_EVENT);
        key = resolve(&k);
        /* A key that is not a string shows as "!bool:on", "!int:3". */
        name = json_is_string(key)
                   ? tpuci__strdup(json_string_value(key))
                   : tpuci__printf("!%s:%s", json_is_boolean(key) ? "bool"
                                             : json_is_null(key) ? "null" : "number",
                                   (const char *) k.data.scalar.value);
        json_decref(key);
        yaml_event_delete(&k);
        if (json_object_get(v, name)) fail_msg("duplicate key '%s'", name);
        next_event(p, &val);
        json_object_set_new(v, name, load_node(p, &val));
        free(name);
      }
    default:
      fail_msg("unexpected YAML event %d (aliases are not expected)", (int) ev->type);
  }
  return NULL;
}

/* Parses a stream of exactly one document. */
static json_t *yaml_load(const char *text) {
  yaml_parser_t p;
  yaml_event_t ev;
  json_t *doc;

  assert_true(yaml_parser_initialize(&p));
  yaml_parser_set_input_string(&p, (const unsigned char *) text, strlen(text));
  next_event(&p, &ev);
  assert_int_equal(ev.type, YAML_STREAM_START_EVENT);
  yaml_event_delete(&ev);
  next_event(&p, &ev);
  assert_int_equal(ev.type, YAML_DOCUMENT_START_EVENT);
  yaml_event_delete(&ev);
  next_event(&p, &ev);
  doc = load_node(&p, &ev);
  next_event(&p, &ev);
  assert_int_equal(ev.type, YAML_DOCUMENT_END_EVENT);
  yaml_event_delete(&ev);
  next_event(&p, &ev);
  assert_int_equal(ev.type, YAML_STREAM_END_EVENT);
  yaml_event_delete(&ev);
  yaml_parser_delete(&p);
  return doc;
}

static void assert_json_equal(const json_t *got, const json_t *want) {
  if (!json_equal((json_t *) got, (json_t *) want)) {
    char *g = json_dumps(got, JSON_INDENT(2) | JSON_SORT_KEYS);
    char *w = json_dumps(want, JSON_INDENT(2) | JSON_SORT_KEYS);
    print_error("got:\n%s\nwant:\n%s\n", g, w);
    free(g);
    free(w);
    fail_msg("the trees differ");
  }
}

/* The node at a slash-separated path ("jobs/tpuci/steps/2/env"), numbers
 * indexing arrays. */
static json_t *at(json_t *root, const char *path) {
  char *copy = tpuci__strdup(path), *part, *save = NULL;
  json_t *v = root;
  for (part = strtok_r(copy, "/", &save); part && v; part = strtok_r(NULL, "/", &save))
    v = json_is_array(v) ? json_array_get(v, strtoul(part, NULL, 10)) : json_object_get(v, part);
  free(copy);
  return v;
}

/* ------------------------------------------------------------------ */
/* Plans and the expected workflow                                     */

static void add(tpuci__plan_t *plan, const char *job, const char *name) {
  tpuci__instance_t *in = tpuci__plan_add_instance(plan);
  in->job = tpuci__strdup(job);
  in->name = tpuci__strdup(name ? name : job);
  tpuci__strv_push(&in->argv, "true");
  in->selected = 1;
}

/* What a build from a checkout with a remote records (core/api/ passes
 * tpuci__build_source_*()): the workflow's tpuci unless options say. */
#define BUILD_URL "https://git.example.com/acme/tpuci.git"
#define BUILD_COMMIT "0123456789abcdef0123456789abcdef01234567"

/* The defaults, as from a build with BUILD_URL and BUILD_COMMIT. */
static void opts_init(tpuci__export_opts_t *opts) {
  tpuci__export_opts_init(opts);
  opts->build_url = BUILD_URL;
  opts->build_commit = BUILD_COMMIT;
}

static char *export_ok(const tpuci__plan_t *plan, const tpuci__export_opts_t *opts) {
  tpuci__export_opts_t defaults;
  tpuci__buf_t b;
  tpuci__err_t err = {0, NULL};
  int r;
  if (opts == NULL) {
    opts_init(&defaults);
    opts = &defaults;
  }
  tpuci__buf_init(&b);
  r = tpuci__export_github(plan, opts, &b, &err);
  if (r != 0) fail_msg("export failed: %s", err.msg);
  return tpuci__buf_steal(&b);
}

/* The workflow as docs/github.md describes it, written out by hand, for
 * a plan without pytest jobs and without images. */
#define MERGE_SCRIPT "(the merge script)"

static json_t *expected(const char *spec, const char *url, const char *ref,
                        const char *name, json_t *include) {
  json_t *run_env = json_pack("{s:s}", "TPUCI_SPEC", spec);
  json_t *job, *steps, *jobs;
  char entries[32];
  const char *key = "${{ steps.tpuci-commit.outputs.key }}";
  const char *prefix = "${{ runner.temp }}/tpuci-install";
  const char *results_key =
      include ? "tpuci-results-${{ matrix.slug }}-${{ github.run_id }}-${{ github.run_attempt }}"
              : "tpuci-results-${{ github.run_id }}-${{ github.run_attempt }}";
  const char *cmd = include
      ? "tpuci run --only \"$TPUCI_ONLY\" --report-json tpuci-report.json --report-yaml "
        "tpuci-report.yaml --report-html tpuci-report.html --junit tpuci-junit.xml \"$TPUCI_SPEC\""
      : "tpuci run --report-json tpuci-report.json --report-yaml tpuci-report.yaml "
        "--report-html tpuci-report.html --junit tpuci-junit.xml \"$TPUCI_SPEC\"";
  if (include) json_object_set_new(run_env, "TPUCI_ONLY", json_string("${{ matrix.only }}"));
  snprintf(entries, sizeof(entries), "%zu", include ? json_array_size(include) : 0);
  steps = json_pack(
      "[{s:s, s:s},"
      " {s:s, s:s},"
      " {s:s, s:s, s:{s:s, s:s}, s:s},"
      " {s:s, s:s, s:s, s:{s:s, s:s}},"
      " {s:s, s:s, s:s, s:{s:s, s:s}, s:s},"
      " {s:s, s:s, s:s, s:{s:s, s:s}},"
      " {s:s, s:s},"
      " {s:s, s:s, s:{s:s, s:s, s:s}},"
      " {s:s, s:o, s:s},"
      " {s:s, s:s, s:s, s:{s:s, s:s}},"
      " {s:s, s:s, s:s, s:{s:s, s:s, s:b, s:s}}]",
      "name", "Check out the repository", "uses", "actions/checkout@v4",
      "name", "Install tpuci's build dependencies",
      "run", "sudo apt-get update\n"
             "sudo apt-get install -y --no-install-recommends build-essential cmake "
             "pkg-config git liblua5.4-dev libuv1-dev libyaml-dev libcurl4-openssl-dev "
             "libjansson-dev libexpat1-dev libssl-dev zlib1g-dev libinih-dev\n",
      "name", "Find tpuci's commit", "id", "tpuci-commit",
      "env", "TPUCI_SOURCE", url, "TPUCI_REF", ref,
      "run", "sha=$(git ls-remote \"$TPUCI_SOURCE\" \"$TPUCI_REF\" | head -n 1 | cut -f 1)\n"
             "sha=${sha:-$TPUCI_REF}\n"
             "image=${ImageOS:-}-${ImageVersion:-}\n"
             "if [ \"$image\" = - ]; then\n"
             "  image=$( (. /etc/os-release && echo \"${ID:-unknown}-${VERSION_ID:-}\") 2> /dev/null || "
             "echo unknown)\n"
             "fi\n"
             "echo \"sha=$sha\" >> \"$GITHUB_OUTPUT\"\n"
             "echo \"key=tpuci-$RUNNER_OS-$RUNNER_ARCH-$image-$sha\" >> \"$GITHUB_OUTPUT\"\n",
      "name", "Restore the tpuci build", "id", "tpuci-build",
      "uses", "actions/cache/restore@v4", "with", "path", prefix, "key", key,
      "name", "Build and install tpuci", "if", "steps.tpuci-build.outputs.cache-hit != 'true'",
      "working-directory", "${{ runner.temp }}",
      "env", "TPUCI_SOURCE", url, "TPUCI_REF", ref,
      "run", "git init -q tpuci\n"
             "git -C tpuci fetch -q --depth 1 \"$TPUCI_SOURCE\" \"$TPUCI_REF\"\n"
             "git -C tpuci checkout -q FETCH_HEAD\n"
             "cmake -S tpuci -B tpuci/build -DTPUCI_BUILD_TESTS=OFF\n"
             "cmake --build tpuci/build -j\n"
             "cmake --install tpuci/build --prefix \"$RUNNER_TEMP/tpuci-install\"\n",
      "name", "Save the tpuci build", "if", "steps.tpuci-build.outputs.cache-hit != 'true'",
      "uses", "actions/cache/save@v4", "with", "path", prefix, "key", key,
      "name", "Put tpuci on the PATH",
      "run", "echo \"$RUNNER_TEMP/tpuci-install/bin\" >> \"$GITHUB_PATH\"\n",
      "name", "Restore the results cache", "uses", "actions/cache/restore@v4",
      "with", "path", ".tpuci/cache", "key", results_key,
      "restore-keys", include ? "tpuci-results-${{ matrix.slug }}-" : "tpuci-results-",
      "name", "Run the spec", "env", run_env, "run", cmd,
      "name", "Save the results cache", "if", "always() && hashFiles('.tpuci/cache/*.json') != ''",
      "uses", "actions/cache/save@v4", "with", "path", ".tpuci/cache", "key", results_key,
      "name", "Upload the reports and the run folder", "if", "always()",
      "uses", "actions/upload-artifact@v4",
      "with", "name", include ? "tpuci-${{ matrix.slug }}" : "tpuci-reports",
      "path", "tpuci-report.json\ntpuci-report.yaml\ntpuci-report.html\ntpuci-junit.xml\n"
              ".tpuci/runs/\n!.tpuci/runs/latest/**\n",
      "include-hidden-files", 1, "if-no-files-found", "warn");
  assert_non_null(steps);
  job = json_pack("{s:s, s:s, s:o}", "name", include ? "${{ matrix.job }}" : "tpuci",
                  "runs-on", "ubuntu-latest", "steps", steps);
  if (include)
    json_object_set_new(job, "strategy", json_pack("{s:b, s:{s:o}}", "fail-fast", 0,
                                                   "matrix", "include", include));
  jobs = json_pack("{s:o}", "tpuci", job);
  if (include) {
    /* Per job, the last job merges every entry's run: tpuci built as in
     * the entries (their steps 2 to 7), the runs downloaded, merged (the
     * script: see check_merge_script()) and uploaded. */
    json_t *rsteps = json_array(), *merge;
    size_t k;
    for (k = 1; k <= 6; k++) json_array_append(rsteps, json_array_get(steps, k));
    merge = json_pack("{s:s, s:{s:s}, s:s}", "name", "Merge the entries' runs",
                      "env", "TPUCI_ENTRIES", entries, "run", MERGE_SCRIPT);
    json_array_append_new(rsteps, json_pack("{s:s, s:s, s:{s:s, s:s}}",
                                            "name", "Download every entry's run folder",
                                            "uses", "actions/download-artifact@v4", "with",
                                            "pattern", "tpuci-*", "path", "tpuci-runs"));
    json_array_append_new(rsteps, merge);
    json_array_append_new(rsteps, json_pack(
        "{s:s, s:s, s:s, s:{s:s, s:s, s:b, s:s}}", "name", "Upload the merged report",
        "if", "always()", "uses", "actions/upload-artifact@v4", "with", "name", "tpuci.report",
        "path", "tpuci-report.json\ntpuci-report.yaml\ntpuci-report.html\ntpuci-junit.xml\n"
                "tpuci-runs/\n",
        "include-hidden-files", 1, "if-no-files-found", "warn"));
    json_object_set_new(jobs, "report", json_pack("{s:s, s:[s], s:s, s:s, s:o}", "name",
                                                  "One report of every entry", "needs", "tpuci",
                                                  "if", "always()", "runs-on", "ubuntu-latest",
                                                  "steps", rsteps));
  }
  return json_pack("{s:s, s:[s,s,s], s:{s:s}, s:o}", "name", name,
                   "on", "push", "pull_request", "workflow_dispatch", "permissions", "contents",
                   "read", "jobs", jobs);
}

/* The report job's merge script of `doc` holds what it must (the runs as
 * the entries uploaded them, `latest` left out, a run cut short or an
 * entry without a run failing the step after the merge); it then stands
 * for MERGE_SCRIPT in the expected tree. tests/e2e/merge.sh runs it. */
static void check_merge_script(json_t *doc, json_t *want) {
  json_t *steps = json_object_get(json_object_get(json_object_get(doc, "jobs"), "report"), "steps");
  json_t *wsteps = json_object_get(json_object_get(json_object_get(want, "jobs"), "report"), "steps");
  json_t *st = json_array_get(steps, 7), *ws = json_array_get(wsteps, 7);
  const char *run = json_string_value(json_object_get(st, "run"));
  static const char *const parts[] = {
      "shopt -s nullglob\n", "for dir in tpuci-runs/*/.tpuci/runs/*/; do\n",
      "case $dir in */latest/) continue ;; esac", "[ -f \"${dir}summary.json\" ]",
      "if [ \"$#\" -lt \"$TPUCI_ENTRIES\" ]; then",
      "tpuci merge --report-json tpuci-report.json --report-yaml tpuci-report.yaml "
      "--report-html tpuci-report.html --junit tpuci-junit.xml \"$@\" || status=$?\n",
      "exit \"$status\"\n", NULL};
  size_t k;
  assert_non_null(run);
  for (k = 0; parts[k]; k++)
    if (strstr(run, parts[k]) == NULL) fail_msg("the merge script lacks '%s': %s", parts[k], run);
  assert_string_equal(json_string_value(json_object_get(ws, "run")), MERGE_SCRIPT);
  json_object_set_new(ws, "run", json_string(run));
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */

static void test_one_workflow_job(void **state) {
  tpuci__plan_t plan;
  json_t *doc, *want;
  char *text;
  (void) state;

  tpuci__plan_init(&plan);
  plan.spec_path = tpuci__strdup("ci/spec.lua");
  add(&plan, "unit", "unit[python=3.10]");
  add(&plan, "unit", "unit[python=3.11]");
  add(&plan, "lint", NULL);
  text = export_ok(&plan, NULL);
  /* The text: a comment first, `on` quoted for YAML 1.1 readers, scripts
   * as literal blocks. */
  assert_int_equal(strncmp(text, "# Generated by tpuci from ci/spec.lua.", 38), 0);
  assert_non_null(strstr(text, "\n\"on\": [push, pull_request, workflow_dispatch]\n"));
  assert_non_null(strstr(text, "      run: |\n        sudo apt-get update\n"));
  doc = yaml_load(text);
  want = expected("ci/spec.lua", BUILD_URL, BUILD_COMMIT,
                  "tpuci", NULL);
  assert_json_equal(doc, want);
  json_decref(doc);
  json_decref(want);
  free(text);
  tpuci__plan_free(&plan);
}

static void test_options(void **state) {
  tpuci__plan_t plan;
  tpuci__export_opts_t opts;
  json_t *doc, *want;
  char *text, *again;
  (void) state;

  tpuci__plan_init(&plan);
  plan.spec_path = tpuci__strdup("/abs/path/spec.lua");
  add(&plan, "a", NULL);
  opts_init(&opts);
  opts.spec = "specs/it's a \"spec\" #1: yes.lua";
  opts.source_url = "https://git.example.com/x/tpuci.git?q=1#frag";
  opts.source_ref = "v1.0: \"rc\" $(rm -rf /)";
  opts.name = "CI: tpuci on";
  text = export_ok(&plan, &opts);
  doc = yaml_load(text);
  want = expected(opts.spec, opts.source_url, opts.source_ref, opts.name, NULL);
  assert_json_equal(doc, want);
  /* The same input gives the same bytes. */
  again = export_ok(&plan, &opts);
  assert_string_equal(text, again);
  /* A ref that looks like a number stays a string. */
  opts.source_ref = "1.10";
  free(again);
  again = export_ok(&plan, &opts);
  json_decref(doc);
  doc = yaml_load(again);
  assert_string_equal(json_string_value(at(doc, "jobs/tpuci/steps/2/env/TPUCI_REF")), "1.10");
  assert_string_equal(json_string_value(at(doc, "jobs/tpuci/steps/4/env/TPUCI_REF")), "1.10");
  json_decref(doc);
  json_decref(want);
  free(text);
  free(again);
  tpuci__plan_free(&plan);
}

static int slug_ok(const char *s) {
  const char *p;
  if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_')) return 0;
  for (p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_' || *p == '-'))
      return 0;
  return p - s <= 70;
}

static void test_per_job_hard_names(void **state) {
  static const char *const names[] = {
      "it's \"quoted\": yes # not a comment",
      "na\xc3\xafve/\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9:\xc3\x9f \xf0\x9f\x9a\x80",
      "3.10", "on", "yes", "No", "null", "~", "1e3", "0x1F", ".inf", "1:30", "2026-12-02",
      "a*b[1]?\\", "-dash", "@at", "a/b", "a:b", "[flow]", "{x}", "&anchor", "*alias",
      "!tag", "|pipe", ">fold", "%pct", "`tick", "#hash", "x #y", "x: y", "trailing ",
      " leading", "tab\there", "line\nbreak", "\xf0\x9f\x9a\x80", "<<", "=", NULL};
  tpuci__plan_t plan;
  tpuci__export_opts_t opts;
  json_t *doc, *include, *want, *entry;
  char *text;
  size_t i, k, n;
  (void) state;

  tpuci__plan_init(&plan);
  plan.spec_path = tpuci__strdup("spec.lua");
  for (n = 0; names[n]; n++) {
    add(&plan, names[n], NULL);
    add(&plan, names[n], "matrix instance");  /* a job counts once */
  }
  opts_init(&opts);
  opts.per_job = 1;
  text = export_ok(&plan, &opts);
  doc = yaml_load(text);
  include = at(doc, "jobs/tpuci/strategy/matrix/include");
  assert_int_equal(json_array_size(include), n);
  for (i = 0; i < n; i++) {
    const char *slug;
    entry = json_array_get(include, i);
    /* The names come back exactly, as strings, in the plan's order. */
    assert_true(json_is_string(json_object_get(entry, "job")));
    assert_string_equal(json_string_value(json_object_get(entry, "job")), names[i]);
    slug = json_string_value(json_object_get(entry, "slug"));
    assert_non_null(slug);
    if (!slug_ok(slug)) fail_msg("slug '%s' of '%s' breaks GitHub's rules", slug, names[i]);
    for (k = 0; k < i; k++)
      assert_string_not_equal(slug, json_string_value(json_object_get(json_array_get(include, k),
                                                                      "slug")));
  }
  /* Globs match only the name; ids follow GitHub's rules. */
  assert_string_equal(json_string_value(json_object_get(json_array_get(include, 13), "only")),
                      "a\\*b\\[1\\]\\?\\\\");
  assert_string_equal(json_string_value(json_object_get(json_array_get(include, 0), "only")),
                      names[0]);
  assert_string_equal(json_string_value(json_object_get(json_array_get(include, 0), "slug")),
                      "it-s-quoted-yes-not-a-comment");
  assert_string_equal(json_string_value(json_object_get(json_array_get(include, 1), "slug")),
                      "na-ve-n-c-d");
  assert_string_equal(json_string_value(json_object_get(json_array_get(include, 2), "slug")),
                      "_3-10");
  assert_string_equal(json_string_value(json_object_get(json_array_get(include, 16), "slug")),
                      "a-b");
  assert_string_equal(json_string_value(json_object_get(json_array_get(include, 17), "slug")),
                      "a-b-2");
  /* The rest of the workflow is the documented one. */
  want = expected("spec.lua", BUILD_URL, BUILD_COMMIT, "tpuci",
                  json_deep_copy(include));
  check_merge_script(doc, want);
  assert_json_equal(doc, want);
  json_decref(want);
  json_decref(doc);
  free(text);
  tpuci__plan_free(&plan);
}

static void test_github_id(void **state) {
  static const char *const cases[][2] = {
      {"unit", "unit"}, {"unit/tests:py3.11", "unit-tests-py3-11"}, {"3d", "_3d"},
      {"_x", "_x"}, {"--x--", "_--x--"}, {"a  b", "a-b"}, {"\xc3\xa9t\xc3\xa9", "t"},
      {"", "_"}, {"!!!", "_"}, {"x!", "x"}};
  char *id, longname[200];
  size_t k;
  (void) state;
  for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    id = tpuci__github_id(cases[k][0]);
    assert_string_equal(id, cases[k][1]);
    free(id);
  }
  memset(longname, 'a', sizeof(longname) - 1);
  longname[sizeof(longname) - 1] = '\0';
  id = tpuci__github_id(longname);
  assert_int_equal(strlen(id), 64);
  free(id);
}

static void test_matrix_limit(void **state) {
  tpuci__plan_t plan;
  tpuci__export_opts_t opts;
  tpuci__buf_t b;
  tpuci__err_t err = {0, NULL};
  json_t *doc;
  char *text, name[32];
  int i;
  (void) state;

  tpuci__plan_init(&plan);
  plan.spec_path = tpuci__strdup("spec.lua");
  for (i = 0; i < 256; i++) {
    snprintf(name, sizeof(name), "job%03d", i);
    add(&plan, name, NULL);
  }
  opts_init(&opts);
  opts.per_job = 1;
  /* 256 is allowed. */
  text = export_ok(&plan, &opts);
  doc = yaml_load(text);
  assert_int_equal(json_array_size(at(doc, "jobs/tpuci/strategy/matrix/include")), 256);
  json_decref(doc);
  free(text);
  /* 300 is not, and the buffer keeps what it had. */
  for (; i < 300; i++) {
    snprintf(name, sizeof(name), "job%03d", i);
    add(&plan, name, NULL);
  }
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "before");
  assert_int_equal(tpuci__export_github(&plan, &opts, &b, &err), TPUCI_EUSAGE);
  assert_string_equal(err.msg, "spec.lua: 300 jobs exceed GitHub's limit of 256 matrix entries "
                               "per workflow job; export without per-job to run them all in "
                               "one workflow job, or split the spec (44 too many)");
  assert_null(strchr(err.msg, '\n'));
  assert_string_equal(b.data, "before");
  tpuci__err_clear(&err);
  /* Without per-job, one workflow job runs them all. */
  opts.per_job = 0;
  assert_int_equal(tpuci__export_github(&plan, &opts, &b, NULL), 0);
  tpuci__buf_free(&b);
  tpuci__plan_free(&plan);
}

static void test_errors(void **state) {
  tpuci__plan_t plan;
  tpuci__export_opts_t opts;
  tpuci__buf_t b;
  tpuci__err_t err = {0, NULL};
  (void) state;

  tpuci__plan_init(&plan);
  opts_init(&opts);
  tpuci__buf_init(&b);
  /* No spec path at all. */
  assert_int_equal(tpuci__export_github(&plan, &opts, &b, &err), TPUCI_EUSAGE);
  assert_non_null(strstr(err.msg, "relative to the repository's root"));
  tpuci__err_clear(&err);
  /* An absolute one. */
  plan.spec_path = tpuci__strdup("/home/me/spec.lua");
  assert_int_equal(tpuci__export_github(&plan, &opts, &b, &err), TPUCI_EUSAGE);
  assert_string_equal(err.msg, "/home/me/spec.lua: the workflow runs the spec from the "
                               "repository's root: give its path relative to the root");
  tpuci__err_clear(&err);
  opts.spec = "spec.lua";
  /* Per-job with no job. */
  opts.per_job = 1;
  assert_int_equal(tpuci__export_github(&plan, &opts, &b, &err), TPUCI_EUSAGE);
  assert_string_equal(err.msg, "spec.lua: no job to export: the spec declares none");
  tpuci__err_clear(&err);
  /* A name that is not UTF-8. */
  add(&plan, "ok", NULL);
  add(&plan, "bad\xff", NULL);
  assert_int_equal(tpuci__export_github(&plan, &opts, &b, &err), TPUCI_EUSAGE);
  assert_string_equal(err.msg, "spec.lua: the name of job 2 (of 2) is not valid UTF-8");
  tpuci__err_clear(&err);
  opts.source_ref = "\xc0\x80";
  assert_int_equal(tpuci__export_github(&plan, &opts, &b, &err), TPUCI_EUSAGE);
  assert_non_null(strstr(err.msg, "must be valid UTF-8"));
  tpuci__err_clear(&err);
  assert_int_equal(b.len, 0);
  tpuci__buf_free(&b);
  tpuci__plan_free(&plan);
}

static void test_empty_plan_single(void **state) {
  tpuci__plan_t plan;
  json_t *doc, *want;
  char *text;
  (void) state;
  /* Without per-job an empty plan still makes a valid workflow. */
  tpuci__plan_init(&plan);
  plan.spec_path = tpuci__strdup("empty.lua");
  text = export_ok(&plan, NULL);
  doc = yaml_load(text);
  want = expected("empty.lua", BUILD_URL, BUILD_COMMIT, "tpuci",
                  NULL);
  assert_json_equal(doc, want);
  json_decref(doc);
  json_decref(want);
  free(text);
  tpuci__plan_free(&plan);
}

/* ------------------------------------------------------------------ */
/* Images, durations, options                                          */

/* The step of the job called `name`, or NULL. */
static json_t *step(json_t *doc, const char *job, const char *name) {
  json_t *steps = json_object_get(json_object_get(json_object_get(doc, "jobs"), job), "steps"), *s;
  size_t i;
  json_array_foreach(steps, i, s) {
    if (strcmp(json_string_value(json_object_get(s, "name")), name) == 0) return s;
  }
  return NULL;
}

static const char *str_at(json_t *root, const char *path) {
  json_t *v = at(root, path);
  if (!json_is_string(v)) fail_msg("%s is not a string", path);
  return json_string_value(v);
}

/* Which tpuci the workflow builds: the options' source, else the
 * checkout this tpuci was built from, else none at all (one line saying
 * what to pass, never a placeholder); or a package instead. */
static void export_fails(const tpuci__plan_t *plan, const tpuci__export_opts_t *opts,
                         const char *want) {
  tpuci__buf_t b;
  tpuci__err_t err = {0, NULL};
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "before");
  assert_int_equal(tpuci__export_github(plan, opts, &b, &err), TPUCI_EUSAGE);
  if (strcmp(err.msg, want) != 0) fail_msg("error '%s', want '%s'", err.msg, want);
  assert_string_equal(b.data, "before");
  tpuci__err_clear(&err);
  tpuci__buf_free(&b);
}

static void test_source(void **state) {
  static const char no_remote[] =
      "this tpuci was not built from a git checkout with a remote, so the workflow has no "
      "tpuci to build: pass --source URL (its git repository) and --ref REF, or --package "
      "URL of a .deb";
  static const char no_commit[] =
      "this tpuci was not built from a git checkout, so the workflow has no commit of it to "
      "build: pass --ref REF (a branch, tag or commit of --source)";
  static const char *const steps_built[] = {"Find tpuci's commit", "Build and install tpuci"};
  tpuci__plan_t plan;
  tpuci__export_opts_t opts;
  json_t *doc, *s;
  char *text;
  size_t k;
  (void) state;

  tpuci__plan_init(&plan);
  plan.spec_path = tpuci__strdup("spec.lua");
  add(&plan, "unit", NULL);
  /* The build's remote and commit; --source alone keeps the commit (a
   * fork or mirror has it). */
  opts_init(&opts);
  opts.source_url = "https://mirror.example.com/tpuci.git";
  text = export_ok(&plan, &opts);
  doc = yaml_load(text);
  for (k = 0; k < 2; k++) {
    s = step(doc, "tpuci", steps_built[k]);
    assert_non_null(s);
    assert_string_equal(str_at(s, "env/TPUCI_SOURCE"), "https://mirror.example.com/tpuci.git");
    assert_string_equal(str_at(s, "env/TPUCI_REF"), BUILD_COMMIT);
  }
  json_decref(doc);
  free(text);
  /* Nothing recorded: refused, whatever else is given. */
  tpuci__export_opts_init(&opts);
  export_fails(&plan, &opts, no_remote);
  opts.source_ref = "v0.1.0";
  export_fails(&plan, &opts, no_remote);
  opts.per_job = 1;
  export_fails(&plan, &opts, no_remote);
  /* A remote but no commit (or --source without --ref, from a build that
   * was not a git checkout). */
  tpuci__export_opts_init(&opts);
  opts.build_url = BUILD_URL;
  export_fails(&plan, &opts, no_commit);
  tpuci__export_opts_init(&opts);
  opts.source_url = "https://mirror.example.com/tpuci.git";
  export_fails(&plan, &opts, no_commit);
  /* Both given: no build needed. */
  opts.source_ref = "v0.1.0";
  text = export_ok(&plan, &opts);
  doc = yaml_load(text);
  assert_string_equal(str_at(step(doc, "tpuci", "Find tpuci's commit"), "env/TPUCI_REF"),
                      "v0.1.0");
  json_decref(doc);
  free(text);
  opts.source_ref = "";
  export_fails(&plan, &opts, "--source and --ref must not be empty");
  tpuci__plan_free(&plan);
}

/* --package URL: the workflow installs that .deb (apt-get resolves its
 * libraries) instead of building tpuci, in the entries and in the report
 * job; it needs no source, and takes none. */
static void test_package(void **state) {
  static const char url[] = "https://example.com/releases/tpuci_0.1.0_amd64.deb";
  static const char *const jobs[] = {"tpuci", "report"};
  tpuci__plan_t plan;
  tpuci__export_opts_t opts;
  json_t *doc, *steps, *s;
  char *text;
  size_t k;
  (void) state;

  tpuci__plan_init(&plan);
  plan.spec_path = tpuci__strdup("spec.lua");
  add(&plan, "unit", NULL);
  add(&plan, "lint", NULL);
  tpuci__export_opts_init(&opts);
  opts.package = url;
  opts.per_job = 1;
  text = export_ok(&plan, &opts);
  assert_null(strstr(text, "TPUCI_SOURCE"));
  assert_null(strstr(text, "tpuci-install"));
  doc = yaml_load(text);
  for (k = 0; k < 2; k++) {
    steps = json_object_get(json_object_get(json_object_get(doc, "jobs"), jobs[k]), "steps");
    s = json_array_get(steps, k == 0 ? 1 : 0);
    assert_string_equal(str_at(s, "name"), "Install tpuci from its package");
    assert_string_equal(str_at(s, "env/TPUCI_PACKAGE"), url);
    assert_string_equal(str_at(s, "run"),
                        "curl -fsSL --retry 3 -o \"$RUNNER_TEMP/tpuci.deb\" \"$TPUCI_PACKAGE\"\n"
                        "sudo apt-get update\n"
                        "sudo apt-get install -y --no-install-recommends "
                        "\"$RUNNER_TEMP/tpuci.deb\"\n"
                        "tpuci --version\n");
    assert_null(step(doc, jobs[k], "Install tpuci's build dependencies"));
    assert_null(step(doc, jobs[k], "Put tpuci on the PATH"));
  }
  /* The entry then restores the results cache and runs the spec. */
  assert_string_equal(str_at(json_array_get(json_object_get(at(doc, "jobs/tpuci"), "steps"), 2),
                             "name"),
                      "Restore the results cache");
  json_decref(doc);
  free(text);
  /* Not with a source; not empty. */
  opts.source_url = "https://mirror.example.com/tpuci.git";
  export_fails(&plan, &opts, "--package installs tpuci from a .deb, --source and --ref build "
                             "it from git: give one or the other");
  opts.source_url = NULL;
  opts.source_ref = "v1";
  export_fails(&plan, &opts, "--package installs tpuci from a .deb, --source and --ref build "
                             "it from git: give one or the other");
  opts.source_ref = NULL;
  opts.package = "";
  export_fails(&plan, &opts, "the package's URL must be valid UTF-8, not empty");
  tpuci__plan_free(&plan);
}

static int add_image(tpuci__plan_t *plan, const char *ref, tpuci__pull_t pull) {
  plan->images = tpuci__realloc(plan->images, (plan->nimages + 1) * sizeof(*plan->images));
  memset(&plan->images[plan->nimages], 0, sizeof(*plan->images));
  plan->images[plan->nimages].name = tpuci__strdup(ref);
  plan->images[plan->nimages].ref = tpuci__strdup(ref);
  plan->images[plan->nimages].pull = pull;
  return (int) plan->nimages++;
}

static void add_in(tpuci__plan_t *plan, const char *job, const char *name, int image,
                   int shard, int shards) {
  tpuci__instance_t *in;
  add(plan, job, name);
  in = &plan->instances[plan->ninstances - 1];
  if (image >= 0) {
    in->image = image;
    in->runtime = TPUCI__RUNTIME_DOCKER;
  }
  if (shards > 0) {
    in->kind = &tpuci__pytest_config;
    in->kind_config = tpuci__calloc(1, sizeof(tpuci__pytest_t));
    in->shards = shards;
    in->shard = shard;
  }
}

static void test_registries(void **state) {
  char *s;
  (void) state;
  assert_null(tpuci__image_registry("python:3.11"));
  assert_null(tpuci__image_registry("library/python"));
  assert_null(tpuci__image_registry("localhost:5000/x"));
  assert_null(tpuci__image_registry("localhost/x"));
  s = tpuci__image_registry("ghcr.io/org/img:1");
  assert_string_equal(s, "ghcr.io");
  free(s);
  s = tpuci__image_registry("registry:5000/img");
  assert_string_equal(s, "registry:5000");
  free(s);
  s = tpuci__registry_secret("us-docker.pkg.dev", "PASSWORD");
  assert_string_equal(s, "TPUCI_REGISTRY_US_DOCKER_PKG_DEV_PASSWORD");
  free(s);
}

static void test_images(void **state) {
  tpuci__plan_t plan;
  tpuci__export_opts_t opts;
  json_t *doc, *st;
  char *text;
  int py, hub, mine;
  (void) state;

  tpuci__plan_init(&plan);
  plan.spec_path = tpuci__strdup("spec.lua");
  py = add_image(&plan, "ghcr.io/org/py:3.11", TPUCI__PULL_MISSING);
  hub = add_image(&plan, "python:3.12", TPUCI__PULL_ALWAYS);
  mine = add_image(&plan, "tpuci-test/it's:1", TPUCI__PULL_NEVER);
  add_image(&plan, "unused.example/x:1", TPUCI__PULL_MISSING);
  add_in(&plan, "a", NULL, py, 0, 0);
  add_in(&plan, "b", NULL, hub, 0, 0);
  add_in(&plan, "c", NULL, mine, 0, 0);
  add_in(&plan, "d", NULL, -1, 0, 0);
  text = export_ok(&plan, NULL);
  doc = yaml_load(text);
  /* ghcr.io: packages: read, a login with the workflow's token. */
  assert_string_equal(str_at(doc, "permissions/packages"), "read");
  st = step(doc, "tpuci", "Log in to ghcr.io");
  assert_non_null(st);
  assert_string_equal(str_at(st, "env/TPUCI_REGISTRY_PASSWORD"), "${{ secrets.GITHUB_TOKEN }}");
  assert_null(step(doc, "tpuci", "Log in to unused.example"));
  /* Pulled: the images the jobs use, through the environment. */
  assert_string_equal(str_at(doc, "jobs/tpuci/steps/7/name"), "Log in to ghcr.io");
  st = step(doc, "tpuci", "Pull the images");
  assert_string_equal(str_at(st, "env/TPUCI_IMAGES"), "ghcr.io/org/py:3.11 python:3.12");
  assert_non_null(strstr(str_at(st, "run"), "docker pull \"$image\""));
  /* pull = "never": a step named for the user to replace. */
  st = step(doc, "tpuci", "Build or load image tpuci-test/it's:1 (pull = \"never\": replace this step)");
  assert_non_null(st);
  assert_string_equal(str_at(st, "env/TPUCI_IMAGE"), "tpuci-test/it's:1");
  assert_null(json_object_get(st, "if"));
  json_decref(doc);
  free(text);

  /* Per job: each entry lists its images; steps run when it has some. */
  opts_init(&opts);
  opts.per_job = 1;
  text = export_ok(&plan, &opts);
  doc = yaml_load(text);
  assert_string_equal(str_at(doc, "jobs/tpuci/strategy/matrix/include/0/pull/0"), "ghcr.io/org/py:3.11");
  assert_int_equal(json_array_size(at(doc, "jobs/tpuci/strategy/matrix/include/0/build")), 0);
  assert_string_equal(str_at(doc, "jobs/tpuci/strategy/matrix/include/2/build/0"), "tpuci-test/it's:1");
  assert_int_equal(json_array_size(at(doc, "jobs/tpuci/strategy/matrix/include/3/pull")), 0);
  st = step(doc, "tpuci", "Pull the images");
  assert_string_equal(str_at(st, "env/TPUCI_IMAGES"), "${{ join(matrix.pull, ' ') }}");
  assert_string_equal(str_at(st, "if"), "join(matrix.pull, '') != ''");
  st = step(doc, "tpuci", "Build or load image tpuci-test/it's:1 (pull = \"never\": replace this step)");
  assert_string_equal(str_at(st, "if"), "contains(matrix.build, 'tpuci-test/it''s:1')");
  json_decref(doc);
  free(text);
  tpuci__plan_free(&plan);
}

static void test_durations_and_shards(void **state) {
  tpuci__plan_t plan;
  tpuci__export_opts_t opts;
  json_t *doc, *st;
  char *text;
  (void) state;

  tpuci__plan_init(&plan);
  plan.spec_path = tpuci__strdup("spec.lua");
  add_in(&plan, "unit", "unit[shard=1/2]", -1, 1, 2);
  add_in(&plan, "unit", "unit[shard=2/2]", -1, 2, 2);
  add_in(&plan, "lint", NULL, -1, 0, 0);
  /* One job: restored from the newest cache, saved whatever happened. */
  text = export_ok(&plan, NULL);
  doc = yaml_load(text);
  st = step(doc, "tpuci", "Restore the recorded test durations");
  assert_string_equal(str_at(st, "uses"), "actions/cache/restore@v4");
  assert_string_equal(str_at(st, "with/restore-keys"), "tpuci-timings-");
  /* The history across runs travels with the durations. */
  assert_string_equal(str_at(st, "with/path"), ".tpuci/timings.json\n.tpuci/history.jsonl\n");
  st = step(doc, "tpuci", "Save the recorded test durations");
  assert_string_equal(str_at(st, "with/path"), ".tpuci/timings.json\n.tpuci/history.jsonl\n");
  assert_string_equal(str_at(st, "if"), "always() && hashFiles('.tpuci/timings.json') != ''");
  assert_string_equal(str_at(st, "with/key"), "tpuci-timings-${{ github.run_id }}-${{ github.run_attempt }}");
  assert_null(json_object_get(json_object_get(doc, "jobs"), "timings"));
  json_decref(doc);
  free(text);

  /* Per job: a matrix entry per shard; every entry restores the one cache
   * the timings job found; timings-save merges and saves. */
  opts_init(&opts);
  opts.per_job = 1;
  text = export_ok(&plan, &opts);
  doc = yaml_load(text);
  assert_string_equal(str_at(doc, "jobs/tpuci/strategy/matrix/include/0/job"), "unit (shard 1/2)");
  assert_string_equal(str_at(doc, "jobs/tpuci/strategy/matrix/include/0/only"), "unit\\[*shard=1/2[],]*");
  assert_string_equal(str_at(doc, "jobs/tpuci/strategy/matrix/include/1/slug"), "unit-shard-2");
  assert_string_equal(str_at(doc, "jobs/tpuci/strategy/matrix/include/2/only"), "lint");
  assert_int_equal(json_array_size(at(doc, "jobs/tpuci/strategy/matrix/include")), 3);
  assert_string_equal(str_at(doc, "jobs/tpuci/needs"), "timings");
  assert_string_equal(str_at(doc, "jobs/timings/outputs/key"), "${{ steps.find.outputs.cache-matched-key }}");
  st = step(doc, "timings", "Find the newest recorded durations");
  assert_true(json_is_true(at(st, "with/lookup-only")));
  st = step(doc, "tpuci", "Restore the recorded test durations");
  assert_string_equal(str_at(st, "with/key"), "${{ needs.timings.outputs.key || 'tpuci-timings-none' }}");
  st = step(doc, "tpuci", "Upload the recorded test durations");
  assert_string_equal(str_at(st, "with/name"), "tpuci.timings.${{ matrix.slug }}");
  assert_string_equal(str_at(st, "with/path"), ".tpuci/timings.json\n.tpuci/history.jsonl\n");
  assert_string_equal(str_at(doc, "jobs/timings-save/needs/0"), "timings");
  assert_string_equal(str_at(doc, "jobs/timings-save/needs/1"), "tpuci");
  st = step(doc, "timings-save", "Merge the recorded durations");
  assert_non_null(strstr(str_at(st, "run"), "jq -S -s"));
  /* The entries' histories merge into the one they all started from. */
  st = step(doc, "timings-save", "Restore the history the entries started from");
  assert_string_equal(str_at(st, "with/key"), "${{ needs.timings.outputs.key || 'tpuci-timings-none' }}");
  st = step(doc, "timings-save", "Merge the recorded histories");
  assert_non_null(strstr(str_at(st, "run"), "--rawfile base .tpuci/history.jsonl"));
  st = step(doc, "timings-save", "Save the recorded durations");
  assert_string_equal(str_at(st, "with/path"), ".tpuci/timings.json\n.tpuci/history.jsonl\n");
  json_decref(doc);
  free(text);
  tpuci__plan_free(&plan);
}

/* The results cache (docs/cache.md): restored from the newest one before
 * the run (a pull request's first run from its base branch's), saved
 * after it whatever the verdict; per job, each matrix entry has its own. */
static void test_results_cache(void **state) {
  tpuci__plan_t plan;
  tpuci__export_opts_t opts;
  json_t *doc, *st;
  char *text;
  (void) state;

  tpuci__plan_init(&plan);
  plan.spec_path = tpuci__strdup("spec.lua");
  add_in(&plan, "lint", NULL, -1, 0, 0);
  text = export_ok(&plan, NULL);
  doc = yaml_load(text);
  st = step(doc, "tpuci", "Restore the results cache");
  assert_string_equal(str_at(st, "uses"), "actions/cache/restore@v4");
  assert_string_equal(str_at(st, "with/path"), ".tpuci/cache");
  assert_string_equal(str_at(st, "with/key"),
                      "tpuci-results-${{ github.run_id }}-${{ github.run_attempt }}");
  assert_string_equal(str_at(st, "with/restore-keys"), "tpuci-results-");
  st = step(doc, "tpuci", "Save the results cache");
  assert_string_equal(str_at(st, "uses"), "actions/cache/save@v4");
  assert_string_equal(str_at(st, "if"), "always() && hashFiles('.tpuci/cache/*.json') != ''");
  assert_string_equal(str_at(st, "with/key"),
                      "tpuci-results-${{ github.run_id }}-${{ github.run_attempt }}");
  json_decref(doc);
  free(text);

  opts_init(&opts);
  opts.per_job = 1;
  text = export_ok(&plan, &opts);
  doc = yaml_load(text);
  st = step(doc, "tpuci", "Restore the results cache");
  assert_string_equal(str_at(st, "with/restore-keys"), "tpuci-results-${{ matrix.slug }}-");
  st = step(doc, "tpuci", "Save the results cache");
  assert_string_equal(str_at(st, "with/key"),
                      "tpuci-results-${{ matrix.slug }}-${{ github.run_id }}-${{ github.run_attempt }}");
  json_decref(doc);
  free(text);
  tpuci__plan_free(&plan);
}

static void test_runner_options(void **state) {
  tpuci__plan_t plan;
  tpuci__export_opts_t opts;
  tpuci__buf_t b;
  tpuci__err_t err = {0, NULL};
  const char *labels[] = {"self-hosted", "tpu: v5e"};
  json_t *doc;
  char *text;
  (void) state;

  tpuci__plan_init(&plan);
  plan.spec_path = tpuci__strdup("spec.lua");
  add(&plan, "a", NULL);
  opts_init(&opts);
  opts.runs_on = labels;
  opts.n_runs_on = 2;
  opts.timeout_minutes = 45;
  opts.concurrency = "${{ github.workflow }}-${{ github.ref }}";
  opts.cancel_in_progress = 1;
  text = export_ok(&plan, &opts);
  doc = yaml_load(text);
  assert_string_equal(str_at(doc, "jobs/tpuci/runs-on/1"), "tpu: v5e");
  assert_int_equal(json_integer_value(at(doc, "jobs/tpuci/timeout-minutes")), 45);
  assert_string_equal(str_at(doc, "concurrency/group"), "${{ github.workflow }}-${{ github.ref }}");
  assert_true(json_is_true(at(doc, "concurrency/cancel-in-progress")));
  json_decref(doc);
  free(text);
  opts.n_runs_on = 1;
  text = export_ok(&plan, &opts);
  doc = yaml_load(text);
  assert_string_equal(str_at(doc, "jobs/tpuci/runs-on"), "self-hosted");
  json_decref(doc);
  free(text);
  tpuci__buf_init(&b);
  opts.timeout_minutes = 4321;
  assert_int_equal(tpuci__export_github(&plan, &opts, &b, &err), TPUCI_EUSAGE);
  assert_string_equal(err.msg, "timeout-minutes must be from 1 to 4320 (GitHub's limit), not 4321");
  tpuci__err_clear(&err);
  opts.timeout_minutes = 0;
  labels[1] = "";
  opts.n_runs_on = 2;
  assert_int_equal(tpuci__export_github(&plan, &opts, &b, &err), TPUCI_EUSAGE);
  tpuci__err_clear(&err);
  tpuci__buf_free(&b);
  tpuci__plan_free(&plan);
}

/* --schedule: the triggers as a mapping with the cron entry; a schedule
 * GitHub would not read is refused with one line saying why. */
static void test_schedule(void **state) {
  static const struct {
    const char *cron, *err;
  } bad[] = {
      {"0 3 * *", "a cron schedule has 5 fields (minute, hour, day of the month, month, day of "
                  "the week, as in \"0 3 * * 1\"); '0 3 * *' has 4"},
      {"0 3 * * * *", "a cron schedule has 5 fields (minute, hour, day of the month, month, day "
                      "of the week, as in \"0 3 * * 1\"); '0 3 * * * *' has 6"},
      {"", "a cron schedule has 5 fields (minute, hour, day of the month, month, day of the "
           "week, as in \"0 3 * * 1\"); '' has 0"},
      {"@daily", "a cron schedule has 5 fields (minute, hour, day of the month, month, day of "
                 "the week, as in \"0 3 * * 1\"); '@daily' has 1"},
      {"60 3 * * *", "the minute '60' is not 0-59, a range or a step of them"},
      {"0 24 * * *", "the hour '24' is not 0-23, a range or a step of them"},
      {"0 3 0 * *", "the day of the month '0' is not 1-31, a range or a step of them"},
      {"0 3 * 13 *", "the month '13' is not 1-12 (or JAN-DEC), a range or a step of them"},
      {"0 3 * * 7", "the day of the week '7' is not 0-6 (or SUN-SAT), a range or a step of them"},
      {"0 3 * * FUN", "the day of the week 'FUN' is not 0-6 (or SUN-SAT), a range or a step of them"},
      {"0 3 * JAN-MONDAY *", "the month 'JAN-MONDAY' is not 1-12 (or JAN-DEC), a range or a step of them"},
      {"5-1 3 * * *", "the minute range '5-1' runs backwards"},
      {"*/0 3 * * *", "the minute '*/0' is not 0-59, a range or a step of them"},
      {"0,,5 3 * * *", "the minute '' is not 0-59, a range or a step of them"},
      {"0, 3 * * *", "the minute ends with a comma"},
  };
  static const char *const good[] = {"0 3 * * 1", "*/15 * * * *", "0 0,12 1-15/2 JAN-jun mon-FRI",
                                     "59 23 31 12 6", "  0   3 * * SUN  "};
  tpuci__plan_t plan;
  tpuci__export_opts_t opts;
  tpuci__buf_t b;
  tpuci__err_t err = {0, NULL};
  json_t *doc;
  char *text, *want;
  size_t k;
  (void) state;

  tpuci__plan_init(&plan);
  plan.spec_path = tpuci__strdup("spec.lua");
  add(&plan, "a", NULL);
  opts_init(&opts);
  opts.schedule = "30 2 * * 1-5";
  text = export_ok(&plan, &opts);
  assert_non_null(strstr(text, "\n\"on\":\n  push: {}\n  pull_request: {}\n  workflow_dispatch: {}\n"
                               "  schedule:\n  - cron: \"30 2 * * 1-5\"\n"));
  doc = yaml_load(text);
  assert_string_equal(str_at(doc, "on/schedule/0/cron"), "30 2 * * 1-5");
  assert_int_equal(json_object_size(at(doc, "on/workflow_dispatch")), 0);
  json_decref(doc);
  free(text);
  for (k = 0; k < sizeof(good) / sizeof(good[0]); k++) {
    opts.schedule = good[k];
    free(export_ok(&plan, &opts));
  }
  tpuci__buf_init(&b);
  for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
    opts.schedule = bad[k].cron;
    assert_int_equal(tpuci__export_github(&plan, &opts, &b, &err), TPUCI_EUSAGE);
    want = tpuci__printf("the workflow's schedule: %s", bad[k].err);
    assert_string_equal(err.msg, want);
    assert_int_equal(b.len, 0);
    free(want);
    tpuci__err_clear(&err);
  }
  tpuci__buf_free(&b);
  tpuci__plan_free(&plan);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_schedule),
      cmocka_unit_test(test_one_workflow_job),
      cmocka_unit_test(test_options),
      cmocka_unit_test(test_per_job_hard_names),
      cmocka_unit_test(test_github_id),
      cmocka_unit_test(test_matrix_limit),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_empty_plan_single),
      cmocka_unit_test(test_registries),
      cmocka_unit_test(test_images),
      cmocka_unit_test(test_durations_and_shards),
      cmocka_unit_test(test_results_cache),
      cmocka_unit_test(test_runner_options),
      cmocka_unit_test(test_source),
      cmocka_unit_test(test_package),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
