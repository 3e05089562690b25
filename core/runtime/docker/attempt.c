/* The docker runtime driver's attempt (runtime.h): one container, or
 * for a multi-host topology a gang of one container per emulated host on
 * a private network of the attempt's own, driven through the Engine API.
 * The phases, the gang's stop, the verdict and the cleanup are the
 * attempt core's (runtime/unit/unit.h); this file is its operations:
 *
 *   net_create POST /networks/create (gangs only: internal, labelled)
 *   create     POST /containers/create (an answer lost on the way:
 *              GET /containers/{name}/json finds what the engine made,
 *              so that remove removes it)
 *   output     POST attach; the output comes through the attach stream,
 *              which (unlike a followed logs stream, moby#43860) ends
 *              only after the container's last byte; if it broke, GET
 *              logs after the exit brings what it missed. A gang's hosts
 *              run the wait step (engine/gate.h) before the command: its
 *              lines are taken out of the output and tell the core when
 *              each host is up
 *   start      POST start
 *   watch      POST wait (and, under a memory limit, the stats stream)
 *   stop       POST kill
 *   classify   GET /containers/{id}/json (State.OOMKilled, ExitCode);
 *              for one killed by a signal nobody here sent, over a new
 *              connection: an engine that no longer accepts any is
 *              stopping, and the attempt is infra
 *   go, end    (go.c) once every host of a gang resolves every name, and
 *              once every host's command ended: a container of the job's
 *              image (sleep) on the gang's network named the go (the
 *              hosts' wait steps start their commands) or the end (the
 *              hosts, idle since their commands ended, exit)
 *   remove     DELETE ?force=1&v=1 (and the go's and the end's)
 *   net_remove DELETE /networks/{id} (gangs), retried
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/engine/container.h"
#include "runtime/engine/gang.h"
#include "runtime/engine/gate.h"
#include "runtime/docker/driver.h"

/* The engine host's machine (driver.h): its table, and its one setter. */
static const char *const tpuci__dk_names[] = {"NEW",      "ATTACHING", "ATTACHED",
                                              "STREAMED", "BROKEN",    "REFETCH",
                                              "INSPECT",  "REINSPECT", "REMOVED"};
#define TPUCI__DK_GOES TPUCI__MOVE(TPUCI__DK_REMOVED)
static const unsigned tpuci__dk_moves[] = {
    [TPUCI__DK_NEW] = TPUCI__MOVE(TPUCI__DK_ATTACHING) | TPUCI__DK_GOES,
    [TPUCI__DK_ATTACHING] = TPUCI__MOVE(TPUCI__DK_ATTACHED) | TPUCI__MOVE(TPUCI__DK_STREAMED) |
                            TPUCI__MOVE(TPUCI__DK_BROKEN),
    [TPUCI__DK_ATTACHED] = TPUCI__MOVE(TPUCI__DK_STREAMED) | TPUCI__MOVE(TPUCI__DK_BROKEN),
    [TPUCI__DK_STREAMED] = TPUCI__MOVE(TPUCI__DK_INSPECT) | TPUCI__DK_GOES,
    [TPUCI__DK_BROKEN] = TPUCI__MOVE(TPUCI__DK_REFETCH) | TPUCI__DK_GOES,
    [TPUCI__DK_REFETCH] = TPUCI__MOVE(TPUCI__DK_INSPECT) | TPUCI__DK_GOES,
    [TPUCI__DK_INSPECT] = TPUCI__MOVE(TPUCI__DK_REINSPECT) | TPUCI__DK_GOES,
    [TPUCI__DK_REINSPECT] = TPUCI__MOVE(TPUCI__DK_INSPECT),
    [TPUCI__DK_REMOVED] = 0,
};

static const tpuci__unit_machine_t tpuci__dk_machine = {
    .what = "container", .names = tpuci__dk_names, .moves = tpuci__dk_moves};

static void tpuci__dk_set(tpuci__dk_ctr_t *c, tpuci__dk_state_t to) {
  tpuci__unit_move(c->u.att, &tpuci__dk_machine, c->u.name, (int) c->state, (int) to);
  c->state = to;
}

/* stop: signals. */

static void tpuci__dk_on_killed(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(&c->u);
  tpuci__unit_req_end(&att->ua);
  /* 404: gone already; 409 (podman: 500): not running any more. All
   * are fine. */
  if (!res->ok && res->status != 404 && res->status != 409 &&
      !tpuci__podman_not_running(res->status, res->message) && res->error != UV_ECANCELED) {
    tpuci__unit_tell(&att->ua, "could not signal container %s: %s", c->u.name, res->message);
  }
  tpuci__unit_step(&att->ua);
}

static void tpuci__dk_op_stop(tpuci__unit_t *u, int signum) {
  tpuci__dk_ctr_t *c = (tpuci__dk_ctr_t *) u;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(u);
  char buf[16];
  tpuci__unit_req_begin(&att->ua);
  tpuci__engine_container_kill(att->dk->e.eng, c->id,
                               tpuci__docker_signame(signum, buf, sizeof(buf)), tpuci__dk_on_killed,
                               c);
}

/* output: the attach stream, and the logs after a broken one. */

static void tpuci__dk_on_refetched(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(&c->u);
  tpuci__unit_req_end(&att->ua);
  tpuci__ctrout_read_end(&c->out, "container", c->u.name,
                         "its stream broke and reading its logs failed", res);
  tpuci__unit_step(&att->ua);
}

/* Once a container whose attach stream broke has exited: its logs, past
 * what the stream brought. */
static void tpuci__dk_maybe_refetch(tpuci__dk_ctr_t *c) {
  tpuci__dk_att_t *att = TPUCI__DK_ATT(&c->u);
  if (c->state != TPUCI__DK_BROKEN || !TPUCI__U_ENDED(&c->u)) return;
  tpuci__dk_set(c, TPUCI__DK_REFETCH);
  tpuci__ctrout_rewind(&c->out);
  tpuci__unit_req_begin(&att->ua);
  tpuci__engine_container_logs(att->dk->e.eng, c->id, tpuci__ctrout_chunk, &c->out,
                               tpuci__dk_on_refetched, c);
}

static void tpuci__dk_on_attached(void *p) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_set(c, TPUCI__DK_ATTACHED);
  tpuci__unit_ready(&c->u);
}

static void tpuci__dk_on_attach_end(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(&c->u);
  tpuci__unit_req_end(&att->ua);
  c->attach = NULL;
  tpuci__ctrout_flush(&c->out);
  if (c->state == TPUCI__DK_ATTACHING) {
    /* Never attached: the container still runs, its logs come after. */
    tpuci__dk_set(c, res->error != UV_ECANCELED ? TPUCI__DK_BROKEN : TPUCI__DK_STREAMED);
    tpuci__unit_ready(&c->u);
  } else {
    tpuci__dk_set(c,
                  !res->ok && res->error != UV_ECANCELED ? TPUCI__DK_BROKEN : TPUCI__DK_STREAMED);
  }
  tpuci__dk_maybe_refetch(c);
  tpuci__unit_step(&att->ua);
}

static void tpuci__dk_op_output(tpuci__unit_t *u) {
  tpuci__dk_ctr_t *c = (tpuci__dk_ctr_t *) u;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(u);
  tpuci__engine_attach_t streams = {
      .attached = tpuci__dk_on_attached, .chunk = tpuci__ctrout_chunk, .chunk_data = &c->out};
  tpuci__dk_set(c, TPUCI__DK_ATTACHING);
  tpuci__unit_req_begin(&att->ua);
  c->attach =
      tpuci__engine_container_attach(att->dk->e.eng, c->id, &streams, tpuci__dk_on_attach_end, c);
}

/* What a gang host's wait step says (engine/gate.h). */
static void tpuci__dk_on_ctl(void *p, int stream, const char *line, size_t len) {
  tpuci__dk_ctr_t *c = p;
  char *waiting = NULL;
  long status = 0;
  tpuci__gate_state_t st;
  (void) stream;
  st = tpuci__gate_line(c->u.att->a, c->u.host, line, len, &waiting, &status);
  if (st == TPUCI__GATE_DONE) tpuci__unit_done(&c->u, status);
  else tpuci__unit_gate(&c->u, st, waiting);
  free(waiting);
}

/* halt: the attach stream of a container that will not run. */
static void tpuci__dk_op_halt(tpuci__unit_t *u) {
  tpuci__dk_ctr_t *c = (tpuci__dk_ctr_t *) u;
  if (c->attach != NULL) tpuci__engine_cancel(TPUCI__DK_ATT(u)->dk->e.eng, c->attach);
}

/* watch: wait, and the stats stream (containers with a memory limit). */

static void tpuci__dk_on_stats_end(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(&c->u);
  (void) res;
  tpuci__unit_req_end(&att->ua);
  c->stats = NULL;
  tpuci__unit_step(&att->ua);
}

/* Cancels it (again: a cancelled request stays so, http.h). */
static void tpuci__dk_stats_stop(tpuci__dk_ctr_t *c) {
  if (c->stats == NULL) return;
  tpuci__engine_cancel(TPUCI__DK_ATT(&c->u)->dk->e.eng, c->stats);
}

static void tpuci__dk_on_wait(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(&c->u);
  tpuci__unit_req_end(&att->ua);
  tpuci__dk_stats_stop(c);
  if (res->ok) {
    json_t *code = json_object_get(res->json, "StatusCode");
    tpuci__unit_exited(&c->u, json_is_integer(code) ? (long) json_integer_value(code) : -1);
  } else {
    tpuci__dk_infra(att, "waiting for", c, res->message);
    /* Whatever happened, make sure the output stream ends, and the
     * others of a gang do not run on alone. */
    if (res->error == 0) tpuci__unit_stop_all(&att->ua, SIGKILL);
  }
  tpuci__dk_maybe_refetch(c);
  tpuci__unit_step(&att->ua);
}

static void tpuci__dk_op_watch(tpuci__unit_t *u) {
  tpuci__dk_ctr_t *c = (tpuci__dk_ctr_t *) u;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(u);
  tpuci__engine_t *eng = att->dk->e.eng;
  tpuci__unit_req_begin(&att->ua);
  tpuci__engine_container_wait(eng, c->id, tpuci__dk_on_wait, c);
  if (att->ua.a->inst->memory_bytes > 0 && !TPUCI__DK_NO_OOM(eng)) {
    tpuci__unit_req_begin(&att->ua);
    c->stats = tpuci__engine_container_stats(eng, c->id, tpuci__memstat_chunk, &c->mem,
                                             tpuci__dk_on_stats_end, c);
  }
}

/* start */

static void tpuci__dk_on_started(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(&c->u);
  tpuci__unit_req_end(&att->ua);
  if (!res->ok) tpuci__dk_infra(att, "starting", c, res->message);
  tpuci__unit_started(&c->u, res->ok);
  tpuci__unit_step(&att->ua);
}

static void tpuci__dk_op_start(tpuci__unit_t *u) {
  tpuci__dk_ctr_t *c = (tpuci__dk_ctr_t *) u;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(u);
  tpuci__unit_req_begin(&att->ua);
  tpuci__engine_container_start(att->dk->e.eng, c->id, tpuci__dk_on_started, c);
}

/* net_create and create. */

static void tpuci__dk_on_net_created(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_att_t *att = p;
  tpuci__unit_req_end(&att->ua);
  if (res->ok && att->net.id == NULL) {
    tpuci__dk_infra(att, "creating network", NULL, "the answer has no Id");
  } else if (!res->ok) {
    char *step = tpuci__printf("creating network %s", att->net.name);
    tpuci__dk_infra(att, step, NULL, res->message);
    free(step);
  }
  tpuci__unit_step(&att->ua);
}

static void tpuci__dk_op_net_create(tpuci__unit_att_t *ua) {
  tpuci__dk_att_t *att = (tpuci__dk_att_t *) ua;
  if (!ua->gang) return;
  tpuci__unit_req_begin(ua);
  att->net.eng = att->dk->e.eng;
  tpuci__net_create(&att->net, &ua->stop, tpuci__dk_on_net_created, att);
}

static void tpuci__dk_on_created(void *p, const tpuci__engine_res_t *res);

static void tpuci__dk_set_id(tpuci__dk_ctr_t *c, const char *id) {
  c->id = tpuci__strdup(id);
  tpuci__unit_created(&c->u);
}

/* Who has the name: this attempt's own container (the same labels) is
 * taken as created; anyone else's leaves it, for a suffixed name. */
static void tpuci__dk_on_name_taken(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(&c->u);
  const char *id = json_string_value(json_object_get(res->json, "Id"));
  char *name;
  tpuci__unit_req_end(&att->ua);
  if (res->ok && id != NULL && tpuci__ctr_is_ours(res->json, c->body)) {
    tpuci__dk_set_id(c, id);
    tpuci__unit_step(&att->ua);
    return;
  }
  name = tpuci__name_suffixed(c->u.name, 0);
  free(c->u.name);
  c->u.name = name;
  c->create_tries++;
  tpuci__unit_req_begin(&att->ua);
  tpuci__engine_container_create(att->dk->e.eng, c->u.name, c->body, tpuci__dk_on_created, c);
}

/* A container whose create answer was lost, looked up by its name. */
static void tpuci__dk_on_looked_up(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(&c->u);
  const char *id = json_string_value(json_object_get(res->json, "Id"));
  tpuci__unit_req_end(&att->ua);
  if (res->ok && id != NULL) {
    tpuci__dk_set_id(c, id);
  } else if (tpuci__dk_no_answer(res)) {
    /* Removed by its name once the engine answers again. */
    tpuci__dk_orphan(att->dk, 0, c->u.name, c->u.name);
  } else if (res->status != 404) {
    tpuci__unit_tell(&att->ua,
                     "container %s may have been created without "
                     "an answer and could not be looked up (%s); "
                     "run `tpuci gc` to clean up",
                     c->u.name, res->message);
  }
  tpuci__unit_step(&att->ua);
}

static void tpuci__dk_on_created(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(&c->u);
  tpuci__unit_req_end(&att->ua);
  if (res->status == 409 && c->create_tries < 3 && !att->ua.stop) {
    /* The name is taken: by this very request, sent again by curl after
     * its first answer was lost, or by another tpuci with the same run
     * id (run ids are unique per state folder, the engine is shared). */
    tpuci__unit_req_begin(&att->ua);
    tpuci__engine_container_inspect(att->dk->e.eng, c->u.name, tpuci__dk_on_name_taken, c);
    return;
  }
  if (res->ok) {
    const char *id = json_string_value(json_object_get(res->json, "Id"));
    if (id != NULL) tpuci__dk_set_id(c, id);
    else tpuci__dk_infra(att, "creating", c, "the answer has no Id");
  } else {
    tpuci__dk_infra(att, "creating", c, res->message);
    if (tpuci__dk_no_answer(res) && !tpuci__dk_unreached(res)) {
      /* No answer: the engine may have made it all the same. (Not when
       * the request never reached an engine.) */
      tpuci__unit_req_begin(&att->ua);
      tpuci__engine_container_inspect(att->dk->e.eng, c->u.name, tpuci__dk_on_looked_up, c);
    }
  }
  tpuci__unit_step(&att->ua);
}

/* Points a gang host's create body at the attempt's network (whose name
 * is final only once it was created). */
static void tpuci__dk_body_network(json_t *body, const char *net, const char *alias) {
  json_t *hc = json_object_get(body, "HostConfig");
  json_t *nc = json_object();
  json_t *eps = json_object();
  json_object_set_new(hc, "NetworkMode", json_string(net));
  json_object_set_new(eps, net, json_pack("{s:[s]}", "Aliases", alias));
  json_object_set_new(nc, "EndpointsConfig", eps);
  json_object_set_new(body, "NetworkingConfig", nc);
}

static void tpuci__dk_op_create(tpuci__unit_t *u) {
  tpuci__dk_ctr_t *c = (tpuci__dk_ctr_t *) u;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(u);
  if (att->ua.gang) tpuci__dk_body_network(c->body, att->net.name, u->host);
  tpuci__unit_req_begin(&att->ua);
  tpuci__engine_container_create(att->dk->e.eng, u->name, c->body, tpuci__dk_on_created, c);
}

/* classify */

/* Whether the container ended by a signal (exit 128+n) that tpuci did
 * not send it. */
static int tpuci__dk_unasked_signal(const tpuci__dk_ctr_t *c) {
  return TPUCI__U_ENDED(&c->u) && c->u.status > 128 && c->u.status < 160 && c->u.signals == 0 &&
         !c->u.stopped;
}

static void tpuci__dk_on_inspected(void *p, const tpuci__engine_res_t *res);

/* Whether the container ended by a SIGKILL tpuci did not send, under the
 * job's memory limit, with no OOM kill reported (yet), on an engine that
 * reports them. */
static int tpuci__dk_unreported_kill(const tpuci__dk_ctr_t *c) {
  const tpuci__dk_att_t *att = (const tpuci__dk_att_t *) c->u.att;
  return !c->u.oom && c->u.status == 137 && att->ua.a->inst->memory_bytes > 0 &&
         c->u.signals == 0 && !c->u.stopped && !TPUCI__DK_NO_OOM(att->dk->e.eng);
}

/* Asks again about the containers marked for it. */
static void tpuci__dk_reinspect_cb(uv_timer_t *t) {
  tpuci__dk_att_t *att = t->data;
  size_t i;
  for (i = 0; i < att->ua.nunits; i++) {
    tpuci__dk_ctr_t *c = TPUCI__DK_CTR(att, i);
    if (c->state != TPUCI__DK_REINSPECT) continue;
    tpuci__dk_set(c, TPUCI__DK_INSPECT);
    /* The request counted while waiting becomes this inspection's. */
    tpuci__engine_container_inspect(att->dk->e.eng, c->id, tpuci__dk_on_inspected, c);
  }
}

static void tpuci__dk_on_inspected(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(&c->u);
  uint64_t limit = att->ua.a->inst->memory_bytes;
  tpuci__unit_req_end(&att->ua);
  if (!res->ok && res->error != 0 && res->error != UV_ECANCELED && tpuci__dk_unasked_signal(c) &&
      att->ua.infra == NULL) {
    /* Killed by a signal nobody here sent, and the engine takes no new
     * connection: it is stopping (a graceful stop sends SIGTERM to every
     * container). Not the test's failure. */
    att->ua.infra = tpuci__printf("docker engine: it stopped while container "
                                  "%s ran (exit %ld, then %s)",
                                  c->u.name, c->u.status, res->message);
  }
  if (res->ok) {
    json_t *state = json_object_get(res->json, "State");
    json_t *code = json_object_get(state, "ExitCode");
    c->u.oom = json_is_true(json_object_get(state, "OOMKilled"));
    if (json_is_integer(code)) c->u.status = (long) json_integer_value(code);
    /* A SIGKILL nobody here sent, under a memory limit: the engine may
     * record the OOM kill a moment after the exit (seen under load).
     * Ask again a few times; then the stats it gave while the container
     * ran say whether the limit was reached. */
    if (tpuci__dk_unreported_kill(c) && c->inspect_tries < 5) {
      c->inspect_tries++;
      tpuci__dk_set(c, TPUCI__DK_REINSPECT);
      tpuci__unit_req_begin(&att->ua);
      att->ua.timer.data = att;
      uv_timer_start(&att->ua.timer, tpuci__dk_reinspect_cb, 200, 0);
      return;
    }
    if (tpuci__dk_unreported_kill(c)) {
      c->u.oom = tpuci__memstat_reached(&c->mem, limit);
      c->u.oom_unreported = c->u.oom ? TPUCI__OOM_STATS : TPUCI__OOM_PROBABLY;
    }
  }
  /* Without the inspection the exit status from wait still stands. */
  tpuci__unit_step(&att->ua);
}

static void tpuci__dk_op_classify(tpuci__unit_t *u) {
  tpuci__dk_ctr_t *c = (tpuci__dk_ctr_t *) u;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(u);
  tpuci__http_req_t *r;
  tpuci__dk_set(c, TPUCI__DK_INSPECT);
  tpuci__unit_req_begin(&att->ua);
  r = tpuci__engine_container_inspect(att->dk->e.eng, c->id, tpuci__dk_on_inspected, c);
  if (tpuci__dk_unasked_signal(c)) tpuci__http_set_fresh(r);
}

/* remove and net_remove. */

static void tpuci__dk_on_removed(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_ctr_t *c = p;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(&c->u);
  tpuci__unit_req_end(&att->ua);
  if (res->ok || res->status == 404) {
    tpuci__dk_set(c, TPUCI__DK_REMOVED);
  } else if (tpuci__dk_no_answer(res)) {
    /* The engine stopped: removed when it answers again. */
    tpuci__dk_orphan(att->dk, 0, c->id, c->u.name);
  } else {
    tpuci__unit_tell(&att->ua,
                     "could not remove container %s: %s; run `tpuci "
                     "gc` to clean up",
                     c->u.name, res->message);
  }
  tpuci__unit_step(&att->ua);
}

static void tpuci__dk_op_remove(tpuci__unit_t *u) {
  tpuci__dk_ctr_t *c = (tpuci__dk_ctr_t *) u;
  tpuci__dk_att_t *att = TPUCI__DK_ATT(u);
  if (c->id == NULL) return;
  tpuci__unit_req_begin(&att->ua);
  tpuci__engine_container_remove(att->dk->e.eng, c->id, tpuci__dk_on_removed, c);
}

static void tpuci__dk_on_net_removed(void *p, const tpuci__engine_res_t *res);

static void tpuci__dk_net_remove(tpuci__unit_att_t *ua) {
  tpuci__dk_att_t *att = (tpuci__dk_att_t *) ua;
  if (tpuci__net_remove(&att->net, tpuci__dk_on_net_removed, att)) tpuci__unit_req_begin(ua);
}

static void tpuci__dk_on_net_removed(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_att_t *att = p;
  int tries = att->net.rm_tries;
  tpuci__unit_req_end(&att->ua);
  if (tpuci__net_remove_again(&att->net, res, TPUCI__NET_RM_TRIES)) {
    /* 100, 200, 400, 800 ms, then every second. */
    uint64_t delay = (uint64_t) TPUCI__NET_RM_DELAY_MS << (tries - 1);
    if (tries > 5 || delay > TPUCI__NET_RM_DELAY_MAX_MS) delay = TPUCI__NET_RM_DELAY_MAX_MS;
    tpuci__unit_later(&att->ua, delay, tpuci__dk_net_remove);
    return;
  }
  if (res->ok || res->status == 404) {
    /* gone */
  } else if (tpuci__dk_no_answer(res)) {
    tpuci__dk_orphan(att->dk, 1, att->net.id, att->net.name);
  } else {
    tpuci__unit_tell(&att->ua,
                     "could not remove network %s: %s; run `tpuci "
                     "gc` to clean up",
                     att->net.name, res->message);
  }
  tpuci__unit_step(&att->ua);
}

/* keep, outcome, release. */

static char *tpuci__dk_op_keep(tpuci__unit_att_t *ua, tpuci__unit_t *u) {
  tpuci__dk_att_t *att = (tpuci__dk_att_t *) ua;
  const char *n = u != NULL ? u->name : NULL;
  if (u == NULL) return tpuci__net_kept(&att->net, "the gang's hosts are on it");
  if (((tpuci__dk_ctr_t *) u)->id == NULL) return NULL;
  return tpuci__printf("kept container %s: see its output with `docker logs %s`, run it "
                       "again with `docker start -ai %s`, or look inside with `docker "
                       "commit %s %s-debug && docker run --rm -it --entrypoint sh "
                       "%s-debug`; `tpuci gc` removes it",
                       n, n, n, n, n, n);
}

/* An engine that does not report OOM kills (podman < 5): a SIGKILL under
 * the memory limit, not sent by tpuci, is taken for one and named as a
 * probable one. */
static void tpuci__dk_op_outcome(tpuci__unit_att_t *ua, tpuci__gang_verdict_t *v,
                                 tpuci__exit_t *ex) {
  tpuci__dk_t *dk = ((tpuci__dk_att_t *) ua)->dk;
  uint64_t limit = ua->a->inst->memory_bytes;
  char *cause;
  if (ua->infra != NULL || ua->stop || v->exit_code != 137 || v->oom || limit == 0 ||
      !TPUCI__DK_NO_OOM(dk->e.eng))
    return;
  cause = tpuci__podman_oom_cause(v->cause, limit, dk->e.eng->server_version);
  free(v->cause);
  v->cause = cause;
  ex->cause = cause;
  ex->oom = 1;
}

static void tpuci__dk_op_release(tpuci__unit_t *u) {
  tpuci__dk_ctr_t *c = (tpuci__dk_ctr_t *) u;
  free(c->id);
  json_decref(c->body);
  tpuci__ctrout_free(&c->out);
  tpuci__memstat_free(&c->mem);
}

static void tpuci__dk_op_att_release(tpuci__unit_att_t *ua) {
  tpuci__dk_att_t *att = (tpuci__dk_att_t *) ua;
  tpuci__net_free(&att->net);
  free(att->key);
  free(att->sign_id[TPUCI__GATE_GO]);
  free(att->sign_id[TPUCI__GATE_END]);
}

/* Whether a gang's hosts keep their names until the gang has ended
 * (the end step, engine/gate.h). Not on podman: the end container is one
 * more network join for netavark 1.4, whose re-addressing
 * (containers/netavark#833) stalls podman's gangs; there a host's name
 * goes when its command ends (docker.md). */
static int tpuci__dk_end_step(const tpuci__dk_t *dk) {
  return dk->e.eng == NULL || !dk->e.eng->podman;
}

/* The containers of an attempt: their create bodies, the gang's network
 * body and the per-host log files. Returns 0 or a negative code with
 * rt->err filled. */
static int tpuci__dk_bodies(tpuci__dk_t *dk, tpuci__dk_att_t *att, const tpuci__slice_t *slice) {
  tpuci__attempt_t *a = att->ua.a;
  const tpuci__instance_t *inst = a->inst;
  tpuci__kvlist_t labels = {0};
  /* A gang's start barrier (engine/gate.h), unless start_timeout = 0. */
  char *key = att->key = att->ua.gang && inst->start_timeout_ms > 0 ? tpuci__ctl_key() : NULL;
  size_t i;
  int rc = 0;

  tpuci__ctr_labels(&labels, a->run_id, inst->job, inst->name, a->number, a->keep_on_failure);
  if (att->ua.gang) {
    att->net.name = tpuci__ctr_name(a->run_id, inst->name, a->number);
    att->net.body = tpuci__net_create_body(att->net.name, &labels, 1);
  }
  for (i = 0; i < att->ua.nunits; i++) {
    tpuci__dk_ctr_t *c = TPUCI__DK_CTR(att, i);
    tpuci__gang_member_t m = {.host = (int) i,
                              .nhosts = (int) att->ua.nunits,
                              .gate_key = key,
                              .gate_end = tpuci__dk_end_step(dk)};
    c->body = tpuci__gang_host_body(a, slice, &m, att->net.name, &labels, &dk->e.rt.err);
    if (c->body == NULL) {
      rc = dk->e.rt.err.code ? dk->e.rt.err.code : TPUCI_EUSAGE;
      break;
    }
    tpuci__podman_body_limits(c->body, &dk->limits);
    /* The output comes through the attach stream; the engine's own copy
     * (for `docker logs`, and the refetch after a broken stream) is kept
     * with the "local" driver, which costs the engine about half of what
     * json-file costs per byte. Podman has no "local" driver. */
    if (dk->e.eng != NULL && !dk->e.eng->podman)
      json_object_set_new(json_object_get(c->body, "HostConfig"), "LogConfig",
                          json_pack("{s:s}", "Type", "local"));
    if (key != NULL) tpuci__ctrout_ctl(&c->out, key, tpuci__dk_on_ctl, c);
    if (att->ua.gang)
      tpuci__ctrout_open_log(&c->out, tpuci__printf("%s/attempt-%d." TPUCI__GANG_HOST_FMT ".log",
                                                    a->dir, a->number, (int) i));
  }
  tpuci__kv_free(&labels);
  return rc;
}

/* init: the names, output and bodies of a new attempt's containers. */
static int tpuci__dk_op_init(tpuci__unit_att_t *ua, tpuci__runtime_t *rt,
                             const tpuci__slice_t *slice) {
  tpuci__dk_att_t *att = (tpuci__dk_att_t *) ua;
  tpuci__dk_t *dk = (tpuci__dk_t *) rt;
  tpuci__attempt_t *a = ua->a;
  const tpuci__instance_t *inst = a->inst;
  size_t i;
  int rc;
  att->dk = dk;
  for (i = 0; i < ua->nunits; i++) {
    tpuci__dk_ctr_t *c = TPUCI__DK_CTR(att, i);
    c->u.name = ua->gang ? tpuci__ctr_host_name(a->run_id, inst->name, a->number, (int) i)
                         : tpuci__ctr_name(a->run_id, inst->name, a->number);
    tpuci__ctrout_init(&c->out, a, c->u.host);
    tpuci__memstat_init(&c->mem);
  }
  rc = tpuci__erun_engine(&dk->e);
  if (rc == 0) rc = tpuci__dk_bodies(dk, att, slice);
  if (rc != 0) return rc;
  /* The engine may be back: what earlier attempts could not remove. */
  if (dk->norphans > 0) tpuci__dk_orphans_flush(dk, 0);
  return 0;
}

const tpuci__unit_ops_t tpuci__dk_ops = {
    .kind = "container",
    .flags = TPUCI__UNIT_GATE,
    .att_size = sizeof(tpuci__dk_att_t),
    .unit_size = sizeof(tpuci__dk_ctr_t),
    .init = tpuci__dk_op_init,
    .net_create = tpuci__dk_op_net_create,
    .create = tpuci__dk_op_create,
    .output = tpuci__dk_op_output,
    .start = tpuci__dk_op_start,
    .watch = tpuci__dk_op_watch,
    .stop = tpuci__dk_op_stop,
    .halt = tpuci__dk_op_halt,
    .classify = tpuci__dk_op_classify,
    .remove = tpuci__dk_op_remove,
    .gone = NULL,
    .net_remove = tpuci__dk_net_remove,
    .go = tpuci__dk_op_go,
    .go_remove = tpuci__dk_op_go_remove,
    .end = tpuci__dk_op_end,
    .keep = tpuci__dk_op_keep,
    .outcome = tpuci__dk_op_outcome,
    .release = tpuci__dk_op_release,
    .att_release = tpuci__dk_op_att_release,
};
