/* Several runs' merged JUnit reports as one (see junit.h,
 * tpuci__junit_merge_files(), and `tpuci merge`): the <testsuite>
 * elements are copied as the writer wrote them, only the totals of the
 * <testsuites> around them are new. */
#ifndef XML_DTD
#define XML_DTD 1
#endif
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind/pytest/junit.h"

typedef struct {
  XML_Parser p;
  int depth;
  int failed;
  char msg[160];
  XML_Index start;      /* the open <testsuite>'s first byte */
  int start_len;        /* its start tag's length */
  tpuci__buf_t *suites; /* where the suites go */
  const char *data;
  tpuci__junit_counts_t total; /* the documents' totals added up */
} tpuci__jm_t;

/* `fmt` has one %.64s, for `what`. */
static void tpuci__jm_fail(tpuci__jm_t *m, const char *fmt, const char *what) {
  if (m->failed) return;
  m->failed = 1;
  snprintf(m->msg, sizeof(m->msg), fmt, what ? what : "");
  XML_StopParser(m->p, XML_FALSE);
}

/* A count attribute: digits only. */
static size_t tpuci__jm_count(tpuci__jm_t *m, const char *v) {
  char *end;
  unsigned long long n;
  if (v == NULL) return 0;
  n = strtoull(v, &end, 10);
  if (*v < '0' || *v > '9' || *end) tpuci__jm_fail(m, "a count that is not a number: %.64s", v);
  return (size_t) n;
}

static void XMLCALL tpuci__jm_start(void *ud, const XML_Char *name, const XML_Char **attrs) {
  tpuci__jm_t *m = ud;
  size_t k;
  if (m->failed) return;
  if (m->depth == 0 && strcmp(name, "testsuites") != 0)
    tpuci__jm_fail(m, "not tpuci's merged JUnit report: its root is <%.64s>", name);
  if (m->depth == 1 && strcmp(name, "testsuite") != 0)
    tpuci__jm_fail(m, "not tpuci's merged JUnit report: <testsuites> holds <%.64s>", name);
  if (m->depth == 1 && !m->failed) {
    m->start = XML_GetCurrentByteIndex(m->p);
    m->start_len = XML_GetCurrentByteCount(m->p);
    for (k = 0; attrs[k] && attrs[k + 1]; k += 2) {
      const char *a = attrs[k], *v = attrs[k + 1];
      if (strcmp(a, "tests") == 0) m->total.tests += tpuci__jm_count(m, v);
      else if (strcmp(a, "failures") == 0) m->total.failures += tpuci__jm_count(m, v);
      else if (strcmp(a, "errors") == 0) m->total.errors += tpuci__jm_count(m, v);
      else if (strcmp(a, "time") == 0) m->total.time_s += strtod(v, NULL);
    }
  }
  m->depth++;
}

static void XMLCALL tpuci__jm_end(void *ud, const XML_Char *name) {
  tpuci__jm_t *m = ud;
  XML_Index at;
  size_t end;
  (void) name;
  m->depth--;
  if (m->failed || m->depth != 1) return;
  /* An empty element ends where it starts. */
  at = XML_GetCurrentByteIndex(m->p);
  end = at == m->start ? (size_t) (m->start + m->start_len)
                       : (size_t) at + (size_t) XML_GetCurrentByteCount(m->p);
  tpuci__buf_adds(m->suites, "  ");
  tpuci__buf_add(m->suites, m->data + m->start, end - (size_t) m->start);
  tpuci__buf_adds(m->suites, "\n");
}

static void XMLCALL tpuci__jm_entity(void *ud, const XML_Char *name, int is_param,
                                     const XML_Char *value, int value_length, const XML_Char *base,
                                     const XML_Char *system_id, const XML_Char *public_id,
                                     const XML_Char *notation) {
  (void) is_param, (void) value, (void) value_length, (void) base;
  (void) system_id, (void) public_id, (void) notation;
  tpuci__jm_fail(ud, "entity declarations are not allowed: %.64s", name);
}

/* One report's suites into m->suites, its totals added to m's. The
 * bytes are read as UTF-8 whatever the document declares: they are
 * copied into a UTF-8 document. */
static int tpuci__jm_doc(tpuci__jm_t *m, const tpuci__junit_doc_t *doc, tpuci__err_t *err) {
  int r = 0;
  if (doc->len > TPUCI__JUNIT_MAX_BYTES)
    return tpuci__err_set(err, TPUCI_EIO, "%s: %zu bytes, over the limit of %zu", doc->name,
                          doc->len, TPUCI__JUNIT_MAX_BYTES);
  m->p = XML_ParserCreate("UTF-8");
  if (m->p == NULL)
    return tpuci__err_set(err, TPUCI_ENOMEM, "%s: cannot create an XML parser", doc->name);
  m->depth = 0;
  m->failed = 0;
  m->data = doc->data;
  XML_SetUserData(m->p, m);
  XML_SetElementHandler(m->p, tpuci__jm_start, tpuci__jm_end);
  XML_SetEntityDeclHandler(m->p, tpuci__jm_entity);
  XML_SetParamEntityParsing(m->p, XML_PARAM_ENTITY_PARSING_NEVER);
  if (XML_Parse(m->p, doc->data, (int) doc->len, 1) != XML_STATUS_OK && !m->failed) {
    m->failed = 1;
    snprintf(m->msg, sizeof(m->msg), "%s", XML_ErrorString(XML_GetErrorCode(m->p)));
  }
  if (m->failed)
    r = tpuci__err_set(err, TPUCI_EIO, "%s:%lu:%lu: %s", doc->name,
                       (unsigned long) XML_GetCurrentLineNumber(m->p),
                       (unsigned long) XML_GetCurrentColumnNumber(m->p) + 1, m->msg);
  XML_ParserFree(m->p);
  return r;
}

int tpuci__junit_merge_docs(tpuci__buf_t *out, const tpuci__junit_doc_t *docs, size_t n,
                            tpuci__err_t *err) {
  tpuci__jm_t m;
  tpuci__buf_t suites;
  size_t i;
  int r = 0;

  memset(&m, 0, sizeof(m));
  tpuci__buf_init(&suites);
  m.suites = &suites;
  for (i = 0; i < n && r == 0; i++) r = tpuci__jm_doc(&m, &docs[i], err);
  if (r == 0) tpuci__junit_write_doc(out, &m.total, &suites);
  tpuci__buf_free(&suites);
  return r;
}

int tpuci__junit_merge_files(tpuci__buf_t *out, const char *const *paths, size_t n,
                             tpuci__err_t *err) {
  tpuci__junit_doc_t *docs = tpuci__calloc(n + 1, sizeof(*docs));
  size_t i;
  int r = 0;
  for (i = 0; i < n && r == 0; i++) {
    char *data;
    docs[i].name = paths[i];
    r = tpuci__read_file_max(paths[i], TPUCI__JUNIT_MAX_BYTES, &data, &docs[i].len);
    if (r != 0) tpuci__err_set(err, r, "%s: cannot read: %s", paths[i], tpuci_strerror(r));
    else docs[i].data = data;
  }
  if (r == 0) r = tpuci__junit_merge_docs(out, docs, n, err);
  for (i = 0; i < n; i++) free((char *) docs[i].data);
  free(docs);
  return r;
}
