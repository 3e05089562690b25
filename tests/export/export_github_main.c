/* tpuci-export-github: writes the GitHub Actions workflow of a spec.
 *
 *   tpuci-export-github [--per-job] [--spec PATH] [--source URL] [--ref REF]
 *                       [--name NAME] [--package URL]
 *                       [--build-source URL] [--build-commit SHA] SPEC.lua
 *
 * Loads SPEC.lua as `tpuci plan` does and prints the workflow; --spec is
 * the path the workflow gives `tpuci run` (default: SPEC.lua as given).
 * Test-only: --build-source and --build-commit stand for what a build
 * records of its checkout (cmake/build_info.cmake), which `tpuci export
 * github` takes from its build; without them the driver has none.
 * Exit 0, 1 when the workflow cannot be made (the message says why), 2 on
 * a usage or spec error. The tests use it on real specs until the CLI
 * has `tpuci export github`. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/github.h"
#include "kind/kinds.h"
#include "plan/plan.h"
#include "spec/spec.h"
#include "base/util.h"

static int usage(void) {
  fprintf(stderr, "usage: tpuci-export-github [--per-job] [--spec PATH] [--source URL] "
                  "[--ref REF] [--name NAME] [--package URL] [--build-source URL] "
                  "[--build-commit SHA] SPEC.lua\n");
  return 2;
}

int main(int argc, char **argv) {
  tpuci__export_opts_t opts;
  const tpuci__kind_spec_t *kinds[TPUCI__NKINDS + 1];
  tpuci__spec_limits_t limits;
  tpuci__plan_t plan;
  tpuci__err_t err = {0, NULL};
  tpuci__buf_t out;
  const char *path = NULL;
  char *chunk = NULL, *dir, dirbuf[PATH_MAX], *slash;
  size_t len;
  int i, r;

  tpuci__export_opts_init(&opts);
  for (i = 1; i < argc; i++) {
    const char **dst = NULL;
    if (strcmp(argv[i], "--per-job") == 0) opts.per_job = 1;
    else if (strcmp(argv[i], "--spec") == 0) dst = &opts.spec;
    else if (strcmp(argv[i], "--source") == 0) dst = &opts.source_url;
    else if (strcmp(argv[i], "--ref") == 0) dst = &opts.source_ref;
    else if (strcmp(argv[i], "--name") == 0) dst = &opts.name;
    else if (strcmp(argv[i], "--package") == 0) dst = &opts.package;
    else if (strcmp(argv[i], "--build-source") == 0) dst = &opts.build_url;
    else if (strcmp(argv[i], "--build-commit") == 0) dst = &opts.build_commit;
    else if (argv[i][0] == '-' || path != NULL) return usage();
    else path = argv[i];
    if (dst != NULL) {
      if (++i == argc) return usage();
      *dst = argv[i];
    }
  }
  if (path == NULL) return usage();
  if (tpuci__read_file(path, &chunk, &len) != 0) {
    fprintf(stderr, "tpuci-export-github: cannot read %s\n", path);
    return 2;
  }
  /* The spec's folder, absolute, resolves its relative paths. */
  dir = tpuci__strdup(path);
  slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  if (realpath(slash ? (*dir ? dir : "/") : ".", dirbuf) == NULL) {
    fprintf(stderr, "tpuci-export-github: cannot resolve the folder of %s\n", path);
    free(dir);
    free(chunk);
    return 2;
  }
  free(dir);
  tpuci__plan_init(&plan);
  plan.spec_path = tpuci__strdup(path);
  plan.spec_dir = tpuci__strdup(dirbuf);
  limits.timeout_ms = 10000;
  limits.memory_bytes = 256u << 20;
  limits.real = 0;
  tpuci__kind_specs(kinds);
  limits.kinds = kinds;
  r = tpuci__spec_load(&plan, chunk, len, path, dirbuf, &limits, &err);
  free(chunk);
  if (r != 0) {
    fprintf(stderr, "tpuci-export-github: %s\n", err.msg ? err.msg : "cannot load the spec");
    tpuci__err_clear(&err);
    tpuci__plan_free(&plan);
    return 2;
  }
  tpuci__buf_init(&out);
  r = tpuci__export_github(&plan, &opts, &out, &err);
  if (r == 0) {
    fwrite(out.data, 1, out.len, stdout);
  } else {
    fprintf(stderr, "tpuci-export-github: %s\n", err.msg);
    tpuci__err_clear(&err);
  }
  tpuci__buf_free(&out);
  tpuci__plan_free(&plan);
  return r == 0 ? 0 : 1;
}
