/* `tpuci init` (include/tpuci.h, tpuci_init_spec): pytest's
 * configuration of a folder read (core/kind/pytest/pyconf.h) and a starting
 * spec written from it (core/kind/pytest/init.h). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "api/ctx.h"
#include "kind/pytest/init.h"
#include "kind/pytest/pyconf.h"

void tpuci_init_options_init(tpuci_init_options_t *opts) {
  memset(opts, 0, sizeof(*opts));
  opts->size = sizeof(*opts);
}

int tpuci_init_spec(tpuci_ctx_t *ctx, const tpuci_init_options_t *opts, char **out,
                    char **summary) {
  tpuci_init_options_t io;
  tpuci__init_opts_t o;
  tpuci__pyconf_t conf;
  tpuci__err_t e = {0, NULL};
  char *image_name = NULL, *jax = NULL;
  const char *dir;
  DIR *d;

  if (ctx == NULL || out == NULL || summary == NULL) return TPUCI_EUSAGE;
  *out = *summary = NULL;
  tpuci_init_options_init(&io);
  if (opts != NULL && tpuci__struct_in(&io, sizeof(io), opts, TPUCI__INIT_OPTIONS_MIN) != 0)
    return TPUCI_EUSAGE;
  dir = io.dir ? io.dir : ".";
  if ((d = opendir(dir)) == NULL) {
    tpuci__err_set(&e, TPUCI_EUSAGE, "%s: not a folder that can be read", dir);
    return tpuci__fail(ctx, &e);
  }
  closedir(d);
  tpuci__pyconf_init(&conf);
  if (tpuci__pyconf_find(dir, &conf, &e) != 0) {
    tpuci__pyconf_free(&conf);
    return tpuci__fail(ctx, &e);
  }
  memset(&o, 0, sizeof(o));
  o.spec_name = io.spec_name ? io.spec_name : "tpuci.lua";
  tpuci__init_probe(dir, &conf, &o, &image_name, &jax);
  o.image_name = image_name;
  o.project = io.project ? io.project : ".";
  *out = tpuci__init_spec(&conf, &o, summary);
  tpuci__strv_free(&o.counted);
  free(image_name);
  free(jax);
  tpuci__pyconf_free(&conf);
  return 0;
}
