/* The HTML report's own pieces, shared by its files: escaping and small
 * parts (html_text.c), the timeline (html_timeline.c) and the page
 * (report_html.c). Everything taken from the report is user data and goes
 * through tpuci__html_text(). Nothing outside core/report/ includes this. */
#ifndef TPUCI_REPORT_HTML_PARTS_H
#define TPUCI_REPORT_HTML_PARTS_H

#include <jansson.h>
#include <stdint.h>

#include "base/util.h"
#include "report/report_html.h"

void tpuci__html_textn(tpuci__buf_t *b, const char *s, size_t len, int strip_ansi);
void tpuci__html_text(tpuci__buf_t *b, const char *s);
const char *tpuci__html_jstr(const json_t *o, const char *key, size_t *len);
json_int_t tpuci__html_jint(const json_t *o, const char *key);
uint64_t tpuci__html_juint(const json_t *o, const char *key);
void tpuci__html_field(tpuci__buf_t *b, const json_t *o, const char *key);
const char *tpuci__html_outcome_class(const char *outcome);
int tpuci__html_outcome_bad(const char *outcome);
void tpuci__html_badge(tpuci__buf_t *b, const char *outcome);
const char *tpuci__html_duration(uint64_t ms, char *buf, size_t size);
void tpuci__html_utc(uint64_t ms, char *buf, size_t size);
void tpuci__html_matrix(tpuci__buf_t *b, const json_t *matrix);
void tpuci__html_clip(tpuci__buf_t *b, const char *s, size_t max);
size_t tpuci__html_utf8_chars(const char *s);
/* The file at `path` (as the report records it, relative to the current
 * folder or absolute) from a page in the folder `page_dir`: relative, so
 * that a link and its label keep working and meaning the same when the
 * page and the run folder are moved together (a CI artifact). `page_dir`
 * NULL: the path as it is. A new string. */
char *tpuci__html_rel(const char *page_dir, const char *path);
/* `rel` (tpuci__html_rel) as an href value: percent-encoded. */
void tpuci__html_href(tpuci__buf_t *b, const char *rel);
void tpuci__html_timeline(tpuci__buf_t *b, const json_t *report, const json_t *instances);

#endif /* TPUCI_REPORT_HTML_PARTS_H */
