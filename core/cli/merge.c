/* `tpuci merge RUN_DIR...`: several run folders (the runners of a
 * --per-job workflow) made one summary, one JUnit report, one HTML page
 * and one GitHub step summary (docs/reports.md, "Merging runs"). Uses only
 * tpuci.h. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console.h"
#include "merge.h"
#include "usage.h"

enum { OPT_JSON = 256, OPT_YAML, OPT_HTML, OPT_JUNIT };

int tpuci_cli_merge(int argc, char **argv) {
  static const struct option longopts[] = {{"report-json", required_argument, NULL, OPT_JSON},
                                           {"report-yaml", required_argument, NULL, OPT_YAML},
                                           {"report-html", required_argument, NULL, OPT_HTML},
                                           {"junit", required_argument, NULL, OPT_JUNIT},
                                           {"quiet", no_argument, NULL, 'q'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  tpuci_merge_options_t mo;
  tpuci_console_t con;
  tpuci_ctx_t *ctx;
  tpuci_run_t *run;
  const char *step = getenv("GITHUB_STEP_SUMMARY");
  int c, r, quiet = 0, code;
  size_t k;

  tpuci_merge_options_init(&mo);
  optind = 1;
  while ((c = getopt_long(argc, argv, "+qh", longopts, NULL)) != -1) {
    switch (c) {
      case OPT_JSON: mo.report_json = optarg; break;
      case OPT_YAML: mo.report_yaml = optarg; break;
      case OPT_HTML: mo.report_html = optarg; break;
      case OPT_JUNIT: mo.junit = optarg; break;
      case 'q': quiet = 1; break;
      case 'h': return tpuci_cli_help("merge", stdout);
      default: return tpuci_cli_usage_error("merge", "bad option");
    }
  }
  if (optind >= argc)
    return tpuci_cli_usage_error("merge", "missing RUN_DIR: the run folders to merge");
  if (tpuci_ctx_new(&ctx, NULL) != 0) return EXIT_USAGE;
  r = tpuci_merge_runs(ctx, (const char *const *) argv + optind, (size_t) (argc - optind), &mo,
                       &run);
  if (r != 0) {
    fprintf(stderr, "tpuci merge: %s\n", tpuci_console__safe(tpuci_last_error(ctx), 1));
    tpuci_ctx_free(ctx);
    return EXIT_USAGE;
  }
  for (k = 0; k < tpuci_warning_count(ctx); k++)
    fprintf(stderr, "tpuci merge: %s\n", tpuci_console__safe(tpuci_warning(ctx, k), 1));
  printf("tpuci merge: %d run folder%s\n", argc - optind, argc - optind == 1 ? "" : "s");
  tpuci_console_init(&con, stdout, tpuci_run_instance_count(run), tpuci_run_instance_count(run));
  con.color = tpuci_console__color_auto();
  con.quiet = quiet;
  tpuci_console_summary(&con, run);
  /* As `tpuci run` does under GitHub Actions. */
  if (step != NULL && *step != '\0') tpuci_console__gh_step_summary(run);
  tpuci_console_free(&con);
  code = tpuci_run_exit_code(run);
  tpuci_run_free(run);
  tpuci_ctx_free(ctx);
  return code;
}
