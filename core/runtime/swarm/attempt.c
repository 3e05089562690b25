/* The swarm runtime driver: one attempt is a service per emulated host
 * (one for a single-host job), each with one replica that is never
 * restarted, on an overlay network of the attempt's own for a gang.
 *
 * An attempt moves through phases; a phase ends when every request of
 * the attempt has completed (att->requests == 0) and, for RUN, when the
 * run is over:
 *
 *   NETWORK POST /networks/create (gangs: overlay, attachable, internal)
 *   CREATE  POST /services/create for each host
 *   RUN     the runtime's task poll (driver.c) tells each host what its
 *           task does. Once it runs, GET /tasks/{id}/logs?follow=1
 *           brings its output live; once it ended, that stream is
 *           cancelled (a followed task log never ends by itself) and a
 *           plain read brings what it had not (bytes counted per stream).
 *           An exit 137 under a memory limit is inspected on the manager
 *           (State.OOMKilled) when the task ran there. The run is over
 *           when every host's task ended, when the scheduler signals it,
 *           when a host of a gang failed on its own, or on a failure
 *           that is not the job's (infra).
 *   REMOVE  DELETE /services/{id} for each (Swarm stops a task that
 *           still runs: SIGTERM, StopGracePeriod, SIGKILL), unless kept
 *   GONE    the poll, until every host's task is gone from the swarm
 *           (and its container from the manager, when it ran there)
 *   UNNET   DELETE /networks/{id} (gangs), retried while the swarm still
 *           has endpoints on it
 *   then    tpuci__attempt_done(), and the attempt's timer is closed
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/swarm/swarm.h"

static void tpuci__sw_infra(tpuci__sw_att_t *att, char *msg) {
  if (att->infra == NULL) att->infra = msg;
  else free(msg);
}

/* Output. */

static void tpuci__sw_on_read(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_host_t *h = p;
  tpuci__sw_att_t *att = h->att;
  att->requests--;
  h->logs_done = 1;
  tpuci__ctrout_flush(&h->out);
  if (!res->ok && res->error != UV_ECANCELED) {
    char *m = tpuci__printf("the output of service %s may be incomplete: "
                            "reading its task's logs failed: %s",
                            h->name, res->message);
    tpuci__attempt_message(att->a, m);
    free(m);
  }
  tpuci__sw_step(att);
}

/* Once the task ended and its followed stream is over: the whole log,
 * past what the stream brought. */
static void tpuci__sw_read_rest(tpuci__sw_host_t *h) {
  tpuci__sw_att_t *att = h->att;
  if (h->refetched || h->follow != NULL || h->task_id == NULL) return;
  h->refetched = 1;
  if (h->container_id == NULL) {
    h->logs_done = 1; /* it never ran: nothing to read */
    tpuci__ctrout_flush(&h->out);
    return;
  }
  tpuci__ctrout_rewind(&h->out);
  att->requests++;
  tpuci__sw_task_logs(att->sw->eng, h->task_id, 0, tpuci__ctrout_chunk, &h->out,
                      tpuci__sw_on_read, h);
}

static void tpuci__sw_on_follow_end(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_host_t *h = p;
  tpuci__sw_att_t *att = h->att;
  att->requests--;
  h->follow = NULL;
  if (!h->follow_cancelled && !h->terminal && !h->stopped &&
      res->error != UV_ECANCELED) {
    /* A followed task log never ends by itself: the engine went away
     * (a restart) or the connection broke. The poll follows it again
     * once the task is seen running. */
    h->follow_broken = 1;
    free(h->broke);
    h->broke = tpuci__strdup(res->ok || *res->message == '\0'
                                 ? "the engine ended the stream"
                                 : res->message);
  }
  h->follow_cancelled = 0;
  /* What a frame cut by the cancel held comes again with the read; a
   * stopped host's output ends here. */
  if (h->terminal && !h->stopped) tpuci__sw_read_rest(h);
  else if (h->terminal || h->stopped || att->stop || att->gang_stop || att->infra)
    tpuci__ctrout_flush(&h->out);
  tpuci__sw_step(att);
}

static void tpuci__sw_follow_cancel(tpuci__sw_host_t *h) {
  if (h->follow == NULL || h->follow_cancelled) return;
  h->follow_cancelled = 1;
  tpuci__engine_cancel(h->att->sw->eng, h->follow);
}

/* The run is over before every task ended (a signal, a gang's host that
 * failed, an engine failure): the streams of the others end. */
static void tpuci__sw_halt(tpuci__sw_att_t *att) {
  size_t i;
  for (i = 0; i < att->nhosts; i++) {
    tpuci__sw_host_t *h = &att->hosts[i];
    if (!h->terminal) tpuci__sw_follow_cancel(h);
  }
}

/* RUN: what the poll says. */

static void tpuci__sw_on_inspected(void *p, const tpuci__engine_res_t *res);

static void tpuci__sw_timer_cb(uv_timer_t *t) {
  tpuci__sw_att_t *att = t->data;
  size_t i;
  att->timer_pending = 0;
  att->requests--;
  if (att->phase == TPUCI__SP_RUN) {
    for (i = 0; i < att->nhosts; i++) {
      tpuci__sw_host_t *h = &att->hosts[i];
      if (h->inspect_tries <= 0 || h->oom || h->stopped) continue;
      if (h->inspect_tries > 0 && h->inspect_tries < 100) {
        h->inspect_tries += 100; /* asked */
        att->requests++;
        tpuci__engine_container_inspect(att->sw->eng, h->container_id,
                                        tpuci__sw_on_inspected, h);
      }
    }
  }
  tpuci__sw_step(att);
}

static void tpuci__sw_on_inspected(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_host_t *h = p;
  tpuci__sw_att_t *att = h->att;
  int tries = h->inspect_tries - 100;
  att->requests--;
  h->inspect_tries = tries;
  if (res->ok) {
    json_t *state = json_object_get(res->json, "State");
    h->oom = json_is_true(json_object_get(state, "OOMKilled"));
    /* The engine may record the OOM kill a moment after the exit. */
    if (!h->oom && tries < 5 && !att->stop) {
      h->inspect_tries = tries + 1;
      if (!att->timer_pending) {
        att->timer_pending = 1;
        att->requests++;
        uv_timer_start(&att->timer, tpuci__sw_timer_cb, 200, 0);
      }
      return;
    }
  }
  /* Its container says no OOM kill: Docker misses some (docker.md). */
  if (res->ok && !h->oom) h->oom_unreported = TPUCI__OOM_PROBABLY;
  h->inspect_tries = 0;
  tpuci__sw_step(att);
}

/* A task that ended by SIGKILL (137) under a memory limit, not sent by
 * tpuci: on the manager's node its container says whether the kernel
 * killed it for memory; on another node tpuci cannot ask, and takes it
 * for an OOM kill (docs/swarm.md). */
static void tpuci__sw_oom_check(tpuci__sw_host_t *h) {
  tpuci__sw_att_t *att = h->att;
  tpuci__sw_t *sw = att->sw;
  if (h->exit_code != 137 || att->a->inst->memory_bytes == 0 || att->stop)
    return;
  if (h->node_id != NULL && sw->manager_node != NULL &&
      strcmp(h->node_id, sw->manager_node) == 0 && h->container_id != NULL) {
    h->inspect_tries = 101;
    att->requests++;
    tpuci__engine_container_inspect(sw->eng, h->container_id,
                                    tpuci__sw_on_inspected, h);
    return;
  }
  h->oom = 1;
}

/* Whether host h's task ran on the manager's node (or nobody said where):
 * the engine tpuci talks to kept its container and its log. */
static int tpuci__sw_on_manager(const tpuci__sw_host_t *h) {
  const tpuci__sw_t *sw = h->att->sw;
  return h->node_id == NULL || sw->manager_node == NULL ||
         strcmp(h->node_id, sw->manager_node) == 0;
}

/* Whether a task that ended with `code` was stopped by the manager's
 * engine coming back rather than by the job: it ran on the manager, its
 * followed log broke (the engine went away), and it ended by a signal
 * (exit 128+n) tpuci did not cause. */
static int tpuci__sw_engine_killed(const tpuci__sw_host_t *h, long code) {
  return h->follow_broken && tpuci__sw_on_manager(h) && code > 128 &&
         code < 160 && !h->att->stop;
}

static void tpuci__sw_gang_stop(tpuci__sw_att_t *att) {
  if (att->gang_stop) return;
  att->gang_stop = 1;
  tpuci__sw_halt(att);
}

static void tpuci__sw_set(char **field, const char *v) {
  if (v == NULL || (*field != NULL && strcmp(*field, v) == 0)) return;
  free(*field);
  *field = tpuci__strdup(v);
}

void tpuci__sw_on_task(tpuci__sw_host_t *h, const tpuci__task_t *t) {
  tpuci__sw_att_t *att = h->att;
  uint64_t now = uv_now(att->sw->loop);

  if (att->phase != TPUCI__SP_RUN || h->terminal || h->stopped || t->id == NULL)
    return;
  /* With no restarts there is one task; a second would be the swarm's
   * replacement, and the first decides. */
  if (h->task_id == NULL) h->task_id = tpuci__strdup(t->id);
  else if (strcmp(h->task_id, t->id) != 0) return;
  tpuci__sw_set(&h->node_id, t->node_id);
  tpuci__sw_set(&h->container_id, t->container_id);
  h->state = t->state;

  if (t->state < TPUCI__TS_ASSIGNED) {
    if (h->pending_since == 0) h->pending_since = now;
    if (!h->told_pending && t->err != NULL &&
        now - h->pending_since >= TPUCI__SW_PENDING_TELL_MS) {
      char *m = tpuci__printf("service %s waits for a node: %s", h->name,
                              t->err);
      h->told_pending = 1;
      tpuci__attempt_message(att->a, m);
      free(m);
    }
  }
  /* Followed once, and again after the stream broke (the engine came
   * back): the new stream skips what the old one passed on, and the
   * read after the end brings what both missed. */
  if (t->state >= TPUCI__TS_RUNNING && h->follow == NULL && !h->refetched &&
      !tpuci__task_state_terminal(t->state) &&
      (!h->followed ||
       (h->follow_broken && h->refollows < TPUCI__SW_REFOLLOWS))) {
    if (h->followed) {
      h->refollows++;
      tpuci__ctrout_rewind(&h->out);
    }
    h->followed = 1;
    att->requests++;
    h->follow = tpuci__sw_task_logs(att->sw->eng, h->task_id, 1,
                                    tpuci__ctrout_chunk, &h->out,
                                    tpuci__sw_on_follow_end, h);
  }
  if (!tpuci__task_state_terminal(t->state)) return;

  h->terminal = 1;
  h->order = ++att->ends;
  {
    char *why = NULL;
    if (tpuci__task_end(t, &why) == TPUCI__TASK_INFRA) {
      h->ended_infra = 1;
      tpuci__sw_infra(att, tpuci__printf("swarm: the task of service %s %s",
                                         h->name, why));
      free(why);
      tpuci__sw_halt(att);
    } else if (tpuci__sw_engine_killed(h, t->exit_code)) {
      h->ended_infra = 1;
      tpuci__sw_infra(att, tpuci__printf(
          "swarm: the task of service %s ended by signal %ld (exit %ld) "
          "after the manager's engine went away while it ran (its log "
          "stream: %s): a restarting engine stops the containers it finds "
          "running",
          h->name, t->exit_code - 128, t->exit_code, h->broke));
      tpuci__sw_halt(att);
    } else {
      h->exit_code = t->exit_code;
      tpuci__sw_oom_check(h);
      if (h->exit_code != 0 && att->gang) tpuci__sw_gang_stop(att);
    }
  }
  if (h->follow != NULL) tpuci__sw_follow_cancel(h);
  else tpuci__sw_read_rest(h);
  tpuci__sw_step(att);
}

static void tpuci__sw_on_ctr_looked(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_host_t *h = p;
  tpuci__sw_att_t *att = h->att;
  att->requests--;
  h->ctr_asking = 0;
  /* Still there: asked again at the next poll. */
  if (res->status == 404 || res->error != 0) h->gone = 1;
  tpuci__sw_step(att);
}

void tpuci__sw_on_absent(tpuci__sw_host_t *h) {
  tpuci__sw_att_t *att = h->att;
  if (att->phase == TPUCI__SP_RUN) {
    if (h->terminal || h->stopped) return;
    /* Someone else removed the service. */
    h->stopped = 1;
    h->removed = 1;
    tpuci__sw_infra(att, tpuci__printf("swarm: service %s was removed while "
                                       "it ran (not by tpuci)",
                                       h->name));
    tpuci__sw_halt(att);
    tpuci__sw_step(att);
    return;
  }
  if (att->phase == TPUCI__SP_GONE && !h->gone && !h->ctr_asking) {
    tpuci__sw_t *sw = att->sw;
    if (h->container_id != NULL && h->node_id != NULL &&
        sw->manager_node != NULL && strcmp(h->node_id, sw->manager_node) == 0) {
      /* Its container, on the manager, goes a moment after the task. */
      h->ctr_asking = 1;
      att->requests++;
      tpuci__engine_container_inspect(sw->eng, h->container_id,
                                      tpuci__sw_on_ctr_looked, h);
      return;
    }
    h->gone = 1;
    tpuci__sw_step(att);
  }
}

void tpuci__sw_poll_lost(tpuci__sw_att_t *att, const char *why) {
  if (att->phase != TPUCI__SP_RUN) {
    if (att->phase == TPUCI__SP_GONE) {
      size_t i;
      for (i = 0; i < att->nhosts; i++) att->hosts[i].gone = 1;
      tpuci__sw_step(att);
    }
    return;
  }
  tpuci__sw_infra(att, tpuci__printf("swarm: asking for the tasks failed: %s",
                                     why));
  tpuci__sw_halt(att);
  tpuci__sw_step(att);
}

/* CREATE and NETWORK. */

static char *tpuci__sw_suffixed(const char *name) {
  unsigned tag = (unsigned) ((uint64_t) uv_hrtime() ^ ((uint64_t) getpid() << 16));
  char *base = tpuci__strdup(name);
  char *s;
  if (strlen(base) > TPUCI__SW_NAME_MAX - 7) base[TPUCI__SW_NAME_MAX - 7] = '\0';
  s = tpuci__printf("%s-%06x", base, tag & 0xffffffu);
  free(base);
  return s;
}

void tpuci__sw_on_created(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_host_t *h = p;
  tpuci__sw_att_t *att = h->att;
  att->requests--;
  if (res->status == 409 && h->create_tries < 3 && !att->stop) {
    /* The name is taken (run ids are unique per state folder only). */
    char *name = tpuci__sw_suffixed(h->name);
    free(h->name);
    h->name = name;
    h->create_tries++;
    json_object_set_new(h->body, "Name", json_string(name));
    att->requests++;
    tpuci__sw_service_create(att->sw->eng, h->body, tpuci__sw_host_auth(h),
                             tpuci__sw_on_created, h);
    return;
  }
  if (res->ok) {
    const char *id = json_string_value(json_object_get(res->json, "ID"));
    if (id != NULL) h->id = tpuci__strdup(id);
    else
      tpuci__sw_infra(att, tpuci__printf("swarm: creating service %s: the "
                                         "answer has no ID",
                                         h->name));
  } else {
    tpuci__sw_infra(att, tpuci__printf("swarm: creating service %s failed: %s",
                                       h->name, res->message));
  }
  tpuci__sw_step(att);
}

void tpuci__sw_on_net_created(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_att_t *att = p;
  att->requests--;
  if (res->status == 409 && att->net_tries < 3 && !att->stop) {
    char *name = tpuci__sw_suffixed(att->net_name);
    free(att->net_name);
    att->net_name = name;
    att->net_tries++;
    json_object_set_new(att->net_body, "Name", json_string(name));
    att->requests++;
    tpuci__engine_network_create(att->sw->eng, att->net_body,
                                 tpuci__sw_on_net_created, att);
    return;
  }
  if (res->ok) {
    const char *id = json_string_value(json_object_get(res->json, "Id"));
    if (id != NULL) att->net_id = tpuci__strdup(id);
    else
      tpuci__sw_infra(att, tpuci__strdup("swarm: creating the gang's network: "
                                         "the answer has no Id"));
  } else {
    tpuci__sw_infra(att, tpuci__printf("swarm: creating network %s failed: %s",
                                       att->net_name, res->message));
  }
  tpuci__sw_step(att);
}

/* REMOVE, GONE, UNNET. */

static void tpuci__sw_on_removed(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_host_t *h = p;
  tpuci__sw_att_t *att = h->att;
  att->requests--;
  if (res->ok || res->status == 404) {
    h->removed = 1;
  } else {
    char *m = tpuci__printf("could not remove service %s: %s; run `tpuci gc` "
                            "to clean up",
                            h->name, res->message);
    tpuci__attempt_message(att->a, m);
    free(m);
    h->gone = 1; /* nothing to wait for */
  }
  tpuci__sw_step(att);
}

static void tpuci__sw_net_remove(tpuci__sw_att_t *att);

static void tpuci__sw_net_retry_cb(uv_timer_t *t) {
  tpuci__sw_att_t *att = t->data;
  att->timer_pending = 0;
  att->requests--;
  tpuci__sw_net_remove(att);
}

static void tpuci__sw_on_net_removed(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_att_t *att = p;
  att->requests--;
  if (!res->ok && res->status != 404) {
    if (res->error == 0 && res->status != 0 &&
        att->net_rm_tries < TPUCI__SW_NET_RM_TRIES) {
      att->timer_pending = 1;
      att->requests++;
      uv_timer_start(&att->timer, tpuci__sw_net_retry_cb,
                     TPUCI__SW_NET_RM_DELAY_MS * (uint64_t) (att->net_rm_tries < 4 ? att->net_rm_tries : 4), 0);
      return;
    } else {
      char *m = tpuci__printf("could not remove network %s: %s; run `tpuci "
                              "gc` to clean up",
                              att->net_name, res->message);
      tpuci__attempt_message(att->a, m);
      free(m);
    }
  }
  tpuci__sw_step(att);
}

static void tpuci__sw_net_remove(tpuci__sw_att_t *att) {
  att->net_rm_tries++;
  att->requests++;
  tpuci__engine_network_remove(att->sw->eng, att->net_id,
                               tpuci__sw_on_net_removed, att);
}

int tpuci__sw_att_polls(const tpuci__sw_att_t *att) {
  return att->phase == TPUCI__SP_RUN || att->phase == TPUCI__SP_GONE;
}

/* Whether the attempt failed on its own (for --keep-failed). */
static int tpuci__sw_failed_alone(const tpuci__sw_att_t *att) {
  size_t i;
  if (att->infra != NULL || att->stop || att->signals != 0) return 0;
  for (i = 0; i < att->nhosts; i++)
    if (att->hosts[i].terminal && (att->hosts[i].exit_code != 0 || att->hosts[i].oom))
      return 1;
  return 0;
}

static void tpuci__sw_keep(tpuci__sw_att_t *att) {
  size_t i;
  for (i = 0; i < att->nhosts; i++) {
    const char *n = att->hosts[i].name;
    char *m;
    if (att->hosts[i].id == NULL) continue;
    m = tpuci__printf("kept service %s: see its output with `docker service "
                      "logs %s`, its task with `docker service ps "
                      "--no-trunc %s`; `tpuci gc` removes it",
                      n, n, n);
    tpuci__attempt_message(att->a, m);
    free(m);
  }
  if (att->net_id != NULL) {
    char *m = tpuci__printf("kept network %s (the attempt's services are on "
                            "it); `tpuci gc` removes it",
                            att->net_name);
    tpuci__attempt_message(att->a, m);
    free(m);
  }
}

/* The end. */

static void tpuci__sw_att_closed(uv_handle_t *handle) {
  tpuci__sw_att_t *att = handle->data;
  tpuci__sw_t *sw = att->sw;
  free(att);
  sw->handles--;
  tpuci__sw_maybe_closed(sw);
}

static void tpuci__sw_att_release(tpuci__sw_att_t *att) {
  size_t i;
  for (i = 0; i < att->nhosts; i++) {
    tpuci__sw_host_t *h = &att->hosts[i];
    free(h->name);
    free(h->id);
    free(h->host);
    json_decref(h->body);
    free(h->task_id);
    free(h->node_id);
    free(h->container_id);
    free(h->broke);
    tpuci__ctrout_free(&h->out);
  }
  free(att->hosts);
  att->hosts = NULL;
  att->nhosts = 0;
  free(att->infra);
  free(att->net_name);
  free(att->net_id);
  json_decref(att->net_body);
  att->infra = att->net_name = att->net_id = NULL;
  att->net_body = NULL;
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
  if (att->infra != NULL) return NULL;
  tpuci__buf_init(&b);
  for (i = 0; i < att->nhosts; i++) {
    tpuci__sw_host_t *h = &att->hosts[i];
    char *m;
    if (!h->follow_broken || !tpuci__sw_on_manager(h)) continue;
    m = tpuci__printf("the output of service %s may be incomplete: the "
                      "swarm manager's engine went away while its task ran "
                      "(its log stream: %s); its log was read again, but "
                      "what the task printed until the engine was back is "
                      "not in the engine's log either",
                      h->name, h->broke);
    tpuci__attempt_message(att->a, m);
    free(m);
    tpuci__buf_addf(&b, "%sthe engine went away while service %s ran",
                    b.len ? "; " : "", h->name);
  }
  if (b.len == 0) {
    tpuci__buf_free(&b);
    return NULL;
  }
  return tpuci__buf_steal(&b);
}

static void tpuci__sw_finish(tpuci__sw_att_t *att) {
  tpuci__sw_t *sw = att->sw;
  tpuci__attempt_t *a = att->a;
  tpuci__gang_verdict_t v;
  tpuci__exit_t ex;
  char *lost = tpuci__sw_log_lost(att);
  size_t i;

  memset(&ex, 0, sizeof(ex));
  ex.log_lost = lost;
  memset(&v, 0, sizeof(v));
  ex.exit_code = -1;
  if (att->infra != NULL) {
    ex.infra = 1;
    ex.cause = att->infra;
  } else {
    tpuci__gang_host_t *hs = tpuci__calloc(att->nhosts, sizeof(*hs));
    for (i = 0; i < att->nhosts; i++) {
      const tpuci__sw_host_t *h = &att->hosts[i];
      hs[i].name = h->host;
      hs[i].exited = h->terminal && !h->ended_infra;
      hs[i].status = h->exit_code;
      hs[i].oom = h->oom;
      hs[i].oom_unreported = h->oom_unreported;
      hs[i].signals = h->stopped ? att->signals : 0;
      hs[i].stopped = h->stopped;
      hs[i].order = h->order;
    }
    tpuci__gang_verdict(hs, att->nhosts, a->inst->memory_bytes, &v);
    free(hs);
    ex.exit_code = v.exit_code;
    ex.term_signal = v.term_signal;
    ex.oom = v.oom;
    ex.cause = v.cause;
    if (v.host < 0 && att->stop) {
      /* Stopped before any task ended: Swarm sent SIGTERM (then SIGKILL
       * after the grace period). */
      ex.exit_code = -1;
      ex.term_signal = (att->signals & (1ull << SIGKILL)) ? SIGKILL : SIGTERM;
      ex.cause = NULL;
    }
  }
  if (att->prev) att->prev->next = att->next;
  else sw->atts = att->next;
  if (att->next) att->next->prev = att->prev;
  a->rt_data = NULL;
  sw->handles++;
  tpuci__attempt_done(a, &ex);
  tpuci__gang_verdict_free(&v);
  free(lost);
  tpuci__sw_att_release(att);
  uv_close((uv_handle_t *) &att->timer, tpuci__sw_att_closed);
}

/* Whether RUN is over: every task ended (and its output and OOM check are
 * in), or it was cut short. */
static int tpuci__sw_run_over(const tpuci__sw_att_t *att) {
  size_t i;
  if (att->stop || att->gang_stop || att->infra != NULL) return 1;
  for (i = 0; i < att->nhosts; i++)
    if (!att->hosts[i].terminal) return 0;
  return 1;
}

static int tpuci__sw_all_gone(tpuci__sw_att_t *att) {
  size_t i;
  uint64_t now = uv_now(att->sw->loop);
  for (i = 0; i < att->nhosts; i++) {
    tpuci__sw_host_t *h = &att->hosts[i];
    if (h->gone) continue;
    if (h->task_id == NULL || h->id == NULL) {
      h->gone = 1;
      continue;
    }
    if (now >= att->gone_deadline) {
      char *m = tpuci__printf("the task of service %s is still shutting "
                              "down; `tpuci gc` removes what it leaves",
                              h->name);
      tpuci__attempt_message(att->a, m);
      free(m);
      h->gone = 1;
      continue;
    }
    return 0;
  }
  return 1;
}

void tpuci__sw_step(tpuci__sw_att_t *att) {
  tpuci__engine_t *eng = att->sw->eng;
  size_t i;

  while (att->requests == 0) {
    switch (att->phase) {
      case TPUCI__SP_NETWORK:
        json_decref(att->net_body);
        att->net_body = NULL;
        if (att->infra != NULL || att->stop) {
          att->phase = TPUCI__SP_GONE;
          att->gone_deadline = 0;
          break;
        }
        att->phase = TPUCI__SP_CREATE;
        for (i = 0; i < att->nhosts; i++) {
          tpuci__sw_host_t *h = &att->hosts[i];
          json_t *nets = json_object_get(json_object_get(h->body, "TaskTemplate"), "Networks");
          json_object_set_new(json_array_get(nets, 0), "Target",
                              json_string(att->net_id));
          att->requests++;
          tpuci__sw_service_create(eng, h->body, tpuci__sw_host_auth(h),
                                   tpuci__sw_on_created, h);
        }
        break;
      case TPUCI__SP_CREATE:
        for (i = 0; i < att->nhosts; i++) {
          json_decref(att->hosts[i].body);
          att->hosts[i].body = NULL;
        }
        att->phase = TPUCI__SP_RUN;
        tpuci__sw_poll_start(att->sw);
        break;
      case TPUCI__SP_RUN:
        if (!tpuci__sw_run_over(att)) return;
        att->phase = TPUCI__SP_REMOVE;
        for (i = 0; i < att->nhosts; i++)
          if (!att->hosts[i].terminal) att->hosts[i].stopped = 1;
        if (att->a->keep_on_failure && tpuci__sw_failed_alone(att)) {
          tpuci__sw_keep(att);
          att->phase = TPUCI__SP_DONE;
          break;
        }
        for (i = 0; i < att->nhosts; i++) {
          tpuci__sw_host_t *h = &att->hosts[i];
          if (h->id == NULL || h->removed) continue;
          att->requests++;
          tpuci__sw_service_remove(eng, h->id, tpuci__sw_on_removed, h);
        }
        break;
      case TPUCI__SP_INSPECT:
      case TPUCI__SP_REMOVE:
        att->phase = TPUCI__SP_GONE;
        att->gone_deadline = uv_now(att->sw->loop) + att->grace_ms + TPUCI__SW_GONE_MS;
        tpuci__sw_poll_start(att->sw);
        break;
      case TPUCI__SP_GONE:
        if (!tpuci__sw_all_gone(att)) return;
        att->phase = TPUCI__SP_UNNET;
        if (att->net_id != NULL) tpuci__sw_net_remove(att);
        break;
      case TPUCI__SP_UNNET:
      case TPUCI__SP_DONE: {
        tpuci__sw_t *sw = att->sw;
        att->phase = TPUCI__SP_DONE;
        tpuci__sw_finish(att);
        tpuci__sw_maybe_closed(sw);
        return;
      }
    }
  }
}

int tpuci__sw_signal(tpuci__runtime_t *rt, tpuci__attempt_t *a, int signum) {
  tpuci__sw_att_t *att = a->rt_data;
  (void) rt;
  if (att == NULL || att->phase > TPUCI__SP_RUN) return 0;
  if (signum > 0 && signum < 64) att->signals |= 1ull << signum;
  /* Removing the services is the signal: Swarm sends SIGTERM, waits the
   * StopGracePeriod (the grace) and sends SIGKILL. */
  att->stop = 1;
  tpuci__sw_halt(att);
  tpuci__sw_step(att);
  return 0;
}
