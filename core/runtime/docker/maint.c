/* `tpuci gc` and `tpuci doctor`: blocking helpers on a loop of their own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "runtime/engine/container.h"
#include "runtime/engine/endpoint.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/podman.h"
#include "runtime/engine/sync.h"
#include "runtime/docker/netprobe.h"

/* GET /version and negotiate. On failure err holds a one-line message. */
static int tpuci__sync_connect(tpuci__sync_t *s, tpuci__err_t *err) {
  tpuci__sync_res_t r = {0};
  int rc = 0;
  tpuci__engine_version(s->eng, tpuci__sync_cb, &r);
  tpuci__sync_wait(s, &r);
  if (r.error != 0)
    rc = tpuci__err_set(err, TPUCI_EENGINE, "cannot reach the Docker Engine (%s); %s", r.message,
                        tpuci__engine_reach_hint(r.error, r.hint));
  else if (!r.ok || r.json == NULL)
    rc = tpuci__err_set(err, TPUCI_EENGINE,
                        "the Docker Engine answered GET /version with an "
                        "error: %s",
                        r.ok ? "not JSON" : r.message);
  else rc = tpuci__engine_negotiate(s->eng, r.json, err);
  tpuci__sync_res_free(&r);
  return rc;
}

static const char *tpuci__label(json_t *o, const char *key) {
  const char *v = json_string_value(json_object_get(json_object_get(o, "Labels"), key));
  return v ? v : "?";
}

/* A container's name without the leading '/'. */
static const char *tpuci__ctr_display(json_t *o) {
  const char *n = json_string_value(json_array_get(json_object_get(o, "Names"), 0));
  if (n == NULL) n = json_string_value(json_object_get(o, "Id"));
  if (n == NULL) return "?";
  return n[0] == '/' ? n + 1 : n;
}

/* Containers first (they hold the networks), then networks. */
static int tpuci__gc_kind(tpuci__sync_t *s, int networks, int dry_run, tpuci__buf_t *report) {
  tpuci__sync_res_t r = {0};
  const char *kind = networks ? "network" : "container";
  size_t i;
  json_t *o;
  int found = 0;

  if (networks) tpuci__engine_network_list(s->eng, TPUCI__LABEL_RUN, tpuci__sync_cb, &r);
  else tpuci__engine_container_list(s->eng, TPUCI__LABEL_RUN, tpuci__sync_cb, &r);
  if (tpuci__sync_listed(s, &r, networks ? "networks" : "containers", report) != 0) return -1;
  json_array_foreach(r.json, i, o) {
    json_t *labels = json_object_get(o, "Labels");
    int alive = tpuci__docker_run_alive(labels);
    const char *name =
        networks ? json_string_value(json_object_get(o, "Name")) : tpuci__ctr_display(o);
    const char *id = json_string_value(json_object_get(o, "Id"));
    const char *keep = json_string_value(json_object_get(labels, TPUCI__LABEL_KEEP));
    const char *state = json_string_value(json_object_get(o, "State"));
    tpuci__sync_res_t d = {0};

    if (name == NULL) name = "?";
    if (alive == 1 || tpuci__docker_is_swarm(o)) continue;
    if (alive == -1 && !networks && state != NULL && strcmp(state, "running") == 0) {
      tpuci__buf_addf(report,
                      "skipped %s %s: run %s is on host %s, tpuci cannot tell "
                      "whether it is alive\n",
                      kind, name, tpuci__label(o, TPUCI__LABEL_RUN),
                      tpuci__label(o, TPUCI__LABEL_HOST));
      continue;
    }
    found++;
    if (dry_run) {
      tpuci__buf_addf(
          report, "would remove %s %s (run %s, %s%s)\n", kind, name,
          tpuci__label(o, TPUCI__LABEL_RUN), networks ? "job " : "instance ",
          networks ? tpuci__label(o, TPUCI__LABEL_JOB) : tpuci__label(o, TPUCI__LABEL_INSTANCE));
      if (keep != NULL && strcmp(keep, "1") == 0)
        tpuci__buf_adds(report, "  (kept by --keep-failed)\n");
      continue;
    }
    if (networks) tpuci__engine_network_remove(s->eng, id ? id : name, tpuci__sync_cb, &d);
    else tpuci__engine_container_remove(s->eng, id ? id : name, tpuci__sync_cb, &d);
    tpuci__sync_wait(s, &d);
    if (networks && alive == -1 && d.status == 403) {
      /* Still used by containers of a run on another host. */
      tpuci__buf_addf(report,
                      "skipped network %s: in use by run %s on host %s, tpuci "
                      "cannot tell whether it is alive\n",
                      name, tpuci__label(o, TPUCI__LABEL_RUN), tpuci__label(o, TPUCI__LABEL_HOST));
      found--;
    } else {
      /* Not removed: not found. */
      found -= !tpuci__sync_removed(&d, kind, name, tpuci__label(o, TPUCI__LABEL_RUN), report);
    }
    tpuci__sync_res_free(&d);
  }
  tpuci__sync_res_free(&r);
  return found;
}

int tpuci__runtime_docker_gc(int dry_run, tpuci__buf_t *report, tpuci__err_t *err) {
  size_t start = report->len;
  tpuci__sync_t s;
  int rc, a, b;

  rc = tpuci__sync_open(&s, err);
  if (rc != 0) return rc;
  rc = tpuci__sync_connect(&s, err);
  if (rc != 0) {
    tpuci__sync_close(&s);
    return rc;
  }
  a = tpuci__gc_kind(&s, 0, dry_run, report);
  b = tpuci__gc_kind(&s, 1, dry_run, report);
  tpuci__sync_close(&s);
  if (a < 0 || b < 0)
    return tpuci__err_set(err, TPUCI_EENGINE, "docker engine: listing tpuci's objects failed");
  if (a + b == 0 && report->len == start) tpuci__buf_adds(report, "nothing to remove\n");
  return a + b;
}

/* doctor */

static void tpuci__size_text(char *buf, size_t size, double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024)
    snprintf(buf, size, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  else snprintf(buf, size, "%.0f MiB", bytes / (1024.0 * 1024));
}

int tpuci__runtime_docker_doctor(const tpuci__plan_t *plan, tpuci__buf_t *report,
                                 tpuci__err_t *err) {
  tpuci__sync_t s;
  tpuci__sync_res_t r = {0};
  int rc, first = 0, *present;
  tpuci__podman_limits_t limits;
  tpuci__probe_ctx_t probes = {.s = &s, .plan = plan, .limits = &limits, .report = report};
  char *where;
  char size[32];

  rc = tpuci__sync_open(&s, err);
  if (rc != 0) {
    tpuci__buf_addf(report, "FAIL engine: %s\n", err->msg ? err->msg : "");
    return rc;
  }
  where = tpuci__engine_where(s.eng);
  rc = tpuci__sync_connect(&s, err);
  if (rc != 0) {
    tpuci__buf_addf(report, "FAIL engine: %s\n", err->msg ? err->msg : "");
    free(where);
    tpuci__sync_close(&s);
    return rc;
  }
  tpuci__buf_addf(report, "ok   engine: %s %s (API %s, tpuci uses %s) at %s\n", s.eng->server_name,
                  s.eng->server_version, s.eng->server_api, s.eng->prefix + 2, where);
  free(where);
  tpuci__endpoint_doctor(&s.eng->host, plan, TPUCI__RUNTIME_DOCKER, report);
  memset(&limits, 0, sizeof(limits));
  if (s.eng->podman) {
    char *text;
    tpuci__podman_probe(s.eng->host.unix_path, &limits);
    text = tpuci__podman_limits_text(&limits);
    tpuci__buf_addf(report, "%s podman limits: %s\n", limits.known ? "ok  " : "warn", text);
    free(text);
    if (s.eng->podman_major < TPUCI__PODMAN_OOM_MAJOR)
      tpuci__buf_addf(report,
                      "warn podman OOM: podman %s never reports OOM kills "
                      "(State.OOMKilled; fixed in podman 5.0): a job killed "
                      "for memory ends failed with exit 137, not oom\n",
                      s.eng->server_version);
  }

  /* Disk space under the engine's data root. */
  tpuci__engine_info(s.eng, tpuci__sync_cb, &r);
  tpuci__sync_wait(&s, &r);
  {
    const char *root = json_string_value(json_object_get(r.json, "DockerRootDir"));
    struct statvfs st;
    if (!r.ok) {
      tpuci__buf_addf(report, "warn disk: GET /info failed: %s\n", r.message);
    } else if (root != NULL && tpuci__docker_host_remote(&s.eng->host)) {
      tpuci__buf_addf(report,
                      "warn disk: the engine is reached %s, so its data "
                      "root %s may be on another machine; not checked\n",
                      tpuci__docker_host_via(&s.eng->host), root);
    } else if (root == NULL || statvfs(root, &st) != 0) {
      tpuci__buf_addf(report,
                      "warn disk: the engine's data root %s is not visible "
                      "from here (a remote engine?); not checked\n",
                      root ? root : "(unknown)");
    } else {
      double avail = (double) st.f_bavail * (double) st.f_frsize;
      tpuci__size_text(size, sizeof(size), avail);
      if (avail < 100.0 * 1024 * 1024) {
        tpuci__buf_addf(report, "FAIL disk: only %s free under %s\n", size, root);
        if (!first)
          first = tpuci__err_set(err, TPUCI_ENOSPACE,
                                 "only %s free under the engine's data root %s", size, root);
      } else if (avail < 1024.0 * 1024 * 1024) {
        tpuci__buf_addf(report, "warn disk: only %s free under %s\n", size, root);
      } else {
        tpuci__buf_addf(report, "ok   disk: %s free under %s\n", size, root);
      }
    }
  }
  tpuci__sync_res_free(&r);

  /* Images of the selected docker instances. */
  present = plan != NULL ? tpuci__calloc(plan->nimages + 1, sizeof(*present)) : NULL;
  if (plan != NULL) {
    size_t i;
    for (i = 0; i < plan->nimages; i++) {
      const tpuci__image_t *img = &plan->images[i];
      if (!tpuci__plan_image_used(plan, i, TPUCI__RUNTIME_DOCKER)) continue;
      tpuci__engine_image_inspect(s.eng, img->ref, tpuci__sync_cb, &r);
      tpuci__sync_wait(&s, &r);
      if (r.ok) {
        json_t *sz = json_object_get(r.json, "Size");
        present[i] = 1;
        tpuci__size_text(size, sizeof(size),
                         json_is_integer(sz) ? (double) json_integer_value(sz) : 0);
        tpuci__buf_addf(report, "ok   image %s (\"%s\"): present, %s\n", img->ref, img->name, size);
      } else if (r.status == 404 && img->build != NULL) {
        tpuci__buf_addf(report,
                        "warn image %s (\"%s\"): not built yet; `tpuci run` builds it "
                        "from %s\n",
                        img->ref, img->name, img->build->context);
      } else if (r.status == 404 && img->pull == TPUCI__PULL_NEVER) {
        tpuci__buf_addf(report,
                        "FAIL image %s (\"%s\"): not present and pull = "
                        "\"never\"; build or load it first (docker build, "
                        "docker load -i FILE.tar)\n",
                        img->ref, img->name);
        if (!first)
          first = tpuci__err_set(err, TPUCI_EIMAGE,
                                 "image '%s' is not present and pull = "
                                 "\"never\"",
                                 img->ref);
      } else if (r.status == 404) {
        tpuci__buf_addf(report,
                        "warn image %s (\"%s\"): not present; `tpuci run` "
                        "will try to pull it\n",
                        img->ref, img->name);
      } else {
        tpuci__buf_addf(report, "FAIL image %s: %s\n", img->ref, r.message);
        if (!first)
          first = tpuci__err_set(err, TPUCI_EENGINE,
                                 "docker engine: inspecting image '%s' "
                                 "failed: %s",
                                 img->ref, r.message);
      }
      tpuci__sync_res_free(&r);
    }
  }

  probes.present = present;
  first = tpuci__docker_probe_networks(&probes, first, err);
  first = tpuci__docker_probe_pytest(&probes, first, err);
  free(present);

  /* Leftovers. */
  {
    size_t nc = 0, nn = 0;
    tpuci__engine_container_list(s.eng, TPUCI__LABEL_RUN, tpuci__sync_cb, &r);
    tpuci__sync_wait(&s, &r);
    if (r.ok) nc = tpuci__docker_count_dead(r.json);
    tpuci__sync_res_free(&r);
    tpuci__engine_network_list(s.eng, TPUCI__LABEL_RUN, tpuci__sync_cb, &r);
    tpuci__sync_wait(&s, &r);
    if (r.ok) nn = tpuci__docker_count_dead(r.json);
    tpuci__sync_res_free(&r);
    if (nc + nn == 0) tpuci__buf_adds(report, "ok   leftovers: none from earlier runs\n");
    else
      tpuci__buf_addf(report,
                      "warn leftovers: %zu container%s and %zu network%s left "
                      "by earlier runs; run `tpuci gc`\n",
                      nc, nc == 1 ? "" : "s", nn, nn == 1 ? "" : "s");
  }
  tpuci__sync_close(&s);
  return first;
}

int tpuci__runtime_docker_image_ids(const tpuci__plan_t *plan, char **ids, char **why,
                                    tpuci__err_t *err) {
  return tpuci__sync_image_ids(plan, TPUCI__RUNTIME_DOCKER, ids, why, err);
}
