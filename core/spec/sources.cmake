# The spec loader: the sandboxed Lua state, the loader, and the expansion
# of declarations into the plan (the DSL itself is lua/prelude.lua).
set(tpuci_spec_sources
  core/spec/sandbox.c
  core/spec/load.c
  core/spec/expand.c
  core/spec/yaml.c)
