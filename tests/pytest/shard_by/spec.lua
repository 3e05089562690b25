-- Two files in two shards (tests/pytest/shard_by.sh): by file (the
-- default), and test by test.
local python = tpuci.env("TPUCI_PYTHON", "/usr/bin/python3")
local dir = tpuci.spec_dir
job "byfile" { workdir = dir, pytest = { python = python, args = { "tests/" }, shards = 2 } }
job "bytest" { workdir = dir, pytest = { python = python, args = { "tests/" }, shards = 2,
                                         shard_by = "test" } }
