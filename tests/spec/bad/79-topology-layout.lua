-- expect: 79-topology-layout.lua:2: topology 'v6e-8': v6e-8 has no layout '4x2'
topology "v6e-8" { layout = "4x2" }
