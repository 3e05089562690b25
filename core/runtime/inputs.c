/* The input key of a job instance (inputs.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "runtime/inputs.h"
#include "runtime/pyenv.h"
#include "runtime/runtime.h"
#include "runtime/tree.h"

extern char **environ;

/* The variables of this process a job without an image inherits that are
 * left out of its key (docs/cache.md): a terminal's and a login
 * session's, a CI run's own identity (new each run, whatever the inputs),
 * and tpuci's own settings. Every other variable counts. */
static const char *const tpuci__volatile_env[] = {"_",
                                                  "OLDPWD",
                                                  "PWD",
                                                  "SHLVL",
                                                  "TERM",
                                                  "COLORTERM",
                                                  "COLUMNS",
                                                  "LINES",
                                                  "LS_COLORS",
                                                  "DISPLAY",
                                                  "WINDOWID",
                                                  "SSH_AUTH_SOCK",
                                                  "SSH_AGENT_PID",
                                                  "SSH_CLIENT",
                                                  "SSH_CONNECTION",
                                                  "SSH_TTY",
                                                  "GPG_TTY",
                                                  "TMUX",
                                                  "TMUX_PANE",
                                                  "STY",
                                                  "WINDOW",
                                                  "DBUS_SESSION_BUS_ADDRESS",
                                                  "XDG_SESSION_ID",
                                                  "XDG_SESSION_TYPE",
                                                  "XDG_SESSION_CLASS",
                                                  "XDG_VTNR",
                                                  "XDG_SEAT",
                                                  "INVOCATION_ID",
                                                  "JOURNAL_STREAM",
                                                  "MAIL",
                                                  "HISTFILE",
                                                  "HISTSIZE",
                                                  "HISTFILESIZE",
                                                  "HISTCONTROL",
                                                  "PS1",
                                                  "PS2",
                                                  "PROMPT_COMMAND",
                                                  "VTE_VERSION",
                                                  "MANPATH",
                                                  "LESSOPEN",
                                                  "LESSCLOSE",
                                                  "CI_JOB_ID",
                                                  "CI_JOB_TOKEN",
                                                  "CI_PIPELINE_ID",
                                                  "CI_PIPELINE_IID",
                                                  "BUILD_ID",
                                                  "BUILD_NUMBER",
                                                  "BUILD_URL",
                                                  "JOB_URL",
                                                  "EXECUTOR_NUMBER",
                                                  NULL};
static const char *const tpuci__volatile_prefix[] = {
    "TERM_",    "GITHUB_", "ACTIONS_",        "RUNNER_", "XDG_RUNTIME",
    "KONSOLE_", "ITERM_",  "GNOME_TERMINAL_", "TPUCI_",  NULL};

static int tpuci__volatile(const char *name, size_t n) {
  size_t i;
  for (i = 0; tpuci__volatile_env[i]; i++)
    if (strlen(tpuci__volatile_env[i]) == n && strncmp(name, tpuci__volatile_env[i], n) == 0)
      return 1;
  for (i = 0; tpuci__volatile_prefix[i]; i++) {
    size_t pl = strlen(tpuci__volatile_prefix[i]);
    if (n >= pl && strncmp(name, tpuci__volatile_prefix[i], pl) == 0) return 1;
  }
  return 0;
}

/* One folder (or file) hashed under one set of globs. */
typedef struct {
  char *source;
  tpuci__strv_t globs;
  int follow; /* links out of it followed (a local job's) */
  int r;      /* 0, or the error */
  char *why;
  tpuci__tree_key_t key;
  size_t *hits; /* per glob */
} tpuci__memo_t;

struct tpuci__inputs_s {
  const tpuci__plan_t *plan;
  char *state_dir;
  char *spec_path;
  char **image_ids; /* per plan image */
  char **image_why;
  char *engine_why[TPUCI__RUNTIME__COUNT]; /* a kind's engine did not answer */
  tpuci__memo_t *memo;
  size_t nmemo;
  json_t *env; /* tpuci__env_json's, made once: every local key shares it */
};

tpuci__inputs_t *tpuci__inputs_new(const tpuci__plan_t *plan, const tpuci__inputs_opts_t *o) {
  tpuci__inputs_t *in = tpuci__calloc(1, sizeof(*in));
  int used[TPUCI__RUNTIME__COUNT] = {0}, k;
  size_t i;
  in->plan = plan;
  in->state_dir = tpuci__strdup(o->state_dir);
  in->spec_path = tpuci__strdup(o->spec_path);
  in->image_ids = tpuci__calloc(plan->nimages + 1, sizeof(char *));
  in->image_why = tpuci__calloc(plan->nimages + 1, sizeof(char *));
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    /* cache = false too: a pytest job's record of what its tests need is
     * keyed by the image's id (tpuci__inputs_nonfile). */
    if (inst->selected && inst->image >= 0) used[inst->runtime] = 1;
  }
  for (k = 0; k < TPUCI__RUNTIME__COUNT; k++) {
    const tpuci__driver_t *d = tpuci__driver((tpuci__runtime_kind_t) k);
    tpuci__err_t e = {0, NULL};
    if (!used[k] || d == NULL || d->image_ids == NULL) continue;
    if (d->image_ids(plan, in->image_ids, in->image_why, &e) != 0)
      in->engine_why[k] = tpuci__printf("the %s engine did not tell the image's id: %s",
                                        tpuci__runtime_kind_name((tpuci__runtime_kind_t) k),
                                        e.msg ? e.msg : "no answer");
    tpuci__err_clear(&e);
  }
  return in;
}

void tpuci__inputs_free(tpuci__inputs_t *in) {
  size_t i;
  int k;
  if (in == NULL) return;
  for (i = 0; i < in->plan->nimages; i++) {
    free(in->image_ids[i]);
    free(in->image_why[i]);
  }
  free(in->image_ids);
  free(in->image_why);
  for (k = 0; k < TPUCI__RUNTIME__COUNT; k++) free(in->engine_why[k]);
  for (i = 0; i < in->nmemo; i++) {
    free(in->memo[i].source);
    tpuci__strv_free(&in->memo[i].globs);
    free(in->memo[i].why);
    free(in->memo[i].hits);
  }
  free(in->memo);
  json_decref(in->env);
  free(in->state_dir);
  free(in->spec_path);
  free(in);
}

static int tpuci__same_globs(const tpuci__strv_t *a, const tpuci__strv_t *b) {
  size_t i;
  if (a->len != b->len) return 0;
  for (i = 0; i < a->len; i++)
    if (strcmp(a->items[i], b->items[i]) != 0) return 0;
  return 1;
}

/* The key of `source` under the instance's globs, hashed once a run. */
static const tpuci__memo_t *tpuci__tree(tpuci__inputs_t *in, const char *source,
                                        const tpuci__strv_t *globs, int follow) {
  tpuci__memo_t *m;
  tpuci__tree_opts_t o;
  tpuci__err_t e = {0, NULL};
  const char *ex[2];
  size_t i, nex = 0;
  for (i = 0; i < in->nmemo; i++)
    if (strcmp(in->memo[i].source, source) == 0 && in->memo[i].follow == follow &&
        tpuci__same_globs(&in->memo[i].globs, globs))
      return &in->memo[i];
  in->memo = tpuci__realloc(in->memo, (in->nmemo + 1) * sizeof(*in->memo));
  m = &in->memo[in->nmemo++];
  memset(m, 0, sizeof(*m));
  m->source = tpuci__strdup(source);
  m->follow = follow;
  tpuci__strv_copy(&m->globs, globs);
  m->hits = tpuci__calloc(globs->len + 1, sizeof(size_t));
  if (in->state_dir) ex[nex++] = in->state_dir;
  if (in->spec_path) ex[nex++] = in->spec_path;
  memset(&o, 0, sizeof(o));
  o.exclude = ex;
  o.nexclude = nex;
  o.globs = (const char *const *) globs->items;
  o.nglobs = globs->len;
  o.glob_base = in->plan->spec_dir;
  o.glob_hits = m->hits;
  o.follow_links = follow;
  m->r = tpuci__tree_key(source, &o, &m->key, &e);
  if (m->r != 0) m->why = tpuci__strdup(e.msg ? e.msg : tpuci__strerror(m->r));
  tpuci__err_clear(&e);
  return m;
}

/* The folder a job without an image runs in. */
static char *tpuci__local_dir(const tpuci__plan_t *p, const tpuci__instance_t *inst) {
  const char *base = p->spec_dir ? p->spec_dir : ".";
  if (inst->workdir == NULL) return tpuci__strdup(base);
  if (inst->workdir[0] == '/') return tpuci__strdup(inst->workdir);
  return tpuci__printf("%s/%s", base, inst->workdir);
}

/* One instance's key being made: the inputs' context, the instance,
 * how many files each of its inputs globs matched so far
 * (hits[0..inputs.len)), and the key. */
typedef struct {
  tpuci__inputs_t *in;
  const tpuci__instance_t *inst;
  size_t *hits;
  tpuci__inputs_key_t *out;
} tpuci__keying_t;

/* Hashes one folder (`source`, its links followed with `follow`) into
 * `m`, its entry of the parts' "mounts" (or "workdir"); 0, or -1 with
 * out->why. Counts each glob's hits; a folder whose files git ignores is
 * said in out->warnings. */
static int tpuci__add_tree(const tpuci__keying_t *k, const char *source, int follow, json_t *m) {
  const tpuci__instance_t *inst = k->inst;
  tpuci__inputs_key_t *out = k->out;
  const tpuci__memo_t *t = tpuci__tree(k->in, source, &inst->inputs, follow);
  size_t g;
  if (t->r != 0) {
    out->why = tpuci__printf("%s", t->why);
    return -1;
  }
  for (g = 0; g < inst->inputs.len; g++) k->hits[g] += t->hits[g];
  json_object_set_new(m, "key", json_string(t->key.hex));
  json_object_set_new(m, "how", json_string(t->key.how));
  json_object_set_new(m, "files", json_integer((json_int_t) t->key.files));
  if (t->key.ignored_only > 0)
    tpuci__strv_take(&out->warnings,
                     tpuci__printf("%s: job '%s': git ignores %zu %s of %s, and %s not count: "
                                   "name %s in inputs to count %s",
                                   inst->where, inst->job, t->key.ignored_only,
                                   t->key.ignored_only == 1 ? "entry" : "entries", source,
                                   t->key.ignored_only == 1 ? "it does" : "they do",
                                   t->key.ignored_only == 1 ? "it" : "them",
                                   t->key.ignored_only == 1 ? "it" : "them"));
  return 0;
}

/* The first 16 hex digits of the SHA-256 of `s`: a variable's value in
 * the key, which `plan --keys` shows without showing the value. */
static json_t *tpuci__value_hash(const char *s) {
  char hex[65];
  tpuci__sha256_hex(s, strlen(s), hex);
  hex[16] = '\0';
  return json_string(hex);
}

/* The variables a job without an image inherits: every one of this
 * process's but the volatile ones, each by its value's hash. Made once
 * per `in` and shared by every key that names it (a new reference to
 * it): 2000 local jobs kept 2000 copies of the environment. */
static json_t *tpuci__env_json(tpuci__inputs_t *in) {
  size_t i;
  if (in->env != NULL) return json_incref(in->env);
  in->env = json_object();
  for (i = 0; environ[i]; i++) {
    const char *eq = strchr(environ[i], '=');
    char *name;
    if (eq == NULL || eq == environ[i] || tpuci__volatile(environ[i], (size_t) (eq - environ[i])))
      continue;
    name = tpuci__strndup(environ[i], (size_t) (eq - environ[i]));
    json_object_set_new(in->env, name, tpuci__value_hash(eq + 1));
    free(name);
  }
  return json_incref(in->env);
}

/* Whether `path` is the folder `dir` or under it. */
static int tpuci__inside(const char *path, const char *dir) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* One site-packages folder into `a`; 0, or -1 with out->why. */
static int tpuci__add_site(const char *dir, json_t *a, tpuci__inputs_key_t *out) {
  tpuci__err_t e = {0, NULL};
  char hex[65];
  size_t n;
  json_t *o;
  if (tpuci__pyenv_key(dir, hex, &n, &e) != 0) {
    out->why = tpuci__strdup(e.msg);
    tpuci__err_clear(&e);
    return -1;
  }
  o = json_object();
  json_object_set_new(o, "source", json_string(dir));
  json_object_set_new(o, "how", json_string("packages"));
  json_object_set_new(o, "files", json_integer((json_int_t) n));
  json_object_set_new(o, "key", json_string(hex));
  json_array_append_new(a, o);
  return 0;
}

/* What a job without an image finds of Python outside its folder: the
 * packages of VIRTUAL_ENV's and CONDA_PREFIX's environments, and each
 * PYTHONPATH folder (its packages where it holds distributions, else its
 * files). 0, or -1 with out->why. */
static int tpuci__add_python(const tpuci__keying_t *k, const char *dir, json_t *a) {
  static const char *const prefixes[] = {"VIRTUAL_ENV", "CONDA_PREFIX", NULL};
  tpuci__inputs_key_t *out = k->out;
  const char *pp = getenv("PYTHONPATH");
  tpuci__strv_t sites = {0};
  tpuci__strv_t none = {0};
  size_t i;
  int bad = 0;
  for (i = 0; prefixes[i]; i++) {
    const char *v = getenv(prefixes[i]);
    if (v != NULL && v[0] == '/') tpuci__pyenv_sites(v, &sites);
  }
  for (i = 0; i < sites.len && !bad; i++) bad = tpuci__add_site(sites.items[i], a, out) != 0;
  tpuci__strv_free(&sites);
  while (!bad && pp != NULL && *pp) {
    size_t n = strcspn(pp, ":");
    char *p = n == 0         ? NULL
              : pp[0] == '/' ? tpuci__strndup(pp, n)
                             : tpuci__printf("%s/%.*s", dir, (int) n, pp);
    struct stat st;
    if (p != NULL && !tpuci__inside(p, dir) && stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
      if (tpuci__pyenv_is_site(p)) {
        bad = tpuci__add_site(p, a, out) != 0;
      } else {
        const tpuci__memo_t *t = tpuci__tree(k->in, p, &none, 1);
        json_t *o = json_object();
        json_object_set_new(o, "source", json_string(p));
        json_array_append_new(a, o);
        if (t->r != 0) {
          out->why = tpuci__strdup(t->why);
          bad = 1;
        } else {
          json_object_set_new(o, "how", json_string(t->key.how));
          json_object_set_new(o, "files", json_integer((json_int_t) t->key.files));
          json_object_set_new(o, "key", json_string(t->key.hex));
        }
      }
    }
    free(p);
    pp += n;
    if (*pp == ':') pp++;
  }
  return bad ? -1 : 0;
}

void tpuci__inputs_key(tpuci__inputs_t *in, size_t i, const tpuci__strv_t *tests,
                       tpuci__inputs_key_t *out) {
  const tpuci__plan_t *p = in->plan;
  const tpuci__instance_t *inst = &p->instances[i];
  json_t *entry, *parts, *a, *material;
  size_t *hits = tpuci__calloc(inst->inputs.len + 1, sizeof(size_t)), k;
  tpuci__keying_t keying = {.in = in, .inst = inst, .hits = hits, .out = out};
  char *text, hex[65];
  int bad = 0;

  memset(out, 0, sizeof(*out));
  parts = json_object();
  out->parts = parts;
  json_object_set_new(parts, "format", json_string(TPUCI__KEY_FORMAT));
  json_object_set_new(parts, "tpuci", json_string(tpuci_version()));
  json_object_set_new(parts, "build", json_string(tpuci__build_id()));
  /* The plan entry, but for where it is written in the spec. */
  entry = tpuci__plan_instance_json(p, inst);
  json_object_del(entry, "where");
  text = json_dumps(entry, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENSURE_ASCII);
  json_decref(entry);
  tpuci__sha256_hex(text, strlen(text), hex);
  free(text);
  json_object_set_new(parts, "entry", json_string(hex));

  if (inst->no_cache) {
    out->why = tpuci__strdup("cache = false");
    bad = 1;
  } else if (inst->runtime == TPUCI__RUNTIME_SSH) {
    out->why = tpuci__strdup("runtime ssh: what the workers hold is not known here");
    bad = 1;
  } else if (inst->image >= 0) {
    if (in->engine_why[inst->runtime]) {
      out->why = tpuci__strdup(in->engine_why[inst->runtime]);
      bad = 1;
    } else if (in->image_ids[inst->image] == NULL) {
      out->why = tpuci__strdup(in->image_why[inst->image] ? in->image_why[inst->image]
                                                          : "the image's id is not known");
      bad = 1;
    } else {
      json_object_set_new(parts, "image", json_string(in->image_ids[inst->image]));
    }
  }
  if (!bad && inst->image >= 0) {
    a = json_array();
    json_object_set_new(parts, "mounts", a);
    for (k = 0; k < inst->nmounts && !bad; k++) {
      json_t *m = json_object();
      json_array_append_new(a, m);
      json_object_set_new(m, "source", json_string(inst->mounts[k].source));
      json_object_set_new(m, "target", json_string(inst->mounts[k].target));
      json_object_set_new(m, "readonly", json_boolean(inst->mounts[k].read_only));
      bad = tpuci__add_tree(&keying, inst->mounts[k].source, 0, m) != 0;
    }
  } else if (!bad) {
    /* No image: the folder it runs in (links out of it followed), the
     * environment it inherits and the Python packages it finds. */
    json_t *w = json_object(), *py = json_array();
    char *dir = tpuci__local_dir(p, inst);
    json_object_set_new(w, "source", json_string(dir));
    json_object_set_new(parts, "workdir", w);
    json_object_set_new(parts, "env", tpuci__env_json(in));
    json_object_set_new(parts, "python", py);
    bad = tpuci__add_tree(&keying, dir, 1, w) != 0 || tpuci__add_python(&keying, dir, py) != 0;
    free(dir);
  }
  if (tests != NULL && tests->len > 0) {
    a = json_array();
    for (k = 0; k < tests->len; k++) json_array_append_new(a, json_string(tests->items[k]));
    json_object_set_new(parts, "tests", a);
  }
  if (!bad)
    for (k = 0; k < inst->inputs.len; k++)
      if (hits[k] == 0)
        tpuci__strv_take(&out->warnings,
                         tpuci__printf("%s: job '%s': inputs[%zu] '%s' matches no file of %s",
                                       inst->where, inst->job, k + 1, inst->inputs.items[k],
                                       inst->image >= 0 ? "its mounts" : "its folder"));
  free(hits);
  if (bad) return;
  /* The key: the parts but for what only describes them. */
  material = json_deep_copy(parts);
  a = json_object_get(material, "mounts");
  for (k = 0; a && k < json_array_size(a); k++) {
    json_object_del(json_array_get(a, k), "how");
    json_object_del(json_array_get(a, k), "files");
  }
  if ((a = json_object_get(material, "workdir")) != NULL) {
    json_object_del(a, "how");
    json_object_del(a, "files");
  }
  a = json_object_get(material, "python");
  for (k = 0; a && k < json_array_size(a); k++) json_object_del(json_array_get(a, k), "files");
  text = json_dumps(material, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENSURE_ASCII);
  json_decref(material);
  tpuci__sha256_hex(text, strlen(text), out->hex);
  free(text);
}

int tpuci__inputs_nonfile(tpuci__inputs_t *in, size_t i, char hex[65]) {
  const tpuci__plan_t *p = in->plan;
  const tpuci__instance_t *inst = &p->instances[i];
  json_t *entry, *m, *o;
  tpuci__inputs_key_t scratch;
  char *text;
  int r = 0;

  if (inst->runtime == TPUCI__RUNTIME_SSH) return -1;
  if (inst->image >= 0 && (in->engine_why[inst->runtime] || in->image_ids[inst->image] == NULL))
    return -1;
  /* The plan entry but for what differs between the shards of one
   * instance, and what changes no test's result (timeouts, retries). */
  entry = tpuci__plan_instance_json(p, inst);
  json_object_del(entry, "where");
  json_object_del(entry, "name");
  json_object_del(json_object_get(entry, "matrix"), "shard");
  json_object_del(json_object_get(entry, "env"), "TEST_SHARD_INDEX");
  json_object_del(json_object_get(entry, "pytest"), "shard");
  json_object_del(entry, "timeout_ms");
  json_object_del(entry, "idle_timeout_ms");
  json_object_del(entry, "start_timeout_ms");
  json_object_del(entry, "grace_ms");
  json_object_del(entry, "retry");
  /* How many left-out tests the audit runs changes no test's result. */
  json_object_del(json_object_get(entry, "pytest"), "select_audit");
  m = json_object();
  json_object_set_new(m, "format", json_string("tpuci-deps-1"));
  json_object_set_new(m, "build", json_string(tpuci__build_id()));
  json_object_set_new(m, "entry", entry);
  if (inst->image >= 0) json_object_set_new(m, "image", json_string(in->image_ids[inst->image]));
  if (inst->image < 0) {
    /* What a local job inherits and the packages it finds. */
    char *dir = tpuci__local_dir(p, inst);
    tpuci__keying_t keying = {.in = in, .inst = inst, .out = &scratch};
    o = json_array();
    memset(&scratch, 0, sizeof(scratch));
    json_object_set_new(m, "env", tpuci__env_json(in));
    json_object_set_new(m, "python", o);
    r = tpuci__add_python(&keying, dir, o);
    tpuci__inputs_key_clear(&scratch);
    free(dir);
  }
  text = json_dumps(m, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENSURE_ASCII);
  json_decref(m);
  tpuci__sha256_hex(text, strlen(text), hex);
  free(text);
  return r;
}

void tpuci__inputs_key_clear(tpuci__inputs_key_t *k) {
  free(k->why);
  json_decref(k->parts);
  tpuci__strv_free(&k->warnings);
  memset(k, 0, sizeof(*k));
}
