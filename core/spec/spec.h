/* core/spec/: loading a Lua spec into a plan. The sandboxed Lua state
 * with its time and memory caps (sandbox.c; library functions that loop
 * in C made to keep the time cap: pattern.c, bounded.c), the DSL prelude
 * (lua/prelude.lua, compiled in), reading the spec file (load.c), YAML
 * beside the spec (yaml.c) and the expansion of declarations into plan
 * instances (expand.c; a job kind's record is read by the kind's
 * loader, given in: plan/kind_spec.h). Lua lives only here and only
 * while loading. It may use core/plan/ and core/base/; only core/api/
 * calls it. */
#ifndef TPUCI_SPEC_H
#define TPUCI_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "plan/kind_spec.h"
#include "plan/plan.h"

/* The largest spec a load accepts, in bytes (docs/spec.md): far more than
 * any hand-written spec, small enough that reading one cannot exhaust
 * memory. Files the spec reads (tpuci.read_file, tpuci.yaml) are bounded
 * by the memory limit instead. */
#define TPUCI__SPEC_MAX_BYTES ((size_t) 4 * 1024 * 1024)

/* How a spec is loaded: its limits, the hardware it is for, and the job
 * kinds whose records a job may have. */
typedef struct {
  uint64_t timeout_ms; /* wall clock cap for running the spec */
  size_t memory_bytes; /* cap on the Lua state's memory */
  /* 1: every topology is real TPU hardware (emulate "real", whatever
   * the spec says: `tpuci run --real`), so the same spec runs emulated
   * on a laptop and real on a TPU VM. */
  int real;
  /* The kinds' loaders (plan/kind_spec.h), NULL-terminated: a job that
   * has a record under one's key is made that kind's, the first that
   * matches. core/api/ passes every kind's (tpuci__kind_specs(),
   * kind/kinds.h). NULL: none, every job is a command. */
  const tpuci__kind_spec_t *const *kinds;
} tpuci__spec_limits_t;

/* Runs `chunk` in a sandboxed Lua state and expands it into `plan`, which
 * must be freshly initialised. `chunkname` is used in messages ("spec.lua")
 * and `spec_dir` (absolute) resolves relative paths. A chunk longer than
 * TPUCI__SPEC_MAX_BYTES is refused; a UTF-8 byte order mark and a first
 * line starting with '#' ("#!/usr/bin/env tpuci") are skipped, keeping
 * line numbers. Every string of the plan is valid UTF-8 without a NUL
 * byte; a spec that would give another is refused. On error returns
 * TPUCI_ESPEC or TPUCI_ELIMIT with a one-line message in `err` that
 * starts with "file:line: " whenever a line is known; `plan` must still
 * be freed by the caller. */
int tpuci__spec_load(tpuci__plan_t *plan, const char *chunk, size_t len, const char *chunkname,
                     const char *spec_dir, const tpuci__spec_limits_t *limits, tpuci__err_t *err);

#endif /* TPUCI_SPEC_H */
