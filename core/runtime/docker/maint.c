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

/* GET /version and negotiate. On failure err holds a one-line message. */
static int tpuci__sync_connect(tpuci__sync_t *s, tpuci__err_t *err) {
  tpuci__sync_res_t r = {0};
  int rc = 0;
  tpuci__engine_version(s->eng, tpuci__sync_cb, &r);
  tpuci__sync_wait(s, &r);
  if (r.error != 0)
    rc = tpuci__err_set(err, TPUCI_EENGINE,
                        "cannot reach the Docker Engine (%s); %s", r.message,
                        tpuci__engine_reach_hint(r.error));
  else if (!r.ok || r.json == NULL)
    rc = tpuci__err_set(err, TPUCI_EENGINE,
                        "the Docker Engine answered GET /version with an "
                        "error: %s",
                        r.ok ? "not JSON" : r.message);
  else
    rc = tpuci__engine_negotiate(s->eng, r.json, err);
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
static int tpuci__gc_kind(tpuci__sync_t *s, int networks, int dry_run,
                          tpuci__buf_t *report) {
  tpuci__sync_res_t r = {0};
  const char *kind = networks ? "network" : "container";
  size_t i;
  json_t *o;
  int found = 0;

  if (networks) tpuci__engine_network_list(s->eng, TPUCI__LABEL_RUN, tpuci__sync_cb, &r);
  else tpuci__engine_container_list(s->eng, TPUCI__LABEL_RUN, tpuci__sync_cb, &r);
  if (tpuci__sync_listed(s, &r, networks ? "networks" : "containers", report) != 0)
    return -1;
  json_array_foreach(r.json, i, o) {
    json_t *labels = json_object_get(o, "Labels");
    int alive = tpuci__docker_run_alive(labels);
    const char *name = networks ? json_string_value(json_object_get(o, "Name"))
                                : tpuci__ctr_display(o);
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
      tpuci__buf_addf(report, "would remove %s %s (run %s, %s%s)\n", kind,
                      name, tpuci__label(o, TPUCI__LABEL_RUN),
                      networks ? "job " : "instance ",
                      networks ? tpuci__label(o, TPUCI__LABEL_JOB)
                               : tpuci__label(o, TPUCI__LABEL_INSTANCE));
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
                      name, tpuci__label(o, TPUCI__LABEL_RUN),
                      tpuci__label(o, TPUCI__LABEL_HOST));
      found--;
    } else {
      /* Not removed: not found. */
      found -= !tpuci__sync_removed(&d, kind, name, tpuci__label(o, TPUCI__LABEL_RUN),
                                    report);
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
    return tpuci__err_set(err, TPUCI_EENGINE,
                          "docker engine: listing tpuci's objects failed");
  if (a + b == 0 && report->len == start)
    tpuci__buf_adds(report, "nothing to remove\n");
  return a + b;
}

/* doctor */

static void tpuci__size_text(char *buf, size_t size, double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024)
    snprintf(buf, size, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  else
    snprintf(buf, size, "%.0f MiB", bytes / (1024.0 * 1024));
}

/* Network modes. Each mode the selected docker instances use (the
 * engine's default bridge, "none", "host", a named network, and a gang's
 * private network) is probed before any run, so that a broken bridge or
 * an unknown network is found here, not as an infra failure of every
 * attempt. On "none" and "host" one container runs `true` (as its
 * entrypoint, so an image's ENTRYPOINT does not get in the way). On a
 * bridge two containers are started: the first sleeps, the second runs
 * tpuci__reach_sh, which reaches the first by name (by address on the
 * engine's default bridge, which has no names) and the network's
 * gateway (the bridge's own address; not on an internal network, whose
 * containers have no route to it). Both run the image of an instance
 * that uses the mode and is present. Their labels are an attempt's, so
 * `tpuci gc` removes them should doctor die in between. */

typedef struct {
  int gang;               /* a gang's private network */
  const char *mode;       /* NetworkMode; NULL: the engine's default */
  int image;              /* a present image of an instance using it; -1 */
} tpuci__probe_t;

/* sh -c SCRIPT probe PEER [GATEWAY]. Its last line says what it found;
 * it exits 0 (reached), 1 (did not) or 2 (no ping nor python3: not
 * checked). A refused TCP connection is an answer; a gateway whose ARP
 * entry is complete answered too (a firewall may drop what it gets). */
static const char tpuci__reach_sh[] =
  "PY='import socket,sys\n"
  "try:\n"
  " a=socket.getaddrinfo(sys.argv[1],9,socket.AF_INET,socket.SOCK_STREAM)[0][4]\n"
  "except OSError:\n"
  " sys.exit(1)\n"
  "s=socket.socket()\n"
  "s.settimeout(3)\n"
  "try:\n"
  " s.connect(a)\n"
  "except ConnectionRefusedError:\n"
  " pass\n"
  "except OSError:\n"
  " sys.exit(2)\n"
  "'\n"
  "reach() {\n"
  "  if command -v ping >/dev/null 2>&1; then\n"
  "    how=ping; o=$(ping -c 1 -W 2 \"$1\" 2>&1) && return 0\n"
  "    case $o in\n"
  "      *ermission*|*'not permitted'*) ;;\n"
  "      *'bad address'*|*'nknown host'*|*'not known'*|*'emporary failure'*) return 1;;\n"
  "      *) return 2;;\n"
  "    esac\n"
  "  fi\n"
  "  command -v python3 >/dev/null 2>&1 || return 3\n"
  "  how=python3; python3 -c \"$PY\" \"$1\"\n"
  "}\n"
  "n=0\n"
  "while :; do\n"
  "  reach \"$1\"; r=$?; n=$((n+1))\n"
  "  if [ $r != 1 ] || [ $n -ge 5 ]; then break; fi\n"
  "  sleep 1\n"
  "done\n"
  "case $r in\n"
  "  0) ;;\n"
  "  1) echo \"the name $1 does not resolve ($how)\"; exit 1;;\n"
  "  3) echo 'the image has neither ping nor python3'; exit 2;;\n"
  "  *) echo \"$1 does not answer ($how)\"; exit 1;;\n"
  "esac\n"
  "if [ -n \"$2\" ]; then\n"
  "  reach \"$2\"\n"
  "  if [ $? != 0 ] && ! grep -Eq \"^$2 +0x[0-9a-f]+ +0x2 \" /proc/net/arp 2>/dev/null; then\n"
  "    echo \"the gateway $2 (the bridge's own address) does not answer ($how):"
  " the bridge is down or has no address\"; exit 1\n"
  "  fi\n"
  "fi\n"
  "echo \"$how\"\n";

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
    if (out[j].image < 0 && inst->image >= 0 && present[inst->image])
      out[j].image = inst->image;
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
  return !p->gang && (p->mode == NULL || strcmp(p->mode, "bridge") == 0 ||
                      strcmp(p->mode, "default") == 0);
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
      tpuci__buf_addf(report, "warn network probe: removing container %s: %s; "
                              "`tpuci gc` removes it\n", ctr, r.message);
    tpuci__sync_res_free(&r);
  }
  if (net != NULL) {
    tpuci__engine_network_remove(s->eng, net, tpuci__sync_cb, &r);
    tpuci__sync_wait(s, &r);
    if (!r.ok && r.status != 404)
      tpuci__buf_addf(report, "warn network probe: removing network %s: %s; "
                              "`tpuci gc` removes it\n", net, r.message);
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
  char *net;              /* the gang's network, made here */
  char *ctr[2];           /* the containers made */
  tpuci__buf_t *report;
  tpuci__err_t *err;
} tpuci__probe_run_t;

static int tpuci__probe_fail(tpuci__probe_run_t *pr, const char *fmt,
                             const char *detail) {
  tpuci__buf_addf(pr->report, "FAIL network %s: ", pr->what);
  tpuci__buf_addf(pr->report, fmt, detail);
  tpuci__buf_adds(pr->report, "\n");
  return tpuci__err_set(pr->err, TPUCI_EENGINE, "docker engine: network %s: %s",
                        pr->what, detail);
}

/* Creates and starts container k running argv as its entrypoint (and,
 * for the second, with a terminal, so its log is plain text). 0 started,
 * 1 the image lacks argv[0] (a warn line is said), or a FAIL's code. */
static int tpuci__probe_ctr(tpuci__probe_run_t *pr, int k, const char *const *argv,
                            size_t argc) {
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
    tpuci__buf_addf(pr->report, "warn network %s: not checked: image %s has no "
                                "`%s` to run\n", pr->what, pr->image, argv[0]);
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
  tpuci__engine_container_logs(pr->s->eng, ctr, tpuci__probe_chunk, &out,
                               tpuci__sync_cb, &r);
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
static void tpuci__probe_addrs(tpuci__probe_run_t *pr, char *ip, char *gw,
                               size_t size) {
  tpuci__sync_res_t r = {0};
  json_t *nets, *ep;
  const char *key, *v;
  int internal = pr->p->gang;
  ip[0] = gw[0] = '\0';
  if (!internal && pr->p->mode != NULL && !tpuci__probe_default(pr->p)) {
    tpuci__engine_on_id(pr->s->eng, "GET", "/networks/", pr->p->mode, "", 30000,
                        NULL, NULL, tpuci__sync_cb, &r);
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
  argv[2] = tpuci__reach_sh;
  argv[3] = "probe";
  argv[4] = peer;
  argv[5] = gw;
  rc = tpuci__probe_ctr(pr, 1, argv, gw[0] ? 6 : 5);
  if (rc != 0) return rc == 1 ? 0 : rc;
  status = tpuci__probe_wait(pr, pr->ctr[1]);
  said = tpuci__probe_said(pr, pr->ctr[1]);
  if (status == 0) {
    tpuci__buf_addf(pr->report, "ok   network %s: worker-1 reached worker-0 "
                                "by %s", pr->what,
                    tpuci__probe_default(pr->p) ? "address" : "name");
    if (gw[0]) tpuci__buf_addf(pr->report, " and the gateway %s", gw);
    tpuci__buf_addf(pr->report, " (%s, image %s)\n", said, pr->image);
    rc = 0;
  } else if (status == 2) {
    tpuci__buf_addf(pr->report, "warn network %s: not checked: %s (image %s)\n",
                    pr->what, said, pr->image);
    rc = 0;
  } else if (status == 1) {
    rc = tpuci__probe_fail(pr, "%s", said);
  } else {
    tpuci__buf_addf(pr->report, "warn network %s: not checked: the probe in "
                                "image %s ended with status %d: %s\n",
                    pr->what, pr->image, status, said);
    rc = 0;
  }
  free(said);
  return rc;
}

/* One mode: returns 0, or TPUCI_EENGINE with err set (first failure). */
static int tpuci__probe_one(tpuci__sync_t *s, const tpuci__plan_t *plan,
                            const tpuci__probe_t *p, int n,
                            const tpuci__podman_limits_t *limits,
                            tpuci__buf_t *report, tpuci__err_t *err) {
  static const char *const only_true[] = {"true"};
  static const char *const sleeper[] = {"sleep", "60"};
  tpuci__probe_run_t pr;
  tpuci__sync_res_t r = {0};
  int rc = 0, reach = tpuci__probe_reach(p);

  memset(&pr, 0, sizeof(pr));
  pr.s = s;
  pr.p = p;
  pr.limits = limits;
  pr.report = report;
  pr.err = err;
  tpuci__probe_what(p, pr.what, sizeof(pr.what));
  if (p->image < 0) {
    tpuci__buf_addf(report, "warn network %s: not checked: none of the images "
                            "of the jobs using it is present\n", pr.what);
    return 0;
  }
  pr.image = plan->images[p->image].ref;
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
  rc = reach ? tpuci__probe_ctr(&pr, 0, sleeper, 2)
             : tpuci__probe_ctr(&pr, 0, only_true, 1);
  if (rc == 1) rc = 0;
  else if (rc == 0 && reach) rc = tpuci__probe_pair(&pr);
  else if (rc == 0) {
    tpuci__probe_wait(&pr, pr.ctr[0]);
    tpuci__buf_addf(report, "ok   network %s: a container started on it (%s)\n",
                    pr.what, pr.image);
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

/* Every mode. `first` is the doctor's first failure so far: err is only
 * filled when there is none yet. Returns the new first failure. */
static int tpuci__probe_networks(tpuci__sync_t *s, const tpuci__plan_t *plan,
                                 const int *present,
                                 const tpuci__podman_limits_t *limits,
                                 tpuci__buf_t *report, int first,
                                 tpuci__err_t *err) {
  tpuci__probe_t *modes;
  size_t i, n;
  if (plan == NULL || plan->ninstances == 0) return first;
  modes = tpuci__calloc(plan->ninstances, sizeof(*modes));
  n = tpuci__probe_modes(plan, present, modes);
  for (i = 0; i < n; i++) {
    int rc = tpuci__probe_one(s, plan, &modes[i], (int) i, limits, report,
                              first ? NULL : err);
    if (first == 0) first = rc;
  }
  free(modes);
  return first;
}

int tpuci__runtime_docker_doctor(const tpuci__plan_t *plan, tpuci__buf_t *report,
                         tpuci__err_t *err) {
  tpuci__sync_t s;
  tpuci__sync_res_t r = {0};
  int rc, first = 0, *present;
  tpuci__podman_limits_t limits;
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
  tpuci__buf_addf(report, "ok   engine: %s %s (API %s, tpuci uses %s) at %s\n",
                  s.eng->server_name, s.eng->server_version, s.eng->server_api,
                  s.eng->prefix + 2, where);
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
                      "warn disk: the engine is reached over TCP, so its data "
                      "root %s may be on another machine; not checked\n",
                      root);
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
                                 "only %s free under the engine's data root %s",
                                 size, root);
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
        tpuci__buf_addf(report, "ok   image %s (\"%s\"): present, %s\n",
                        img->ref, img->name, size);
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

  first = tpuci__probe_networks(&s, plan, present, &limits, report, first, err);
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
    if (nc + nn == 0)
      tpuci__buf_adds(report, "ok   leftovers: none from earlier runs\n");
    else
      tpuci__buf_addf(report,
                      "warn leftovers: %zu container%s and %zu network%s left "
                      "by earlier runs; run `tpuci gc`\n",
                      nc, nc == 1 ? "" : "s", nn, nn == 1 ? "" : "s");
  }
  tpuci__sync_close(&s);
  return first;
}
