/* The device check of an attempt (see devices.h). */
#include "kind/devices.h"
#include "kind/kind.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* core/kind/pytest/plugin/tpuci_devices.py and tpuci_command.py, embedded by
 * cmake/embed.cmake. */
extern const char tpuci__py_tpuci_devices[];
extern const char tpuci__py_tpuci_command[];

char *tpuci__devices_code(const char *then) {
  return tpuci__printf("%s%s", tpuci__py_tpuci_devices, then);
}

/* The interpreter the check asks the frameworks in: the command's own
 * when it is a Python (a venv's, a matrix's python3.11), else python3. */
static const char *tpuci__devices_python(const tpuci__instance_t *inst) {
  const char *cmd = inst->argv.len > 0 ? inst->argv.items[0] : "";
  const char *base = strrchr(cmd, '/');
  base = base != NULL ? base + 1 : cmd;
  return strncmp(base, "python", 6) == 0 ? cmd : "python3";
}

void tpuci__devices_command_argv(const tpuci__instance_t *inst, const char *devices,
                                 const char *results_path, tpuci__strv_t *out) {
  size_t i;
  tpuci__strv_push(out, tpuci__devices_python(inst));
  tpuci__strv_push(out, "-c");
  tpuci__strv_take(out, tpuci__devices_code(tpuci__py_tpuci_command));
  tpuci__strv_push(out, devices);
  tpuci__strv_push(out, results_path);
  for (i = 0; i < inst->argv.len; i++) tpuci__strv_push(out, inst->argv.items[i]);
}

char *tpuci__devices_mismatch(const char *results_dir) {
  /* The check's words: bounded. */
  return tpuci__results_first_string(results_dir, TPUCI__DEVICES_FILE, "mismatch", 512);
}
