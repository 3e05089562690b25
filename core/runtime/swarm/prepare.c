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

static void tpuci__sw_fit_text(char *buf, size_t size, double cpus, uint64_t mem) {
  if (cpus > 0 && mem > 0)
    snprintf(buf, size, "cpus = %g and memory = %.2f GiB", cpus, (double) mem / TPUCI__GIB);
  else if (cpus > 0) snprintf(buf, size, "cpus = %g", cpus);
  else snprintf(buf, size, "memory = %.2f GiB", (double) mem / TPUCI__GIB);
}

int tpuci__sw_plan_fits(const tpuci__plan_t *plan, json_t *nodes, tpuci__err_t *err) {
  size_t n = json_array_size(nodes), i, k;
  tpuci__sw_node_t *ns = tpuci__calloc(n + 1, sizeof(*ns));
  int rc = 0;
  for (k = 0; k < n; k++) tpuci__sw_node_read(json_array_get(nodes, k), &ns[k]);
  for (i = 0; i < plan->ninstances && rc == 0; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    int hosts = tpuci__plan_hosts(plan, inst);
    char need[96], big[160] = "";
    int fit;
    if (!inst->selected || inst->runtime != TPUCI__RUNTIME_SWARM) continue;
    if (inst->cpus <= 0 && inst->memory_bytes == 0) continue;
    fit = tpuci__sw_fit(ns, n, inst->cpus, inst->memory_bytes);
    if (fit >= (hosts < 1 ? 1 : hosts)) continue;
    tpuci__sw_fit_text(need, sizeof(need), inst->cpus, inst->memory_bytes);
    for (k = 0; k < n; k++) {
      if (!ns[k].ready) continue;
      if (big[0] == '\0' || ns[k].nano_cpus > 0)
        snprintf(big, sizeof(big), "; node %s has %g CPUs and %.2f GiB", ns[k].hostname,
                 (double) ns[k].nano_cpus / 1e9, (double) ns[k].memory_bytes / TPUCI__GIB);
    }
    if (hosts > 1)
      rc = tpuci__err_set(err, TPUCI_EENGINE,
                          "%s: job '%s': no swarm worker can fit it: its %d "
                          "hosts need %s each, the ready nodes hold %d at "
                          "once%s; lower them or add nodes",
                          inst->where ? inst->where : "spec", inst->job, hosts, need, fit, big);
    else
      rc = tpuci__err_set(err, TPUCI_EENGINE,
                          "%s: job '%s': no swarm worker can fit it: it needs "
                          "%s%s; lower them or add a node",
                          inst->where ? inst->where : "spec", inst->job, need, big);
  }
  free(ns);
  return rc;
}

/* prepare: version, info, nodes, leftovers, images. */

void tpuci__sw_prepare_end(tpuci__erun_t *e) {
  tpuci__sw_t *sw = (tpuci__sw_t *) e;
  json_decref(sw->nodes);
  sw->nodes = NULL;
}

static void tpuci__sw_next_image(tpuci__sw_t *sw);

static void tpuci__sw_on_pulled(void *p, const tpuci__pull_res_t *res) {
  tpuci__sw_t *sw = p;
  size_t k = sw->e.image_next - 1;
  const tpuci__image_t *img = &sw->e.plan->images[k];
  if (tpuci__erun_answered(&sw->e)) return;
  if (res->ok || sw->e.image_present) {
    if (!res->ok) {
      tpuci__erun_tell(&sw->e,
                       "warning: could not pull image '%s' on the "
                       "manager (%s); the nodes pull it themselves",
                       img->ref, res->message);
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
  tpuci__erun_prepare_fail(&sw->e, res->engine_error != 0 ? TPUCI_EENGINE : TPUCI_EIMAGE,
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

static void tpuci__sw_on_image(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_t *sw = p;
  size_t k = sw->e.image_next - 1;
  const tpuci__image_t *img = &sw->e.plan->images[k];
  const char *id = json_string_value(json_object_get(res->json, "Id"));
  if (tpuci__erun_answered(&sw->e)) return;
  switch (tpuci__erun_image(&sw->e, img, res, tpuci__sw_on_pulled)) {
    case TPUCI__ERUN_IMG_HANDLED: return;
    case TPUCI__ERUN_IMG_NEVER:
      tpuci__erun_prepare_fail(&sw->e, TPUCI_EIMAGE,
                               tpuci__printf("image '%s' is not present on the "
                                             "swarm manager and pull = \"never\" "
                                             "(image \"%s\"%s%s); load it on "
                                             "every node first, e.g. docker "
                                             "load -i FILE.tar",
                                             img->ref, img->name, img->where ? " at " : "",
                                             img->where ? img->where : ""));
      return;
    case TPUCI__ERUN_IMG_USE: break;
  }
  /* By id: a node that has it starts at once, without asking a
   * registry first; one that has not says "No such image" (infra). */
  free(sw->images[k]);
  sw->images[k] = tpuci__strdup(id != NULL ? id : img->ref);
  tpuci__sw_next_image(sw);
}

static void tpuci__sw_next_image(tpuci__sw_t *sw) {
  while (sw->e.image_next < sw->nimages &&
         !tpuci__plan_image_used(sw->e.plan, sw->e.image_next, TPUCI__RUNTIME_SWARM))
    sw->e.image_next++;
  if (sw->e.image_next >= sw->nimages) {
    tpuci__erun_prepare_done(&sw->e, 0);
    return;
  }
  sw->e.bg++;
  sw->e.prep_req = tpuci__engine_image_inspect(
      sw->e.eng, sw->e.plan->images[sw->e.image_next++].ref, tpuci__sw_on_image, sw);
}

static void tpuci__sw_on_services(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_t *sw = p;
  size_t i, n = 0;
  json_t *o;
  if (tpuci__erun_answered(&sw->e)) return;
  if (res->ok) {
    json_array_foreach(res->json, i, o) {
      json_t *labels = json_object_get(json_object_get(o, "Spec"), "Labels");
      if (tpuci__docker_run_alive(labels) == 0) n++;
    }
  }
  if (n > 0) {
    tpuci__erun_tell(&sw->e,
                     "warning: %zu swarm service%s left by earlier "
                     "runs; run `tpuci gc`",
                     n, n == 1 ? "" : "s");
  }
  tpuci__sw_next_image(sw);
}

static void tpuci__sw_on_nodes(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_t *sw = p;
  if (tpuci__erun_answered(&sw->e)) return;
  if (!res->ok) {
    tpuci__erun_prepare_fail(&sw->e, TPUCI_EENGINE,
                             tpuci__printf("swarm: listing the nodes failed: %s", res->message));
    return;
  }
  if (tpuci__sw_plan_fits(sw->e.plan, res->json, &sw->e.rt.err) != 0) {
    tpuci__erun_prepare_done(&sw->e, sw->e.rt.err.code);
    return;
  }
  sw->e.bg++;
  sw->e.prep_req = tpuci__sw_service_list(sw->e.eng, TPUCI__LABEL_RUN, tpuci__sw_on_services, sw);
}

static void tpuci__sw_on_info(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_t *sw = p;
  char *where;
  const char *node;
  if (tpuci__erun_answered(&sw->e)) return;
  if (!res->ok) {
    tpuci__erun_prepare_fail(&sw->e, TPUCI_EENGINE,
                             tpuci__printf("swarm: GET /info failed: %s", res->message));
    return;
  }
  where = tpuci__engine_where(sw->e.eng);
  if (tpuci__sw_info_check(res->json, where, &sw->e.rt.err) != 0) {
    free(where);
    tpuci__erun_prepare_done(&sw->e, sw->e.rt.err.code);
    return;
  }
  free(where);
  node = json_string_value(json_object_get(json_object_get(res->json, "Swarm"), "NodeID"));
  free(sw->manager_node);
  sw->manager_node = node ? tpuci__strdup(node) : NULL;
  sw->e.bg++;
  sw->e.prep_req = tpuci__sw_node_list(sw->e.eng, tpuci__sw_on_nodes, sw);
}

static void tpuci__sw_on_version(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_t *sw = p;
  if (tpuci__erun_answered(&sw->e)) return;
  if (tpuci__erun_version(&sw->e, res) != 0) return;
  sw->e.bg++;
  sw->e.prep_req = tpuci__engine_info(sw->e.eng, tpuci__sw_on_info, sw);
}

int tpuci__sw_prepare(tpuci__runtime_t *rt, const tpuci__plan_t *plan,
                      void (*cb)(tpuci__runtime_t *rt, int status)) {
  tpuci__sw_t *sw = (tpuci__sw_t *) rt;
  size_t i;
  int rc;
  rc = tpuci__erun_prepare_begin(&sw->e, plan, cb);
  if (rc != 0) return rc;
  for (i = 0; i < sw->nimages; i++) {
    free(sw->images[i]);
    if (sw->auths != NULL) tpuci__wipe_free(sw->auths[i]);
  }
  free(sw->images);
  free(sw->auths);
  sw->nimages = plan->nimages;
  sw->images = tpuci__calloc(plan->nimages + 1, sizeof(char *));
  sw->auths = tpuci__calloc(plan->nimages + 1, sizeof(char *));
  sw->e.bg++;
  sw->e.prep_req = tpuci__engine_version(sw->e.eng, tpuci__sw_on_version, sw);
  return 0;
}

int tpuci__runtime_swarm_check(const tpuci__plan_t *plan, tpuci__err_t *err) {
  tpuci__docker_host_t host;
  tpuci__err_t e = {0, NULL};
  size_t i, k;
  int local = 0;

  if (tpuci__docker_build_check(plan, TPUCI__RUNTIME_SWARM, err) != 0) return TPUCI_ESPEC;
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
      r = tpuci__err_set(err, TPUCI_ESPEC, "%s: job '%s': %s", inst->where ? inst->where : "spec",
                         inst->job, why);
      free(why);
      return r;
    }
    hosts = tpuci__plan_hosts(plan, inst);
    if (hosts > 1 && inst->network != NULL)
      return tpuci__err_set(err, TPUCI_ESPEC,
                            "%s: job '%s': a gang gets an overlay network of "
                            "its own; leave out network = \"%s\"",
                            inst->where ? inst->where : "spec", inst->job, inst->network);
    /* A manager on this machine: its tasks' bind mounts are this
     * machine's paths when they run here, and the engine refuses a
     * missing one only once the task is placed. */
    for (k = 0; local && k < inst->nmounts; k++) {
      struct stat st;
      if (stat(inst->mounts[k].source, &st) == 0) continue;
      return tpuci__err_set(err, TPUCI_ESPEC,
                            "%s: job '%s': mount source %s: %s; create it or "
                            "fix the path",
                            inst->where ? inst->where : "spec", inst->job, inst->mounts[k].source,
                            strerror(errno));
    }
  }
  return 0;
}
