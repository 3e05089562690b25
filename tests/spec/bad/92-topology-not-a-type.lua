-- expect: 92-topology-not-a-type.lua:2: job 'tpu': topology 'v5e-8' is neither declared nor a TPU type (did you mean 'v5litepod-8'?)
job "tpu" { run = "pytest", topology = "v5e-8" }
