/* `tpuci doctor`'s network probe (netprobe.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/docker/netprobe.h"
#include "runtime/engine/container.h"

/* Network modes. Each mode the selected docker instances use (the
 * engine's default bridge, "none", "host", a named network, and a gang's
 * private network) is probed before any run, so that a broken bridge or
 * an unknown network is found here, not as an infra failure of every
 * attempt. On "none" and "host" one container runs `true` (as its
 * entrypoint, so an image's ENTRYPOINT does not get in the way). On a
 * bridge two containers are started: the first sleeps, the second runs
 * reach.sh, which reaches the first by name (by address on the
 * engine's default bridge, which has no names) and the network's
 * gateway (the bridge's own address; not on an internal network, whose
 * containers have no route to it). Both run the image of an instance
 * that uses the mode and is present. Their labels are an attempt's, so
 * `tpuci gc` removes them should doctor die in between. */

typedef struct {
  int gang;         /* a gang's private network */
  const char *mode; /* NetworkMode; NULL: the engine's default */
  int image;        /* a present image of an instance using it; -1 */
} tpuci__probe_t;

/* sh -c SCRIPT probe PEER [GATEWAY]: core/runtime/docker/reach.sh
 * (embedded at build time without its comment lines,
 * cmake/embed_sh.cmake). Its last line says what it found; it exits 0
 * (reached), 1 (did not) or 2 (no ping nor python3: not checked). */
extern const char tpuci__sh_reach[];

static int tpuci__probe_same(const tpuci__probe_t *p, int gang, const char *mode) {
  if (p->gang != gang) return 0;
  if (gang) return 1;
  if (p->mode == NULL || mode == NULL) return p->mode == mode;
  return strcmp(p->mode, mode) == 0;
}

/* The modes of the selected docker instances, with an image for each;
 * present[i] says whether image i is in the engine. */
static size_t tpuci__probe_modes(const tpuci__plan_t *plan, const int *present,
                                 tpuci__probe_t *out) {
  size_t i, j, n = 0;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    int gang;
    if (!inst->selected || inst->runtime != TPUCI__RUNTIME_DOCKER) continue;
    gang = tpuci__plan_hosts(plan, inst) > 1;
    for (j = 0; j < n; j++)
      if (tpuci__probe_same(&out[j], gang, inst->network)) break;
    if (j == n) {
      out[n].gang = gang;
      out[n].mode = gang ? NULL : inst->network;
      out[n].image = -1;
      n++;
    }
    if (out[j].image < 0 && inst->image >= 0 && present[inst->image]) out[j].image = inst->image;
  }
  return n;
}

static const char *tpuci__probe_what(const tpuci__probe_t *p, char *buf, size_t size) {
  if (p->gang) snprintf(buf, size, "a gang's private network");
  else if (p->mode == NULL) snprintf(buf, size, "the engine's default (bridge)");
  else snprintf(buf, size, "\"%s\"", p->mode);
  return buf;
}

/* Whether the mode's containers can reach each other (a bridge): not
 * "none", "host" nor another container's network. */
static int tpuci__probe_reach(const tpuci__probe_t *p) {
  return p->gang || p->mode == NULL ||
         (strcmp(p->mode, "none") != 0 && strcmp(p->mode, "host") != 0 &&
          strncmp(p->mode, "container:", 10) != 0);
}

/* Whether it is the engine's default bridge, where containers have no
 * names. */
static int tpuci__probe_default(const tpuci__probe_t *p) {
  return !p->gang &&
         (p->mode == NULL || strcmp(p->mode, "bridge") == 0 || strcmp(p->mode, "default") == 0);
}

/* Removes a container or a network a probe made; errors are said (the
 * object is labelled, so `tpuci gc` finds it later). */
static void tpuci__probe_remove(tpuci__sync_t *s, const char *ctr, const char *net,
                                tpuci__buf_t *report) {
  tpuci__sync_res_t r = {0};
  if (ctr != NULL) {
    tpuci__engine_container_remove(s->eng, ctr, tpuci__sync_cb, &r);
    tpuci__sync_wait(s, &r);
    if (!r.ok && r.status != 404)
      tpuci__buf_addf(report,
                      "warn network probe: removing container %s: %s; "
                      "`tpuci gc` removes it\n",
                      ctr, r.message);
    tpuci__sync_res_free(&r);
  }
  if (net != NULL) {
    tpuci__engine_network_remove(s->eng, net, tpuci__sync_cb, &r);
    tpuci__sync_wait(s, &r);
    if (!r.ok && r.status != 404)
      tpuci__buf_addf(report,
                      "warn network probe: removing network %s: %s; "
                      "`tpuci gc` removes it\n",
                      net, r.message);
    tpuci__sync_res_free(&r);
  }
}

/* Whether a failed start is the image's lack of the program, not the
 * network. */
static int tpuci__probe_no_exec(const char *msg) {
  return msg != NULL && (strstr(msg, "executable file not found") != NULL ||
                         strstr(msg, "no such file or directory") != NULL);
}

/* One probe's state: what it made (removed at the end), what it says. */
typedef struct {
  tpuci__sync_t *s;
  const tpuci__probe_t *p;
  const tpuci__podman_limits_t *limits;
  tpuci__kvlist_t labels;
  const char *image;
  char what[160], run[64];
  char *net;    /* the gang's network, made here */
  char *ctr[2]; /* the containers made */
  tpuci__buf_t *report;
  tpuci__err_t *err;
} tpuci__probe_run_t;

static int tpuci__probe_fail(tpuci__probe_run_t *pr, const char *fmt, const char *detail) {
  tpuci__buf_addf(pr->report, "FAIL network %s: ", pr->what);
  tpuci__buf_addf(pr->report, fmt, detail);
  tpuci__buf_adds(pr->report, "\n");
  return tpuci__err_set(pr->err, TPUCI_EENGINE, "docker engine: network %s: %s", pr->what, detail);
}

/* Creates and starts container k running argv as its entrypoint (and,
 * for the second, with a terminal, so its log is plain text). 0 started,
 * 1 the image lacks argv[0] (a warn line is said), or a FAIL's code. */
static int tpuci__probe_ctr(tpuci__probe_run_t *pr, int k, const char *const *argv, size_t argc) {
  tpuci__sync_res_t r = {0};
  tpuci__strv_t cmd = {0};
  tpuci__ctr_spec_t spec = {0};
  json_t *body, *ep = json_array();
  char name[128], host[16];
  size_t i;
  int rc = 0;

  snprintf(host, sizeof(host), "worker-%d", k);
  tpuci__strv_push(&cmd, argv[0]);
  spec.image = pr->image;
  spec.argv = &cmd;
  spec.network = pr->p->gang ? pr->net : pr->p->mode;
  spec.labels = &pr->labels;
  spec.hostname = pr->p->gang ? host : NULL;
  spec.alias = pr->p->gang ? host : NULL;
  body = tpuci__ctr_create_body(&spec);
  for (i = 0; i < argc; i++) json_array_append_new(ep, json_string(argv[i]));
  json_object_set_new(body, "Entrypoint", ep);
  json_object_del(body, "Cmd");
  if (k == 1) json_object_set_new(body, "Tty", json_true());
  /* As an attempt's: a rootful podman may not give podman's own default. */
  tpuci__podman_body_limits(body, pr->limits);
  snprintf(name, sizeof(name), "tpuci-%s-%s", pr->run, host);
  tpuci__engine_container_create(pr->s->eng, name, body, tpuci__sync_cb, &r);
  json_decref(body);
  tpuci__strv_free(&cmd);
  tpuci__sync_wait(pr->s, &r);
  if (!r.ok) {
    rc = tpuci__probe_fail(pr, "creating a container on it failed: %s", r.message);
    goto out;
  }
  pr->ctr[k] = tpuci__strdup(name);
  tpuci__sync_res_free(&r);
  tpuci__engine_container_start(pr->s->eng, name, tpuci__sync_cb, &r);
  tpuci__sync_wait(pr->s, &r);
  if (!r.ok && tpuci__probe_no_exec(r.message)) {
    tpuci__buf_addf(pr->report,
                    "warn network %s: not checked: image %s has no "
                    "`%s` to run\n",
                    pr->what, pr->image, argv[0]);
    rc = 1;
  } else if (!r.ok) {
    rc = tpuci__probe_fail(pr, "a container did not start on it: %s", r.message);
  }
out:
  tpuci__sync_res_free(&r);
  return rc;
}

/* The container's exit status (waited for); -1 when unknown. */
static int tpuci__probe_wait(tpuci__probe_run_t *pr, const char *ctr) {
  tpuci__sync_res_t r = {0};
  json_t *st;
  int status = -1;
  tpuci__engine_container_wait(pr->s->eng, ctr, tpuci__sync_cb, &r);
  tpuci__sync_wait(pr->s, &r);
  st = json_object_get(r.json, "StatusCode");
  if (r.ok && json_is_integer(st)) status = (int) json_integer_value(st);
  tpuci__sync_res_free(&r);
  return status;
}

static void tpuci__probe_chunk(void *data, const char *buf, size_t len) {
  tpuci__buf_add((tpuci__buf_t *) data, buf, len);
}

/* The last line the container wrote (its log is plain: a terminal's). */
static char *tpuci__probe_said(tpuci__probe_run_t *pr, const char *ctr) {
  tpuci__sync_res_t r = {0};
  tpuci__buf_t out = {0};
  char *line, *end;
  tpuci__engine_container_logs(pr->s->eng, ctr, tpuci__probe_chunk, &out, tpuci__sync_cb, &r);
  tpuci__sync_wait(pr->s, &r);
  tpuci__sync_res_free(&r);
  tpuci__buf_adds(&out, "");
  while (out.len > 0 && (out.data[out.len - 1] == '\n' || out.data[out.len - 1] == '\r'))
    out.data[--out.len] = '\0';
  line = out.data != NULL ? strrchr(out.data, '\n') : NULL;
  line = tpuci__strdup(line != NULL ? line + 1 : out.data != NULL ? out.data : "");
  for (end = line; *end; end++)
    if (*end == '\r') *end = ' ';
  tpuci__buf_free(&out);
  return line;
}

/* The first container's address and gateway on the probed network (its
 * only one); the gateway only where it has a route to it. */
static void tpuci__probe_addrs(tpuci__probe_run_t *pr, char *ip, char *gw, size_t size) {
  tpuci__sync_res_t r = {0};
  json_t *nets, *ep;
  const char *key, *v;
  int internal = pr->p->gang;
  ip[0] = gw[0] = '\0';
  if (!internal && pr->p->mode != NULL && !tpuci__probe_default(pr->p)) {
    tpuci__engine_req_t req = {
        .method = "GET", .path = "/networks/", .id = pr->p->mode, .timeout_ms = 30000};
    tpuci__engine_call(pr->s->eng, &req, tpuci__sync_cb, &r);
    tpuci__sync_wait(pr->s, &r);
    internal = r.ok && json_is_true(json_object_get(r.json, "Internal"));
    tpuci__sync_res_free(&r);
  }
  tpuci__engine_container_inspect(pr->s->eng, pr->ctr[0], tpuci__sync_cb, &r);
  tpuci__sync_wait(pr->s, &r);
  nets = json_object_get(json_object_get(r.json, "NetworkSettings"), "Networks");
  json_object_foreach(nets, key, ep) {
    if ((v = json_string_value(json_object_get(ep, "IPAddress"))) != NULL)
      snprintf(ip, size, "%s", v);
    if (!internal && (v = json_string_value(json_object_get(ep, "Gateway"))) != NULL)
      snprintf(gw, size, "%s", v);
    break;
  }
  tpuci__sync_res_free(&r);
}

/* The reach check on a bridge, once the first container sleeps. */
static int tpuci__probe_pair(tpuci__probe_run_t *pr) {
  char ip[64], gw[64], peer[160];
  const char *argv[6];
  char *said;
  int rc, status;

  tpuci__probe_addrs(pr, ip, gw, sizeof(ip));
  if (pr->p->gang) snprintf(peer, sizeof(peer), "worker-0");
  else if (tpuci__probe_default(pr->p)) snprintf(peer, sizeof(peer), "%s", ip);
  else snprintf(peer, sizeof(peer), "%s", pr->ctr[0]);
  if (peer[0] == '\0')
    return tpuci__probe_fail(pr, "%s", "the first container has no address on it");
  argv[0] = "sh";
  argv[1] = "-c";
  argv[2] = tpuci__sh_reach;
  argv[3] = "probe";
  argv[4] = peer;
  argv[5] = gw;
  rc = tpuci__probe_ctr(pr, 1, argv, gw[0] ? 6 : 5);
  if (rc != 0) return rc == 1 ? 0 : rc;
  status = tpuci__probe_wait(pr, pr->ctr[1]);
  said = tpuci__probe_said(pr, pr->ctr[1]);
  if (status == 0) {
    tpuci__buf_addf(pr->report,
                    "ok   network %s: worker-1 reached worker-0 "
                    "by %s",
                    pr->what, tpuci__probe_default(pr->p) ? "address" : "name");
    if (gw[0]) tpuci__buf_addf(pr->report, " and the gateway %s", gw);
    tpuci__buf_addf(pr->report, " (%s, image %s)\n", said, pr->image);
    rc = 0;
  } else if (status == 2) {
    tpuci__buf_addf(pr->report, "warn network %s: not checked: %s (image %s)\n", pr->what, said,
                    pr->image);
    rc = 0;
  } else if (status == 1) {
    rc = tpuci__probe_fail(pr, "%s", said);
  } else {
    tpuci__buf_addf(pr->report,
                    "warn network %s: not checked: the probe in "
                    "image %s ended with status %d: %s\n",
                    pr->what, pr->image, status, said);
    rc = 0;
  }
  free(said);
  return rc;
}

/* One mode: returns 0, or TPUCI_EENGINE with err set (first failure). */
static int tpuci__probe_one(const tpuci__probe_ctx_t *cx, const tpuci__probe_t *p, int n,
                            tpuci__err_t *err) {
  tpuci__sync_t *s = cx->s;
  tpuci__buf_t *report = cx->report;
  static const char *const only_true[] = {"true"};
  static const char *const sleeper[] = {"sleep", "60"};
  tpuci__probe_run_t pr;
  tpuci__sync_res_t r = {0};
  int rc = 0, reach = tpuci__probe_reach(p);

  memset(&pr, 0, sizeof(pr));
  pr.s = s;
  pr.p = p;
  pr.limits = cx->limits;
  pr.report = report;
  pr.err = err;
  tpuci__probe_what(p, pr.what, sizeof(pr.what));
  if (p->image < 0) {
    tpuci__buf_addf(report,
                    "warn network %s: not checked: none of the images "
                    "of the jobs using it is present\n",
                    pr.what);
    return 0;
  }
  pr.image = cx->plan->images[p->image].ref;
  snprintf(pr.run, sizeof(pr.run), "doctor-%ld-net%d", (long) getpid(), n);
  tpuci__ctr_labels(&pr.labels, pr.run, "doctor", "network-probe", n, 0);
  if (p->gang) {
    char name[96];
    json_t *nb;
    snprintf(name, sizeof(name), "tpuci-%s", pr.run);
    nb = tpuci__net_create_body(name, &pr.labels, 1);
    tpuci__engine_network_create(s->eng, nb, tpuci__sync_cb, &r);
    json_decref(nb);
    tpuci__sync_wait(s, &r);
    if (!r.ok) {
      rc = tpuci__probe_fail(&pr, "creating one failed: %s", r.message);
      goto out;
    }
    pr.net = tpuci__strdup(name);
  }
  rc = reach ? tpuci__probe_ctr(&pr, 0, sleeper, 2) : tpuci__probe_ctr(&pr, 0, only_true, 1);
  if (rc == 1) rc = 0;
  else if (rc == 0 && reach) rc = tpuci__probe_pair(&pr);
  else if (rc == 0) {
    tpuci__probe_wait(&pr, pr.ctr[0]);
    tpuci__buf_addf(report, "ok   network %s: a container started on it (%s)\n", pr.what, pr.image);
  }
out:
  tpuci__sync_res_free(&r);
  tpuci__probe_remove(s, pr.ctr[1], NULL, report);
  tpuci__probe_remove(s, pr.ctr[0], pr.net, report);
  free(pr.ctr[0]);
  free(pr.ctr[1]);
  free(pr.net);
  tpuci__kv_free(&pr.labels);
  return rc;
}

int tpuci__docker_probe_networks(const tpuci__probe_ctx_t *cx, int first, tpuci__err_t *err) {
  const tpuci__plan_t *plan = cx->plan;
  tpuci__probe_t *modes;
  size_t i, n;
  if (plan == NULL || plan->ninstances == 0) return first;
  modes = tpuci__calloc(plan->ninstances, sizeof(*modes));
  n = tpuci__probe_modes(plan, cx->present, modes);
  for (i = 0; i < n; i++) {
    int rc = tpuci__probe_one(cx, &modes[i], (int) i, first ? NULL : err);
    if (first == 0) first = rc;
  }
  free(modes);
  return first;
}

/* ------------------------------------------------------------------ */
/* The pytest probe                                                    */

/* The interpreters of the selected docker pytest instances of image k
 * (their pytest.python, argv[0]), into `out` without repeats. */
static void tpuci__pyprobe_pythons(const tpuci__plan_t *plan, size_t k, tpuci__strv_t *out) {
  size_t i, j;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    if (!inst->selected || inst->runtime != TPUCI__RUNTIME_DOCKER || !inst->runs_pytest ||
        inst->image != (int) k || inst->argv.len == 0)
      continue;
    for (j = 0; j < out->len; j++)
      if (strcmp(out->items[j], inst->argv.items[0]) == 0) break;
    if (j == out->len) tpuci__strv_push(out, inst->argv.items[0]);
  }
}

/* One image and interpreter: PYTHON -c "import pytest" in a container of
 * the image on the engine's default network. 0, or TPUCI_EIMAGE with a
 * FAIL line said. */
static int tpuci__pyprobe_one(tpuci__probe_run_t *pr, const char *python, int n) {
  static const char code[] =
      "import sys\n"
      "try:\n"
      "    import pytest\n"
      "except Exception as e:\n"
      "    print('cannot import pytest (%s: %s)' % (type(e).__name__, e)); sys.exit(1)\n"
      "print('imports pytest %s' % pytest.__version__)\n";
  tpuci__sync_res_t r = {0};
  tpuci__strv_t cmd = {0};
  tpuci__ctr_spec_t spec = {0};
  json_t *body, *ep = json_array();
  char name[128];
  char *said = NULL;
  int rc = 0, status;

  tpuci__strv_push(&cmd, python);
  spec.image = pr->image;
  spec.argv = &cmd;
  spec.labels = &pr->labels;
  body = tpuci__ctr_create_body(&spec);
  json_array_append_new(ep, json_string(python));
  json_array_append_new(ep, json_string("-c"));
  json_array_append_new(ep, json_string(code));
  json_object_set_new(body, "Entrypoint", ep);
  json_object_del(body, "Cmd");
  json_object_set_new(body, "Tty", json_true());
  json_object_set_new(body, "NetworkDisabled", json_true());
  tpuci__podman_body_limits(body, pr->limits);
  snprintf(name, sizeof(name), "tpuci-%s-py%d", pr->run, n);
  tpuci__engine_container_create(pr->s->eng, name, body, tpuci__sync_cb, &r);
  json_decref(body);
  tpuci__strv_free(&cmd);
  tpuci__sync_wait(pr->s, &r);
  if (!r.ok) {
    tpuci__buf_addf(pr->report,
                    "warn pytest in image %s: not checked: creating a container "
                    "failed: %s\n",
                    pr->image, r.message);
    goto out;
  }
  pr->ctr[0] = tpuci__strdup(name);
  tpuci__sync_res_free(&r);
  tpuci__engine_container_start(pr->s->eng, name, tpuci__sync_cb, &r);
  tpuci__sync_wait(pr->s, &r);
  if (!r.ok && tpuci__probe_no_exec(r.message)) {
    said = tpuci__printf("the image has no %s", python);
  } else if (!r.ok) {
    tpuci__buf_addf(pr->report,
                    "warn pytest in image %s: not checked: a container did not "
                    "start: %s\n",
                    pr->image, r.message);
    goto out;
  } else {
    status = tpuci__probe_wait(pr, name);
    said = tpuci__probe_said(pr, name);
    if (status == 0) {
      tpuci__buf_addf(pr->report, "ok   pytest in image %s: %s %s\n", pr->image, python, said);
      goto out;
    }
    if (status == 127 || status == 126) {
      free(said);
      said = tpuci__printf("the image has no %s (exit %d)", python, status);
    } else {
      char *t = tpuci__printf("%s %s", python, said[0] ? said : "failed");
      free(said);
      said = t;
    }
  }
  tpuci__buf_addf(pr->report,
                  "FAIL pytest in image %s: %s; its pytest jobs would end infra "
                  "(the image needs python3 and pytest)\n",
                  pr->image, said);
  rc = tpuci__err_set(pr->err, TPUCI_EIMAGE, "image '%s': %s", pr->image, said);
out:
  free(said);
  tpuci__sync_res_free(&r);
  tpuci__probe_remove(pr->s, pr->ctr[0], NULL, pr->report);
  free(pr->ctr[0]);
  pr->ctr[0] = NULL;
  return rc;
}

int tpuci__docker_probe_pytest(const tpuci__probe_ctx_t *cx, int first, tpuci__err_t *err) {
  const tpuci__plan_t *plan = cx->plan;
  size_t k, j;
  int n = 0;
  if (plan == NULL) return first;
  for (k = 0; k < plan->nimages; k++) {
    tpuci__strv_t pythons = {0};
    tpuci__probe_run_t pr;
    if (!cx->present[k]) continue;
    tpuci__pyprobe_pythons(plan, k, &pythons);
    memset(&pr, 0, sizeof(pr));
    pr.s = cx->s;
    pr.limits = cx->limits;
    pr.report = cx->report;
    pr.image = plan->images[k].ref;
    snprintf(pr.run, sizeof(pr.run), "doctor-%ld-py%zu", (long) getpid(), k);
    tpuci__ctr_labels(&pr.labels, pr.run, "doctor", "pytest-probe", (int) k, 0);
    for (j = 0; j < pythons.len; j++) {
      int rc;
      pr.err = first ? NULL : err;
      rc = tpuci__pyprobe_one(&pr, pythons.items[j], n++);
      if (first == 0) first = rc;
    }
    tpuci__kv_free(&pr.labels);
    tpuci__strv_free(&pythons);
  }
  return first;
}
