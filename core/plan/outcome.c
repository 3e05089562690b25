/* The plan's vocabulary of outcomes (the names retries.on and reports
 * use), the retry policy arithmetic and the slots an instance takes. */
#include <string.h>

#include "plan/plan.h"

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
    case TPUCI_OUTCOME_CACHED: return "cached";
    case TPUCI_OUTCOME_ORDER_DEPENDENT: return "order-dependent";
    case TPUCI_OUTCOME_PREEMPTED: return "preempted";
    case TPUCI_OUTCOME_NO_CAPACITY: return "no-capacity";
    case TPUCI_OUTCOME_NOT_APPLICABLE: return "not-applicable";
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

int tpuci__plan_image_used(const tpuci__plan_t *p, size_t k, tpuci__runtime_kind_t kind) {
  size_t i;
  for (i = 0; i < p->ninstances; i++)
    if (p->instances[i].selected && p->instances[i].image == (int) k &&
        p->instances[i].runtime == kind)
      return 1;
  return 0;
}

int tpuci__plan_image_built_here(const tpuci__plan_t *p, size_t k) {
  size_t i;
  for (i = 0; i < p->ninstances; i++)
    if (p->instances[i].selected && p->instances[i].image == (int) k &&
        tpuci__runtime_props(p->instances[i].runtime)->builds_images)
      return 1;
  return 0;
}

int tpuci__plan_hosts(const tpuci__plan_t *p, const tpuci__instance_t *inst) {
  if (inst->topology < 0 || (size_t) inst->topology >= p->ntopologies) return 1;
  return p->topologies[inst->topology].hosts > 1 ? p->topologies[inst->topology].hosts : 1;
}
