/* Credential helpers (runtime/engine/credhelper.h): what a failed
 * helper's message may quote of its stderr (never its stdout, never a
 * word that looks like a credential), and the helper's process on the
 * loop: a child that keeps stdout open is killed with the helper's
 * process group when the helper exits, at the time cap and on cancel,
 * and the callback comes at once. Helpers are sh scripts written into a
 * temporary folder; a guard timer bounds every loop. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "runtime/engine/credhelper.h"
#include "base/util.h"

static const char secret_json[] =
    "{\"ServerURL\":\"127.0.0.1:5999\",\"Username\":\"ci\",\"Secret\":\"hunter2-S3CRET\"}\n";

static char *quote(const char *err, const char *out) {
  return tpuci__credhelper_quote(err, strlen(err), out, out ? strlen(out) : 0,
                                 "127.0.0.1:5999", "docker-credential-pass");
}

static void quotes(const char *err, const char *out, const char *want) {
  char *q = quote(err, out);
  if (want == NULL) {
    if (q != NULL) fail_msg("'%s' quoted as '%s', want nothing", err, q);
    return;
  }
  if (q == NULL || strcmp(q, want) != 0)
    fail_msg("'%s' quoted as '%s', want '%s'", err, q ? q : "(nothing)", want);
  free(q);
}

static void test_quote(void **state) {
  char big[1000];
  char *q;
  size_t i;
  (void) state;
  /* The secret stdout holds, whole or in part, in any word. */
  quotes("error: hunter2-S3CRET oops", secret_json, "error: *** oops");
  quotes("bad secret 'hunter2-S3' given", secret_json, "bad secret '***' given");
  quotes("xxhunter2yy failed", secret_json, "*** failed");
  quotes("hunter2-S3CRET", secret_json, NULL);
  /* A secret with spaces: every word of it. */
  quotes("refused: correct horse battery staple!",
         "{\"Secret\":\"correct horse battery staple\"}", "refused: *** *** *** ***");
  /* stdout that is not JSON: its words. */
  quotes("got hunter2-S3CRET back", "Secret=hunter2-S3CRET\n", "got *** back");
  /* Username and ServerURL are no secrets. */
  quotes("no login for user alice", "{\"Username\":\"alice\",\"Secret\":\"zzzzzzzzzz\"}",
         "no login for user alice");
  /* Without stdout: what looks like a credential. */
  quotes("token=ghp_abcdefghijklmnop1234 denied", NULL, "token=*** denied");
  quotes("auth aHVudGVyMi1TM0NSRVQ= refused", NULL, "auth ***= refused");
  quotes("key deadbeefcafebabe0 bad", NULL, "key *** bad");
  quotes("key abcdefghijklmnopq bad", NULL, "key *** bad");
  quotes("passwordIs wrong", NULL, "*** wrong");
  quotes("p/a/t/h/x/y bad", NULL, "*** bad");
  /* Words, the server and the helper's name stay. */
  quotes("pass not initialized: exit status 1", NULL, "pass not initialized: exit status 1");
  quotes("no credentials for 127.0.0.1:5999 in the keychain", NULL,
         "no credentials for 127.0.0.1:5999 in the keychain");
  quotes("docker-credential-pass: gpg: decryption failed: No secret key", NULL,
         "docker-credential-pass: gpg: decryption failed: No secret key");
  /* The first line that is not blank; controls become spaces. */
  quotes("\n   \n\tfirst line\nsecond line", NULL, "first line");
  quotes("a\x1b[31mred\x1b[0m", NULL, "a [31mred [0m");
  quotes("one\xe2\x80\xa8two\xc2\x85three", NULL, "one two three");
  quotes("bad \xff byte", NULL, "bad ? byte");
  quotes("", NULL, NULL);
  quotes("   \n\n", secret_json, NULL);
  /* At most TPUCI__CREDHELPER_QUOTE_MAX bytes. */
  for (i = 0; i + 1 < sizeof(big); i++) big[i] = i % 2 ? ' ' : 'a';
  big[sizeof(big) - 1] = '\0';
  q = quote(big, NULL);
  assert_non_null(q);
  assert_true(strlen(q) <= TPUCI__CREDHELPER_QUOTE_MAX);
  free(q);
}

/* Helpers on the loop. */

typedef struct {
  char dir[64];
  uv_loop_t loop;
  uv_timer_t guard;
  int guard_fired;
  int done, status;
  char why[512];
  char out[256];
} fx_t;

static int setup(void **state) {
  fx_t *fx = tpuci__calloc(1, sizeof(*fx));
  snprintf(fx->dir, sizeof(fx->dir), "/tmp/tpuci-credhelper.XXXXXX");
  assert_non_null(mkdtemp(fx->dir));
  assert_int_equal(uv_loop_init(&fx->loop), 0);
  uv_timer_init(&fx->loop, &fx->guard);
  fx->guard.data = fx;
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fx_t *fx = *state;
  char *cmd = tpuci__printf("rm -rf '%s'", fx->dir);
  uv_close((uv_handle_t *) &fx->guard, NULL);
  uv_run(&fx->loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&fx->loop), 0);
  assert_int_equal(system(cmd), 0);
  free(cmd);
  free(fx);
  return 0;
}

static void on_answer(void *data, int status, const char *out, size_t len,
                      const char *why) {
  fx_t *fx = data;
  fx->done++;
  fx->status = status;
  snprintf(fx->why, sizeof(fx->why), "%s", why);
  snprintf(fx->out, sizeof(fx->out), "%.*s", (int) len, out);
}

static void on_guard(uv_timer_t *t) {
  fx_t *fx = t->data;
  fx->guard_fired = 1;
}

/* Writes the helper script `body` as DIR/NAME; returns its path. */
static char *helper(fx_t *fx, const char *name, const char *body) {
  char *path = tpuci__printf("%s/%s", fx->dir, name);
  char *text = tpuci__printf("#!/bin/sh\nread -r server\n%s", body);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  chmod(path, 0700);
  free(text);
  return path;
}

/* Runs the loop until the answer came, or the guard (ms) fired. */
static void wait_answer(fx_t *fx, uint64_t guard_ms) {
  uv_timer_start(&fx->guard, on_guard, guard_ms, 0);
  while (!fx->done && !fx->guard_fired) uv_run(&fx->loop, UV_RUN_ONCE);
  uv_timer_stop(&fx->guard);
  if (!fx->done) fail_msg("no answer within %llu ms", (unsigned long long) guard_ms);
}

/* The pid a helper wrote into DIR/child.pid, waiting for it. */
static long child_pid(fx_t *fx) {
  char *path = tpuci__printf("%s/child.pid", fx->dir);
  long pid = 0;
  int i;
  for (i = 0; i < 500 && pid <= 0; i++) {
    FILE *f = fopen(path, "r");
    if (f != NULL) {
      if (fscanf(f, "%ld", &pid) != 1) pid = 0;
      fclose(f);
    }
    if (pid <= 0) uv_run(&fx->loop, UV_RUN_NOWAIT), usleep(10000);
  }
  free(path);
  assert_true(pid > 0);
  return pid;
}

/* Whether the process is gone: no such pid, or a zombie its new parent
 * has not reaped yet (it was killed). Waits up to 5 s for the kill to
 * land. */
static int gone(long pid) {
  char path[64], state = 0;
  int i;
  snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
  for (i = 0; i < 500; i++) {
    FILE *f = fopen(path, "r");
    int n;
    if (f == NULL) return 1;
    n = fscanf(f, "%*d %*s %c", &state);
    fclose(f);
    if (n == 1 && (state == 'Z' || state == 'X')) return 1;
    usleep(10000);
  }
  kill((pid_t) pid, SIGKILL);
  return 0;
}

static const char hold_stdout[] =
    "sleep 301 &\n"
    "echo $! > \"$(dirname \"$0\")/child.pid\"\n";

/* Runs helper NAME (BODY) with a cap of a minute until it answers;
 * expects `status` and, in the message, `want` (NULL: anything). */
static void answers(fx_t *fx, const char *name, const char *body, int status,
                    const char *want) {
  char *h = helper(fx, name, body);
  tpuci__credhelper_get(&fx->loop, h, "127.0.0.1:5999", 60000, on_answer, fx);
  wait_answer(fx, 20000);
  assert_int_equal(fx->status, status);
  if (want != NULL && strstr(fx->why, want) == NULL)
    fail_msg("'%s' lacks '%s'", fx->why, want);
  free(h);
}

static void test_failed_helper(void **state) {
  fx_t *fx = *state;
  answers(fx, "leaky",
          "printf '%s' '{\"ServerURL\":\"x\",\"Username\":\"ci\",\"Secret\":\"hunter2-S3CRET\"}'\n"
          "echo \"boom: hunter2-S3CRET rejected\" >&2\n"
          "exit 1\n",
          UV_EIO, "leaky get: exit 1 (stderr: boom: *** rejected)");
  assert_null(strstr(fx->why, "hunter2"));
  assert_null(strstr(fx->why, "Secret"));
  assert_string_equal(fx->out, "");
}

static void test_not_found_on_stderr(void **state) {
  answers(*state, "none", "echo 'credentials not found in native keychain' >&2\nexit 1\n",
          TPUCI__CREDHELPER_NONE, NULL);
}

/* It answered and exited, but left a child holding stdout: the child
 * goes with the group, and the answer comes without waiting for the
 * cap (60 s here; the guard is 10 s). */
static void test_exited_child_holds_stdout(void **state) {
  fx_t *fx = *state;
  char *body = tpuci__printf("%secho '{\"Secret\":\"s\"}'\nexit 0\n", hold_stdout);
  char *h = helper(fx, "leaves", body);
  long pid;
  tpuci__credhelper_get(&fx->loop, h, "r.example", 60000, on_answer, fx);
  pid = child_pid(fx);
  wait_answer(fx, 10000);
  assert_int_equal(fx->status, 0);
  assert_string_equal(fx->out, "{\"Secret\":\"s\"}\n");
  assert_true(gone(pid));
  free(body);
  free(h);
}

/* It never answers and its child holds stdout: at the cap (300 ms), or
 * when cancelled before it, the group is killed, reading stops, and the
 * answer comes at once (the cap is a minute when cancelled; the guard is
 * 10 s). */
static void hang(fx_t *fx, int cancel) {
  char *body = tpuci__printf("%swait\n", hold_stdout);
  char *h = helper(fx, "hangs", body);
  tpuci__credhelper_t *c =
      tpuci__credhelper_get(&fx->loop, h, "r.example", cancel ? 60000 : 300, on_answer, fx);
  long pid = child_pid(fx);
  if (cancel) tpuci__credhelper_cancel(c);
  wait_answer(fx, 10000);
  assert_int_equal(fx->status, cancel ? UV_ECANCELED : UV_ETIMEDOUT);
  if (!cancel) assert_non_null(strstr(fx->why, "hangs get: no answer within 0s; killed"));
  assert_true(gone(pid));
  free(body);
  free(h);
}

static void test_cap_kills_the_group(void **state) { hang(*state, 0); }
static void test_cancel_kills_the_group(void **state) { hang(*state, 1); }

/* Far too much output does not block the helper: what is past the cap
 * is dropped and it exits. */
static void test_too_much(void **state) {
  answers(*state, "chatty",
          "head -c 2000000 /dev/zero | tr '\\0' x\n"
          "head -c 2000000 /dev/zero | tr '\\0' y >&2\n"
          "exit 3\n",
          UV_EIO, "chatty get: exit 3");
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quote),     T(test_failed_helper),
      T(test_not_found_on_stderr),      T(test_exited_child_holds_stdout),
      T(test_cap_kills_the_group),      T(test_cancel_kills_the_group),
      T(test_too_much),
  };
#undef T
  return cmocka_run_group_tests_name("docker_credhelper", tests, NULL, NULL);
}
