-- expect: 97-gpus-zero.lua:2: job 'train': gpus: must be between 1 and 1024 (or "all"), got 0
job "train" { image = "tpuci-test/busybox:1", run = "true", gpus = 0 }
