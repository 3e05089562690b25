/* The docker runtime driver (runtime.h): one attempt is a set of
 * containers (one today; a gang of hosts later) driven through the Engine
 * API on the scheduler's loop.
 *
 * An attempt moves through phases; each phase issues its requests and the
 * next phase begins when every request of the attempt has completed
 * (att->requests == 0), so a callback never finds its attempt freed:
 *
 *   CREATE  POST /containers/create for each container
 *   RUN     POST start, then POST wait and GET logs (follow) for each;
 *           signals become POST kill
 *   INSPECT GET /containers/{id}/json for those that exited non-zero
 *           (State.OOMKilled, State.ExitCode)
 *   REMOVE  DELETE ?force=1&v=1 for each created container, unless kept
 *   then    tpuci__attempt_done()
 *
 * An engine failure at any step marks the attempt infra, kills what runs
 * and still goes through REMOVE, so nothing is left behind.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "docker/container.h"
#include "docker/demux.h"
#include "docker/engine.h"
#include "runtime.h"

#define TPUCI__MIB (1024.0 * 1024.0)
#define TPUCI__DISK_WARN_BYTES (1024ull * 1024 * 1024)
#define TPUCI__DISK_FAIL_BYTES (100ull * 1024 * 1024)

typedef struct tpuci__dk_s tpuci__dk_t;
typedef struct tpuci__dk_att_s tpuci__dk_att_t;

typedef enum {
  TPUCI__PH_CREATE = 0,
  TPUCI__PH_RUN,
  TPUCI__PH_INSPECT,
  TPUCI__PH_REMOVE,
  TPUCI__PH_DONE
} tpuci__phase_t;

typedef struct {
  tpuci__dk_att_t *att;
  char *name;
  char *id;               /* set once created */
  int started;
  int exited;             /* wait answered */
  int pending_signal;     /* to send once started */
  long status_code;
  int oom;
  int removed;
  int create_tries;
  tpuci__demux_t demux;
} tpuci__dk_ctr_t;

struct tpuci__dk_att_s {
  tpuci__dk_t *dk;
  tpuci__attempt_t *a;
  tpuci__dk_ctr_t *ctrs;
  size_t nctrs;
  tpuci__phase_t phase;
  int requests;           /* in flight, all kinds */
  int stop;               /* signalled before the containers ran */
  uint64_t signals;       /* bit n: signal n was sent */
  char *infra;            /* the first engine failure */
  json_t *body;           /* create request, until CREATE is over */
  tpuci__dk_att_t *prev, *next;
};

struct tpuci__dk_s {
  tpuci__runtime_t rt;
  uv_loop_t *loop;
  tpuci__engine_t *eng;
  char *run_id;
  int keep_failed;
  tpuci__dk_att_t *atts;  /* attempts not done */
  int bg;                 /* requests of prepare */
  /* prepare */
  const tpuci__plan_t *plan;
  void (*prepare_cb)(tpuci__runtime_t *rt, int status);
  int *images;
  size_t nimages, image_next;
  int image_present;      /* of images[image_next - 1] */
  size_t leftover_ctrs;
  /* close */
  int closing;
  void (*close_cb)(tpuci__runtime_t *rt);
};

static void tpuci__dk_step(tpuci__dk_att_t *att);

static void tpuci__dk_message(tpuci__dk_t *dk, const char *msg) {
  if (dk->rt.on_message != NULL) dk->rt.on_message(&dk->rt, msg);
}

static int tpuci__dk_engine(tpuci__dk_t *dk) {
  int rc;
  if (dk->eng != NULL) return 0;
  rc = tpuci__engine_new(dk->loop, &dk->eng, &dk->rt.err);
  if (rc != 0) dk->rt.err.code = TPUCI_EENGINE;
  return rc != 0 ? TPUCI_EENGINE : 0;
}

static void tpuci__dk_infra(tpuci__dk_att_t *att, const char *step,
                            const tpuci__dk_ctr_t *c, const char *msg) {
  if (att->infra != NULL) return;
  if (c != NULL)
    att->infra = tpuci__printf("docker engine: %s container %s failed: %s",
                               step, c->name, msg);
  else
    att->infra = tpuci__printf("docker engine: %s failed: %s", step, msg);
}

/* Signals. */

static void tpuci__dk_on_killed(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  att->requests--;
  /* 404: gone already; 409: not running any more. Both are fine. */
  if (!res->ok && res->status != 404 && res->status != 409 &&
      res->error != UV_ECANCELED) {
    char *m = tpuci__printf("could not signal container %s: %s", c->name,
                            res->message);
    tpuci__attempt_message(att->a, m);
    free(m);
  }
  tpuci__dk_step(att);
}

static void tpuci__dk_kill(tpuci__dk_ctr_t *c, int signum) {
  tpuci__dk_att_t *att = c->att;
  char buf[16];
  if (signum > 0 && signum < 64) att->signals |= 1ull << signum;
  att->requests++;
  tpuci__engine_container_kill(att->dk->eng, c->id,
                               tpuci__docker_signame(signum, buf, sizeof(buf)),
                               tpuci__dk_on_killed, c);
}

static void tpuci__dk_kill_running(tpuci__dk_att_t *att, int signum) {
  size_t i;
  for (i = 0; i < att->nctrs; i++) {
    tpuci__dk_ctr_t *c = &att->ctrs[i];
    if (c->id == NULL || c->exited) continue;
    if (c->started) tpuci__dk_kill(c, signum);
    else c->pending_signal = signum;
  }
}

/* RUN: logs and wait. */

static void tpuci__dk_on_output(void *p, int stream, const char *buf,
                                size_t len) {
  tpuci__dk_ctr_t *c = p;
  tpuci__attempt_output(c->att->a, stream, buf, len);
}

static void tpuci__dk_on_log_chunk(void *p, const char *buf, size_t len) {
  tpuci__dk_ctr_t *c = p;
  tpuci__demux_feed(&c->demux, buf, len, tpuci__dk_on_output, c);
}

static void tpuci__dk_on_logs(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  att->requests--;
  tpuci__demux_flush(&c->demux, tpuci__dk_on_output, c);
  if (!res->ok && res->error != UV_ECANCELED) {
    char *m = tpuci__printf("could not read the output of container %s: %s",
                            c->name, res->message);
    tpuci__attempt_message(att->a, m);
    free(m);
  }
  tpuci__dk_step(att);
}

static void tpuci__dk_on_wait(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  att->requests--;
  if (res->ok) {
    json_t *code = json_object_get(res->json, "StatusCode");
    c->exited = 1;
    c->status_code = json_is_integer(code) ? (long) json_integer_value(code) : -1;
  } else {
    tpuci__dk_infra(att, "waiting for", c, res->message);
    /* Whatever happened, make sure the logs stream ends. */
    if (res->error == 0) tpuci__dk_kill(c, SIGKILL);
  }
  tpuci__dk_step(att);
}

static void tpuci__dk_on_started(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  tpuci__engine_t *eng = att->dk->eng;
  att->requests--;
  if (!res->ok) {
    tpuci__dk_infra(att, "starting", c, res->message);
    /* The others of a gang must not run on alone. */
    tpuci__dk_kill_running(att, SIGKILL);
    tpuci__dk_step(att);
    return;
  }
  c->started = 1;
  att->requests += 2;
  tpuci__engine_container_logs(eng, c->id, tpuci__dk_on_log_chunk, c,
                               tpuci__dk_on_logs, c);
  tpuci__engine_container_wait(eng, c->id, tpuci__dk_on_wait, c);
  if (att->infra != NULL) tpuci__dk_kill(c, SIGKILL);
  else if (c->pending_signal) tpuci__dk_kill(c, c->pending_signal);
  c->pending_signal = 0;
  tpuci__dk_step(att);
}

/* CREATE. */

static void tpuci__dk_on_created(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  att->requests--;
  if (res->status == 409 && c->create_tries < 3 && !att->stop) {
    /* The name is taken: another tpuci with the same run id (run ids are
     * unique per state folder, the engine is shared). Add a suffix. */
    unsigned tag = (unsigned) ((uint64_t) uv_hrtime() ^ ((uint64_t) getpid() << 16));
    char *name = tpuci__printf("%s-%06x", c->name, tag & 0xffffffu);
    free(c->name);
    c->name = name;
    c->create_tries++;
    att->requests++;
    tpuci__engine_container_create(att->dk->eng, c->name, att->body,
                                   tpuci__dk_on_created, c);
    return;
  }
  if (res->ok) {
    const char *id = json_string_value(json_object_get(res->json, "Id"));
    if (id != NULL) c->id = tpuci__strdup(id);
    else tpuci__dk_infra(att, "creating", c, "the answer has no Id");
  } else {
    tpuci__dk_infra(att, "creating", c, res->message);
  }
  tpuci__dk_step(att);
}

/* INSPECT. */

static void tpuci__dk_on_inspected(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  att->requests--;
  if (res->ok) {
    json_t *state = json_object_get(res->json, "State");
    json_t *code = json_object_get(state, "ExitCode");
    c->oom = json_is_true(json_object_get(state, "OOMKilled"));
    if (json_is_integer(code)) c->status_code = (long) json_integer_value(code);
  }
  /* Without the inspection the exit status from wait still stands. */
  tpuci__dk_step(att);
}

/* REMOVE. */

static void tpuci__dk_on_removed(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  att->requests--;
  if (res->ok || res->status == 404) {
    c->removed = 1;
  } else {
    char *m = tpuci__printf("could not remove container %s: %s; run `tpuci "
                            "gc` to clean up",
                            c->name, res->message);
    tpuci__attempt_message(att->a, m);
    free(m);
  }
  tpuci__dk_step(att);
}

/* Whether the attempt failed on its own: a non-zero exit or an OOM kill,
 * with no signal from tpuci and no engine failure. Only those are kept
 * with --keep-failed; timed out and cancelled ones never are, so an
 * interrupted run leaves nothing behind. */
static int tpuci__dk_failed_alone(const tpuci__dk_att_t *att) {
  size_t i;
  if (att->infra != NULL || att->stop || att->signals != 0) return 0;
  for (i = 0; i < att->nctrs; i++)
    if (att->ctrs[i].exited && (att->ctrs[i].status_code != 0 || att->ctrs[i].oom))
      return 1;
  return 0;
}

static void tpuci__dk_keep(tpuci__dk_att_t *att) {
  size_t i;
  for (i = 0; i < att->nctrs; i++) {
    const char *n = att->ctrs[i].name;
    char *m;
    if (att->ctrs[i].id == NULL) continue;
    m = tpuci__printf(
        "kept container %s: see its output with `docker logs %s`, run it "
        "again with `docker start -ai %s`, or look inside with `docker "
        "commit %s %s-debug && docker run --rm -it --entrypoint sh "
        "%s-debug`; `tpuci gc` removes it",
        n, n, n, n, n, n);
    tpuci__attempt_message(att->a, m);
    free(m);
  }
}

static void tpuci__dk_finish(tpuci__dk_att_t *att) {
  tpuci__dk_t *dk = att->dk;
  tpuci__attempt_t *a = att->a;
  tpuci__exit_t ex;
  char *cause = NULL;
  size_t i;

  memset(&ex, 0, sizeof(ex));
  ex.exit_code = -1;
  if (att->infra != NULL) {
    ex.infra = 1;
    ex.cause = att->infra;
  } else if (att->stop) {
    ex.cause = "stopped before the container started";
  } else {
    /* The first container that failed speaks for the attempt. */
    const tpuci__dk_ctr_t *c = &att->ctrs[0];
    for (i = 0; i < att->nctrs; i++)
      if (att->ctrs[i].status_code != 0 || att->ctrs[i].oom) {
        c = &att->ctrs[i];
        break;
      }
    ex.exit_code = (int) c->status_code;
    if (c->status_code > 128 && c->status_code < 128 + 64 &&
        (att->signals & (1ull << (c->status_code - 128)))) {
      ex.term_signal = (int) c->status_code - 128;
      ex.exit_code = -1;
    }
    if (c->oom) {
      const tpuci__instance_t *inst = a->inst;
      ex.oom = 1;
      if (inst->memory_bytes > 0)
        cause = tpuci__printf("killed by the kernel: out of memory (memory "
                              "limit %.0f MiB)",
                              (double) inst->memory_bytes / TPUCI__MIB);
      else
        cause = tpuci__strdup("killed by the kernel: out of memory");
      ex.cause = cause;
    }
  }
  if (att->prev) att->prev->next = att->next;
  else dk->atts = att->next;
  if (att->next) att->next->prev = att->prev;
  a->rt_data = NULL;
  tpuci__attempt_done(a, &ex);
  free(cause);
  for (i = 0; i < att->nctrs; i++) {
    free(att->ctrs[i].name);
    free(att->ctrs[i].id);
  }
  free(att->ctrs);
  free(att->infra);
  json_decref(att->body);
  free(att);
}

static void tpuci__dk_maybe_closed(tpuci__dk_t *dk);

/* Moves the attempt on once nothing of it is in flight. */
static void tpuci__dk_step(tpuci__dk_att_t *att) {
  tpuci__engine_t *eng = att->dk->eng;
  size_t i;

  while (att->requests == 0) {
    switch (att->phase) {
      case TPUCI__PH_CREATE:
        json_decref(att->body);
        att->body = NULL;
        att->phase = TPUCI__PH_RUN;
        if (att->infra != NULL || att->stop) {
          /* Straight to removing whatever was created. */
          att->phase = TPUCI__PH_INSPECT;
          break;
        }
        for (i = 0; i < att->nctrs; i++) {
          att->requests++;
          tpuci__engine_container_start(eng, att->ctrs[i].id,
                                        tpuci__dk_on_started, &att->ctrs[i]);
        }
        break;
      case TPUCI__PH_RUN:
        att->phase = TPUCI__PH_INSPECT;
        if (att->infra != NULL) break;
        for (i = 0; i < att->nctrs; i++) {
          tpuci__dk_ctr_t *c = &att->ctrs[i];
          if (!c->exited || c->status_code == 0) continue;
          att->requests++;
          tpuci__engine_container_inspect(eng, c->id, tpuci__dk_on_inspected, c);
        }
        break;
      case TPUCI__PH_INSPECT:
        att->phase = TPUCI__PH_REMOVE;
        if (att->a->keep_on_failure && tpuci__dk_failed_alone(att)) {
          tpuci__dk_keep(att);
          break;
        }
        for (i = 0; i < att->nctrs; i++) {
          if (att->ctrs[i].id == NULL) continue;
          att->requests++;
          tpuci__engine_container_remove(eng, att->ctrs[i].id,
                                         tpuci__dk_on_removed, &att->ctrs[i]);
        }
        break;
      case TPUCI__PH_REMOVE:
      case TPUCI__PH_DONE: {
        tpuci__dk_t *dk = att->dk;
        att->phase = TPUCI__PH_DONE;
        tpuci__dk_finish(att);
        tpuci__dk_maybe_closed(dk);
        return;
      }
    }
  }
}

/* The runtime interface. */

static int tpuci__dk_start(tpuci__runtime_t *rt, tpuci__attempt_t *a) {
  tpuci__dk_t *dk = (tpuci__dk_t *) rt;
  const tpuci__instance_t *inst = a->inst;
  const tpuci__plan_t *plan = a->plan;
  tpuci__dk_att_t *att;
  tpuci__ctr_spec_t spec;
  tpuci__strv_t env = {0};
  tpuci__kvlist_t labels = {0};
  size_t i;
  int rc;

  if (dk->closing)
    return tpuci__err_set(&rt->err, TPUCI_ESTATE, "the docker runtime is closing");
  if (inst->image < 0 || (size_t) inst->image >= plan->nimages)
    return tpuci__err_set(&rt->err, TPUCI_EUSAGE,
                          "%s: job '%s' has no image for the docker runtime",
                          inst->where ? inst->where : "spec", inst->name);
  rc = tpuci__dk_engine(dk);
  if (rc != 0) return rc;

  att = tpuci__calloc(1, sizeof(*att));
  att->dk = dk;
  att->a = a;
  att->nctrs = 1;
  att->ctrs = tpuci__calloc(att->nctrs, sizeof(*att->ctrs));
  for (i = 0; i < att->nctrs; i++) {
    att->ctrs[i].att = att;
    att->ctrs[i].name = tpuci__ctr_name(a->run_id, inst->name, a->number);
    tpuci__demux_init(&att->ctrs[i].demux);
  }

  tpuci__attempt_env(a, &env);
  tpuci__ctr_labels(&labels, a->run_id, inst->job, inst->name, a->number,
                    a->keep_on_failure);
  memset(&spec, 0, sizeof(spec));
  spec.image = plan->images[inst->image].ref;
  spec.argv = a->argv;
  spec.env = &env;
  spec.workdir = inst->workdir;
  spec.mounts = inst->mounts;
  spec.nmounts = inst->nmounts;
  spec.cpus = inst->cpus;
  spec.memory_bytes = inst->memory_bytes;
  spec.network = inst->network;
  spec.labels = &labels;
  att->body = tpuci__ctr_create_body(&spec);
  tpuci__strv_free(&env);
  tpuci__kv_free(&labels);

  att->next = dk->atts;
  if (dk->atts) dk->atts->prev = att;
  dk->atts = att;
  a->rt_data = att;
  for (i = 0; i < att->nctrs; i++) {
    att->requests++;
    tpuci__engine_container_create(dk->eng, att->ctrs[i].name, att->body,
                                   tpuci__dk_on_created, &att->ctrs[i]);
  }
  return 0;
}

static int tpuci__dk_signal(tpuci__runtime_t *rt, tpuci__attempt_t *a,
                            int signum) {
  tpuci__dk_att_t *att = a->rt_data;
  (void) rt;
  if (att == NULL || att->phase > TPUCI__PH_RUN) return 0;
  if (att->phase == TPUCI__PH_CREATE) {
    /* Not created yet: do not start it at all. */
    att->stop = 1;
    return 0;
  }
  tpuci__dk_kill_running(att, signum);
  return 0;
}

/* prepare: version, disk, leftovers, images. */

static void tpuci__dk_prepare_done(tpuci__dk_t *dk, int status) {
  void (*cb)(tpuci__runtime_t *, int) = dk->prepare_cb;
  dk->prepare_cb = NULL;
  free(dk->images);
  dk->images = NULL;
  if (cb) cb(&dk->rt, status);
  tpuci__dk_maybe_closed(dk);
}

/* Fails prepare with `msg` (taken). */
static void tpuci__dk_prepare_fail(tpuci__dk_t *dk, int code, char *msg) {
  tpuci__err_set(&dk->rt.err, code, "%s", msg);
  free(msg);
  tpuci__dk_prepare_done(dk, code);
}

static char *tpuci__dk_tar_hint(const char *ref) {
  const char *slash = strrchr(ref, '/');
  const char *base = slash ? slash + 1 : ref;
  size_t n = strcspn(base, ":@");
  char *b = tpuci__strndup(base, n);
  char *s = tpuci__printf("build or load it first, e.g. docker load -i %s.tar",
                          b);
  free(b);
  return s;
}

static void tpuci__dk_next_image(tpuci__dk_t *dk);

static void tpuci__dk_on_pulled(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  const tpuci__image_t *img = &dk->plan->images[dk->images[dk->image_next - 1]];
  dk->bg--;
  if (res->ok) {
    tpuci__dk_next_image(dk);
    return;
  }
  if (dk->image_present) {
    char *m = tpuci__printf("warning: could not pull image '%s' (%s); using "
                            "the local copy",
                            img->ref, res->message);
    tpuci__dk_message(dk, m);
    free(m);
    tpuci__dk_next_image(dk);
    return;
  }
  {
    char *hint = tpuci__dk_tar_hint(img->ref);
    char *m = tpuci__printf("image '%s' is not present and could not be "
                            "pulled (%s); %s",
                            img->ref, res->message, hint);
    tpuci__dk_prepare_fail(dk, res->error != 0 ? TPUCI_EENGINE : TPUCI_EIMAGE,
                           m);
    free(hint);
  }
}

static void tpuci__dk_on_image(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  const tpuci__image_t *img = &dk->plan->images[dk->images[dk->image_next - 1]];
  dk->bg--;
  if (!res->ok && res->status != 404) {
    tpuci__dk_prepare_fail(dk, TPUCI_EENGINE,
                           tpuci__printf("docker engine: inspecting image "
                                         "'%s' failed: %s",
                                         img->ref, res->message));
    return;
  }
  dk->image_present = res->ok;
  if (!res->ok && img->pull == TPUCI__PULL_NEVER) {
    char *hint = tpuci__dk_tar_hint(img->ref);
    char *m = tpuci__printf("image '%s' is not present and pull = \"never\" "
                            "(image \"%s\"%s%s); %s",
                            img->ref, img->name, img->where ? " at " : "",
                            img->where ? img->where : "", hint);
    tpuci__dk_prepare_fail(dk, TPUCI_EIMAGE, m);
    free(hint);
    return;
  }
  if (!res->ok || img->pull == TPUCI__PULL_ALWAYS) {
    char *m = tpuci__printf("pulling image '%s'", img->ref);
    tpuci__dk_message(dk, m);
    free(m);
    dk->bg++;
    tpuci__engine_image_pull(dk->eng, img->ref, tpuci__dk_on_pulled, dk);
    return;
  }
  tpuci__dk_next_image(dk);
}

static void tpuci__dk_next_image(tpuci__dk_t *dk) {
  const tpuci__image_t *img;
  if (dk->image_next >= dk->nimages) {
    tpuci__dk_prepare_done(dk, 0);
    return;
  }
  img = &dk->plan->images[dk->images[dk->image_next++]];
  dk->bg++;
  tpuci__engine_image_inspect(dk->eng, img->ref, tpuci__dk_on_image, dk);
}

static size_t tpuci__dk_count_dead(json_t *list) {
  size_t i, n = 0;
  json_t *o;
  json_array_foreach(list, i, o) {
    if (tpuci__docker_run_alive(json_object_get(o, "Labels")) == 0) n++;
  }
  return n;
}

static void tpuci__dk_on_networks(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  size_t nets = res->ok ? tpuci__dk_count_dead(res->json) : 0;
  dk->bg--;
  if (dk->leftover_ctrs > 0 || nets > 0) {
    char *m;
    if (nets == 0)
      m = tpuci__printf("warning: %zu container%s left by earlier runs; run "
                        "`tpuci gc`",
                        dk->leftover_ctrs, dk->leftover_ctrs == 1 ? "" : "s");
    else
      m = tpuci__printf("warning: %zu container%s and %zu network%s left by "
                        "earlier runs; run `tpuci gc`",
                        dk->leftover_ctrs, dk->leftover_ctrs == 1 ? "" : "s",
                        nets, nets == 1 ? "" : "s");
    tpuci__dk_message(dk, m);
    free(m);
  }
  tpuci__dk_next_image(dk);
}

static void tpuci__dk_on_containers(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  dk->bg--;
  dk->leftover_ctrs = res->ok ? tpuci__dk_count_dead(res->json) : 0;
  dk->bg++;
  tpuci__engine_network_list(dk->eng, TPUCI__LABEL_RUN, tpuci__dk_on_networks, dk);
}

static void tpuci__dk_on_info(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  const char *root = json_string_value(json_object_get(res->json, "DockerRootDir"));
  struct statvfs st;
  dk->bg--;
  if (res->ok && root != NULL && statvfs(root, &st) == 0) {
    unsigned long long avail = (unsigned long long) st.f_bavail * st.f_frsize;
    if (avail < TPUCI__DISK_FAIL_BYTES) {
      tpuci__dk_prepare_fail(
          dk, TPUCI_ENOSPACE,
          tpuci__printf("only %.0f MiB free under the engine's data root "
                        "%s; free some space (`tpuci gc`, `docker system "
                        "prune`)",
                        (double) avail / TPUCI__MIB, root));
      return;
    }
    if (avail < TPUCI__DISK_WARN_BYTES) {
      char *m = tpuci__printf("warning: only %.0f MiB free under the "
                              "engine's data root %s",
                              (double) avail / TPUCI__MIB, root);
      tpuci__dk_message(dk, m);
      free(m);
    }
  }
  dk->bg++;
  tpuci__engine_container_list(dk->eng, TPUCI__LABEL_RUN, tpuci__dk_on_containers, dk);
}

static void tpuci__dk_on_version(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  dk->bg--;
  if (res->error != 0) {
    tpuci__dk_prepare_fail(dk, TPUCI_EENGINE,
                           tpuci__printf("cannot reach the Docker Engine "
                                         "(%s); start dockerd, e.g. `dockerd "
                                         "&`, or set DOCKER_HOST",
                                         res->message));
    return;
  }
  if (!res->ok || res->json == NULL) {
    char *where = tpuci__engine_where(dk->eng);
    char *m = tpuci__printf("the Docker Engine (%s) answered GET /version "
                            "with an error: %s",
                            where, res->ok ? "not JSON" : res->message);
    free(where);
    tpuci__dk_prepare_fail(dk, TPUCI_EENGINE, m);
    return;
  }
  if (tpuci__engine_negotiate(dk->eng, res->json, &dk->rt.err) != 0) {
    tpuci__dk_prepare_done(dk, dk->rt.err.code);
    return;
  }
  dk->bg++;
  tpuci__engine_info(dk->eng, tpuci__dk_on_info, dk);
}

static int tpuci__dk_prepare(tpuci__runtime_t *rt, const tpuci__plan_t *plan,
                             void (*cb)(tpuci__runtime_t *rt, int status)) {
  tpuci__dk_t *dk = (tpuci__dk_t *) rt;
  size_t i, j;
  int rc;

  if (dk->closing || dk->prepare_cb != NULL)
    return tpuci__err_set(&rt->err, TPUCI_ESTATE,
                          "the docker runtime is busy");
  rc = tpuci__dk_engine(dk);
  if (rc != 0) return rc;
  dk->plan = plan;
  dk->prepare_cb = cb;
  dk->images = tpuci__calloc(plan->nimages + 1, sizeof(int));
  dk->nimages = 0;
  dk->image_next = 0;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    int seen = 0;
    if (!inst->selected || inst->runtime != TPUCI__RUNTIME_DOCKER) continue;
    if (inst->image < 0 || (size_t) inst->image >= plan->nimages) continue;
    for (j = 0; j < dk->nimages; j++)
      if (dk->images[j] == inst->image) seen = 1;
    if (!seen) dk->images[dk->nimages++] = inst->image;
  }
  dk->bg++;
  tpuci__engine_version(dk->eng, tpuci__dk_on_version, dk);
  return 0;
}

static void tpuci__dk_engine_closed(void *p) {
  tpuci__dk_t *dk = p;
  void (*cb)(tpuci__runtime_t *) = dk->close_cb;
  dk->eng = NULL;
  dk->close_cb = NULL;
  if (cb) cb(&dk->rt);
}

static void tpuci__dk_maybe_closed(tpuci__dk_t *dk) {
  if (!dk->closing || dk->atts != NULL || dk->bg > 0 || dk->prepare_cb != NULL)
    return;
  if (dk->eng == NULL) {
    void (*cb)(tpuci__runtime_t *) = dk->close_cb;
    dk->close_cb = NULL;
    if (cb) cb(&dk->rt);
    return;
  }
  if (!dk->eng->closing) tpuci__engine_close(dk->eng, tpuci__dk_engine_closed, dk);
}

static void tpuci__dk_close(tpuci__runtime_t *rt,
                            void (*cb)(tpuci__runtime_t *rt)) {
  tpuci__dk_t *dk = (tpuci__dk_t *) rt;
  dk->closing = 1;
  dk->close_cb = cb;
  tpuci__dk_maybe_closed(dk);
}

static void tpuci__dk_free(tpuci__runtime_t *rt) {
  tpuci__dk_t *dk = (tpuci__dk_t *) rt;
  if (dk == NULL) return;
  free(dk->run_id);
  free(dk->images);
  tpuci__err_clear(&dk->rt.err);
  free(dk);
}

int tpuci__runtime_docker_new(uv_loop_t *loop,
                              const tpuci__runtime_opts_t *opts,
                              tpuci__runtime_t **out, tpuci__err_t *err) {
  tpuci__dk_t *dk = tpuci__calloc(1, sizeof(*dk));
  (void) err;
  dk->rt.name = "docker";
  dk->rt.loop = loop;
  dk->rt.prepare = tpuci__dk_prepare;
  dk->rt.start = tpuci__dk_start;
  dk->rt.signal = tpuci__dk_signal;
  dk->rt.close = tpuci__dk_close;
  dk->rt.free = tpuci__dk_free;
  dk->loop = loop;
  dk->run_id = tpuci__strdup(opts && opts->run_id ? opts->run_id : "");
  dk->keep_failed = opts ? opts->keep_failed : 0;
  *out = &dk->rt;
  return 0;
}
