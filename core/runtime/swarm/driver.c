/* The swarm runtime driver (runtime/runtime.h): the runtime object,
 * starting an attempt (its services' bodies), the task poll that every
 * running attempt shares, closing. An attempt's phases: attempt.c. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/swarm/swarm.h"

void tpuci__sw_message(tpuci__sw_t *sw, const char *msg) {
  if (sw->rt.on_message != NULL) sw->rt.on_message(&sw->rt, msg);
}

int tpuci__sw_engine(tpuci__sw_t *sw) {
  int rc;
  if (sw->eng != NULL) return 0;
  rc = tpuci__engine_new(sw->loop, &sw->eng, &sw->rt.err);
  if (rc != 0) sw->rt.err.code = TPUCI_EENGINE;
  return rc != 0 ? TPUCI_EENGINE : 0;
}

/* The task poll: one GET /tasks for the services of every running
 * attempt, and one for the tasks of attempts whose services were
 * removed (a removed service's tasks can only be asked for by id). */

static void tpuci__sw_poll_cb(uv_timer_t *t);

void tpuci__sw_poll_start(tpuci__sw_t *sw) {
  if (!sw->poll_init) {
    uv_timer_init(sw->loop, &sw->poll);
    sw->poll.data = sw;
    sw->poll_init = 1;
  }
  if (sw->polling > 0 || uv_is_active((uv_handle_t *) &sw->poll)) return;
  uv_timer_start(&sw->poll, tpuci__sw_poll_cb, TPUCI__SW_POLL_MS, 0);
}

static void tpuci__sw_poll_again(tpuci__sw_t *sw) {
  tpuci__sw_att_t *att;
  if (sw->polling > 0) return;
  for (att = sw->atts; att != NULL; att = att->next)
    if (tpuci__sw_att_polls(att)) {
      tpuci__sw_poll_start(sw);
      return;
    }
  tpuci__sw_maybe_closed(sw);
}

/* The host whose service (by == 0) or task (by == 1) is `id`. */
static tpuci__sw_host_t *tpuci__sw_find(tpuci__sw_t *sw, const char *id,
                                        int by) {
  tpuci__sw_att_t *att;
  size_t i;
  if (id == NULL) return NULL;
  for (att = sw->atts; att != NULL; att = att->next)
    for (i = 0; i < att->nhosts; i++) {
      const char *v = by == 0 ? att->hosts[i].id : att->hosts[i].task_id;
      if (v != NULL && strcmp(v, id) == 0) return &att->hosts[i];
    }
  return NULL;
}

/* Which hosts a poll asks about. */
static int tpuci__sw_wants(const tpuci__sw_host_t *h, int by) {
  const tpuci__sw_att_t *att = h->att;
  if (by == 0)
    return att->phase == TPUCI__SP_RUN && h->id != NULL && !h->terminal &&
           !h->stopped;
  return att->phase == TPUCI__SP_GONE && h->task_id != NULL && h->id != NULL &&
         !h->gone;
}

typedef struct {
  tpuci__sw_t *sw;
  int by;                 /* 0: services (RUN), 1: tasks (GONE) */
  tpuci__strv_t ids;      /* asked about */
} tpuci__sw_poll_t;

static void tpuci__sw_on_poll(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_poll_t *q = p;
  tpuci__sw_t *sw = q->sw;
  size_t i, k;
  json_t *o;

  sw->polling--;
  if (res->ok && json_is_array(res->json)) {
    int *seen = tpuci__calloc(q->ids.len + 1, sizeof(int));
    sw->poll_fails = 0;
    json_array_foreach(res->json, i, o) {
      tpuci__task_t t;
      tpuci__sw_host_t *h;
      tpuci__task_read(o, &t);
      for (k = 0; k < q->ids.len; k++) {
        const char *want = q->by == 0 ? t.service_id : t.id;
        if (want != NULL && strcmp(want, q->ids.items[k]) == 0) seen[k] = 1;
      }
      h = tpuci__sw_find(sw, q->by == 0 ? t.service_id : t.id, q->by);
      if (h != NULL && q->by == 0) tpuci__sw_on_task(h, &t);
    }
    if (q->by == 1) {
      /* Tasks no longer listed are gone; an attempt also checks its
       * deadline. */
      tpuci__sw_att_t *att, *next;
      for (k = 0; k < q->ids.len; k++) {
        tpuci__sw_host_t *h;
        if (seen[k]) continue;
        h = tpuci__sw_find(sw, q->ids.items[k], 1);
        if (h != NULL) tpuci__sw_on_absent(h);
      }
      for (att = sw->atts; att != NULL; att = next) {
        next = att->next;
        if (att->phase == TPUCI__SP_GONE) tpuci__sw_step(att);
      }
    }
    free(seen);
  } else if (res->error != UV_ECANCELED) {
    /* "service <id> not found": removed by someone else. */
    const char *m = res->message;
    tpuci__sw_host_t *h = NULL;
    if (q->by == 0 && res->status == 404 && strncmp(m, "service ", 8) == 0) {
      size_t n = strcspn(m + 8, " ");
      char *id = tpuci__strndup(m + 8, n);
      h = tpuci__sw_find(sw, id, 0);
      free(id);
    }
    if (h != NULL) {
      tpuci__sw_on_absent(h);
    } else if (++sw->poll_fails >= TPUCI__SW_POLL_FAILS) {
      tpuci__sw_att_t *att, *next;
      sw->poll_fails = 0;
      for (att = sw->atts; att != NULL; att = next) {
        next = att->next;
        tpuci__sw_poll_lost(att, m);
      }
    }
  }
  tpuci__strv_free(&q->ids);
  free(q);
  if (!sw->closing || sw->atts != NULL) tpuci__sw_poll_again(sw);
  else tpuci__sw_maybe_closed(sw);
}

static void tpuci__sw_poll_send(tpuci__sw_t *sw, int by) {
  tpuci__sw_poll_t *q = tpuci__calloc(1, sizeof(*q));
  tpuci__sw_att_t *att;
  size_t i;
  q->sw = sw;
  q->by = by;
  for (att = sw->atts; att != NULL; att = att->next)
    for (i = 0; i < att->nhosts; i++)
      if (tpuci__sw_wants(&att->hosts[i], by))
        tpuci__strv_push(&q->ids, by == 0 ? att->hosts[i].id : att->hosts[i].task_id);
  if (q->ids.len == 0) {
    free(q);
    return;
  }
  sw->polling++;
  tpuci__sw_task_list(sw->eng, by == 0 ? "service" : "id",
                      (const char *const *) q->ids.items, q->ids.len,
                      tpuci__sw_on_poll, q);
}

static void tpuci__sw_poll_cb(uv_timer_t *t) {
  tpuci__sw_t *sw = t->data;
  tpuci__sw_att_t *att, *next;
  tpuci__sw_poll_send(sw, 0);
  tpuci__sw_poll_send(sw, 1);
  if (sw->polling > 0) return;
  /* Nothing to ask: attempts in GONE whose hosts need no asking move on. */
  for (att = sw->atts; att != NULL; att = next) {
    next = att->next;
    if (att->phase == TPUCI__SP_GONE) tpuci__sw_step(att);
  }
  tpuci__sw_poll_again(sw);
}

/* Starting an attempt. */

/* The body of host `host`'s service. NULL with err on failure. */
static json_t *tpuci__sw_host_body(tpuci__sw_t *sw, tpuci__sw_att_t *att,
                                   const tpuci__slice_t *slice, int host,
                                   const tpuci__kvlist_t *labels,
                                   tpuci__err_t *err) {
  tpuci__attempt_t *a = att->a;
  const tpuci__instance_t *inst = a->inst;
  const tpuci__plan_t *plan = a->plan;
  tpuci__host_run_t run;
  tpuci__svc_spec_t spec;
  char *constraint = NULL;
  const char *hostname = att->gang ? att->hosts[host].host : NULL;
  json_t *body;

  if (tpuci__host_run_init(&run, a, slice, host, hostname, err) != 0) return NULL;
  /* The results folder is a folder of the manager's machine: the task
   * runs there (docs/swarm.md). */
  if (run.results != NULL && sw->manager_node != NULL)
    constraint = tpuci__printf("node.id==%s", sw->manager_node);
  memset(&spec, 0, sizeof(spec));
  spec.name = att->hosts[host].name;
  spec.image = inst->image >= 0 && (size_t) inst->image < sw->nimages &&
                       sw->images[inst->image] != NULL
                   ? sw->images[inst->image]
                   : plan->images[inst->image].ref;
  spec.argv = a->argv;
  spec.env = &run.env;
  spec.workdir = inst->workdir;
  spec.mounts = run.mounts;
  spec.nmounts = run.nmounts;
  spec.cpus = inst->cpus;
  spec.memory_bytes = inst->memory_bytes;
  spec.labels = labels;
  spec.hostname = hostname;
  spec.network = att->own_net ? att->net_name : inst->network;
  spec.alias = hostname;
  spec.grace_ms = att->grace_ms;
  spec.constraint = constraint;
  spec.ctr = &inst->ctr;
  body = tpuci__svc_create_body(&spec);
  free(constraint);
  tpuci__host_run_free(&run);
  return body;
}

static int tpuci__sw_att_bodies(tpuci__sw_t *sw, tpuci__sw_att_t *att,
                                const tpuci__slice_t *slice) {
  tpuci__attempt_t *a = att->a;
  const tpuci__instance_t *inst = a->inst;
  tpuci__kvlist_t labels = {0};
  size_t i;
  int rc = 0;

  tpuci__ctr_labels(&labels, a->run_id, inst->job, inst->name, a->number,
                    a->keep_on_failure);
  if (att->own_net) {
    att->net_name = tpuci__sw_name(a->run_id, inst->name, a->number, -1);
    att->net_body = tpuci__sw_net_body(att->net_name, &labels);
  }
  for (i = 0; i < att->nhosts; i++) {
    tpuci__sw_host_t *h = &att->hosts[i];
    h->body = tpuci__sw_host_body(sw, att, slice, (int) i, &labels, &sw->rt.err);
    if (h->body == NULL) {
      rc = sw->rt.err.code ? sw->rt.err.code : TPUCI_EUSAGE;
      break;
    }
    if (att->gang)
      tpuci__ctrout_open_log(&h->out, tpuci__printf("%s/attempt-%d.%s.log", a->dir,
                                                    a->number, h->host));
  }
  tpuci__kv_free(&labels);
  return rc;
}

int tpuci__sw_start(tpuci__runtime_t *rt, tpuci__attempt_t *a) {
  tpuci__sw_t *sw = (tpuci__sw_t *) rt;
  const tpuci__instance_t *inst = a->inst;
  const tpuci__plan_t *plan = a->plan;
  tpuci__sw_att_t *att;
  tpuci__slice_t slice;
  int has_slice = 0;
  size_t i, hosts = 1;
  int rc;

  if (sw->closing)
    return tpuci__err_set(&rt->err, TPUCI_ESTATE, "the swarm runtime is closing");
  if (inst->image < 0 || (size_t) inst->image >= plan->nimages)
    return tpuci__err_set(&rt->err, TPUCI_EUSAGE,
                          "%s: job '%s' has no image for the swarm runtime",
                          inst->where ? inst->where : "spec", inst->name);
  if (inst->topology >= 0 && (size_t) inst->topology < plan->ntopologies) {
    rc = tpuci__topology_slice(&plan->topologies[inst->topology], &slice, &rt->err);
    if (rc != 0) return rc;
    has_slice = 1;
    hosts = (size_t) slice.hosts;
    if (a->hosts > 0 && (size_t) a->hosts < hosts) hosts = (size_t) a->hosts;
    if (hosts > 1 && inst->network != NULL) {
      tpuci__slice_free(&slice);
      return tpuci__err_set(&rt->err, TPUCI_EUSAGE,
                            "%s: job '%s': network = \"%s\" cannot be used "
                            "with a gang: its hosts get a network of their own",
                            inst->where ? inst->where : "spec", inst->job,
                            inst->network);
    }
  }
  rc = tpuci__sw_engine(sw);
  if (rc != 0) {
    if (has_slice) tpuci__slice_free(&slice);
    return rc;
  }
  att = tpuci__calloc(1, sizeof(*att));
  att->sw = sw;
  att->a = a;
  att->gang = hosts > 1;
  /* Swarm services have no network "none": an internal overlay network
   * of the attempt's own has no way out either. */
  att->own_net = att->gang || (inst->network != NULL && strcmp(inst->network, "none") == 0);
  att->nhosts = hosts;
  att->phase = att->own_net ? TPUCI__SP_NETWORK : TPUCI__SP_CREATE;
  att->grace_ms = a->grace_ms ? a->grace_ms
                  : inst->grace_ms ? inst->grace_ms : TPUCI__SW_GRACE_MS;
  att->hosts = tpuci__calloc(hosts, sizeof(*att->hosts));
  for (i = 0; i < hosts; i++) {
    tpuci__sw_host_t *h = &att->hosts[i];
    h->att = att;
    h->index = (int) i;
    if (att->gang) {
      h->name = tpuci__sw_name(a->run_id, inst->name, a->number, (int) i);
      h->host = tpuci__printf(TPUCI__GANG_HOST_FMT, (int) i);
    } else {
      h->name = tpuci__sw_name(a->run_id, inst->name, a->number, -1);
    }
    tpuci__ctrout_init(&h->out, a, h->host);
  }
  rc = tpuci__sw_att_bodies(sw, att, has_slice ? &slice : NULL);
  if (has_slice) tpuci__slice_free(&slice);
  if (rc != 0) {
    /* Nothing was made; free it all (no timer yet). */
    for (i = 0; i < att->nhosts; i++) {
      tpuci__sw_host_t *h = &att->hosts[i];
      free(h->name);
      free(h->host);
      json_decref(h->body);
      tpuci__ctrout_free(&h->out);
    }
    free(att->hosts);
    free(att->net_name);
    json_decref(att->net_body);
    free(att);
    return rc;
  }
  uv_timer_init(sw->loop, &att->timer);
  att->timer.data = att;
  att->next = sw->atts;
  if (sw->atts) sw->atts->prev = att;
  sw->atts = att;
  a->rt_data = att;
  if (att->own_net) {
    att->requests++;
    tpuci__engine_network_create(sw->eng, att->net_body, tpuci__sw_on_net_created,
                                 att);
    return 0;
  }
  for (i = 0; i < att->nhosts; i++) {
    att->requests++;
    tpuci__sw_service_create(sw->eng, att->hosts[i].body,
                             tpuci__sw_host_auth(&att->hosts[i]),
                             tpuci__sw_on_created, &att->hosts[i]);
  }
  return 0;
}

/* Closing. */

static void tpuci__sw_engine_closed(void *p) {
  tpuci__sw_t *sw = p;
  void (*cb)(tpuci__runtime_t *) = sw->close_cb;
  sw->eng = NULL;
  sw->close_cb = NULL;
  if (cb) cb(&sw->rt);
}

static void tpuci__sw_poll_closed(uv_handle_t *h) {
  tpuci__sw_t *sw = h->data;
  sw->handles--;
  tpuci__sw_maybe_closed(sw);
}

void tpuci__sw_maybe_closed(tpuci__sw_t *sw) {
  if (!sw->closing || sw->atts != NULL || sw->bg > 0 || sw->polling > 0 ||
      sw->prepare_cb != NULL)
    return;
  if (sw->poll_init) {
    sw->poll_init = 0;
    sw->handles++;
    uv_close((uv_handle_t *) &sw->poll, tpuci__sw_poll_closed);
    return;
  }
  if (sw->handles > 0) return;
  if (sw->eng == NULL) {
    void (*cb)(tpuci__runtime_t *) = sw->close_cb;
    sw->close_cb = NULL;
    if (cb) cb(&sw->rt);
    return;
  }
  if (!sw->eng->closing) tpuci__engine_close(sw->eng, tpuci__sw_engine_closed, sw);
}

static void tpuci__sw_close(tpuci__runtime_t *rt, void (*cb)(tpuci__runtime_t *rt)) {
  tpuci__sw_t *sw = (tpuci__sw_t *) rt;
  sw->closing = 1;
  sw->close_cb = cb;
  tpuci__sw_maybe_closed(sw);
}

static void tpuci__sw_free(tpuci__runtime_t *rt) {
  tpuci__sw_t *sw = (tpuci__sw_t *) rt;
  size_t i;
  if (sw == NULL) return;
  free(sw->run_id);
  free(sw->manager_node);
  for (i = 0; i < sw->nimages; i++) {
    free(sw->images[i]);
    if (sw->auths != NULL) tpuci__wipe_free(sw->auths[i]);
  }
  free(sw->images);
  free(sw->auths);
  json_decref(sw->nodes);
  tpuci__err_clear(&sw->rt.err);
  free(sw);
}

int tpuci__runtime_swarm_new(uv_loop_t *loop, const tpuci__runtime_opts_t *opts,
                             tpuci__runtime_t **out, tpuci__err_t *err) {
  tpuci__sw_t *sw = tpuci__calloc(1, sizeof(*sw));
  (void) err;
  sw->rt.name = "swarm";
  sw->rt.loop = loop;
  sw->rt.prepare = tpuci__sw_prepare;
  sw->rt.abort = tpuci__sw_abort;
  sw->rt.start = tpuci__sw_start;
  sw->rt.signal = tpuci__sw_signal;
  sw->rt.close = tpuci__sw_close;
  sw->rt.free = tpuci__sw_free;
  sw->loop = loop;
  sw->run_id = tpuci__strdup(opts && opts->run_id ? opts->run_id : "");
  sw->keep_failed = opts ? opts->keep_failed : 0;
  *out = &sw->rt;
  return 0;
}
