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
static int tpuci__swsync_open(tpuci__sync_t *s, json_t **info, tpuci__err_t *err) {
  tpuci__sync_res_t r = {0};
  int rc;
  *info = NULL;
  rc = tpuci__sync_open(s, err);
  if (rc != 0) return rc;
  tpuci__engine_version(s->eng, tpuci__sync_cb, &r);
  tpuci__sync_wait(s, &r);
  if (r.error != 0 || !r.ok || r.json == NULL)
    rc = tpuci__err_set(
        err, TPUCI_EENGINE, "cannot reach the swarm manager's Docker Engine (%s)%s%s",
        r.message ? r.message : "no answer", r.error == UV_EPROTO || r.hint ? "; " : "",
        r.error == UV_EPROTO || r.hint ? tpuci__engine_reach_hint(r.error, r.hint) : "");
  else rc = tpuci__engine_negotiate(s->eng, r.json, err);
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

/* gc: services first (their tasks hold the networks), then a bounded
 * wait until their tasks and the task containers of dead runs on the
 * manager are gone, then the swarm's overlay networks, retried while
 * their endpoints go; what is still going at the end is named. */

/* How long gc waits after removing services (TPUCI_GC_WAIT overrides). */
#define TPUCI__SWGC_WAIT_MS 60000
#define TPUCI__SWGC_POLL_US 250000

typedef struct {
  tpuci__strv_t tasks;   /* ids of the removed services' tasks */
  tpuci__strv_t task_of; /* ... the name of each one's service */
  uint64_t grace_ms;     /* the longest StopGracePeriod among them */
  uint64_t deadline;     /* uv_hrtime() in ms */
} tpuci__swgc_t;

static uint64_t tpuci__swgc_now(void) { return uv_hrtime() / 1000000u; }

/* The services gc removes: each one's id, name and run. */
typedef struct {
  tpuci__strv_t ids;
  tpuci__strv_t names;
  tpuci__strv_t runs;
} tpuci__swgc_picked_t;

/* The services to remove: those of runs not alive. Lines for the others
 * and, with dry_run, for these. Fills `out` and g->grace_ms. */
static void tpuci__swgc_pick(json_t *list, int dry_run, tpuci__swgc_picked_t *out, tpuci__swgc_t *g,
                             tpuci__buf_t *report) {
  size_t i;
  json_t *o;
  json_array_foreach(list, i, o) {
    json_t *spec = json_object_get(o, "Spec");
    json_t *labels = json_object_get(spec, "Labels");
    json_t *grace = json_object_get(
        json_object_get(json_object_get(spec, "TaskTemplate"), "ContainerSpec"), "StopGracePeriod");
    const char *name = json_string_value(json_object_get(spec, "Name"));
    const char *id = json_string_value(json_object_get(o, "ID"));
    int alive = tpuci__docker_run_alive(labels);
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
    if (dry_run)
      tpuci__buf_addf(report, "would remove service %s (run %s, instance %s)\n", name,
                      tpuci__swlabel(labels, TPUCI__LABEL_RUN),
                      tpuci__swlabel(labels, TPUCI__LABEL_INSTANCE));
    if (json_is_integer(grace) && (uint64_t) json_integer_value(grace) / 1000000u > g->grace_ms)
      g->grace_ms = (uint64_t) json_integer_value(grace) / 1000000u;
    tpuci__strv_push(&out->ids, id ? id : name);
    tpuci__strv_push(&out->names, name);
    tpuci__strv_push(&out->runs, tpuci__swlabel(labels, TPUCI__LABEL_RUN));
  }
}

static int tpuci__swgc_services(tpuci__sync_t *s, int dry_run, tpuci__swgc_t *g,
                                tpuci__buf_t *report) {
  tpuci__sync_res_t r = {0};
  tpuci__swgc_picked_t p = {0};
  size_t i;
  json_t *o;
  int found;
  tpuci__sw_service_list(s->eng, TPUCI__LABEL_RUN, tpuci__sync_cb, &r);
  if (tpuci__sync_listed(s, &r, "services", report) != 0) return -1;
  tpuci__swgc_pick(r.json, dry_run, &p, g, report);
  tpuci__sync_res_free(&r);
  found = (int) p.ids.len;
  if (dry_run || p.ids.len == 0) goto out;
  /* Their tasks, asked for before: once a service is gone, its tasks can
   * only be asked for by id. */
  tpuci__sw_task_list(s->eng, "service", (const char *const *) p.ids.items, p.ids.len,
                      tpuci__sync_cb, &r);
  tpuci__sync_wait(s, &r);
  json_array_foreach(r.json, i, o) {
    tpuci__task_t t;
    size_t k;
    tpuci__task_read(o, &t);
    for (k = 0; t.id != NULL && t.service_id != NULL && k < p.ids.len; k++)
      if (strcmp(t.service_id, p.ids.items[k]) == 0) {
        tpuci__strv_push(&g->tasks, t.id);
        tpuci__strv_push(&g->task_of, p.names.items[k]);
      }
  }
  tpuci__sync_res_free(&r);
  for (i = 0; i < p.ids.len; i++) {
    tpuci__sync_res_t d = {0};
    tpuci__sw_service_remove(s->eng, p.ids.items[i], tpuci__sync_cb, &d);
    tpuci__sync_wait(s, &d);
    if (!tpuci__sync_removed(&d, "service", p.names.items[i], p.runs.items[i], report)) found--;
    tpuci__sync_res_free(&d);
  }
out:
  tpuci__strv_free(&p.ids);
  tpuci__strv_free(&p.names);
  tpuci__strv_free(&p.runs);
  return found;
}

/* What is still going: the removed services' tasks still listed, and the
 * task containers of dead runs still on the manager. With `say`, a line
 * for each. The count. */
static size_t tpuci__swgc_going(tpuci__sync_t *s, const tpuci__swgc_t *g, int say,
                                uint64_t waited_ms, tpuci__buf_t *report) {
  tpuci__sync_res_t r = {0};
  size_t i, k, n = 0;
  json_t *o;
  char d[32];
  tpuci__duration_format(waited_ms, d, sizeof(d));
  if (g->tasks.len > 0) {
    tpuci__sw_task_list(s->eng, "id", (const char *const *) g->tasks.items, g->tasks.len,
                        tpuci__sync_cb, &r);
    tpuci__sync_wait(s, &r);
    json_array_foreach(r.json, i, o) {
      const char *state = json_string_value(json_object_get(json_object_get(o, "Status"), "State"));
      tpuci__task_t t;
      tpuci__task_read(o, &t);
      for (k = 0; t.id != NULL && k < g->tasks.len; k++) {
        if (strcmp(t.id, g->tasks.items[k]) != 0) continue;
        n++;
        if (say)
          tpuci__buf_addf(report,
                          "still going after %s: the task %s of "
                          "service %s (%s, node %s)\n",
                          d, t.id, g->task_of.items[k], state ? state : "?",
                          t.node_id ? t.node_id : "?");
      }
    }
    tpuci__sync_res_free(&r);
  }
  tpuci__engine_container_list(s->eng, TPUCI__LABEL_RUN, tpuci__sync_cb, &r);
  tpuci__sync_wait(s, &r);
  json_array_foreach(r.json, i, o) {
    json_t *labels = json_object_get(o, "Labels");
    const char *svc = json_string_value(json_object_get(labels, "com.docker.swarm.service.name"));
    const char *state = json_string_value(json_object_get(o, "State"));
    const char *cid = json_string_value(json_object_get(o, "Id"));
    if (json_object_get(labels, "com.docker.swarm.task.id") == NULL ||
        tpuci__docker_run_alive(labels) != 0)
      continue;
    n++;
    if (say)
      tpuci__buf_addf(report,
                      "still going after %s: container %.12s of "
                      "service %s (%s) on the manager\n",
                      d, cid ? cid : "?", svc ? svc : "?", state ? state : "?");
  }
  tpuci__sync_res_free(&r);
  return n;
}

/* Waits until nothing is going or the deadline passed; then names what
 * still is. */
static void tpuci__swgc_wait(tpuci__sync_t *s, const tpuci__swgc_t *g, tpuci__buf_t *report) {
  uint64_t start = tpuci__swgc_now();
  for (;;) {
    uint64_t now = tpuci__swgc_now();
    int last = now >= g->deadline;
    if (tpuci__swgc_going(s, g, last, now - start, report) == 0 || last) return;
    usleep(TPUCI__SWGC_POLL_US);
  }
}

static int tpuci__swgc_networks(tpuci__sync_t *s, int dry_run, const tpuci__swgc_t *g,
                                tpuci__buf_t *report) {
  tpuci__sync_res_t r = {0};
  size_t i;
  json_t *o;
  int found = 0;
  tpuci__engine_network_list(s->eng, TPUCI__LABEL_RUN, tpuci__sync_cb, &r);
  if (tpuci__sync_listed(s, &r, "networks", report) != 0) return -1;
  json_array_foreach(r.json, i, o) {
    json_t *labels = json_object_get(o, "Labels");
    const char *name = json_string_value(json_object_get(o, "Name"));
    const char *id = json_string_value(json_object_get(o, "Id"));
    tpuci__sync_res_t d = {0};
    if (!tpuci__docker_is_swarm(o)) continue;
    if (name == NULL) name = "?";
    if (tpuci__docker_run_alive(labels) != 0) continue;
    found++;
    if (dry_run) {
      tpuci__buf_addf(report, "would remove overlay network %s (run %s, job %s)\n", name,
                      tpuci__swlabel(labels, TPUCI__LABEL_RUN),
                      tpuci__swlabel(labels, TPUCI__LABEL_JOB));
      continue;
    }
    /* The endpoints of tasks just gone leave it a moment later. */
    for (;;) {
      tpuci__sync_res_free(&d);
      tpuci__engine_network_remove(s->eng, id ? id : name, tpuci__sync_cb, &d);
      tpuci__sync_wait(s, &d);
      if (d.ok || d.status == 404 || d.error != 0 || tpuci__swgc_now() >= g->deadline) break;
      usleep(TPUCI__SWGC_POLL_US);
    }
    if (!d.ok && d.error == 0 && d.status == 403) {
      /* "has active endpoints": its tasks are still going. */
      tpuci__buf_addf(report,
                      "still going: overlay network %s is still in "
                      "use (%s); `tpuci gc` again removes it\n",
                      name, d.message);
      found--;
    } else if (!tpuci__sync_removed(&d, "overlay network", name,
                                    tpuci__swlabel(labels, TPUCI__LABEL_RUN), report)) {
      found--;
    }
    tpuci__sync_res_free(&d);
  }
  tpuci__sync_res_free(&r);
  return found;
}

int tpuci__runtime_swarm_gc(int dry_run, tpuci__buf_t *report, tpuci__err_t *err) {
  tpuci__sync_t s;
  tpuci__swgc_t g;
  json_t *info;
  const char *wait = getenv("TPUCI_GC_WAIT");
  uint64_t wait_ms = 0;
  int a, b, has_wait = wait != NULL && *wait != '\0';
  tpuci__err_t e = {0, NULL};
  if (has_wait && tpuci__duration_parse(wait, &wait_ms) != 0)
    return tpuci__err_set(err, TPUCI_EUSAGE,
                          "TPUCI_GC_WAIT=%s: not a duration (\"90s\", \"2m\", \"0s\")", wait);
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
  memset(&g, 0, sizeof(g));
  a = tpuci__swgc_services(&s, dry_run, &g, report);
  if (!has_wait) wait_ms = g.grace_ms + TPUCI__SWGC_WAIT_MS;
  g.deadline = tpuci__swgc_now() + wait_ms;
  if (!dry_run) tpuci__swgc_wait(&s, &g, report);
  b = tpuci__swgc_networks(&s, dry_run, &g, report);
  tpuci__sync_close(&s);
  tpuci__strv_free(&g.tasks);
  tpuci__strv_free(&g.task_of);
  if (a < 0 || b < 0)
    return tpuci__err_set(err, TPUCI_EENGINE, "swarm: listing tpuci's objects failed");
  return a + b;
}

/* doctor */

static int tpuci__sw_plan_uses(const tpuci__plan_t *plan) {
  size_t i;
  for (i = 0; plan != NULL && i < plan->ninstances; i++)
    if (plan->instances[i].selected && plan->instances[i].runtime == TPUCI__RUNTIME_SWARM) return 1;
  return 0;
}

static int tpuci__swdoc_fail(tpuci__buf_t *report, tpuci__err_t *err, int code, const char *what,
                             const char *msg) {
  tpuci__buf_addf(report, "FAIL %s: %s\n", what, msg);
  if (err->code == 0) tpuci__err_set(err, code, "%s", msg);
  return code;
}

/* The doctor's checks on a manager: its engine session, the plan (may
 * be NULL), the report, and the first failure (err filled for it). */
typedef struct {
  tpuci__sync_t *s;
  const tpuci__plan_t *plan;
  tpuci__buf_t *report;
  tpuci__err_t *err;
  int first;
} tpuci__swdoc_t;

/* A FAIL line, kept as the first failure when there is none yet. */
static void tpuci__swdoc_failed(tpuci__swdoc_t *d, int code, const char *what, const char *msg) {
  int c = tpuci__swdoc_fail(d->report, d->err, code, what, msg);
  if (!d->first) d->first = c;
}

static void tpuci__swdoc_nodes(tpuci__swdoc_t *d, const char *manager, int uses) {
  tpuci__buf_t *report = d->report;
  tpuci__sync_res_t r = {0};
  size_t i;
  json_t *o;
  int ready = 0;
  tpuci__sw_node_list(d->s->eng, tpuci__sync_cb, &r);
  tpuci__sync_wait(d->s, &r);
  if (!r.ok) {
    tpuci__swdoc_failed(d, TPUCI_EENGINE, "swarm nodes", r.message);
    tpuci__sync_res_free(&r);
    return;
  }
  json_array_foreach(r.json, i, o) {
    tpuci__sw_node_t n;
    tpuci__sw_node_read(o, &n);
    ready += n.ready;
    tpuci__buf_addf(report, "%s swarm node %s (%s%s): %s, %g CPUs, %.1f GiB\n",
                    n.ready ? "ok  " : "warn", n.hostname, n.manager ? "manager" : "worker",
                    manager && n.id && strcmp(n.id, manager) == 0 ? ", this engine" : "",
                    n.ready ? "ready" : "not ready or not active", (double) n.nano_cpus / 1e9,
                    (double) n.memory_bytes / (1024.0 * 1024 * 1024));
  }
  if (ready == 0 && uses)
    tpuci__swdoc_failed(d, TPUCI_EENGINE, "swarm nodes", "no node is ready to run tasks");
  if (uses) {
    tpuci__err_t e = {0, NULL};
    if (tpuci__sw_plan_fits(d->plan, r.json, &e) != 0) {
      tpuci__swdoc_failed(d, e.code, "swarm fit", e.msg);
    } else {
      tpuci__buf_adds(report, "ok   swarm fit: a ready node can hold every "
                              "swarm job's cpus and memory\n");
    }
    tpuci__err_clear(&e);
  }
  tpuci__sync_res_free(&r);
}

static void tpuci__swdoc_images(tpuci__swdoc_t *d) {
  const tpuci__plan_t *plan = d->plan;
  tpuci__buf_t *report = d->report;
  size_t k;
  for (k = 0; k < plan->nimages; k++) {
    const tpuci__image_t *img = &plan->images[k];
    tpuci__sync_res_t r = {0};
    if (!tpuci__plan_image_used(plan, k, TPUCI__RUNTIME_SWARM)) continue;
    tpuci__engine_image_inspect(d->s->eng, img->ref, tpuci__sync_cb, &r);
    tpuci__sync_wait(d->s, &r);
    if (r.ok)
      tpuci__buf_addf(report,
                      "ok   swarm image %s (\"%s\"): on the manager; "
                      "services run it by id, so every node needs it\n",
                      img->ref, img->name);
    else if (r.status == 404 && img->pull == TPUCI__PULL_NEVER) {
      char *m = tpuci__printf("image '%s' is not on the swarm manager and pull "
                              "= \"never\"; load it on every node",
                              img->ref);
      tpuci__swdoc_failed(d, TPUCI_EIMAGE, "swarm image", m);
      free(m);
    } else if (r.status == 404)
      tpuci__buf_addf(report,
                      "warn swarm image %s (\"%s\"): not on the manager; "
                      "`tpuci run` will try to pull it\n",
                      img->ref, img->name);
    else tpuci__swdoc_failed(d, TPUCI_EENGINE, "swarm image", r.message);
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
    if (tpuci__docker_run_alive(json_object_get(json_object_get(o, "Spec"), "Labels")) == 0) ns++;
  }
  tpuci__sync_res_free(&r);
  tpuci__engine_network_list(s->eng, TPUCI__LABEL_RUN, tpuci__sync_cb, &r);
  tpuci__sync_wait(s, &r);
  json_array_foreach(r.json, i, o) {
    if (tpuci__docker_is_swarm(o) && tpuci__docker_run_alive(json_object_get(o, "Labels")) == 0)
      nn++;
  }
  tpuci__sync_res_free(&r);
  if (ns + nn == 0)
    tpuci__buf_adds(report, "ok   swarm leftovers: no services or overlay "
                            "networks of earlier runs\n");
  else
    tpuci__buf_addf(report,
                    "warn swarm leftovers: %zu service%s and %zu overlay "
                    "network%s left by earlier runs; run `tpuci gc`\n",
                    ns, ns == 1 ? "" : "s", nn, nn == 1 ? "" : "s");
}

/* The swarm jobs' bind mounts on a manager over TCP (the docker
 * driver's doctor says the rest about the endpoint). */
static void tpuci__swdoc_remote(tpuci__sync_t *s, const tpuci__plan_t *plan, tpuci__buf_t *report) {
  tpuci__strv_t w = {0};
  size_t i;
  if (plan != NULL) tpuci__remote_mount_warnings(plan, TPUCI__RUNTIME_SWARM, &s->eng->host, &w);
  for (i = 0; i < w.len; i++) tpuci__buf_addf(report, "warn mounts: %s\n", w.items[i]);
  tpuci__strv_free(&w);
}

int tpuci__runtime_swarm_doctor(const tpuci__plan_t *plan, tpuci__buf_t *report,
                                tpuci__err_t *err) {
  tpuci__sync_t s;
  tpuci__swdoc_t d = {.s = &s, .plan = plan, .report = report, .err = err};
  json_t *info, *swarm;
  int uses = tpuci__sw_plan_uses(plan);
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
    if (uses) d.first = tpuci__swdoc_fail(report, err, e.code, "swarm", e.msg);
    else if (tpuci__sw_is_manager(info) == 0 &&
             json_string_value(json_object_get(json_object_get(info, "Swarm"), "LocalNodeState")) &&
             strcmp(json_string_value(
                        json_object_get(json_object_get(info, "Swarm"), "LocalNodeState")),
                    "inactive") != 0)
      tpuci__buf_addf(report, "warn swarm: %s\n", e.msg);
    tpuci__err_clear(&e);
    free(where);
    json_decref(info);
    tpuci__sync_close(&s);
    return d.first;
  }
  swarm = json_object_get(info, "Swarm");
  manager = json_string_value(json_object_get(swarm, "NodeID"));
  tpuci__buf_addf(report,
                  "ok   swarm: %s is a manager of an active swarm "
                  "(API %s)\n",
                  where, s.eng->server_api ? s.eng->server_api : "?");
  free(where);
  tpuci__swdoc_remote(&s, plan, report);
  tpuci__swdoc_nodes(&d, manager, uses);
  if (uses) tpuci__swdoc_images(&d);
  tpuci__swdoc_leftovers(&s, report);
  json_decref(info);
  tpuci__sync_close(&s);
  return d.first;
}

/* The manager's ids: a swarm's nodes must run the same image anyway
 * (docs/swarm.md), and the cache takes them to (docs/cache.md). */
int tpuci__runtime_swarm_image_ids(const tpuci__plan_t *plan, char **ids, char **why,
                                   tpuci__err_t *err) {
  return tpuci__sync_image_ids(plan, TPUCI__RUNTIME_SWARM, ids, why, err);
}
