/* Outcome names and the retry policy arithmetic. */
#include <string.h>

#include "plan/plan.h"
#include "sched/scheduler.h"

const char *tpuci_outcome_name(tpuci_outcome_t o) {
  switch (o) {
    case TPUCI_OUTCOME_NONE: return "none";
    case TPUCI_OUTCOME_PASSED: return "passed";
    case TPUCI_OUTCOME_FAILED: return "failed";
    case TPUCI_OUTCOME_TIMEOUT: return "timeout";
    case TPUCI_OUTCOME_OOM: return "oom";
    case TPUCI_OUTCOME_INFRA: return "infra";
    case TPUCI_OUTCOME_CANCELLED: return "cancelled";
    case TPUCI_OUTCOME_FLAKY: return "flaky";
    default: return "unknown";
  }
}

int tpuci__outcome_parse(const char *name) {
  int o;
  for (o = 0; o < TPUCI_OUTCOME__COUNT; o++)
    if (strcmp(name, tpuci_outcome_name((tpuci_outcome_t) o)) == 0) return o;
  return -1;
}

/* No wait is longer than a day, whatever the policy says. */
#define TPUCI__MAX_DELAY_MS (24.0 * 3600 * 1000)

uint64_t tpuci__retry_delay(const tpuci__retry_t *r, int next) {
  double cap = r->max_backoff_ms ? (double) r->max_backoff_ms : TPUCI__MAX_DELAY_MS;
  double d = (double) r->backoff_ms;
  int i;
  if (cap > TPUCI__MAX_DELAY_MS) cap = TPUCI__MAX_DELAY_MS;
  /* A factor of 1 (or less) is a constant delay. */
  for (i = 2; i < next && d < cap && r->factor > 1.0; i++) d *= r->factor;
  return (uint64_t) (d > cap ? cap : d);
}

int tpuci__retry_wants(const tpuci__retry_t *r, int outcome) {
  if (outcome <= TPUCI_OUTCOME_PASSED || outcome >= 32) return 0;
  return (r->on >> outcome) & 1u;
}

tpuci_outcome_t tpuci__classify(const tpuci__exit_t *ex, int timed_out,
                                int cancelled) {
  /* What tpuci did to the attempt wins over how it ended: a job killed
   * after its timeout exits 137 or 143, yet it timed out. */
  if (cancelled) return TPUCI_OUTCOME_CANCELLED;
  if (timed_out) return TPUCI_OUTCOME_TIMEOUT;
  if (ex->infra) return TPUCI_OUTCOME_INFRA;
  if (ex->oom) return TPUCI_OUTCOME_OOM;
  if (ex->exit_code == 0 && ex->term_signal == 0) return TPUCI_OUTCOME_PASSED;
  return TPUCI_OUTCOME_FAILED;
}

tpuci_outcome_t tpuci__final_outcome(const tpuci_outcome_t *attempts,
                                     size_t n) {
  size_t i;
  int failed_before = 0;
  if (n == 0) return TPUCI_OUTCOME_CANCELLED;
  for (i = 0; i + 1 < n; i++)
    if (attempts[i] != TPUCI_OUTCOME_PASSED &&
        attempts[i] != TPUCI_OUTCOME_CANCELLED)
      failed_before = 1;
  if (attempts[n - 1] == TPUCI_OUTCOME_PASSED)
    return failed_before ? TPUCI_OUTCOME_FLAKY : TPUCI_OUTCOME_PASSED;
  return attempts[n - 1];
}

int tpuci__plan_hosts(const tpuci__plan_t *p, const tpuci__instance_t *inst) {
  if (inst->topology < 0 || (size_t) inst->topology >= p->ntopologies) return 1;
  return p->topologies[inst->topology].hosts > 1 ? p->topologies[inst->topology].hosts : 1;
}
