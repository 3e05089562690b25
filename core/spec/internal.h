/* Private to core/spec/: the state of one tpuci__spec_load() call, shared
 * by the sandbox (sandbox.c), the loader (load.c) and the expansion of
 * declarations into the plan (expand.c, expand_ctr.c). */
#ifndef TPUCI_SPEC_INTERNAL_H
#define TPUCI_SPEC_INTERNAL_H

#include <lua.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include "spec/spec.h"

/* The chunk name of the prelude, so that frames running it can be told
 * apart from the spec's. */
#define TPUCI__PRELUDE_SOURCE "=(tpuci prelude)"

/* A plan never holds more instances than this. */
#define TPUCI__SPEC_MAX_INSTANCES 100000

/* Instructions between two looks at the clock. */
#define TPUCI__SPEC_HOOK_COUNT 10000

/* Calls (of Lua or C functions) between two looks at the clock. */
#define TPUCI__SPEC_HOOK_CALLS 1000

typedef struct {
  lua_State *L;
  tpuci__plan_t *plan;
  const char *chunk;
  size_t len;
  const char *chunkname; /* as given: "spec.lua" */
  char src[LUA_IDSIZE];  /* how Lua shows it in messages */
  const char *spec_dir;
  int real; /* every topology is real hardware */
  /* The job kinds' loaders (the limits'; NULL: none), and the job
   * expand.c is making instances of, for their templates
   * (tpuci__spec_render_t). */
  const tpuci__kind_spec_t *const *kinds;
  const struct tpuci__job_s *job;

  uint64_t timeout_ms;
  uint64_t deadline_ms; /* on the monotonic clock */
  int timed_out;
  char *timeout_msg;
  unsigned calls; /* call events since the clock was read */

  size_t mem_limit;
  size_t mem_used;
  size_t mem_peak;
  int mem_error;     /* a memory error was seen and rethrown */
  size_t plan_bytes; /* C memory of the instances, roughly */

  tpuci__buf_t warning; /* pieces of a warn() message */
  int closing;          /* inside lua_close() */
  tpuci__buf_t scratch; /* names and templates while expanding */

  jmp_buf panic_jmp;
  int panic_armed;
  char *panic_msg;
} tpuci__spec_ctx_t;

/* The context a state was created for (the allocator's userdata). */
tpuci__spec_ctx_t *tpuci__spec_ctx(lua_State *L);

/* Milliseconds on the monotonic clock. */
uint64_t tpuci__spec_clock_ms(void);

/* Creates the capped state with its panic and warning handlers; NULL when
 * even that does not fit. */
lua_State *tpuci__spec_newstate(tpuci__spec_ctx_t *c);

/* Opens the allowed libraries and removes or replaces the unsafe parts of
 * the base library. Called in protected mode. */
void tpuci__spec_sandbox(lua_State *L);

/* Starts the load deadline's count hook on L. */
void tpuci__spec_arm_hook(lua_State *L);

/* The current line of the innermost frame, at `level` or above, that runs
 * the spec's own chunk; 0 when there is none. */
int tpuci__spec_line(lua_State *L, int level);

/* Adds a warning to the plan. */
void tpuci__spec_warn(tpuci__spec_ctx_t *c, const char *msg);

/* Raises the timeout error when the load's deadline has passed, for C
 * code that runs long without returning to Lua (tpuci.yaml, the pattern
 * matcher): the hooks cannot reach it. The first time, the message is
 * made, naming `what` ("string.find"), and the hooks are re-armed so
 * that every further instruction fails too. */
void tpuci__spec_check_deadline(lua_State *L, const char *what);

/* Replaces the library functions that can run long in C without calling
 * back into Lua (string.find, match, gmatch, gsub; table.insert, remove,
 * move; load) by copies that check the deadline as they go
 * (core/spec/bounded.c). Called by tpuci__spec_sandbox(). */
void tpuci__spec_bounded(lua_State *L);

/* The string library's find, match, gmatch and gsub, replaced by the
 * matcher of core/spec/pattern.c (called by tpuci__spec_bounded()). */
void tpuci__spec_patterns(lua_State *L);

/* Pushes the contents of the file whose path, relative to the spec's
 * folder, is argument 1, refusing absolute paths, '..' and links that
 * leave the folder; messages start with fn ("tpuci.read_file"). Returns 1. */
int tpuci__spec_read_beside(lua_State *L, const char *fn);

/* tpuci.yaml(path): the YAML file beside the spec as a Lua value
 * (core/spec/yaml.c). */
int tpuci__spec_yaml(lua_State *L);

/* Pushes the `tpuci` helpers the prelude is given (env, read_file, where,
 * ...) as one table. */
void tpuci__spec_push_helpers(lua_State *L);

/* Turns the table at `decls` (what the prelude's finish() returned) into
 * images, topologies and instances in c->plan. `eval` is the index of the
 * prelude's eval function. Raises Lua errors; everything it allocates is
 * owned by the plan or the context at all times. */
void tpuci__spec_expand(lua_State *L, int decls, int eval);

/* Fields of the table at index t (expand.c): a string (NULL when not one;
 * the table keeps it alive), an integer, a number, a boolean (0 or 1).
 * They raise only Lua's memory errors. */
const char *tpuci__spec_get_str(lua_State *L, int t, const char *k);
lua_Integer tpuci__spec_get_int(lua_State *L, int t, const char *k);
double tpuci__spec_get_num(lua_State *L, int t, const char *k);
int tpuci__spec_get_bool(lua_State *L, int t, const char *k);

/* Copies the container options the prelude checked (the record its
 * container_spec() made, at stack index `t`) into *out, which must be
 * zeroed and owned by the plan (core/spec/expand_ctr.c). Raises only
 * Lua's memory errors; what it allocated is in *out by then. */
void tpuci__spec_expand_ctr(lua_State *L, int t, tpuci__ctr_opts_t *out);

/* The absolute, normalised form of path in b, a relative path being
 * taken against base (expand.c). */
void tpuci__spec_path_abs(tpuci__buf_t *b, const char *base, const char *path);

/* Copies the `hosts` declaration at stack index t (what the prelude's
 * hosts_spec() made) into *hs, owned by the plan and zeroed: ssh_config
 * and gcloud made absolute, a gcloud file read for its workers
 * (core/spec/expand_hosts.c). Raises a Lua error naming the declaration. */
void tpuci__spec_expand_hosts(lua_State *L, tpuci__hostset_t *hs, int t);

/* An `image` declaration (its table at t) into img (expand_image.c). */
void tpuci__spec_expand_image(lua_State *L, tpuci__spec_ctx_t *c, tpuci__image_t *img, int t);
/* A declared topology (the table at t) into tp, resolved against the TPU
 * catalogue (a catalogue type, a base, or custom numbers); a slice that
 * cannot be is a spec error (expand_topology.c). */
void tpuci__spec_expand_topology(lua_State *L, tpuci__spec_ctx_t *c, tpuci__topology_t *tp, int t);

/* A gcloud file's limit: a bigger one is not a describe output. */
#define TPUCI__GCLOUD_MAX_BYTES (4u << 20)

/* Raises "file:line: job 'x': hosts 'slice' (file:line) has 2 hosts, but
 * topology 'v4-32' has 4" when a job's hosts do not match its topology's
 * (1 without a topology); nothing when hostset is -1. */
void tpuci__spec_check_hosts(lua_State *L, const char *job, const char *where, int topology,
                             int hostset);

#endif /* TPUCI_SPEC_INTERNAL_H */
