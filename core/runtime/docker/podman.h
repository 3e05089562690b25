/* What differs when the engine behind DOCKER_HOST is Podman's
 * Docker-compatible service (`podman system service`): telling it apart
 * from GET /version (docs/docker.md, "Podman"). Pure. */
#ifndef TPUCI_DOCKER_PODMAN_H
#define TPUCI_DOCKER_PODMAN_H

#include <jansson.h>

/* Whether a GET /version answer is podman's: one of its Components is
 * named "Podman Engine". Then *major and *minor hold its version (0 when
 * unreadable). */
int tpuci__podman_detect(json_t *version, int *major, int *minor);

#endif /* TPUCI_DOCKER_PODMAN_H */
