-- expect: 95-ulimit-unknown.lua:2: job 'tpu': ulimits.memlok: unknown limit 'memlok', did you mean 'memlock'?
job "tpu" { image = "tpuci-test/busybox:1", run = "true", ulimits = { memlok = -1 } }
