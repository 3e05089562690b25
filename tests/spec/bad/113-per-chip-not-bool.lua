-- expect: 113-per-chip-not-bool.lua:2: job 't': pytest.per_chip: expected true or false, got string
job "t" { pytest = { per_chip = "yes" } }
