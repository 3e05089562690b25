-- expect: 112-per-chip-no-topology.lua:2: job 't': pytest.per_chip needs a topology: one process runs per chip of its host
job "t" { pytest = { per_chip = true } }
