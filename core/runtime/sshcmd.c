/* The OpenSSH client's command lines and what its failures mean
 * (sshcmd.h). */
#include "runtime/sshcmd.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *tpuci__ssh_client(void) {
  const char *s = getenv("TPUCI_SSH");
  return s && *s ? s : "ssh";
}

void tpuci__ssh_base_argv(tpuci__strv_t *out, const char *config, const char *control_path,
                          const char *user, int port) {
  tpuci__strv_push(out, tpuci__ssh_client());
  if (config) {
    tpuci__strv_push(out, "-F");
    tpuci__strv_push(out, config);
  }
  tpuci__strv_push(out, "-o");
  tpuci__strv_push(out, "BatchMode=yes");
  /* Errors only: no "Permanently added ... to the list of known hosts"
   * among a job's output. */
  tpuci__strv_push(out, "-o");
  tpuci__strv_push(out, "LogLevel=ERROR");
  tpuci__strv_push(out, "-o");
  tpuci__strv_take(out, tpuci__printf("ConnectTimeout=%d", TPUCI__SSH_CONNECT_TIMEOUT_S));
  if (control_path) {
    tpuci__strv_push(out, "-o");
    tpuci__strv_push(out, "ControlMaster=auto");
    tpuci__strv_push(out, "-o");
    tpuci__strv_take(out, tpuci__printf("ControlPath=%s", control_path));
    tpuci__strv_push(out, "-o");
    tpuci__strv_push(out, "ControlPersist=30s");
  }
  if (port > 0) {
    tpuci__strv_push(out, "-p");
    tpuci__strv_take(out, tpuci__printf("%d", port));
  }
  if (user) {
    tpuci__strv_push(out, "-l");
    tpuci__strv_push(out, user);
  }
}

int tpuci__ssh_control_dir_new(char **dir, const char *who, tpuci__err_t *err) {
  /* The pid says whose it is: `tpuci gc` removes it once that is gone. */
  char *tmpl = tpuci__printf(TPUCI__SSH_CONTROL_PREFIX "%ld-XXXXXX", (long) getpid());
  *dir = NULL;
  if (mkdtemp(tmpl) == NULL) {
    int r = TPUCI__ERRNO;
    free(tmpl);
    return tpuci__err_set(err, TPUCI_EENGINE,
                          "%s: cannot make a folder for ssh's "
                          "control sockets in /tmp: %s",
                          who, uv_strerror(r));
  }
  *dir = tmpl;
  return 0;
}

/* The pid in a control folder's name "tpuci-ssh-<pid>-XXXXXX", or 0. */
static long tpuci__control_pid(const char *name) {
  const char *p = name + 10;
  char *end;
  long pid;
  if (strncmp(name, "tpuci-ssh-", 10) != 0 || *p < '1' || *p > '9') return 0;
  pid = strtol(p, &end, 10);
  if (*end != '-' || strlen(end + 1) != 6 || pid <= 0) return 0;
  return pid;
}

int tpuci__ssh_control_dirs_gc(int dry_run, tpuci__buf_t *report) {
  DIR *d = opendir("/tmp");
  struct dirent *e;
  int n = 0;
  while (d != NULL && (e = readdir(d)) != NULL) {
    long pid = tpuci__control_pid(e->d_name);
    struct stat st;
    char *path;
    if (pid == 0) continue;
    path = tpuci__printf("/tmp/%s", e->d_name);
    /* Only this user's own folders (never one behind a link), of a
     * tpuci that is gone. */
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
        (pid_t) pid != getpid() && kill((pid_t) pid, 0) != 0 && errno == ESRCH) {
      if (!dry_run) tpuci__ssh_control_dir_remove(path);
      tpuci__buf_addf(report, "%s ssh: control folder %s (its tpuci, pid %ld, is gone)\n",
                      dry_run ? "would remove" : "removed", path, pid);
      n++;
    }
    free(path);
  }
  if (d != NULL) closedir(d);
  return n;
}

int tpuci__ssh_spawn(uv_loop_t *loop, uv_process_t *proc, const tpuci__strv_t *argv,
                     uv_stdio_container_t *stdio, int n, uv_exit_cb exit_cb) {
  uv_process_options_t o;
  char **args = tpuci__calloc(argv->len + 1, sizeof(*args));
  size_t i;
  int r;
  for (i = 0; i < argv->len; i++) args[i] = argv->items[i];
  memset(&o, 0, sizeof(o));
  o.file = args[0];
  o.args = args;
  o.exit_cb = exit_cb;
  o.stdio = stdio;
  o.stdio_count = n;
  o.flags = UV_PROCESS_DETACHED;
  r = uv_spawn(loop, proc, &o);
  free(args);
  return r;
}

void tpuci__ssh_control_dir_remove(const char *dir) {
  DIR *d;
  struct dirent *e;
  if (dir == NULL) return;
  d = opendir(dir);
  while (d != NULL && (e = readdir(d)) != NULL) {
    char *p;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    p = tpuci__printf("%s/%s", dir, e->d_name);
    unlink(p);
    free(p);
  }
  if (d != NULL) closedir(d);
  rmdir(dir);
}

char *tpuci__ssh_last_line(const char *s, size_t n) {
  size_t end = n, start;
  while (end > 0 &&
         (s[end - 1] == '\n' || s[end - 1] == '\r' || s[end - 1] == ' ' || s[end - 1] == '\t'))
    end--;
  if (end == 0) return NULL;
  start = end;
  while (start > 0 && s[start - 1] != '\n') start--;
  while (start < end && (s[start] == ' ' || s[start] == '\t' || s[start] == '\r')) start++;
  return tpuci__strndup(s + start, end - start);
}

static int tpuci__has(const char *s, const char *what) {
  return s != NULL && strstr(s, what) != NULL;
}

const char *tpuci__ssh_advice(int status, const char *last, int docker) {
  if (tpuci__has(last, "Host key verification failed") ||
      tpuci__has(last, "HOST IDENTIFICATION HAS CHANGED") || tpuci__has(last, "host key is known"))
    return "ssh does not trust the host's key (it is not in known_hosts, or it "
           "changed): check the key, then add it (ssh there once by hand); "
           "tpuci never turns the check off";
  if (tpuci__has(last, "Permission denied") || tpuci__has(last, "Too many authentication"))
    return "ssh refused the login: give ssh a key the host accepts (IdentityFile "
           "in the ssh config, or ssh-agent); tpuci runs ssh with BatchMode=yes "
           "and never asks for a password";
  if (tpuci__has(last, "Could not resolve hostname"))
    return "the host name does not resolve: check it, or give the address";
  if (status == 255 || status < 0)
    return "the host cannot be reached over ssh: check the address, the port "
           "and that sshd runs there (`ssh -o BatchMode=yes HOST true` by hand "
           "says why)";
  if (docker && (status == 127 || tpuci__has(last, "not found")))
    return "the machine has no `docker` command (in the PATH of a "
           "non-interactive login): install the docker CLI there";
  if (docker)
    return "docker failed there: check that the engine runs on that machine "
           "and that the login may use its socket (`ssh HOST docker version` "
           "by hand says why)";
  return "the command failed there";
}
