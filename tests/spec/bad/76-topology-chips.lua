-- expect: 76-topology-chips.lua:3: topology 'odd': chips_per_host: must be 1, 2, 4 or 8, got 3
-- A TPU VM has 1, 2, 4 or 8 chips.
topology "odd" { hosts = 2, chips_per_host = 3 }
