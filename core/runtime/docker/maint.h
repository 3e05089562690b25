/* Docker Engine maintenance outside a run: `tpuci gc` and `tpuci doctor`.
 * The runtime driver itself is created through tpuci__runtime_docker_new()
 * (runtime.h). */
#ifndef TPUCI_DOCKER_H
#define TPUCI_DOCKER_H

#include "plan/plan.h"
#include "base/util.h"

/* Finds containers and networks labelled by tpuci (tpuci.run) whose run
 * is not alive any more, and removes them (unless dry_run). Appends one
 * human-readable line per object to `report`. Returns the number of
 * objects removed (with dry_run: that would be; >= 0) or a negative code with err filled (TPUCI_EENGINE
 * when the engine cannot be reached). Blocking: runs its own loop. */
int tpuci__docker_gc(int dry_run, tpuci__buf_t *report, tpuci__err_t *err);

/* Pre-flight checks, printed by `tpuci doctor`: the engine answers (and
 * where tpuci looked), its version and API version, the images `plan`
 * references (plan may be NULL) are present or pullable, disk space under
 * the engine's data root, leftovers of earlier runs. Appends lines
 * "ok   ...", "warn ...", "FAIL ..." to `report`. Returns 0 when nothing
 * failed, else the first failure's code with err filled. Blocking. */
int tpuci__docker_doctor(const tpuci__plan_t *plan, tpuci__buf_t *report,
                         tpuci__err_t *err);

#endif /* TPUCI_DOCKER_H */
