/* `hosts` declarations into the plan (plan.h's tpuci__hostset_t): paths
 * made absolute with the spec's folder, a gcloud describe file read for
 * its workers' addresses, and a job's topology checked against them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <lauxlib.h>
#include <lua.h>

#include "spec/internal.h"

/* A gcloud file bigger than this is not a describe output. */
#define TPUCI__GCLOUD_MAX_BYTES (4u << 20)

static const char *tpuci__base_dir(tpuci__spec_ctx_t *c) {
  return c->plan->spec_dir ? c->plan->spec_dir : c->spec_dir;
}

/* An absolute copy of the spec-relative path in field `key`, or NULL. */
static char *tpuci__abs_field(lua_State *L, tpuci__spec_ctx_t *c, int t,
                              const char *key, const char *what) {
  const char *s = tpuci__spec_get_str(L, t, key);
  if (s == NULL) return NULL;
  tpuci__spec_path_abs(&c->scratch, tpuci__base_dir(c), s);
  if (tpuci__text_problem(c->scratch.data, c->scratch.len, NULL) != NULL)
    luaL_error(L, "%s: %s: the spec's folder is not valid UTF-8, and the path "
               "made from it could not be recorded (give an absolute path)",
               what, key);
  return tpuci__strndup(c->scratch.data, c->scratch.len);
}

/* Reads the workers' internal addresses, in order, from a
 * `gcloud compute tpus tpu-vm describe --format=json` file. Returns NULL,
 * or a new message (the caller raises it once nothing is held). */
static char *tpuci__gcloud_read(tpuci__hostset_t *hs, const char *user) {
  json_error_t je;
  json_t *root, *eps;
  size_t i, n;
  char *msg = NULL;

  errno = 0;
  root = json_load_file(hs->gcloud, JSON_REJECT_DUPLICATES, &je);
  if (root == NULL) {
    if (je.line <= 0 || errno != 0)
      return tpuci__printf("gcloud: cannot read '%s': %s", hs->gcloud,
                           errno ? strerror(errno) : je.text);
    return tpuci__printf("gcloud: '%s' is not JSON: line %d: %s", hs->gcloud,
                         je.line, je.text);
  }
  eps = json_is_object(root) ? json_object_get(root, "networkEndpoints") : NULL;
  n = json_is_array(eps) ? json_array_size(eps) : 0;
  if (n == 0) {
    msg = tpuci__printf("gcloud: '%s' has no networkEndpoints (write it with "
                        "`gcloud compute tpus tpu-vm describe NAME --zone ZONE "
                        "--format=json > FILE`)", hs->gcloud);
  } else if (n > 256) {
    msg = tpuci__printf("gcloud: '%s': at most 256 networkEndpoints, got %zu",
                        hs->gcloud, n);
  }
  if (msg == NULL) {
    hs->hosts = tpuci__calloc(n, sizeof(*hs->hosts));
    for (i = 0; i < n && msg == NULL; i++) {
      json_t *ip = json_object_get(json_array_get(eps, i), "ipAddress");
      const char *s = json_is_string(ip) ? json_string_value(ip) : NULL;
      size_t k;
      if (s == NULL || s[0] == '\0') {
        msg = tpuci__printf("gcloud: '%s': networkEndpoints[%zu]: no ipAddress",
                            hs->gcloud, i + 1);
        break;
      }
      for (k = 0; s[k]; k++)
        if (!(s[k] == '.' || s[k] == ':' || s[k] == '-' ||
              (s[k] >= '0' && s[k] <= '9') || (s[k] >= 'a' && s[k] <= 'z') ||
              (s[k] >= 'A' && s[k] <= 'Z')))
          break;
      if (s[k] != '\0') {
        msg = tpuci__printf("gcloud: '%s': networkEndpoints[%zu].ipAddress: "
                            "not an address", hs->gcloud, i + 1);
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

void tpuci__spec_expand_hosts(lua_State *L, tpuci__hostset_t *hs, int t) {
  tpuci__spec_ctx_t *c = tpuci__spec_ctx(L);
  const char *where = tpuci__spec_get_str(L, t, "where");
  const char *name = tpuci__spec_get_str(L, t, "name");
  char what[256];
  size_t i, n;
  int w;

  hs->name = tpuci__strdup(name);
  hs->where = tpuci__strdup(where);
  snprintf(what, sizeof(what), "%s: hosts '%s'", where, name);
  hs->ssh_config = tpuci__abs_field(L, c, t, "ssh_config", what);
  hs->gcloud = tpuci__abs_field(L, c, t, "gcloud", what);
  if (hs->gcloud != NULL) {
    char *msg = tpuci__gcloud_read(hs, tpuci__spec_get_str(L, t, "user"));
    if (msg != NULL) {
      lua_pushfstring(L, "%s: %s", what, msg);
      free(msg);
      lua_error(L);
    }
    return;
  }
  lua_getfield(L, t, "workers");
  w = lua_gettop(L);
  n = (size_t) lua_rawlen(L, w);
  hs->hosts = tpuci__calloc(n ? n : 1, sizeof(*hs->hosts));
  for (i = 0; i < n; i++) {
    int e;
    lua_rawgeti(L, w, (lua_Integer) i + 1);
    e = lua_gettop(L);
    hs->hosts[i].user = tpuci__strdup(tpuci__spec_get_str(L, e, "user"));
    hs->hosts[i].host = tpuci__strdup(tpuci__spec_get_str(L, e, "host"));
    hs->hosts[i].port = (int) tpuci__spec_get_int(L, e, "port");
    hs->nhosts = i + 1;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

void tpuci__spec_check_hosts(lua_State *L, const char *job, const char *where,
                             int topology, int hostset) {
  tpuci__plan_t *p = tpuci__spec_ctx(L)->plan;
  const tpuci__hostset_t *hs;
  int need;
  if (hostset < 0 || (size_t) hostset >= p->nhostsets) return;
  hs = &p->hostsets[hostset];
  need = topology >= 0 && (size_t) topology < p->ntopologies
             ? p->topologies[topology].hosts : 1;
  if ((size_t) need == hs->nhosts) return;
  if (topology >= 0 && (size_t) topology < p->ntopologies)
    lua_pushfstring(L, "%s: job '%s': hosts '%s' (%s) has %d host%s, but topology "
                    "'%s' has %d (host i of the topology runs on entry i)",
                    where, job, hs->name, hs->where, (int) hs->nhosts,
                    hs->nhosts == 1 ? "" : "s", p->topologies[topology].name, need);
  else
    lua_pushfstring(L, "%s: job '%s': hosts '%s' (%s) has %d hosts, but the job "
                    "has 1 (no topology; give one with %d hosts, e.g. "
                    "topology = ...)", where, job, hs->name, hs->where,
                    (int) hs->nhosts, (int) hs->nhosts);
  lua_error(L);
}
