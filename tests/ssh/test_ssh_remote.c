/* What a slice's worker runs (core/runtime/ssh/remote.c), run here by a
 * local sh the way a login shell runs it: the ready line, nothing before
 * "go", the job's env, folder and exit status (also in dir/rc), a signal
 * name on stdin reaching the job's whole process group, the end of stdin
 * killing it and leaving dir/lost, the rc lookup and the cleanup. A job
 * with an image (core/runtime/ssh/ctr.c): the docker CLI's flags of its
 * container, and the script against a fake `docker` on PATH that logs
 * what it is asked (create before the ready line, start after "go",
 * signals as `docker kill`, removal at the end of stdin, a container that
 * never started). */
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

/* A variable whose name is not a shell name never reaches the script:
 * `export A;touch X;B=...` would run touch on the worker. */
static void test_env_names(void **state) {
  char *cmd = remote("/tmp/tpuci-remote-none", NULL, "true", "A;touch /tmp/x;B=1");
  (void) state;
  assert_null(strstr(cmd, "touch"));
  assert_null(strstr(cmd, "export A"));
  free(cmd);
  cmd = remote("/tmp/tpuci-remote-none", NULL, "true", "GOOD_1=it's");
  assert_non_null(strstr(cmd, "export GOOD_1="));
  free(cmd);
}

/* Every ssh command line has "--" before the host, whatever the host. */
static void test_argv_ends_options(void **state) {
  tpuci__ssh_host_t h;
  tpuci__hostset_t hs;
  tpuci__strv_t argv = {0};
  static const char *const opts[] = {"-O", "exit", NULL};
  (void) state;
  memset(&h, 0, sizeof(h));
  memset(&hs, 0, sizeof(hs));
  h.host = "-Fevil.conf";
  h.user = "me";
  h.port = 2222;
  hs.hosts = &h;
  hs.nhosts = 1;
  hs.ssh_config = "/etc/c";
  tpuci__ssh_argv(&hs, 0, "/tmp/ctl/%C", opts, &argv);
  assert_true(argv.len >= 4);
  assert_string_equal(argv.items[argv.len - 1], "-Fevil.conf");
  assert_string_equal(argv.items[argv.len - 2], "--");
  assert_string_equal(argv.items[argv.len - 3], "exit");
  assert_string_equal(argv.items[argv.len - 4], "-O");
  tpuci__strv_free(&argv);
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

/* The docker CLI's flags for a host's container. */
static void test_ctr_flags(void **state) {
  tpuci__ssh_ctr_t c;
  tpuci__ctr_opts_t o;
  tpuci__kvlist_t labels = {0};
  tpuci__strv_t env = {0}, argv = {0};
  tpuci__device_t dev[2];
  tpuci__ulimit_t ul = {"nofile", 10, 20};
  tpuci__gpus_t gpus;
  tpuci__mount_t m = {"/src,x", "/work", 1};
  char *t;
  (void) state;
  memset(&o, 0, sizeof(o));
  memset(&gpus, 0, sizeof(gpus));
  memset(dev, 0, sizeof(dev));
  dev[0].host = "/dev/null";
  dev[1].host = "/dev/accel[0-9]*";
  dev[1].glob = 1;
  o.shm_bytes = 1 << 30;
  o.ipc = "host";
  o.privileged = 1;
  o.devices = dev;
  o.ndevices = 2;
  tpuci__strv_push(&o.cap_add, "SYS_PTRACE");
  o.ulimits = &ul;
  o.nulimits = 1;
  gpus.count = -1;
  tpuci__strv_push(&gpus.caps, "gpu");
  tpuci__strv_push(&gpus.caps, "utility");
  o.gpus = &gpus;
  tpuci__kv_set(&o.sysctls, "kernel.msgmax", "65536");
  tpuci__kv_set(&labels, "tpuci.run", "r1");
  tpuci__strv_push(&env, "GREETING=it's $HOME");
  tpuci__strv_push(&argv, "sh");
  tpuci__strv_push(&argv, "-c");
  tpuci__strv_push(&argv, "echo hi");
  memset(&c, 0, sizeof(c));
  c.name = "tpuci-r1-x-worker-1";
  c.image = "xla:1";
  c.pull = TPUCI__PULL_NEVER;
  c.labels = &labels;
  c.env = &env;
  c.workdir = "/src";
  c.results = "/tpuci/results";
  c.mounts = &m;
  c.nmounts = 1;
  c.cpus = 1.5;
  c.memory_bytes = 1 << 20;
  c.ctr = &o;
  c.argv = &argv;
  t = tpuci__ssh_ctr_create(&c);
  {
    static const char *const want[] = {
      "docker create --name tpuci-r1-x-worker-1 --label tpuci.run=r1 --init",
      " --network host --pull never -e 'GREETING=it'\\''s $HOME' -w /src",
      " --mount \"type=bind,source=$d/results,\"target=/tpuci/results",
      " --mount 'type=bind,\"source=/src,x\",target=/work,readonly'",
      " --cpus 1.500 --memory 1048576 --memory-swap 1048576",
      " --shm-size 1073741824 --ipc host --privileged --device /dev/null:/dev/null:rwm",
      " --cap-add SYS_PTRACE --ulimit nofile=10:20",
      " --gpus 'count=all,\"capabilities=gpu,utility\"' --sysctl kernel.msgmax=65536",
      " \"$@\" xla:1 sh -c 'echo hi' > /dev/null || exit 125\n",
      "for x in /dev/accel[0-9]*; do",
      "--device \"$x:$x:rwm\"; done\n",
      "matches nothing on this worker",
    };
    size_t i;
    for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
      if (strstr(t, want[i]) == NULL) fail_msg("no <%s> in:\n%s", want[i], t);
  }
  free(t);
  tpuci__strv_free(&o.cap_add);
  tpuci__strv_free(&gpus.caps);
  tpuci__kv_free(&o.sysctls);
  tpuci__kv_free(&labels);
  tpuci__strv_free(&env);
  tpuci__strv_free(&argv);
}

/* A fake docker in dir/bin: logs its arguments to dir/log; `start`
 * runs until dir/exit holds its status (143 on SIGTERM); `kill -s TERM`
 * signals it; `inspect` says whether it started (dir/nostart). */
static void fake_docker(const char *dir) {
  char path[512];
  FILE *f;
  snprintf(path, sizeof(path), "%s/bin", dir);
  assert_int_equal(mkdir(path, 0755), 0);
  snprintf(path, sizeof(path), "%s/bin/docker", dir);
  f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "#!/bin/sh\n"
             "d=%s\n"
             "echo \"$*\" >> \"$d/log\"\n"
             "case \"$1\" in\n"
             "create) [ -e \"$d/fail-create\" ] && { echo \"no such image\" >&2; exit 1; }; echo id;;\n"
             "start) echo $$ > \"$d/start.pid\"; trap 'exit 143' TERM;\n"
             "  while [ ! -e \"$d/exit\" ]; do sleep 0.05; done; exit \"$(cat \"$d/exit\")\";;\n"
             "kill) [ \"$3\" = TERM ] && kill -TERM \"$(cat \"$d/start.pid\")\";;\n"
             "inspect) if [ -e \"$d/nostart\" ]; then echo '0001-01-01T00:00:00Z false';\n"
             "  else echo '2026-12-04T00:00:00Z false'; fi;;\n"
             "esac\n", dir);
  fclose(f);
  assert_int_equal(chmod(path, 0755), 0);
}

static char *ctr_remote(const char *dir, const char *create) {
  tpuci__strv_t argv = {0}, e = {0};
  tpuci__ssh_remote_t r;
  char *cmd;
  tpuci__strv_push(&argv, "ignored");
  memset(&r, 0, sizeof(r));
  r.dir = dir;
  r.nonce = "n0nce";
  r.env = &e;
  r.argv = &argv;
  r.ctr = "c1";
  r.create = create;
  cmd = tpuci__ssh_remote_command(&r);
  tpuci__strv_free(&argv);
  return cmd;
}

static int log_has(const char *tmp, const char *line) {
  char *log = slurp(tmp, "log");
  int has = log != NULL && strstr(log, line) != NULL;
  free(log);
  return has;
}

static void test_container_script(void **state) {
  char tmp[] = "/tmp/tpuci-remote-XXXXXX", dir[512], line[256], path[600], *cmd, *s;
  const char *create = "docker create --name c1 img > /dev/null || exit 125\n";
  char *old_path = tpuci__strdup(getenv("PATH"));
  child_t c;
  int i;
  (void) state;
  assert_non_null(mkdtemp(tmp));
  fake_docker(tmp);
  snprintf(path, sizeof(path), "%s/bin:%s", tmp, old_path);
  setenv("PATH", path, 1);
  snprintf(dir, sizeof(dir), "%s/run/unit", tmp);
  cmd = ctr_remote(dir, create);

  /* Created before the ready line; started after "go"; TERM reaches the
   * container as docker kill; its status is the session's. */
  start(&c, cmd);
  read_line(&c, line, sizeof(line));
  assert_string_equal(line, TPUCI__SSH_READY " n0nce\n");
  assert_true(log_has(tmp, "create --name c1 img\n"));
  assert_false(log_has(tmp, "start"));
  s = slurp(dir, "ctr");
  assert_non_null(s);
  assert_string_equal(s, "c1\n");
  free(s);
  say(&c, "go\n");
  snprintf(path, sizeof(path), "%s/start.pid", tmp);
  for (i = 0; i < 300 && access(path, F_OK) != 0; i++) usleep(20000);
  assert_true(log_has(tmp, "start -a c1\n"));
  say(&c, "TERM\n");
  assert_int_equal(finish(&c), 143);
  assert_true(log_has(tmp, "kill -s TERM c1\n"));
  assert_false(log_has(tmp, "rm -f c1"));
  s = slurp(dir, "rc");
  assert_string_equal(s, "143\n");
  free(s);

  /* The end of stdin removes the container. */
  unlink(path);
  start(&c, cmd);
  read_line(&c, line, sizeof(line));
  say(&c, "go\n");
  for (i = 0; i < 300 && access(path, F_OK) != 0; i++) usleep(20000);
  close(c.in);
  c.in = open("/dev/null", O_WRONLY);
  assert_int_equal(finish(&c), 128 + SIGKILL);
  assert_true(log_has(tmp, "rm -f c1\n"));

  /* A container that never started: the rc file says so, exit 255. */
  {
    char f[600];
    snprintf(f, sizeof(f), "%s/nostart", tmp);
    close(open(f, O_CREAT | O_WRONLY, 0644));
    snprintf(f, sizeof(f), "%s/exit", tmp);
    s = tpuci__strdup("1\n");
    assert_int_equal(tpuci__write_file_atomic(f, s, 2), 0);
    free(s);
  }
  start(&c, cmd);
  read_line(&c, line, sizeof(line));
  say(&c, "go\n");
  assert_int_equal(finish(&c), 255);
  s = slurp(dir, "rc");
  assert_string_equal(s, TPUCI__SSH_RC_NOSTART "\n");
  free(s);
  free(cmd);

  /* docker create refusing: the session ends before the ready line. */
  {
    char f[600];
    snprintf(f, sizeof(f), "%s/fail-create", tmp);
    close(open(f, O_CREAT | O_WRONLY, 0644));
  }
  cmd = ctr_remote(dir, create);
  start(&c, cmd);
  read_line(&c, line, sizeof(line));
  assert_string_equal(line, "");
  assert_int_equal(finish(&c), 125);
  free(cmd);

  /* The cleanup removes the container with the folder. */
  cmd = tpuci__ssh_cleanup_command(dir, 0, "c1");
  unlink(path);
  {
    char l[600];
    snprintf(l, sizeof(l), "%s/log", tmp);
    unlink(l);
  }
  start(&c, cmd);
  assert_int_equal(finish(&c), 0);
  assert_true(log_has(tmp, "rm -f c1\n"));
  assert_int_not_equal(access(dir, F_OK), 0);
  free(cmd);
  setenv("PATH", old_path, 1);
  free(old_path);
  {
    char rm[600];
    snprintf(rm, sizeof(rm), "rm -rf '%s'", tmp);
    assert_int_equal(system(rm), 0);
  }
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
    cmocka_unit_test(test_env_names),
    cmocka_unit_test(test_argv_ends_options),
    cmocka_unit_test(test_signals_and_lost),
    cmocka_unit_test(test_ctr_flags),
    cmocka_unit_test(test_container_script),
    cmocka_unit_test(test_signame),
  };
  signal(SIGPIPE, SIG_IGN);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
