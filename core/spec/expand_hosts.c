/* `hosts` declarations into the plan (plan.h's tpuci__hostset_t): paths
 * made absolute with the spec's folder, a gcloud describe file read for
 * its workers' addresses, and a job's topology checked against them. */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <uv.h>

#include "spec/internal.h"

static const char *tpuci__base_dir(tpuci__spec_ctx_t *c) {
  return c->plan->spec_dir ? c->plan->spec_dir : c->spec_dir;
}

/* An absolute copy of the spec-relative path in field `key`, or NULL. */
static char *tpuci__abs_field(lua_State *L, tpuci__spec_ctx_t *c, int t, const char *key,
                              const char *what) {
  const char *s = tpuci__spec_get_str(L, t, key);
  if (s == NULL) return NULL;
  tpuci__spec_path_abs(&c->scratch, tpuci__base_dir(c), s);
  if (tpuci__text_problem(c->scratch.data, c->scratch.len, NULL) != NULL)
    luaL_error(L,
               "%s: %s: the spec's folder is not valid UTF-8, and the path "
               "made from it could not be recorded (give an absolute path)",
               what, key);
  return tpuci__strndup(c->scratch.data, c->scratch.len);
}

/* Reads the workers' internal addresses, in order, from a
 * `gcloud compute tpus tpu-vm describe --format=json` or `gcloud compute
 * instances list --format=json` file (plan/gcloud.c): a regular
 * file (a FIFO is refused at once, never waited on) of at most
 * TPUCI__GCLOUD_MAX_BYTES. Returns NULL, or a new message (the caller
 * raises it once nothing is held). */
static char *tpuci__gcloud_read(tpuci__hostset_t *hs, const char *user) {
  char *text = NULL, *msg;
  size_t len = 0;
  int r = tpuci__read_file_max(hs->gcloud, TPUCI__GCLOUD_MAX_BYTES, &text, &len);
  if (r == UV_EFBIG)
    return tpuci__printf("gcloud: '%s' is over %u MiB: not a describe output", hs->gcloud,
                         TPUCI__GCLOUD_MAX_BYTES >> 20);
  if (r != 0) {
    char *why = tpuci__read_why(hs->gcloud, r);
    msg = tpuci__printf("gcloud: cannot read '%s': %s", hs->gcloud, why);
    free(why);
    return msg;
  }
  msg = tpuci__gcloud_parse(hs, text, len, user);
  free(text);
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
  hs->match = tpuci__strdup(tpuci__spec_get_str(L, t, "instances"));
  hs->label = tpuci__strdup(tpuci__spec_get_str(L, t, "label"));
  hs->describe = tpuci__strdup(tpuci__spec_get_str(L, t, "describe"));
  hs->describe_timeout_ms = (uint64_t) tpuci__spec_get_int(L, t, "describe_timeout_ms");
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
    hs->nhosts = i + 1;
    /* The prelude refuses these; the plan never holds one either way. */
    if (hs->hosts[i].host == NULL || hs->hosts[i].host[0] == '-' ||
        (hs->hosts[i].user != NULL && hs->hosts[i].user[0] == '-'))
      luaL_error(L, "%s: [%d]: a host or user cannot start with '-'", what, (int) i + 1);
    hs->hosts[i].port = (int) tpuci__spec_get_int(L, e, "port");
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

void tpuci__spec_check_hosts(lua_State *L, const char *job, const char *where, int topology,
                             int hostset) {
  tpuci__plan_t *p = tpuci__spec_ctx(L)->plan;
  const tpuci__hostset_t *hs;
  int need;
  if (hostset < 0 || (size_t) hostset >= p->nhostsets) return;
  hs = &p->hostsets[hostset];
  need = topology >= 0 && (size_t) topology < p->ntopologies ? p->topologies[topology].hosts : 1;
  if ((size_t) need == hs->nhosts) return;
  if (topology >= 0 && (size_t) topology < p->ntopologies)
    lua_pushfstring(L,
                    "%s: job '%s': hosts '%s' (%s) has %d host%s, but topology "
                    "'%s' has %d (host i of the topology runs on entry i)",
                    where, job, hs->name, hs->where, (int) hs->nhosts, hs->nhosts == 1 ? "" : "s",
                    p->topologies[topology].name, need);
  else
    lua_pushfstring(L,
                    "%s: job '%s': hosts '%s' (%s) has %d hosts, but the job "
                    "has 1 (no topology; give one with %d hosts, e.g. "
                    "topology = ...)",
                    where, job, hs->name, hs->where, (int) hs->nhosts, (int) hs->nhosts);
  lua_error(L);
}
