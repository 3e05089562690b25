/* The tpuci command. It uses nothing but the public API (tpuci.h). */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "completion.h"
#include "console.h"
#include "flaky.h"
#include "load.h"
#include "maint.h"
#include "merge.h"
#include "usage.h"
#include "tpuci.h"

#define usage_error tpuci_cli_usage_error

/* Options shared by run and plan. */
typedef struct {
  const char **only;
  size_t nonly;
  const char **tests; /* run --test */
  size_t ntests;
  int repeat; /* run --repeat; 0: none */
} selection_t;

static void list_add(const char ***list, size_t *n, const char *s) {
  const char **p = realloc(*list, (*n + 1) * sizeof(*p));
  if (p == NULL) {
    fputs("tpuci: out of memory\n", stderr);
    exit(EXIT_USAGE);
  }
  *list = p;
  (*list)[(*n)++] = s;
}

static void selection_add(selection_t *s, const char *glob) { list_add(&s->only, &s->nonly, glob); }

static void selection_free(selection_t *s) {
  free(s->only);
  free(s->tests);
}

static int load_and_select(tpuci_ctx_t *ctx, const char *spec, selection_t *sel) {
  int r = tpuci_load_file(ctx, spec);
  if (r != 0) return tpuci_cli_load_error(ctx, r);
  tpuci_cli_print_warnings(ctx);
  r = tpuci_plan_select(ctx, sel->only, sel->nonly);
  if (r < 0) return tpuci_cli_load_error(ctx, r);
  if (sel->ntests > 0 && (r = tpuci_plan_tests(ctx, sel->tests, sel->ntests)) < 0)
    return tpuci_cli_load_error(ctx, r);
  if (sel->repeat > 0 && (r = tpuci_plan_repeat(ctx, sel->repeat)) < 0)
    return tpuci_cli_load_error(ctx, r);
  return 0;
}

enum {
  OPT_ONLY = 256,
  OPT_FAIL_FAST,
  OPT_DEADLINE,
  OPT_GRACE,
  OPT_STRICT_FLAKY,
  OPT_KEEP_FAILED,
  OPT_STATE_DIR,
  OPT_COLOR,
  OPT_JSON,
  OPT_DRY_RUN,
  OPT_REPORT_JSON,
  OPT_REPORT_YAML,
  OPT_REPORT_HTML,
  OPT_PER_JOB,
  OPT_SPEC,
  OPT_SOURCE,
  OPT_REF,
  OPT_NAME,
  OPT_FAILED,
  OPT_RUN,
  OPT_YAML,
  OPT_PLAIN,
  OPT_EMULATE,
  OPT_JUNIT,
  OPT_EMULATED,
  OPT_NO_MOUNTS,
  OPT_RESULTS_CLAIM,
  OPT_JOBSET,
  OPT_ENGINE,
  OPT_RUNS_ON,
  OPT_TIMEOUT_MINUTES,
  OPT_CONCURRENCY,
  OPT_CANCEL_IN_PROGRESS,
  OPT_REAL,
  OPT_ALIVE,
  OPT_QUARANTINE,
  OPT_RELEASE_AFTER,
  OPT_REPEAT,
  OPT_TEST,
  OPT_JUNIT_FILE_LINE,
  OPT_SCHEDULE,
  OPT_NO_CACHE,
  OPT_KEYS,
  OPT_AFFECTED,
  OPT_NO_SELECT,
  OPT_PACKAGE
};

/* `tpuci run` and `tpuci rerun` share their options. */
typedef struct {
  tpuci_run_options_t ro;
  selection_t sel;
  const char *color;
  int verbose, quiet, plain;
  int failed;         /* rerun --failed */
  const char *run_id; /* rerun --run */
  const char *engine; /* --engine */
  int real;           /* --real: the topologies are real TPU hardware */
  uint64_t alive_ms;  /* --alive: plain output's alive lines; 0: none */
} run_cli_t;

static int parse_run(const char *cmd, int argc, char **argv, run_cli_t *rc) {
  static const struct option longopts[] = {
      {"jobs", required_argument, NULL, 'j'},
      {"only", required_argument, NULL, OPT_ONLY},
      {"fail-fast", no_argument, NULL, OPT_FAIL_FAST},
      {"deadline", required_argument, NULL, OPT_DEADLINE},
      {"grace", required_argument, NULL, OPT_GRACE},
      {"strict-flaky", no_argument, NULL, OPT_STRICT_FLAKY},
      {"keep-failed", no_argument, NULL, OPT_KEEP_FAILED},
      {"state-dir", required_argument, NULL, OPT_STATE_DIR},
      {"verbose", no_argument, NULL, 'v'},
      {"quiet", no_argument, NULL, 'q'},
      {"color", required_argument, NULL, OPT_COLOR},
      {"report-json", required_argument, NULL, OPT_REPORT_JSON},
      {"report-yaml", required_argument, NULL, OPT_REPORT_YAML},
      {"junit", required_argument, NULL, OPT_JUNIT},
      {"junit-file-line", no_argument, NULL, OPT_JUNIT_FILE_LINE},
      {"report-html", required_argument, NULL, OPT_REPORT_HTML},
      {"failed", no_argument, NULL, OPT_FAILED},
      {"plain", no_argument, NULL, OPT_PLAIN},
      {"run", required_argument, NULL, OPT_RUN},
      {"engine", required_argument, NULL, OPT_ENGINE},
      {"real", no_argument, NULL, OPT_REAL},
      {"alive", required_argument, NULL, OPT_ALIVE},
      {"quarantine", required_argument, NULL, OPT_QUARANTINE},
      {"release-after", required_argument, NULL, OPT_RELEASE_AFTER},
      {"repeat", required_argument, NULL, OPT_REPEAT},
      {"test", required_argument, NULL, OPT_TEST},
      {"no-cache", no_argument, NULL, OPT_NO_CACHE},
      {"affected", no_argument, NULL, OPT_AFFECTED},
      {"no-select", no_argument, NULL, OPT_NO_SELECT},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  int c, r, rerun = strcmp(cmd, "rerun") == 0;

  memset(rc, 0, sizeof(*rc));
  tpuci_run_options_init(&rc->ro);
  rc->ro.handle_signals = 1;
  rc->color = "auto";
  rc->alive_ms = 60000;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+j:vqh", longopts, NULL)) != -1) {
    switch (c) {
      case 'j': {
        char *end;
        long n = strtol(optarg, &end, 10);
        if (*end || n < 1 || n > 4096) return usage_error(cmd, "-j needs a number from 1 to 4096");
        rc->ro.jobs = (int) n;
        break;
      }
      case OPT_ONLY: selection_add(&rc->sel, optarg); break;
      case OPT_FAIL_FAST: rc->ro.fail_fast = 1; break;
      case OPT_DEADLINE:
        if (tpuci_parse_duration(optarg, &rc->ro.deadline_ms) != 0 || rc->ro.deadline_ms == 0)
          return usage_error(cmd, "--deadline needs a duration such as 30m");
        break;
      case OPT_GRACE:
        if (tpuci_parse_duration(optarg, &rc->ro.grace_ms) != 0)
          return usage_error(cmd, "--grace needs a duration such as 10s");
        break;
      case OPT_STRICT_FLAKY: rc->ro.strict_flaky = 1; break;
      case OPT_KEEP_FAILED: rc->ro.keep_failed = 1; break;
      case OPT_NO_CACHE: rc->ro.no_cache = 1; break;
      case OPT_AFFECTED: rc->ro.affected = 1; break;
      case OPT_NO_SELECT: rc->ro.no_select = 1; break;
      case OPT_STATE_DIR: rc->ro.state_dir = optarg; break;
      case 'v': rc->verbose = 1; break;
      case 'q': rc->quiet = 1; break;
      case OPT_COLOR:
        if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never"))
          return usage_error(cmd, "--color is auto, always or never");
        rc->color = optarg;
        break;
      case OPT_PLAIN: rc->plain = 1; break;
      case OPT_REPORT_JSON: rc->ro.report_json = optarg; break;
      case OPT_REPORT_YAML: rc->ro.report_yaml = optarg; break;
      case OPT_JUNIT: rc->ro.junit = optarg; break;
      case OPT_JUNIT_FILE_LINE: rc->ro.junit_file_line = 1; break;
      case OPT_REPORT_HTML: rc->ro.report_html = optarg; break;
      case OPT_FAILED:
        if (!rerun) return usage_error(cmd, "--failed belongs to `tpuci rerun`");
        rc->failed = 1;
        break;
      case OPT_RUN:
        if (!rerun) return usage_error(cmd, "--run belongs to `tpuci rerun`");
        rc->run_id = optarg;
        break;
      case OPT_ENGINE:
        /* The library says which names are engines (tpuci_plan_engine). */
        rc->engine = optarg;
        break;
      case OPT_REAL: rc->real = 1; break;
      case OPT_ALIVE:
        if (tpuci_parse_duration(optarg, &rc->alive_ms) != 0 ||
            (rc->alive_ms > 0 && rc->alive_ms < 1000))
          return usage_error(cmd,
                             "--alive needs a duration of at least 1s (or 0: none), such as 60s");
        break;
      case OPT_QUARANTINE: rc->ro.quarantine = optarg; break;
      case OPT_RELEASE_AFTER:
        if ((r = tpuci_cli_release_after(cmd, optarg, &rc->ro.release_after)) != 0) return r;
        break;
      case OPT_REPEAT: {
        char *end;
        long n = strtol(optarg, &end, 10);
        if (rerun) return usage_error(cmd, "--repeat belongs to `tpuci run`");
        if (*optarg == '\0' || *end || n < 1 || n > 1000)
          return usage_error(cmd, "--repeat needs a number from 1 to 1000");
        rc->sel.repeat = (int) n;
        break;
      }
      case OPT_TEST:
        if (rerun) return usage_error(cmd, "--test belongs to `tpuci run`");
        list_add(&rc->sel.tests, &rc->sel.ntests, optarg);
        break;
      case 'h': return tpuci_cli_help(cmd, stdout) == 0 ? -1 : EXIT_USAGE;
      default: return usage_error(cmd, "bad option");
    }
  }
  if (rerun && !rc->failed) return usage_error(cmd, "say what to run again: --failed");
  if (rerun ? optind < argc - 1 : optind != argc - 1)
    return usage_error(cmd, optind >= argc ? "missing SPEC" : "too many arguments");
  return 0;
}

/* The board on a terminal outside CI that can move its cursor; GitHub's
 * commands under Actions; plain lines otherwise. */
static tpuci_console_style_t console_style(const run_cli_t *rc) {
  const char *gh = getenv("GITHUB_ACTIONS");
  if (gh && strcmp(gh, "true") == 0) return TPUCI_CONSOLE_GITHUB;
  if (rc->plain || rc->verbose || !isatty(STDOUT_FILENO)) return TPUCI_CONSOLE_PLAIN;
  if (tpuci_console__in_ci() || tpuci_console__dumb_term()) return TPUCI_CONSOLE_PLAIN;
  return TPUCI_CONSOLE_BOARD;
}

/* Loads the spec, selects, runs, prints; returns the exit code. */
static int execute_run(run_cli_t *rc, const char *spec) {
  tpuci_console_t con;
  tpuci_ctx_t *ctx;
  tpuci_run_t *run;
  size_t i, nsel = 0;
  int r, code;

  if (tpuci_ctx_new(&ctx, NULL) != 0) return EXIT_USAGE;
  tpuci_set_real(ctx, rc->real);
  if (rc->failed) {
    r = tpuci_load_file(ctx, spec);
    if (r != 0) {
      r = tpuci_cli_load_error(ctx, r);
      tpuci_ctx_free(ctx);
      return r;
    }
    tpuci_cli_print_warnings(ctx);
    if ((r = tpuci_cli_apply_engine(ctx, rc->engine)) != 0) {
      tpuci_ctx_free(ctx);
      return r;
    }
    r = tpuci_plan_select_unpassed(ctx, rc->ro.state_dir, rc->run_id);
    if (r < 0) {
      fprintf(stderr, "tpuci: %s\n", tpuci_console__safe(tpuci_last_error(ctx), 1));
      tpuci_ctx_free(ctx);
      return EXIT_USAGE;
    }
    if (r == 0) {
      printf("tpuci rerun: nothing to run again: every instance passed in run %s\n",
             rc->run_id ? tpuci_console__safe(rc->run_id, 0) : "latest");
      tpuci_ctx_free(ctx);
      return EXIT_PASSED;
    }
    printf("tpuci rerun: %d instance%s did not pass; running %s again\n", r, r == 1 ? "" : "s",
           r == 1 ? "it" : "them");
  } else {
    r = load_and_select(ctx, spec, &rc->sel);
    if (r == 0) r = tpuci_cli_apply_engine(ctx, rc->engine);
    if (r != 0) {
      tpuci_ctx_free(ctx);
      return r;
    }
  }

  for (i = 0; i < tpuci_instance_count(ctx); i++) nsel += tpuci_instance_selected(ctx, i) != 0;
  tpuci_console_init(&con, stdout, tpuci_instance_count(ctx), nsel);
  con.verbose = rc->verbose;
  con.quiet = rc->quiet;
  con.style = console_style(rc);
  if (strcmp(rc->color, "always") == 0) con.color = 1;
  else if (strcmp(rc->color, "auto") == 0) con.color = tpuci_console__color_auto();
  if (con.style == TPUCI_CONSOLE_BOARD) {
    rc->ro.tick_ms = 250;
    tpuci_console_expect(&con, ctx, rc->ro.state_dir);
  } else if (rc->alive_ms > 0 && !rc->quiet) {
    /* Alive lines, looked for once a second. */
    con.alive_ms = rc->alive_ms;
    rc->ro.tick_ms = 1000;
  }
  rc->ro.on_event = tpuci_console_event;
  rc->ro.userdata = &con;

  r = tpuci_run_start(ctx, &rc->ro, &run);
  if (r != 0) {
    /* It could not start: no event was told. */
    fprintf(stderr, "tpuci: %s\n", tpuci_console__safe(tpuci_last_error(ctx), 1));
    tpuci_console_free(&con);
    tpuci_ctx_free(ctx);
    return r == TPUCI_ENOMATCH || r == TPUCI_EUSAGE || r == TPUCI_ESPEC ? EXIT_USAGE : EXIT_ENV;
  }
  if (tpuci_run_error(run) != 0)
    fprintf(stderr, "tpuci: %s\n", tpuci_console__safe(tpuci_run_error_message(run), 1));
  tpuci_console_summary(&con, run);
  if (rc->sel.repeat > 0) {
    char *rates = NULL;
    if (tpuci_repeat_report(run, &rates) == 0) tpuci_console__puts_safe(stdout, rates);
    tpuci_free(rates);
  }
  code = tpuci_run_exit_code(run);
  tpuci_console_free(&con);
  tpuci_run_free(run);
  tpuci_ctx_free(ctx);
  return code;
}

static int cmd_run(const char *cmd, int argc, char **argv) {
  run_cli_t rc;
  char *spec = NULL;
  int r = parse_run(cmd, argc, argv, &rc);

  if (r != 0) {
    selection_free(&rc.sel);
    return r < 0 ? EXIT_PASSED : r;
  }
  if (optind < argc) {
    spec = strdup(argv[optind]);
  } else {
    tpuci_ctx_t *past;
    r = tpuci_ctx_new(&past, NULL);
    if (r == 0) r = tpuci_run_spec_path(past, rc.ro.state_dir, rc.run_id, &spec);
    tpuci_ctx_free(past);
    if (r != 0) {
      selection_free(&rc.sel);
      fprintf(stderr, "tpuci rerun: no recorded run to take the spec from; give SPEC\n");
      return EXIT_USAGE;
    }
  }
  r = execute_run(&rc, spec);
  free(spec);
  selection_free(&rc.sel);
  return r;
}

static int cmd_show(int argc, char **argv) {
  static const struct option longopts[] = {{"state-dir", required_argument, NULL, OPT_STATE_DIR},
                                           {"json", no_argument, NULL, OPT_JSON},
                                           {"yaml", no_argument, NULL, OPT_YAML},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  const char *state = NULL, *format = NULL;
  tpuci_console_t con;
  tpuci_ctx_t *ctx;
  tpuci_run_t *run = NULL;
  int c, r, code;

  optind = 1;
  while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
    switch (c) {
      case OPT_STATE_DIR: state = optarg; break;
      case OPT_JSON: format = "json"; break;
      case OPT_YAML: format = "yaml"; break;
      case 'h': return tpuci_cli_help("show", stdout);
      default: return usage_error("show", "bad option");
    }
  }
  if (optind < argc - 1) return usage_error("show", "too many arguments");
  if (tpuci_ctx_new(&ctx, NULL) != 0) return EXIT_USAGE;
  r = tpuci_load_run(ctx, state, optind < argc ? argv[optind] : NULL, &run);
  if (r != 0) {
    fprintf(stderr, "tpuci: %s\n", tpuci_console__safe(tpuci_last_error(ctx), 1));
    tpuci_ctx_free(ctx);
    return EXIT_USAGE;
  }
  if (format) {
    char *text;
    r = tpuci_report(run, format, &text);
    if (r == 0) {
      /* JSON stays the same JSON made safe; YAML is printed as it is. */
      if (strcmp(format, "json") == 0) tpuci_console__puts_safe(stdout, text);
      else fputs(text, stdout);
      tpuci_free(text);
    }
  } else {
    printf("run %s (%s)\n", tpuci_console__safe(tpuci_run_id(run), 0),
           tpuci_console__safe(tpuci_console__path(tpuci_run_dir(run)), 0));
    tpuci_console_init(&con, stdout, tpuci_run_instance_count(run), tpuci_run_instance_count(run));
    con.color = tpuci_console__color_auto();
    tpuci_console_summary(&con, run);
    tpuci_console_free(&con);
  }
  code = r == 0 ? tpuci_run_exit_code(run) : EXIT_USAGE;
  tpuci_run_free(run);
  tpuci_ctx_free(ctx);
  return code;
}

static int cmd_export(int argc, char **argv) {
  static const struct option longopts[] = {
      {"per-job", no_argument, NULL, OPT_PER_JOB},
      {"spec", required_argument, NULL, OPT_SPEC},
      {"source", required_argument, NULL, OPT_SOURCE},
      {"ref", required_argument, NULL, OPT_REF},
      {"name", required_argument, NULL, OPT_NAME},
      {"emulated", no_argument, NULL, OPT_EMULATED},
      {"real", no_argument, NULL, OPT_REAL},
      {"only", required_argument, NULL, OPT_ONLY},
      {"run", required_argument, NULL, OPT_RUN},
      {"no-mounts", no_argument, NULL, OPT_NO_MOUNTS},
      {"results-claim", required_argument, NULL, OPT_RESULTS_CLAIM},
      {"jobset", no_argument, NULL, OPT_JOBSET},
      {"runs-on", required_argument, NULL, OPT_RUNS_ON},
      {"timeout-minutes", required_argument, NULL, OPT_TIMEOUT_MINUTES},
      {"concurrency", required_argument, NULL, OPT_CONCURRENCY},
      {"cancel-in-progress", no_argument, NULL, OPT_CANCEL_IN_PROGRESS},
      {"schedule", required_argument, NULL, OPT_SCHEDULE},
      {"package", required_argument, NULL, OPT_PACKAGE},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  tpuci_export_options_t eo;
  selection_t sel = {NULL, 0, NULL, 0, 0}, runs_on = {NULL, 0, NULL, 0, 0};
  tpuci_ctx_t *ctx;
  const char *format, *wrong = NULL;
  char *text = NULL;
  size_t nwarn;
  int k8s, c, r, real = 0;

  tpuci_export_options_init(&eo);
  if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))
    return tpuci_cli_help("export", stdout);
  if (argc < 2 || (strcmp(argv[1], "github") != 0 && strcmp(argv[1], "kubernetes") != 0))
    return usage_error("export",
                       "say the format: tpuci export github SPEC, or tpuci export kubernetes SPEC");
  format = argv[1];
  k8s = strcmp(format, "kubernetes") == 0;
  /* The format is the first word; options follow it. */
  argc--;
  argv++;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
    switch (c) {
      case OPT_PER_JOB:
        eo.per_job = 1;
        if (k8s) wrong = "--per-job";
        break;
      case OPT_SPEC:
        eo.spec = optarg;
        if (k8s) wrong = "--spec";
        break;
      case OPT_SOURCE:
        eo.source_url = optarg;
        if (k8s) wrong = "--source";
        break;
      case OPT_REF:
        eo.source_ref = optarg;
        if (k8s) wrong = "--ref";
        break;
      case OPT_NAME:
        eo.name = optarg;
        if (k8s) wrong = "--name";
        break;
      case OPT_EMULATED:
        eo.emulated = 1;
        if (!k8s) wrong = "--emulated";
        break;
      case OPT_REAL:
        real = 1;
        if (k8s) wrong = "--real";
        break;
      case OPT_ONLY:
        selection_add(&sel, optarg);
        if (!k8s) wrong = "--only";
        break;
      case OPT_RUN:
        eo.run = optarg;
        if (!k8s) wrong = "--run";
        break;
      case OPT_NO_MOUNTS:
        eo.no_mounts = 1;
        if (!k8s) wrong = "--no-mounts";
        break;
      case OPT_RESULTS_CLAIM:
        eo.results_claim = optarg;
        if (!k8s) wrong = "--results-claim";
        break;
      case OPT_JOBSET:
        eo.jobset = 1;
        if (!k8s) wrong = "--jobset";
        break;
      case OPT_RUNS_ON:
        selection_add(&runs_on, optarg);
        if (k8s) wrong = "--runs-on";
        break;
      case OPT_TIMEOUT_MINUTES: {
        char *end;
        long n = strtol(optarg, &end, 10);
        if (k8s) wrong = "--timeout-minutes";
        if (*end || n < 1 || n > 4320) {
          free(sel.only);
          free(runs_on.only);
          return usage_error("export", "--timeout-minutes needs a number from 1 to 4320");
        }
        eo.timeout_minutes = (int) n;
        break;
      }
      case OPT_CONCURRENCY:
        eo.concurrency = optarg;
        if (k8s) wrong = "--concurrency";
        break;
      case OPT_CANCEL_IN_PROGRESS:
        eo.cancel_in_progress = 1;
        if (k8s) wrong = "--cancel-in-progress";
        break;
      case OPT_SCHEDULE:
        eo.schedule = optarg;
        if (k8s) wrong = "--schedule";
        break;
      case OPT_PACKAGE:
        eo.package = optarg;
        if (k8s) wrong = "--package";
        break;
      case 'h':
        free(sel.only);
        free(runs_on.only);
        return tpuci_cli_help("export", stdout);
      default:
        free(sel.only);
        free(runs_on.only);
        return usage_error("export", "bad option");
    }
  }
  eo.runs_on = runs_on.only;
  eo.n_runs_on = runs_on.nonly;
  if (eo.cancel_in_progress && eo.concurrency == NULL && wrong == NULL) {
    free(sel.only);
    free(runs_on.only);
    return usage_error("export", "--cancel-in-progress needs --concurrency GROUP");
  }
  if (wrong != NULL) {
    char msg[96];
    free(sel.only);
    free(runs_on.only);
    snprintf(msg, sizeof(msg), "%s is not an option of export %s", wrong, format);
    return usage_error("export", msg);
  }
  if (optind != argc - 1) {
    free(sel.only);
    free(runs_on.only);
    return usage_error("export", optind >= argc ? "missing SPEC" : "too many arguments");
  }
  if (tpuci_ctx_new(&ctx, NULL) != 0) {
    free(sel.only);
    free(runs_on.only);
    return EXIT_USAGE;
  }
  tpuci_set_real(ctx, real);
  r = load_and_select(ctx, argv[optind], &sel);
  free(sel.only);
  if (r != 0) {
    tpuci_ctx_free(ctx);
    return r;
  }
  nwarn = tpuci_warning_count(ctx);
  r = tpuci_export(ctx, format, &eo, &text);
  free(runs_on.only);
  /* What the export adds (which tpuci the workflow builds), after the
   * load's. */
  for (; nwarn < tpuci_warning_count(ctx); nwarn++)
    fprintf(stderr, "tpuci: warning: %s\n", tpuci_console__safe(tpuci_warning(ctx, nwarn), 1));
  if (r == 0) fputs(text, stdout);
  else fprintf(stderr, "tpuci: %s\n", tpuci_console__safe(tpuci_last_error(ctx), 1));
  tpuci_free(text);
  tpuci_ctx_free(ctx);
  return r == 0 ? EXIT_PASSED : EXIT_USAGE;
}

static int cmd_plan(int argc, char **argv) {
  static const struct option longopts[] = {{"json", no_argument, NULL, OPT_JSON},
                                           {"only", required_argument, NULL, OPT_ONLY},
                                           {"engine", required_argument, NULL, OPT_ENGINE},
                                           {"real", no_argument, NULL, OPT_REAL},
                                           {"keys", no_argument, NULL, OPT_KEYS},
                                           {"state-dir", required_argument, NULL, OPT_STATE_DIR},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  selection_t sel = {NULL, 0, NULL, 0, 0};
  const char *engine = NULL, *state = NULL;
  tpuci_ctx_t *ctx;
  char *text;
  int json = 0, real = 0, keys = 0, c, r;

  optind = 1;
  while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
    switch (c) {
      case OPT_JSON: json = 1; break;
      case OPT_ONLY: selection_add(&sel, optarg); break;
      case OPT_ENGINE: engine = optarg; break;
      case OPT_REAL: real = 1; break;
      case OPT_KEYS: keys = 1; break;
      case OPT_STATE_DIR: state = optarg; break;
      case 'h': return tpuci_cli_help("plan", stdout);
      default: return usage_error("plan", "bad option");
    }
  }
  if (optind != argc - 1) {
    free(sel.only);
    return usage_error("plan", optind >= argc ? "missing SPEC" : "too many arguments");
  }
  if (tpuci_ctx_new(&ctx, NULL) != 0) return EXIT_USAGE;
  tpuci_set_real(ctx, real);
  r = load_and_select(ctx, argv[optind], &sel);
  free(sel.only);
  if (r == 0) r = tpuci_cli_apply_engine(ctx, engine);
  if (r != 0) {
    tpuci_ctx_free(ctx);
    return r;
  }
  r = keys   ? tpuci_plan_keys(ctx, state, json, &text)
      : json ? tpuci_plan_json(ctx, &text, NULL)
             : tpuci_plan_text(ctx, &text, NULL);
  if (r == 0) {
    tpuci_console__puts_safe(stdout, text);
    if (*text && text[strlen(text) - 1] != '\n') fputc('\n', stdout);
    tpuci_free(text);
  }
  tpuci_ctx_free(ctx);
  return r == 0 ? EXIT_PASSED : EXIT_USAGE;
}

/* Each running attempt holds a few file descriptors: take as many as the
 * hard limit allows (the library only reads the limit, and runs fewer
 * attempts at once when it is short). */
static void raise_nofile(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max) return;
  rl.rlim_cur = rl.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0) return; /* the cap copes */
}

/* `tpuci --version`: the version, and the checkout it was built from
 * when the build recorded one (what `tpuci export github` builds). */
static int print_version(void) {
  tpuci_build_source_t src = TPUCI_BUILD_SOURCE_INIT;
  printf("tpuci %s\n", tpuci_version());
  if (tpuci_build_source(&src) == 0 && src.commit != NULL)
    printf("built from %s at commit %s%s\n", src.url ? src.url : "a checkout without a remote",
           src.commit, src.modified ? ", with changes" : "");
  return EXIT_PASSED;
}

int main(int argc, char **argv) {
  const char *cmd;

  /* A closed pipe (tpuci run ... | head) must not kill tpuci before it
   * has stopped its jobs. */
  signal(SIGPIPE, SIG_IGN);
  raise_nofile();
  if (argc < 2) {
    tpuci_cli_help(NULL, stderr);
    return EXIT_USAGE;
  }
  cmd = argv[1];
  if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) return tpuci_cli_help(NULL, stdout);
  if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) return print_version();
  if (strcmp(cmd, "help") == 0) return tpuci_cli_help(argc > 2 ? argv[2] : NULL, stdout);
  if (strcmp(cmd, "run") == 0 || strcmp(cmd, "rerun") == 0) return cmd_run(cmd, argc - 1, argv + 1);
  if (strcmp(cmd, "show") == 0) return cmd_show(argc - 1, argv + 1);
  if (strcmp(cmd, "merge") == 0) return tpuci_cli_merge(argc - 1, argv + 1);
  if (strcmp(cmd, "flaky") == 0) return tpuci_cli_flaky(argc - 1, argv + 1);
  if (strcmp(cmd, "select") == 0) return tpuci_cli_select(argc - 1, argv + 1);
  if (strcmp(cmd, "plan") == 0) return cmd_plan(argc - 1, argv + 1);
  if (strcmp(cmd, "export") == 0) return cmd_export(argc - 1, argv + 1);
  if (strcmp(cmd, "gc") == 0) return tpuci_cli_gc(argc - 1, argv + 1);
  if (strcmp(cmd, "topologies") == 0) return tpuci_cli_topologies(argc - 1, argv + 1);
  if (strcmp(cmd, "doctor") == 0) return tpuci_cli_doctor(argc - 1, argv + 1);
  if (strcmp(cmd, "init") == 0) return tpuci_cli_init(argc - 1, argv + 1);
  if (strcmp(cmd, "completion") == 0) {
    if (argc != 3 || tpuci_cli_completion(argv[2], stdout) != 0)
      return usage_error("completion", "say the shell: tpuci completion bash|zsh");
    return EXIT_PASSED;
  }
  fprintf(stderr, "tpuci: unknown command '%s'; see 'tpuci --help'\n", cmd);
  return EXIT_USAGE;
}
