/* The local runtime: each attempt is a process started with uv_spawn in
 * a session and process group of its own (UV_PROCESS_DETACHED), so that a
 * signal reaches the whole tree and nothing it spawned outlives it.
 *
 * An attempt is over when the process has exited and both output pipes
 * have closed. When the leader exits, whatever is left in its process
 * group is killed: an orphaned grandchild must not survive the job, nor
 * keep its pipes open. A descendant that left the group with setsid()
 * escapes that; its pipes are closed after a short drain period so the
 * run still ends.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "plan/topology.h"

extern char **environ;

#define TPUCI__DRAIN_MS 2000
#define TPUCI__ENOEXEC (-ENOEXEC)

typedef struct {
  tpuci__attempt_t *a;
  uv_process_t proc;
  uv_pipe_t out;
  uv_pipe_t err;
  uv_timer_t drain;
  int open;               /* handles not yet closed */
  int exited;
  int spawned;
  int pid;
  tpuci__exit_t ex;
  char *cause;
} tpuci__lproc_t;

/* Commands resolved through PATH, so that the child execs its command at
 * once instead of trying every PATH entry while uv_spawn() waits. */
typedef struct {
  char *name;
  char *path_var;          /* the PATH it was resolved against */
  char *file;              /* the full path, or NULL: leave it to execvp */
} tpuci__resolved_t;

typedef struct {
  tpuci__runtime_t rt;
  tpuci__resolved_t *cache;
  size_t ncache;
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
    if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
      return cand;
    free(cand);
    p = *end ? end + 1 : end;
  }
  return NULL;
}

static const char *tpuci__resolve(tpuci__local_t *l, const char *name,
                                  const char *path_var) {
  size_t i;
  if (strchr(name, '/') != NULL || path_var == NULL) return NULL;
  for (i = 0; i < l->ncache; i++)
    if (strcmp(l->cache[i].name, name) == 0 &&
        strcmp(l->cache[i].path_var, path_var) == 0)
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
  if (uv_is_closing((uv_handle_t *) &p->proc) &&
      uv_is_closing((uv_handle_t *) &p->out) &&
      uv_is_closing((uv_handle_t *) &p->err))
    tpuci__lproc_close(p, (uv_handle_t *) &p->drain);
}

static void tpuci__alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  static char slab[65536];
  (void) h;
  (void) suggested;
  /* Output is handed on synchronously, so one buffer serves every pipe. */
  buf->base = slab;
  buf->len = sizeof(slab);
}

static void tpuci__read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  tpuci__lproc_t *p = s->data;
  if (n > 0) {
    tpuci__attempt_output(p->a, s == (uv_stream_t *) &p->out ? 1 : 2,
                          buf->base, (size_t) n);
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

static void tpuci__exit_cb(uv_process_t *proc, int64_t status, int signum) {
  tpuci__lproc_t *p = proc->data;
  p->exited = 1;
  p->ex.exit_code = signum ? -1 : (int) status;
  p->ex.term_signal = signum;
  /* Kill what is left of the group: orphans must not outlive the job. */
  kill(-p->pid, SIGKILL);
  tpuci__lproc_close(p, (uv_handle_t *) proc);
  uv_timer_start(&p->drain, tpuci__drain_cb, TPUCI__DRAIN_MS, 0);
  tpuci__lproc_maybe_done(p);
}

/* A spawn that failed for a reason of the job's (command not found) ends
 * like a shell would report it: exit 127 or 126. */
static int tpuci__spawn_is_jobs_fault(int r) {
  return r == UV_ENOENT || r == UV_EACCES || r == UV_ENOTDIR ||
         r == TPUCI__ENOEXEC || r == UV_EISDIR;
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
      dup = strncmp(extra.items[j], environ[i], klen) == 0 &&
            extra.items[j][klen] == '=';
    if (!dup) env[k++] = environ[i];
  }
  env[k] = NULL;
  *own = extra;
  return env;
}

static int tpuci__local_start(tpuci__runtime_t *rt, tpuci__attempt_t *a) {
  tpuci__local_t *l = (tpuci__local_t *) rt;
  const tpuci__instance_t *inst = a->inst;
  const char *file;
  tpuci__lproc_t *p;
  uv_process_options_t o;
  uv_stdio_container_t stdio[3];
  tpuci__strv_t own = {0};
  char **env;
  int r;

  if (a->argv->len == 0)
    return tpuci__err_set(&rt->err, TPUCI_EUSAGE, "%s: empty command",
                          inst->name);
  p = tpuci__calloc(1, sizeof(*p));
  p->a = a;
  p->ex.exit_code = -1;
  uv_pipe_init(rt->loop, &p->out, 0);
  uv_pipe_init(rt->loop, &p->err, 0);
  uv_timer_init(rt->loop, &p->drain);
  p->out.data = p->err.data = p->drain.data = p->proc.data = p;
  p->open = 3;

  memset(&o, 0, sizeof(o));
  stdio[0].flags = UV_IGNORE;
  stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[1].data.stream = (uv_stream_t *) &p->out;
  stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[2].data.stream = (uv_stream_t *) &p->err;
  o.stdio = stdio;
  o.stdio_count = 3;
  file = tpuci__resolve(l, a->argv->items[0], tpuci__child_path(inst));
  o.file = file ? file : a->argv->items[0];
  o.args = a->argv->items;
  o.cwd = inst->workdir ? inst->workdir : a->plan->spec_dir;
  o.flags = UV_PROCESS_DETACHED;
  o.exit_cb = tpuci__exit_cb;
  env = tpuci__build_env(a, &own);
  o.env = env;

  r = uv_spawn(rt->loop, &p->proc, &o);
  free(env);
  tpuci__strv_free(&own);
  a->rt_data = p;
  if (r != 0) {
    /* The process handle must be closed even though spawn failed. */
    p->open++;
    if (tpuci__spawn_is_jobs_fault(r)) {
      p->cause = NULL;
      p->ex.exit_code = r == UV_ENOENT ? 127 : 126;
      {
        char *msg = tpuci__printf("tpuci: cannot run '%s' in %s: %s\n",
                                  a->argv->items[0], o.cwd, uv_strerror(r));
        tpuci__attempt_output(a, 2, msg, strlen(msg));
        free(msg);
      }
    } else {
      p->ex.infra = 1;
      p->cause = tpuci__printf("cannot start '%s': %s", a->argv->items[0],
                               uv_strerror(r));
    }
    p->exited = 1;
    tpuci__lproc_close(p, (uv_handle_t *) &p->proc);
    tpuci__lproc_close(p, (uv_handle_t *) &p->out);
    tpuci__lproc_close(p, (uv_handle_t *) &p->err);
    tpuci__lproc_close(p, (uv_handle_t *) &p->drain);
    return 0;
  }
  p->open++;
  p->spawned = 1;
  p->pid = p->proc.pid;
  uv_read_start((uv_stream_t *) &p->out, tpuci__alloc_cb, tpuci__read_cb);
  uv_read_start((uv_stream_t *) &p->err, tpuci__alloc_cb, tpuci__read_cb);
  return 0;
}

static int tpuci__local_signal(tpuci__runtime_t *rt, tpuci__attempt_t *a,
                               int signum) {
  tpuci__lproc_t *p = a->rt_data;
  (void) rt;
  if (p == NULL || !p->spawned || p->exited) return 0;
  /* The whole process group: the job and everything it started. */
  if (kill(-p->pid, signum) != 0 && errno != ESRCH) return TPUCI__ERRNO;
  return 0;
}

static void tpuci__local_close(tpuci__runtime_t *rt,
                               void (*cb)(tpuci__runtime_t *rt)) {
  /* Every attempt is done by the time the scheduler closes a runtime, and
   * the local runtime holds no handle of its own. */
  cb(rt);
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

int tpuci__runtime_local_new(uv_loop_t *loop,
                             const tpuci__runtime_opts_t *opts,
                             tpuci__runtime_t **out, tpuci__err_t *err) {
  tpuci__local_t *l = tpuci__calloc(1, sizeof(*l));
  (void) opts;
  (void) err;
  l->rt.name = "local";
  l->rt.loop = loop;
  l->rt.start = tpuci__local_start;
  l->rt.signal = tpuci__local_signal;
  l->rt.close = tpuci__local_close;
  l->rt.free = tpuci__local_free;
  *out = &l->rt;
  return 0;
}
