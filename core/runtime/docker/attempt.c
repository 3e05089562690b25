/* The docker runtime driver (runtime.h): one attempt is a set of
 * containers driven through the Engine API on the scheduler's loop: one
 * container, or for a multi-host topology a gang of one container per
 * emulated host on a private network of the attempt's own.
 *
 * An attempt moves through phases; each phase issues its requests and the
 * next phase begins when every request of the attempt has completed
 * (att->requests == 0), so a callback never finds its attempt freed:
 *
 *   NETWORK POST /networks/create (gangs only: internal, labelled)
 *   CREATE  POST /containers/create for each container (an answer lost
 *           on the way: GET /containers/{name}/json finds what the
 *           engine made, so that REMOVE removes it)
 *   RUN     POST attach for each; once all are attached, POST start,
 *           then POST wait for each; signals become POST kill. When a
 *           host of a gang fails on its own, the others get SIGTERM and,
 *           after the grace, SIGKILL. The output comes through the attach
 *           stream, which (unlike a followed logs stream, moby#43860)
 *           ends only after the container's last byte; if it broke, GET
 *           logs after the exit brings what it missed.
 *   INSPECT GET /containers/{id}/json for those that exited non-zero
 *           (State.OOMKilled, State.ExitCode); for one killed by a signal
 *           nobody here sent, over a new connection: an engine that no
 *           longer accepts any is stopping, and the attempt is infra
 *   REMOVE  DELETE ?force=1&v=1 for each created container, unless kept
 *   UNNET   DELETE /networks/{id} (gangs), unless kept
 *   then    tpuci__attempt_done(), and the attempt's timer is closed
 *
 * An engine failure at any step marks the attempt infra, kills what runs
 * and still goes through REMOVE and UNNET, so nothing is left behind.
 * The outcome of a gang is decided by tpuci__gang_verdict (gang.h): the
 * first host that failed on its own names the cause.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/engine/container.h"
#include "runtime/engine/gang.h"
#include "runtime/docker/driver.h"

void tpuci__dk_message(tpuci__dk_t *dk, const char *msg) {
  if (dk->rt.on_message != NULL) dk->rt.on_message(&dk->rt, msg);
}

int tpuci__dk_engine(tpuci__dk_t *dk) {
  int rc;
  if (dk->eng != NULL) return 0;
  rc = tpuci__engine_new(dk->loop, &dk->eng, &dk->rt.err);
  if (rc != 0) dk->rt.err.code = TPUCI_EENGINE;
  return rc != 0 ? TPUCI_EENGINE : 0;
}

void tpuci__dk_infra(tpuci__dk_att_t *att, const char *step,
                            const tpuci__dk_ctr_t *c, const char *msg) {
  const char *hint = att->dk->eng->podman ? tpuci__podman_hint(msg) : NULL;
  if (att->infra != NULL) return;
  if (c != NULL)
    att->infra = tpuci__printf("docker engine: %s container %s failed: %s%s%s",
                               step, c->name, msg, hint ? "; " : "",
                               hint ? hint : "");
  else
    att->infra = tpuci__printf("docker engine: %s failed: %s", step, msg);
}

/* A name with a random suffix, for a name some other object has taken
 * (run ids are unique per state folder, the engine may be shared). */
char *tpuci__dk_suffixed(const char *name) {
  unsigned tag = (unsigned) ((uint64_t) uv_hrtime() ^ ((uint64_t) getpid() << 16));
  return tpuci__printf("%s-%06x", name, tag & 0xffffffu);
}


/* Signals. */

static void tpuci__dk_on_killed(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  att->requests--;
  /* 404: gone already; 409 (podman: 500): not running any more. All
   * are fine. */
  if (!res->ok && res->status != 404 && res->status != 409 &&
      !tpuci__podman_not_running(res->status, res->message) &&
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
  if (signum > 0 && signum < 64) c->signals |= 1ull << signum;
  att->requests++;
  tpuci__engine_container_kill(att->dk->eng, c->id,
                               tpuci__docker_signame(signum, buf, sizeof(buf)),
                               tpuci__dk_on_killed, c);
}

/* Signals every container that runs (or will: then once it started),
 * except `except`. */
static void tpuci__dk_kill_others(tpuci__dk_att_t *att,
                                  const tpuci__dk_ctr_t *except, int signum) {
  size_t i;
  for (i = 0; i < att->nctrs; i++) {
    tpuci__dk_ctr_t *c = &att->ctrs[i];
    if (c == except || c->id == NULL || c->exited) continue;
    if (c->started) tpuci__dk_kill(c, signum);
    else c->pending_signal = signum;
  }
}

static void tpuci__dk_kill_running(tpuci__dk_att_t *att, int signum) {
  tpuci__dk_kill_others(att, NULL, signum);
}

static void tpuci__dk_grace_cb(uv_timer_t *t) {
  tpuci__dk_att_t *att = t->data;
  if (att->phase != TPUCI__PH_RUN) return;
  tpuci__dk_kill_running(att, SIGKILL);
}

/* One host of a gang failed on its own: the gang ends together. */
static void tpuci__dk_gang_stop(tpuci__dk_att_t *att, const tpuci__dk_ctr_t *c) {
  if (!att->gang || att->gang_stop) return;
  att->gang_stop = 1;
  tpuci__dk_kill_others(att, c, SIGTERM);
  uv_timer_start(&att->timer, tpuci__dk_grace_cb, att->grace_ms, 0);
}

/* RUN: logs and wait. */

static void tpuci__dk_on_refetched(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  att->requests--;
  tpuci__ctrout_flush(&c->out);
  if (!res->ok && res->error != UV_ECANCELED) {
    char *m = tpuci__printf("the output of container %s may be incomplete: "
                            "its stream broke and reading its logs failed: %s",
                            c->name, res->message);
    tpuci__attempt_message(att->a, m);
    free(m);
  }
  tpuci__dk_step(att);
}

/* Once a container whose attach stream broke has exited: its logs, past
 * what the stream brought. */
static void tpuci__dk_maybe_refetch(tpuci__dk_ctr_t *c) {
  tpuci__dk_att_t *att = c->att;
  if (!c->attach_broken || !c->exited || c->attach != NULL || c->refetched)
    return;
  c->refetched = 1;
  tpuci__ctrout_rewind(&c->out);
  att->requests++;
  tpuci__engine_container_logs(att->dk->eng, c->id, tpuci__ctrout_chunk,
                               &c->out, tpuci__dk_on_refetched, c);
}

static void tpuci__dk_launch(tpuci__dk_att_t *att);

static void tpuci__dk_on_attached(void *p) {
  tpuci__dk_ctr_t *c = p;
  c->attached = 1;
  c->att->to_attach--;
  tpuci__dk_launch(c->att);
}

static void tpuci__dk_on_attach_end(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  att->requests--;
  c->attach = NULL;
  tpuci__ctrout_flush(&c->out);
  if (!c->attached) {
    /* Never attached: the container still runs, its logs come after. */
    if (res->error != UV_ECANCELED) c->attach_broken = 1;
    att->to_attach--;
    tpuci__dk_launch(att);
  } else if (!res->ok && res->error != UV_ECANCELED) {
    c->attach_broken = 1;
  }
  tpuci__dk_maybe_refetch(c);
  tpuci__dk_step(att);
}

/* Cancels the attach streams still open (containers that will not run). */
static void tpuci__dk_detach_all(tpuci__dk_att_t *att) {
  size_t i;
  for (i = 0; i < att->nctrs; i++)
    if (att->ctrs[i].attach != NULL)
      tpuci__engine_cancel(att->dk->eng, att->ctrs[i].attach);
}

/* The stats stream (containers with a memory limit). */

static void tpuci__dk_on_stats_end(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  (void) res;
  c->att->requests--;
  c->stats = NULL;
  tpuci__dk_step(c->att);
}

static void tpuci__dk_stats_stop(tpuci__dk_ctr_t *c) {
  if (c->stats == NULL || c->stats_cancelled) return;
  c->stats_cancelled = 1;
  tpuci__engine_cancel(c->att->dk->eng, c->stats);
}

static void tpuci__dk_on_wait(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  att->requests--;
  tpuci__dk_stats_stop(c);
  if (res->ok) {
    json_t *code = json_object_get(res->json, "StatusCode");
    c->exited = 1;
    c->order = ++att->exits;
    c->stopped = c->signals != 0;
    c->status_code = json_is_integer(code) ? (long) json_integer_value(code) : -1;
    if (c->status_code != 0 && !c->stopped) tpuci__dk_gang_stop(att, c);
  } else {
    tpuci__dk_infra(att, "waiting for", c, res->message);
    /* Whatever happened, make sure the output stream ends, and the
     * others of a gang do not run on alone. */
    if (res->error == 0) tpuci__dk_kill_running(att, SIGKILL);
  }
  tpuci__dk_maybe_refetch(c);
  tpuci__dk_step(att);
}

static void tpuci__dk_on_started(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  tpuci__engine_t *eng = att->dk->eng;
  att->requests--;
  if (!res->ok) {
    tpuci__dk_infra(att, "starting", c, res->message);
    /* It will not run: nothing will end its stream. The others of a
     * gang must not run on alone. */
    if (c->attach != NULL) tpuci__engine_cancel(eng, c->attach);
    tpuci__dk_kill_running(att, SIGKILL);
    tpuci__dk_step(att);
    return;
  }
  c->started = 1;
  att->requests++;
  tpuci__engine_container_wait(eng, c->id, tpuci__dk_on_wait, c);
  if (att->a->inst->memory_bytes > 0 && !TPUCI__DK_NO_OOM(eng)) {
    att->requests++;
    c->stats = tpuci__engine_container_stats(eng, c->id, tpuci__memstat_chunk,
                                             &c->mem, tpuci__dk_on_stats_end, c);
  }
  if (att->infra != NULL) tpuci__dk_kill(c, SIGKILL);
  else if (c->pending_signal) tpuci__dk_kill(c, c->pending_signal);
  c->pending_signal = 0;
  tpuci__dk_step(att);
}

/* Starts the containers once every attach answered; an attempt stopped
 * or broken meanwhile starts nothing. */
static void tpuci__dk_launch(tpuci__dk_att_t *att) {
  size_t i;
  if (att->to_attach > 0 || att->launched) return;
  att->launched = 1;
  if (att->infra != NULL || att->stop) {
    tpuci__dk_detach_all(att);
    return;
  }
  for (i = 0; i < att->nctrs; i++) {
    att->requests++;
    tpuci__engine_container_start(att->dk->eng, att->ctrs[i].id,
                                  tpuci__dk_on_started, &att->ctrs[i]);
  }
}

/* NETWORK and CREATE. */

void tpuci__dk_on_net_created(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_att_t *att = p;
  att->requests--;
  if (res->status == 409 && att->net_tries < 3 && !att->stop) {
    char *name = tpuci__dk_suffixed(att->net_name);
    free(att->net_name);
    att->net_name = name;
    att->net_tries++;
    json_object_set_new(att->net_body, "Name", json_string(name));
    att->requests++;
    tpuci__engine_network_create(att->dk->eng, att->net_body,
                                 tpuci__dk_on_net_created, att);
    return;
  }
  if (res->ok) {
    const char *id = json_string_value(json_object_get(res->json, "Id"));
    if (id != NULL) att->net_id = tpuci__strdup(id);
    else tpuci__dk_infra(att, "creating network", NULL, "the answer has no Id");
  } else {
    char *step = tpuci__printf("creating network %s", att->net_name);
    tpuci__dk_infra(att, step, NULL, res->message);
    free(step);
  }
  tpuci__dk_step(att);
}

void tpuci__dk_on_created(void *p, const tpuci__engine_res_t *res);

/* Who has the name: this attempt's own container (the same labels) is
 * taken as created; anyone else's leaves it, for a suffixed name. */
static void tpuci__dk_on_name_taken(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  const char *id = json_string_value(json_object_get(res->json, "Id"));
  char *name;
  att->requests--;
  if (res->ok && id != NULL && tpuci__ctr_is_ours(res->json, c->body)) {
    c->id = tpuci__strdup(id);
    tpuci__dk_step(att);
    return;
  }
  name = tpuci__dk_suffixed(c->name);
  free(c->name);
  c->name = name;
  c->create_tries++;
  att->requests++;
  tpuci__engine_container_create(att->dk->eng, c->name, c->body,
                                 tpuci__dk_on_created, c);
}

/* A container whose create answer was lost, looked up by its name. */
static void tpuci__dk_on_looked_up(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  const char *id = json_string_value(json_object_get(res->json, "Id"));
  att->requests--;
  if (res->ok && id != NULL) {
    c->id = tpuci__strdup(id);
  } else if (tpuci__dk_no_answer(res)) {
    /* Removed by its name once the engine answers again. */
    tpuci__dk_orphan(att->dk, 0, c->name, c->name);
  } else if (res->status != 404) {
    char *m = tpuci__printf("container %s may have been created without "
                            "an answer and could not be looked up (%s); "
                            "run `tpuci gc` to clean up",
                            c->name, res->message);
    tpuci__attempt_message(att->a, m);
    free(m);
  }
  tpuci__dk_step(att);
}

void tpuci__dk_on_created(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  att->requests--;
  if (res->status == 409 && c->create_tries < 3 && !att->stop) {
    /* The name is taken: by this very request, sent again by curl after
     * its first answer was lost, or by another tpuci with the same run
     * id (run ids are unique per state folder, the engine is shared). */
    att->requests++;
    tpuci__engine_container_inspect(att->dk->eng, c->name,
                                    tpuci__dk_on_name_taken, c);
    return;
  }
  if (res->ok) {
    const char *id = json_string_value(json_object_get(res->json, "Id"));
    if (id != NULL) c->id = tpuci__strdup(id);
    else tpuci__dk_infra(att, "creating", c, "the answer has no Id");
  } else {
    tpuci__dk_infra(att, "creating", c, res->message);
    if (tpuci__dk_no_answer(res) && !tpuci__dk_unreached(res)) {
      /* No answer: the engine may have made it all the same. (Not when
       * the request never reached an engine.) */
      att->requests++;
      tpuci__engine_container_inspect(att->dk->eng, c->name,
                                      tpuci__dk_on_looked_up, c);
    }
  }
  tpuci__dk_step(att);
}

/* Points a gang host's create body at the attempt's network (whose name
 * is final only once it was created). */
static void tpuci__dk_body_network(json_t *body, const char *net,
                                   const char *alias) {
  json_t *hc = json_object_get(body, "HostConfig");
  json_t *nc = json_object();
  json_t *eps = json_object();
  json_object_set_new(hc, "NetworkMode", json_string(net));
  json_object_set_new(eps, net, json_pack("{s:[s]}", "Aliases", alias));
  json_object_set_new(nc, "EndpointsConfig", eps);
  json_object_set_new(body, "NetworkingConfig", nc);
}

/* INSPECT. */

/* Whether the container ended by a signal (exit 128+n) that tpuci did
 * not send it. */
static int tpuci__dk_unasked_signal(const tpuci__dk_ctr_t *c) {
  return c->exited && c->status_code > 128 && c->status_code < 160 &&
         c->signals == 0 && !c->stopped;
}

static void tpuci__dk_on_inspected(void *p, const tpuci__engine_res_t *res);

/* Whether the container ended by a SIGKILL tpuci did not send, under the
 * job's memory limit, with no OOM kill reported (yet), on an engine that
 * reports them. */
static int tpuci__dk_unreported_kill(const tpuci__dk_ctr_t *c) {
  const tpuci__dk_att_t *att = c->att;
  return !c->oom && c->status_code == 137 && att->a->inst->memory_bytes > 0 &&
         c->signals == 0 && !c->stopped && !TPUCI__DK_NO_OOM(att->dk->eng);
}

/* Asks again about the containers marked for it. */
static void tpuci__dk_reinspect_cb(uv_timer_t *t) {
  tpuci__dk_att_t *att = t->data;
  size_t i;
  for (i = 0; i < att->nctrs; i++) {
    tpuci__dk_ctr_t *c = &att->ctrs[i];
    if (!c->reinspect) continue;
    c->reinspect = 0;
    /* The request counted while waiting becomes this inspection's. */
    tpuci__engine_container_inspect(att->dk->eng, c->id, tpuci__dk_on_inspected, c);
  }
}

static void tpuci__dk_on_inspected(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  att->requests--;
  if (!res->ok && res->error != 0 && res->error != UV_ECANCELED &&
      tpuci__dk_unasked_signal(c) && att->infra == NULL) {
    /* Killed by a signal nobody here sent, and the engine takes no new
     * connection: it is stopping (a graceful stop sends SIGTERM to every
     * container). Not the test's failure. */
    att->infra = tpuci__printf("docker engine: it stopped while container "
                               "%s ran (exit %ld, then %s)",
                               c->name, c->status_code, res->message);
  }
  if (res->ok) {
    json_t *state = json_object_get(res->json, "State");
    json_t *code = json_object_get(state, "ExitCode");
    c->oom = json_is_true(json_object_get(state, "OOMKilled"));
    if (json_is_integer(code)) c->status_code = (long) json_integer_value(code);
    /* A SIGKILL nobody here sent, under a memory limit: the engine may
     * record the OOM kill a moment after the exit (seen under load).
     * Ask again a few times; then the stats it gave while the container
     * ran say whether the limit was reached. */
    if (tpuci__dk_unreported_kill(c) && c->inspect_tries < 5) {
      c->inspect_tries++;
      c->reinspect = 1;
      att->requests++;
      uv_timer_start(&att->timer, tpuci__dk_reinspect_cb, 200, 0);
      return;
    }
    if (tpuci__dk_unreported_kill(c)) {
      c->oom = tpuci__memstat_reached(&c->mem, att->a->inst->memory_bytes);
      c->oom_unreported = c->oom ? TPUCI__OOM_STATS : TPUCI__OOM_PROBABLY;
    }
  }
  /* Without the inspection the exit status from wait still stands. */
  tpuci__dk_step(att);
}

/* REMOVE and UNNET. */

static void tpuci__dk_on_removed(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = c->att;
  att->requests--;
  if (res->ok || res->status == 404) {
    c->removed = 1;
  } else if (tpuci__dk_no_answer(res)) {
    /* The engine stopped: removed when it answers again. */
    tpuci__dk_orphan(att->dk, 0, c->id, c->name);
  } else {
    char *m = tpuci__printf("could not remove container %s: %s; run `tpuci "
                            "gc` to clean up",
                            c->name, res->message);
    tpuci__attempt_message(att->a, m);
    free(m);
  }
  tpuci__dk_step(att);
}

static void tpuci__dk_net_remove(tpuci__dk_att_t *att);

static void tpuci__dk_net_retry_cb(uv_timer_t *t) {
  tpuci__dk_att_t *att = t->data;
  att->requests--; /* the pending retry */
  tpuci__dk_net_remove(att);
}

static void tpuci__dk_on_net_removed(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_att_t *att = p;
  att->requests--;
  if (!res->ok && res->status != 404) {
    if (res->error == 0 && res->status != 0 && att->net_rm_tries < TPUCI__NET_RM_TRIES) {
      uint64_t delay = (uint64_t) TPUCI__NET_RM_DELAY_MS << (att->net_rm_tries - 1);
      if (att->net_rm_tries > 5 || delay > TPUCI__NET_RM_DELAY_MAX_MS)
        delay = TPUCI__NET_RM_DELAY_MAX_MS;
      att->requests++;
      uv_timer_start(&att->timer, tpuci__dk_net_retry_cb, delay, 0);
      return;
    } else if (tpuci__dk_no_answer(res)) {
      tpuci__dk_orphan(att->dk, 1, att->net_id, att->net_name);
    } else {
      char *m = tpuci__printf("could not remove network %s: %s; run `tpuci "
                              "gc` to clean up",
                              att->net_name, res->message);
      tpuci__attempt_message(att->a, m);
      free(m);
    }
  }
  tpuci__dk_step(att);
}

static void tpuci__dk_net_remove(tpuci__dk_att_t *att) {
  att->net_rm_tries++;
  att->requests++;
  tpuci__engine_network_remove(att->dk->eng, att->net_id,
                               tpuci__dk_on_net_removed, att);
}

/* Whether the attempt failed on its own: a non-zero exit or an OOM kill,
 * with no signal from the scheduler and no engine failure. Only those
 * are kept with --keep-failed; timed out and cancelled ones never are,
 * so an interrupted run leaves nothing behind. (The other hosts of a
 * gang that tpuci stopped because one failed do not count as signals.) */
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
  att->kept = 1;
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
  if (att->net_id != NULL) {
    char *m = tpuci__printf("kept network %s (the gang's hosts are on it); "
                            "`tpuci gc` removes it",
                            att->net_name);
    tpuci__attempt_message(att->a, m);
    free(m);
  }
}

void tpuci__dk_maybe_closed(tpuci__dk_t *dk);

static void tpuci__dk_att_closed(uv_handle_t *h) {
  tpuci__dk_att_t *att = h->data;
  tpuci__dk_t *dk = att->dk;
  free(att);
  dk->handles--;
  tpuci__dk_maybe_closed(dk);
}

/* Frees what the attempt holds except itself and its timer. */
void tpuci__dk_att_release(tpuci__dk_att_t *att) {
  size_t i;
  for (i = 0; i < att->nctrs; i++) {
    tpuci__dk_ctr_t *c = &att->ctrs[i];
    free(c->name);
    free(c->id);
    free(c->host);
    json_decref(c->body);
    tpuci__ctrout_free(&c->out);
    tpuci__memstat_free(&c->mem);
  }
  free(att->ctrs);
  att->ctrs = NULL;
  att->nctrs = 0;
  free(att->infra);
  free(att->net_name);
  free(att->net_id);
  json_decref(att->net_body);
  att->infra = att->net_name = att->net_id = NULL;
  att->net_body = NULL;
}

static void tpuci__dk_finish(tpuci__dk_att_t *att) {
  tpuci__dk_t *dk = att->dk;
  tpuci__attempt_t *a = att->a;
  tpuci__gang_verdict_t v;
  tpuci__exit_t ex;
  size_t i;

  memset(&ex, 0, sizeof(ex));
  memset(&v, 0, sizeof(v));
  ex.exit_code = -1;
  if (att->infra != NULL) {
    ex.infra = 1;
    ex.cause = att->infra;
  } else if (att->stop) {
    ex.cause = att->gang ? "stopped before the containers started"
                         : "stopped before the container started";
  } else {
    tpuci__gang_host_t *h = tpuci__calloc(att->nctrs, sizeof(*h));
    for (i = 0; i < att->nctrs; i++) {
      const tpuci__dk_ctr_t *c = &att->ctrs[i];
      h[i].name = c->host;
      h[i].exited = c->exited;
      h[i].status = c->status_code;
      h[i].oom = c->oom;
      h[i].oom_unreported = c->oom_unreported;
      h[i].signals = c->signals;
      h[i].stopped = c->stopped;
      h[i].order = c->order;
    }
    tpuci__gang_verdict(h, att->nctrs, a->inst->memory_bytes, &v);
    free(h);
    if (v.exit_code == 137 && !v.oom && a->inst->memory_bytes > 0 &&
        TPUCI__DK_NO_OOM(dk->eng)) {
      char *cause = tpuci__podman_oom_cause(v.cause, a->inst->memory_bytes,
                                            dk->eng->server_version);
      free(v.cause);
      v.cause = cause;
    }
    ex.exit_code = v.exit_code;
    ex.term_signal = v.term_signal;
    ex.oom = v.oom;
    ex.cause = v.cause;
  }
  if (att->prev) att->prev->next = att->next;
  else dk->atts = att->next;
  if (att->next) att->next->prev = att->prev;
  a->rt_data = NULL;
  /* Counted before attempt_done(): the scheduler may close the runtime
   * from there, and closing must wait for this timer. */
  dk->handles++;
  tpuci__attempt_done(a, &ex);
  tpuci__gang_verdict_free(&v);
  tpuci__dk_att_release(att);
  uv_close((uv_handle_t *) &att->timer, tpuci__dk_att_closed);
}

/* Moves the attempt on once nothing of it is in flight. */
void tpuci__dk_step(tpuci__dk_att_t *att) {
  tpuci__engine_t *eng = att->dk->eng;
  size_t i;

  while (att->requests == 0) {
    switch (att->phase) {
      case TPUCI__PH_NETWORK:
        json_decref(att->net_body);
        att->net_body = NULL;
        att->phase = TPUCI__PH_CREATE;
        if (att->infra != NULL || att->stop) {
          att->phase = TPUCI__PH_INSPECT;
          break;
        }
        for (i = 0; i < att->nctrs; i++) {
          tpuci__dk_ctr_t *c = &att->ctrs[i];
          tpuci__dk_body_network(c->body, att->net_name, c->host);
          att->requests++;
          tpuci__engine_container_create(eng, c->name, c->body,
                                         tpuci__dk_on_created, c);
        }
        break;
      case TPUCI__PH_CREATE:
        for (i = 0; i < att->nctrs; i++) {
          json_decref(att->ctrs[i].body);
          att->ctrs[i].body = NULL;
        }
        att->phase = TPUCI__PH_RUN;
        if (att->infra != NULL || att->stop) {
          /* Straight to removing whatever was created. */
          att->phase = TPUCI__PH_INSPECT;
          break;
        }
        att->to_attach = (int) att->nctrs;
        for (i = 0; i < att->nctrs; i++) {
          tpuci__dk_ctr_t *c = &att->ctrs[i];
          att->requests++;
          c->attach = tpuci__engine_container_attach(
              eng, c->id, tpuci__dk_on_attached, tpuci__ctrout_chunk, &c->out,
              tpuci__dk_on_attach_end, c);
        }
        break;
      case TPUCI__PH_RUN:
        uv_timer_stop(&att->timer);
        att->phase = TPUCI__PH_INSPECT;
        if (att->infra != NULL) break;
        for (i = 0; i < att->nctrs; i++) {
          tpuci__dk_ctr_t *c = &att->ctrs[i];
          tpuci__http_req_t *r;
          if (!c->exited || c->status_code == 0) continue;
          att->requests++;
          r = tpuci__engine_container_inspect(eng, c->id, tpuci__dk_on_inspected, c);
          if (tpuci__dk_unasked_signal(c)) tpuci__http_set_fresh(r);
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
        att->phase = TPUCI__PH_UNNET;
        if (att->net_id != NULL && !att->kept) tpuci__dk_net_remove(att);
        break;
      case TPUCI__PH_UNNET:
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

/* The runtime's signal(): to the containers that run, or, before they
 * started, none of them starts. */
int tpuci__dk_signal(tpuci__runtime_t *rt, tpuci__attempt_t *a,
                            int signum) {
  tpuci__dk_att_t *att = a->rt_data;
  (void) rt;
  if (att == NULL || att->phase > TPUCI__PH_RUN) return 0;
  if (signum > 0 && signum < 64) att->signals |= 1ull << signum;
  if (att->phase < TPUCI__PH_RUN ||
      (att->phase == TPUCI__PH_RUN && !att->launched)) {
    /* Not started yet: do not start it at all. */
    att->stop = 1;
    if (att->phase == TPUCI__PH_RUN) tpuci__dk_detach_all(att);
    return 0;
  }
  tpuci__dk_kill_running(att, signum);
  return 0;
}
