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

void tpuci__dk_prepare_end(tpuci__erun_t *e) {
  tpuci__dk_t *dk = (tpuci__dk_t *) e;
  free(dk->images);
  dk->images = NULL;
}

static char *tpuci__dk_tar_hint(const char *ref) {
  const char *slash = strrchr(ref, '/');
  const char *base = slash ? slash + 1 : ref;
  size_t n = strcspn(base, ":@");
  char *b = tpuci__strndup(base, n);
  char *s = tpuci__printf("build or load it first, e.g. docker load -i %s.tar", b);
  free(b);
  return s;
}

static void tpuci__dk_next_image(tpuci__dk_t *dk);

static void tpuci__dk_on_pulled(void *p, const tpuci__pull_res_t *res) {
  tpuci__dk_t *dk = p;
  const tpuci__image_t *img = &dk->e.plan->images[dk->images[dk->e.image_next - 1]];
  if (tpuci__erun_answered(&dk->e)) return;
  if (res->ok) {
    tpuci__dk_next_image(dk);
    return;
  }
  if (dk->e.image_present) {
    tpuci__erun_tell(&dk->e,
                     "warning: could not pull image '%s' (%s); using "
                     "the local copy",
                     img->ref, res->message);
    tpuci__dk_next_image(dk);
    return;
  }
  if (res->denied) {
    /* Loading a tar is not the fix for a refused login. */
    tpuci__erun_prepare_fail(&dk->e, TPUCI_EIMAGE,
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
    tpuci__erun_prepare_fail(&dk->e, res->engine_error != 0 ? TPUCI_EENGINE : TPUCI_EIMAGE, m);
    free(hint);
  }
}

static void tpuci__dk_on_image(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  const tpuci__image_t *img = &dk->e.plan->images[dk->images[dk->e.image_next - 1]];
  char *hint;
  if (tpuci__erun_answered(&dk->e)) return;
  switch (tpuci__erun_image(&dk->e, img, res, tpuci__dk_on_pulled)) {
    case TPUCI__ERUN_IMG_HANDLED: return;
    case TPUCI__ERUN_IMG_NEVER:
      hint = tpuci__dk_tar_hint(img->ref);
      tpuci__erun_prepare_fail(&dk->e, TPUCI_EIMAGE,
                               tpuci__printf("image '%s' is not present and "
                                             "pull = \"never\" (image \"%s\"%s%s); %s",
                                             img->ref, img->name, img->where ? " at " : "",
                                             img->where ? img->where : "", hint));
      free(hint);
      return;
    case TPUCI__ERUN_IMG_USE: tpuci__dk_next_image(dk); return;
  }
}

static void tpuci__dk_next_image(tpuci__dk_t *dk) {
  const tpuci__image_t *img;
  if (dk->e.image_next >= dk->nimages) {
    tpuci__erun_prepare_done(&dk->e, 0);
    return;
  }
  img = &dk->e.plan->images[dk->images[dk->e.image_next++]];
  dk->e.bg++;
  dk->e.prep_req =
      tpuci__engine_image_inspect(dk->e.eng, tpuci__image_engine_ref(img), tpuci__dk_on_image, dk);
}

static void tpuci__dk_on_networks(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  size_t nets = res->ok ? tpuci__docker_count_dead(res->json) : 0;
  if (tpuci__erun_answered(&dk->e)) return;
  if (dk->leftover_ctrs > 0 || nets > 0) {
    if (nets == 0)
      tpuci__erun_tell(&dk->e,
                       "warning: %zu container%s left by earlier "
                       "runs; run `tpuci gc`",
                       dk->leftover_ctrs, dk->leftover_ctrs == 1 ? "" : "s");
    else
      tpuci__erun_tell(&dk->e,
                       "warning: %zu container%s and %zu network%s "
                       "left by earlier runs; run `tpuci gc`",
                       dk->leftover_ctrs, dk->leftover_ctrs == 1 ? "" : "s", nets,
                       nets == 1 ? "" : "s");
  }
  tpuci__dk_next_image(dk);
}

static void tpuci__dk_on_containers(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  if (tpuci__erun_answered(&dk->e)) return;
  dk->leftover_ctrs = res->ok ? tpuci__docker_count_dead(res->json) : 0;
  dk->e.bg++;
  dk->e.prep_req =
      tpuci__engine_network_list(dk->e.eng, TPUCI__LABEL_RUN, tpuci__dk_on_networks, dk);
}

static void tpuci__dk_on_info(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  const char *root = json_string_value(json_object_get(res->json, "DockerRootDir"));
  struct statvfs st;
  if (tpuci__erun_answered(&dk->e)) return;
  /* Over TCP the data root may be a path of another machine: the same
   * path here says nothing about the engine's disk. */
  if (res->ok && root != NULL && !tpuci__docker_host_remote(&dk->e.eng->host) &&
      statvfs(root, &st) == 0) {
    unsigned long long avail = (unsigned long long) st.f_bavail * st.f_frsize;
    if (avail < TPUCI__DISK_FAIL_BYTES) {
      tpuci__erun_prepare_fail(&dk->e, TPUCI_ENOSPACE,
                               tpuci__printf("only %.0f MiB free under the engine's data root "
                                             "%s; free some space (`tpuci gc`, `docker system "
                                             "prune`)",
                                             (double) avail / TPUCI__MIB, root));
      return;
    }
    if (avail < TPUCI__DISK_WARN_BYTES)
      tpuci__erun_tell(&dk->e,
                       "warning: only %.0f MiB free under the "
                       "engine's data root %s",
                       (double) avail / TPUCI__MIB, root);
  }
  dk->e.bg++;
  dk->e.prep_req =
      tpuci__engine_container_list(dk->e.eng, TPUCI__LABEL_RUN, tpuci__dk_on_containers, dk);
}

static void tpuci__dk_on_version(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_t *dk = p;
  if (tpuci__erun_answered(&dk->e)) return;
  if (tpuci__erun_version(&dk->e, res) != 0) return;
  if (dk->e.eng->podman) {
    char *why = tpuci__podman_gpus_refusal(dk->e.plan);
    if (why != NULL) {
      tpuci__erun_prepare_fail(&dk->e, TPUCI_EENGINE, why);
      return;
    }
    /* A rootful podman without CAP_SYS_RESOURCE cannot start containers
     * with its own default limits: tpuci asks for what it can give. */
    tpuci__podman_probe(dk->e.eng->host.unix_path, &dk->limits);
  }
  dk->e.bg++;
  dk->e.prep_req = tpuci__engine_info(dk->e.eng, tpuci__dk_on_info, dk);
}

int tpuci__runtime_docker_check(const tpuci__plan_t *plan, tpuci__err_t *err) {
  tpuci__docker_host_t host;
  tpuci__err_t e = {0, NULL};
  size_t i, k;
  int local, r;

  /* The images the run builds: their context and Dockerfile are here,
   * whatever the engine. */
  if ((r = tpuci__docker_build_check(plan, TPUCI__RUNTIME_DOCKER, err)) != 0) return r;
  /* A remote engine's paths are not ours to look at; HostConfig.Mounts
   * makes it refuse a missing source itself. */
  if (tpuci__docker_host_from_env(&host, &e) != 0) {
    tpuci__err_clear(&e);
    return 0;
  }
  local = host.unix_path != NULL;
  {
    char *why = tpuci__remote_results_refusal(plan, TPUCI__RUNTIME_DOCKER, &host);
    tpuci__docker_host_free(&host);
    if (why != NULL) {
      tpuci__err_set(err, TPUCI_EENGINE, "%s", why);
      free(why);
      return TPUCI_EENGINE;
    }
  }
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
                            inst->where ? inst->where : "spec", inst->job, inst->mounts[k].source,
                            strerror(errno));
    }
  }
  return 0;
}

int tpuci__dk_prepare(tpuci__runtime_t *rt, const tpuci__plan_t *plan,
                      void (*cb)(tpuci__runtime_t *rt, int status)) {
  tpuci__dk_t *dk = (tpuci__dk_t *) rt;
  size_t i, j;
  int rc;

  /* A gang brings its own network. */
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    if (!inst->selected || inst->runtime != TPUCI__RUNTIME_DOCKER || inst->network == NULL ||
        tpuci__plan_hosts(plan, inst) < 2)
      continue;
    return tpuci__err_set(&rt->err, TPUCI_ESPEC,
                          "%s: job '%s': network = \"%s\" cannot be used "
                          "with the %d-host topology '%s': the hosts of a "
                          "gang get a private network of their own",
                          inst->where ? inst->where : "spec", inst->job, inst->network,
                          tpuci__plan_hosts(plan, inst), plan->topologies[inst->topology].name);
  }
  rc = tpuci__erun_prepare_begin(&dk->e, plan, cb);
  if (rc != 0) return rc;
  dk->images = tpuci__calloc(plan->nimages + 1, sizeof(int));
  dk->nimages = 0;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    int seen = 0;
    if (!inst->selected || inst->runtime != TPUCI__RUNTIME_DOCKER) continue;
    if (inst->image < 0 || (size_t) inst->image >= plan->nimages) continue;
    for (j = 0; j < dk->nimages; j++)
      if (dk->images[j] == inst->image) seen = 1;
    if (!seen) dk->images[dk->nimages++] = inst->image;
  }
  dk->e.bg++;
  dk->e.prep_req = tpuci__engine_version(dk->e.eng, tpuci__dk_on_version, dk);
  return 0;
}
