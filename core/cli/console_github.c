/* The console under GitHub Actions (see console.h): workflow commands
 * (::error and ::warning annotations where the test or the job is) and
 * the Markdown summary appended to $GITHUB_STEP_SUMMARY. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "console.h"

/* A GitHub annotation value must not contain newlines or '%'. */
static void gh_escape(FILE *out, const char *s) {
  for (; s && *s; s++) {
    if (*s == '%') fputs("%25", out);
    else if (*s == '\r') fputs("%0D", out);
    else if (*s == '\n') fputs("%0A", out);
    else fputc(*s, out);
  }
}

static void gh_property(FILE *out, const char *s) {
  for (; s && *s; s++) {
    if (*s == ',') fputs("%2C", out);
    else if (*s == ':') fputs("%3A", out);
    else if (*s == '%') fputs("%25", out);
    else if (*s == '\n') fputs("%0A", out);
    else fputc(*s, out);
  }
}

/* GitHub places an annotation by a path relative to the repository's
 * root: $GITHUB_WORKSPACE (else the current folder). An absolute path, or
 * one relative to the current folder (`cwd_relative`), below that root
 * becomes relative to it; anything else is written as it is. Returns a
 * new string. */
static char *gh_path(const char *path, int cwd_relative) {
  const char *ws = getenv("GITHUB_WORKSPACE");
  char *abs_path, *base, *real, *cwd, *out;
  size_t n;

  if (path == NULL) return NULL;
  if (path[0] != '/' && !cwd_relative) return strdup(path);
  if ((cwd = getcwd(NULL, 0)) == NULL) return strdup(path);
  abs_path = malloc(strlen(cwd) + strlen(path) + 2);
  base = strdup(ws && ws[0] == '/' ? ws : cwd);
  if (abs_path == NULL || base == NULL) {
    free(abs_path);
    free(base);
    free(cwd);
    return strdup(path);
  }
  if (path[0] == '/') strcpy(abs_path, path);
  else sprintf(abs_path, "%s/%s", cwd, path);
  free(cwd);
  /* Compare real paths when they exist (a workspace behind a link). */
  if ((real = realpath(abs_path, NULL)) != NULL) {
    free(abs_path);
    abs_path = real;
  }
  if ((real = realpath(base, NULL)) != NULL) {
    free(base);
    base = real;
  }
  n = strlen(base);
  while (n > 1 && base[n - 1] == '/') base[--n] = '\0';
  if (strncmp(abs_path, base, n) == 0 && abs_path[n] == '/') out = strdup(abs_path + n + 1);
  else out = strdup(abs_path);
  free(abs_path);
  free(base);
  return out;
}

/* "::error file=F,line=L,title=T::MESSAGE" (or ::warning). */
static void gh_command(FILE *out, const char *cmd, const char *file, int line,
                       const char *title1, const char *title2, const char *msg) {
  fprintf(out, "::%s ", cmd);
  if (file) {
    fputs("file=", out);
    gh_property(out, file);
    if (line > 0) fprintf(out, ",line=%d", line);
    fputc(',', out);
  }
  fputs("title=", out);
  gh_property(out, title1);
  fputs(" ", out);
  gh_property(out, title2);
  fputs("::", out);
  gh_escape(out, msg);
  fputc('\n', out);
}

/* pytest instances: an ::error for each failing test (a ::warning for a
 * quarantined one) and a ::warning for each flaky one, where the test
 * is. Returns how many were written. */
size_t tpuci_console__gh_annotate_tests(tpuci_console_t *c, tpuci_ctx_t *ctx,
                                        const tpuci_event_t *ev, int flaky) {
  size_t k, n = tpuci_test_count(ctx, ev->instance), written = 0;
  tpuci_test_info_t t = TPUCI_TEST_INFO_INIT;
  for (k = 0; k < n; k++) {
    char *file;
    if (tpuci_test_info(ctx, ev->instance, k, &t) != 0) continue;
    if (flaky ? !t.flaky : !t.failing) continue;
    file = gh_path(t.file, 0);
    if (flaky)
      gh_command(c->out, "warning", file, t.line, t.id, "flaky",
                 t.message ? t.message : "failed, then passed on a later attempt");
    else if (t.quarantined) {
      char title[512];
      snprintf(title, sizeof(title), "quarantined until %s (%s)", t.quarantine_until,
               t.quarantine_owner);
      gh_command(c->out, "warning", file, t.line, t.id, title,
                 t.message ? t.message : t.outcome);
    } else
      gh_command(c->out, "error", file, t.line, t.id, t.outcome,
                 t.message ? t.message : t.outcome);
    free(file);
    written++;
  }
  return written;
}

/* An instance that failed (::error) or was flaky (::warning): its tests
 * when it has some to show, else the line of the spec that declared its
 * job. */
void tpuci_console__gh_annotate(tpuci_console_t *c, tpuci_ctx_t *ctx, const tpuci_event_t *ev) {
  const char *where = tpuci_instance_where(ctx, ev->instance), *colon;
  int flaky = ev->outcome == TPUCI_OUTCOME_FLAKY;
  char *file = NULL, title[1024];
  const char *cause = NULL;
  int line = 0;

  if (tpuci_console__gh_annotate_tests(c, ctx, ev, 0) > 0) {
    tpuci_console__gh_annotate_tests(c, ctx, ev, 1);
    return;
  }
  if (tpuci_console__gh_annotate_tests(c, ctx, ev, 1) > 0 && flaky) return;
  if (where && (colon = strrchr(where, ':')) != NULL) {
    char spec[1024];
    size_t n = (size_t) (colon - where);
    if (n >= sizeof(spec)) n = sizeof(spec) - 1;
    memcpy(spec, where, n);
    spec[n] = '\0';
    file = gh_path(spec, 1);
    line = atoi(colon + 1);
  }
  {
    tpuci_attempt_info_t info = TPUCI_ATTEMPT_INFO_INIT;
    size_t k = tpuci_attempt_count(ctx, ev->instance);
    /* Flaky: the failure that was retried away; else the last cause. */
    while (k > 0 && tpuci_attempt_info(ctx, ev->instance, k - 1, &info) == 0) {
      cause = info.cause;
      if (!flaky || info.outcome != TPUCI_OUTCOME_PASSED) break;
      k--;
    }
  }
  snprintf(title, sizeof(title), "tpuci: %s", ev->name);
  gh_command(c->out, flaky ? "warning" : "error", file, line, title,
             tpuci_outcome_name(ev->outcome), cause ? cause : "");
  free(file);
}

/* Text as a Markdown code span in a table cell, whatever it holds: the
 * fence is one backtick longer than the longest run of backticks inside,
 * '|' is escaped (GitHub's tables split on it even in code spans), line
 * breaks become spaces, and a text that starts or ends with a backtick or
 * a space is padded so the span keeps it. Nothing in a code span is
 * Markdown or HTML, so no name or message can break the page. */
static void md_code(FILE *f, const char *s, size_t max) {
  size_t i, len = strlen(s ? s : ""), run = 0, longest = 0;
  int pad;
  if (s == NULL || len == 0) {
    fputs("` `", f);
    return;
  }
  if (len > max) len = max;
  for (i = 0; i < len; i++) {
    run = s[i] == '`' ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  pad = s[0] == '`' || s[0] == ' ' || s[len - 1] == '`' || s[len - 1] == ' ';
  for (i = 0; i <= longest; i++) fputc('`', f);
  if (pad) fputc(' ', f);
  for (i = 0; i < len; i++) {
    if (s[i] == '|') fputs("\\|", f);
    else if (s[i] == '\n' || s[i] == '\r') fputc(' ', f);
    else fputc(s[i], f);
  }
  if (pad) fputc(' ', f);
  for (i = 0; i <= longest; i++) fputc('`', f);
}

/* The first line of a message, for a table cell. */
static void md_first_line(FILE *f, const char *msg) {
  const char *nl = msg ? strpbrk(msg, "\r\n") : NULL;
  size_t n = msg ? (nl ? (size_t) (nl - msg) : strlen(msg)) : 0;
  char buf[256];
  if (n == 0) {
    fputs(" ", f);
    return;
  }
  if (n >= sizeof(buf)) n = sizeof(buf) - 1;
  memcpy(buf, msg, n);
  buf[n] = '\0';
  md_code(f, buf, sizeof(buf));
}

/* The failed (or flaky) tests of every pytest instance, as a table.
 * Returns how many rows were written. */
static size_t gh_summary_tests(FILE *f, tpuci_ctx_t *ctx, int flaky) {
  size_t i, k, n = tpuci_instance_count(ctx), rows = 0;
  tpuci_test_info_t t = TPUCI_TEST_INFO_INIT;
  for (i = 0; i < n; i++) {
    size_t nt = tpuci_instance_selected(ctx, i) ? tpuci_test_count(ctx, i) : 0;
    for (k = 0; k < nt; k++) {
      if (tpuci_test_info(ctx, i, k, &t) != 0 || !(flaky ? t.flaky : t.failing)) continue;
      if (rows++ == 0)
        fprintf(f, "\n#### %s tests\n\n| test | instance | %s | message |\n|---|---|---|---|\n",
                flaky ? "Flaky" : "Failed", flaky ? "runs" : "outcome");
      fputs("| ", f);
      md_code(f, t.id, 1024);
      fputs(" | ", f);
      md_code(f, tpuci_instance_name(ctx, i), 1024);
      if (flaky) fprintf(f, " | %d | ", t.runs);
      else if (t.quarantined) {
        fprintf(f, " | %s, quarantined until %s by ", t.outcome, t.quarantine_until);
        md_code(f, t.quarantine_owner, 256);
        fputs(" | ", f);
      } else fprintf(f, " | %s | ", t.outcome);
      md_first_line(f, t.message);
      fputs(" |\n", f);
    }
  }
  return rows;
}

/* The quarantined tests that passed their last runs, as a list. */
static void gh_summary_release(FILE *f, tpuci_ctx_t *ctx) {
  size_t i, k, n = tpuci_instance_count(ctx), rows = 0;
  tpuci_test_info_t t = TPUCI_TEST_INFO_INIT;
  for (i = 0; i < n; i++) {
    size_t nt = tpuci_instance_selected(ctx, i) ? tpuci_test_count(ctx, i) : 0;
    for (k = 0; k < nt; k++) {
      if (tpuci_test_info(ctx, i, k, &t) != 0 || !t.release_ready) continue;
      if (rows++ == 0)
        fputs("\n#### Quarantined tests ready to release\n\n"
              "(they passed their last runs: `tpuci flaky --release` lists the entries to "
              "remove)\n\n", f);
      fputs("- ", f);
      md_code(f, t.id, 1024);
      fputs(" (", f);
      md_code(f, t.quarantine_where, 1024);
      fputs(")\n", f);
    }
  }
}

/* Appends to $GITHUB_STEP_SUMMARY: the verdict, a table of every
 * instance, the counts, then the failed and the flaky tests. */
void tpuci_console__gh_step_summary(tpuci_ctx_t *ctx) {
  const char *path = getenv("GITHUB_STEP_SUMMARY");
  size_t i, n = tpuci_instance_count(ctx);
  char d[32];
  FILE *f;

  if (path == NULL || *path == '\0' || (f = fopen(path, "a")) == NULL) return;
  fprintf(f, "### tpuci: %s%s\n\n", tpuci_console__verdict(ctx),
          tpuci_run_write_errors(ctx) ? " (records incomplete)" : "");
  fprintf(f, "| instance | outcome | attempts | time |\n|---|---|---:|---:|\n");
  for (i = 0; i < n; i++) {
    if (!tpuci_instance_selected(ctx, i)) continue;
    tpuci_console__duration(tpuci_console__instance_ms(ctx, i), d, sizeof(d));
    fputs("| ", f);
    md_code(f, tpuci_instance_name(ctx, i), 1024);
    fprintf(f, " | %s | %zu | %s |\n", tpuci_console__outcome_label_of(ctx, i),
            tpuci_attempt_count(ctx, i), d);
  }
  tpuci_console__duration(tpuci_run_duration_ms(ctx), d, sizeof(d));
  fprintf(f, "\n%zu passed, ", tpuci_outcome_count(ctx, TPUCI_OUTCOME_PASSED));
  /* Passes whose inputs had not changed: not run (docs/cache.md). */
  if (tpuci_outcome_count(ctx, TPUCI_OUTCOME_CACHED) > 0)
    fprintf(f, "%zu cached, ", tpuci_outcome_count(ctx, TPUCI_OUTCOME_CACHED));
  fprintf(f, "%zu flaky, %zu failed, %zu timeout, %zu oom, %zu infra, %zu cancelled in %s\n",
          tpuci_outcome_count(ctx, TPUCI_OUTCOME_FLAKY),
          tpuci_outcome_count(ctx, TPUCI_OUTCOME_FAILED),
          tpuci_outcome_count(ctx, TPUCI_OUTCOME_TIMEOUT),
          tpuci_outcome_count(ctx, TPUCI_OUTCOME_OOM),
          tpuci_outcome_count(ctx, TPUCI_OUTCOME_INFRA),
          tpuci_outcome_count(ctx, TPUCI_OUTCOME_CANCELLED), d);
  gh_summary_tests(f, ctx, 0);
  gh_summary_tests(f, ctx, 1);
  gh_summary_release(f, ctx);
  fputc('\n', f);
  fclose(f);
}

