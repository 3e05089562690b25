/* Parsing JUnit XML reports (pytest --junitxml) with Expat, and pytest
 * node ids. */
#include "kind/pytest/junit.h"

/* Declares the billion laughs knobs (Expat >= 2.4, built with DTD support
 * as Debian's is). */
#ifndef XML_DTD
#define XML_DTD 1
#endif
#include <expat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Outcomes and test records                                           */

const char *tpuci__test_outcome_name(tpuci__test_outcome_t o) {
  switch (o) {
    case TPUCI_TEST_PASSED: return "passed";
    case TPUCI_TEST_FAILED: return "failed";
    case TPUCI_TEST_ERROR: return "error";
    case TPUCI_TEST_SKIPPED: return "skipped";
    case TPUCI_TEST_XFAIL: return "xfail";
    case TPUCI_TEST_UNAFFECTED: return "unaffected";
    default: return "unknown";
  }
}

int tpuci__test_outcome_failing(tpuci__test_outcome_t o) {
  return o == TPUCI_TEST_FAILED || o == TPUCI_TEST_ERROR;
}

void tpuci__test_free(tpuci__test_t *t) {
  free(t->id);
  free(t->classname);
  free(t->name);
  free(t->file);
  free(t->type);
  free(t->message);
  free(t->text);
  free(t->system_out);
  free(t->system_err);
  memset(t, 0, sizeof(*t));
  t->line = -1;
}

void tpuci__test_copy(tpuci__test_t *dst, const tpuci__test_t *src) {
  *dst = *src;
  dst->id = tpuci__strdup(src->id);
  dst->classname = tpuci__strdup(src->classname);
  dst->name = tpuci__strdup(src->name);
  dst->file = tpuci__strdup(src->file);
  dst->type = tpuci__strdup(src->type);
  dst->message = tpuci__strdup(src->message);
  dst->text = tpuci__strdup(src->text);
  dst->system_out = tpuci__strdup(src->system_out);
  dst->system_err = tpuci__strdup(src->system_err);
}

void tpuci__junit_free(tpuci__junit_t *j) {
  size_t i;
  for (i = 0; i < j->len; i++) tpuci__test_free(&j->items[i]);
  free(j->items);
  memset(j, 0, sizeof(*j));
}

/* ------------------------------------------------------------------ */
/* Node ids                                                            */

/* "tests/test_m.py" -> "tests.test_m", as pytest's mangle_test_address. */
static char *tpuci__dotted_module(const char *path, size_t n) {
  char *s = tpuci__strndup(path, n), *q;
  size_t len;
  for (q = s; *q; q++)
    if (*q == '/') *q = '.';
  len = strlen(s);
  if (len >= 3 && strcmp(s + len - 3, ".py") == 0) s[len - 3] = '\0';
  return s;
}

void tpuci__junit_mangle(const char *node_id, char **classname, char **name) {
  const char *bracket = strchr(node_id, '[');
  size_t pathlen = bracket ? (size_t) (bracket - node_id) : strlen(node_id);
  const char *last = NULL, *p;
  tpuci__buf_t cls;
  char *mod;

  /* The last "::" before the parameters separates the name. */
  for (p = node_id; p + 1 < node_id + pathlen; p++)
    if (p[0] == ':' && p[1] == ':') last = p;
  if (last == NULL) {
    *classname = tpuci__strdup("");
    mod = tpuci__dotted_module(node_id, pathlen);
    *name = tpuci__printf("%s%s", mod, bracket ? bracket : "");
    free(mod);
    return;
  }
  tpuci__buf_init(&cls);
  {
    const char *first = strstr(node_id, "::");
    const char *q;
    mod = tpuci__dotted_module(node_id, (size_t) (first - node_id));
    tpuci__buf_adds(&cls, mod);
    free(mod);
    /* Classes between the module and the name: "::" becomes ".". */
    for (q = first; q < last;) {
      const char *next = strstr(q + 2, "::");
      tpuci__buf_adds(&cls, ".");
      tpuci__buf_add(&cls, q + 2, (size_t) (next - (q + 2)));
      q = next;
    }
  }
  *classname = tpuci__buf_steal(&cls);
  *name = tpuci__strdup(last + 2);
}

static int tpuci__is_upper(char c) { return c >= 'A' && c <= 'Z'; }

static void tpuci__add_dots_as(tpuci__buf_t *b, const char *s, size_t n, const char *sep) {
  size_t i, start = 0;
  for (i = 0; i <= n; i++) {
    if (i == n || s[i] == '.') {
      tpuci__buf_add(b, s + start, i - start);
      if (i < n) tpuci__buf_adds(b, sep);
      start = i + 1;
    }
  }
}

char *tpuci__junit_node_id(const char *classname, const char *name, const char *file) {
  tpuci__buf_t b;
  size_t cn;

  if (classname == NULL) classname = "";
  if (name == NULL) name = "";
  cn = strlen(classname);
  tpuci__buf_init(&b);

  if (file != NULL && *file) {
    char *mod = tpuci__dotted_module(file, strlen(file));
    size_t ml = strlen(mod);
    const char *rest = NULL;

    if (cn == 0) {
      /* A collection error: the name is the module itself. */
      tpuci__buf_adds(&b, file);
      if (strcmp(name, mod) != 0 && *name) {
        tpuci__buf_adds(&b, "::");
        tpuci__buf_adds(&b, name);
      }
      free(mod);
      return tpuci__buf_steal(&b);
    }
    if (strncmp(classname, mod, ml) == 0 && (classname[ml] == '\0' || classname[ml] == '.')) {
      rest = classname + ml;
    } else {
      /* A --junit-prefix puts components before the module. */
      const char *p;
      for (p = strchr(classname, '.'); p; p = strchr(p + 1, '.')) {
        if (strncmp(p + 1, mod, ml) == 0 && (p[1 + ml] == '\0' || p[1 + ml] == '.')) {
          rest = p + 1 + ml;
          break;
        }
      }
    }
    free(mod);
    tpuci__buf_adds(&b, file);
    if (rest != NULL && *rest == '.') {
      tpuci__buf_adds(&b, "::");
      tpuci__add_dots_as(&b, rest + 1, strlen(rest + 1), "::");
    }
    tpuci__buf_adds(&b, "::");
    tpuci__buf_adds(&b, name);
    return tpuci__buf_steal(&b);
  }

  if (cn == 0) {
    /* A collection error: "tests.test_m" is tests/test_m.py. */
    const char *bracket = strchr(name, '[');
    size_t n = bracket ? (size_t) (bracket - name) : strlen(name);
    tpuci__add_dots_as(&b, name, n, "/");
    tpuci__buf_adds(&b, ".py");
    if (bracket) tpuci__buf_adds(&b, bracket);
    return tpuci__buf_steal(&b);
  }
  if (strcmp(classname, "pytest") == 0 && strcmp(name, "internal") == 0) {
    /* pytest_internalerror's test case. */
    tpuci__buf_adds(&b, "pytest::internal");
    return tpuci__buf_steal(&b);
  }
  {
    /* Trailing components that look like classes; the module keeps at
     * least one component. */
    size_t split = cn; /* where the classes begin (at a '.' or cn) */
    size_t i = cn;
    while (i > 0) {
      size_t start = i;
      while (start > 0 && classname[start - 1] != '.') start--;
      if (start == 0 || !tpuci__is_upper(classname[start])) break;
      split = start - 1;
      i = start - 1;
    }
    tpuci__add_dots_as(&b, classname, split, "/");
    tpuci__buf_adds(&b, ".py");
    if (split < cn) {
      tpuci__buf_adds(&b, "::");
      tpuci__add_dots_as(&b, classname + split + 1, cn - split - 1, "::");
    }
    tpuci__buf_adds(&b, "::");
    tpuci__buf_adds(&b, name);
    return tpuci__buf_steal(&b);
  }
}

size_t tpuci__junit_resolve_ids(tpuci__junit_t *j, const tpuci__strv_t *known) {
  tpuci__idmap_t map;
  tpuci__strv_t keys = {0};
  size_t i, changed = 0;

  tpuci__idmap_init(&map);
  for (i = 0; i < known->len; i++) {
    char *cls, *name;
    tpuci__junit_mangle(known->items[i], &cls, &name);
    tpuci__strv_take(&keys, tpuci__printf("%s\x1f%s", cls, name));
    free(cls);
    free(name);
  }
  for (i = 0; i < keys.len; i++) tpuci__idmap_put(&map, keys.items[i], i);
  for (i = 0; i < j->len; i++) {
    tpuci__test_t *t = &j->items[i];
    char *key = tpuci__printf("%s\x1f%s", t->classname ? t->classname : "", t->name ? t->name : "");
    size_t k = tpuci__idmap_get(&map, key);
    free(key);
    if (k != TPUCI__IDMAP_NONE && strcmp(t->id, known->items[k]) != 0) {
      free(t->id);
      t->id = tpuci__strdup(known->items[k]);
      changed++;
    }
  }
  tpuci__idmap_free(&map);
  tpuci__strv_free(&keys);
  return changed;
}

/* ------------------------------------------------------------------ */
/* Clipped text: the head and the tail of a long body                  */

typedef struct {
  int present;
  size_t max, head_max, tail_max;
  size_t total;
  tpuci__buf_t head;
  char *ring;
  size_t ring_len, ring_pos;
} tpuci__clip_t;

static void tpuci__clip_start(tpuci__clip_t *c, size_t max) {
  memset(c, 0, sizeof(*c));
  c->present = 1;
  c->max = max;
  c->head_max = max / 4;
  c->tail_max = max - c->head_max;
}

static void tpuci__clip_reset(tpuci__clip_t *c) {
  tpuci__buf_free(&c->head);
  free(c->ring);
  memset(c, 0, sizeof(*c));
}

static void tpuci__clip_add(tpuci__clip_t *c, const char *s, size_t n) {
  size_t take;

  c->total += n;
  if (c->head.len < c->head_max) {
    take = c->head_max - c->head.len;
    if (take > n) take = n;
    tpuci__buf_add(&c->head, s, take);
    s += take;
    n -= take;
  }
  if (n == 0) return;
  if (c->ring == NULL) c->ring = tpuci__malloc(c->tail_max);
  if (n >= c->tail_max) {
    memcpy(c->ring, s + n - c->tail_max, c->tail_max);
    c->ring_len = c->tail_max;
    c->ring_pos = 0;
    return;
  }
  while (n > 0) {
    take = c->tail_max - c->ring_pos;
    if (take > n) take = n;
    memcpy(c->ring + c->ring_pos, s, take);
    c->ring_pos = (c->ring_pos + take) % c->tail_max;
    if (c->ring_len < c->tail_max) {
      c->ring_len += take;
      if (c->ring_len > c->tail_max) c->ring_len = c->tail_max;
    }
    s += take;
    n -= take;
  }
}

/* Length of s[0..n) without a trailing incomplete UTF-8 sequence. */
static size_t tpuci__utf8_cut(const char *s, size_t n) {
  size_t i = n, back = 0;
  while (i > 0 && back < 4 && ((unsigned char) s[i - 1] & 0xC0) == 0x80) {
    i--;
    back++;
  }
  if (i > 0) {
    unsigned char lead = (unsigned char) s[i - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (lead >= 0xC0 && need > back + 1) return i - 1;
  }
  return n;
}

/* Hands out the clipped text (NULL when the element never started). */
static char *tpuci__clip_finish(tpuci__clip_t *c) {
  tpuci__buf_t out;
  char *tail;
  size_t tail_len, skip = 0;

  if (!c->present) return NULL;
  if (c->total == 0) {
    tpuci__clip_reset(c);
    return NULL;
  }
  tpuci__buf_init(&out);
  tail = tpuci__malloc(c->ring_len + 1);
  if (c->ring_len == 0) {
    /* Everything fit in the head. */
  } else if (c->ring_len < c->tail_max) {
    memcpy(tail, c->ring, c->ring_len);
  } else {
    memcpy(tail, c->ring + c->ring_pos, c->tail_max - c->ring_pos);
    memcpy(tail + c->tail_max - c->ring_pos, c->ring, c->ring_pos);
  }
  tail_len = c->ring_len;
  if (c->total > c->head.len + c->ring_len) {
    size_t dropped;
    size_t head_len = tpuci__utf8_cut(c->head.data ? c->head.data : "", c->head.len);
    while (skip < tail_len && skip < 3 && ((unsigned char) tail[skip] & 0xC0) == 0x80) skip++;
    dropped = c->total - head_len - (tail_len - skip);
    tpuci__buf_add(&out, c->head.data ? c->head.data : "", head_len);
    tpuci__buf_addf(&out, "\n[... %zu bytes truncated by tpuci ...]\n", dropped);
  } else {
    tpuci__buf_add(&out, c->head.data ? c->head.data : "", c->head.len);
  }
  tpuci__buf_add(&out, tail + skip, tail_len - skip);
  free(tail);
  tpuci__clip_reset(c);
  return tpuci__buf_steal(&out);
}

static char *tpuci__clip_string(const char *s, size_t max) {
  tpuci__clip_t c;
  if (*s == '\0') return tpuci__strdup("");
  tpuci__clip_start(&c, max);
  tpuci__clip_add(&c, s, strlen(s));
  return tpuci__clip_finish(&c);
}

/* ------------------------------------------------------------------ */
/* The Expat parser                                                    */

typedef struct {
  XML_Parser p;
  tpuci__junit_t *j;
  tpuci__idmap_t map;
  int depth;
  int failed;
  char msg[256];
  unsigned long line, col;

  int case_depth; /* depth of the open <testcase>, 0 if none */
  size_t joins;   /* repeated test cases merged so far */
  tpuci__test_t cur;
  int cur_rank;      /* rank of the outcome element seen so far */
  int outcome_elems; /* outcome elements in this test case */
  int capture_depth; /* depth of the element whose text is captured */
  tpuci__clip_t *capture;
  tpuci__clip_t text, out, err;
} tpuci__jp_t;

static void tpuci__jp_fail(tpuci__jp_t *jp, const char *fmt, ...) TPUCI__PRINTF(2, 3);

static void tpuci__jp_fail(tpuci__jp_t *jp, const char *fmt, ...) {
  va_list ap;
  if (jp->failed) return;
  jp->failed = 1;
  jp->line = (unsigned long) XML_GetCurrentLineNumber(jp->p);
  jp->col = (unsigned long) XML_GetCurrentColumnNumber(jp->p) + 1;
  va_start(ap, fmt);
  vsnprintf(jp->msg, sizeof(jp->msg), fmt, ap);
  va_end(ap);
  XML_StopParser(jp->p, XML_FALSE);
}

static const char *tpuci__attr(const XML_Char **atts, const char *key) {
  size_t i;
  for (i = 0; atts[i] != NULL; i += 2)
    if (strcmp(atts[i], key) == 0) return atts[i + 1];
  return NULL;
}

/* A non-negative decimal ("0.123", "1e-3"); 0 when invalid. Not strtod:
 * that one follows the locale's decimal point. */
static double tpuci__parse_seconds(const char *s) {
  double v = 0, scale = 1;
  int digits = 0, ex = 0, exneg = 0, exdigits = 0;

  if (s == NULL) return 0;
  while (*s == ' ') s++;
  if (*s == '+') s++;
  while (*s >= '0' && *s <= '9') {
    v = v * 10 + (*s++ - '0');
    digits++;
  }
  if (*s == '.') {
    s++;
    while (*s >= '0' && *s <= '9') {
      scale /= 10;
      v += (*s++ - '0') * scale;
      digits++;
    }
  }
  if (digits == 0) return 0;
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '-' || *s == '+') exneg = *s++ == '-';
    while (*s >= '0' && *s <= '9') {
      if (ex < 400) ex = ex * 10 + (*s - '0');
      s++;
      exdigits++;
    }
    if (exdigits == 0) return 0;
    while (ex-- > 0) {
      v = exneg ? v / 10 : v * 10;
      if (v > 1e12) return 0;
    }
  }
  if (!(v >= 0 && v <= 1e12)) return 0; /* also NaN */
  return v;
}

static int tpuci__parse_line(const char *s) {
  long v = 0;
  if (s == NULL || *s == '\0') return -1;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    v = v * 10 + (*s - '0');
    if (v > 1000000000L) return -1;
  }
  return (int) v;
}

static int tpuci__outcome_rank(tpuci__test_outcome_t o) {
  switch (o) {
    case TPUCI_TEST_FAILED: return 4;
    case TPUCI_TEST_ERROR: return 3;
    case TPUCI_TEST_XFAIL: return 2;
    case TPUCI_TEST_SKIPPED: return 1;
    default: return 0;
  }
}

static void tpuci__jp_start_case(tpuci__jp_t *jp, const XML_Char **atts) {
  const char *v;
  memset(&jp->cur, 0, sizeof(jp->cur));
  jp->cur.line = -1;
  jp->cur.outcome = TPUCI_TEST_PASSED;
  v = tpuci__attr(atts, "classname");
  jp->cur.classname = tpuci__clip_string(v ? v : "", TPUCI__JUNIT_NAME_MAX);
  v = tpuci__attr(atts, "name");
  jp->cur.name = tpuci__clip_string(v ? v : "", TPUCI__JUNIT_NAME_MAX);
  v = tpuci__attr(atts, "file");
  if (v != NULL) jp->cur.file = tpuci__clip_string(v, TPUCI__JUNIT_NAME_MAX);
  jp->cur.line = tpuci__parse_line(tpuci__attr(atts, "line"));
  jp->cur.time_s = tpuci__parse_seconds(tpuci__attr(atts, "time"));
  jp->cur_rank = 0;
  jp->outcome_elems = 0;
  jp->case_depth = jp->depth;
}

static void tpuci__jp_outcome(tpuci__jp_t *jp, tpuci__test_outcome_t o, const char *tag,
                              const XML_Char **atts) {
  const char *type = tpuci__attr(atts, "type");
  const char *message = tpuci__attr(atts, "message");
  int rank = tpuci__outcome_rank(o);

  if (jp->outcome_elems++ == 0) {
    tpuci__clip_start(&jp->text, TPUCI__JUNIT_TEXT_MAX);
  } else {
    /* A second outcome element: keep its words in the text. */
    char *line = tpuci__printf("\n--- %s: %s ---\n", tag, message ? message : "");
    tpuci__clip_add(&jp->text, line, strlen(line));
    free(line);
  }
  if (rank > jp->cur_rank) {
    jp->cur_rank = rank;
    jp->cur.outcome = o;
    free(jp->cur.type);
    free(jp->cur.message);
    jp->cur.type = type ? tpuci__clip_string(type, TPUCI__JUNIT_NAME_MAX) : NULL;
    jp->cur.message = message ? tpuci__clip_string(message, TPUCI__JUNIT_MESSAGE_MAX) : NULL;
  }
  jp->capture = &jp->text;
  jp->capture_depth = jp->depth;
}

static void XMLCALL tpuci__jp_start(void *ud, const XML_Char *name, const XML_Char **atts) {
  tpuci__jp_t *jp = ud;

  if (jp->failed) return;
  jp->depth++;
  if (jp->depth > TPUCI__JUNIT_MAX_DEPTH) {
    tpuci__jp_fail(jp, "elements nested deeper than %d", TPUCI__JUNIT_MAX_DEPTH);
    return;
  }
  if (jp->depth == 1) {
    if (strcmp(name, "testsuites") != 0 && strcmp(name, "testsuite") != 0) {
      tpuci__jp_fail(jp, "the root element is <%.64s>, not <testsuites> or <testsuite>", name);
      return;
    }
  }
  if (strcmp(name, "testsuite") == 0 && jp->case_depth == 0) {
    jp->j->suites++;
    return;
  }
  if (jp->case_depth == 0) {
    if (strcmp(name, "testcase") == 0) tpuci__jp_start_case(jp, atts);
    return;
  }
  if (jp->depth != jp->case_depth + 1 || jp->capture != NULL) return;
  /* A child of the open test case. */
  if (strcmp(name, "failure") == 0) {
    tpuci__jp_outcome(jp, TPUCI_TEST_FAILED, name, atts);
  } else if (strcmp(name, "error") == 0) {
    tpuci__jp_outcome(jp, TPUCI_TEST_ERROR, name, atts);
  } else if (strcmp(name, "skipped") == 0) {
    const char *type = tpuci__attr(atts, "type");
    tpuci__jp_outcome(
        jp, type && strcmp(type, "pytest.xfail") == 0 ? TPUCI_TEST_XFAIL : TPUCI_TEST_SKIPPED, name,
        atts);
  } else if (strcmp(name, "system-out") == 0) {
    if (!jp->out.present) tpuci__clip_start(&jp->out, TPUCI__JUNIT_TEXT_MAX);
    jp->capture = &jp->out;
    jp->capture_depth = jp->depth;
  } else if (strcmp(name, "system-err") == 0) {
    if (!jp->err.present) tpuci__clip_start(&jp->err, TPUCI__JUNIT_TEXT_MAX);
    jp->capture = &jp->err;
    jp->capture_depth = jp->depth;
  } else if (strcmp(name, "flakyFailure") == 0 || strcmp(name, "flakyError") == 0 ||
             strcmp(name, "rerunFailure") == 0 || strcmp(name, "rerunError") == 0) {
    jp->cur.reruns++;
  }
}

/* Joins b's text into a's: "a\n\n--- label ---\nb", clipped. */
static char *tpuci__join_text(char *a, char *b, const char *label) {
  char *joined, *clipped;
  if (b == NULL) return a;
  if (a == NULL) return b;
  joined = tpuci__printf("%s\n\n--- %s ---\n%s", a, label, b);
  clipped = tpuci__clip_string(joined, TPUCI__JUNIT_TEXT_MAX);
  free(joined);
  free(a);
  free(b);
  return clipped;
}

/* pytest writes a call failure and a teardown error of one test as two
 * test cases with the same name: fold `t` into `into`. */
static void tpuci__merge_case(tpuci__test_t *into, tpuci__test_t *t, int join) {
  char label[160];
  into->time_s += t->time_s;
  into->reruns += t->reruns;
  if (tpuci__outcome_rank(t->outcome) > tpuci__outcome_rank(into->outcome)) {
    tpuci__test_outcome_t o = into->outcome;
    char *type = into->type, *msg = into->message, *text = into->text;
    into->outcome = t->outcome;
    into->type = t->type;
    into->message = t->message;
    into->text = t->text;
    t->outcome = o;
    t->type = type;
    t->message = msg;
    t->text = text;
  }
  if (!join) {
    /* Past TPUCI__JUNIT_MAX_JOINS only the outcome and time count: each
     * join copies up to TPUCI__JUNIT_TEXT_MAX bytes. */
  } else if (t->outcome != TPUCI_TEST_PASSED || t->text != NULL) {
    snprintf(label, sizeof(label), "also %s: %.120s", tpuci__test_outcome_name(t->outcome),
             t->message ? t->message : "");
    into->text = tpuci__join_text(into->text, t->text, label);
    t->text = NULL;
  }
  if (join) {
    into->system_out = tpuci__join_text(into->system_out, t->system_out, "system-out");
    t->system_out = NULL;
    into->system_err = tpuci__join_text(into->system_err, t->system_err, "system-err");
    t->system_err = NULL;
  }
  tpuci__test_free(t);
}

static void tpuci__jp_end_case(tpuci__jp_t *jp) {
  tpuci__junit_t *j = jp->j;
  tpuci__test_t *t = &jp->cur;
  size_t k;

  t->text = tpuci__clip_finish(&jp->text);
  t->system_out = tpuci__clip_finish(&jp->out);
  t->system_err = tpuci__clip_finish(&jp->err);
  t->id = tpuci__junit_node_id(t->classname, t->name, t->file);
  jp->case_depth = 0;
  k = tpuci__idmap_get(&jp->map, t->id);
  if (k != TPUCI__IDMAP_NONE) {
    tpuci__merge_case(&j->items[k], t, jp->joins++ < TPUCI__JUNIT_MAX_JOINS);
    return;
  }
  if (j->len >= TPUCI__JUNIT_MAX_TESTS) {
    tpuci__test_free(t);
    tpuci__jp_fail(jp, "more than %d test cases", TPUCI__JUNIT_MAX_TESTS);
    return;
  }
  if (j->len == j->cap) {
    j->cap = j->cap ? j->cap * 2 : 16;
    j->items = tpuci__realloc(j->items, j->cap * sizeof(*j->items));
  }
  j->items[j->len] = *t;
  tpuci__idmap_put(&jp->map, j->items[j->len].id, j->len);
  j->len++;
  memset(t, 0, sizeof(*t));
}

static void XMLCALL tpuci__jp_end(void *ud, const XML_Char *name) {
  tpuci__jp_t *jp = ud;
  (void) name;
  if (jp->failed) return;
  if (jp->capture != NULL && jp->depth == jp->capture_depth) jp->capture = NULL;
  if (jp->case_depth != 0 && jp->depth == jp->case_depth) tpuci__jp_end_case(jp);
  jp->depth--;
}

static void XMLCALL tpuci__jp_chars(void *ud, const XML_Char *s, int len) {
  tpuci__jp_t *jp = ud;
  if (jp->failed || jp->capture == NULL || len <= 0) return;
  tpuci__clip_add(jp->capture, s, (size_t) len);
}

static void XMLCALL tpuci__jp_entity(void *ud, const XML_Char *name, int is_param,
                                     const XML_Char *value, int value_length, const XML_Char *base,
                                     const XML_Char *system_id, const XML_Char *public_id,
                                     const XML_Char *notation) {
  tpuci__jp_t *jp = ud;
  (void) is_param, (void) value, (void) value_length, (void) base;
  (void) system_id, (void) public_id, (void) notation;
  /* No JUnit writer declares entities; billion laughs and external
   * entities start here. */
  tpuci__jp_fail(jp, "entity declarations are not allowed (<!ENTITY %.64s>)", name);
}

static int tpuci__junit_parse_named(const char *what, const char *data, size_t len,
                                    tpuci__junit_t *j, tpuci__err_t *err) {
  tpuci__jp_t jp;
  size_t off = 0, chunk = 64 * 1024;
  int rc = 0;

  if (len > TPUCI__JUNIT_MAX_BYTES)
    return tpuci__err_set(err, TPUCI_EIO, "%s: the report has %zu bytes, over the limit of %zu",
                          what, len, TPUCI__JUNIT_MAX_BYTES);
  memset(&jp, 0, sizeof(jp));
  jp.j = j;
  tpuci__idmap_init(&jp.map);
  for (off = 0; off < j->len; off++) tpuci__idmap_put(&jp.map, j->items[off].id, off);
  off = 0;
  jp.p = XML_ParserCreate(NULL);
  if (jp.p == NULL) {
    tpuci__idmap_free(&jp.map);
    return tpuci__err_set(err, TPUCI_ENOMEM, "%s: cannot create an XML parser", what);
  }
  XML_SetUserData(jp.p, &jp);
  XML_SetElementHandler(jp.p, tpuci__jp_start, tpuci__jp_end);
  XML_SetCharacterDataHandler(jp.p, tpuci__jp_chars);
  XML_SetEntityDeclHandler(jp.p, tpuci__jp_entity);
  XML_SetParamEntityParsing(jp.p, XML_PARAM_ENTITY_PARSING_NEVER);
#if XML_MAJOR_VERSION > 2 || (XML_MAJOR_VERSION == 2 && XML_MINOR_VERSION >= 4)
  /* Belt and braces: entities are refused above anyway. */
  XML_SetBillionLaughsAttackProtectionMaximumAmplification(jp.p, 10.0f);
  XML_SetBillionLaughsAttackProtectionActivationThreshold(jp.p, 1024 * 1024);
#endif

  for (;;) {
    size_t n = len - off < chunk ? len - off : chunk;
    int final = off + n == len;
    XML_Index at;

    if (XML_Parse(jp.p, data + off, (int) n, final) != XML_STATUS_OK) {
      if (!jp.failed) {
        jp.failed = 1;
        jp.line = (unsigned long) XML_GetCurrentLineNumber(jp.p);
        jp.col = (unsigned long) XML_GetCurrentColumnNumber(jp.p) + 1;
        snprintf(jp.msg, sizeof(jp.msg), "%s", XML_ErrorString(XML_GetErrorCode(jp.p)));
      }
      break;
    }
    off += n;
    if (final) break;
    /* Expat before 2.6 rescans an unfinished token from its start on
     * every call; growing the chunk while one is pending keeps a huge
     * attribute linear instead of quadratic. */
    at = XML_GetCurrentByteIndex(jp.p);
    if (at >= 0 && off - (size_t) at > chunk / 2 && chunk < ((size_t) 64 << 20)) chunk *= 2;
  }
  if (jp.failed)
    rc = tpuci__err_set(err, TPUCI_EIO, "%s:%lu:%lu: %s", what, jp.line, jp.col, jp.msg);

  /* A test case left open by an error is dropped. */
  if (jp.case_depth != 0) {
    tpuci__clip_reset(&jp.text);
    tpuci__clip_reset(&jp.out);
    tpuci__clip_reset(&jp.err);
    tpuci__test_free(&jp.cur);
  }
  XML_ParserFree(jp.p);
  tpuci__idmap_free(&jp.map);
  return rc;
}

int tpuci__junit_parse(const char *data, size_t len, tpuci__junit_t *j, tpuci__err_t *err) {
  return tpuci__junit_parse_named("junit", data, len, j, err);
}

int tpuci__junit_parse_file(const char *path, tpuci__junit_t *j, tpuci__err_t *err) {
  char *data;
  size_t len;
  int r = tpuci__read_file(path, &data, &len);
  if (r != 0) return tpuci__err_set(err, r, "%s: cannot read: %s", path, tpuci_strerror(r));
  r = tpuci__junit_parse_named(path, data, len, j, err);
  free(data);
  return r;
}
