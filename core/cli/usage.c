/* The help texts of the tpuci command (`tpuci --help`, `tpuci help CMD`);
 * tpuci's shell completion reads its options from them. */
#include <stdio.h>
#include <string.h>

#include "usage.h"

static const char usage_main[] =
    "usage: tpuci <command> [options]\n"
    "\n"
    "Run TPU-emulated CI jobs declared in a Lua spec.\n"
    "\n"
    "commands:\n"
    "  init           write a starting spec (tpuci.lua) for the project here\n"
    "  run SPEC       run the spec's jobs; exit 0 only if all passed\n"
    "  plan SPEC      print the expanded job instances, run nothing\n"
    "  export github SPEC  print a GitHub Actions workflow that runs SPEC\n"
    "  export kubernetes SPEC  print Kubernetes Jobs that run SPEC's instances\n"
    "  rerun --failed [SPEC]  run again what did not pass in the latest run\n"
    "  show [RUN-ID]  print a past run's summary (default: the latest)\n"
    "  merge RUN_DIR...  one summary, JUnit and HTML report of several run folders\n"
    "  flaky          tests that failed in recent runs, by how often they flip\n"
    "  topologies [TYPE]  the TPU catalogue, or one type and its hosts' environment\n"
    "  gc             remove containers, networks and swarm services left by crashed runs\n"
    "  doctor [SPEC]  check the container engine, images and disk\n"
    "  completion SHELL  print the completion script for bash or zsh\n"
    "  help [CMD]     show help for a command\n"
    "\n"
    "options:\n"
    "  -h, --help     show this help\n"
    "  -V, --version  print the version\n"
    "\n"
    "exit codes: 0 passed, 1 failed, 2 usage or spec error (nothing run),\n"
    "3 environment error (engine, image, disk: nothing run), 4 the run's\n"
    "records are incomplete (a write to the run folder or a report failed),\n"
    "130 interrupted.\n";

static const char usage_run[] =
    "usage: tpuci run [options] SPEC\n"
    "\n"
    "Runs every job instance of SPEC (or those --only selects) and prints a\n"
    "line per attempt and a summary. Logs and summary.json go to\n"
    ".tpuci/runs/<run-id>/ (.tpuci/runs/latest points at the newest).\n"
    "\n"
    "options:\n"
    "  -j, --jobs N        at most N attempts at once (default: CPU count;\n"
    "                      lowered, with a warning, if ulimit -n is short)\n"
    "  --only GLOB         run only instances (or jobs) matching GLOB;\n"
    "                      repeatable; '[' in names must be written '\\['\n"
    "  --test NODEID       pytest jobs run only this test (repeatable; a sharded\n"
    "                      job in its first shard only)\n"
    "  --repeat N          the flake probe: run each selected instance N times,\n"
    "                      side by side as slots allow, without retries, and\n"
    "                      print each test's failure rate with its 95% interval\n"
    "                      (Wilson score); TPUCI_REPEAT_INDEX is 0 ... N-1\n"
    "  --fail-fast         stop everything after the first failure\n"
    "  --deadline D        stop the whole run after D (e.g. 30m)\n"
    "  --grace D           SIGTERM to SIGKILL delay (default: the job's, 5s)\n"
    "  --strict-flaky      a flaky (or order-dependent) instance fails the run\n"
    "  --quarantine FILE   the quarantined tests (default: tpuci-quarantine.yaml\n"
    "                      beside SPEC, if any): their failures do not fail the\n"
    "                      run until their date (docs/quarantine.md)\n"
    "  --release-after K   a quarantined test that passed its last K runs is\n"
    "                      reported ready to release (default 10)\n"
    "  --keep-failed       keep containers of failed attempts for debugging\n"
    "  --no-cache          run every instance, even those whose inputs passed\n"
    "                      before, and store no pass (docs/cache.md)\n"
    "  --affected          every pytest job runs only the tests a change can\n"
    "                      affect, as with pytest.select = \"affected\"\n"
    "                      (docs/pytest.md)\n"
    "  --no-select         every test runs (what each needs is still recorded)\n"
    "  --engine E          where container jobs run: docker (one engine, the\n"
    "                      default) or swarm (services of a Docker Swarm)\n"
    "  --real              the topologies are real TPU hardware: no emulation\n"
    "                      variables, this machine's TPU environment instead\n"
    "  --state-dir DIR     where runs and the results cache are kept (default:\n"
    "                      .tpuci)\n"
    "  -v, --verbose       stream every attempt's output, prefixed\n"
    "  -q, --quiet         print only failures and the summary\n"
    "  --plain             plain lines even on a terminal (no status board)\n"
    "  --alive D           plain output: a line per running attempt every D\n"
    "                      (elapsed, its test now, output; default 60s, 0: none)\n"
    "  --color WHEN        auto (default: on a terminal, not under CI, NO_COLOR\n"
    "                      or TERM=dumb), always or never\n"
    "  --report-json PATH  also write the run report as JSON\n"
    "  --report-yaml PATH  also write the run report as YAML\n"
    "  --junit PATH        also write the merged JUnit XML (pytest jobs test by\n"
    "                      test, other jobs as one test case each)\n"
    "  --junit-file-line   its pytest test cases also get file and line (where\n"
    "                      the test failed), which the JUnit schemas lack\n"
    "  --report-html PATH  also write the run report as one HTML page\n"
    "\n"
    "Ctrl-C (SIGINT) or SIGTERM stops starting work, stops running attempts\n"
    "(SIGTERM, grace period, SIGKILL), writes the summary and exits 130; a\n"
    "second signal kills at once.\n"
    "\n"
    "An instance whose inputs (plan entry, image id, mounted files) have a\n"
    "pass stored in the state folder is not run: its outcome is cached\n"
    "(docs/cache.md).\n"
    "\n"
    "exit codes: 0 all passed (flaky and order-dependent count as passed unless --strict-flaky,\n"
    "cached counts as passed), 1 some failed, 2 usage or spec error, 3 environment error, 4 the run's\n"
    "records are incomplete (a log, attempts.jsonl, summary.json or a report\n"
    "could not be written; wins over 0 and 1), 130 interrupted.\n";

static const char usage_plan[] =
    "usage: tpuci plan [--json] [--keys [--state-dir DIR]] [--only GLOB] [--engine E]\n"
    "                  [--real] SPEC\n"
    "\n"
    "Loads SPEC and prints the job instances it expands to (matrix and all),\n"
    "with their commands, environment, timeouts and retries. Runs nothing.\n"
    "\n"
    "options:\n"
    "  --json       print the plan as JSON\n"
    "  --keys       each instance's results cache key and what went into it\n"
    "               (plan entry, image id, mounts), whether a pass is stored\n"
    "               under it, or why it has none (docs/cache.md)\n"
    "  --state-dir DIR  where the results cache is (default: .tpuci)\n"
    "  --only GLOB  only instances (or jobs) matching GLOB; repeatable\n"
    "  --engine E   container jobs on docker or swarm, as `tpuci run --engine`\n"
    "  --real       the topologies are real TPU hardware, as `tpuci run --real`\n";

static const char usage_rerun[] =
    "usage: tpuci rerun --failed [run options] [SPEC]\n"
    "\n"
    "Runs again only the instances that did not pass (failed, timeout, oom,\n"
    "infra, cancelled, not run) in the latest run (or --run ID) recorded in\n"
    "the state folder. SPEC defaults to the spec that run used. Takes every\n"
    "option of `tpuci run`. When everything passed, says so and exits 0; a\n"
    "summary that does not say which instances did not pass is an error (2).\n"
    "\n"
    "options:\n"
    "  --failed     required: what to run again\n"
    "  --run ID     the run to look at (default: latest)\n";

static const char usage_show[] =
    "usage: tpuci show [--state-dir DIR] [--json|--yaml] [RUN-ID]\n"
    "\n"
    "Prints the summary of a past run from its folder (default: the latest):\n"
    "every instance with its outcome, attempts and time, and the verdict.\n"
    "--json and --yaml print the whole report instead. Exits with the exit\n"
    "code that run had.\n";

static const char usage_merge[] =
    "usage: tpuci merge [--report-json PATH] [--report-yaml PATH] [--report-html PATH]\n"
    "                   [--junit PATH] [-q] RUN_DIR...\n"
    "\n"
    "Merges run folders (.tpuci/runs/<id>/ as runs left them, wherever they\n"
    "are now: the artifacts of a --per-job workflow's runners) into one record\n"
    "and prints its summary: every instance of every run (an instance in two\n"
    "folders is an error), and the verdict of the runs together. Under GitHub\n"
    "Actions (GITHUB_STEP_SUMMARY set) it is also written as the step summary.\n"
    "\n"
    "options:\n"
    "  --report-json PATH  write the merged summary (a summary.json)\n"
    "  --report-yaml PATH  the same as YAML\n"
    "  --report-html PATH  one HTML report; its log links point into the folders\n"
    "  --junit PATH        the runs' junit.xml as one JUnit report\n"
    "  -q, --quiet         list only the instances that did not pass\n"
    "\n"
    "exit codes: 0 passed, 1 failed (a run failed or did not run), 2 a folder\n"
    "that is not there or not a finished run's (named), a summary.json or\n"
    "junit.xml that is not tpuci's, an instance in two folders, or a bad\n"
    "option, 3 no run ran anything, 4 a run's records or a\n"
    "merged file are incomplete, 130 a run was interrupted.\n";

static const char usage_topologies[] =
    "usage: tpuci topologies [--emulate pjrt|xrt|jax|none] [TYPE]\n"
    "\n"
    "Without TYPE, prints the built-in catalogue of TPU accelerator types:\n"
    "hosts, chips per host, TensorCores per chip, devices per host, topology,\n"
    "bounds and GKE labels. With TYPE (e.g. v4-16, or v6e-8:2x4 for a host\n"
    "layout), prints that type, the source of each of its values and the\n"
    "environment each emulated host gets (default emulation: pjrt). See\n"
    "docs/topology.md.\n";

static const char usage_gc[] =
    "usage: tpuci gc [--dry-run] [SPEC]\n"
    "\n"
    "Finds containers and networks (and, on a swarm manager, services and\n"
    "overlay networks) that tpuci runs left behind (a crashed or killed\n"
    "tpuci, --keep-failed) by their tpuci.run label and removes them.\n"
    "Objects of runs still in progress are left alone. On a swarm it waits\n"
    "until the removed services' tasks and containers are gone (at most\n"
    "their longest grace period plus 60 s, or TPUCI_GC_WAIT) and names\n"
    "what is still going. With SPEC, only for the runtimes its jobs use,\n"
    "and also the folders dead runs left in /tmp on the workers of its\n"
    "hosts declarations (docs/ssh.md).\n"
    "\n"
    "options:\n"
    "  --dry-run    list them, remove nothing\n";

static const char usage_doctor[] =
    "usage: tpuci doctor [--engine E] [--real] [SPEC]\n"
    "\n"
    "Checks that the container engine answers (DOCKER_HOST with its TLS\n"
    "files, the Docker context, or /var/run/docker.sock; it says which), the\n"
    "images SPEC uses are present or pullable, the engine's disk has room,\n"
    "and no leftovers of earlier runs remain; starts a tiny container on each\n"
    "network mode SPEC's container jobs use (a missing network or a broken\n"
    "bridge fails); warns about SPEC's bind mounts on an engine reached over\n"
    "TCP.\n"
    "For swarm jobs (runtime = \"swarm\" or --engine swarm): the engine is a\n"
    "swarm manager, its ready nodes and their resources, and a node that fits\n"
    "each job's cpus and memory. With --real, also whether this machine is a\n"
    "TPU VM: its TPU devices (/dev/accel*, /dev/vfio/<group>), the slice the\n"
    "metadata server (GCE_METADATA_HOST) or TPU_ACCELERATOR_TYPE names, and\n"
    "SPEC's topologies against it. Exits 0 when every check passed, 3 otherwise.\n"
    "\n"
    "options:\n"
    "  --engine E   check SPEC's container jobs on docker or swarm\n"
    "  --real       check this machine as a TPU VM for SPEC run with --real\n";

static const char usage_export[] =
    "usage: tpuci export github [--per-job] [--spec PATH] [--source URL] [--ref REF]\n"
    "                           [--package URL] [--name NAME] [--runs-on LABEL]\n"
    "                           [--timeout-minutes N] [--concurrency GROUP\n"
    "                           [--cancel-in-progress]] [--schedule CRON] [--real] SPEC\n"
    "       tpuci export kubernetes [--emulated] [--only GLOB] [--run ID] [--no-mounts]\n"
    "                               [--results-claim NAME] [--jobset] SPEC\n"
    "\n"
    "github: prints a GitHub Actions workflow that builds tpuci (cached), pulls\n"
    "SPEC's images, runs SPEC on every push and pull request (and by hand:\n"
    "workflow_dispatch) with the recorded test durations cached between runs,\n"
    "and uploads the reports and the run folder. Run it from the repository's\n"
    "root (see docs/github.md).\n"
    "\n"
    "  --per-job      one workflow job per tpuci job, and per shard of a sharded\n"
    "                 pytest job (a matrix; at most 256 entries), and a last job\n"
    "                 that merges their runs into one report (tpuci merge)\n"
    "  --schedule CRON  also run on this schedule (5 fields: \"0 3 * * 1\")\n"
    "  --spec PATH    the spec's path in the workflow (default: SPEC)\n"
    "  --source URL   git URL of tpuci to build (default: the remote origin of the\n"
    "                 checkout this tpuci was built from; tpuci --version names it)\n"
    "  --ref REF      branch, tag or commit of it (default: the commit this tpuci\n"
    "                 was built at)\n"
    "  --package URL  install this .deb of tpuci (cpack -G DEB) instead of\n"
    "                 building it; not with --source or --ref\n"
    "  --name NAME    the workflow's name (default: tpuci)\n"
    "  --runs-on LABEL  the runner label (default: ubuntu-latest); repeatable:\n"
    "                 a runner with every label\n"
    "  --timeout-minutes N  the workflow job's time limit (1 to 4320)\n"
    "  --concurrency GROUP  the workflow's concurrency group (expressions allowed)\n"
    "  --cancel-in-progress  a new run in the group cancels the running one\n"
    "  --real         the workflow runs `tpuci run --real` (a runner on real TPU\n"
    "                 hardware, with --runs-on its labels: docs/real-tpu.md)\n"
    "\n"
    "kubernetes: prints, per job instance, an Indexed Job with one pod per host\n"
    "(and a headless Service for a gang, or with --jobset a JobSet): on a GKE TPU slice for a catalogue\n"
    "topology, as tpuci's CPU emulation otherwise (see docs/kubernetes.md).\n"
    "\n"
    "  --emulated     every topology as tpuci's CPU emulation: no TPU nodes needed\n"
    "  --only GLOB    export only instances (or jobs) matching GLOB; repeatable\n"
    "  --run ID       a run id for the tpuci.run label, TPUCI_RUN_ID and the names\n"
    "  --no-mounts    leave the spec's mounts out (the image holds what they bring)\n"
    "  --results-claim NAME  write results into this PersistentVolumeClaim\n"
    "                 (default: an emptyDir; pytest prints its JUnit to the log)\n"
    "  --jobset       an instance of more than one host as one JobSet\n"
    "                 (jobset.x-k8s.io/v1alpha2): restarted as a gang\n";

static const char usage_init[] =
    "usage: tpuci init [--force] [--output FILE | --stdout]\n"
    "\n"
    "Writes a starting spec for the Python project in the current folder to\n"
    "tpuci.lua. It reads pytest's configuration as pytest finds it (pytest.ini,\n"
    ".pytest.ini, pyproject.toml's [tool.pytest.ini_options], tox.ini's [pytest],\n"
    "setup.cfg's [tool:pytest]) for testpaths, the registered markers and\n"
    "python_files, and proposes a pytest job per family of markers: tpu-like\n"
    "names on an emulated single-host TPU v4-8, multihost, multinode or\n"
    "distributed-like names on a two-host v4-16 (a gang), any others a job\n"
    "each; and one job for the tests none of them marks. Together the jobs run\n"
    "every test once; a comment explains each choice. An existing file is\n"
    "never overwritten without --force.\n"
    "\n"
    "options:\n"
    "  --force        overwrite the file if it exists\n"
    "  --output FILE  write FILE instead of tpuci.lua (its mounts name this\n"
    "                 folder from FILE's folder)\n"
    "  --stdout       print the spec instead of writing a file\n"
    "\n"
    "exit codes: 0 written, 2 the file exists, a configuration file that\n"
    "cannot be read or parsed (named with its line), or a bad option; 3 the\n"
    "file cannot be written.\n";

static const char usage_completion[] =
    "usage: tpuci completion bash|zsh\n"
    "\n"
    "Prints the shell completion script: commands, each command's options\n"
    "(asked of tpuci itself when completing, so they never fall behind),\n"
    "specs as *.lua files, run ids for show, TPU types for topologies.\n"
    "\n"
    "  bash: eval \"$(tpuci completion bash)\" in ~/.bashrc, or save it as\n"
    "        /usr/share/bash-completion/completions/tpuci\n"
    "  zsh:  source <(tpuci completion zsh) in ~/.zshrc, or save it as _tpuci\n"
    "        in a folder of $fpath\n";

static const char usage_flaky[] =
    "usage: tpuci flaky [--runs N] [--json] [--state-dir DIR]\n"
    "       tpuci flaky --release [--quarantine FILE] [--release-after K] [--state-dir DIR]\n"
    "       tpuci flaky --propose [--min-rate R] [--codeowners FILE] [--quarantine FILE]\n"
    "                             [--runs N] [--state-dir DIR]\n"
    "\n"
    "Lists the pytest tests that failed in any of the last N runs (default 20,\n"
    "0: every run kept) by their flip rate: the share of their runs whose\n"
    "result differed from the run before, or that were flaky or order-dependent\n"
    "within the run; with each test's outcomes run by run and its last failure.\n"
    "A job's run in which more than half of its tests failed (5 or more ran) is\n"
    "an infra run: left out of its tests' flip rates, and named.\n"
    "A test is kept under its instance without its shard; a cancelled run\n"
    "(Ctrl-C, --deadline, --fail-fast) writes nothing of the tests it did not\n"
    "reach. Reads DIR/history.jsonl (default .tpuci/), which every run with\n"
    "pytest jobs adds to; it keeps the last 100 runs (and at most 32 MiB).\n"
    "\n"
    "  --runs N         how many of the latest runs to look at\n"
    "  --json           the report as JSON\n"
    "  --state-dir DIR  where runs are recorded (default: .tpuci)\n"
    "  --release        print the quarantine entries that can go: every test of\n"
    "                   theirs in the history passed its last K runs\n"
    "  --quarantine FILE  with --release or --propose: the file (default\n"
    "                   tpuci-quarantine.yaml)\n"
    "  --release-after K  with --release: K (default 10)\n"
    "  --propose        print quarantine entries (YAML, to copy into the file: nothing\n"
    "                   is written) for the tests whose flip rate is at least R, with\n"
    "                   the owner CODEOWNERS gives and an expiry 14 days out\n"
    "  --min-rate R     with --propose: R (default 0.1)\n"
    "  --codeowners FILE  with --propose: the file (default .github/CODEOWNERS,\n"
    "                   CODEOWNERS or docs/CODEOWNERS here or above, to the git top)\n"
    "\n"
    "exit codes: 0, 2 no history yet, an invalid quarantine or a bad option, 3\n"
    "the history cannot be read.\n";

int tpuci_cli_help(const char *cmd, FILE *out) {
  if (cmd == NULL) fputs(usage_main, out);
  else if (strcmp(cmd, "run") == 0) fputs(usage_run, out);
  else if (strcmp(cmd, "plan") == 0) fputs(usage_plan, out);
  else if (strcmp(cmd, "export") == 0) fputs(usage_export, out);
  else if (strcmp(cmd, "gc") == 0) fputs(usage_gc, out);
  else if (strcmp(cmd, "topologies") == 0) fputs(usage_topologies, out);
  else if (strcmp(cmd, "rerun") == 0) fputs(usage_rerun, out);
  else if (strcmp(cmd, "show") == 0) fputs(usage_show, out);
  else if (strcmp(cmd, "merge") == 0) fputs(usage_merge, out);
  else if (strcmp(cmd, "flaky") == 0) fputs(usage_flaky, out);
  else if (strcmp(cmd, "doctor") == 0) fputs(usage_doctor, out);
  else if (strcmp(cmd, "completion") == 0) fputs(usage_completion, out);
  else if (strcmp(cmd, "init") == 0) fputs(usage_init, out);
  else {
    fprintf(stderr, "tpuci: unknown command '%s'; see 'tpuci --help'\n", cmd);
    return EXIT_USAGE;
  }
  return EXIT_PASSED;
}


int tpuci_cli_usage_error(const char *cmd, const char *msg) {
  fprintf(stderr, "tpuci %s: %s\nsee 'tpuci help %s'\n", cmd, msg, cmd);
  return EXIT_USAGE;
}
