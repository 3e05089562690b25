-- expect: 96-cap-unknown.lua:2: job 'tpu': cap_add[1]: unknown capability 'SYS_ADMN', did you mean 'SYS_ADMIN'?
job "tpu" { image = "tpuci-test/busybox:1", run = "true", cap_add = { "SYS_ADMN" } }
