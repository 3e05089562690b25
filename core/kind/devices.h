/* The device check of an attempt (docs/pytest.md, "The device check"):
 * whether the frameworks see the devices of the job's topology, asked in
 * the attempt's own container or process before anything else runs. Its
 * Python (core/kind/pytest/plugin/tpuci_devices.py, embedded at build time by
 * cmake/embed.cmake) goes before pytest's bootstrap in a pytest attempt's
 * -c, and before tpuci_command.py in a command job's, which then execs
 * the command; either writes its verdict into the attempt's results
 * folder, read back here. What it expects is plan/host_env.h's
 * (tpuci__devices_arg). */
#ifndef TPUCI_KIND_DEVICES_H
#define TPUCI_KIND_DEVICES_H

#include "base/util.h"
#include "plan/plan.h"

/* The check's verdict, in a host's results folder: {"expected": DEVICES,
 * "seen": {FRAMEWORK: [COUNT, PLATFORM]}, "mismatch": TEXT or null}. */
#define TPUCI__DEVICES_FILE "devices.json"

/* The code of a -c that checks the devices, then runs `then` (pytest's
 * bootstrap), in one namespace. A new string. */
char *tpuci__devices_code(const char *then);

/* A command job's attempt that checks the devices first: PYTHON -c CODE
 * DEVICES RESULTS and the instance's command, appended to `out`
 * (NULL-terminated). DEVICES is tpuci__devices_arg()'s, RESULTS the
 * results folder as the process sees it; PYTHON the command's own
 * interpreter when it is one (cmd = { "python3.11", "train.py" }), else
 * python3. On a match the process becomes the command (exec); on a
 * mismatch the command does not run and the process exits 75. */
void tpuci__devices_command_argv(const tpuci__instance_t *inst, const char *devices,
                                 const char *results_path, tpuci__strv_t *out);

/* The mismatch the check wrote into TPUCI__DEVICES_FILE in `results_dir`
 * (or a gang host's worker-<i> folder), host 0 first, as a new string
 * ("jax sees 8 cpu devices, expected 4 TPU chips on worker-0"); NULL
 * when no host said one. */
char *tpuci__devices_mismatch(const char *results_dir);

#endif /* TPUCI_KIND_DEVICES_H */
