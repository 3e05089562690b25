-- expect: 99-shm-with-ipc-host.lua:2: job 'tpu': shm_size: has no effect with ipc = "host"
job "tpu" { image = "tpuci-test/busybox:1", run = "true", shm_size = "16g", ipc = "host" }
