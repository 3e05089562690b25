/* The swarm runtime driver's attempt: a service per emulated host (one
 * for a single-host job), each with one replica that is never restarted,
 * on an overlay network of the attempt's own for a gang. The phases, the
 * gang's stop, the verdict and the cleanup are the attempt core's
 * (runtime/unit/unit.h, TPUCI__UNIT_STOP_BY_REMOVE); this file is its
 * operations and what the task poll (poll.c) says:
 *
 *   net_create POST /networks/create (gangs: overlay, attachable, internal)
 *   create     POST /services/create (the service runs at once: start
 *              has nothing to ask)
 *   watch      the runtime's task poll tells each host what its task
 *              does (driver.c starts it). Once it runs, GET
 *              /tasks/{id}/logs?follow=1 brings its output live; once it
 *              ended, that stream is cancelled (a followed task log never
 *              ends by itself) and a plain read brings what it had not
 *              (bytes counted per stream). An exit 137 under a memory
 *              limit is inspected on the manager (State.OOMKilled) when
 *              the task ran there.
 *   stop       the followed stream ends; removing is the stop
 *   go         (go.c) once every host of a gang resolves every name
 *   end        (go.c) once every host's command of a gang ended (its
 *              wait step said so), and it waits idle, its name kept
 *   remove     DELETE /services/{id} (Swarm stops a task that still runs:
 *              SIGTERM, StopGracePeriod, SIGKILL)
 *   gone       the poll, until every host's task is gone from the swarm
 *              (and its container from the manager, when it ran there)
 *   net_remove DELETE /networks/{id}, retried while the swarm still has
 *              endpoints on it
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/swarm/swarm.h"

static void tpuci__sw_infra(tpuci__sw_att_t *att, char *msg) { tpuci__unit_infra(&att->ua, msg); }

/* Output. */

/* Once the whole log was read: whether the results it announced came
 * whole. Not when tpuci stopped the task (its last words may be cut):
 * then a note. */
static void tpuci__sw_results_check(tpuci__sw_host_t *h) {
  tpuci__sw_att_t *att = TPUCI__SW_ATT(h);
  char *why;
  if (!h->res_on || h->res_checked) return;
  h->res_checked = 1;
  why = tpuci__logres_check(&h->res);
  if (why == NULL) return;
  if (h->u.stopped || h->drained || h->u.state == TPUCI__U_LOST || att->ua.signalled ||
      att->ua.gang_stop)
    tpuci__unit_tell(&att->ua,
                     "the results of service %s may be incomplete (tpuci "
                     "stopped its task): %s",
                     h->u.name, why);
  else
    tpuci__sw_infra(att, tpuci__printf("swarm: the results of service %s did not come "
                                       "back whole through its log: %s",
                                       h->u.name, why));
  free(why);
}

static void tpuci__sw_on_read(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_host_t *h = p;
  tpuci__sw_att_t *att = TPUCI__SW_ATT(h);
  tpuci__unit_req_end(&att->ua);
  tpuci__ctrout_read_end(&h->out, "service", h->u.name, "reading its task's logs failed", res);
  tpuci__sw_results_check(h);
  tpuci__unit_step(&att->ua);
}

/* Once the task ended and its followed stream is over, or when tpuci
 * stops it: the whole log, past what the stream brought. A task the
 * poll has not seen yet is read through its service (one replica, never
 * restarted: the same log). */
static void tpuci__sw_read_rest(tpuci__sw_host_t *h) {
  tpuci__sw_att_t *att = TPUCI__SW_ATT(h);
  const char *id = h->task_id != NULL ? h->task_id : h->id;
  tpuci__sw_logsrc_t src = {.kind = h->task_id != NULL ? "/tasks/" : "/services/", .id = id};
  if ((h->log != TPUCI__SW_LOG_IDLE && h->log != TPUCI__SW_LOG_ENDED) || id == NULL) return;
  tpuci__sw_set_log(h, TPUCI__SW_LOG_READ);
  /* A task that ended without a container never ran; one being stopped
   * may have started since the poll last looked. */
  if (h->container_id == NULL && TPUCI__U_ENDED(&h->u)) {
    tpuci__ctrout_flush(&h->out); /* it never ran: nothing to read */
    return;
  }
  tpuci__ctrout_rewind(&h->out);
  tpuci__unit_req_begin(&att->ua);
  tpuci__sw_logs(att->sw->e.eng, &src, tpuci__ctrout_chunk, &h->out, tpuci__sw_on_read, h);
}

/* Whether host h's log is read once more now that its stream is over:
 * its task ended, or tpuci is stopping it (a signal, its gang) while the
 * service still holds the task's log. */
static int tpuci__sw_read_at_end(const tpuci__sw_host_t *h) {
  const tpuci__sw_att_t *att = TPUCI__SW_ATT(h);
  if (h->u.stopped) return 0;
  if (TPUCI__U_ENDED(&h->u)) return 1;
  return (att->ua.signalled || att->ua.gang_stop) && att->ua.infra == NULL &&
         att->ua.phase == TPUCI__UP_RUN;
}

static void tpuci__sw_on_follow_end(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_host_t *h = p;
  tpuci__sw_att_t *att = TPUCI__SW_ATT(h);
  int drained = h->log == TPUCI__SW_LOG_DRAIN || h->log == TPUCI__SW_LOG_DRAIN_CANCEL;
  int cancelled = h->log == TPUCI__SW_LOG_CANCEL || h->log == TPUCI__SW_LOG_DRAIN_CANCEL;
  if (!drained) tpuci__unit_req_end(&att->ua);
  h->follow = NULL;
  tpuci__sw_set_log(h, TPUCI__SW_LOG_ENDED);
  if (drained) {
    /* A stopped task's log, followed until it was gone. */
    tpuci__ctrout_flush(&h->out);
    tpuci__sw_results_check(h);
    tpuci__unit_step(&att->ua);
    return;
  }
  if (!cancelled && !TPUCI__U_ENDED(&h->u) && !h->u.stopped && res->error != UV_ECANCELED) {
    /* A followed task log never ends by itself: the engine went away
     * (a restart) or the connection broke. The poll follows it again
     * once the task is seen running. */
    free(h->broke);
    h->broke = tpuci__strdup(res->ok || *res->message == '\0' ? "the engine ended the stream"
                                                              : res->message);
  }
  /* What a frame cut by the cancel held comes again with the read. A
   * host stopped by a signal or its gang is read once more before its
   * service goes (the stream may have started late or missed the last
   * lines); after an engine failure its output ends here. */
  if (tpuci__sw_read_at_end(h)) tpuci__sw_read_rest(h);
  else if (TPUCI__U_ENDED(&h->u) || h->u.stopped || att->ua.signalled || att->ua.gang_stop ||
           att->ua.infra)
    tpuci__ctrout_flush(&h->out);
  tpuci__unit_step(&att->ua);
}

/* FOLLOW -> CANCEL, DRAIN -> DRAIN_CANCEL: its end comes. */
static void tpuci__sw_follow_cancel(tpuci__sw_host_t *h) {
  if (h->log == TPUCI__SW_LOG_FOLLOW) tpuci__sw_set_log(h, TPUCI__SW_LOG_CANCEL);
  else if (h->log == TPUCI__SW_LOG_DRAIN) tpuci__sw_set_log(h, TPUCI__SW_LOG_DRAIN_CANCEL);
  else return;
  tpuci__engine_cancel(TPUCI__SW_ATT(h)->sw->e.eng, h->follow);
}

/* The run is over before every task ended (a signal, a gang's host that
 * failed, an engine failure): the streams of the others end. */
static void tpuci__sw_halt(tpuci__sw_att_t *att) {
  size_t i;
  for (i = 0; i < att->ua.nunits; i++) {
    tpuci__sw_host_t *h = TPUCI__SW_HOST(att, i);
    if (!TPUCI__U_ENDED(&h->u)) tpuci__sw_follow_cancel(h);
  }
}

/* RUN: what the poll says. */

static void tpuci__sw_on_inspected(void *p, const tpuci__engine_res_t *res);

/* OOM_WAIT -> OOM_ASKED for each host waiting to be asked again. */
static void tpuci__sw_timer_cb(uv_timer_t *t) {
  tpuci__sw_att_t *att = t->data;
  size_t i;
  tpuci__unit_req_end(&att->ua);
  if (att->ua.phase == TPUCI__UP_RUN) {
    for (i = 0; i < att->ua.nunits; i++) {
      tpuci__sw_host_t *h = TPUCI__SW_HOST(att, i);
      if (h->svc != TPUCI__SW_OOM_WAIT || h->u.oom || h->u.stopped) continue;
      tpuci__sw_set_svc(h, TPUCI__SW_OOM_ASKED);
      tpuci__unit_req_begin(&att->ua);
      tpuci__engine_container_inspect(att->sw->e.eng, h->container_id, tpuci__sw_on_inspected, h);
    }
  }
  tpuci__unit_step(&att->ua);
}

static void tpuci__sw_on_inspected(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_host_t *h = p;
  tpuci__sw_att_t *att = TPUCI__SW_ATT(h);
  tpuci__unit_req_end(&att->ua);
  if (res->ok) {
    json_t *state = json_object_get(res->json, "State");
    h->u.oom = json_is_true(json_object_get(state, "OOMKilled"));
    /* The engine may record the OOM kill a moment after the exit. */
    if (!h->u.oom && h->oom_tries < 5 && !att->ua.signalled) {
      h->oom_tries++;
      tpuci__sw_set_svc(h, TPUCI__SW_OOM_WAIT);
      /* One timer for the attempt's hosts, counted while it runs. */
      if (!uv_is_active((uv_handle_t *) &att->ua.timer)) {
        tpuci__unit_req_begin(&att->ua);
        uv_timer_start(&att->ua.timer, tpuci__sw_timer_cb, 200, 0);
      }
      return;
    }
  }
  /* Its container says no OOM kill: Docker misses some (docker.md). */
  if (res->ok && !h->u.oom) h->u.oom_unreported = TPUCI__OOM_PROBABLY;
  tpuci__sw_set_svc(h, TPUCI__SW_UP);
  tpuci__unit_step(&att->ua);
}

/* A task that ended by SIGKILL (137) under a memory limit, not sent by
 * tpuci: on the manager's node its container says whether the kernel
 * killed it for memory; on another node tpuci cannot ask, and takes it
 * for an OOM kill (docs/swarm.md). */
static void tpuci__sw_oom_check(tpuci__sw_host_t *h) {
  tpuci__sw_att_t *att = TPUCI__SW_ATT(h);
  tpuci__sw_t *sw = att->sw;
  if (h->u.status != 137 || att->ua.a->inst->memory_bytes == 0 || att->ua.signalled) return;
  if (h->node_id != NULL && sw->manager_node != NULL && strcmp(h->node_id, sw->manager_node) == 0 &&
      h->container_id != NULL) {
    h->oom_tries = 1;
    tpuci__sw_set_svc(h, TPUCI__SW_OOM_ASKED);
    tpuci__unit_req_begin(&att->ua);
    tpuci__engine_container_inspect(sw->e.eng, h->container_id, tpuci__sw_on_inspected, h);
    return;
  }
  h->u.oom = 1;
}

/* Whether host h's task ran on the manager's node (or nobody said where):
 * the engine tpuci talks to kept its container and its log. */
static int tpuci__sw_on_manager(const tpuci__sw_host_t *h) {
  const tpuci__sw_t *sw = TPUCI__SW_ATT(h)->sw;
  return h->node_id == NULL || sw->manager_node == NULL ||
         strcmp(h->node_id, sw->manager_node) == 0;
}

/* Whether a task that ended with `code` was stopped by the manager's
 * engine coming back rather than by the job: it ran on the manager, its
 * followed log broke (the engine went away), and it ended by a signal
 * (exit 128+n) tpuci did not cause. */
static int tpuci__sw_engine_killed(const tpuci__sw_host_t *h, long code) {
  return h->broke != NULL && tpuci__sw_on_manager(h) && code > 128 && code < 160 &&
         !TPUCI__SW_ATT(h)->ua.signalled;
}

static void tpuci__sw_set(char **field, const char *v) {
  if (v == NULL || (*field != NULL && strcmp(*field, v) == 0)) return;
  free(*field);
  *field = tpuci__strdup(v);
}

void tpuci__sw_on_task(tpuci__sw_host_t *h, const tpuci__task_t *t) {
  tpuci__sw_att_t *att = TPUCI__SW_ATT(h);
  uint64_t now = uv_now(att->sw->e.loop);

  if (att->ua.phase != TPUCI__UP_RUN || TPUCI__U_ENDED(&h->u) || h->u.stopped || t->id == NULL)
    return;
  /* With no restarts there is one task; a second would be the swarm's
   * replacement, and the first decides. */
  if (h->task_id == NULL) h->task_id = tpuci__strdup(t->id);
  else if (strcmp(h->task_id, t->id) != 0) return;
  tpuci__sw_set(&h->node_id, t->node_id);
  tpuci__sw_set(&h->container_id, t->container_id);
  tpuci__sw_set(&h->task_err, t->err);
  h->state = t->state;

  if (t->state < TPUCI__TS_ASSIGNED) {
    if (h->pending_since == 0) h->pending_since = now;
    if (!h->told_pending && t->err != NULL && now - h->pending_since >= TPUCI__SW_PENDING_TELL_MS) {
      tpuci__unit_tell(&att->ua, "service %s waits for a node: %s", h->u.name, t->err);
      h->told_pending = 1;
    }
  }
  /* Followed once, and again after the stream broke (the engine came
   * back): the new stream skips what the old one passed on, and the
   * read after the end brings what both missed. */
  if (t->state >= TPUCI__TS_RUNNING && !tpuci__task_state_terminal(t->state) &&
      (h->log == TPUCI__SW_LOG_IDLE ||
       (h->log == TPUCI__SW_LOG_ENDED && h->broke != NULL && h->refollows < TPUCI__SW_REFOLLOWS))) {
    tpuci__sw_logsrc_t src = {.kind = "/tasks/", .id = h->task_id, .follow = 1};
    if (h->log == TPUCI__SW_LOG_ENDED) {
      h->refollows++;
      tpuci__ctrout_rewind(&h->out);
    }
    tpuci__sw_set_log(h, TPUCI__SW_LOG_FOLLOW);
    tpuci__unit_req_begin(&att->ua);
    h->follow = tpuci__sw_logs(att->sw->e.eng, &src, tpuci__ctrout_chunk, &h->out,
                               tpuci__sw_on_follow_end, h);
  }
  if (!tpuci__task_state_terminal(t->state)) return;

  {
    char *why = NULL;
    if (tpuci__task_end(t, &why) == TPUCI__TASK_INFRA) {
      tpuci__sw_infra(att, tpuci__printf("swarm: the task of service %s %s", h->u.name, why));
      free(why);
      tpuci__unit_ended_infra(&h->u);
    } else if (tpuci__sw_engine_killed(h, t->exit_code)) {
      tpuci__sw_infra(
          att, tpuci__printf("swarm: the task of service %s ended by signal %ld (exit %ld) "
                             "after the manager's engine went away while it ran (its log "
                             "stream: %s): a restarting engine stops the containers it finds "
                             "running",
                             h->u.name, t->exit_code - 128, t->exit_code, h->broke));
      tpuci__unit_ended_infra(&h->u);
    } else {
      /* A host of a gang that failed stops the others (the core). */
      tpuci__unit_exited(&h->u, t->exit_code);
      tpuci__sw_oom_check(h);
    }
  }
  if (h->follow != NULL) tpuci__sw_follow_cancel(h);
  else tpuci__sw_read_rest(h);
  tpuci__unit_step(&att->ua);
}

static void tpuci__sw_on_ctr_looked(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_host_t *h = p;
  tpuci__sw_att_t *att = TPUCI__SW_ATT(h);
  tpuci__unit_req_end(&att->ua);
  /* Still there: asked again at the next poll (unless GONE meanwhile). */
  if (h->svc == TPUCI__SW_ASKING)
    tpuci__sw_set_svc(h,
                      res->status == 404 || res->error != 0 ? TPUCI__SW_GONE : TPUCI__SW_REMOVED);
  tpuci__unit_step(&att->ua);
}

void tpuci__sw_on_absent(tpuci__sw_host_t *h) {
  tpuci__sw_att_t *att = TPUCI__SW_ATT(h);
  if (att->ua.phase == TPUCI__UP_RUN) {
    if (TPUCI__U_ENDED(&h->u) || h->u.stopped) return;
    /* Someone else removed the service. */
    h->u.stopped = 1;
    tpuci__sw_set_svc(h, TPUCI__SW_REMOVED);
    tpuci__sw_infra(att, tpuci__printf("swarm: service %s was removed while "
                                       "it ran (not by tpuci)",
                                       h->u.name));
    tpuci__sw_halt(att);
    tpuci__unit_step(&att->ua);
    return;
  }
  if (att->ua.phase == TPUCI__UP_GONE && h->svc != TPUCI__SW_GONE && h->svc != TPUCI__SW_ASKING) {
    tpuci__sw_t *sw = att->sw;
    if (h->container_id != NULL && h->node_id != NULL && sw->manager_node != NULL &&
        strcmp(h->node_id, sw->manager_node) == 0) {
      /* Its container, on the manager, goes a moment after the task. */
      tpuci__sw_set_svc(h, TPUCI__SW_ASKING);
      tpuci__unit_req_begin(&att->ua);
      tpuci__engine_container_inspect(sw->e.eng, h->container_id, tpuci__sw_on_ctr_looked, h);
      return;
    }
    tpuci__sw_set_svc(h, TPUCI__SW_GONE);
    tpuci__unit_step(&att->ua);
  }
}

void tpuci__sw_poll_lost(tpuci__sw_att_t *att, const char *why) {
  if (att->ua.phase != TPUCI__UP_RUN) {
    if (att->ua.phase == TPUCI__UP_GONE) {
      size_t i;
      for (i = 0; i < att->ua.nunits; i++)
        if (!TPUCI__SW_WENT(TPUCI__SW_HOST(att, i)))
          tpuci__sw_set_svc(TPUCI__SW_HOST(att, i), TPUCI__SW_GONE);
      tpuci__unit_step(&att->ua);
    }
    return;
  }
  tpuci__sw_infra(att, tpuci__printf("swarm: asking for the tasks failed: %s", why));
  tpuci__sw_halt(att);
  tpuci__unit_step(&att->ua);
}

/* What a gang host's wait step says (engine/gate.h), and its results
 * (engine/logres.h). */
static void tpuci__sw_on_ctl(void *p, int stream, const char *line, size_t len) {
  tpuci__sw_host_t *h = p;
  char *waiting = NULL;
  long status = 0;
  tpuci__gate_state_t st;
  (void) stream;
  if (h->res_on && tpuci__logres_line(&h->res, line, len)) return;
  st = tpuci__gate_line(h->u.att->a, h->u.host, line, len, &waiting, &status);
  if (st == TPUCI__GATE_DONE) tpuci__unit_done(&h->u, status);
  else tpuci__unit_gate(&h->u, st, waiting);
  free(waiting);
}

/* For the start deadline: a host whose task does not run yet. */
char *tpuci__sw_op_not_up(tpuci__unit_t *u) {
  tpuci__sw_host_t *h = (tpuci__sw_host_t *) u;
  if (h->task_id == NULL) return tpuci__printf("(service %s) has no task yet", u->name);
  if (h->state >= TPUCI__TS_RUNNING) return NULL;
  return tpuci__printf("(service %s): its task is %s%s%s", u->name,
                       tpuci__task_state_name(h->state), h->task_err ? ": " : "",
                       h->task_err ? h->task_err : "");
}

/* init: the names, output and bodies of a new attempt's services. */

/* The body of host `host`'s service. NULL with err on failure. */
static json_t *tpuci__sw_host_body(tpuci__sw_t *sw, tpuci__sw_att_t *att,
                                   const tpuci__slice_t *slice, int host,
                                   const tpuci__kvlist_t *labels, tpuci__err_t *err) {
  tpuci__attempt_t *a = att->ua.a;
  const tpuci__instance_t *inst = a->inst;
  const tpuci__plan_t *plan = a->plan;
  tpuci__host_run_t run;
  tpuci__svc_spec_t spec;
  const char *hostname = att->ua.gang ? TPUCI__SW_HOST(att, host)->u.host : NULL;
  /* A gang's wait step (engine/gate.h), always with its end step. */
  tpuci__gang_member_t m = {
      .host = host,
      .nhosts = (int) att->ua.nunits,
      .gate_key = att->ua.gang && inst->start_timeout_ms > 0 ? att->key : NULL,
      .gate_end = 1};
  json_t *body;

  if (tpuci__host_run_init(&run, a, slice, &m, hostname, err) != 0) return NULL;
  memset(&spec, 0, sizeof(spec));
  if (run.results != NULL) {
    /* The task may run on any node: the results folder is an empty
     * tmpfs there, and its files come back through the log (the
     * bootstrap sends them, engine/logres.h). The folder's mount is the
     * last (gang.h). */
    run.nmounts--;
    spec.results_tmpfs = a->results_path ? a->results_path : TPUCI__RESULTS_MOUNT;
    /* Time to send them after pytest's grace (a test that outlives its
     * SIGTERM keeps it). */
    spec.grace_ms = att->ua.grace_ms + TPUCI__SW_RESULTS_GRACE_MS;
    tpuci__strv_take(&run.env, tpuci__printf("TPUCI_RESULTS_LOG=%s", att->key));
    tpuci__logres_init(&TPUCI__SW_HOST(att, host)->res, run.results);
    TPUCI__SW_HOST(att, host)->res_on = 1;
  }
  spec.name = TPUCI__SW_HOST(att, host)->u.name;
  spec.image =
      inst->image >= 0 && (size_t) inst->image < sw->nimages && sw->images[inst->image] != NULL
          ? sw->images[inst->image]
          : plan->images[inst->image].ref;
  spec.argv = &run.argv;
  spec.env = &run.env;
  spec.workdir = inst->workdir;
  spec.mounts = run.mounts;
  spec.nmounts = run.nmounts;
  spec.cpus = inst->cpus;
  spec.memory_bytes = inst->memory_bytes;
  spec.labels = labels;
  spec.hostname = hostname;
  spec.network = att->own_net ? att->net.name : inst->network;
  spec.alias = hostname;
  if (spec.grace_ms == 0) spec.grace_ms = att->ua.grace_ms;
  spec.ctr = &inst->ctr;
  body = tpuci__svc_create_body(&spec);
  tpuci__host_run_free(&run);
  return body;
}

int tpuci__sw_op_init(tpuci__unit_att_t *ua, tpuci__runtime_t *rt, const tpuci__slice_t *slice) {
  tpuci__sw_att_t *att = (tpuci__sw_att_t *) ua;
  tpuci__attempt_t *a = ua->a;
  tpuci__kvlist_t labels = {0};
  size_t i;
  int rc;

  att->sw = (tpuci__sw_t *) rt;
  /* Swarm services have no network "none": an internal overlay network
   * of the attempt's own has no way out either. */
  att->own_net = ua->gang || (a->inst->network != NULL && strcmp(a->inst->network, "none") == 0);
  for (i = 0; i < ua->nunits; i++) {
    tpuci__sw_host_t *h = TPUCI__SW_HOST(att, i);
    h->u.name = tpuci__sw_name(a->run_id, a->inst->name, a->number, ua->gang ? (int) i : -1);
    tpuci__ctrout_init(&h->out, a, h->u.host);
  }
  rc = tpuci__erun_engine(&att->sw->e);
  if (rc != 0) return rc;
  tpuci__ctr_labels(&labels, a->run_id, a->inst->job, a->inst->name, a->number, a->keep_on_failure);
  if (att->own_net) {
    att->net.name = tpuci__sw_name(a->run_id, a->inst->name, a->number, -1);
    att->net.body = tpuci__sw_net_body(att->net.name, &labels);
  }
  /* The key of tpuci's own lines in the tasks' logs: a gang's start
   * barrier (engine/gate.h, unless start_timeout = 0), the results
   * (engine/logres.h). */
  if ((ua->gang && a->inst->start_timeout_ms > 0) || a->results_dir != NULL)
    att->key = tpuci__ctl_key();
  for (i = 0; i < ua->nunits && rc == 0; i++) {
    tpuci__sw_host_t *h = TPUCI__SW_HOST(att, i);
    h->body = tpuci__sw_host_body(att->sw, att, slice, (int) i, &labels, &rt->err);
    if (att->key != NULL) tpuci__ctrout_ctl(&h->out, att->key, tpuci__sw_on_ctl, h);
    if (h->body == NULL) rc = rt->err.code ? rt->err.code : TPUCI_EUSAGE;
    else if (ua->gang)
      tpuci__ctrout_open_log(&h->out,
                             tpuci__printf("%s/attempt-%d.%s.log", a->dir, a->number, h->u.host));
  }
  tpuci__kv_free(&labels);
  return rc;
}

/* create and net_create. */

void tpuci__sw_op_start(tpuci__unit_t *u) {
  /* A service runs once created. */
  tpuci__unit_started(u, 1);
}

static void tpuci__sw_on_created(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_host_t *h = p;
  tpuci__sw_att_t *att = TPUCI__SW_ATT(h);
  tpuci__unit_req_end(&att->ua);
  if (res->status == 409 && h->create_tries < 3 && !att->ua.signalled) {
    /* The name is taken (run ids are unique per state folder only). */
    char *name = tpuci__name_suffixed(h->u.name, TPUCI__SW_NAME_MAX);
    free(h->u.name);
    h->u.name = name;
    h->create_tries++;
    json_object_set_new(h->body, "Name", json_string(name));
    tpuci__unit_req_begin(&att->ua);
    tpuci__sw_service_create(att->sw->e.eng, h->body, tpuci__sw_host_auth(h), tpuci__sw_on_created,
                             h);
    return;
  }
  if (res->ok) {
    const char *id = json_string_value(json_object_get(res->json, "ID"));
    if (id != NULL) {
      h->id = tpuci__strdup(id);
      tpuci__sw_set_svc(h, TPUCI__SW_UP);
      tpuci__unit_created(&h->u);
    } else {
      tpuci__sw_infra(att, tpuci__printf("swarm: creating service %s: the "
                                         "answer has no ID",
                                         h->u.name));
    }
  } else {
    tpuci__sw_infra(
        att, tpuci__printf("swarm: creating service %s failed: %s", h->u.name, res->message));
  }
  tpuci__unit_step(&att->ua);
}

void tpuci__sw_op_create(tpuci__unit_t *u) {
  tpuci__sw_host_t *h = (tpuci__sw_host_t *) u;
  tpuci__sw_att_t *att = TPUCI__SW_ATT(h);
  if (att->own_net) {
    json_t *nets = json_object_get(json_object_get(h->body, "TaskTemplate"), "Networks");
    json_object_set_new(json_array_get(nets, 0), "Target", json_string(att->net.id));
  }
  tpuci__unit_req_begin(&att->ua);
  tpuci__sw_service_create(att->sw->e.eng, h->body, tpuci__sw_host_auth(h), tpuci__sw_on_created,
                           h);
}

static void tpuci__sw_on_net_created(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_att_t *att = p;
  tpuci__unit_req_end(&att->ua);
  if (res->ok && att->net.id == NULL)
    tpuci__sw_infra(att, tpuci__strdup("swarm: creating the gang's network: "
                                       "the answer has no Id"));
  else if (!res->ok)
    tpuci__sw_infra(
        att, tpuci__printf("swarm: creating network %s failed: %s", att->net.name, res->message));
  tpuci__unit_step(&att->ua);
}

void tpuci__sw_op_net_create(tpuci__unit_att_t *ua) {
  tpuci__sw_att_t *att = (tpuci__sw_att_t *) ua;
  if (!att->own_net) return;
  tpuci__unit_req_begin(ua);
  att->net.eng = att->sw->e.eng;
  att->net.name_max = TPUCI__SW_NAME_MAX;
  tpuci__net_create(&att->net, &ua->signalled, tpuci__sw_on_net_created, att);
}

/* stop: what follows the task ends; removing the service stops it. A
 * task that sends its results (a pytest job's) sends them during the
 * grace too: its log is followed on, uncounted (the removal waits for no
 * request), until the poll finds the task gone. */
void tpuci__sw_op_stop(tpuci__unit_t *u, int signum) {
  tpuci__sw_host_t *h = (tpuci__sw_host_t *) u;
  (void) signum;
  if (h->res_on && (h->log == TPUCI__SW_LOG_FOLLOW || h->log == TPUCI__SW_LOG_DRAIN)) {
    if (h->log == TPUCI__SW_LOG_FOLLOW) {
      tpuci__sw_set_log(h, TPUCI__SW_LOG_DRAIN);
      h->drained = 1;
      tpuci__unit_req_end(u->att);
    }
    return;
  }
  /* Its stream ends, then its log is read once more (on_follow_end); a
   * task whose stream had not begun yet is read now. */
  if (h->follow != NULL) tpuci__sw_follow_cancel(h);
  else if (tpuci__sw_read_at_end(h)) tpuci__sw_read_rest(h);
}

/* remove, net_remove. */

static void tpuci__sw_on_removed(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_host_t *h = p;
  tpuci__sw_att_t *att = TPUCI__SW_ATT(h);
  tpuci__unit_req_end(&att->ua);
  if (res->ok || res->status == 404) {
    tpuci__sw_set_svc(h, TPUCI__SW_REMOVED);
  } else {
    tpuci__unit_tell(&att->ua,
                     "could not remove service %s: %s; run `tpuci gc` "
                     "to clean up",
                     h->u.name, res->message);
    tpuci__sw_set_svc(h, TPUCI__SW_GONE); /* nothing to wait for */
  }
  tpuci__unit_step(&att->ua);
}

void tpuci__sw_op_remove(tpuci__unit_t *u) {
  tpuci__sw_host_t *h = (tpuci__sw_host_t *) u;
  tpuci__sw_att_t *att = TPUCI__SW_ATT(h);
  if (h->id == NULL || h->svc == TPUCI__SW_REMOVED) return;
  tpuci__unit_req_begin(&att->ua);
  tpuci__sw_service_remove(att->sw->e.eng, h->id, tpuci__sw_on_removed, h);
}

static void tpuci__sw_on_net_removed(void *p, const tpuci__engine_res_t *res);

void tpuci__sw_net_remove(tpuci__unit_att_t *ua) {
  tpuci__sw_att_t *att = (tpuci__sw_att_t *) ua;
  if (tpuci__net_remove(&att->net, tpuci__sw_on_net_removed, att)) tpuci__unit_req_begin(ua);
}

static void tpuci__sw_on_net_removed(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_att_t *att = p;
  int tries = att->net.rm_tries;
  tpuci__unit_req_end(&att->ua);
  if (tpuci__net_remove_again(&att->net, res, TPUCI__SW_NET_RM_TRIES)) {
    /* While the swarm still has endpoints on it: 250 ms more a try, up
     * to a second. */
    tpuci__unit_later(&att->ua, TPUCI__SW_NET_RM_DELAY_MS * (uint64_t) (tries < 4 ? tries : 4),
                      tpuci__sw_net_remove);
    return;
  }
  if (!res->ok && res->status != 404)
    tpuci__unit_tell(&att->ua,
                     "could not remove network %s: %s; run `tpuci "
                     "gc` to clean up",
                     att->net.name, res->message);
  tpuci__unit_step(&att->ua);
}

/* keep, gone, outcome, release. */

char *tpuci__sw_op_keep(tpuci__unit_att_t *ua, tpuci__unit_t *u) {
  tpuci__sw_att_t *att = (tpuci__sw_att_t *) ua;
  const char *n = u != NULL ? u->name : NULL;
  if (u == NULL) return tpuci__net_kept(&att->net, "the attempt's services are on it");
  if (((tpuci__sw_host_t *) u)->id == NULL) return NULL;
  return tpuci__printf("kept service %s: see its output with `docker service "
                       "logs %s`, its task with `docker service ps "
                       "--no-trunc %s`; `tpuci gc` removes it",
                       n, n, n);
}

int tpuci__sw_all_gone(tpuci__sw_att_t *att) {
  size_t i;
  uint64_t now = uv_now(att->sw->e.loop);
  for (i = 0; i < att->ua.nunits; i++) {
    tpuci__sw_host_t *h = TPUCI__SW_HOST(att, i);
    if (h->follow != NULL) {
      /* A stopped task's log, for the results it sends during the grace
       * (a followed log never ends by itself): until their last block
       * came, or a moment after the task (and its container on the
       * manager) went, or the deadline. */
      if (tpuci__logres_done(&h->res) || now >= att->gone_deadline ||
          (TPUCI__SW_WENT(h) && h->linger_at != 0 && now >= h->linger_at))
        tpuci__sw_follow_cancel(h);
      else if (TPUCI__SW_WENT(h) && h->linger_at == 0) h->linger_at = now + TPUCI__SW_LINGER_MS;
      return 0;
    }
    if (TPUCI__SW_WENT(h)) continue;
    if (h->task_id == NULL || h->id == NULL) {
      tpuci__sw_set_svc(h, TPUCI__SW_GONE);
      continue;
    }
    if (now >= att->gone_deadline) {
      tpuci__unit_tell(&att->ua,
                       "the task of service %s is still shutting "
                       "down; `tpuci gc` removes what it leaves",
                       h->u.name);
      tpuci__sw_set_svc(h, TPUCI__SW_GONE);
      continue;
    }
    return 0;
  }
  return 1;
}

/* Why the attempt's output may lack a part, or NULL: the followed log of
 * a task on the manager's node broke while it ran. The engine logs what
 * a container prints only while it runs itself, so what a task printed
 * between the engine's going and its return is lost even though the log
 * was read again. Each such service is also named to the user. New
 * string. */
static char *tpuci__sw_log_lost(tpuci__sw_att_t *att) {
  tpuci__buf_t b;
  size_t i;
  /* An infra attempt says why on its own. */
  if (att->ua.infra != NULL) return NULL;
  tpuci__buf_init(&b);
  for (i = 0; i < att->ua.nunits; i++) {
    tpuci__sw_host_t *h = TPUCI__SW_HOST(att, i);
    char *m;
    if (h->broke == NULL || !tpuci__sw_on_manager(h)) continue;
    m = tpuci__printf("the output of service %s may be incomplete: the "
                      "swarm manager's engine went away while its task ran "
                      "(its log stream: %s); its log was read again, but "
                      "what the task printed until the engine was back is "
                      "not in the engine's log either",
                      h->u.name, h->broke);
    tpuci__attempt_message(att->ua.a, m);
    free(m);
    tpuci__buf_addf(&b, "%sthe engine went away while service %s ran", b.len ? "; " : "",
                    h->u.name);
  }
  if (b.len == 0) {
    tpuci__buf_free(&b);
    return NULL;
  }
  return tpuci__buf_steal(&b);
}

void tpuci__sw_op_outcome(tpuci__unit_att_t *ua, tpuci__gang_verdict_t *v, tpuci__exit_t *ex) {
  tpuci__sw_att_t *att = (tpuci__sw_att_t *) ua;
  ua->log_lost = tpuci__sw_log_lost(att);
  if (ua->infra == NULL && v->host < 0 && ua->signalled) {
    /* Stopped before any task ended: Swarm sent SIGTERM, then SIGKILL
     * after the grace period, when the scheduler's SIGKILL came too (its
     * grace is the service's StopGracePeriod; it arrives after RUN). */
    ex->exit_code = -1;
    ex->term_signal = (ua->signals & (1ull << SIGKILL)) ? SIGKILL : SIGTERM;
    ex->cause = NULL;
  }
}

void tpuci__sw_op_release(tpuci__unit_t *u) {
  tpuci__sw_host_t *h = (tpuci__sw_host_t *) u;
  free(h->id);
  json_decref(h->body);
  free(h->task_id);
  free(h->node_id);
  free(h->container_id);
  free(h->task_err);
  free(h->broke);
  tpuci__logres_free(&h->res);
  tpuci__ctrout_free(&h->out);
}

void tpuci__sw_op_att_release(tpuci__unit_att_t *ua) {
  tpuci__net_free(&((tpuci__sw_att_t *) ua)->net);
  free(((tpuci__sw_att_t *) ua)->key);
  free(((tpuci__sw_att_t *) ua)->sign_id[TPUCI__GATE_GO]);
  free(((tpuci__sw_att_t *) ua)->sign_id[TPUCI__GATE_END]);
}
