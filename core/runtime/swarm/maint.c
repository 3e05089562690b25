/* `tpuci gc` and `tpuci doctor` for swarm objects: blocking, on a loop
 * of their own. Both say nothing about an engine that is not a swarm
 * manager unless the plan has swarm jobs (the docker driver speaks for
 * the engine itself). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/engine/endpoint.h"
#include "runtime/engine/sync.h"
#include "runtime/swarm/swarm.h"

/* Opens a client, negotiates, and reads GET /info into *info. 0, or a
 * negative code with err (the engine is unusable). */
static int tpuci__swsync_open(tpuci__sync_t *s, json_t **info,
                              tpuci__err_t *err) {
  tpuci__sync_res_t r = {0};
  int rc;
  *info = NULL;
  rc = tpuci__sync_open(s, err);
  if (rc != 0) return rc;
  tpuci__engine_version(s->eng, tpuci__sync_cb, &r);
  tpuci__sync_wait(s, &r);
  if (r.error != 0 || !r.ok || r.json == NULL)
    rc = tpuci__err_set(err, TPUCI_EENGINE,
                        "cannot reach the swarm manager's Docker Engine (%s)%s%s",
                        r.message ? r.message : "no answer",
                        r.error == UV_EPROTO ? "; " : "",
                        r.error == UV_EPROTO ? tpuci__engine_reach_hint(r.error) : "");
  else
    rc = tpuci__engine_negotiate(s->eng, r.json, err);
  tpuci__sync_res_free(&r);
  if (rc == 0) {
    tpuci__engine_info(s->eng, tpuci__sync_cb, &r);
    tpuci__sync_wait(s, &r);
    if (r.ok) *info = json_incref(r.json);
    else rc = tpuci__err_set(err, TPUCI_EENGINE, "GET /info failed: %s", r.message);
    tpuci__sync_res_free(&r);
  }
  if (rc != 0) tpuci__sync_close(s);
  return rc;
}

static const char *tpuci__swlabel(json_t *labels, const char *key) {
  const char *v = json_string_value(json_object_get(labels, key));
  return v ? v : "?";
}

static int tpuci__sw_is_manager(json_t *info) {
  json_t *swarm = json_object_get(info, "Swarm");
  const char *state = json_string_value(json_object_get(swarm, "LocalNodeState"));
  return state != NULL && strcmp(state, "active") == 0 &&
         json_is_true(json_object_get(swarm, "ControlAvailable"));
}

/* gc: services first (their tasks hold the networks), then the swarm's
 * overlay networks, retried while their endpoints go. */
static int tpuci__swgc_services(tpuci__sync_t *s, int dry_run,
                                tpuci__buf_t *report) {
  tpuci__sync_res_t r = {0};
  size_t i;
  json_t *o;
  int found = 0;
  tpuci__sw_service_list(s->eng, TPUCI__LABEL_RUN, tpuci__sync_cb, &r);
  tpuci__sync_wait(s, &r);
  if (!r.ok) {
    tpuci__buf_addf(report, "FAILED to list services: %s\n", r.message);
    tpuci__sync_res_free(&r);
    return -1;
  }
  json_array_foreach(r.json, i, o) {
    json_t *spec = json_object_get(o, "Spec");
    json_t *labels = json_object_get(spec, "Labels");
    const char *name = json_string_value(json_object_get(spec, "Name"));
    const char *id = json_string_value(json_object_get(o, "ID"));
    int alive = tpuci__docker_run_alive(labels);
    tpuci__sync_res_t d = {0};
    if (name == NULL) name = "?";
    if (alive == 1) continue;
    if (alive == -1) {
      tpuci__buf_addf(report,
                      "skipped service %s: run %s is on host %s, tpuci cannot "
                      "tell whether it is alive\n",
                      name, tpuci__swlabel(labels, TPUCI__LABEL_RUN),
                      tpuci__swlabel(labels, TPUCI__LABEL_HOST));
      continue;
    }
    found++;
    if (dry_run) {
      tpuci__buf_addf(report, "would remove service %s (run %s, instance %s)\n",
                      name, tpuci__swlabel(labels, TPUCI__LABEL_RUN),
                      tpuci__swlabel(labels, TPUCI__LABEL_INSTANCE));
      continue;
    }
    tpuci__sw_service_remove(s->eng, id ? id : name, tpuci__sync_cb, &d);
    tpuci__sync_wait(s, &d);
    if (d.ok || d.status == 404)
      tpuci__buf_addf(report, "removed service %s (run %s)\n", name,
                      tpuci__swlabel(labels, TPUCI__LABEL_RUN));
    else {
      tpuci__buf_addf(report, "FAILED to remove service %s: %s\n", name, d.message);
      found--;
    }
    tpuci__sync_res_free(&d);
  }
  tpuci__sync_res_free(&r);
  return found;
}

static int tpuci__swgc_networks(tpuci__sync_t *s, int dry_run,
                                tpuci__buf_t *report) {
  tpuci__sync_res_t r = {0};
  size_t i;
  json_t *o;
  int found = 0;
  tpuci__engine_network_list(s->eng, TPUCI__LABEL_RUN, tpuci__sync_cb, &r);
  tpuci__sync_wait(s, &r);
  if (!r.ok) {
    tpuci__buf_addf(report, "FAILED to list networks: %s\n", r.message);
    tpuci__sync_res_free(&r);
    return -1;
  }
  json_array_foreach(r.json, i, o) {
    json_t *labels = json_object_get(o, "Labels");
    const char *name = json_string_value(json_object_get(o, "Name"));
    const char *id = json_string_value(json_object_get(o, "Id"));
    tpuci__sync_res_t d = {0};
    int tries;
    if (!tpuci__docker_is_swarm(o)) continue;
    if (name == NULL) name = "?";
    if (tpuci__docker_run_alive(labels) != 0) continue;
    found++;
    if (dry_run) {
      tpuci__buf_addf(report, "would remove overlay network %s (run %s, job %s)\n",
                      name, tpuci__swlabel(labels, TPUCI__LABEL_RUN),
                      tpuci__swlabel(labels, TPUCI__LABEL_JOB));
      continue;
    }
    /* The tasks of a service just removed leave it within seconds. */
    for (tries = 0; tries < 60; tries++) {
      tpuci__sync_res_free(&d);
      tpuci__engine_network_remove(s->eng, id ? id : name, tpuci__sync_cb, &d);
      tpuci__sync_wait(s, &d);
      if (d.ok || d.status == 404 || d.error != 0) break;
      usleep(250000);
    }
    if (d.ok || d.status == 404)
      tpuci__buf_addf(report, "removed overlay network %s (run %s)\n", name,
                      tpuci__swlabel(labels, TPUCI__LABEL_RUN));
    else {
      tpuci__buf_addf(report, "FAILED to remove overlay network %s: %s\n", name,
                      d.message);
      found--;
    }
    tpuci__sync_res_free(&d);
  }
  tpuci__sync_res_free(&r);
  return found;
}

int tpuci__runtime_swarm_gc(int dry_run, tpuci__buf_t *report, tpuci__err_t *err) {
  tpuci__sync_t s;
  json_t *info;
  int a, b;
  tpuci__err_t e = {0, NULL};
  (void) err;
  /* The docker driver reports an engine it cannot reach. */
  if (tpuci__swsync_open(&s, &info, &e) != 0) {
    tpuci__err_clear(&e);
    return 0;
  }
  if (!tpuci__sw_is_manager(info)) {
    json_decref(info);
    tpuci__sync_close(&s);
    return 0;
  }
  json_decref(info);
  a = tpuci__swgc_services(&s, dry_run, report);
  b = tpuci__swgc_networks(&s, dry_run, report);
  tpuci__sync_close(&s);
  if (a < 0 || b < 0)
    return tpuci__err_set(err, TPUCI_EENGINE, "swarm: listing tpuci's objects failed");
  return a + b;
}

/* doctor */

static int tpuci__sw_plan_uses(const tpuci__plan_t *plan) {
  size_t i;
  for (i = 0; plan != NULL && i < plan->ninstances; i++)
    if (plan->instances[i].selected && plan->instances[i].runtime == TPUCI__RUNTIME_SWARM)
      return 1;
  return 0;
}

static int tpuci__swdoc_fail(tpuci__buf_t *report, tpuci__err_t *err, int code,
                             const char *what, const char *msg) {
  tpuci__buf_addf(report, "FAIL %s: %s\n", what, msg);
  if (err->code == 0) tpuci__err_set(err, code, "%s", msg);
  return code;
}

static void tpuci__swdoc_nodes(tpuci__sync_t *s, const tpuci__plan_t *plan,
                               const char *manager, int uses,
                               tpuci__buf_t *report, tpuci__err_t *err, int *first) {
  tpuci__sync_res_t r = {0};
  size_t i;
  json_t *o;
  int ready = 0;
  tpuci__sw_node_list(s->eng, tpuci__sync_cb, &r);
  tpuci__sync_wait(s, &r);
  if (!r.ok) {
    int c = tpuci__swdoc_fail(report, err, TPUCI_EENGINE, "swarm nodes", r.message);
    if (!*first) *first = c;
    tpuci__sync_res_free(&r);
    return;
  }
  json_array_foreach(r.json, i, o) {
    tpuci__sw_node_t n;
    tpuci__sw_node_read(o, &n);
    ready += n.ready;
    tpuci__buf_addf(report, "%s swarm node %s (%s%s): %s, %g CPUs, %.1f GiB\n",
                    n.ready ? "ok  " : "warn", n.hostname,
                    n.manager ? "manager" : "worker",
                    manager && n.id && strcmp(n.id, manager) == 0 ? ", this engine" : "",
                    n.ready ? "ready" : "not ready or not active",
                    (double) n.nano_cpus / 1e9,
                    (double) n.memory_bytes / (1024.0 * 1024 * 1024));
  }
  if (ready == 0 && uses) {
    int c = tpuci__swdoc_fail(report, err, TPUCI_EENGINE, "swarm nodes",
                              "no node is ready to run tasks");
    if (!*first) *first = c;
  }
  if (uses) {
    tpuci__err_t e = {0, NULL};
    if (tpuci__sw_plan_fits(plan, r.json, manager, &e) != 0) {
      int c = tpuci__swdoc_fail(report, err, e.code, "swarm fit", e.msg);
      if (!*first) *first = c;
    } else {
      tpuci__buf_adds(report, "ok   swarm fit: a ready node can hold every "
                              "swarm job's cpus and memory\n");
    }
    tpuci__err_clear(&e);
  }
  tpuci__sync_res_free(&r);
}

static void tpuci__swdoc_images(tpuci__sync_t *s, const tpuci__plan_t *plan,
                                tpuci__buf_t *report, tpuci__err_t *err, int *first) {
  size_t k, i;
  for (k = 0; k < plan->nimages; k++) {
    const tpuci__image_t *img = &plan->images[k];
    tpuci__sync_res_t r = {0};
    int used = 0;
    for (i = 0; i < plan->ninstances; i++)
      if (plan->instances[i].selected && plan->instances[i].image == (int) k &&
          plan->instances[i].runtime == TPUCI__RUNTIME_SWARM)
        used = 1;
    if (!used) continue;
    tpuci__engine_image_inspect(s->eng, img->ref, tpuci__sync_cb, &r);
    tpuci__sync_wait(s, &r);
    if (r.ok)
      tpuci__buf_addf(report, "ok   swarm image %s (\"%s\"): on the manager; "
                              "services run it by id, so every node needs it\n",
                      img->ref, img->name);
    else if (r.status == 404 && img->pull == TPUCI__PULL_NEVER) {
      char *m = tpuci__printf("image '%s' is not on the swarm manager and pull "
                              "= \"never\"; load it on every node", img->ref);
      int c = tpuci__swdoc_fail(report, err, TPUCI_EIMAGE, "swarm image", m);
      if (!*first) *first = c;
      free(m);
    } else if (r.status == 404)
      tpuci__buf_addf(report, "warn swarm image %s (\"%s\"): not on the manager; "
                              "`tpuci run` will try to pull it\n",
                      img->ref, img->name);
    else {
      int c = tpuci__swdoc_fail(report, err, TPUCI_EENGINE, "swarm image", r.message);
      if (!*first) *first = c;
    }
    tpuci__sync_res_free(&r);
  }
}

static void tpuci__swdoc_leftovers(tpuci__sync_t *s, tpuci__buf_t *report) {
  tpuci__sync_res_t r = {0};
  size_t i, ns = 0, nn = 0;
  json_t *o;
  tpuci__sw_service_list(s->eng, TPUCI__LABEL_RUN, tpuci__sync_cb, &r);
  tpuci__sync_wait(s, &r);
  json_array_foreach(r.json, i, o) {
    if (tpuci__docker_run_alive(json_object_get(json_object_get(o, "Spec"), "Labels")) == 0)
      ns++;
  }
  tpuci__sync_res_free(&r);
  tpuci__engine_network_list(s->eng, TPUCI__LABEL_RUN, tpuci__sync_cb, &r);
  tpuci__sync_wait(s, &r);
  json_array_foreach(r.json, i, o) {
    if (tpuci__docker_is_swarm(o) &&
        tpuci__docker_run_alive(json_object_get(o, "Labels")) == 0)
      nn++;
  }
  tpuci__sync_res_free(&r);
  if (ns + nn == 0)
    tpuci__buf_adds(report, "ok   swarm leftovers: no services or overlay "
                            "networks of earlier runs\n");
  else
    tpuci__buf_addf(report, "warn swarm leftovers: %zu service%s and %zu overlay "
                            "network%s left by earlier runs; run `tpuci gc`\n",
                    ns, ns == 1 ? "" : "s", nn, nn == 1 ? "" : "s");
}

/* The swarm jobs' bind mounts on a manager over TCP (the docker
 * driver's doctor says the rest about the endpoint). */
static void tpuci__swdoc_remote(tpuci__sync_t *s, const tpuci__plan_t *plan,
                                tpuci__buf_t *report) {
  tpuci__strv_t w = {0};
  size_t i;
  if (plan != NULL)
    tpuci__remote_mount_warnings(plan, TPUCI__RUNTIME_SWARM, &s->eng->host, &w);
  for (i = 0; i < w.len; i++)
    tpuci__buf_addf(report, "warn mounts: %s\n", w.items[i]);
  tpuci__strv_free(&w);
}

int tpuci__runtime_swarm_doctor(const tpuci__plan_t *plan, tpuci__buf_t *report,
                                tpuci__err_t *err) {
  tpuci__sync_t s;
  json_t *info, *swarm;
  int uses = tpuci__sw_plan_uses(plan), first = 0;
  const char *manager;
  char *where;
  tpuci__err_t e = {0, NULL};

  if (tpuci__swsync_open(&s, &info, &e) != 0) {
    int c = 0;
    if (uses) c = tpuci__swdoc_fail(report, err, e.code, "swarm", e.msg);
    tpuci__err_clear(&e);
    return c;
  }
  where = tpuci__engine_where(s.eng);
  if (tpuci__sw_info_check(info, where, &e) != 0) {
    if (uses) first = tpuci__swdoc_fail(report, err, e.code, "swarm", e.msg);
    else if (tpuci__sw_is_manager(info) == 0 &&
             json_string_value(json_object_get(json_object_get(info, "Swarm"), "LocalNodeState")) &&
             strcmp(json_string_value(json_object_get(json_object_get(info, "Swarm"), "LocalNodeState")), "inactive") != 0)
      tpuci__buf_addf(report, "warn swarm: %s\n", e.msg);
    tpuci__err_clear(&e);
    free(where);
    json_decref(info);
    tpuci__sync_close(&s);
    return first;
  }
  swarm = json_object_get(info, "Swarm");
  manager = json_string_value(json_object_get(swarm, "NodeID"));
  tpuci__buf_addf(report, "ok   swarm: %s is a manager of an active swarm "
                          "(API %s)\n",
                  where, s.eng->server_api ? s.eng->server_api : "?");
  free(where);
  tpuci__swdoc_remote(&s, plan, report);
  tpuci__swdoc_nodes(&s, plan, manager, uses, report, err, &first);
  if (uses) tpuci__swdoc_images(&s, plan, report, err, &first);
  tpuci__swdoc_leftovers(&s, report);
  json_decref(info);
  tpuci__sync_close(&s);
  return first;
}
