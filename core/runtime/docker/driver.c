/* The docker runtime driver (runtime/runtime.h): the runtime object,
 * starting and signalling attempts (their phases: attempt.c; the checks
 * before a run: prepare.c), closing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/engine/container.h"
#include "runtime/engine/gang.h"
#include "runtime/docker/driver.h"

/* The runtime interface. */

/* The containers of an attempt: their create bodies, the gang's network
 * body and the per-host log files. Returns 0 or a negative code with
 * rt->err filled. */
static int tpuci__dk_prepare_att(tpuci__dk_t *dk, tpuci__dk_att_t *att,
                                 const tpuci__slice_t *slice) {
  tpuci__attempt_t *a = att->a;
  const tpuci__instance_t *inst = a->inst;
  tpuci__kvlist_t labels = {0};
  size_t i;
  int rc = 0;

  tpuci__ctr_labels(&labels, a->run_id, inst->job, inst->name, a->number,
                    a->keep_on_failure);
  if (att->gang) {
    att->net_name = tpuci__ctr_name(a->run_id, inst->name, a->number);
    att->net_body = tpuci__net_create_body(att->net_name, &labels, 1);
  }
  for (i = 0; i < att->nctrs; i++) {
    tpuci__dk_ctr_t *c = &att->ctrs[i];
    c->body = tpuci__gang_host_body(a, slice, (int) i, (int) att->nctrs,
                                    att->net_name, &labels, &dk->rt.err);
    if (c->body == NULL) {
      rc = dk->rt.err.code ? dk->rt.err.code : TPUCI_EUSAGE;
      break;
    }
    tpuci__podman_body_limits(c->body, &dk->limits);
    /* The output comes through the attach stream; the engine's own copy
     * (for `docker logs`, and the refetch after a broken stream) is kept
     * with the "local" driver, which costs the engine about half of what
     * json-file costs per byte. Podman has no "local" driver. */
    if (dk->eng != NULL && !dk->eng->podman)
      json_object_set_new(json_object_get(c->body, "HostConfig"), "LogConfig",
                          json_pack("{s:s}", "Type", "local"));
    if (att->gang)
      tpuci__ctrout_open_log(&c->out,
                             tpuci__printf("%s/attempt-%d." TPUCI__GANG_HOST_FMT ".log",
                                           a->dir, a->number, (int) i));
  }
  tpuci__kv_free(&labels);
  return rc;
}

/* Objects the engine did not answer about. */

int tpuci__dk_unreached(const tpuci__engine_res_t *res) {
  return res->error == UV_ECONNREFUSED || res->error == UV_ENOENT ||
         res->error == UV_EACCES;
}

int tpuci__dk_no_answer(const tpuci__engine_res_t *res) {
  return res->error != 0 && res->error != UV_ECANCELED;
}

void tpuci__dk_orphan(tpuci__dk_t *dk, int network, const char *id,
                      const char *name) {
  tpuci__dk_orphan_t *o;
  if (dk->norphans == dk->orphans_cap) {
    dk->orphans_cap = dk->orphans_cap ? 2 * dk->orphans_cap : 8;
    dk->orphans = tpuci__realloc(dk->orphans, dk->orphans_cap * sizeof(*o));
  }
  o = &dk->orphans[dk->norphans++];
  o->network = network;
  o->id = tpuci__strdup(id);
  o->name = tpuci__strdup(name);
}

typedef struct {
  tpuci__dk_t *dk;
  tpuci__dk_orphan_t o;
  int last;               /* no later try: say what is left */
} tpuci__dk_orphan_req_t;

static void tpuci__dk_orphans_flush(tpuci__dk_t *dk, int last);

static void tpuci__dk_on_orphan_removed(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_orphan_req_t *q = p;
  tpuci__dk_t *dk = q->dk;
  int last = q->last || dk->closing;

  dk->orphan_reqs--;
  if (res->ok || res->status == 404) {
    /* Gone now (or the engine never made it). */
  } else if (tpuci__dk_no_answer(res) && !last) {
    tpuci__dk_orphan(dk, q->o.network, q->o.id, q->o.name);
  } else {
    char *m = tpuci__printf("could not remove %s %s: %s; run `tpuci gc`%s",
                            q->o.network ? "network" : "container", q->o.name,
                            res->message,
                            tpuci__dk_no_answer(res) ? " once the engine is back"
                                                     : "");
    tpuci__dk_message(dk, m);
    free(m);
  }
  free(q->o.id);
  free(q->o.name);
  free(q);
  /* Networks go once their containers have. */
  if (dk->orphan_reqs == 0 && dk->norphans > 0 && last)
    tpuci__dk_orphans_flush(dk, 1);
  tpuci__dk_maybe_closed(dk);
}

/* Asks the engine again to remove the orphans: the containers, or when
 * there are none, the networks. */
static void tpuci__dk_orphans_flush(tpuci__dk_t *dk, int last) {
  size_t i, kept = 0;
  int containers = 0;

  if (dk->eng == NULL || dk->eng->closing || dk->orphan_reqs > 0) return;
  for (i = 0; i < dk->norphans; i++) containers |= !dk->orphans[i].network;
  for (i = 0; i < dk->norphans; i++) {
    tpuci__dk_orphan_t *o = &dk->orphans[i];
    tpuci__dk_orphan_req_t *q;
    if (containers && o->network) {
      dk->orphans[kept++] = *o;
      continue;
    }
    q = tpuci__calloc(1, sizeof(*q));
    q->dk = dk;
    q->o = *o;
    q->last = last;
    dk->orphan_reqs++;
    if (o->network)
      tpuci__engine_network_remove(dk->eng, o->id, tpuci__dk_on_orphan_removed, q);
    else
      tpuci__engine_container_remove(dk->eng, o->id, tpuci__dk_on_orphan_removed, q);
  }
  dk->norphans = kept;
}

int tpuci__dk_start(tpuci__runtime_t *rt, tpuci__attempt_t *a) {
  tpuci__dk_t *dk = (tpuci__dk_t *) rt;
  const tpuci__instance_t *inst = a->inst;
  const tpuci__plan_t *plan = a->plan;
  tpuci__dk_att_t *att;
  tpuci__slice_t slice;
  int has_slice = 0;
  size_t i, hosts = 1;
  int rc;

  if (dk->closing)
    return tpuci__err_set(&rt->err, TPUCI_ESTATE, "the docker runtime is closing");
  if (inst->image < 0 || (size_t) inst->image >= plan->nimages)
    return tpuci__err_set(&rt->err, TPUCI_EUSAGE,
                          "%s: job '%s' has no image for the docker runtime",
                          inst->where ? inst->where : "spec", inst->name);
  if (inst->topology >= 0 && (size_t) inst->topology < plan->ntopologies) {
    rc = tpuci__topology_slice(&plan->topologies[inst->topology], &slice,
                               &rt->err);
    if (rc != 0) return rc;
    has_slice = 1;
    hosts = (size_t) slice.hosts;
    /* An attempt may need fewer (a collection runs host 0 alone). */
    if (a->hosts > 0 && (size_t) a->hosts < hosts) hosts = (size_t) a->hosts;
    if (hosts > 1 && inst->network != NULL) {
      tpuci__slice_free(&slice);
      return tpuci__err_set(&rt->err, TPUCI_EUSAGE,
                            "%s: job '%s': network = \"%s\" cannot be used "
                            "with the %zu-host topology '%s': the hosts of a "
                            "gang get a private network of their own",
                            inst->where ? inst->where : "spec", inst->job,
                            inst->network, hosts, slice.name);
    }
  }
  rc = tpuci__dk_engine(dk);
  if (rc != 0) {
    if (has_slice) tpuci__slice_free(&slice);
    return rc;
  }

  att = tpuci__calloc(1, sizeof(*att));
  att->dk = dk;
  att->a = a;
  att->gang = hosts > 1;
  att->nctrs = hosts;
  att->phase = att->gang ? TPUCI__PH_NETWORK : TPUCI__PH_CREATE;
  att->grace_ms = a->grace_ms ? a->grace_ms
                  : inst->grace_ms ? inst->grace_ms : TPUCI__DK_GRACE_MS;
  att->ctrs = tpuci__calloc(att->nctrs, sizeof(*att->ctrs));
  for (i = 0; i < att->nctrs; i++) {
    tpuci__dk_ctr_t *c = &att->ctrs[i];
    c->att = att;
    c->index = (int) i;
    if (att->gang) {
      c->name = tpuci__ctr_host_name(a->run_id, inst->name, a->number, (int) i);
      c->host = tpuci__printf(TPUCI__GANG_HOST_FMT, (int) i);
    } else {
      c->name = tpuci__ctr_name(a->run_id, inst->name, a->number);
    }
    tpuci__ctrout_init(&c->out, a, c->host);
    tpuci__memstat_init(&c->mem);
  }
  rc = tpuci__dk_prepare_att(dk, att, has_slice ? &slice : NULL);
  if (has_slice) tpuci__slice_free(&slice);
  if (rc != 0) {
    tpuci__dk_att_release(att);
    free(att);
    return rc;
  }
  uv_timer_init(dk->loop, &att->timer);
  att->timer.data = att;

  att->next = dk->atts;
  if (dk->atts) dk->atts->prev = att;
  dk->atts = att;
  a->rt_data = att;
  /* The engine may be back: what earlier attempts could not remove. */
  if (dk->norphans > 0) tpuci__dk_orphans_flush(dk, 0);
  if (att->gang) {
    att->requests++;
    tpuci__engine_network_create(dk->eng, att->net_body,
                                 tpuci__dk_on_net_created, att);
    return 0;
  }
  for (i = 0; i < att->nctrs; i++) {
    att->requests++;
    tpuci__engine_container_create(dk->eng, att->ctrs[i].name,
                                   att->ctrs[i].body, tpuci__dk_on_created,
                                   &att->ctrs[i]);
  }
  return 0;
}



static void tpuci__dk_engine_closed(void *p) {
  tpuci__dk_t *dk = p;
  void (*cb)(tpuci__runtime_t *) = dk->close_cb;
  dk->eng = NULL;
  dk->close_cb = NULL;
  if (cb) cb(&dk->rt);
}

void tpuci__dk_maybe_closed(tpuci__dk_t *dk) {
  if (!dk->closing || dk->atts != NULL || dk->bg > 0 || dk->handles > 0 ||
      dk->prepare_cb != NULL || dk->orphan_reqs > 0)
    return;
  if (dk->norphans > 0 && dk->eng != NULL && !dk->eng->closing) {
    /* A last try, and a message for each that is still there. */
    tpuci__dk_orphans_flush(dk, 1);
    if (dk->orphan_reqs > 0) return;
  }
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
  size_t i;
  if (dk == NULL) return;
  for (i = 0; i < dk->norphans; i++) {
    free(dk->orphans[i].id);
    free(dk->orphans[i].name);
  }
  free(dk->orphans);
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
  dk->rt.abort = tpuci__dk_abort;
  dk->rt.close = tpuci__dk_close;
  dk->rt.free = tpuci__dk_free;
  dk->loop = loop;
  dk->run_id = tpuci__strdup(opts && opts->run_id ? opts->run_id : "");
  dk->keep_failed = opts ? opts->keep_failed : 0;
  *out = &dk->rt;
  return 0;
}
