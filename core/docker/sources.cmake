set(tpuci_docker_sources)
