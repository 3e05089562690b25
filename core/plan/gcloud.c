/* What gcloud says about a slice's workers (docs/ssh.md): the workers of
 * a `hosts` declaration from a `gcloud compute tpus tpu-vm describe` or a
 * `gcloud compute instances list` JSON document, and, from a fresh one
 * after a failed attempt, whether a worker was taken away (preempted,
 * stopped, gone). Pure: the callers read the files and run the
 * commands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/wildmatch.h"
#include "plan/plan.h"

/* The states in which a worker is not there to run on: a TPU node's
 * `state` or an instance's `status`. */
static const char *const tpuci__gone_states[] = {
    "PREEMPTED", "TERMINATED", "STOPPING", "STOPPED", "SUSPENDING", "SUSPENDED",
    "DELETING",  "REPAIRING",  "HIDING",   "HIDDEN",  NULL};

static int tpuci__state_gone(const char *state) {
  size_t i;
  for (i = 0; state != NULL && tpuci__gone_states[i]; i++)
    if (strcmp(state, tpuci__gone_states[i]) == 0) return 1;
  return 0;
}

/* Whether s can be a worker's address: letters, digits, '.', ':' and
 * '-', not starting with '-' (ssh would read `-Fevil.conf` as an option
 * and run that config's ProxyCommand). */
static int tpuci__gcloud_address(const char *s) {
  size_t k;
  if (s[0] == '\0' || s[0] == '-') return 0;
  for (k = 0; s[k]; k++)
    if (!(s[k] == '.' || s[k] == ':' || s[k] == '-' || (s[k] >= '0' && s[k] <= '9') ||
          (s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z')))
      return 0;
  return 1;
}

static const char *tpuci__jstr_at(const json_t *o, const char *key) {
  const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
  return json_is_string(v) ? json_string_value(v) : NULL;
}

/* An instance's internal address: networkInterfaces[0].networkIP. */
static const char *tpuci__instance_ip(const json_t *inst) {
  const json_t *nics = json_object_get(inst, "networkInterfaces");
  return tpuci__jstr_at(json_array_get(nics, 0), "networkIP");
}

/* Its metadata item `key` (metadata.items[] of {key, value}), or NULL. */
static const char *tpuci__instance_meta(const json_t *inst, const char *key) {
  const json_t *items = json_object_get(json_object_get(inst, "metadata"), "items");
  size_t i;
  for (i = 0; i < json_array_size(items); i++) {
    const json_t *it = json_array_get(items, i);
    const char *k = tpuci__jstr_at(it, "key");
    if (k != NULL && strcmp(k, key) == 0) return tpuci__jstr_at(it, "value");
  }
  return NULL;
}

/* Whether an instance is one of the slice's: its name matches the glob
 * (NULL: any) and it has the label "key=value" (NULL: any). */
static int tpuci__instance_wanted(const json_t *inst, const char *match, const char *label) {
  const char *name = tpuci__jstr_at(inst, "name");
  if (match != NULL && (name == NULL || !tpuci__wildmatch(match, name, 0))) return 0;
  if (label != NULL) {
    const char *eq = strchr(label, '=');
    const json_t *labels = json_object_get(inst, "labels");
    char *key = tpuci__strndup(label, eq ? (size_t) (eq - label) : strlen(label));
    const char *v = tpuci__jstr_at(labels, key);
    int ok = v != NULL && (eq == NULL || strcmp(v, eq + 1) == 0);
    free(key);
    if (!ok) return 0;
  }
  return 1;
}

typedef struct {
  const json_t *inst;
  long worker; /* agent-worker-number, or -1 */
} tpuci__inst_ref_t;

static int tpuci__inst_cmp(const void *a, const void *b) {
  const tpuci__inst_ref_t *x = a, *y = b;
  if (x->worker != y->worker) return x->worker < y->worker ? -1 : 1;
  return strcmp(tpuci__jstr_at(x->inst, "name"), tpuci__jstr_at(y->inst, "name"));
}

/* The instances of a list that are the slice's, in worker order:
 * by metadata agent-worker-number when every one has it, else by name.
 * A new array of n (0 when none). */
static tpuci__inst_ref_t *tpuci__instances(const json_t *list, const char *match, const char *label,
                                           size_t *n) {
  tpuci__inst_ref_t *v = tpuci__calloc(json_array_size(list) + 1, sizeof(*v));
  size_t i, k = 0;
  int numbered = 1;
  for (i = 0; i < json_array_size(list); i++) {
    const json_t *inst = json_array_get(list, i);
    const char *num;
    char *end;
    if (!json_is_object(inst) || tpuci__jstr_at(inst, "name") == NULL ||
        !tpuci__instance_wanted(inst, match, label))
      continue;
    v[k].inst = inst;
    num = tpuci__instance_meta(inst, "agent-worker-number");
    v[k].worker = num && *num ? strtol(num, &end, 10) : -1;
    if (num == NULL || *num == '\0' || *end != '\0' || v[k].worker < 0) numbered = 0;
    k++;
  }
  for (i = 0; !numbered && i < k; i++) v[i].worker = -1;
  qsort(v, k, sizeof(*v), tpuci__inst_cmp);
  *n = k;
  return v;
}

static char *tpuci__bad_address(const char *file, const char *where, const char *s) {
  return tpuci__printf("gcloud: '%s': %s: not an address%s", file, where,
                       s[0] == '-' ? " (it starts with '-')" : "");
}

/* The workers of a `gcloud compute instances list --format=json` array. */
static char *tpuci__gcloud_parse_list(tpuci__hostset_t *hs, const json_t *list, const char *user) {
  size_t i, n;
  tpuci__inst_ref_t *v = tpuci__instances(list, hs->match, hs->label, &n);
  char *msg = NULL;
  if (n == 0)
    msg = tpuci__printf("gcloud: '%s': no instance%s%s%s%s%s (an instances list: write it with "
                        "`gcloud compute instances list --format=json > FILE`)",
                        hs->gcloud, hs->match ? " named " : "", hs->match ? hs->match : "",
                        hs->label ? " with the label " : "", hs->label ? hs->label : "",
                        hs->match || hs->label ? "" : " in it");
  else if (n > 256)
    msg = tpuci__printf("gcloud: '%s': at most 256 instances, got %zu", hs->gcloud, n);
  if (msg == NULL) hs->hosts = tpuci__calloc(n, sizeof(*hs->hosts));
  for (i = 0; msg == NULL && i < n; i++) {
    const char *ip = tpuci__instance_ip(v[i].inst), *name = tpuci__jstr_at(v[i].inst, "name");
    if (ip == NULL || ip[0] == '\0') {
      msg = tpuci__printf("gcloud: '%s': instance '%s': no networkInterfaces[0].networkIP",
                          hs->gcloud, name);
    } else if (!tpuci__gcloud_address(ip)) {
      char *where = tpuci__printf("instance '%s': networkIP", name);
      msg = tpuci__bad_address(hs->gcloud, where, ip);
      free(where);
    } else {
      hs->hosts[i].host = tpuci__strdup(ip);
      hs->hosts[i].user = tpuci__strdup(user);
      hs->nhosts = i + 1;
    }
  }
  free(v);
  return msg;
}

char *tpuci__gcloud_parse(tpuci__hostset_t *hs, const char *text, size_t len, const char *user) {
  json_error_t je;
  json_t *root, *eps;
  size_t i, n;
  char *msg = NULL;

  root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
  if (root == NULL)
    return tpuci__printf("gcloud: '%s' is not JSON: line %d: %s", hs->gcloud, je.line, je.text);
  if (json_is_array(root)) {
    msg = tpuci__gcloud_parse_list(hs, root, user);
    json_decref(root);
    return msg;
  }
  if (hs->match != NULL || hs->label != NULL) {
    json_decref(root);
    return tpuci__printf("gcloud: '%s' is a TPU's description, not an instances list: "
                         "instances and label filter a list",
                         hs->gcloud);
  }
  eps = json_is_object(root) ? json_object_get(root, "networkEndpoints") : NULL;
  n = json_is_array(eps) ? json_array_size(eps) : 0;
  if (n == 0) {
    msg = tpuci__printf("gcloud: '%s' has no networkEndpoints (write it with "
                        "`gcloud compute tpus tpu-vm describe NAME --zone ZONE "
                        "--format=json > FILE`, or give an instances list)",
                        hs->gcloud);
  } else if (n > 256) {
    msg = tpuci__printf("gcloud: '%s': at most 256 networkEndpoints, got %zu", hs->gcloud, n);
  }
  if (msg == NULL) {
    hs->hosts = tpuci__calloc(n, sizeof(*hs->hosts));
    for (i = 0; i < n && msg == NULL; i++) {
      json_t *ip = json_object_get(json_array_get(eps, i), "ipAddress");
      const char *s = json_is_string(ip) ? json_string_value(ip) : NULL;
      if (s == NULL || s[0] == '\0') {
        msg = tpuci__printf("gcloud: '%s': networkEndpoints[%zu]: no ipAddress", hs->gcloud, i + 1);
        break;
      }
      if (!tpuci__gcloud_address(s)) {
        char where[64];
        snprintf(where, sizeof(where), "networkEndpoints[%zu].ipAddress", i + 1);
        msg = tpuci__bad_address(hs->gcloud, where, s);
        break;
      }
      hs->hosts[i].host = tpuci__strdup(s);
      hs->hosts[i].user = tpuci__strdup(user);
      hs->nhosts = i + 1;
    }
  }
  json_decref(root);
  return msg;
}

/* Whether a TPU's network endpoint is worker host `h`: its internal or
 * external address. */
static int tpuci__endpoint_is(const json_t *ep, const char *h) {
  const char *ip = tpuci__jstr_at(ep, "ipAddress");
  const char *ext = tpuci__jstr_at(json_object_get(ep, "accessConfig"), "externalIp");
  return (ip != NULL && strcmp(ip, h) == 0) || (ext != NULL && strcmp(ext, h) == 0);
}

/* Whether an instance is worker host `h`: its name, or an internal or
 * external address of one of its interfaces. */
static int tpuci__instance_is(const json_t *inst, const char *h) {
  const json_t *nics = json_object_get(inst, "networkInterfaces");
  const char *name = tpuci__jstr_at(inst, "name");
  size_t i, k;
  if (name != NULL && strcmp(name, h) == 0) return 1;
  for (i = 0; i < json_array_size(nics); i++) {
    const json_t *nic = json_array_get(nics, i);
    const json_t *acs = json_object_get(nic, "accessConfigs");
    const char *ip = tpuci__jstr_at(nic, "networkIP");
    if (ip != NULL && strcmp(ip, h) == 0) return 1;
    for (k = 0; k < json_array_size(acs); k++) {
      const char *nat = tpuci__jstr_at(json_array_get(acs, k), "natIP");
      if (nat != NULL && strcmp(nat, h) == 0) return 1;
    }
  }
  return 0;
}

/* The first worker the document does not name, or hs->nhosts. Sets
 * *matched when it names at least one. */
static size_t tpuci__gcloud_first_unseen(const tpuci__hostset_t *hs, const char *const *aliases,
                                         const json_t *eps, const tpuci__inst_ref_t *v, size_t n,
                                         int *matched) {
  size_t i, k, first = hs->nhosts;
  *matched = 0;
  for (i = 0; i < hs->nhosts; i++) {
    const char *alias = aliases != NULL ? aliases[i] : NULL;
    int seen = 0;
    for (k = 0; eps != NULL && k < json_array_size(eps) && !seen; k++)
      seen = tpuci__endpoint_is(json_array_get(eps, k), hs->hosts[i].host) ||
             (alias != NULL && tpuci__endpoint_is(json_array_get(eps, k), alias));
    for (k = 0; v != NULL && k < n && !seen; k++)
      seen = tpuci__instance_is(v[k].inst, hs->hosts[i].host) ||
             (alias != NULL && tpuci__instance_is(v[k].inst, alias));
    if (seen) *matched = 1;
    else if (first == hs->nhosts) first = i;
  }
  return first;
}

/* Worker i is not in the document: gone when the document names the
 * workers as the spec writes them (it names another, or the workers'
 * addresses came from such a document: the hosts' gcloud file), else
 * unknown: a worker written by a name or address the document does not
 * show is no evidence. 1 gone, -1 unknown; *why set. */
static int tpuci__gcloud_unseen(const tpuci__hostset_t *hs, size_t i, int matched, const char *in,
                                char **why) {
  if (hs->gcloud != NULL || matched) {
    *why = tpuci__printf("worker-%zu (%s) is gone from the %s", i, hs->hosts[i].host, in);
    return 1;
  }
  *why = tpuci__printf("none of the workers is in the %s by name, by internal or external "
                       "address, or by the host its ssh_config gives (worker-%zu is %s)",
                       in, i, hs->hosts[i].host);
  return -1;
}

int tpuci__gcloud_check(const tpuci__hostset_t *hs, const char *const *aliases, const char *text,
                        size_t len, char **why) {
  json_error_t je;
  json_t *root = json_loadb(text, len, 0, &je);
  size_t i, k, n = 0, unseen;
  int r = 0, matched = 0;

  *why = NULL;
  if (root == NULL) {
    *why = tpuci__printf("not JSON: line %d: %s", je.line, je.text);
    return -1;
  }
  if (json_is_object(root)) {
    /* A TPU's description: its state is every worker's. */
    const char *state = tpuci__jstr_at(root, "state");
    const json_t *eps = json_object_get(root, "networkEndpoints");
    if (tpuci__state_gone(state)) {
      *why = tpuci__printf("the TPU is %s", state);
      r = 1;
    } else if ((unseen = tpuci__gcloud_first_unseen(hs, aliases, eps, NULL, 0, &matched)) <
               hs->nhosts) {
      r = tpuci__gcloud_unseen(hs, unseen, matched, "TPU's networkEndpoints", why);
    }
  } else if (json_is_array(root)) {
    tpuci__inst_ref_t *v = tpuci__instances(root, hs->match, hs->label, &n);
    /* A worker the list names as gone is evidence, whatever the rest. */
    for (i = 0; r == 0 && i < hs->nhosts; i++) {
      const json_t *found = NULL;
      const char *alias = aliases != NULL ? aliases[i] : NULL;
      for (k = 0; k < n && found == NULL; k++)
        if (tpuci__instance_is(v[k].inst, hs->hosts[i].host) ||
            (alias != NULL && tpuci__instance_is(v[k].inst, alias)))
          found = v[k].inst;
      if (found != NULL && tpuci__state_gone(tpuci__jstr_at(found, "status"))) {
        *why = tpuci__printf("worker-%zu (%s, instance '%s') is %s", i, hs->hosts[i].host,
                             tpuci__jstr_at(found, "name"), tpuci__jstr_at(found, "status"));
        r = 1;
      }
    }
    if (r == 0 &&
        (unseen = tpuci__gcloud_first_unseen(hs, aliases, NULL, v, n, &matched)) < hs->nhosts)
      r = tpuci__gcloud_unseen(hs, unseen, matched, "instances", why);
    free(v);
  } else {
    *why = tpuci__strdup("neither a TPU's description nor an instances list");
    r = -1;
  }
  json_decref(root);
  return r;
}
