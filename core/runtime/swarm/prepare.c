/* The swarm runtime's checks before a run: the engine answers and
 * speaks API 1.41 or newer, it is a manager of an active swarm, some
 * ready node can hold each job (its cpus and memory), leftovers of
 * earlier runs, and the images (on the manager: what services run is
 * the image's id when the manager has it, so no node tries a registry;
 * its reference when it had to be pulled). And, before anything is
 * made, the spec errors (a gang's network, missing mount sources). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/engine/endpoint.h"
#include "runtime/swarm/swarm.h"

#define TPUCI__GIB (1024.0 * 1024.0 * 1024.0)

int tpuci__sw_info_check(json_t *info, const char *where, tpuci__err_t *err) {
  json_t *swarm = json_object_get(info, "Swarm");
  const char *state = json_string_value(json_object_get(swarm, "LocalNodeState"));
  if (state == NULL || strcmp(state, "inactive") == 0)
    return tpuci__err_set(err, TPUCI_EENGINE,
                          "the Docker Engine at %s is not part of a "
                          "swarm; make it one with `docker swarm init` (or "
                          "point DOCKER_HOST at a swarm manager), or run on "
                          "docker (--engine docker)",
                          where);
  if (strcmp(state, "active") != 0)
    return tpuci__err_set(err, TPUCI_EENGINE,
                          "the Docker Engine at %s is in a swarm but "
                          "its node is %s: %s",
                          where, state,
                          json_string_value(json_object_get(swarm, "Error"))
                              ? json_string_value(json_object_get(swarm, "Error"))
                              : "see `docker info`");
  if (!json_is_true(json_object_get(swarm, "ControlAvailable")))
    return tpuci__err_set(err, TPUCI_EENGINE,
                          "the Docker Engine at %s is a swarm worker, "
                          "not a manager; point DOCKER_HOST at a manager "
                          "(`docker node ls` there lists them)",
                          where);
  return 0;
}

static void tpuci__sw_fit_text(char *buf, size_t size, double cpus,
                               uint64_t mem) {
  if (cpus > 0 && mem > 0)
    snprintf(buf, size, "cpus = %g and memory = %.2f GiB", cpus, (double) mem / TPUCI__GIB);
  else if (cpus > 0)
    snprintf(buf, size, "cpus = %g", cpus);
  else
    snprintf(buf, size, "memory = %.2f GiB", (double) mem / TPUCI__GIB);
}

int tpuci__sw_plan_fits(const tpuci__plan_t *plan, json_t *nodes,
                        const char *manager, tpuci__err_t *err) {
  size_t n = json_array_size(nodes), i, k;
  tpuci__sw_node_t *ns = tpuci__calloc(n + 1, sizeof(*ns));
  int rc = 0;
  for (k = 0; k < n; k++) tpuci__sw_node_read(json_array_get(nodes, k), &ns[k]);
  for (i = 0; i < plan->ninstances && rc == 0; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    int hosts = tpuci__plan_hosts(plan, inst);
    /* pytest tasks run on the manager (their results folder is there). */
    const char *only = inst->pytest ? manager : NULL;
    char need[96], big[160] = "";
    int fit;
    if (!inst->selected || inst->runtime != TPUCI__RUNTIME_SWARM) continue;
    if (inst->cpus <= 0 && inst->memory_bytes == 0 && only == NULL) continue;
    fit = tpuci__sw_fit(ns, n, inst->cpus, inst->memory_bytes, only);
    if (fit >= (hosts < 1 ? 1 : hosts)) continue;
    tpuci__sw_fit_text(need, sizeof(need), inst->cpus, inst->memory_bytes);
    for (k = 0; k < n; k++) {
      if (!ns[k].ready) continue;
      if (only != NULL && (ns[k].id == NULL || strcmp(ns[k].id, only) != 0)) continue;
      if (big[0] == '\0' || ns[k].nano_cpus > 0)
        snprintf(big, sizeof(big), "; node %s has %g CPUs and %.2f GiB",
                 ns[k].hostname, (double) ns[k].nano_cpus / 1e9,
                 (double) ns[k].memory_bytes / TPUCI__GIB);
    }
    if (hosts > 1)
      rc = tpuci__err_set(err, TPUCI_EENGINE,
                          "%s: job '%s': no swarm worker can fit it: its %d "
                          "hosts need %s each, the ready nodes hold %d at "
                          "once%s; lower them or add nodes",
                          inst->where ? inst->where : "spec", inst->job, hosts,
                          need, fit, big);
    else
      rc = tpuci__err_set(err, TPUCI_EENGINE,
                          "%s: job '%s': no swarm worker can fit it: it needs "
                          "%s%s%s; lower them or add a node",
                          inst->where ? inst->where : "spec", inst->job, need,
                          only ? " on the manager (a pytest job)" : "", big);
  }
  free(ns);
  return rc;
}

/* prepare: version, info, nodes, leftovers, images. */

static void tpuci__sw_prepare_done(tpuci__sw_t *sw, int status) {
  void (*cb)(tpuci__runtime_t *, int) = sw->prepare_cb;
  sw->prepare_cb = NULL;
  json_decref(sw->nodes);
  sw->nodes = NULL;
  if (cb) cb(&sw->rt, status);
  tpuci__sw_maybe_closed(sw);
}

static void tpuci__sw_prepare_fail(tpuci__sw_t *sw, int code, char *msg) {
  tpuci__err_set(&sw->rt.err, code, "%s", msg);
  free(msg);
  tpuci__sw_prepare_done(sw, code);
}

static int tpuci__sw_prep_answered(tpuci__sw_t *sw) {
  sw->bg--;
  sw->prep_req = NULL;
  sw->pull = NULL;
  if (!sw->aborting) return 0;
  tpuci__err_set(&sw->rt.err, UV_ECANCELED, "cancelled");
  tpuci__sw_prepare_done(sw, UV_ECANCELED);
  return 1;
}

void tpuci__sw_abort(tpuci__runtime_t *rt) {
  tpuci__sw_t *sw = (tpuci__sw_t *) rt;
  if (sw->prepare_cb == NULL || sw->aborting) return;
  sw->aborting = 1;
  if (sw->prep_req != NULL) tpuci__engine_cancel(sw->eng, sw->prep_req);
  if (sw->pull != NULL) tpuci__pull_cancel(sw->pull);
}

/* Whether plan image `k` is used by a selected swarm instance. */
static int tpuci__sw_image_used(const tpuci__plan_t *plan, size_t k) {
  size_t i;
  for (i = 0; i < plan->ninstances; i++)
    if (plan->instances[i].selected && plan->instances[i].image == (int) k &&
        plan->instances[i].runtime == TPUCI__RUNTIME_SWARM)
      return 1;
  return 0;
}

static void tpuci__sw_next_image(tpuci__sw_t *sw);

static void tpuci__sw_on_pulled(void *p, const tpuci__pull_res_t *res) {
  tpuci__sw_t *sw = p;
  size_t k = sw->image_next - 1;
  const tpuci__image_t *img = &sw->plan->images[k];
  if (tpuci__sw_prep_answered(sw)) return;
  if (res->ok || sw->image_present) {
    if (!res->ok) {
      char *m = tpuci__printf("warning: could not pull image '%s' on the "
                              "manager (%s); the nodes pull it themselves",
                              img->ref, res->message);
      tpuci__sw_message(sw, m);
      free(m);
    }
    /* By reference: the other nodes pull it too, with the manager's
     * credentials. */
    free(sw->images[k]);
    sw->images[k] = tpuci__strdup(img->ref);
    tpuci__wipe_free(sw->auths[k]);
    sw->auths[k] = res->auth ? tpuci__strdup(res->auth) : NULL;
    tpuci__sw_next_image(sw);
    return;
  }
  tpuci__sw_prepare_fail(sw, res->engine_error != 0 ? TPUCI_EENGINE : TPUCI_EIMAGE,
                         tpuci__printf("image '%s' is not present on the swarm "
                                       "manager and could not be pulled (%s); "
                                       "%s",
                                       img->ref, res->message,
                                       res->denied ? "see docs/docker.md, "
                                                     "\"Private registries\""
                                                   : "load it on every node "
                                                     "first, e.g. docker load "
                                                     "-i FILE.tar"));
}

static void tpuci__sw_on_pull_progress(void *p, const tpuci__pull_progress_t *pr) {
  tpuci__sw_t *sw = p;
  if (sw->rt.on_pull != NULL) sw->rt.on_pull(&sw->rt, pr);
}

static void tpuci__sw_on_image(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_t *sw = p;
  size_t k = sw->image_next - 1;
  const tpuci__image_t *img = &sw->plan->images[k];
  const char *id = json_string_value(json_object_get(res->json, "Id"));
  if (tpuci__sw_prep_answered(sw)) return;
  if (!res->ok && res->status != 404) {
    tpuci__sw_prepare_fail(sw, TPUCI_EENGINE,
                           tpuci__printf("swarm: inspecting image '%s' failed: %s",
                                         img->ref, res->message));
    return;
  }
  sw->image_present = res->ok;
  if (!res->ok && img->pull == TPUCI__PULL_NEVER) {
    tpuci__sw_prepare_fail(sw, TPUCI_EIMAGE,
                           tpuci__printf("image '%s' is not present on the "
                                         "swarm manager and pull = \"never\" "
                                         "(image \"%s\"%s%s); load it on every "
                                         "node first, e.g. docker load -i "
                                         "FILE.tar",
                                         img->ref, img->name,
                                         img->where ? " at " : "",
                                         img->where ? img->where : ""));
    return;
  }
  if (!res->ok || img->pull == TPUCI__PULL_ALWAYS) {
    char *m = tpuci__printf("pulling image '%s' on the swarm manager", img->ref);
    tpuci__sw_message(sw, m);
    free(m);
    sw->pull = tpuci__pull_start(sw->eng, img->ref, tpuci__sw_on_pull_progress,
                                 tpuci__sw_on_pulled, sw, &sw->rt.err);
    if (sw->pull == NULL) {
      tpuci__sw_prepare_done(sw, sw->rt.err.code);
      return;
    }
    sw->bg++;
    return;
  }
  /* By id: a node that has it starts at once, without asking a
   * registry first; one that has not says "No such image" (infra). */
  free(sw->images[k]);
  sw->images[k] = tpuci__strdup(id != NULL ? id : img->ref);
  tpuci__sw_next_image(sw);
}

static void tpuci__sw_next_image(tpuci__sw_t *sw) {
  while (sw->image_next < sw->nimages && !tpuci__sw_image_used(sw->plan, sw->image_next))
    sw->image_next++;
  if (sw->image_next >= sw->nimages) {
    tpuci__sw_prepare_done(sw, 0);
    return;
  }
  sw->bg++;
  sw->prep_req = tpuci__engine_image_inspect(sw->eng, sw->plan->images[sw->image_next++].ref,
                                             tpuci__sw_on_image, sw);
}

static void tpuci__sw_on_services(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_t *sw = p;
  size_t i, n = 0;
  json_t *o;
  if (tpuci__sw_prep_answered(sw)) return;
  if (res->ok) {
    json_array_foreach(res->json, i, o) {
      json_t *labels = json_object_get(json_object_get(o, "Spec"), "Labels");
      if (tpuci__docker_run_alive(labels) == 0) n++;
    }
  }
  if (n > 0) {
    char *m = tpuci__printf("warning: %zu swarm service%s left by earlier "
                            "runs; run `tpuci gc`",
                            n, n == 1 ? "" : "s");
    tpuci__sw_message(sw, m);
    free(m);
  }
  tpuci__sw_next_image(sw);
}

static void tpuci__sw_on_nodes(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_t *sw = p;
  if (tpuci__sw_prep_answered(sw)) return;
  if (!res->ok) {
    tpuci__sw_prepare_fail(sw, TPUCI_EENGINE,
                           tpuci__printf("swarm: listing the nodes failed: %s",
                                         res->message));
    return;
  }
  if (tpuci__sw_plan_fits(sw->plan, res->json, sw->manager_node, &sw->rt.err) != 0) {
    tpuci__sw_prepare_done(sw, sw->rt.err.code);
    return;
  }
  sw->bg++;
  sw->prep_req = tpuci__sw_service_list(sw->eng, TPUCI__LABEL_RUN,
                                        tpuci__sw_on_services, sw);
}

static void tpuci__sw_on_info(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_t *sw = p;
  char *where;
  const char *node;
  if (tpuci__sw_prep_answered(sw)) return;
  if (!res->ok) {
    tpuci__sw_prepare_fail(sw, TPUCI_EENGINE,
                           tpuci__printf("swarm: GET /info failed: %s", res->message));
    return;
  }
  where = tpuci__engine_where(sw->eng);
  if (tpuci__sw_info_check(res->json, where, &sw->rt.err) != 0) {
    free(where);
    tpuci__sw_prepare_done(sw, sw->rt.err.code);
    return;
  }
  free(where);
  node = json_string_value(json_object_get(json_object_get(res->json, "Swarm"), "NodeID"));
  free(sw->manager_node);
  sw->manager_node = node ? tpuci__strdup(node) : NULL;
  sw->bg++;
  sw->prep_req = tpuci__sw_node_list(sw->eng, tpuci__sw_on_nodes, sw);
}

static void tpuci__sw_on_version(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_t *sw = p;
  if (tpuci__sw_prep_answered(sw)) return;
  if (res->error != 0) {
    tpuci__sw_prepare_fail(sw, TPUCI_EENGINE,
                           tpuci__printf("cannot reach the swarm manager's "
                                         "Docker Engine (%s); %s",
                                         res->message,
                                         res->error == UV_EPROTO
                                             ? tpuci__engine_reach_hint(res->error)
                                             : "start dockerd and `docker "
                                               "swarm init`, or set "
                                               "DOCKER_HOST"));
    return;
  }
  if (!res->ok || res->json == NULL) {
    tpuci__sw_prepare_fail(sw, TPUCI_EENGINE,
                           tpuci__printf("the Docker Engine answered GET "
                                         "/version with an error: %s",
                                         res->ok ? "not JSON" : res->message));
    return;
  }
  if (tpuci__engine_negotiate(sw->eng, res->json, &sw->rt.err) != 0) {
    char *m = tpuci__printf("swarm: %s (tpuci's swarm runtime needs API 1.41)",
                            sw->rt.err.msg ? sw->rt.err.msg : "API too old");
    tpuci__sw_prepare_fail(sw, TPUCI_EENGINE, m);
    return;
  }
  sw->bg++;
  sw->prep_req = tpuci__engine_info(sw->eng, tpuci__sw_on_info, sw);
}

/* Bind mounts (and pytest's results folder) on a manager over TCP. */
static void tpuci__sw_remote_warnings(tpuci__sw_t *sw,
                                      const tpuci__plan_t *plan) {
  tpuci__strv_t w = {0};
  size_t i;
  tpuci__remote_mount_warnings(plan, TPUCI__RUNTIME_SWARM, &sw->eng->host, &w);
  for (i = 0; i < w.len; i++) {
    char *m = tpuci__printf("warning: %s", w.items[i]);
    tpuci__sw_message(sw, m);
    free(m);
  }
  tpuci__strv_free(&w);
}

int tpuci__sw_prepare(tpuci__runtime_t *rt, const tpuci__plan_t *plan,
                      void (*cb)(tpuci__runtime_t *rt, int status)) {
  tpuci__sw_t *sw = (tpuci__sw_t *) rt;
  size_t i;
  int rc;
  if (sw->closing || sw->prepare_cb != NULL)
    return tpuci__err_set(&rt->err, TPUCI_ESTATE, "the swarm runtime is busy");
  rc = tpuci__sw_engine(sw);
  if (rc != 0) return rc;
  tpuci__sw_remote_warnings(sw, plan);
  sw->plan = plan;
  sw->prepare_cb = cb;
  for (i = 0; i < sw->nimages; i++) {
    free(sw->images[i]);
    if (sw->auths != NULL) tpuci__wipe_free(sw->auths[i]);
  }
  free(sw->images);
  free(sw->auths);
  sw->nimages = plan->nimages;
  sw->images = tpuci__calloc(plan->nimages + 1, sizeof(char *));
  sw->auths = tpuci__calloc(plan->nimages + 1, sizeof(char *));
  sw->image_next = 0;
  sw->bg++;
  sw->prep_req = tpuci__engine_version(sw->eng, tpuci__sw_on_version, sw);
  return 0;
}

int tpuci__runtime_swarm_check(const tpuci__plan_t *plan, tpuci__err_t *err) {
  tpuci__docker_host_t host;
  tpuci__err_t e = {0, NULL};
  size_t i, k;
  int local = 0;

  if (tpuci__docker_host_from_env(&host, &e) == 0) {
    local = host.unix_path != NULL;
    tpuci__docker_host_free(&host);
  }
  tpuci__err_clear(&e);
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    char *why;
    int hosts, r;
    if (!inst->selected || inst->runtime != TPUCI__RUNTIME_SWARM) continue;
    /* A docker job moved here by --engine swarm: the loader checked
     * only the jobs that said runtime = "swarm". */
    why = tpuci__ctr_opts_refusal(&inst->ctr, inst->runtime);
    if (why != NULL) {
      r = tpuci__err_set(err, TPUCI_ESPEC, "%s: job '%s': %s",
                         inst->where ? inst->where : "spec", inst->job, why);
      free(why);
      return r;
    }
    hosts = tpuci__plan_hosts(plan, inst);
    if (hosts > 1 && inst->network != NULL)
      return tpuci__err_set(err, TPUCI_ESPEC,
                            "%s: job '%s': a gang gets an overlay network of "
                            "its own; leave out network = \"%s\"",
                            inst->where ? inst->where : "spec", inst->job,
                            inst->network);
    /* A manager on this machine: its tasks' bind mounts are this
     * machine's paths when they run here, and the engine refuses a
     * missing one only once the task is placed. */
    for (k = 0; local && k < inst->nmounts; k++) {
      struct stat st;
      if (stat(inst->mounts[k].source, &st) == 0) continue;
      return tpuci__err_set(err, TPUCI_ESPEC,
                            "%s: job '%s': mount source %s: %s; create it or "
                            "fix the path",
                            inst->where ? inst->where : "spec", inst->job,
                            inst->mounts[k].source, strerror(errno));
    }
  }
  return 0;
}
