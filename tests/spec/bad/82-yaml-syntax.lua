-- expect: 82-yaml-syntax.lua:3: tpuci.yaml: 82-yaml-versions.yaml:4:13: mapping values are not allowed in this context
-- A YAML file beside the spec with a syntax error: its line and column.
local versions = tpuci.yaml("82-yaml-versions.yaml")
job "unit" { run = "pytest", matrix = { python = versions.python.versions } }
