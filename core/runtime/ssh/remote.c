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
    /* The name goes into the script as it is: only a shell name does
     * (the plan's are; a name such as `A;id>/tmp/x;B` would be code). */
    if (eq == NULL || !tpuci__env_name_valid(kv, (size_t) (eq - kv))) continue;
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

/* A container's job: started attached, its exit status the job's. */
static char *tpuci__ssh_ctr_script(const tpuci__ssh_remote_t *r) {
  tpuci__buf_t b;
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "exec docker start -a ");
  tpuci__buf_add_shell(&b, r->ctr);
  tpuci__buf_adds(&b, "\n");
  return tpuci__buf_steal(&b);
}

char *tpuci__ssh_remote_command(const tpuci__ssh_remote_t *r) {
  tpuci__buf_t b;
  char *job = r->ctr ? tpuci__ssh_ctr_script(r) : tpuci__ssh_job_script(r), *out;
  tpuci__ssh_set_d(&b, r->dir);
  /* The folder is private; the job's own files keep its umask. */
  tpuci__buf_adds(&b, "\n(umask 077 && mkdir -p \"$d/results\") || exit 125\n");
  if (r->ctr) {
    /* A container's user may be another: results/ is everybody's (the
     * private folder above keeps others out). Its name is kept for gc. */
    tpuci__buf_adds(&b, "chmod 777 \"$d/results\" || exit 125\nn=");
    tpuci__buf_add_shell(&b, r->ctr);
    tpuci__buf_adds(&b, "\necho \"$n\" > \"$d/ctr\" || exit 125\n");
    tpuci__buf_adds(&b, r->create);
  }
  /* 3: the control lines; 4: the job's stderr; the shell's own notes
   * ("Killed") go nowhere. */
  tpuci__buf_adds(&b, "exec 3<&0 4>&2 2>/dev/null\n"
                      "printf '%s\\n' ");
  tpuci__buf_adds(&b, "'" TPUCI__SSH_READY " ");
  tpuci__buf_adds(&b, r->nonce);
  tpuci__buf_adds(&b, "'\n"
                      /* Not to run: what it made goes (tpuci may have
                       * given up on this session already). */
                      "read -r go <&3 || go=\n"
                      "if [ \"$go\" != go ]; then ");
  if (r->ctr) tpuci__buf_adds(&b, "docker rm -f \"$n\" >/dev/null; ");
  tpuci__buf_adds(&b, "rm -rf \"$d\"; rmdir \"${d%/*}\"; exit 0; fi\n"
                      "setsid sh -c ");
  tpuci__buf_add_shell(&b, job);
  tpuci__buf_adds(&b, " tpuci-job </dev/null 2>&4 3<&- 4>&- &\n"
                      "p=$!\n"
                      "echo \"$p\" > \"$d/pgid\"\n");
  /* Signals go to the job's group, or to its container (the docker
   * client holds no container: a SIGKILL of it would leave it running);
   * the end of stdin kills the group, and removes the container. */
  if (r->ctr)
    tpuci__buf_adds(&b, "{ while read -r s; do docker kill -s \"$s\" \"$n\"; done; "
                        ": > \"$d/lost\"; docker rm -f \"$n\"; kill -s KILL -- \"-$p\"; } "
                        "<&3 >/dev/null 4>&- &\n");
  else
    tpuci__buf_adds(&b, "{ while read -r s; do kill -s \"$s\" -- \"-$p\"; done; "
                        ": > \"$d/lost\"; kill -s KILL -- \"-$p\"; } <&3 >/dev/null 4>&- &\n");
  tpuci__buf_adds(&b, "w=$!\n"
                      "wait \"$p\"\n"
                      "rc=$?\n"
                      "kill -s KILL -- \"-$p\"\n"
                      "kill \"$w\"\n");
  /* A container that never started (docker's refusal: an option the
   * worker cannot give) is not the job's failure, and one the kernel
   * killed for memory is an OOM: the rc file says so, and the session
   * ends 255, so that tpuci looks (TPUCI__SSH_RC_*). */
  if (r->ctr)
    tpuci__buf_adds(&b, "case \"$(docker inspect -f '{{.State.StartedAt}} {{.State.OOMKilled}}' "
                        "\"$n\" 2>/dev/null)\" in\n"
                        "0001-*) echo " TPUCI__SSH_RC_NOSTART " > \"$d/rc\"; exit 255;;\n"
                        "*' true') echo \"$rc " TPUCI__SSH_RC_OOM "\" > \"$d/rc\"; exit 255;;\n"
                        "esac\n");
  tpuci__buf_adds(&b, "echo \"$rc\" > \"$d/rc\"\n"
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

char *tpuci__ssh_cleanup_command(const char *dir, int results, const char *ctr) {
  tpuci__buf_t b;
  char *out;
  tpuci__ssh_set_d(&b, dir);
  tpuci__buf_adds(&b, "\nrc=0\n");
  if (results) tpuci__buf_adds(&b, "(cd \"$d/results\" && tar -cf - .) || rc=$?\n");
  if (ctr) {
    tpuci__buf_adds(&b, "docker rm -f ");
    tpuci__buf_add_shell(&b, ctr);
    tpuci__buf_adds(&b, " >/dev/null 2>&1 || rc=$?\n");
  }
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
  /* A container's job: its container goes with its folder. */
  if (!dry_run)
    tpuci__buf_adds(&b, "  if [ -f \"$d/ctr\" ]; then docker rm -f \"$(cat \"$d/ctr\")\" "
                        ">/dev/null 2>&1; fi\n"
                        "  rm -rf \"$d\" || exit 1\n"
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
