/* The results cache (docs/cache.md): passed results of job instances,
 * one file per input key (runtime/inputs.h) in the state folder,
 * `<state_dir>/cache/<key>.json`.
 *
 * An entry says which run passed, when, how long it took, its log, and
 * for a pytest instance each test's final result (passed, skipped or
 * xfail: a failing test is never stored, and an entry that holds one is
 * refused). Only a pass is stored: not flaky, no flaky or quarantined
 * test, and never a failure, timeout, oom, infra or cancelled result.
 *
 * Safe for runs that share the folder: each entry is written to a file
 * of its own name and renamed into place (a killed run leaves at most a
 * temporary file, removed later), read whole, and one that cannot be read
 * or parsed is a miss with a warning, never an error. Entries are not
 * fsync()ed (a plan of 10,000 instances would wait on 10,000 flushes):
 * a machine that loses power may leave an empty entry, which is such a
 * miss. Bounded: at most
 * TPUCI__CACHE_MAX_ENTRIES entries and TPUCI__CACHE_MAX_BYTES bytes; the
 * least recently used go first (a hit refreshes an entry's time). */
#ifndef TPUCI_REPORT_CACHE_H
#define TPUCI_REPORT_CACHE_H

#include <jansson.h>
#include <stdint.h>

#include "plan/plan.h"
#include "kind/pytest/junit.h"
#include "sched/scheduler.h"
#include "base/util.h"

#define TPUCI__CACHE_DIR "cache"
#define TPUCI__CACHE_FORMAT 1
#define TPUCI__CACHE_MAX_ENTRIES 10000
#define TPUCI__CACHE_MAX_BYTES ((uint64_t) 256 << 20)
/* One entry's file, and its tests: a bigger entry is neither stored nor
 * read (a miss with a warning). Restoring is not streamed: the entry is
 * parsed whole and its tests become a history (then the reports list
 * them), so the caps bound what a hit costs: a run taking an entry of
 * 250,000 tests (65 MB) peaked at 943 MB, one of 50,000 (13 MB) at 196
 * MB. A suite that big is sharded: each shard's instance has an entry
 * of its own. */
#define TPUCI__CACHE_ENTRY_MAX ((size_t) 16 << 20)
#define TPUCI__CACHE_TESTS_MAX 50000
#define TPUCI__CACHE_TESTS_MAX_TEXT "50000"

/* Whether instance result r may be stored: passed on its first attempt's
 * terms (final outcome passed, not flaky) and, for pytest, every test
 * passed, skipped or xfailed with no failed run before. */
int tpuci__cache_storable(const tpuci__instance_result_t *r);

/* The entry of a finished instance (new reference): format, key,
 * instance, run, stored_ms, start_ms, duration_ms (the sum of its
 * attempts), log, tests. */
json_t *tpuci__cache_entry(const tpuci__instance_t *inst, const tpuci__instance_result_t *r,
                           const char *key, const char *run_id);

/* Reads the entry of `key` for instance `name`: 1 and *out (new
 * reference) on a hit, 0 on a miss, -1 for an entry that is there but
 * unusable (why in err: the caller warns and runs the instance). With
 * `touch`, a hit refreshes the entry's time (it is used). An entry is
 * text someone else may have written (a CI cache restored from another
 * branch): its `log` is kept only when it is a regular file inside
 * <state_dir>/runs/<run>/, <run> the entry's own run of the usual form
 * (links and ".." resolved first); otherwise the hit has no log. Every
 * other field is untrusted text for whoever prints it
 * (tpuci__safe). */
int tpuci__cache_get(const char *state_dir, const char *key, const char *name, int touch,
                     json_t **out, tpuci__err_t *err);

/* Writes the entry of `key`. 0, or a negative code with err (TPUCI_ELIMIT
 * for an entry over TPUCI__CACHE_TESTS_MAX tests or
 * TPUCI__CACHE_ENTRY_MAX bytes: not stored). */
int tpuci__cache_put(const char *state_dir, const char *key, const json_t *entry,
                     tpuci__err_t *err);

/* Whether instance result r says a stored pass under its key is wrong:
 * an attempt failed, timed out or ran out of memory, or it was flaky
 * or order-dependent (infra and cancelled say nothing about the tests). */
int tpuci__cache_refutes(const tpuci__instance_result_t *r);

/* Removes the entry of `key`: 0, 1 when there was none, or a negative
 * code with err. */
int tpuci__cache_remove(const char *state_dir, const char *key, tpuci__err_t *err);

/* Removes the least recently used entries beyond the bounds, and
 * temporary files older than an hour. Returns how many entries went. */
size_t tpuci__cache_trim(const char *state_dir, size_t max_entries, uint64_t max_bytes);

/* Fills r (zeroed) from an entry that tpuci__cache_get() returned: one
 * attempt, outcome cached, taking no time, its cause naming the run the
 * pass came from; for a pytest instance a history with that pass's
 * tests. */
void tpuci__cache_restore(const json_t *entry, const tpuci__instance_t *inst,
                          tpuci__instance_result_t *r);

#endif /* TPUCI_REPORT_CACHE_H */
