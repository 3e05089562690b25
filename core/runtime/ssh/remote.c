/* What a worker runs (ssh.h): the scripts of a host's session, of the
 * exit-status lookup after a dropped connection and of the cleanup. Each
 * is handed to the login shell as `exec sh -c '<script>'`, so that only
 * POSIX sh is assumed of the worker (and setsid, tar, mkdir, rm). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ssh/ssh.h"

/* `exec sh -c '<script>'`: the script as one word for the login shell. */
static char *tpuci__ssh_wrap(const char *script) {
  tpuci__buf_t b;
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "exec sh -c ");
  tpuci__buf_add_shell(&b, script);
  return tpuci__buf_steal(&b);
}

/* A script's first line: d=<dir>. */
static void tpuci__ssh_set_d(tpuci__buf_t *b, const char *dir) {
  tpuci__buf_init(b);
  tpuci__buf_adds(b, "d=");
  tpuci__buf_add_shell(b, dir);
}

/* The job's own script: its environment, its folder, its command. */
static char *tpuci__ssh_job_script(const tpuci__ssh_remote_t *r) {
  tpuci__buf_t b;
  size_t i;
  tpuci__buf_init(&b);
  for (i = 0; r->env != NULL && i < r->env->len; i++) {
    const char *kv = r->env->items[i];
    const char *eq = strchr(kv, '=');
    if (eq == NULL || eq == kv) continue;
    tpuci__buf_adds(&b, "export ");
    tpuci__buf_add(&b, kv, (size_t) (eq - kv));
    tpuci__buf_adds(&b, "=");
    tpuci__buf_add_shell(&b, eq + 1);
    tpuci__buf_adds(&b, "\n");
  }
  if (r->workdir != NULL) {
    tpuci__buf_adds(&b, "cd ");
    tpuci__buf_add_shell(&b, r->workdir);
    tpuci__buf_adds(&b, " || exit 126\n");
  }
  tpuci__buf_adds(&b, "exec");
  for (i = 0; i < r->argv->len; i++) {
    tpuci__buf_adds(&b, " ");
    tpuci__buf_add_shell(&b, r->argv->items[i]);
  }
  tpuci__buf_adds(&b, "\n");
  return tpuci__buf_steal(&b);
}

char *tpuci__ssh_remote_command(const tpuci__ssh_remote_t *r) {
  tpuci__buf_t b;
  char *job = tpuci__ssh_job_script(r), *out;
  tpuci__ssh_set_d(&b, r->dir);
  /* The folder is private; the job's own files keep its umask. */
  tpuci__buf_adds(&b, "\n(umask 077 && mkdir -p \"$d/results\") || exit 125\n"
                      /* 3: the control lines; 4: the job's stderr; the
                       * shell's own notes ("Killed") go nowhere. */
                      "exec 3<&0 4>&2 2>/dev/null\n"
                      "printf '%s\\n' ");
  tpuci__buf_adds(&b, "'" TPUCI__SSH_READY " ");
  tpuci__buf_adds(&b, r->nonce);
  tpuci__buf_adds(&b, "'\n"
                      /* Not to run: what it made goes (tpuci may have
                       * given up on this session already). */
                      "read -r go <&3 || go=\n"
                      "if [ \"$go\" != go ]; then rm -rf \"$d\"; rmdir \"${d%/*}\"; exit 0; fi\n"
                      "setsid sh -c ");
  tpuci__buf_add_shell(&b, job);
  tpuci__buf_adds(&b, " tpuci-job </dev/null 2>&4 3<&- 4>&- &\n"
                      "p=$!\n"
                      "echo \"$p\" > \"$d/pgid\"\n"
                      "{ while read -r s; do kill -s \"$s\" -- \"-$p\"; done; "
                      ": > \"$d/lost\"; kill -s KILL -- \"-$p\"; } <&3 >/dev/null 4>&- &\n"
                      "w=$!\n"
                      "wait \"$p\"\n"
                      "rc=$?\n"
                      "kill -s KILL -- \"-$p\"\n"
                      "kill \"$w\"\n"
                      "echo \"$rc\" > \"$d/rc\"\n"
                      "exit \"$rc\"\n");
  free(job);
  out = tpuci__ssh_wrap(b.data);
  tpuci__buf_free(&b);
  return out;
}

char *tpuci__ssh_rc_command(const char *dir) {
  tpuci__buf_t b;
  char *out;
  tpuci__ssh_set_d(&b, dir);
  /* "lost": stdin ended before the job did (the connection dropped). */
  tpuci__buf_adds(&b, "\nif [ -e \"$d/lost\" ]; then echo lost; else cat \"$d/rc\"; fi\n");
  out = tpuci__ssh_wrap(b.data);
  tpuci__buf_free(&b);
  return out;
}

char *tpuci__ssh_cleanup_command(const char *dir, int results) {
  tpuci__buf_t b;
  char *out;
  tpuci__ssh_set_d(&b, dir);
  tpuci__buf_adds(&b, "\nrc=0\n");
  if (results) tpuci__buf_adds(&b, "(cd \"$d/results\" && tar -cf - .) || rc=$?\n");
  tpuci__buf_adds(&b, "rm -rf \"$d\" || rc=$?\n"
                      "rmdir \"${d%/*}\" 2>/dev/null\n"
                      "exit \"$rc\"\n");
  out = tpuci__ssh_wrap(b.data);
  tpuci__buf_free(&b);
  return out;
}

char *tpuci__ssh_gc_command(int dry_run) {
  tpuci__buf_t b;
  char *out;
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "for d in /tmp/tpuci-*/i*.a*.h*; do\n"
                      "  [ -d \"$d\" ] || continue\n"
                      "  if [ ! -f \"$d/rc\" ]; then\n"
                      "    if [ -f \"$d/pgid\" ]; then\n"
                      "      kill -0 -- \"-$(cat \"$d/pgid\")\" 2>/dev/null && continue\n"
                      "    elif [ -z \"$(find \"$d\" -maxdepth 0 -mmin +60)\" ]; then\n"
                      "      continue\n"
                      "    fi\n"
                      "  fi\n"
                      "  echo \"$d\"\n");
  if (!dry_run)
    tpuci__buf_adds(&b, "  rm -rf \"$d\" || exit 1\n"
                        "  rmdir \"${d%/*}\" 2>/dev/null\n");
  tpuci__buf_adds(&b, "done\nexit 0\n");
  out = tpuci__ssh_wrap(b.data);
  tpuci__buf_free(&b);
  return out;
}

const char *tpuci__ssh_signame(int signum) {
  switch (signum) {
    case SIGTERM: return "TERM";
    case SIGKILL: return "KILL";
    case SIGINT: return "INT";
    case SIGHUP: return "HUP";
    case SIGQUIT: return "QUIT";
    case SIGUSR1: return "USR1";
    case SIGUSR2: return "USR2";
    case SIGABRT: return "ABRT";
    case SIGALRM: return "ALRM";
    case SIGCONT: return "CONT";
    case SIGSTOP: return "STOP";
    default: return NULL;
  }
}
