/* What a run holds (ctx.h, struct tpuci_run_s): everything one
 * tpuci_run_start() made (or tpuci_load_run() read back), freed at once
 * when the run is (run_object.c). */
#include <stdlib.h>

#include "api/ctx.h"

void tpuci__run_state_free(tpuci__run_t *run) {
  size_t i, k;
  tpuci__quar_free(run);
  tpuci__cache_free(run);
  for (i = 0; i < run->nresults; i++) tpuci__instance_result_free(&run->results[i]);
  free(run->results);
  run->results = NULL;
  run->nresults = 0;
  tpuci__sched_free(run->sched);
  tpuci__strv_free(&run->held);
  run->hold = 0;
  run->sched = NULL;
  for (k = 0; k < TPUCI__NKINDS; k++) {
    if (run->kinds[k].run != NULL) tpuci__kinds[k].run_free(run->kinds[k].run);
    run->kinds[k].run = NULL;
  }
  free(run->nonfile);
  run->nonfile = NULL;
  for (i = 0; run->first && run->first[i]; i++) {
    tpuci__strv_free(run->first[i]);
    free(run->first[i]);
  }
  free(run->first);
  run->first = NULL;
  for (i = 0; run->steady && run->steady[i]; i++) {
    tpuci__strv_free(run->steady[i]);
    free(run->steady[i]);
  }
  free(run->steady);
  run->steady = NULL;
  json_decref(run->known);
  run->known = NULL;
  tpuci__rundir_close(&run->rd);
  if (run->report) json_decref(run->report);
  run->report = NULL;
  json_decref(run->recent);
  run->recent = NULL;
  run->ran = 0;
  tpuci__timings_free(&run->timings);
  tpuci__timings_init(&run->timings);
  free(run->timings_path);
  run->timings_path = NULL;
  tpuci__collections_free(&run->collections);
  free(run->collections_path);
  run->collections_path = NULL;
  tpuci__strv_free(&run->write_paths);
  tpuci__strv_free(&run->write_errors);
  free(run->summary_path);
  run->summary_path = NULL;
}
