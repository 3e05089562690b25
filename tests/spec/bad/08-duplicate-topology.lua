-- expect: 08-duplicate-topology.lua:3: topology 'v4' already declared at 08-duplicate-topology.lua:2
topology "v4" { hosts = 2 }
topology "v4" { hosts = 4 }
