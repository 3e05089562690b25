/* The docker runtime's checks before a run: the engine answers and
 * speaks a usable API, disk space under its data root, leftovers of
 * earlier runs, the images (pulled when missing); and, before anything
 * is made, that bind mount sources exist. Ctrl-C cuts it short
 * (abort()). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "runtime/engine/container.h"
#include "runtime/engine/endpoint.h"
#include "runtime/engine/gang.h"
#include "runtime/docker/driver.h"

/* prepare: version, disk, leftovers, images. */

static void tpuci__dk_prepare_done(tpuci__dk_t *dk, int status) {
  void (*cb)(tpuci__runtime_t *, int) = dk->prepare_cb;
  dk->prepare_cb = NULL;
  free(dk->images);
  dk->images = NULL;
  if (cb) cb(&dk->rt, status);
  tpuci__dk_maybe_closed(dk);
}

/* Fails prepare with `msg` (taken). */
static void tpuci__dk_prepare_fail(tpuci__dk_t *dk, int code, char *msg) {
  tpuci__err_set(&dk->rt.err, code, "%s", msg);
  free(msg);
  tpuci__dk_prepare_done(dk, code);
}

/* Every answer to a prepare request comes through here first. Returns 1
 * when prepare was aborted meanwhile, and has then ended it. */
static int tpuci__dk_prep_answered(tpuci__dk_t *dk) {
  dk->bg--;
  dk->prep_req = NULL;
  dk->pull = NULL;
  if (!dk->aborting) return 0;
  tpuci__err_set(&dk->rt.err, UV_ECANCELED, "cancelled");
  tpuci__dk_prepare_done(dk, UV_ECANCELED);
  return 1;
}

void tpuci__dk_abort(tpuci__runtime_t *rt) {
  tpuci__dk_t *dk = (tpuci__dk_t *) rt;
  if (dk->prepare_cb == NULL || dk->aborting) return;
  dk->aborting = 1;
  /* An image pull, or a check of an engine that does not answer. The
   * engine stops a pull whose client went away. */
  if (dk->prep_req != NULL) tpuci__engine_cancel(dk->eng, dk->prep_req);
  if (dk->pull != NULL) tpuci__pull_cancel(dk->pull);
}

static char *tpuci__dk_tar_hint(const char *ref) {
  const char *slash = strrchr(ref, '/');
  const char *base = slash ? slash + 1 : ref;
  size_t n = strcspn(base, ":@");
  char *b = tpuci__strndup(base, n);
  char *s = tpuci__printf("build or load it first, e.g. docker load -i %s.tar",
                          b);
  free(b);
  return s;
}

static void tpuci__dk_next_image(tpuci__dk_t *dk);

static void tpuci__dk_on_pulled(void *p, const tpuci__pull_res_t *res) {
  tpuci__dk_t *dk = p;
  const tpuci__image_t *img = &dk->plan->images[dk->images[dk->image_next - 1]];
  if (tpuci__dk_prep_answered(dk)) return;
  if (res->ok) {
    tpuci__dk_next_image(dk);
    return;
  }
  if (dk->image_present) {
    char *m = tpuci__printf("warning: could not pull image '%s' (%s); using "
                            "the local copy",
                            img->ref, res->message);
    tpuci__dk_message(dk, m);
    free(m);
    tpuci__dk_next_image(dk);
    return;
  }
  if (res->denied) {
    /* Loading a tar is not the fix for a refused login. */
    tpuci__dk_prepare_fail(dk, TPUCI_EIMAGE,
                           tpuci__printf("image '%s' is not present and could "
                                         "not be pulled: %s; see "
                                         "docs/docker.md, \"Private "
                                         "registries\"",
                                         img->ref, res->message));
    return;
  }
  {
    char *hint = tpuci__dk_tar_hint(img->ref);
    char *m = tpuci__printf("image '%s' is not present and could not be "
                            "pulled (%s); %s",
                            img->ref, res->message, hint);
    tpuci__dk_prepare_fail(dk, res->engine_error != 0 ? TPUCI_EENGINE : TPUCI_EIMAGE,
                           m);
    free(hint);
  }
}

static void tpuci__dk_on_pull_progress(void *p, const tpuci__pull_progress_t *pr) {
  tpuci__dk_t *dk = p;
  if (dk->rt.on_pull != NULL) dk->rt.on_pull(&dk->rt, pr);
}

static void tpuci__dk_on_image(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  const tpuci__image_t *img = &dk->plan->images[dk->images[dk->image_next - 1]];
  if (tpuci__dk_prep_answered(dk)) return;
  if (!res->ok && res->status != 404) {
    tpuci__dk_prepare_fail(dk, TPUCI_EENGINE,
                           tpuci__printf("docker engine: inspecting image "
                                         "'%s' failed: %s",
                                         img->ref, res->message));
    return;
  }
  dk->image_present = res->ok;
  if (!res->ok && img->pull == TPUCI__PULL_NEVER) {
    char *hint = tpuci__dk_tar_hint(img->ref);
    char *m = tpuci__printf("image '%s' is not present and pull = \"never\" "
                            "(image \"%s\"%s%s); %s",
                            img->ref, img->name, img->where ? " at " : "",
                            img->where ? img->where : "", hint);
    tpuci__dk_prepare_fail(dk, TPUCI_EIMAGE, m);
    free(hint);
    return;
  }
  if (!res->ok || img->pull == TPUCI__PULL_ALWAYS) {
    char *m = tpuci__printf("pulling image '%s'", img->ref);
    tpuci__dk_message(dk, m);
    free(m);
    dk->pull = tpuci__pull_start(dk->eng, img->ref, tpuci__dk_on_pull_progress,
                                 tpuci__dk_on_pulled, dk, &dk->rt.err);
    if (dk->pull == NULL) {
      tpuci__dk_prepare_done(dk, dk->rt.err.code);
      return;
    }
    dk->bg++;
    return;
  }
  tpuci__dk_next_image(dk);
}

static void tpuci__dk_next_image(tpuci__dk_t *dk) {
  const tpuci__image_t *img;
  if (dk->image_next >= dk->nimages) {
    tpuci__dk_prepare_done(dk, 0);
    return;
  }
  img = &dk->plan->images[dk->images[dk->image_next++]];
  dk->bg++;
  dk->prep_req = tpuci__engine_image_inspect(dk->eng, img->ref, tpuci__dk_on_image, dk);
}

static size_t tpuci__dk_count_dead(json_t *list) {
  size_t i, n = 0;
  json_t *o;
  json_array_foreach(list, i, o) {
    if (!tpuci__docker_is_swarm(o) &&
        tpuci__docker_run_alive(json_object_get(o, "Labels")) == 0)
      n++;
  }
  return n;
}

static void tpuci__dk_on_networks(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  size_t nets = res->ok ? tpuci__dk_count_dead(res->json) : 0;
  if (tpuci__dk_prep_answered(dk)) return;
  if (dk->leftover_ctrs > 0 || nets > 0) {
    char *m;
    if (nets == 0)
      m = tpuci__printf("warning: %zu container%s left by earlier runs; run "
                        "`tpuci gc`",
                        dk->leftover_ctrs, dk->leftover_ctrs == 1 ? "" : "s");
    else
      m = tpuci__printf("warning: %zu container%s and %zu network%s left by "
                        "earlier runs; run `tpuci gc`",
                        dk->leftover_ctrs, dk->leftover_ctrs == 1 ? "" : "s",
                        nets, nets == 1 ? "" : "s");
    tpuci__dk_message(dk, m);
    free(m);
  }
  tpuci__dk_next_image(dk);
}

static void tpuci__dk_on_containers(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  if (tpuci__dk_prep_answered(dk)) return;
  dk->leftover_ctrs = res->ok ? tpuci__dk_count_dead(res->json) : 0;
  dk->bg++;
  dk->prep_req = tpuci__engine_network_list(dk->eng, TPUCI__LABEL_RUN, tpuci__dk_on_networks, dk);
}

static void tpuci__dk_on_info(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  const char *root = json_string_value(json_object_get(res->json, "DockerRootDir"));
  struct statvfs st;
  if (tpuci__dk_prep_answered(dk)) return;
  /* Over TCP the data root may be a path of another machine: the same
   * path here says nothing about the engine's disk. */
  if (res->ok && root != NULL && !tpuci__docker_host_remote(&dk->eng->host) &&
      statvfs(root, &st) == 0) {
    unsigned long long avail = (unsigned long long) st.f_bavail * st.f_frsize;
    if (avail < TPUCI__DISK_FAIL_BYTES) {
      tpuci__dk_prepare_fail(
          dk, TPUCI_ENOSPACE,
          tpuci__printf("only %.0f MiB free under the engine's data root "
                        "%s; free some space (`tpuci gc`, `docker system "
                        "prune`)",
                        (double) avail / TPUCI__MIB, root));
      return;
    }
    if (avail < TPUCI__DISK_WARN_BYTES) {
      char *m = tpuci__printf("warning: only %.0f MiB free under the "
                              "engine's data root %s",
                              (double) avail / TPUCI__MIB, root);
      tpuci__dk_message(dk, m);
      free(m);
    }
  }
  dk->bg++;
  dk->prep_req = tpuci__engine_container_list(dk->eng, TPUCI__LABEL_RUN, tpuci__dk_on_containers, dk);
}

static void tpuci__dk_on_version(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  if (tpuci__dk_prep_answered(dk)) return;
  if (res->error != 0) {
    tpuci__dk_prepare_fail(dk, TPUCI_EENGINE,
                           tpuci__printf("cannot reach the Docker Engine "
                                         "(%s); %s",
                                         res->message,
                                         tpuci__engine_reach_hint(res->error)));
    return;
  }
  if (!res->ok || res->json == NULL) {
    char *where = tpuci__engine_where(dk->eng);
    char *m = tpuci__printf("the Docker Engine (%s) answered GET /version "
                            "with an error: %s",
                            where, res->ok ? "not JSON" : res->message);
    free(where);
    tpuci__dk_prepare_fail(dk, TPUCI_EENGINE, m);
    return;
  }
  if (tpuci__engine_negotiate(dk->eng, res->json, &dk->rt.err) != 0) {
    tpuci__dk_prepare_done(dk, dk->rt.err.code);
    return;
  }
  if (dk->eng->podman) {
    char *why = tpuci__podman_gpus_refusal(dk->plan);
    if (why != NULL) {
      tpuci__dk_prepare_fail(dk, TPUCI_EENGINE, why);
      return;
    }
    /* A rootful podman without CAP_SYS_RESOURCE cannot start containers
     * with its own default limits: tpuci asks for what it can give. */
    tpuci__podman_probe(dk->eng->host.unix_path, &dk->limits);
  }
  dk->bg++;
  dk->prep_req = tpuci__engine_info(dk->eng, tpuci__dk_on_info, dk);
}

int tpuci__runtime_docker_check(const tpuci__plan_t *plan, tpuci__err_t *err) {
  tpuci__docker_host_t host;
  tpuci__err_t e = {0, NULL};
  size_t i, k;
  int local;

  /* A remote engine's paths are not ours to look at; HostConfig.Mounts
   * makes it refuse a missing source itself. */
  if (tpuci__docker_host_from_env(&host, &e) != 0) {
    tpuci__err_clear(&e);
    return 0;
  }
  local = host.unix_path != NULL;
  tpuci__docker_host_free(&host);
  if (!local) return 0;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    if (!inst->selected || inst->runtime != TPUCI__RUNTIME_DOCKER) continue;
    for (k = 0; k < inst->nmounts; k++) {
      struct stat st;
      if (stat(inst->mounts[k].source, &st) == 0) continue;
      return tpuci__err_set(err, TPUCI_ESPEC,
                            "%s: job '%s': mount source %s: %s (the engine "
                            "would create it as an empty folder owned by "
                            "root); create it or fix the path",
                            inst->where ? inst->where : "spec", inst->job,
                            inst->mounts[k].source, strerror(errno));
    }
  }
  return 0;
}

/* Bind mounts (and pytest's results folder) on an engine over TCP. */
static void tpuci__dk_remote_warnings(tpuci__dk_t *dk,
                                      const tpuci__plan_t *plan) {
  tpuci__strv_t w = {0};
  size_t i;
  tpuci__remote_mount_warnings(plan, TPUCI__RUNTIME_DOCKER, &dk->eng->host, &w);
  for (i = 0; i < w.len; i++) {
    char *m = tpuci__printf("warning: %s", w.items[i]);
    tpuci__dk_message(dk, m);
    free(m);
  }
  tpuci__strv_free(&w);
}

int tpuci__dk_prepare(tpuci__runtime_t *rt, const tpuci__plan_t *plan,
                             void (*cb)(tpuci__runtime_t *rt, int status)) {
  tpuci__dk_t *dk = (tpuci__dk_t *) rt;
  size_t i, j;
  int rc;

  if (dk->closing || dk->prepare_cb != NULL)
    return tpuci__err_set(&rt->err, TPUCI_ESTATE,
                          "the docker runtime is busy");
  /* A gang brings its own network. */
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    if (!inst->selected || inst->runtime != TPUCI__RUNTIME_DOCKER ||
        inst->network == NULL || tpuci__plan_hosts(plan, inst) < 2)
      continue;
    return tpuci__err_set(&rt->err, TPUCI_ESPEC,
                          "%s: job '%s': network = \"%s\" cannot be used "
                          "with the %d-host topology '%s': the hosts of a "
                          "gang get a private network of their own",
                          inst->where ? inst->where : "spec", inst->job,
                          inst->network, tpuci__plan_hosts(plan, inst),
                          plan->topologies[inst->topology].name);
  }
  rc = tpuci__dk_engine(dk);
  if (rc != 0) return rc;
  tpuci__dk_remote_warnings(dk, plan);
  dk->plan = plan;
  dk->prepare_cb = cb;
  dk->images = tpuci__calloc(plan->nimages + 1, sizeof(int));
  dk->nimages = 0;
  dk->image_next = 0;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    int seen = 0;
    if (!inst->selected || inst->runtime != TPUCI__RUNTIME_DOCKER) continue;
    if (inst->image < 0 || (size_t) inst->image >= plan->nimages) continue;
    for (j = 0; j < dk->nimages; j++)
      if (dk->images[j] == inst->image) seen = 1;
    if (!seen) dk->images[dk->nimages++] = inst->image;
  }
  dk->bg++;
  dk->prep_req = tpuci__engine_version(dk->eng, tpuci__dk_on_version, dk);
  return 0;
}
