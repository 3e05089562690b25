-- expect: 111-per-chip-shards.lua:3: job 't': pytest.per_chip: per_chip splits the tests over the host's chips; leave 'shards' out
topology "v5litepod-4" {}
job "t" { topology = "v5litepod-4", pytest = { per_chip = true, shards = 2 } }
