/* What a job kind gives the spec loader: how the record a job has for
 * the kind (`pytest = { ... }`, as lua/prelude.lua checked and made it)
 * becomes each of the job's instances' own part of the plan (its
 * kind_config, which plan.h's tpuci__kind_config_t frees, copies and
 * shows). core/spec/ calls these for the kinds core/api/ hands it
 * (kind/kinds.h's rows, tpuci__kind_specs()) and names no kind; a kind's
 * folder fills them. Declared here, below both, as plan.h declares what
 * the plan does with that part: core/spec/ may not include core/kind/.
 *
 * The plan runs no Lua: this header names Lua's state only because the
 * loader calls these while the spec runs. Each may raise a Lua error (a
 * spec error, or Lua's memory error), so whatever it allocates must be
 * the plan's at once (spec/expand.c: an error never leaks). */
#ifndef TPUCI_PLAN_KIND_SPEC_H
#define TPUCI_PLAN_KIND_SPEC_H

#include "plan/plan.h"

struct lua_State;

/* The template at stack index `idx` of a job's record (a string, or the
 * prelude's list of literal strings and 1-based matrix key indexes)
 * rendered with the matrix combination of the instance being made. A
 * new string. */
typedef char *(*tpuci__spec_render_t)(struct lua_State *L, int idx);

/* How a kind's loader reads its record: spec/expand.c's readers, so that
 * no kind keeps its own. The field `k` of the table at stack index `t`:
 * a string (NULL when not one; the table keeps it alive), an integer (0
 * when not one), a boolean (0 or 1); and a template rendered (above).
 * None raises but Lua's memory error. */
typedef struct {
  const char *(*str)(struct lua_State *L, int t, const char *k);
  long long (*integer)(struct lua_State *L, int t, const char *k);
  int (*boolean)(struct lua_State *L, int t, const char *k);
  tpuci__spec_render_t render;
} tpuci__spec_reader_t;

typedef struct {
  const char *key; /* the job's key that holds the record: "pytest" */
  /* What its instances hold: the loader sets each one's `kind` to it
   * before load() sets its kind_config. */
  const tpuci__kind_config_t *config;
  /* Once per job that has the record (at stack index `rec`), before its
   * instances are made: how many parts each matrix combination is split
   * into, each an instance with "shard" = "i/N" after the job's matrix
   * keys; 0: not split. `tp` is the job's topology (NULL: none), `mt`
   * its matrix (maybe nil), `job` and `where` what its messages start
   * with. NULL: never split. */
  int (*parts)(struct lua_State *L, const tpuci__spec_reader_t *read, int rec, const char *job,
               const char *where, const tpuci__topology_t *tp, int mt);
  /* Per instance, once its command and environment are set: sets
   * in->kind_config (first, before any call that may raise) and the
   * instance's fields that its kind sets (plan.h) from the record,
   * `parts` being what parts() said, and adds what the instance's
   * environment gets unless the job set it. */
  void (*load)(struct lua_State *L, const tpuci__spec_reader_t *read, int rec,
               tpuci__instance_t *in, int parts);
} tpuci__kind_spec_t;

#endif /* TPUCI_PLAN_KIND_SPEC_H */
