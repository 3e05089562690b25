/* The OpenSSH client's command lines, and running one to its end for
 * `tpuci doctor`. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/ssh/ssh.h"

extern char **environ;

void tpuci__ssh_argv(const tpuci__hostset_t *hs, size_t i, const char *control_path,
                     const char *const *opts, tpuci__strv_t *out) {
  const tpuci__ssh_host_t *h = &hs->hosts[i];
  tpuci__ssh_base_argv(out, hs->ssh_config, control_path, h->user, h->port);
  for (; opts != NULL && *opts != NULL; opts++) tpuci__strv_push(out, *opts);
  /* The spec refuses a host that starts with '-' (an option to ssh:
   * `-Fconfig` would run that config's ProxyCommand here); "--" makes
   * sure that whatever the host is, it is the destination. */
  tpuci__strv_push(out, "--");
  tpuci__strv_push(out, h->host);
}

int tpuci__ssh_run_capture(const tpuci__strv_t *argv, tpuci__buf_t *out, char **last) {
  posix_spawn_file_actions_t fa;
  tpuci__buf_t err;
  char **args, chunk[4096];
  int efd[2], ofd[2] = {-1, -1}, st = 0, r;
  pid_t pid;
  size_t i;

  *last = NULL;
  if (pipe(efd) != 0) return -1;
  if (out != NULL && pipe(ofd) != 0) {
    close(efd[0]);
    close(efd[1]);
    return -1;
  }
  args = tpuci__calloc(argv->len + 1, sizeof(*args));
  for (i = 0; i < argv->len; i++) args[i] = argv->items[i];
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (out != NULL) posix_spawn_file_actions_adddup2(&fa, ofd[1], 1);
  else posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, efd[1], 2);
  posix_spawn_file_actions_addclose(&fa, efd[0]);
  posix_spawn_file_actions_addclose(&fa, efd[1]);
  if (out != NULL) {
    posix_spawn_file_actions_addclose(&fa, ofd[0]);
    posix_spawn_file_actions_addclose(&fa, ofd[1]);
  }
  r = posix_spawnp(&pid, args[0], &fa, NULL, args, environ);
  posix_spawn_file_actions_destroy(&fa);
  free(args);
  close(efd[1]);
  if (out != NULL) close(ofd[1]);
  if (r != 0) {
    close(efd[0]);
    if (out != NULL) close(ofd[0]);
    *last = tpuci__printf("cannot run %s: %s", argv->items[0], strerror(r));
    return -1;
  }
  /* stdout first (gc's short lists), then stderr: ssh writes little to
   * either, so neither pipe fills while the other is read. */
  for (; out != NULL;) {
    ssize_t n = read(ofd[0], chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out->len < (1u << 20)) tpuci__buf_add(out, chunk, (size_t) n);
  }
  if (out != NULL) close(ofd[0]);
  tpuci__buf_init(&err);
  for (;;) {
    ssize_t n = read(efd[0], chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    /* Keep the tail only: the last line is what is shown. */
    if (err.len > 65536) err.len = 0;
    tpuci__buf_add(&err, chunk, (size_t) n);
  }
  close(efd[0]);
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  *last = tpuci__ssh_last_line(err.data ? err.data : "", err.len);
  tpuci__buf_free(&err);
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  return -1;
}

char *tpuci__ssh_control_path(const tpuci__ssh_rt_t *r) {
  /* %C: a hash of the connection, short enough for a socket's path. */
  return tpuci__printf("%s/%%C", r->control_dir);
}
