/* tpuci-report-html: writes the HTML page of a run report.
 *
 *   tpuci-report-html REPORT.json [OUT.html]
 *
 * REPORT.json is a summary.json or a --report-json file; the page goes to
 * OUT.html (written atomically) or to stdout. Exit 0, 1 when the report
 * cannot be read or written, 2 on a usage error. The e2e test uses it to
 * render real reports; it also turns old run folders into pages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report/report_html.h"
#include "base/util.h"

int main(int argc, char **argv) {
  json_error_t jerr;
  json_t *report;
  tpuci__buf_t out;
  tpuci__err_t err = {0, NULL};
  int r;

  if (argc < 2 || argc > 3 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
    fprintf(stderr, "usage: tpuci-report-html REPORT.json [OUT.html]\n");
    return 2;
  }
  report = json_load_file(argv[1], 0, &jerr);
  if (report == NULL) {
    fprintf(stderr, "tpuci-report-html: %s:%d: %s\n", argv[1], jerr.line, jerr.text);
    return 1;
  }
  tpuci__buf_init(&out);
  if (argc == 3) {
    /* Log links relative to the page's folder, as tpuci run writes them. */
    const char *slash = strrchr(argv[2], '/');
    char *dir = slash == NULL ? tpuci__strdup(".")
                : slash == argv[2] ? tpuci__strdup("/")
                                   : tpuci__printf("%.*s", (int) (slash - argv[2]), argv[2]);
    r = tpuci__report_html_at(report, dir, &out, &err);
    free(dir);
  } else {
    r = tpuci__report_html(report, &out, &err);
  }
  json_decref(report);
  if (r != 0) {
    fprintf(stderr, "tpuci-report-html: %s: %s\n", argv[1], err.msg ? err.msg : "cannot render");
    tpuci__err_clear(&err);
    tpuci__buf_free(&out);
    return 1;
  }
  if (argc == 3) {
    r = tpuci__write_file_atomic(argv[2], out.data, out.len);
    if (r != 0) fprintf(stderr, "tpuci-report-html: cannot write %s\n", argv[2]);
  } else {
    r = fwrite(out.data, 1, out.len, stdout) == out.len && fflush(stdout) == 0 ? 0 : -1;
    if (r != 0) fprintf(stderr, "tpuci-report-html: cannot write the page\n");
  }
  tpuci__buf_free(&out);
  return r == 0 ? 0 : 1;
}
