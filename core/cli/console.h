/* core/cli/: the tpuci command (main.c) and its console reporter (this
 * header). It uses only the public include/tpuci.h, as any program that
 * embeds the library would.
 *
 * The console reporter of the tpuci command. Uses only tpuci.h.
 *
 * Three styles:
 * - board: on a terminal (and not in CI), a status board redrawn in place
 *   below the lines of finished attempts: one line per running attempt
 *   (name, attempt, elapsed, last output line), counts, time left;
 * - plain: not a terminal, CI set or TERM=dumb: plain lines, no escape
 *   codes, and each finished attempt's output printed whole as one block;
 * - github (console_github.c): plain, with every block in
 *   ::group::/::endgroup::, ::error annotations for failures and
 *   ::warning for flaky tests and instances at repository-relative paths,
 *   and a Markdown summary appended to $GITHUB_STEP_SUMMARY.
 * With verbose, output is streamed live instead, a line at a time,
 * prefixed with the instance name. */
#ifndef TPUCI_CLI_CONSOLE_H
#define TPUCI_CLI_CONSOLE_H

#include <stdint.h>
#include <stdio.h>

#include "tpuci.h"

typedef enum {
  TPUCI_CONSOLE_PLAIN = 0,
  TPUCI_CONSOLE_BOARD,
  TPUCI_CONSOLE_GITHUB
} tpuci_console_style_t;

typedef struct {
  char *partial; /* -v: an incomplete output line */
  size_t partial_len;
  char last[160];      /* the last output line, for the board */
  uint64_t started_ms; /* 0: not running */
  uint64_t alive_ms;   /* when its last alive line was printed */
  int attempt;
  int max_attempts;
  int finished;
} tpuci_console_inst_t;

typedef struct {
  FILE *out;
  tpuci_console_style_t style;
  int color;         /* write ANSI colours */
  int verbose;       /* stream output live, prefixed */
  int quiet;         /* only failures and the summary */
  int tail_lines;    /* log lines shown when a block is too long */
  size_t block_max;  /* bytes of a log printed as its block */
  uint64_t alive_ms; /* plain and github: an alive line per running
                             attempt this often (on TICK events); 0: none */
  /* Private. */
  tpuci_console_inst_t *inst;
  size_t ninstances;
  size_t nselected;
  size_t running;
  size_t done;
  size_t counts[TPUCI_OUTCOME__COUNT];
  int board_lines; /* lines of the board on screen */
  uint64_t start_ms;
  uint64_t *expected_ms; /* per instance, from the previous run; 0: unknown */
  /* The image being pulled (TPUCI_EVENT_PULL), for the board. */
  int pulling;
  char pull_image[200];
  uint64_t pull_current, pull_total;
  int pull_layers;
  /* The pytest tests seen failing so far ("instance\x1fid" each once). */
  char **failed_tests;
  size_t nfailed_tests;
} tpuci_console_t;

void tpuci_console_init(tpuci_console_t *c, FILE *out, size_t n, size_t nselected);
void tpuci_console_free(tpuci_console_t *c);
/* Reads the durations of the previous run in `state_dir`, for the board's
 * time-left estimate. */
void tpuci_console_expect(tpuci_console_t *c, tpuci_ctx_t *ctx, const char *state_dir);
/* The tpuci_event_cb: pass the console as userdata. */
void tpuci_console_event(tpuci_run_t *run, const tpuci_event_t *ev, void *ud);
/* The final table and verdict (and the GitHub step summary). */
void tpuci_console_summary(tpuci_console_t *c, tpuci_run_t *run);

/* Shared by console.c and console_github.c. */

/* TPUCI_EVENT_TEST_FAILED: "[test   ] unit: FAILED tests/t.py::test_x -
 * AssertionError: ..." as it happens (console_tests.c); the tests seen
 * failing are counted for the board (c->nfailed_tests). */
void tpuci_console__test_failed(tpuci_console_t *c, const tpuci_event_t *ev);
void tpuci_console__tests_free(tpuci_console_t *c);
/* ", 4 unaffected (...)" for instance i's tests left out as unaffected. */
void tpuci_console__unaffected_note(tpuci_console_t *c, tpuci_run_t *run, size_t i);
/* After the tests: each quarantine entry that also covers tests that
 * passed, with how many ("quarantine: FILE:LINE also covers 3 tests that
 * passed: A, B, C"). */
void tpuci_console__quarantine_passing(tpuci_console_t *c, tpuci_run_t *run);
/* Escape sequences (tpuci_console__esc_len) go, and the other control
 * characters become spaces, in place: a line for the board. */
void tpuci_console__sanitize(char *s);
/* The length of the escape sequence at s (s[0] is ESC; 0 when it is not):
 * CSI (ESC [ ... final byte), OSC and the other control strings (ESC ],
 * P, X, ^, _ ... BEL or ESC \), or ESC, intermediates, a final byte; a
 * sequence cut by the end of s runs to it (ansi.c). */
size_t tpuci_console__esc_len(const char *s, size_t len);
/* Leaves out the escape sequences of s[0..len) in place; the new length
 * (s is NUL-terminated there when it got shorter). */
size_t tpuci_console__strip_esc(char *s, size_t len);
/* CI set (to anything but "", "0" or "false"): a log, not a screen. */
int tpuci_console__in_ci(void);
/* TERM=dumb: a terminal that understands no escape code at all. */
int tpuci_console__dumb_term(void);
/* --color=auto: colours on a terminal, unless NO_COLOR (set and not
 * empty, as no-color.org says), CI or TERM=dumb says otherwise. */
int tpuci_console__color_auto(void);
/* Writes a job's text: as it is with colours on (--color=always, or a
 * colour terminal), else without its escape sequences. */
void tpuci_console__put(tpuci_console_t *c, const char *s, size_t len);
/* Text tpuci did not write (a cause, a message, a test's id, a file's
 * field, another machine's answer) made safe to print inside a line of
 * tpuci's own (tpuci_text_safe: no escape code, no carriage return, no
 * workflow command); "" for NULL. The string lives until the eighth
 * call after this one: enough for the pieces of one line. */
const char *tpuci_console__safe(const char *s, int lines);
/* Writes text made safe line by line (tpuci_text_safe with lines): a
 * report, a list, JSON, whatever the library made of untrusted text. */
void tpuci_console__puts_safe(FILE *f, const char *text);
/* A path as the console shows it: relative to the current folder when it
 * is below it (".tpuci/runs/ID/unit/attempt-1.log": the path in a CI
 * workspace and in the artifact uploaded from it), else as it is
 * (absolute); a pointer into `path`. */
const char *tpuci_console__path(const char *path);
/* "1.2s", "250ms", "3m05s". */
void tpuci_console__duration(uint64_t ms, char *buf, size_t size);
/* Bytes the way docker's progress says them: "120/340 MB", "2.1 MB"
 * (total 0: unknown). */
void tpuci_console__bytes(uint64_t current, uint64_t total, char *buf, size_t size);
/* The sum of an instance's attempts. */
uint64_t tpuci_console__instance_ms(tpuci_run_t *run, size_t i);
/* The run's verdict in lower case; "not run" for an outcome of NONE. */
const char *tpuci_console__verdict(tpuci_run_t *run);
/* An outcome's color, and the reset after it ("" without color). */
const char *tpuci_console__color_of(const tpuci_console_t *c, tpuci_outcome_t o);
const char *tpuci_console__reset(const tpuci_console_t *c);
const char *tpuci_console__outcome_label(tpuci_outcome_t o);
/* Instance i's: its outcome's label, or "quarantined" when it failed only
 * by quarantined tests. */
const char *tpuci_console__outcome_label_of(tpuci_run_t *run, size_t i);
/* GitHub: the run's annotations, once it is over: an ::error for each
 * failing test (where it failed in the project) and for each failed
 * instance without one (at its job's line), a ::warning for each flaky or
 * quarantined test and flaky instance; one for a test (or an instance
 * failure) that went alike in several matrix instances, naming them; at
 * most GitHub's 10 of each kind, then a ::notice saying how many more
 * the step summary has (console_github.c). */
void tpuci_console__gh_annotations(tpuci_console_t *c, tpuci_run_t *run);
/* GitHub: the run appended to $GITHUB_STEP_SUMMARY as Markdown. */
void tpuci_console__gh_step_summary(tpuci_run_t *run);

#endif /* TPUCI_CLI_CONSOLE_H */
