/* Error codes and their names. */
#include <uv.h>

#include "tpuci.h"
#include "base/util.h"

const char *tpuci_version(void) { return TPUCI_VERSION_STRING; }

const char *tpuci_strerror(int err) {
  switch (err) {
    case 0: return "success";
    case TPUCI_ESPEC: return "invalid spec";
    case TPUCI_EUSAGE: return "invalid argument";
    case TPUCI_ESTATE: return "not allowed in this state";
    case TPUCI_ENOMEM: return "out of memory";
    case TPUCI_EIO: return "i/o error";
    case TPUCI_EENGINE: return "container engine unusable";
    case TPUCI_EIMAGE: return "image missing";
    case TPUCI_ELIMIT: return "spec exceeded a load limit";
    case TPUCI_ENOSPACE: return "not enough disk space";
    case TPUCI_ENOMATCH: return "no instance matches";
    default: break;
  }
  if (err < 0 && err > TPUCI_EBASE) return uv_strerror(err);
  return "unknown error";
}

const char *tpuci_err_name(int err) {
  switch (err) {
    case 0: return "OK";
    case TPUCI_ESPEC: return "TPUCI_ESPEC";
    case TPUCI_EUSAGE: return "TPUCI_EUSAGE";
    case TPUCI_ESTATE: return "TPUCI_ESTATE";
    case TPUCI_ENOMEM: return "TPUCI_ENOMEM";
    case TPUCI_EIO: return "TPUCI_EIO";
    case TPUCI_EENGINE: return "TPUCI_EENGINE";
    case TPUCI_EIMAGE: return "TPUCI_EIMAGE";
    case TPUCI_ELIMIT: return "TPUCI_ELIMIT";
    case TPUCI_ENOSPACE: return "TPUCI_ENOSPACE";
    case TPUCI_ENOMATCH: return "TPUCI_ENOMATCH";
    default: break;
  }
  if (err < 0 && err > TPUCI_EBASE) return uv_err_name(err);
  return "UNKNOWN";
}

int tpuci_parse_duration(const char *text, uint64_t *out_ms) {
  if (text == NULL || out_ms == NULL) return TPUCI_EUSAGE;
  return tpuci__duration_parse(text, out_ms) == 0 ? 0 : TPUCI_EUSAGE;
}
