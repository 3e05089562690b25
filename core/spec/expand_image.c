/* `image` declarations into the plan (plan.h's tpuci__image_t): a built
 * image's context made absolute with the spec's folder. */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "spec/internal.h"

static void tpuci__expand_build(lua_State *L, tpuci__spec_ctx_t *c, tpuci__image_t *img, int bt) {
  tpuci__image_build_t *b = tpuci__calloc(1, sizeof(*b));
  const char *s;
  int args;
  lua_Integer k, n;

  img->build = b;
  tpuci__spec_path_abs(&c->scratch, c->plan->spec_dir ? c->plan->spec_dir : c->spec_dir,
                       tpuci__spec_get_str(L, bt, "context"));
  if (tpuci__text_problem(c->scratch.data, c->scratch.len, NULL) != NULL)
    luaL_error(L,
               "%s: image '%s': build.context: the spec's folder is not valid UTF-8, "
               "and the path made from it could not be recorded (give an absolute path)",
               img->where, img->name);
  b->context = tpuci__strndup(c->scratch.data, c->scratch.len);
  s = tpuci__spec_get_str(L, bt, "dockerfile");
  b->dockerfile = s ? tpuci__strdup(s) : NULL;
  s = tpuci__spec_get_str(L, bt, "target");
  b->target = s ? tpuci__strdup(s) : NULL;
  lua_getfield(L, bt, "args");
  args = lua_gettop(L);
  n = lua_istable(L, args) ? (lua_Integer) lua_rawlen(L, args) : 0;
  for (k = 1; k <= n; k++) {
    lua_rawgeti(L, args, k);
    tpuci__strv_push(&b->args, lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

void tpuci__spec_expand_image(lua_State *L, tpuci__spec_ctx_t *c, tpuci__image_t *img, int t) {
  const char *s;
  img->name = tpuci__strdup(tpuci__spec_get_str(L, t, "name"));
  img->ref = tpuci__strdup(tpuci__spec_get_str(L, t, "ref"));
  img->where = tpuci__strdup(tpuci__spec_get_str(L, t, "where"));
  s = tpuci__spec_get_str(L, t, "pull");
  img->pull = s && strcmp(s, "always") == 0  ? TPUCI__PULL_ALWAYS
              : s && strcmp(s, "never") == 0 ? TPUCI__PULL_NEVER
                                             : TPUCI__PULL_MISSING;
  lua_getfield(L, t, "build");
  /* A built image is never pulled: the run's build makes it. */
  if (lua_istable(L, -1)) {
    tpuci__expand_build(L, c, img, lua_gettop(L));
    img->pull = TPUCI__PULL_NEVER;
  }
  lua_pop(L, 1);
}
