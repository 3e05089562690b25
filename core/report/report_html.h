/* The run report as one self-contained HTML5 page (--report-html): a
 * header with the verdict and counts, a timeline of every attempt on its
 * slot (inline SVG), the instance table, failures with their causes and
 * each attempt's log tail. docs/html-report.md describes the page. */
#ifndef TPUCI_REPORT_HTML_H
#define TPUCI_REPORT_HTML_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/util.h"

/* Appends the page for `report` (the tree of report.h, described in
 * docs/reports.md) to `out`. The page has no external assets and no
 * script, and every string of the report is escaped. The output depends
 * on the report only, so the same report always gives the same bytes.
 * Fields the page does not know are ignored and missing ones are shown
 * as empty. Returns 0, or TPUCI_EUSAGE (with a message in `err`, which
 * may be NULL) when `report` is not a report object; `out` is then left
 * as it was. */
int tpuci__report_html(const json_t *report, tpuci__buf_t *out, tpuci__err_t *err);
/* The same for a page to be written in the folder `page_dir` (relative to
 * the current folder, or absolute): links to the attempts' logs are
 * relative to it, so the page and the run folder can move together (a
 * downloaded CI artifact). NULL: links are the logs' paths as recorded. */
int tpuci__report_html_at(const json_t *report, const char *page_dir, tpuci__buf_t *out,
                          tpuci__err_t *err);

/* One attempt on the timeline: from start_ms to end_ms, taking `width`
 * adjacent slots (0 counts as 1; a gang of hosts may take several). */
typedef struct {
  uint64_t start_ms;
  uint64_t end_ms;
  size_t width;
} tpuci__html_span_t;

/* Places spans on slots the way the scheduler fills them: in order of
 * start (ties keep the array order), each span takes the lowest run of
 * `width` slots that are all free at its start; a slot is free again at
 * the end of the span in it. Writes the first slot (0-based) of span i to
 * slots[i] and returns the number of slots used. */
size_t tpuci__html_slots(const tpuci__html_span_t *spans, size_t n, size_t *slots);

#endif /* TPUCI_REPORT_HTML_H */
