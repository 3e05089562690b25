/* What a tpuci service looks like to the swarm, and what its tasks and
 * nodes say. Pure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/swarm/swarm.h"

static const char *const tpuci__task_states[] = {
    "",        "new",      "pending",  "assigned", "accepted", "preparing", "ready",   "starting",
    "running", "complete", "shutdown", "failed",   "rejected", "remove",    "orphaned"};

tpuci__task_state_t tpuci__task_state_parse(const char *s) {
  size_t i;
  if (s == NULL) return TPUCI__TS_UNKNOWN;
  for (i = 1; i < sizeof(tpuci__task_states) / sizeof(tpuci__task_states[0]); i++)
    if (strcmp(s, tpuci__task_states[i]) == 0) return (tpuci__task_state_t) i;
  return TPUCI__TS_UNKNOWN;
}

const char *tpuci__task_state_name(tpuci__task_state_t st) {
  if ((size_t) st >= sizeof(tpuci__task_states) / sizeof(tpuci__task_states[0]) ||
      st == TPUCI__TS_UNKNOWN)
    return "unknown";
  return tpuci__task_states[st];
}

int tpuci__task_state_terminal(tpuci__task_state_t st) { return st >= TPUCI__TS_COMPLETE; }

void tpuci__task_read(json_t *task, tpuci__task_t *out) {
  json_t *status = json_object_get(task, "Status");
  json_t *cs = json_object_get(status, "ContainerStatus");
  json_t *code = json_object_get(cs, "ExitCode");
  const char *cid = json_string_value(json_object_get(cs, "ContainerID"));
  const char *err = json_string_value(json_object_get(status, "Err"));
  memset(out, 0, sizeof(*out));
  out->id = json_string_value(json_object_get(task, "ID"));
  out->service_id = json_string_value(json_object_get(task, "ServiceID"));
  out->node_id = json_string_value(json_object_get(task, "NodeID"));
  if (out->node_id != NULL && *out->node_id == '\0') out->node_id = NULL;
  out->container_id = cid != NULL && *cid ? cid : NULL;
  out->err = err != NULL && *err ? err : NULL;
  out->state = tpuci__task_state_parse(json_string_value(json_object_get(status, "State")));
  /* The engine leaves ExitCode out when it is 0 (omitempty), so a
   * container status without one is an exit 0. */
  if (out->container_id != NULL) {
    out->has_exit = 1;
    out->exit_code = json_is_integer(code) ? (long) json_integer_value(code) : 0;
  }
}

tpuci__task_end_t tpuci__task_end(const tpuci__task_t *t, char **why) {
  const char *err = t->err ? t->err : "no reason given";
  *why = NULL;
  switch (t->state) {
    case TPUCI__TS_COMPLETE: return TPUCI__TASK_EXIT;
    case TPUCI__TS_FAILED:
      /* "task: non-zero exit (3)": the container ran. Without a
       * container the engine could not start it ("starting container
       * failed: ..."). */
      if (t->has_exit && t->exit_code != 0 && t->err != NULL &&
          strncmp(t->err, "task: non-zero exit", 19) == 0)
        return TPUCI__TASK_EXIT;
      if (t->has_exit && t->exit_code != 0 && t->err == NULL) return TPUCI__TASK_EXIT;
      *why = tpuci__printf("failed: %s", err);
      return TPUCI__TASK_INFRA;
    case TPUCI__TS_REJECTED:
      *why = tpuci__printf("rejected by its node: %s", err);
      return TPUCI__TASK_INFRA;
    case TPUCI__TS_ORPHANED:
      *why = tpuci__printf("orphaned: its node is gone (%s)", err);
      return TPUCI__TASK_INFRA;
    default: *why = tpuci__printf("shut down by the swarm (%s)", err); return TPUCI__TASK_INFRA;
  }
}

static int tpuci__dns_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

static uint32_t tpuci__sw_fnv1a(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) {
    h ^= (unsigned char) *s;
    h *= 16777619u;
  }
  return h;
}

/* Lower-case, other characters as '-', no '-' twice or at either end. */
static char *tpuci__dns_part(const char *s) {
  size_t n = strlen(s), i, k = 0;
  char *out = tpuci__malloc(n + 1);
  for (i = 0; i < n; i++) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = (char) (c - 'A' + 'a');
    if (!tpuci__dns_char(c)) c = '-';
    if (c == '-' && (k == 0 || out[k - 1] == '-')) continue;
    out[k++] = c;
  }
  while (k > 0 && out[k - 1] == '-') k--;
  out[k] = '\0';
  return out;
}

char *tpuci__sw_name(const char *run_id, const char *instance, int attempt, int host) {
  char *run = tpuci__dns_part(run_id ? run_id : "");
  char *inst = tpuci__dns_part(instance ? instance : "");
  char tail[48], hash[16] = "";
  size_t fixed, room, n;
  char *name;

  if (strlen(run) > 24) run[24] = '\0';
  if (host >= 0) snprintf(tail, sizeof(tail), "-%d-w%d", attempt, host);
  else snprintf(tail, sizeof(tail), "-%d", attempt);
  fixed = strlen("tpuci-") + strlen(run) + 1 + strlen(tail);
  room = TPUCI__SW_NAME_MAX > fixed ? TPUCI__SW_NAME_MAX - fixed : 0;
  n = strlen(inst);
  if (strcmp(inst, instance ? instance : "") != 0 || n > room || n == 0) {
    snprintf(hash, sizeof(hash), "%s%08x", n > 0 ? "-" : "",
             (unsigned) tpuci__sw_fnv1a(instance ? instance : ""));
    room = room > strlen(hash) ? room - strlen(hash) : 0;
    if (n > room) inst[room] = '\0';
    n = strlen(inst);
    while (n > 0 && inst[n - 1] == '-') inst[--n] = '\0';
    if (n == 0) memmove(hash, hash + (hash[0] == '-'), strlen(hash));
  }
  name = tpuci__printf("tpuci-%s-%s%s%s", run, inst, hash, tail);
  free(run);
  free(inst);
  return name;
}

static json_t *tpuci__sw_strv(const tpuci__strv_t *v) {
  json_t *a = json_array();
  size_t i;
  for (i = 0; v != NULL && i < v->len; i++) json_array_append_new(a, json_string(v->items[i]));
  return a;
}

static json_t *tpuci__sw_labels(const tpuci__kvlist_t *labels) {
  json_t *l = json_object();
  size_t i;
  for (i = 0; labels != NULL && i < labels->len; i++)
    json_object_set_new(l, labels->items[i].key, json_string(labels->items[i].value));
  return l;
}

json_t *tpuci__svc_create_body(const tpuci__svc_spec_t *s) {
  json_t *body = json_object();
  json_t *tt = json_object();
  json_t *cs = json_object();
  json_t *res = json_object();
  size_t i;

  json_object_set_new(body, "Name", json_string(s->name));
  json_object_set_new(body, "Labels", tpuci__sw_labels(s->labels));

  json_object_set_new(cs, "Image", json_string(s->image));
  /* Args is a container's Cmd (Command would replace the entrypoint). */
  if (s->argv != NULL && s->argv->len > 0) json_object_set_new(cs, "Args", tpuci__sw_strv(s->argv));
  json_object_set_new(cs, "Env", tpuci__sw_strv(s->env));
  if (s->workdir != NULL && *s->workdir) json_object_set_new(cs, "Dir", json_string(s->workdir));
  if (s->hostname != NULL) json_object_set_new(cs, "Hostname", json_string(s->hostname));
  json_object_set_new(cs, "Labels", tpuci__sw_labels(s->labels));
  json_object_set_new(cs, "TTY", json_false());
  json_object_set_new(cs, "OpenStdin", json_false());
  /* An init process as PID 1 reaps zombies and forwards signals. */
  json_object_set_new(cs, "Init", json_true());
  json_object_set_new(cs, "StopGracePeriod", json_integer((json_int_t) (s->grace_ms * 1000000)));
  if (s->nmounts > 0 || (s->ctr != NULL && s->ctr->shm_bytes > 0) || s->results_tmpfs) {
    json_t *m = json_array();
    for (i = 0; i < s->nmounts; i++) json_array_append_new(m, tpuci__ctr_mount(&s->mounts[i]));
    if (s->results_tmpfs != NULL)
      json_array_append_new(m,
                            json_pack("{s:s, s:s}", "Type", "tmpfs", "Target", s->results_tmpfs));
    /* The engine mounts no /dev/shm of its own over a mount there. */
    if (s->ctr != NULL && s->ctr->shm_bytes > 0)
      json_array_append_new(
          m, json_pack("{s:s, s:s, s:{s:I}}", "Type", "tmpfs", "Target", "/dev/shm", "TmpfsOptions",
                       "SizeBytes", (json_int_t) s->ctr->shm_bytes));
    json_object_set_new(cs, "Mounts", m);
  }
  if (s->ctr != NULL) {
    const tpuci__ctr_opts_t *c = s->ctr;
    if (c->sysctls.len > 0) json_object_set_new(cs, "Sysctls", tpuci__ctr_sysctls_json(c));
    if (c->nulimits > 0) json_object_set_new(cs, "Ulimits", tpuci__ctr_ulimits_json(c));
    if (c->cap_add.len > 0)
      json_object_set_new(cs, "CapabilityAdd", tpuci__ctr_caps_json(&c->cap_add));
    if (c->cap_drop.len > 0)
      json_object_set_new(cs, "CapabilityDrop", tpuci__ctr_caps_json(&c->cap_drop));
  }
  json_object_set_new(tt, "ContainerSpec", cs);

  /* Limits, and the same as reservations: Swarm places the task only on
   * a node with that much unreserved. */
  if (s->cpus > 0 || s->memory_bytes > 0) {
    json_t *lim = json_object();
    if (s->cpus > 0)
      json_object_set_new(lim, "NanoCPUs", json_integer((json_int_t) (s->cpus * 1e9 + 0.5)));
    if (s->memory_bytes > 0)
      json_object_set_new(lim, "MemoryBytes", json_integer((json_int_t) s->memory_bytes));
    json_object_set(res, "Limits", lim);
    json_object_set_new(res, "Reservations", lim);
  }
  json_object_set_new(tt, "Resources", res);
  /* Never restarted: retries are tpuci's. */
  json_object_set_new(tt, "RestartPolicy",
                      json_pack("{s:s, s:i}", "Condition", "none", "MaxAttempts", 0));
  if (s->constraint != NULL)
    json_object_set_new(tt, "Placement", json_pack("{s:[s]}", "Constraints", s->constraint));
  if (s->network != NULL && *s->network) {
    json_t *att = json_pack("{s:s}", "Target", s->network);
    if (s->alias != NULL) json_object_set_new(att, "Aliases", json_pack("[s]", s->alias));
    json_object_set_new(tt, "Networks", json_pack("[o]", att));
  }
  json_object_set_new(body, "TaskTemplate", tt);
  /* One replica, not a replicated job: on Docker 20.10, removing a
   * replicated-job service leaves its running task running (docs/
   * swarm.md); a replicated service's tasks are stopped with it. */
  json_object_set_new(body, "Mode", json_pack("{s:{s:i}}", "Replicated", "Replicas", 1));
  /* The service's names resolve to its task, not to a virtual IP. */
  json_object_set_new(body, "EndpointSpec", json_pack("{s:s}", "Mode", "dnsrr"));
  return body;
}

json_t *tpuci__sw_net_body(const char *name, const tpuci__kvlist_t *labels) {
  return json_pack("{s:s, s:s, s:b, s:b, s:b, s:o}", "Name", name, "Driver", "overlay",
                   "Attachable", 1, "Internal", 1, "CheckDuplicate", 1, "Labels",
                   tpuci__sw_labels(labels));
}

void tpuci__sw_node_read(json_t *node, tpuci__sw_node_t *out) {
  json_t *spec = json_object_get(node, "Spec");
  json_t *res = json_object_get(json_object_get(node, "Description"), "Resources");
  const char *state = json_string_value(json_object_get(json_object_get(node, "Status"), "State"));
  const char *avail = json_string_value(json_object_get(spec, "Availability"));
  const char *role = json_string_value(json_object_get(spec, "Role"));
  json_t *cpu = json_object_get(res, "NanoCPUs");
  json_t *mem = json_object_get(res, "MemoryBytes");
  memset(out, 0, sizeof(*out));
  out->id = json_string_value(json_object_get(node, "ID"));
  out->hostname =
      json_string_value(json_object_get(json_object_get(node, "Description"), "Hostname"));
  if (out->hostname == NULL) out->hostname = out->id ? out->id : "?";
  out->ready = state != NULL && strcmp(state, "ready") == 0 &&
               (avail == NULL || strcmp(avail, "active") == 0);
  out->manager = role != NULL && strcmp(role, "manager") == 0;
  out->nano_cpus = json_is_integer(cpu) ? (int64_t) json_integer_value(cpu) : 0;
  out->memory_bytes = json_is_integer(mem) ? (int64_t) json_integer_value(mem) : 0;
}

int tpuci__sw_fit(const tpuci__sw_node_t *nodes, size_t n, double cpus, uint64_t memory_bytes) {
  int64_t need_cpu = cpus > 0 ? (int64_t) (cpus * 1e9 + 0.5) : 0;
  long total = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    long k = 1000000;
    if (!nodes[i].ready) continue;
    if (need_cpu > 0) {
      long c = (long) (nodes[i].nano_cpus / need_cpu);
      if (c < k) k = c;
    }
    if (memory_bytes > 0) {
      long m = (long) (nodes[i].memory_bytes / (int64_t) memory_bytes);
      if (m < k) k = m;
    }
    total += k;
    if (total > 1000000) total = 1000000;
  }
  return (int) total;
}
