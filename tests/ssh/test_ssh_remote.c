/* What a slice's worker runs (core/runtime/ssh/remote.c), run here by a
 * local sh the way a login shell runs it: the ready line, nothing before
 * "go", the job's env, folder and exit status (also in dir/rc), a signal
 * name on stdin reaching the job's whole process group, the end of stdin
 * killing it and leaving dir/lost, the rc lookup and the cleanup. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/ssh/ssh.h"

typedef struct {
  pid_t pid;
  int in, out;
} child_t;

/* sh -c CMD with stdin and stdout pipes (stderr: the test's). */
static void start(child_t *c, const char *cmd) {
  int in[2], out[2];
  assert_int_equal(pipe(in), 0);
  assert_int_equal(pipe(out), 0);
  c->pid = fork();
  assert_true(c->pid >= 0);
  if (c->pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    execl("/bin/sh", "sh", "-c", cmd, (char *) NULL);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  c->in = in[1];
  c->out = out[0];
}

/* Reads stdout up to and including the first newline. */
static void read_line(child_t *c, char *buf, size_t n) {
  size_t k = 0;
  while (k + 1 < n) {
    ssize_t r = read(c->out, buf + k, 1);
    if (r <= 0) break;
    if (buf[k++] == '\n') break;
  }
  buf[k] = '\0';
}

static void say(child_t *c, const char *s) {
  assert_int_equal(write(c->in, s, strlen(s)), (ssize_t) strlen(s));
}

/* Its exit status (128+N for signal N, as a shell says it). Its stdin
 * stays open until it ended, as ssh's does. */
static int finish(child_t *c) {
  int st;
  assert_int_equal(waitpid(c->pid, &st, 0), c->pid);
  close(c->in);
  close(c->out);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *slurp(const char *dir, const char *name) {
  char path[1024], *s = NULL;
  size_t len = 0;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  if (tpuci__read_file(path, &s, &len) != 0) return NULL;
  return s;
}

static char *remote(const char *dir, const char *workdir, const char *script, const char *env) {
  tpuci__strv_t argv = {0}, e = {0};
  tpuci__ssh_remote_t r;
  char *cmd;
  tpuci__strv_push(&argv, "sh");
  tpuci__strv_push(&argv, "-c");
  tpuci__strv_push(&argv, script);
  if (env) tpuci__strv_push(&e, env);
  memset(&r, 0, sizeof(r));
  r.dir = dir;
  r.nonce = "n0nce";
  r.workdir = workdir;
  r.env = &e;
  r.argv = &argv;
  cmd = tpuci__ssh_remote_command(&r);
  tpuci__strv_free(&argv);
  tpuci__strv_free(&e);
  return cmd;
}

static void test_runs_after_go(void **state) {
  char tmp[] = "/tmp/tpuci-remote-XXXXXX", dir[512], line[256], *cmd, *rc;
  child_t c;
  (void) state;
  assert_non_null(mkdtemp(tmp));
  snprintf(dir, sizeof(dir), "%s/run/unit", tmp);
  cmd = remote(dir, tmp, "echo \"$GREETING in $(pwd)\"; touch ran; exit 3", "GREETING=it's $HOME");
  start(&c, cmd);
  read_line(&c, line, sizeof(line));
  assert_string_equal(line, TPUCI__SSH_READY " n0nce\n");
  /* The folder exists, the job has not run. */
  {
    struct stat st;
    char ran[512];
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    snprintf(ran, sizeof(ran), "%s/ran", tmp);
    assert_int_not_equal(access(ran, F_OK), 0);
  }
  say(&c, "go\n");
  read_line(&c, line, sizeof(line));
  {
    char want[600];
    snprintf(want, sizeof(want), "it's $HOME in %s\n", tmp);
    assert_string_equal(line, want);
  }
  assert_int_equal(finish(&c), 3);
  rc = slurp(dir, "rc");
  assert_non_null(rc);
  assert_string_equal(rc, "3\n");
  free(rc);
  free(cmd);

  /* Not "go" (here: the end of stdin): nothing runs, and the folder it
   * made goes, with its parent once empty. */
  cmd = remote(dir, tmp, "touch never; exit 9", NULL);
  start(&c, cmd);
  read_line(&c, line, sizeof(line));
  assert_string_equal(line, TPUCI__SSH_READY " n0nce\n");
  close(c.in);
  c.in = open("/dev/null", O_WRONLY);
  assert_int_equal(finish(&c), 0);
  {
    char never[512], parent[512];
    snprintf(never, sizeof(never), "%s/never", tmp);
    assert_int_not_equal(access(never, F_OK), 0);
    snprintf(parent, sizeof(parent), "%s/run", tmp);
    assert_int_not_equal(access(parent, F_OK), 0);
  }
  free(cmd);
  /* Again, for the cleanup below. */
  cmd = remote(dir, tmp, "true", NULL);
  start(&c, cmd);
  read_line(&c, line, sizeof(line));
  say(&c, "go\n");
  assert_int_equal(finish(&c), 0);
  free(cmd);

  /* The cleanup removes the folder and its parent once empty. */
  cmd = tpuci__ssh_cleanup_command(dir, 0, NULL);
  start(&c, cmd);
  assert_int_equal(finish(&c), 0);
  {
    char parent[512];
    snprintf(parent, sizeof(parent), "%s/run", tmp);
    assert_int_not_equal(access(dir, F_OK), 0);
    assert_int_not_equal(access(parent, F_OK), 0);
  }
  free(cmd);
  rmdir(tmp);
}

/* The group's pid from dir/pgid, once the job wrote `started`. */
static pid_t wait_started(const char *tmp, const char *dir) {
  char path[512], *s;
  pid_t p;
  int i;
  snprintf(path, sizeof(path), "%s/started", tmp);
  for (i = 0; i < 300 && access(path, F_OK) != 0; i++) usleep(20000);
  assert_int_equal(access(path, F_OK), 0);
  s = slurp(dir, "pgid");
  assert_non_null(s);
  p = (pid_t) atoi(s);
  free(s);
  assert_true(p > 1);
  return p;
}

/* Whether nothing of process group g is left (zombies go once reaped:
 * up to 3 s). */
static int group_gone(pid_t g) {
  int i;
  for (i = 0; i < 150; i++) {
    if (kill(-g, 0) != 0) return 1;
    usleep(20000);
  }
  return 0;
}

static void test_signals_and_lost(void **state) {
  char tmp[] = "/tmp/tpuci-remote-XXXXXX", dir[512], line[256], script[256], *cmd, *s;
  child_t c;
  pid_t g;
  (void) state;
  assert_non_null(mkdtemp(tmp));
  snprintf(dir, sizeof(dir), "%s/run/unit", tmp);
  /* A child of the job too: the signal reaches the whole group. */
  snprintf(script, sizeof(script), "sleep 60 & touch %s/started; wait", tmp);
  cmd = remote(dir, NULL, script, NULL);

  start(&c, cmd);
  read_line(&c, line, sizeof(line));
  say(&c, "go\n");
  g = wait_started(tmp, dir);
  say(&c, "TERM\n");
  assert_int_equal(finish(&c), 128 + SIGTERM);
  assert_true(group_gone(g)); /* the job's child too */
  assert_null(slurp(dir, "lost"));

  /* The end of stdin: the group is killed, and the worker says so. */
  {
    char started[512];
    snprintf(started, sizeof(started), "%s/started", tmp);
    unlink(started);
  }
  start(&c, cmd);
  read_line(&c, line, sizeof(line));
  say(&c, "go\n");
  g = wait_started(tmp, dir);
  close(c.in);
  c.in = open("/dev/null", O_WRONLY);
  assert_int_equal(finish(&c), 128 + SIGKILL);
  assert_true(group_gone(g));
  s = slurp(dir, "lost");
  assert_non_null(s);
  free(s);
  free(cmd);

  /* The rc lookup says "lost", not the exit status. */
  cmd = tpuci__ssh_rc_command(dir);
  {
    child_t r;
    start(&r, cmd);
    read_line(&r, line, sizeof(line));
    assert_string_equal(line, "lost\n");
    assert_int_equal(finish(&r), 0);
  }
  free(cmd);
  cmd = tpuci__ssh_cleanup_command(dir, 0, NULL);
  start(&c, cmd);
  assert_int_equal(finish(&c), 0);
  free(cmd);
  {
    char started[512];
    snprintf(started, sizeof(started), "%s/started", tmp);
    unlink(started);
  }
  rmdir(tmp);
}

static void test_signame(void **state) {
  (void) state;
  assert_string_equal(tpuci__ssh_signame(SIGTERM), "TERM");
  assert_string_equal(tpuci__ssh_signame(SIGKILL), "KILL");
  assert_null(tpuci__ssh_signame(0));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_runs_after_go),
    cmocka_unit_test(test_signals_and_lost),
    cmocka_unit_test(test_signame),
  };
  signal(SIGPIPE, SIG_IGN);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
