-- expect: 93-privileged-on-swarm.lua:3: job 'tpu': privileged: not available with runtime 'swarm': a Swarm service cannot be privileged
image "xla" { ref = "tpuci-test/busybox:1" }
job "tpu" { image = "xla", runtime = "swarm", run = "true", privileged = true }
