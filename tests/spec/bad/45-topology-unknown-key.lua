-- expect: 45-topology-unknown-key.lua:2: topology 't': chips: unknown key
topology "t" { hosts = 2, chips = 4 }
