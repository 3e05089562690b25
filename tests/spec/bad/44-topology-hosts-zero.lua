-- expect: 44-topology-hosts-zero.lua:2: topology 't': hosts: must be between 1 and 256, got 0
topology "t" { hosts = 0 }
