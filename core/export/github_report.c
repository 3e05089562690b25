/* Per job, the workflow's last job: it downloads every entry's run folder
 * (their artifacts tpuci-SLUG) and merges them with `tpuci merge` into one
 * summary, JUnit report, HTML report and step summary, uploaded as the
 * artifact tpuci.report (docs/github.md, "One report for the whole
 * workflow"). */
#include <stdio.h>
#include <stdlib.h>

#include "export/github_doc.h"

/* Every finished run the entries uploaded; a folder without summary.json
 * (a run cut short) or fewer runs than entries fail the step after the
 * merge, which still reports the others. */
static const char tpuci__gh_merge_runs[] =
    "shopt -s nullglob\n"
    "missing=0\n"
    "set --\n"
    "for dir in tpuci-runs/*/.tpuci/runs/*/; do\n"
    "  case $dir in */latest/) continue ;; esac\n"
    "  if [ -f \"${dir}summary.json\" ]; then\n"
    "    set -- \"$@\" \"$dir\"\n"
    "  else\n"
    "    echo \"::warning title=tpuci::$dir has no summary.json: its run did not finish\"\n"
    "    missing=1\n"
    "  fi\n"
    "done\n"
    "if [ \"$#\" -lt \"$TPUCI_ENTRIES\" ]; then\n"
    "  echo \"::warning title=tpuci::$# finished runs of $TPUCI_ENTRIES entries: the others did "
    "not upload one\"\n"
    "  missing=1\n"
    "fi\n"
    "if [ \"$#\" -eq 0 ]; then\n"
    "  echo \"::error title=tpuci::no entry uploaded a finished run\"\n"
    "  exit 1\n"
    "fi\n"
    "status=0\n"
    "tpuci merge --report-json tpuci-report.json --report-yaml tpuci-report.yaml "
    "--report-html tpuci-report.html --junit tpuci-junit.xml \"$@\" || status=$?\n"
    "if [ \"$status\" -eq 0 ] && [ \"$missing\" -eq 1 ]; then status=1; fi\n"
    "exit \"$status\"\n";

/* The merged reports, and the run folders their log links point into. */
static const char tpuci__gh_report_paths[] = "tpuci-report.json\n"
                                             "tpuci-report.yaml\n"
                                             "tpuci-report.html\n"
                                             "tpuci-junit.xml\n"
                                             "tpuci-runs/\n";

int tpuci__gh_report_job(yaml_emitter_t *e, const tpuci__gh_doc_t *d) {
  char entries[32];
  snprintf(entries, sizeof(entries), "%zu", d->nentries);
  return tpuci__emit_plain(e, "report") && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, "name", "One report of every entry") && tpuci__emit_plain(e, "needs") &&
         tpuci__emit_seq(e, YAML_FLOW_SEQUENCE_STYLE) && tpuci__emit_plain(e, "tpuci") &&
         tpuci__emit_seq_end(e) && tpuci__emit_kv(e, "if", "always()") && tpuci__gh_runs_on(e, d) &&
         tpuci__emit_plain(e, "steps") && tpuci__emit_seq(e, YAML_BLOCK_SEQUENCE_STYLE) &&
         tpuci__gh_build_steps(e, d) &&
         tpuci__gh_step_start(e, "Download every entry's run folder") &&
         tpuci__emit_kv(e, "uses", "actions/download-artifact@v4") &&
         tpuci__emit_plain(e, "with") && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, "pattern", "tpuci-*") && tpuci__emit_kv(e, "path", "tpuci-runs") &&
         tpuci__emit_map_end(e) && tpuci__emit_map_end(e) &&
         tpuci__gh_step_start(e, "Merge the entries' runs") && tpuci__emit_plain(e, "env") &&
         tpuci__emit_map(e) && tpuci__emit_kv(e, "TPUCI_ENTRIES", entries) &&
         tpuci__emit_map_end(e) && tpuci__emit_kv(e, "run", tpuci__gh_merge_runs) &&
         tpuci__emit_map_end(e) && tpuci__gh_step_start(e, "Upload the merged report") &&
         tpuci__emit_kv(e, "if", "always()") &&
         tpuci__emit_kv(e, "uses", "actions/upload-artifact@v4") && tpuci__emit_plain(e, "with") &&
         tpuci__emit_map(e) && tpuci__emit_kv(e, "name", "tpuci.report") &&
         tpuci__emit_kv(e, "path", tpuci__gh_report_paths) &&
         tpuci__emit_plain(e, "include-hidden-files") && tpuci__emit_plain(e, "true") &&
         tpuci__emit_kv(e, "if-no-files-found", "warn") && tpuci__emit_map_end(e) &&
         tpuci__emit_map_end(e) && tpuci__emit_seq_end(e) && tpuci__emit_map_end(e);
}
