/* `tpuci doctor`'s probes in containers: on each network mode the
 * selected docker instances use, containers that prove the mode works (on
 * a bridge, one reaches another by name and the gateway); and in each
 * image of a pytest job, that its python imports pytest; docs/docker.md.
 * Only maint.c (the doctor) includes this. */
#ifndef TPUCI_RUNTIME_DOCKER_NETPROBE_H
#define TPUCI_RUNTIME_DOCKER_NETPROBE_H

#include "runtime/engine/podman.h"
#include "runtime/engine/sync.h"
#include "plan/plan.h"

/* What the doctor's probes run with: its engine session `s`, the plan,
 * which images the engine has (present[i] for image i), podman's limits
 * (tpuci__podman_limits_t), and `report`, where each probe says how it
 * went (ok / warn / FAIL lines). */
typedef struct {
  tpuci__sync_t *s;
  const tpuci__plan_t *plan;
  const int *present;
  const tpuci__podman_limits_t *limits;
  tpuci__buf_t *report;
} tpuci__probe_ctx_t;

/* Probes every mode, saying each on the report. `first` is the doctor's
 * first failure so far: err is only filled when there is none yet.
 * Returns the new first failure (TPUCI_EENGINE for a mode that
 * failed). */
int tpuci__docker_probe_networks(const tpuci__probe_ctx_t *cx, int first, tpuci__err_t *err);

/* `python -c "import pytest"` in each present image of the selected
 * docker pytest instances, with each interpreter they name: an image
 * whose pytest jobs would end infra (no interpreter, no pytest) is a
 * FAIL line and TPUCI_EIMAGE. Same `first` and `err` as above. */
int tpuci__docker_probe_pytest(const tpuci__probe_ctx_t *cx, int first, tpuci__err_t *err);

#endif /* TPUCI_RUNTIME_DOCKER_NETPROBE_H */
