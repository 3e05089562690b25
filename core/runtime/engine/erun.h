/* The part of an engine driver's runtime object that both engine
 * drivers (runtime/docker/, runtime/swarm/) share, first in theirs
 * (tpuci__erun_t): the engine client on the runtime's loop, the run's id
 * and --keep-failed, messages to the user, prepare's bookkeeping (its
 * requests in flight, abort(), the image walk's inspection and pull, the
 * remote-mount warnings) and closing (close(), then the engine client,
 * then close()'s callback). A driver says, in its tpuci__erun_ops_t,
 * what is its own: its prepare, start and free, what it lets go when
 * prepare ends, and whether it may close now. */
#ifndef TPUCI_ENGINE_ERUN_H
#define TPUCI_ENGINE_ERUN_H

#include <uv.h>

#include "runtime/engine/engine.h"
#include "runtime/engine/pull.h"
#include "runtime/runtime.h"

typedef struct tpuci__erun_s tpuci__erun_t;

typedef struct {
  tpuci__runtime_kind_t kind; /* the instances it runs */
  const char *name;           /* "docker": "the docker runtime is busy" */
  const char *inspecting;     /* "docker engine": "...: inspecting image" */
  const char *pulling;        /* "" or " on the swarm manager" */
  const char *reached;        /* "the Docker Engine": "cannot reach ..." */
  /* What to do about an engine not reached, unless the error has a hint
   * of its own (UV_EPROTO); NULL: tpuci__engine_reach_hint's. */
  const char *reach_hint;
  /* After the API negotiation's own words, or NULL ("(needs API 1.41)"). */
  const char *api_note;
  int (*prepare)(tpuci__runtime_t *rt, const tpuci__plan_t *plan,
                 void (*cb)(tpuci__runtime_t *rt, int status));
  int (*start)(tpuci__runtime_t *rt, tpuci__attempt_t *a);
  void (*free)(tpuci__runtime_t *rt);
  /* Lets go of what prepare kept (may be NULL); before its callback. */
  void (*prepare_end)(tpuci__erun_t *e);
  /* Closes the runtime if nothing is left (tpuci__erun_close_engine). */
  void (*maybe_closed)(tpuci__runtime_t *rt);
} tpuci__erun_ops_t;

struct tpuci__erun_s {
  tpuci__runtime_t rt; /* first */
  const tpuci__erun_ops_t *ops;
  uv_loop_t *loop;
  tpuci__engine_t *eng; /* made on first use */
  char *run_id;
  int keep_failed;
  int bg; /* prepare's requests in flight */
  /* prepare */
  const tpuci__plan_t *plan;
  void (*prepare_cb)(tpuci__runtime_t *rt, int status);
  size_t image_next;           /* the image walk's next */
  int image_present;           /* of the image last inspected */
  tpuci__http_req_t *prep_req; /* prepare's request in flight */
  tpuci__puller_t *pull;       /* or its image pull */
  int aborting;                /* abort(): prepare ends at its next answer */
  /* close */
  int closing;
  void (*close_cb)(tpuci__runtime_t *rt);
};

/* Sets up e (zeroed; rt's name, loop and signal are the attempt core's)
 * with the ops' prepare and free, this file's start (none while closing,
 * then ops->start), abort and close.
 * Returns &e->rt. */
tpuci__runtime_t *tpuci__erun_init(tpuci__erun_t *e, const tpuci__erun_ops_t *ops, uv_loop_t *loop,
                                   const tpuci__runtime_opts_t *opts);
/* Frees what init and the runtime's use left in e (not e itself). */
void tpuci__erun_release(tpuci__erun_t *e);
/* A message for the user outside any attempt (printf-like). */
void tpuci__erun_tell(tpuci__erun_t *e, const char *fmt, ...) TPUCI__PRINTF(2, 3);
/* Makes the engine client on first use; TPUCI_EENGINE with rt.err. */
int tpuci__erun_engine(tpuci__erun_t *e);

/* prepare */
/* Begins prepare: not while closing or preparing; the engine client;
 * the warnings about bind mounts on an engine of another machine. 0, or
 * a code with rt.err (then cb is never called). */
int tpuci__erun_prepare_begin(tpuci__erun_t *e, const tpuci__plan_t *plan,
                              void (*cb)(tpuci__runtime_t *rt, int status));
/* Ends prepare with `status`: ops->prepare_end, the callback, then
 * closing if close() came meanwhile. */
void tpuci__erun_prepare_done(tpuci__erun_t *e, int status);
/* Ends prepare with code and `msg` (taken) in rt.err. */
void tpuci__erun_prepare_fail(tpuci__erun_t *e, int code, char *msg);
/* Every answer to a prepare request comes through here first. Returns 1
 * when prepare was aborted meanwhile, and has then ended it. */
int tpuci__erun_answered(tpuci__erun_t *e);

/* What the answer to an image's inspection says for the image walk. */
typedef enum {
  TPUCI__ERUN_IMG_HANDLED = 0, /* prepare failed, or a pull answers later */
  TPUCI__ERUN_IMG_NEVER,       /* missing with pull = "never": the driver
                                  fails with its words */
  TPUCI__ERUN_IMG_USE          /* present, no pull asked for: go on */
} tpuci__erun_img_t;
/* The inspection of `img` answered `res` (after tpuci__erun_answered):
 * an engine error fails prepare; e->image_present says whether it is
 * there; a missing image (not pull = "never") or pull = "always" is
 * pulled, told, and answers `on_pulled(e, ...)`. */
tpuci__erun_img_t tpuci__erun_image(tpuci__erun_t *e, const tpuci__image_t *img,
                                    const tpuci__engine_res_t *res, tpuci__pull_cb on_pulled);

/* GET /version's answer (after tpuci__erun_answered): 0 when the engine
 * speaks a usable API (negotiated); else prepare failed (not reached, an
 * error or no JSON, an API too old), 1. */
int tpuci__erun_version(tpuci__erun_t *e, const tpuci__engine_res_t *res);

/* The runtime's abort(): a prepare in progress ends at its next answer
 * (its request or image pull cancelled). */
void tpuci__erun_abort(tpuci__runtime_t *rt);

/* close */
/* The runtime's close(): ops->maybe_closed decides when. */
void tpuci__erun_close(tpuci__runtime_t *rt, void (*cb)(tpuci__runtime_t *rt));
/* Whether close() came and prepare is over. */
int tpuci__erun_may_close(const tpuci__erun_t *e);
/* The last step of closing: the engine client, then close()'s callback. */
void tpuci__erun_close_engine(tpuci__erun_t *e);

#endif /* TPUCI_ENGINE_ERUN_H */
