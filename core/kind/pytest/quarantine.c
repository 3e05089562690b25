/* Quarantined tests: reading tpuci-quarantine.yaml with libyaml's
 * document loader (each node knows its line), expiry, matching node ids,
 * which entries the history says can go (quarantine.h), and the entries
 * it proposes (`tpuci flaky --propose`, flaky.h). */
#include "base/wildmatch.h"
#include "kind/pytest/quarantine.h"
#include "kind/pytest/flaky.h"
#include "kind/pytest/flaky_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <yaml.h>

#define TPUCI__QUARANTINE_MAX_BYTES ((size_t) 1 << 20)

static const char *const tpuci__q_keys[] = {"test", "reason", "owner", "until"};

void tpuci__quarantine_init(tpuci__quarantine_t *q) { memset(q, 0, sizeof(*q)); }

void tpuci__quarantine_free(tpuci__quarantine_t *q) {
  size_t i;
  for (i = 0; i < q->n; i++) {
    tpuci__quarantine_entry_t *e = &q->entries[i];
    free(e->test);
    free(e->reason);
    free(e->owner);
    free(e->until);
    free(e->where);
  }
  free(q->entries);
  free(q->path);
  tpuci__quarantine_init(q);
}

/* Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil). */
static long tpuci__days_from_civil(long y, unsigned m, unsigned d) {
  long era;
  unsigned yoe, doy, doe;
  y -= m <= 2;
  era = (y >= 0 ? y : y - 399) / 400;
  yoe = (unsigned) (y - era * 400);
  doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (long) doe - 719468;
}

long tpuci__quarantine_day(const char *s) {
  static const unsigned mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  long y;
  unsigned m, d, i;
  int leap;
  if (s == NULL || strlen(s) != 10 || s[4] != '-' || s[7] != '-') return -1;
  for (i = 0; i < 10; i++)
    if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9')) return -1;
  y = atol(s);
  m = (unsigned) atoi(s + 5);
  d = (unsigned) atoi(s + 8);
  if (y < 1970 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1]) return -1;
  leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (m == 2 && d == 29 && !leap) return -1;
  return tpuci__days_from_civil(y, m, d);
}

long tpuci__quarantine_today(void) { return (long) (time(NULL) / 86400); }

/* "NAME:LINE: " errors; libyaml's lines are 0-based. */
static int tpuci__q_fail(tpuci__err_t *err, const char *name, const yaml_node_t *n,
                         const char *what) {
  return tpuci__err_set(err, TPUCI_ESPEC, "%s:%lu: %s", name,
                        n ? (unsigned long) n->start_mark.line + 1 : 1ul, what);
}

static int tpuci__q_entry(yaml_document_t *doc, yaml_node_t *m, const char *name,
                          tpuci__quarantine_entry_t *e, tpuci__err_t *err) {
  yaml_node_pair_t *pair;
  char **slots[4];
  char *msg;
  size_t k;
  int r;
  slots[0] = &e->test;
  slots[1] = &e->reason;
  slots[2] = &e->owner;
  slots[3] = &e->until;
  e->where = tpuci__printf("%s:%lu", name, (unsigned long) m->start_mark.line + 1);
  if (m->type != YAML_MAPPING_NODE)
    return tpuci__q_fail(err, name, m,
                         "an entry is a mapping with the keys test, reason, "
                         "owner and until");
  for (pair = m->data.mapping.pairs.start; pair < m->data.mapping.pairs.top; pair++) {
    yaml_node_t *key = yaml_document_get_node(doc, pair->key);
    yaml_node_t *val = yaml_document_get_node(doc, pair->value);
    const char *ks =
        key && key->type == YAML_SCALAR_NODE ? (const char *) key->data.scalar.value : NULL;
    for (k = 0; ks && k < 4; k++)
      if (strcmp(ks, tpuci__q_keys[k]) == 0) break;
    if (ks == NULL || k == 4) {
      msg = tpuci__printf("'%s': unknown key (an entry has test, reason, owner and until)",
                          ks ? ks : "?");
      r = tpuci__q_fail(err, name, key, msg);
      free(msg);
      return r;
    }
    if (*slots[k] != NULL) {
      msg = tpuci__printf("'%s' given twice", ks);
      r = tpuci__q_fail(err, name, key, msg);
      free(msg);
      return r;
    }
    if (val == NULL || val->type != YAML_SCALAR_NODE || val->data.scalar.length == 0) {
      msg = tpuci__printf("'%s' must be a non-empty string", ks);
      r = tpuci__q_fail(err, name, val ? val : key, msg);
      free(msg);
      return r;
    }
    *slots[k] = tpuci__strndup((const char *) val->data.scalar.value, val->data.scalar.length);
    if (strlen(*slots[k]) != val->data.scalar.length) {
      msg = tpuci__printf("'%s' holds a NUL byte", ks);
      r = tpuci__q_fail(err, name, val, msg);
      free(msg);
      return r;
    }
    if (k == 3 && (e->until_day = tpuci__quarantine_day(e->until)) < 0) {
      msg = tpuci__printf("'until': '%s' is not a date YYYY-MM-DD (the last day the "
                          "quarantine holds)",
                          e->until);
      r = tpuci__q_fail(err, name, val, msg);
      free(msg);
      return r;
    }
  }
  for (k = 0; k < 4; k++)
    if (*slots[k] == NULL) {
      msg = tpuci__printf("'%s' is missing (every entry has test, reason, owner and until)",
                          tpuci__q_keys[k]);
      r = tpuci__q_fail(err, name, m, msg);
      free(msg);
      return r;
    }
  return 0;
}

/* After the first document: the stream must end (tpuci.yaml refuses a
 * second document too: a second list would be ignored without a word). */
static int tpuci__q_one_document(yaml_parser_t *parser, const char *name, tpuci__err_t *err) {
  yaml_document_t next;
  yaml_node_t *root;
  int r = 0;
  if (!yaml_parser_load(parser, &next))
    return tpuci__err_set(err, TPUCI_ESPEC, "%s:%lu:%lu: %s", name,
                          (unsigned long) parser->problem_mark.line + 1,
                          (unsigned long) parser->problem_mark.column + 1,
                          parser->problem ? parser->problem : "not YAML");
  if ((root = yaml_document_get_root_node(&next)) != NULL)
    r = tpuci__q_fail(err, name, root,
                      "a second document (the quarantine is one list of "
                      "entries; remove the '---' or join the lists)");
  yaml_document_delete(&next);
  return r;
}

int tpuci__quarantine_parse(const char *text, size_t len, const char *name, tpuci__quarantine_t *q,
                            tpuci__err_t *err) {
  yaml_parser_t parser;
  yaml_document_t doc;
  yaml_node_t *root;
  yaml_node_item_t *it;
  size_t n;
  int r = 0;

  memset(&parser, 0, sizeof(parser));
  if (!yaml_parser_initialize(&parser))
    return tpuci__err_set(err, TPUCI_ENOMEM, "%s: cannot start the YAML parser", name);
  yaml_parser_set_input_string(&parser, (const unsigned char *) text, len);
  if (!yaml_parser_load(&parser, &doc)) {
    r = tpuci__err_set(err, TPUCI_ESPEC, "%s:%lu:%lu: %s", name,
                       (unsigned long) parser.problem_mark.line + 1,
                       (unsigned long) parser.problem_mark.column + 1,
                       parser.problem ? parser.problem : "not YAML");
    yaml_parser_delete(&parser);
    return r;
  }
  root = yaml_document_get_root_node(&doc);
  if ((r = tpuci__q_one_document(&parser, name, err)) != 0) {
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return r;
  }
  yaml_parser_delete(&parser);
  if (root == NULL) {
    yaml_document_delete(&doc);
    return 0; /* An empty file: no entry. */
  }
  if (root->type != YAML_SEQUENCE_NODE) {
    r = tpuci__q_fail(err, name, root,
                      "the file is a list of entries "
                      "(- test: ..., reason: ..., owner: ..., until: ...)");
    yaml_document_delete(&doc);
    return r;
  }
  n = (size_t) (root->data.sequence.items.top - root->data.sequence.items.start);
  if (n > TPUCI__QUARANTINE_MAX) {
    yaml_document_delete(&doc);
    return tpuci__err_set(err, TPUCI_ESPEC, "%s: %zu entries, at most %d", name, n,
                          TPUCI__QUARANTINE_MAX);
  }
  q->entries = tpuci__calloc(n ? n : 1, sizeof(*q->entries));
  for (it = root->data.sequence.items.start; r == 0 && it < root->data.sequence.items.top; it++) {
    yaml_node_t *m = yaml_document_get_node(&doc, *it);
    r = tpuci__q_entry(&doc, m, name, &q->entries[q->n++], err);
  }
  yaml_document_delete(&doc);
  if (r != 0) {
    tpuci__quarantine_free(q);
    return r;
  }
  q->path = tpuci__strdup(name);
  return 0;
}

int tpuci__quarantine_load(const char *path, tpuci__quarantine_t *q, tpuci__err_t *err) {
  char *text = NULL;
  size_t len = 0;
  int r = tpuci__read_file_max(path, TPUCI__QUARANTINE_MAX_BYTES, &text, &len);
  if (r != 0) return tpuci__err_set(err, r, "%s: cannot read: %s", path, tpuci_strerror(r));
  r = tpuci__quarantine_parse(text, len, path, q, err);
  free(text);
  return r;
}

void tpuci__quarantine_expire(tpuci__quarantine_t *q, long today, tpuci__strv_t *warnings) {
  size_t i;
  for (i = 0; i < q->n; i++) {
    tpuci__quarantine_entry_t *e = &q->entries[i];
    e->expired = e->until_day < today;
    if (e->expired && warnings)
      tpuci__strv_take(warnings,
                       tpuci__printf("%s: the quarantine of '%s' (owner %s) expired on %s: "
                                     "it counts again",
                                     e->where, e->test, e->owner, e->until));
  }
}

/* Whether glob matches every node id: only '*' (base/wildmatch.h without flags:
 * '*' crosses '/' and '::' and matches nothing too). */
static int tpuci__q_everything(const char *glob) {
  return glob[0] != '\0' && strspn(glob, "*") == strlen(glob);
}

void tpuci__quarantine_lint(const tpuci__quarantine_t *q, tpuci__strv_t *warnings) {
  size_t i;
  for (i = 0; i < q->n; i++) {
    const tpuci__quarantine_entry_t *e = &q->entries[i];
    if (e->expired || !tpuci__q_everything(e->test)) continue;
    tpuci__strv_take(warnings,
                     tpuci__printf("%s: test '%s' covers every test: no test failure fails a "
                                   "pytest job while it holds (until %s, owner %s)",
                                   e->where, e->test, e->until, e->owner));
  }
}

const tpuci__quarantine_entry_t *tpuci__quarantine_match(const tpuci__quarantine_t *q,
                                                         const char *id) {
  size_t i;
  for (i = 0; q && id && i < q->n; i++) {
    const tpuci__quarantine_entry_t *e = &q->entries[i];
    if (e->expired) continue;
    if (strcmp(e->test, id) == 0 || tpuci__wildmatch(e->test, id, 0)) return e;
  }
  return NULL;
}

int tpuci__quarantine_released(const char *seq, int k) {
  size_t n = seq ? strlen(seq) : 0;
  int got = 0;
  if (k < 1) return 0;
  while (n > 0 && got < k) {
    char c = seq[--n];
    if (c == '-' || c == 's') continue;
    if (c != 'p') return 0;
    got++;
  }
  return got == k;
}

char *tpuci__quarantine_release_report(const tpuci__quarantine_t *q, const json_t *recent, int k,
                                       size_t *count) {
  tpuci__buf_t b;
  size_t i;
  /* "run" or "3 runs", after "its last". */
  char last[32];
  if (k == 1) snprintf(last, sizeof(last), "run");
  else snprintf(last, sizeof(last), "%d runs", k);
  *count = 0;
  tpuci__buf_init(&b);
  for (i = 0; i < q->n; i++) {
    const tpuci__quarantine_entry_t *e = &q->entries[i];
    const char *key;
    json_t *seq;
    size_t tests = 0, held = 0;
    if (e->expired) continue;
    json_object_foreach((json_t *) recent, key, seq) {
      const char *id = strchr(key, '\x1f');
      id = id ? id + 1 : key;
      if (tpuci__quarantine_match(q, id) != e) continue;
      tests++;
      if (!tpuci__quarantine_released(json_string_value(seq), k)) held++;
    }
    if (tests == 0 || held > 0) continue;
    (*count)++;
    if (tests == 1)
      tpuci__buf_addf(&b,
                      "%s: %s (owner %s, until %s): passed its last %s: remove the "
                      "entry\n",
                      e->where, e->test, e->owner, e->until, last);
    else
      tpuci__buf_addf(&b,
                      "%s: %s (owner %s, until %s): its %zu tests passed their last %s: "
                      "remove the entry\n",
                      e->where, e->test, e->owner, e->until, tests, last);
  }
  return tpuci__buf_steal(&b);
}

/* ------------------------------------------------------------------ */
/* Proposals from the history (`tpuci flaky --propose`, flaky.h)       */

/* `s` as a YAML double-quoted scalar (JSON's string syntax is YAML's). */
static void tpuci__yaml_quoted(tpuci__buf_t *b, const char *s) {
  json_t *v = json_string(s);
  char *q = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
  tpuci__buf_adds(b, q ? q : "\"\"");
  free(q);
  json_decref(v);
}

/* The runs the test's flips rest on, a comment line per tree (in the
 * order its first such run came): "  # tree 1a2b3c4:5e6f7a8b: run R1 f,
 * run R2 p". A run flaky within itself ('k', 'o') may be of no known
 * tree. */
static void tpuci__flaky_rests(tpuci__buf_t *b, const tpuci__flaky_stats_t *s,
                               const tpuci__flaky_test_t *t) {
  unsigned char *said = tpuci__calloc(s->ntrees + 2, 1);
  size_t i, j;
  for (i = 0; t->rests && i < s->nrun; i++) {
    int tr = s->tree_ix[i];
    size_t slot = tr < 0 ? s->ntrees : (size_t) tr;
    char name[24];
    if (!t->rests[i] || said[slot]) continue;
    said[slot] = 1;
    if (tr < 0) tpuci__buf_adds(b, "  # no known tree:");
    else {
      tpuci__flaky_tree_short(s->tree[i], name);
      tpuci__buf_addf(b, "  # tree %s:", name);
    }
    for (j = i; j < s->nrun; j++) {
      const char *run = json_string_value(json_object_get(s->parsed[j], "run"));
      if (t->rests[j] && s->tree_ix[j] == tr)
        tpuci__buf_addf(b, "%s run %s %c", j == i ? "" : ",", run ? run : "?", t->seq[j]);
    }
    tpuci__buf_adds(b, "\n");
  }
  free(said);
}

static void tpuci__flaky_entry(tpuci__buf_t *b, const tpuci__flaky_stats_t *s,
                               const tpuci__flaky_test_t *t, const tpuci__flaky_propose_t *o,
                               const char *until) {
  const tpuci__owner_rule_t *rule = NULL;
  char *file = tpuci__strdup(t->id), *reason, *cut = strstr(file, "::");
  const char *nl;
  int n;
  if (cut) *cut = '\0';
  if (o->owners) rule = tpuci__codeowners_match(o->owners, file);
  nl = t->last_msg ? strchr(t->last_msg, '\n') : NULL;
  n = t->last_msg ? (nl ? (int) (nl - t->last_msg) : (int) strlen(t->last_msg)) : 0;
  reason = tpuci__printf("flaky: flip rate %.2f (%zu flip%s in %zu run%s of %s), last failed "
                         "in run %s%s%.*s",
                         tpuci__flaky_rate(t), t->flips, t->flips == 1 ? "" : "s", t->runs,
                         t->runs == 1 ? "" : "s", t->instance, t->last_run, n ? ": " : "", n,
                         n ? t->last_msg : "");
  tpuci__buf_adds(b, "- test: ");
  tpuci__yaml_quoted(b, t->id);
  tpuci__buf_adds(b, "\n");
  tpuci__flaky_rests(b, s, t);
  tpuci__buf_adds(b, "  reason: ");
  tpuci__yaml_quoted(b, reason);
  tpuci__buf_adds(b, "\n  owner: ");
  if (rule != NULL && rule->owners[0] != '\0') {
    tpuci__yaml_quoted(b, rule->owners);
    tpuci__buf_addf(b, "  # %s:%d\n", o->owners->path, rule->line);
  } else {
    tpuci__buf_adds(b, "\"unowned\"  # ");
    if (o->owners == NULL) tpuci__buf_adds(b, "no CODEOWNERS file: set one\n");
    else if (rule == NULL) tpuci__buf_addf(b, "no line of %s covers %s\n", o->owners->path, file);
    else tpuci__buf_addf(b, "%s:%d gives %s no owner\n", o->owners->path, rule->line, file);
  }
  tpuci__buf_addf(b, "  until: %s\n", until);
  free(reason);
  free(file);
}

int tpuci__flaky_propose(const char *path, const tpuci__flaky_propose_t *o, char **out,
                         size_t *count, tpuci__err_t *err) {
  tpuci__flaky_stats_t s;
  tpuci__idmap_t seen;
  tpuci__buf_t b, body;
  char until[16];
  time_t t0 = (time_t) (o->today + TPUCI__PROPOSE_DAYS) * 86400;
  struct tm tm;
  size_t k, n = 0, held = 0;
  int r = tpuci__flaky_stats(path, o->runs, &s, err);
  if (r != 0) return r;
  gmtime_r(&t0, &tm);
  strftime(until, sizeof(until), "%Y-%m-%d", &tm);
  tpuci__idmap_init(&seen);
  tpuci__buf_init(&body);
  /* Most flips first: a test in two instances is proposed once, at its
   * higher rate. */
  for (k = 0; k < s.ntests; k++) {
    const tpuci__flaky_test_t *t = &s.tests[k];
    if (t->flips == 0 || tpuci__flaky_rate(t) < o->min_rate) continue;
    if (tpuci__idmap_get(&seen, t->id) != TPUCI__IDMAP_NONE) continue;
    tpuci__idmap_put(&seen, t->id, k);
    if (o->quarantine && tpuci__quarantine_match(o->quarantine, t->id)) {
      held++;
      continue;
    }
    tpuci__flaky_entry(&body, &s, t, o, until);
    n++;
  }
  tpuci__buf_init(&b);
  tpuci__buf_addf(&b,
                  "# tpuci flaky --propose: %zu test%s flipped in at least %.0f%% of %s "
                  "runs in the last %zu run%s (%s)",
                  n, n == 1 ? "" : "s", o->min_rate * 100, n == 1 ? "its" : "their", s.nrun,
                  s.nrun == 1 ? "" : "s", path);
  if (held) tpuci__buf_addf(&b, ", %zu more already quarantined", held);
  tpuci__buf_addf(
      &b, ".\n# Nothing is applied: copy the entries you agree with into %s.\n",
      o->quarantine && o->quarantine->path ? o->quarantine->path : TPUCI__QUARANTINE_FILE);
  if (n > 0)
    tpuci__buf_adds(&b, "# A flip is a change of result between two runs of one tree (commit:"
                        "files), or a run\n# flaky within itself (k, o); each entry names the "
                        "runs its flips rest on.\n");
  if (body.len) tpuci__buf_add(&b, body.data, body.len);
  tpuci__buf_free(&body);
  tpuci__idmap_free(&seen);
  tpuci__flaky_stats_free(&s);
  *out = tpuci__buf_steal(&b);
  if (count) *count = n;
  return 0;
}
