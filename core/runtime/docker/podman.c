/* Podman's Docker-compatible service: what differs (podman.h). */
#include "runtime/docker/podman.h"

#include <stdio.h>
#include <string.h>

int tpuci__podman_detect(json_t *version, int *major, int *minor) {
  json_t *comps = json_object_get(version, "Components");
  json_t *c;
  size_t i;
  *major = *minor = 0;
  json_array_foreach(comps, i, c) {
    const char *name = json_string_value(json_object_get(c, "Name"));
    const char *ver = json_string_value(json_object_get(c, "Version"));
    if (name == NULL || strcmp(name, "Podman Engine") != 0) continue;
    if (ver == NULL)
      ver = json_string_value(json_object_get(version, "Version"));
    if (ver != NULL && sscanf(ver, "%d.%d", major, minor) != 2)
      *major = *minor = 0;
    return 1;
  }
  return 0;
}
