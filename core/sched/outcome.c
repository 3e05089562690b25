/* The outcome rules: what an attempt's end means, and an instance's
 * final outcome from its attempts'. Pure. */
#include "sched/scheduler.h"

tpuci_outcome_t tpuci__classify(const tpuci__exit_t *ex, int timed_out, int cancelled) {
  /* What tpuci did to the attempt wins over how it ended: a job killed
   * after its timeout exits 137 or 143, yet it timed out. */
  if (cancelled) return TPUCI_OUTCOME_CANCELLED;
  /* A worker taken away mid-run hangs its peers into the timeout. */
  if (ex->capacity == TPUCI_OUTCOME_PREEMPTED || ex->capacity == TPUCI_OUTCOME_NO_CAPACITY)
    return (tpuci_outcome_t) ex->capacity;
  if (timed_out) return TPUCI_OUTCOME_TIMEOUT;
  if (ex->infra) return TPUCI_OUTCOME_INFRA;
  if (ex->oom) return TPUCI_OUTCOME_OOM;
  if (ex->exit_code == 0 && ex->term_signal == 0) return TPUCI_OUTCOME_PASSED;
  return TPUCI_OUTCOME_FAILED;
}

tpuci_outcome_t tpuci__final_outcome(const tpuci_outcome_t *attempts, size_t n) {
  size_t i;
  int failed_before = 0;
  if (n == 0) return TPUCI_OUTCOME_CANCELLED;
  /* The machines' failures say nothing of the job: a pass after them is
   * a pass. */
  for (i = 0; i + 1 < n; i++)
    if (attempts[i] != TPUCI_OUTCOME_PASSED && attempts[i] != TPUCI_OUTCOME_CANCELLED &&
        attempts[i] != TPUCI_OUTCOME_PREEMPTED && attempts[i] != TPUCI_OUTCOME_NO_CAPACITY)
      failed_before = 1;
  if (attempts[n - 1] == TPUCI_OUTCOME_PASSED)
    return failed_before ? TPUCI_OUTCOME_FLAKY : TPUCI_OUTCOME_PASSED;
  return attempts[n - 1];
}
