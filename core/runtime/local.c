/* The local runtime: each attempt is a process started with
 * posix_spawn() in a session and process group of its own
 * (POSIX_SPAWN_SETSID), so that a signal reaches the whole tree and
 * nothing it spawned outlives it. posix_spawn() does not copy the
 * parent's page tables (glibc uses vfork semantics), so starting a job
 * costs the same whatever the size of the plan; uv_spawn() forks, and
 * with a plan of thousands of instances the fork and the copy-on-write
 * faults after it cost more than the job. Exits are seen through a
 * SIGCHLD watcher that reaps only this runtime's children.
 *
 * An attempt is over when the process has exited and both output pipes
 * have closed. When the leader exits, whatever is left in its process
 * group is killed: an orphaned grandchild must not survive the job, nor
 * keep its pipes open. A descendant that left the group with setsid()
 * escapes that; its pipes are closed after a short drain period so the
 * run still ends.
 */
/* posix_spawn_file_actions_addchdir_np, POSIX_SPAWN_SETSID, pipe2 and
 * F_SETPIPE_SZ (glibc >= 2.29, Linux). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "plan/topology.h"

extern char **environ;

#define TPUCI__DRAIN_MS 2000
#define TPUCI__ENOEXEC (-ENOEXEC)

typedef struct tpuci__lproc_s {
  tpuci__attempt_t *a;
  uv_pipe_t out;
  uv_pipe_t err;
  uv_timer_t drain;
  int open; /* handles not yet closed */
  int exited;
  int spawned;
  pid_t pid;
  tpuci__exit_t ex;
  char *cause;
  struct tpuci__lproc_s *prev, *next; /* children not reaped yet */
} tpuci__lproc_t;

/* Commands resolved through PATH, so that the child execs its command at
 * once instead of trying every PATH entry while uv_spawn() waits. */
typedef struct {
  char *name;
  char *path_var; /* the PATH it was resolved against */
  char *file;     /* the full path, or NULL: leave it to execvp */
} tpuci__resolved_t;

typedef struct {
  tpuci__runtime_t rt;
  tpuci__resolved_t *cache;
  size_t ncache;
  uv_signal_t chld; /* SIGCHLD: some child exited */
  int chld_on;
  tpuci__lproc_t *live; /* spawned, not reaped */
  void (*close_cb)(tpuci__runtime_t *rt);
} tpuci__local_t;

/* Finds `name` in `path_var` like execvp would. Returns a new string, or
 * NULL when it is not found or the PATH has relative entries. */
static char *tpuci__search_path(const char *name, const char *path_var) {
  const char *p = path_var, *end;
  struct stat st;

  while (p && *p) {
    char *cand;
    end = strchr(p, ':');
    if (end == NULL) end = p + strlen(p);
    if (end == p || *p != '/') return NULL; /* "" or relative: cwd-dependent */
    cand = tpuci__printf("%.*s/%s", (int) (end - p), p, name);
    if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) return cand;
    free(cand);
    p = *end ? end + 1 : end;
  }
  return NULL;
}

static const char *tpuci__resolve(tpuci__local_t *l, const char *name, const char *path_var) {
  size_t i;
  if (strchr(name, '/') != NULL || path_var == NULL) return NULL;
  for (i = 0; i < l->ncache; i++)
    if (strcmp(l->cache[i].name, name) == 0 && strcmp(l->cache[i].path_var, path_var) == 0)
      return l->cache[i].file;
  l->cache = tpuci__realloc(l->cache, (l->ncache + 1) * sizeof(*l->cache));
  l->cache[l->ncache].name = tpuci__strdup(name);
  l->cache[l->ncache].path_var = tpuci__strdup(path_var);
  l->cache[l->ncache].file = tpuci__search_path(name, path_var);
  return l->cache[l->ncache++].file;
}

/* The PATH the child will see. */
static const char *tpuci__child_path(const tpuci__instance_t *inst) {
  const char *p = tpuci__kv_get(&inst->env, "PATH");
  return p ? p : getenv("PATH");
}

static void tpuci__lproc_finish(tpuci__lproc_t *p) {
  tpuci__attempt_t *a = p->a;
  tpuci__exit_t ex = p->ex;
  ex.cause = p->cause;
  a->rt_data = NULL;
  tpuci__attempt_done(a, &ex);
  free(p->cause);
  free(p);
}

static void tpuci__lproc_closed(uv_handle_t *h) {
  tpuci__lproc_t *p = h->data;
  if (--p->open > 0) return;
  tpuci__lproc_finish(p);
}

static void tpuci__lproc_close(tpuci__lproc_t *p, uv_handle_t *h) {
  if (!uv_is_closing(h)) uv_close(h, tpuci__lproc_closed);
}

/* Once the process and both pipes are done, the drain timer goes too. */
static void tpuci__lproc_maybe_done(tpuci__lproc_t *p) {
  if (p->exited && uv_is_closing((uv_handle_t *) &p->out) && uv_is_closing((uv_handle_t *) &p->err))
    tpuci__lproc_close(p, (uv_handle_t *) &p->drain);
}

static void tpuci__alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  static char slab[1 << 20];
  (void) h;
  (void) suggested;
  /* Output is handed on synchronously, so one buffer serves every pipe. */
  buf->base = slab;
  buf->len = sizeof(slab);
}

static void tpuci__read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  tpuci__lproc_t *p = s->data;
  if (n > 0) {
    tpuci__attempt_output(p->a, s == (uv_stream_t *) &p->out ? 1 : 2, buf->base, (size_t) n);
    return;
  }
  if (n == 0) return;
  /* EOF or an error: this pipe is done. */
  tpuci__lproc_close(p, (uv_handle_t *) s);
  tpuci__lproc_maybe_done(p);
}

static void tpuci__drain_cb(uv_timer_t *t) {
  tpuci__lproc_t *p = t->data;
  /* A descendant outside the process group holds the pipes open. */
  tpuci__lproc_close(p, (uv_handle_t *) &p->out);
  tpuci__lproc_close(p, (uv_handle_t *) &p->err);
  tpuci__lproc_maybe_done(p);
}

static void tpuci__exited(tpuci__local_t *l, tpuci__lproc_t *p, int status) {
  if (p->prev) p->prev->next = p->next;
  else l->live = p->next;
  if (p->next) p->next->prev = p->prev;
  p->prev = p->next = NULL;
  p->exited = 1;
  p->ex.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  p->ex.term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  /* Kill what is left of the group: orphans must not outlive the job. */
  kill(-p->pid, SIGKILL);
  uv_timer_start(&p->drain, tpuci__drain_cb, TPUCI__DRAIN_MS, 0);
  tpuci__lproc_maybe_done(p);
}

/* Some child exited: reap this runtime's, and only those (a host that
 * embeds tpuci may have children of its own). */
static void tpuci__chld_cb(uv_signal_t *h, int signum) {
  tpuci__local_t *l = h->data;
  tpuci__lproc_t *p = l->live, *next;
  (void) signum;
  for (; p != NULL; p = next) {
    int status;
    pid_t r;
    next = p->next;
    do r = waitpid(p->pid, &status, WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == p->pid) tpuci__exited(l, p, status);
  }
}

/* A spawn that failed for a reason of the job's (command not found) ends
 * like a shell would report it: exit 127 or 126. */
static int tpuci__spawn_is_jobs_fault(int r) {
  return r == UV_ENOENT || r == UV_EACCES || r == UV_ENOTDIR || r == TPUCI__ENOEXEC ||
         r == UV_EISDIR;
}

/* The attempt's variables (and, on a single-host topology, the TPU
 * host's), ahead of tpuci's own environment. */
static char **tpuci__build_env(const tpuci__attempt_t *a, tpuci__strv_t *own) {
  tpuci__strv_t extra = {0};
  tpuci__slice_t slice;
  tpuci__err_t err = {0, NULL};
  char **env;
  size_t n = 0, i, j, k = 0;
  int t = a->inst->topology;

  if (t >= 0 && (size_t) t < a->plan->ntopologies &&
      tpuci__topology_slice(&a->plan->topologies[t], &slice, &err) == 0) {
    if (tpuci__attempt_host_env(a, &slice, 0, &extra, &err) != 0) {
      tpuci__strv_free(&extra);
      tpuci__attempt_env(a, &extra);
    }
    tpuci__slice_free(&slice);
  } else {
    tpuci__attempt_env(a, &extra);
  }
  tpuci__err_clear(&err);
  for (i = 0; environ[i]; i++) n++;
  env = tpuci__malloc((n + extra.len + 1) * sizeof(*env));
  for (i = 0; i < extra.len; i++) env[k++] = extra.items[i];
  for (i = 0; environ[i]; i++) {
    const char *eq = strchr(environ[i], '=');
    size_t klen = eq ? (size_t) (eq - environ[i]) : strlen(environ[i]);
    int dup = 0;
    for (j = 0; j < extra.len && !dup; j++)
      dup = strncmp(extra.items[j], environ[i], klen) == 0 && extra.items[j][klen] == '=';
    if (!dup) env[k++] = environ[i];
  }
  env[k] = NULL;
  *own = extra;
  return env;
}

/* What a job's process runs: `file` (looked up in PATH without a '/')
 * with argv and env, in cwd (NULL: tpuci's own), its stdout and stderr
 * going to out_fd and err_fd. */
typedef struct {
  const char *file;
  char *const *argv;
  char *const *env;
  const char *cwd;
  int out_fd;
  int err_fd;
} tpuci__spawn_t;

/* The child's side of posix_spawn(): stdin from /dev/null, stdout and
 * stderr into the two pipes, the job's folder, a session of its own,
 * every signal at its default and none blocked (tpuci catches some and
 * ignores SIGPIPE; a job must not inherit that). 0 or an errno. */
static int tpuci__spawn(const tpuci__spawn_t *sp, pid_t *pid) {
  const char *file = sp->file;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  sigset_t none, all;
  int r;

  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&at);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, sp->out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, sp->err_fd, 2);
  if (sp->cwd != NULL) posix_spawn_file_actions_addchdir_np(&fa, sp->cwd);
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &all);
  posix_spawnattr_setflags(&at,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  r = strchr(file, '/') != NULL ? posix_spawn(pid, file, &fa, &at, sp->argv, sp->env)
                                : posix_spawnp(pid, file, &fa, &at, sp->argv, sp->env);
  posix_spawnattr_destroy(&at);
  posix_spawn_file_actions_destroy(&fa);
  return r;
}

/* A pipe whose read end tpuci keeps (non-blocking, for the loop) and whose
 * write end the child gets; both close on exec. 0 or a negative code. */
static int tpuci__out_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) return TPUCI__ERRNO;
  /* A larger pipe means fewer wake-ups for a job that prints a lot. */
  (void) fcntl(fds[0], F_SETPIPE_SZ, 1 << 20);
  return 0;
}

static int tpuci__local_start(tpuci__runtime_t *rt, tpuci__attempt_t *a) {
  tpuci__local_t *l = (tpuci__local_t *) rt;
  const tpuci__instance_t *inst = a->inst;
  const char *file, *cwd;
  tpuci__spawn_t sp;
  tpuci__lproc_t *p;
  tpuci__strv_t own = {0};
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  char **env;
  pid_t pid = 0;
  int r;

  if (a->argv->len == 0)
    return tpuci__err_set(&rt->err, TPUCI_EUSAGE, "%s: empty command", inst->name);
  if (!l->chld_on) {
    /* Before the first child: its SIGCHLD must not be lost. */
    r = uv_signal_start(&l->chld, tpuci__chld_cb, SIGCHLD);
    if (r != 0)
      return tpuci__err_set(&rt->err, r, "cannot watch child processes: %s", uv_strerror(r));
    l->chld_on = 1;
  }
  r = tpuci__out_pipe(out);
  if (r == 0) r = tpuci__out_pipe(err);
  if (r != 0) {
    int i;
    for (i = 0; i < 2; i++) {
      if (out[i] >= 0) close(out[i]);
      if (err[i] >= 0) close(err[i]);
    }
    return tpuci__err_set(&rt->err, r, "cannot make pipes for '%s': %s", a->argv->items[0],
                          uv_strerror(r));
  }
  p = tpuci__calloc(1, sizeof(*p));
  p->a = a;
  p->ex.exit_code = -1;
  uv_pipe_init(rt->loop, &p->out, 0);
  uv_pipe_init(rt->loop, &p->err, 0);
  uv_timer_init(rt->loop, &p->drain);
  p->out.data = p->err.data = p->drain.data = p;
  p->open = 3;
  uv_pipe_open(&p->out, out[0]);
  uv_pipe_open(&p->err, err[0]);

  file = tpuci__resolve(l, a->argv->items[0], tpuci__child_path(inst));
  cwd = inst->workdir ? inst->workdir : a->plan->spec_dir;
  env = tpuci__build_env(a, &own);
  sp.file = file ? file : a->argv->items[0];
  sp.argv = a->argv->items;
  sp.env = env;
  sp.cwd = cwd;
  sp.out_fd = out[1];
  sp.err_fd = err[1];
  r = tpuci__spawn(&sp, &pid);
  close(out[1]);
  close(err[1]);
  free(env);
  tpuci__strv_free(&own);
  a->rt_data = p;
  if (r != 0) {
    r = -r;
    if (tpuci__spawn_is_jobs_fault(r)) {
      p->cause = NULL;
      p->ex.exit_code = r == UV_ENOENT ? 127 : 126;
      {
        char *msg = tpuci__printf("tpuci: cannot run '%s' in %s: %s\n", a->argv->items[0],
                                  cwd ? cwd : ".", uv_strerror(r));
        tpuci__attempt_output(a, 2, msg, strlen(msg));
        free(msg);
      }
    } else {
      p->ex.infra = 1;
      p->cause = tpuci__printf("cannot start '%s': %s", a->argv->items[0], uv_strerror(r));
    }
    p->exited = 1;
    tpuci__lproc_close(p, (uv_handle_t *) &p->out);
    tpuci__lproc_close(p, (uv_handle_t *) &p->err);
    tpuci__lproc_close(p, (uv_handle_t *) &p->drain);
    return 0;
  }
  p->spawned = 1;
  p->pid = pid;
  p->next = l->live;
  if (l->live) l->live->prev = p;
  l->live = p;
  uv_read_start((uv_stream_t *) &p->out, tpuci__alloc_cb, tpuci__read_cb);
  uv_read_start((uv_stream_t *) &p->err, tpuci__alloc_cb, tpuci__read_cb);
  return 0;
}

static int tpuci__local_signal(tpuci__runtime_t *rt, tpuci__attempt_t *a, int signum) {
  tpuci__lproc_t *p = a->rt_data;
  (void) rt;
  if (p == NULL || !p->spawned || p->exited) return 0;
  /* The whole process group: the job and everything it started. */
  if (kill(-p->pid, signum) != 0 && errno != ESRCH) return TPUCI__ERRNO;
  return 0;
}

static void tpuci__chld_closed(uv_handle_t *h) {
  tpuci__local_t *l = h->data;
  void (*cb)(tpuci__runtime_t *) = l->close_cb;
  l->close_cb = NULL;
  if (cb) cb(&l->rt);
}

static void tpuci__local_close(tpuci__runtime_t *rt, void (*cb)(tpuci__runtime_t *rt)) {
  tpuci__local_t *l = (tpuci__local_t *) rt;
  /* Every attempt is done by the time the scheduler closes a runtime;
   * what is left is the SIGCHLD watcher. */
  l->close_cb = cb;
  uv_close((uv_handle_t *) &l->chld, tpuci__chld_closed);
}

static void tpuci__local_free(tpuci__runtime_t *rt) {
  tpuci__local_t *l = (tpuci__local_t *) rt;
  size_t i;
  for (i = 0; i < l->ncache; i++) {
    free(l->cache[i].name);
    free(l->cache[i].path_var);
    free(l->cache[i].file);
  }
  free(l->cache);
  tpuci__err_clear(&rt->err);
  free(rt);
}

int tpuci__runtime_local_new(uv_loop_t *loop, const tpuci__runtime_opts_t *opts,
                             tpuci__runtime_t **out, tpuci__err_t *err) {
  tpuci__local_t *l = tpuci__calloc(1, sizeof(*l));
  (void) opts;
  (void) err;
  l->rt.name = "local";
  l->rt.loop = loop;
  uv_signal_init(loop, &l->chld);
  l->chld.data = l;
  l->rt.start = tpuci__local_start;
  l->rt.signal = tpuci__local_signal;
  l->rt.close = tpuci__local_close;
  l->rt.free = tpuci__local_free;
  *out = &l->rt;
  return 0;
}
