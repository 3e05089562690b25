/* `tpuci gc` and `tpuci doctor`: the container engine's (and the TPU
 * VM's) maintenance. Uses only tpuci.h. */
#include <getopt.h>
#include <stdio.h>

#include "console.h"
#include "load.h"
#include "maint.h"
#include "usage.h"

#define usage_error tpuci_cli_usage_error

enum { OPT_DRY_RUN = 256, OPT_ENGINE, OPT_REAL };

int tpuci_cli_gc(int argc, char **argv) {
  static const struct option longopts[] = {{"dry-run", no_argument, NULL, OPT_DRY_RUN},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  tpuci_ctx_t *ctx;
  char *report = NULL;
  int dry = 0, c, r;

  optind = 1;
  while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
    switch (c) {
      case OPT_DRY_RUN: dry = 1; break;
      case 'h': return tpuci_cli_help("gc", stdout);
      default: return usage_error("gc", "bad option");
    }
  }
  if (optind < argc - 1) return usage_error("gc", "too many arguments");
  if (tpuci_ctx_new(&ctx, NULL) != 0) return EXIT_USAGE;
  if (optind < argc && (r = tpuci_load_file(ctx, argv[optind])) != 0) {
    r = tpuci_cli_load_error(ctx, r);
    tpuci_ctx_free(ctx);
    return r;
  }
  r = tpuci_engine_gc(ctx, dry, &report);
  if (report && *report) tpuci_console__puts_safe(stdout, report);
  if (r < 0) fprintf(stderr, "tpuci: %s\n", tpuci_console__safe(tpuci_last_error(ctx), 1));
  else
    printf("tpuci gc: %d object%s %s\n", r, r == 1 ? "" : "s", dry ? "found (dry run)" : "removed");
  tpuci_free(report);
  tpuci_ctx_free(ctx);
  return r < 0 ? EXIT_ENV : EXIT_PASSED;
}

int tpuci_cli_doctor(int argc, char **argv) {
  static const struct option longopts[] = {{"engine", required_argument, NULL, OPT_ENGINE},
                                           {"real", no_argument, NULL, OPT_REAL},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  const char *engine = NULL;
  tpuci_ctx_t *ctx;
  char *report = NULL;
  int c, r, real = 0;

  optind = 1;
  while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
    switch (c) {
      case OPT_ENGINE: engine = optarg; break;
      case OPT_REAL: real = 1; break;
      case 'h': return tpuci_cli_help("doctor", stdout);
      default: return usage_error("doctor", "bad option");
    }
  }
  if (optind < argc - 1) return usage_error("doctor", "too many arguments");
  if (engine != NULL && optind == argc)
    return usage_error("doctor", "--engine needs SPEC (it moves the spec's jobs)");
  if (tpuci_ctx_new(&ctx, NULL) != 0) return EXIT_USAGE;
  tpuci_set_real(ctx, real);
  if (optind < argc) {
    r = tpuci_load_file(ctx, argv[optind]);
    if (r == 0) r = tpuci_cli_apply_engine(ctx, engine);
    else r = tpuci_cli_load_error(ctx, r);
    if (r != 0) {
      tpuci_ctx_free(ctx);
      return r;
    }
    tpuci_cli_print_warnings(ctx);
  }
  r = tpuci_engine_doctor(ctx, &report);
  if (report && *report) tpuci_console__puts_safe(stdout, report);
  if (r < 0) fprintf(stderr, "tpuci: %s\n", tpuci_console__safe(tpuci_last_error(ctx), 1));
  tpuci_free(report);
  report = NULL;
  if (real) {
    /* The TPU checks after the engine's, whatever those said. */
    int t = tpuci_tpu_doctor(ctx, &report);
    if (report && *report) tpuci_console__puts_safe(stdout, report);
    if (t < 0) fprintf(stderr, "tpuci: %s\n", tpuci_console__safe(tpuci_last_error(ctx), 1));
    tpuci_free(report);
    if (r >= 0 && t < 0) r = t;
  }
  tpuci_ctx_free(ctx);
  return r < 0 ? EXIT_ENV : EXIT_PASSED;
}
