/* Blocking calls to the engine for `tpuci gc` and `tpuci doctor`: an
 * engine client on a loop of its own, run until each answer is in. */
#ifndef TPUCI_ENGINE_SYNC_H
#define TPUCI_ENGINE_SYNC_H

#include <jansson.h>
#include <uv.h>

#include "plan/plan.h"
#include "runtime/engine/engine.h"

/* One answer, copied out of the callback. */
typedef struct {
  int done;
  int ok;
  int error;
  long status;
  json_t *json; /* owned */
  char *message;
  const char *hint; /* static */
  uv_loop_t *loop;  /* set by tpuci__sync_wait */
} tpuci__sync_res_t;

/* A loop and a client on it. */
typedef struct {
  uv_loop_t loop;
  tpuci__engine_t *eng;
  int closed;
} tpuci__sync_t;

/* Makes the loop and the client (DOCKER_HOST, contexts: engine.h). 0, or
 * a code with err filled. */
int tpuci__sync_open(tpuci__sync_t *s, tpuci__err_t *err);
/* Closes the client and the loop. */
void tpuci__sync_close(tpuci__sync_t *s);
/* The callback of a request whose answer goes to a tpuci__sync_res_t. */
void tpuci__sync_cb(void *p, const tpuci__engine_res_t *res);
/* Runs the loop until r is answered. */
void tpuci__sync_wait(tpuci__sync_t *s, tpuci__sync_res_t *r);
/* Frees the answer and zeroes it for the next request. */
void tpuci__sync_res_free(tpuci__sync_res_t *r);

/* The results cache's image ids (runtime.h, a driver's image_ids): for
 * each plan image k the selected instances of `kind` run, ids[k] the
 * engine's id of it ("sha256:..."), or NULL and why[k] (a new string)
 * when there is none to trust: not on the engine (its id is known once
 * it is pulled), or pull = "always" (the pull may bring another). 0, or
 * TPUCI_EENGINE with err when the engine does not answer. */
int tpuci__sync_image_ids(const tpuci__plan_t *plan, tpuci__runtime_kind_t kind, char **ids,
                          char **why, tpuci__err_t *err);

/* `tpuci gc`'s lines. */
/* Waits for the answer r to listing `what` ("containers"): 0, or -1 with
 * "FAILED to list <what>: <why>" in report (r freed). */
int tpuci__sync_listed(tpuci__sync_t *s, tpuci__sync_res_t *r, const char *what,
                       tpuci__buf_t *report);
/* The answer d to removing `kind` `name` of run `run`: 1 and "removed
 * <kind> <name> (run <run>)" when it went (or was gone already), else 0
 * and "FAILED to remove <kind> <name>: <why>". */
int tpuci__sync_removed(const tpuci__sync_res_t *d, const char *kind, const char *name,
                        const char *run, tpuci__buf_t *report);

#endif /* TPUCI_ENGINE_SYNC_H */
