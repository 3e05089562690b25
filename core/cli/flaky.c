/* `tpuci flaky`: the history across runs as a report, the quarantine
 * entries it can release, and entries to propose; and its sibling `tpuci
 * select --stats`, what the selection saved and missed (docs/cli.md). Uses
 * only tpuci.h. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console.h"
#include "flaky.h"
#include "usage.h"

#define usage_error tpuci_cli_usage_error

enum {
  OPT_STATE_DIR = 256,
  OPT_RUN,
  OPT_JSON,
  OPT_RELEASE,
  OPT_PROPOSE,
  OPT_QUARANTINE,
  OPT_RELEASE_AFTER,
  OPT_MIN_RATE,
  OPT_CODEOWNERS,
  OPT_STATS
};

/* --release-after K: 0 or the exit code of a bad number. */
int tpuci_cli_release_after(const char *cmd, const char *arg, int *out) {
  char *end;
  long n = strtol(arg, &end, 10);
  if (*arg == '\0' || *end || n < 1 || n > 100)
    return usage_error(cmd, "--release-after needs a number of runs from 1 to 100");
  *out = (int) n;
  return 0;
}

/* Says why a flaky command failed; frees the context. */
static int flaky_failed(tpuci_ctx_t *ctx, int r) {
  const char *error = tpuci_last_error(ctx);
  fprintf(stderr, "tpuci: %s\n",
          *error ? tpuci_console__safe(error, 1) : "cannot read the history");
  tpuci_ctx_free(ctx);
  return r == TPUCI_ENOMATCH || r == TPUCI_ESPEC || r == TPUCI_EUSAGE ? EXIT_USAGE : EXIT_ENV;
}

int tpuci_cli_flaky(int argc, char **argv) {
  static const struct option longopts[] = {
      {"state-dir", required_argument, NULL, OPT_STATE_DIR},
      {"runs", required_argument, NULL, OPT_RUN},
      {"json", no_argument, NULL, OPT_JSON},
      {"release", no_argument, NULL, OPT_RELEASE},
      {"propose", no_argument, NULL, OPT_PROPOSE},
      {"quarantine", required_argument, NULL, OPT_QUARANTINE},
      {"release-after", required_argument, NULL, OPT_RELEASE_AFTER},
      {"min-rate", required_argument, NULL, OPT_MIN_RATE},
      {"codeowners", required_argument, NULL, OPT_CODEOWNERS},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  const char *state = NULL, *quarantine = NULL, *owners = NULL;
  tpuci_ctx_t *ctx;
  char *text = NULL, *end;
  long runs = 20;
  double rate = -1;
  int c, r, json = 0, release = 0, propose = 0, after = 0;

  optind = 1;
  while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
    switch (c) {
      case OPT_STATE_DIR: state = optarg; break;
      case OPT_RUN:
        runs = strtol(optarg, &end, 10);
        if (*optarg == '\0' || *end || runs < 0 || runs > 100000)
          return usage_error("flaky", "--runs needs a number of runs (0: all)");
        break;
      case OPT_JSON: json = 1; break;
      case OPT_RELEASE: release = 1; break;
      case OPT_PROPOSE: propose = 1; break;
      case OPT_QUARANTINE: quarantine = optarg; break;
      case OPT_RELEASE_AFTER:
        if ((r = tpuci_cli_release_after("flaky", optarg, &after)) != 0) return r;
        break;
      case OPT_MIN_RATE:
        rate = strtod(optarg, &end);
        if (*optarg == '\0' || *end || !(rate > 0 && rate <= 1))
          return usage_error("flaky", "--min-rate needs a flip rate above 0, at most 1 (0.1: "
                                      "one run in ten flipped)");
        break;
      case OPT_CODEOWNERS: owners = optarg; break;
      case 'h': return tpuci_cli_help("flaky", stdout);
      default: return usage_error("flaky", "bad option");
    }
  }
  if (optind < argc) return usage_error("flaky", "too many arguments");
  if (release && propose) return usage_error("flaky", "--release or --propose, not both");
  if (!release && !propose && quarantine)
    return usage_error("flaky", "--quarantine goes with --release or --propose");
  if (!release && after) return usage_error("flaky", "--release-after goes with --release");
  if (!propose && (rate >= 0 || owners))
    return usage_error("flaky", "--min-rate and --codeowners go with --propose");
  if ((release || propose) && json)
    return usage_error("flaky",
                       release ? "--release prints text only" : "--propose prints YAML only");
  if (tpuci_ctx_new(&ctx, NULL) != 0) return EXIT_ENV;
  if (propose) {
    r = tpuci_flaky_propose(ctx, state, quarantine, owners, (int) runs, rate >= 0 ? rate : 0.1,
                            &text);
    if (r != 0) return flaky_failed(ctx, r);
    tpuci_console__puts_safe(stdout, text);
  } else if (release) {
    r = tpuci_flaky_release(ctx, state, quarantine, after, &text);
    if (r != 0) return flaky_failed(ctx, r);
    if (*text == '\0')
      printf("no quarantine entry is ready to release (%d passing runs in a row needed)\n",
             after ? after : 10);
    else tpuci_console__puts_safe(stdout, text);
  } else {
    r = tpuci_flaky_report(ctx, state, (int) runs, json, &text);
    if (r != 0) return flaky_failed(ctx, r == TPUCI_ENOMATCH ? r : TPUCI_EIO);
    tpuci_console__puts_safe(stdout, text);
  }
  tpuci_free(text);
  tpuci_ctx_free(ctx);
  return EXIT_PASSED;
}

int tpuci_cli_select(int argc, char **argv) {
  static const struct option longopts[] = {{"state-dir", required_argument, NULL, OPT_STATE_DIR},
                                           {"stats", no_argument, NULL, OPT_STATS},
                                           {"json", no_argument, NULL, OPT_JSON},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  const char *state = NULL;
  tpuci_ctx_t *ctx;
  char *text = NULL;
  int c, r, json = 0, stats = 0;

  optind = 1;
  while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
    switch (c) {
      case OPT_STATE_DIR: state = optarg; break;
      case OPT_STATS: stats = 1; break;
      case OPT_JSON: json = 1; break;
      case 'h': return tpuci_cli_help("select", stdout);
      default: return usage_error("select", "bad option");
    }
  }
  if (optind < argc) return usage_error("select", "too many arguments");
  if (!stats) return usage_error("select", "say what: tpuci select --stats");
  if (tpuci_ctx_new(&ctx, NULL) != 0) return EXIT_ENV;
  r = tpuci_select_stats(ctx, state, json, &text);
  if (r != 0) return flaky_failed(ctx, r == TPUCI_ENOMATCH ? r : TPUCI_EIO);
  tpuci_console__puts_safe(stdout, text);
  tpuci_free(text);
  tpuci_ctx_free(ctx);
  return EXIT_PASSED;
}
