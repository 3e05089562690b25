set(tpuci_spec_sources)
