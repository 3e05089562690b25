# The Docker Engine runtime driver and engine maintenance (gc, doctor).
set(tpuci_docker_sources
  core/docker/host.c
  core/docker/demux.c
  core/docker/http.c
  core/docker/engine.c
  core/docker/container.c
  core/docker/gang.c
  core/docker/driver.c
  core/docker/maint.c)
