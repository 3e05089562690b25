/* A gang's start barrier in its containers (engine/gate.h) and the
 * output filter that takes tpuci's own lines out of a container's output
 * (engine/output.h): the wait step run by this machine's /bin/sh against
 * a fake getent whose names "come up" as files appear (it waits for every
 * name, says which ones it waits for, then runs the command with its
 * arguments, stdin and output unchanged, says its exit code and stays
 * until tpuci's end name resolves, then exits with that code; a SIGTERM
 * reaches the command and ends the wait at once; without any lookup
 * tool it says so and execs the command at once; without the end step,
 * podman's, it execs the command once the go resolves); its lines
 * parsed; the filter across every
 * chunk boundary, lines that only start like the key, a results block
 * that starts within a line (ending it), a stream that ends within a
 * line, and a second read that skips what was passed on; the results
 * block decoded into files (engine/logres.h): whole, replaced by a later
 * block, cut, corrupted, with a name that is not a plain file name. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "runtime/engine/gate.h"
#include "runtime/engine/logres.h"
#include "runtime/engine/output.h"
#include "runtime/runtime.h"
#include "base/util.h"

/* ------------------------------------------------------------------ */
/* The wait step                                                       */

/* dir/name (and dir/sub/name), in a buffer of its own (the last 4 calls
 * stay valid). */
static const char *at2(const char *dir, const char *sub, const char *name) {
  static char buf[4][512];
  static int n;
  char *b = buf[n++ % 4];
  snprintf(b, sizeof(buf[0]), "%s/%s%s%s", dir, sub, name ? "/" : "", name ? name : "");
  return b;
}
#define at(dir, name) at2((dir), (name), NULL)

static char *slurp(const char *path) {
  char *text = NULL;
  size_t len;
  if (tpuci__read_file(path, &text, &len) != 0) return tpuci__strdup("");
  return text;
}

static void write_file(const char *path, const char *text, int mode) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  chmod(path, (mode_t) mode);
}

/* Starts argv with PATH=path, UP=dir/up, stdout and stderr into files
 * of dir. Returns its pid. */
static pid_t spawn_step(const tpuci__strv_t *argv, const char *dir, const char *path) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (freopen(at(dir, "stdout"), "w", stdout) == NULL ||
        freopen(at(dir, "stderr"), "w", stderr) == NULL)
      _exit(99);
    setenv("PATH", path, 1);
    setenv("UP", at(dir, "up"), 1);
    execv(argv->items[0], argv->items);
    _exit(98);
  }
  return pid;
}

/* Waits until dir/file has `said` (bounded: 60 s). */
static void wait_said(const char *dir, const char *file, const char *said) {
  int k;
  for (k = 0; k < 6000; k++) {
    char *text = slurp(at(dir, file));
    int seen = strstr(text, said) != NULL;
    free(text);
    if (seen) return;
    usleep(10 * 1000);
  }
}

/* Runs argv as spawn_step does; while it runs, each of `names` appears
 * in dir/up (a peer coming up) once the step's stderr has said `said[i]`
 * (bounded: 60 s), so each state is seen however slow the machine.
 * Returns its exit status. */
static int run_step(const tpuci__strv_t *argv, const char *dir, const char *path,
                    const char *const *names, const char *const *said, size_t nnames) {
  pid_t pid = spawn_step(argv, dir, path);
  size_t i;
  int st;
  for (i = 0; i < nnames; i++) {
    wait_said(dir, "stderr", said[i]);
    write_file(at2(dir, "up", names[i]), "", 0644);
  }
  assert_int_equal(waitpid(pid, &st, 0), pid);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A folder of a fake name service for the wait step in `dir` (made):
 * bin/getent answers `getent hosts NAME` once up/NAME exists, and the
 * names `known` (NULL-terminated) exist already. Returns the PATH that
 * puts it first (a new string). */
static char *fake_names(char *dir, const char *const *known) {
  assert_non_null(mkdtemp(dir));
  assert_int_equal(mkdir(at(dir, "bin"), 0755), 0);
  assert_int_equal(mkdir(at(dir, "up"), 0755), 0);
  write_file(at2(dir, "bin", "getent"),
             "#!/bin/sh\n[ \"$1\" = hosts ] && [ -e \"$UP/$2\" ]\n", 0755);
  for (; *known != NULL; known++) write_file(at2(dir, "up", *known), "", 0644);
  return tpuci__printf("%s/bin:/usr/bin:/bin", dir);
}

static void test_wait_step(void **state) {
  char dir[] = "/tmp/tpuci-gate-XXXXXX";
  tpuci__strv_t cmd = {0}, argv = {0};
  const char *late[] = {"worker-2", "worker-1", NULL, NULL};
  char *path, *err, *out, *key = tpuci__ctl_key();
  char *wait1, *wait2, *ready, *upline, *done, *p, *go = tpuci__gate_name(key, TPUCI__GATE_GO);
  char *end = tpuci__gate_name(key, TPUCI__GATE_END);
  (void) state;

  path = fake_names(dir, (const char *const[]){"worker-0", NULL});

  tpuci__strv_push(&cmd, "/bin/sh");
  tpuci__strv_push(&cmd, "-c");
  tpuci__strv_push(&cmd, "echo \"job $0 $1\"; echo to-stderr >&2; exit 7");
  tpuci__strv_push(&cmd, "zero");
  tpuci__strv_push(&cmd, "one two");
  tpuci__gate_argv(&(tpuci__gang_member_t){.host = 0, .nhosts = 3, .gate_key = key, .gate_end = 1},
                   1u << 7, &cmd, &argv);
  assert_string_equal(argv.items[0], "/bin/sh");
  assert_string_equal(argv.items[1], "-c");
  assert_string_equal(argv.items[3], "tpuci-gang");
  assert_string_equal(argv.items[argv.len - 1], "one two");
  assert_null(argv.items[argv.len]);

  /* The peers come up, then tpuci's go. */
  assert_int_equal(strncmp(go, "tpuci-go-", 9), 0);
  assert_string_equal(go + 9, key + strlen("#tpuci-"));
  late[2] = go;
  /* Then, once its command said its end, tpuci's end. */
  late[3] = end;
  assert_int_equal(strncmp(end, "tpuci-end-", 10), 0);
  assert_string_equal(end + 10, key + strlen("#tpuci-"));
  wait1 = tpuci__printf("%s gang wait worker-1 worker-2\n", key);
  wait2 = tpuci__printf("%s gang wait worker-1\n", key);
  ready = tpuci__printf("%s gang ready\n", key);
  upline = tpuci__printf("%s gang up\n", key);
  done = tpuci__printf("%s gang done 7\n", key);
  {
    const char *said[] = {wait1, wait2, ready, done};
    assert_int_equal(run_step(&argv, dir, path, late, said, 4), 7);
  }
  out = slurp(at(dir, "stdout"));
  err = slurp(at(dir, "stderr"));
  /* The command ran as given, after the wait. */
  assert_string_equal(out, "job zero one two\n");
  p = strstr(err, wait1);
  assert_non_null(p);
  p = strstr(p, wait2);
  assert_non_null(p);
  p = strstr(p, ready);
  assert_non_null(p);
  p = strstr(p, upline);
  assert_non_null(p);
  /* Then the job's own stderr, its end; each set of names is said once. */
  p += strlen(upline);
  assert_int_equal(strncmp(p, "to-stderr\n", 10), 0);
  assert_string_equal(p + 10, done);
  assert_ptr_equal(strstr(err, wait1), strstr(err, key));
  free(out);
  free(err);

  /* Exit 7 does not let the peers run on: it stops the gang, and the
   * host exits at once, without its end step. */
  tpuci__strv_free(&argv);
  tpuci__gate_argv(&(tpuci__gang_member_t){.host = 0, .nhosts = 3, .gate_key = key, .gate_end = 1},
                   (1u << 1) | (1u << 5), &cmd, &argv);
  {
    const char *said[] = {wait1, wait2, ready};
    const char *late2[] = {"worker-2", "worker-1", go};
    assert_int_equal(unlink(at2(dir, "up", "worker-1")), 0);
    assert_int_equal(unlink(at2(dir, "up", "worker-2")), 0);
    assert_int_equal(unlink(at2(dir, "up", go)), 0);
    assert_int_equal(unlink(at2(dir, "up", end)), 0);
    assert_int_equal(run_step(&argv, dir, path, late2, said, 3), 7);
  }
  err = slurp(at(dir, "stderr"));
  p = strstr(err, upline);
  assert_non_null(p);
  assert_string_equal(p + strlen(upline), "to-stderr\n");
  free(err);

  /* No lookup tool at all: it says so and starts at once. */
  tpuci__strv_free(&argv);
  tpuci__gate_argv(&(tpuci__gang_member_t){.host = 1, .nhosts = 2, .gate_key = key, .gate_end = 1},
                   0, &cmd, &argv);
  assert_int_equal(run_step(&argv, dir, "/nonexistent", NULL, NULL, 0), 7);
  err = slurp(at(dir, "stderr"));
  p = tpuci__printf("%s gang none\n%s gang up\nto-stderr\n", key, key);
  assert_string_equal(err, p);
  free(p);
  free(err);

  tpuci__strv_free(&argv);
  tpuci__strv_free(&cmd);
  free(wait1);
  free(wait2);
  free(upline);
  free(ready);
  free(done);
  free(end);
  free(go);
  free(key);
  free(path);
  p = tpuci__printf("rm -rf '%s'", dir);
  assert_int_equal(system(p), 0);
  free(p);
}

/* Starts argv as spawn_step does and waits until its stderr or stdout
 * (`file`) has `said` (bounded: 60 s). Returns its pid. */
static pid_t spawn_until(const tpuci__strv_t *argv, const char *dir, const char *path,
                         const char *file, const char *said) {
  pid_t pid = spawn_step(argv, dir, path);
  wait_said(dir, file, said);
  return pid;
}

static int status_of(pid_t pid) {
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* tpuci's SIGTERM: passed on to a command that runs (the host then ends
 * with the command, without its end step), and it ends an idle host's
 * wait at once with its command's status. */
static void test_end_step_term(void **state) {
  char dir[] = "/tmp/tpuci-gate-XXXXXX";
  tpuci__strv_t cmd = {0}, argv = {0};
  char *key = tpuci__ctl_key(), *go = tpuci__gate_name(key, TPUCI__GATE_GO), *done, *err, *p;
  char *path;
  pid_t pid;
  (void) state;

  path = fake_names(dir, (const char *const[]){"worker-0", "worker-1", go, NULL});

  /* A command that runs: the SIGTERM reaches it, its status is the
   * host's, and no end is waited for (none will come). */
  tpuci__strv_push(&cmd, "/bin/sh");
  tpuci__strv_push(&cmd, "-c");
  tpuci__strv_push(&cmd, "trap 'echo got TERM; exit 9' TERM; echo running; "
                         "sleep 30 & wait");
  tpuci__gate_argv(&(tpuci__gang_member_t){.host = 0, .nhosts = 2, .gate_key = key, .gate_end = 1},
                   0, &cmd, &argv);
  pid = spawn_until(&argv, dir, path, "stdout", "running");
  usleep(100 * 1000);
  assert_int_equal(kill(pid, SIGTERM), 0);
  assert_int_equal(status_of(pid), 9);
  p = slurp(at(dir, "stdout"));
  assert_string_equal(p, "running\ngot TERM\n");
  free(p);
  err = slurp(at(dir, "stderr"));
  assert_null(strstr(err, "gang done"));
  free(err);

  /* An idle host (its command passed): the SIGTERM ends its wait, with
   * its command's 0. */
  tpuci__strv_free(&cmd);
  tpuci__strv_free(&argv);
  tpuci__strv_push(&cmd, "/bin/sh");
  tpuci__strv_push(&cmd, "-c");
  tpuci__strv_push(&cmd, "exit 0");
  tpuci__gate_argv(&(tpuci__gang_member_t){.host = 0, .nhosts = 2, .gate_key = key, .gate_end = 1},
                   0, &cmd, &argv);
  done = tpuci__printf("%s gang done 0\n", key);
  pid = spawn_until(&argv, dir, path, "stderr", done);
  assert_int_equal(kill(pid, SIGTERM), 0);
  assert_int_equal(status_of(pid), 0);

  tpuci__strv_free(&cmd);
  tpuci__strv_free(&argv);
  free(done);
  free(go);
  free(key);
  free(path);
  p = tpuci__printf("rm -rf '%s'", dir);
  assert_int_equal(system(p), 0);
  free(p);
}

/* Its exit status, waited for at most 60 s (then killed: a failure). */
static int status_within(pid_t pid) {
  int st, k;
  for (k = 0; k < 6000; k++) {
    pid_t r = waitpid(pid, &st, WNOHANG);
    assert_true(r >= 0);
    if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    usleep(10 * 1000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  fail_msg("the wait step did not end within 60 s");
  return -1;
}

/* Without the end step (podman's hosts: docker.md), $E is empty and the
 * wait step execs the command once the go resolves: the same process,
 * whose status is the host's at once, with no "gang done" and no end
 * waited for (none is made), for 0 and for an exit that lets the peers
 * run on alike. */
static void test_no_end_step(void **state) {
  char dir[] = "/tmp/tpuci-gate-XXXXXX";
  tpuci__strv_t cmd = {0}, argv = {0};
  char *key = tpuci__ctl_key(), *go = tpuci__gate_name(key, TPUCI__GATE_GO), *path, *p, *want;
  long status;
  (void) state;

  path = fake_names(dir, (const char *const[]){"worker-0", "worker-1", go, NULL});

  for (status = 0; status <= 1; status++) {
    pid_t pid;
    tpuci__strv_push(&cmd, "/bin/sh");
    tpuci__strv_push(&cmd, "-c");
    tpuci__strv_take(&cmd, tpuci__printf("echo \"pid $$\"; exit %ld", status));
    tpuci__gate_argv(
        &(tpuci__gang_member_t){.host = 0, .nhosts = 2, .gate_key = key, .gate_end = 0}, 1u << 1,
        &cmd, &argv);
    assert_non_null(strstr(argv.items[2], " E='' "));
    assert_null(strstr(argv.items[2], "tpuci-end-"));
    pid = spawn_until(&argv, dir, path, "stdout", "pid ");
    assert_int_equal(status_within(pid), status);
    want = tpuci__printf("pid %ld\n", (long) pid);
    p = slurp(at(dir, "stdout"));
    assert_string_equal(p, want);
    free(p);
    free(want);
    p = slurp(at(dir, "stderr"));
    want = tpuci__printf("%s gang ready\n%s gang up\n", key, key);
    assert_string_equal(p, want);
    free(p);
    free(want);
    tpuci__strv_free(&cmd);
    tpuci__strv_free(&argv);
  }

  free(go);
  free(key);
  free(path);
  p = tpuci__printf("rm -rf '%s'", dir);
  assert_int_equal(system(p), 0);
  free(p);
}

static void test_parse(void **state) {
  char *names = NULL;
  const char *rest;
  size_t len;
  long status = -1;
  (void) state;
  assert_true(tpuci__ctl_line("#tpuci-0a0b0c0d", "#tpuci-0a0b0c0d gang up", 23, &rest, &len));
  assert_int_equal(tpuci__gate_parse(rest, len, &names, &status), TPUCI__SAY_UP);
  assert_null(names);
  assert_false(tpuci__ctl_line("#tpuci-0a0b0c0d", "#tpuci-0a0b0c0dx gang up", 24, &rest, &len));
  assert_false(tpuci__ctl_line("#tpuci-0a0b0c0d", "#tpuci-0a0b", 11, &rest, &len));
  assert_int_equal(tpuci__gate_parse("gang wait worker-1 worker-3", 27, &names, &status),
                   TPUCI__SAY_WAIT);
  assert_string_equal(names, "worker-1 worker-3");
  free(names);
  assert_int_equal(tpuci__gate_parse("gang none", 9, &names, &status), TPUCI__SAY_NONE);
  assert_int_equal(tpuci__gate_parse("gang upx", 8, &names, &status), TPUCI__SAY_OTHER);
  assert_int_equal(tpuci__gate_parse("results 1", 9, &names, &status), TPUCI__SAY_OTHER);
  /* The command's end and its status, 0 to 255. */
  assert_int_equal(tpuci__gate_parse("gang done 0", 11, &names, &status), TPUCI__SAY_DONE);
  assert_int_equal(status, 0);
  assert_int_equal(tpuci__gate_parse("gang done 143", 13, &names, &status), TPUCI__SAY_DONE);
  assert_int_equal(status, 143);
  assert_int_equal(tpuci__gate_parse("gang done 256", 13, &names, &status), TPUCI__SAY_OTHER);
  assert_int_equal(tpuci__gate_parse("gang done -1", 12, &names, &status), TPUCI__SAY_OTHER);
  assert_int_equal(tpuci__gate_parse("gang done ", 10, &names, &status), TPUCI__SAY_OTHER);
  assert_int_equal(tpuci__gate_parse("gang done 1x", 12, &names, &status), TPUCI__SAY_OTHER);
  assert_int_equal(tpuci__gate_parse("gang done 1234", 14, &names, &status), TPUCI__SAY_OTHER);
  names = tpuci__ctl_key();
  assert_int_equal(strlen(names), strlen("#tpuci-") + 8);
  assert_int_equal(strncmp(names, "#tpuci-", 7), 0);
  free(names);
}

/* ------------------------------------------------------------------ */
/* The output filter                                                   */

typedef struct {
  tpuci__attempt_t a;
  tpuci__attempt_host_t host;
  tpuci__buf_t out[2];
  tpuci__buf_t ctl;
} fx_t;

static fx_t *fx_of(tpuci__attempt_t *a) {
  return (fx_t *) ((char *) a - offsetof(fx_t, a));
}

static void on_output(tpuci__attempt_t *a, int stream, const char *buf, size_t len) {
  tpuci__buf_add(&fx_of(a)->out[stream - 1], buf, len);
}

static void on_ctl(void *data, int stream, const char *line, size_t len) {
  fx_t *f = data;
  tpuci__buf_addf(&f->ctl, "%d<", stream);
  tpuci__buf_add(&f->ctl, line, len);
  tpuci__buf_adds(&f->ctl, ">");
}

/* One frame of the engine's multiplexed stream. */
static void frame(tpuci__buf_t *b, int stream, const char *s) {
  size_t n = strlen(s);
  unsigned char h[8] = {0};
  h[0] = (unsigned char) stream;
  h[4] = (unsigned char) (n >> 24);
  h[5] = (unsigned char) (n >> 16);
  h[6] = (unsigned char) (n >> 8);
  h[7] = (unsigned char) n;
  tpuci__buf_add(b, (const char *) h, 8);
  tpuci__buf_add(b, s, n);
}

static const char *const stdout_text =
    "plain\n#tpuci-00000000 not ours: the key is another\n#tpuci-0a0b0c0d gang wait worker-1\n"
    "#tpu\n#\n\n#tpuci-0a0b0c0d gang up\nafter #tpuci-0a0b0c0d gang up\n"
    "TPUCI_RESULTS_LOG=#tpuci-0a0b0c0d\n##tpuci-0a0b0c0d gang up\n"
    "tests/x.py .#tpuci-0a0b0c0d results begin 2\n#tpuci-0a0b0c0d end x\nend";
static const char *const stderr_text = "#tpuci-0a0b0c0d results x\nerr\n#tpuci-0a0b0c0d cut";

/* The same output fed in chunks of `step` bytes, to a lone container or a
 * gang's host. */
static void filter_in_steps(size_t step, int gang) {
  fx_t f;
  tpuci__ctrout_t o;
  tpuci__buf_t in;
  size_t i;

  memset(&f, 0, sizeof(f));
  f.host.output = on_output;
  f.a.host = &f.host;
  f.a.dir = "/nonexistent";
  tpuci__ctrout_init(&o, &f.a, gang ? "worker-0" : NULL);
  tpuci__ctrout_ctl(&o, "#tpuci-0a0b0c0d", on_ctl, &f);
  tpuci__buf_init(&in);
  frame(&in, 1, stdout_text);
  frame(&in, 2, stderr_text);
  for (i = 0; i < in.len; i += step)
    tpuci__ctrout_chunk(&o, in.data + i, in.len - i < step ? in.len - i : step);
  tpuci__ctrout_flush(&o);
  tpuci__buf_add(&f.out[0], "", 1);
  tpuci__buf_add(&f.out[1], "", 1);
  tpuci__buf_add(&f.ctl, "", 1);
  if (gang) {
    assert_string_equal(f.out[0].data,
                        "[worker-0] plain\n[worker-0] #tpuci-00000000 not ours: the key is "
                        "another\n[worker-0] #tpu\n[worker-0] #\n[worker-0] \n"
                        "[worker-0] after #tpuci-0a0b0c0d gang up\n"
                        "[worker-0] TPUCI_RESULTS_LOG=#tpuci-0a0b0c0d\n"
                        "[worker-0] ##tpuci-0a0b0c0d gang up\n[worker-0] tests/x.py .\n"
                        "[worker-0] end\n");
    assert_string_equal(f.out[1].data, "[worker-0] err\n");
  } else {
    assert_string_equal(f.out[0].data,
                        "plain\n#tpuci-00000000 not ours: the key is another\n#tpu\n#\n\n"
                        "after #tpuci-0a0b0c0d gang up\nTPUCI_RESULTS_LOG=#tpuci-0a0b0c0d\n"
                        "##tpuci-0a0b0c0d gang up\ntests/x.py .\nend");
    assert_string_equal(f.out[1].data, "err\n");
  }
  assert_string_equal(f.ctl.data, "1<gang wait worker-1>1<gang up>1<results begin 2>1<end x>"
                                  "2<results x>2<cut>");
  tpuci__ctrout_free(&o);
  tpuci__buf_free(&in);
  tpuci__buf_free(&f.out[0]);
  tpuci__buf_free(&f.out[1]);
  tpuci__buf_free(&f.ctl);
}

static void test_filter(void **state) {
  size_t step;
  (void) state;
  for (step = 1; step <= 64; step++) {
    filter_in_steps(step, 0);
    filter_in_steps(step, 1);
  }
  filter_in_steps(100000, 0);
}

/* A second read of the whole output skips what passed: tpuci's lines are
 * not given twice, and one cut by the first read's end comes whole. */
static void test_filter_reread(void **state) {
  fx_t f;
  tpuci__ctrout_t o;
  tpuci__buf_t in;
  size_t cut;
  (void) state;

  memset(&f, 0, sizeof(f));
  f.host.output = on_output;
  f.a.host = &f.host;
  tpuci__ctrout_init(&o, &f.a, NULL);
  tpuci__ctrout_ctl(&o, "#tpuci-0a0b0c0d", on_ctl, &f);
  tpuci__buf_init(&in);
  frame(&in, 1, "a\n#tpuci-0a0b0c0d one\nb\n#tpuci-0a0b0c0d two\nc\n");
  cut = 8 + strlen("a\n#tpuci-0a0b0c0d one\nb\n#tpuci-0a0b");
  tpuci__ctrout_chunk(&o, in.data, cut);
  tpuci__ctrout_rewind(&o);
  tpuci__ctrout_chunk(&o, in.data, in.len);
  tpuci__ctrout_flush(&o);
  tpuci__buf_add(&f.out[0], "", 1);
  tpuci__buf_add(&f.ctl, "", 1);
  assert_string_equal(f.out[0].data, "a\nb\nc\n");
  assert_string_equal(f.ctl.data, "1<one>1<two>");
  tpuci__ctrout_free(&o);
  tpuci__buf_free(&in);
  tpuci__buf_free(&f.out[0]);
  tpuci__buf_free(&f.ctl);
}

/* ------------------------------------------------------------------ */
/* Results through the log                                             */

static void feed(tpuci__logres_t *r, const char *line) {
  assert_int_equal(tpuci__logres_line(r, line, strlen(line)), 1);
}

/* The lines of a block that does not arrive whole: check() says `want`
 * (at its start). */
static void broken(const char *dir, const char *const *lines, const char *want) {
  tpuci__logres_t r;
  char *why;
  tpuci__logres_init(&r, dir);
  for (; *lines != NULL; lines++) feed(&r, *lines);
  why = tpuci__logres_check(&r);
  assert_non_null(why);
  assert_int_equal(strncmp(why, want, strlen(want)), 0);
  assert_false(tpuci__logres_done(&r));
  free(why);
  tpuci__logres_free(&r);
}

static void test_logres(void **state) {
  char dir[] = "/tmp/tpuci-logres-XXXXXX";
  tpuci__logres_t r;
  char *why, *text, *cmd;
  size_t len;
  (void) state;
  assert_non_null(mkdtemp(dir));

  /* "hello\n" (CRC-32 909783072) and an empty file; then a later block
   * replaces the first file. */
  tpuci__logres_init(&r, dir);
  assert_int_equal(tpuci__logres_line(&r, "gang up", 7), 0);
  assert_null(tpuci__logres_check(&r)); /* nothing announced */
  feed(&r, "results on");
  why = tpuci__logres_check(&r);
  assert_string_equal(why, "the log ended before the results were sent");
  free(why);
  feed(&r, "results snapshot 2");
  feed(&r, "file junit.xml 6 909783072");
  feed(&r, "d aGVs");
  feed(&r, "d bG8K");
  feed(&r, "end junit.xml");
  feed(&r, "file stacks.txt 0 0");
  feed(&r, "end stacks.txt");
  feed(&r, "results end 2");
  assert_false(tpuci__logres_done(&r)); /* a snapshot: more may come */
  assert_null(tpuci__logres_check(&r));
  assert_int_equal(tpuci__read_file(at(dir, "junit.xml"), &text, &len), 0);
  assert_string_equal(text, "hello\n");
  free(text);
  feed(&r, "results begin 1");
  feed(&r, "file junit.xml 3 891568578");
  feed(&r, "d YWJj");
  feed(&r, "end junit.xml");
  why = tpuci__logres_check(&r);
  assert_string_equal(why, "1 of 1 file, then the log ended");
  free(why);
  feed(&r, "results end 1");
  assert_true(tpuci__logres_done(&r));
  assert_null(tpuci__logres_check(&r));
  assert_int_equal(tpuci__read_file(at(dir, "junit.xml"), &text, &len), 0);
  assert_string_equal(text, "abc");
  free(text);
  tpuci__logres_free(&r);

  /* Cut: the log ends within a file; corrupted: other bytes, or not
   * base64; only plain names of the folder. */
  {
    static const char *const cut[] = {"results on", "results begin 1",
                                      "file junit.xml 6 909783072", "d aGVs", NULL};
    static const char *const crc[] = {"results begin 1", "file junit.xml 6 909783072",
                                      "d aGVM", "d bG8K", "end junit.xml", NULL};
    static const char *const b64[] = {"results begin 1", "file junit.xml 6 909783072",
                                      "d aGV*", NULL};
    static const char *const name[] = {"results begin 1", "file ../x 1 0", NULL};
    char sub[sizeof(dir) + 4];
    broken(dir, cut, "junit.xml: 3 of 6 bytes, then the log ended");
    broken(dir, crc, "junit.xml: its bytes differ from what was sent (CRC-32 ");
    broken(dir, b64, "junit.xml: a piece is not base64 after 0 bytes");
    /* ../x of a folder of dir's: dir/x, which nothing else makes. */
    snprintf(sub, sizeof(sub), "%s/sub", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    broken(sub, name, "a file's heading is not one: '../x 1 0'");
    assert_int_not_equal(access(at(dir, "x"), F_OK), 0);
  }

  /* Never initialised: freeing it closes nothing. */
  memset(&r, 0, sizeof(r));
  tpuci__logres_free(&r);
  cmd = tpuci__printf("rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
  free(cmd);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wait_step),
      cmocka_unit_test(test_end_step_term),
      cmocka_unit_test(test_no_end_step),
      cmocka_unit_test(test_parse),
      cmocka_unit_test(test_filter),
      cmocka_unit_test(test_filter_reread),
      cmocka_unit_test(test_logres),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
