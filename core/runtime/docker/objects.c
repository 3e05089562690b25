/* The docker runtime driver's shared parts (driver.h), below its
 * attempt (attempt.c), its checks (prepare.c) and the runtime object
 * (driver.c): the objects the engine did not answer about, and closing
 * once nothing is left (the runtime's own parts: engine/erun.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/docker/driver.h"

/* The first failure of an attempt that is not the job's. */
void tpuci__dk_infra(tpuci__dk_att_t *att, const char *step, const tpuci__dk_ctr_t *c,
                     const char *msg) {
  const char *hint = att->dk->e.eng->podman ? tpuci__podman_hint(msg) : NULL;
  if (att->ua.infra != NULL) return;
  if (c != NULL)
    att->ua.infra = tpuci__printf("docker engine: %s container %s failed: %s%s%s", step, c->u.name,
                                  msg, hint ? "; " : "", hint ? hint : "");
  else att->ua.infra = tpuci__printf("docker engine: %s failed: %s", step, msg);
}

/* Objects the engine did not answer about. */

int tpuci__dk_unreached(const tpuci__engine_res_t *res) {
  return res->error == UV_ECONNREFUSED || res->error == UV_ENOENT || res->error == UV_EACCES;
}

int tpuci__dk_no_answer(const tpuci__engine_res_t *res) {
  return res->error != 0 && res->error != UV_ECANCELED;
}

void tpuci__dk_orphan(tpuci__dk_t *dk, int network, const char *id, const char *name) {
  tpuci__dk_orphan_t *o;
  if (dk->norphans == dk->orphans_cap) {
    dk->orphans_cap = dk->orphans_cap ? 2 * dk->orphans_cap : 8;
    dk->orphans = tpuci__realloc(dk->orphans, dk->orphans_cap * sizeof(*o));
  }
  o = &dk->orphans[dk->norphans++];
  o->network = network;
  o->id = tpuci__strdup(id);
  o->name = tpuci__strdup(name);
}

typedef struct {
  tpuci__dk_t *dk;
  tpuci__dk_orphan_t o;
  int last; /* no later try: say what is left */
} tpuci__dk_orphan_req_t;

static void tpuci__dk_on_orphan_removed(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_orphan_req_t *q = p;
  tpuci__dk_t *dk = q->dk;
  int last = q->last || dk->e.closing;

  dk->orphan_reqs--;
  if (res->ok || res->status == 404) {
    /* Gone now (or the engine never made it). */
  } else if (tpuci__dk_no_answer(res) && !last) {
    tpuci__dk_orphan(dk, q->o.network, q->o.id, q->o.name);
  } else {
    tpuci__erun_tell(&dk->e, "could not remove %s %s: %s; run `tpuci gc`%s",
                     q->o.network ? "network" : "container", q->o.name, res->message,
                     tpuci__dk_no_answer(res) ? " once the engine is back" : "");
  }
  free(q->o.id);
  free(q->o.name);
  free(q);
  /* Networks go once their containers have. */
  if (dk->orphan_reqs == 0 && dk->norphans > 0 && last) tpuci__dk_orphans_flush(dk, 1);
  tpuci__dk_maybe_closed(&dk->e.rt);
}

/* Asks the engine again to remove the orphans: the containers, or when
 * there are none, the networks. */
void tpuci__dk_orphans_flush(tpuci__dk_t *dk, int last) {
  size_t i, kept = 0;
  int containers = 0;

  if (dk->e.eng == NULL || dk->e.eng->closing || dk->orphan_reqs > 0) return;
  for (i = 0; i < dk->norphans; i++) containers |= !dk->orphans[i].network;
  for (i = 0; i < dk->norphans; i++) {
    tpuci__dk_orphan_t *o = &dk->orphans[i];
    tpuci__dk_orphan_req_t *q;
    if (containers && o->network) {
      dk->orphans[kept++] = *o;
      continue;
    }
    q = tpuci__calloc(1, sizeof(*q));
    q->dk = dk;
    q->o = *o;
    q->last = last;
    dk->orphan_reqs++;
    if (o->network) tpuci__engine_network_remove(dk->e.eng, o->id, tpuci__dk_on_orphan_removed, q);
    else tpuci__engine_container_remove(dk->e.eng, o->id, tpuci__dk_on_orphan_removed, q);
  }
  dk->norphans = kept;
}

void tpuci__dk_maybe_closed(tpuci__runtime_t *rt) {
  tpuci__dk_t *dk = (tpuci__dk_t *) rt;
  if (!tpuci__erun_may_close(&dk->e) || dk->atts.atts != NULL || dk->atts.handles > 0 ||
      dk->orphan_reqs > 0)
    return;
  if (dk->norphans > 0 && dk->e.eng != NULL && !dk->e.eng->closing) {
    /* A last try, and a message for each that is still there. */
    tpuci__dk_orphans_flush(dk, 1);
    if (dk->orphan_reqs > 0) return;
  }
  tpuci__erun_close_engine(&dk->e);
}
