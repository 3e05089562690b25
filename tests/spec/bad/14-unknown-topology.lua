-- expect: 14-unknown-topology.lua:3: job 'tpu': topology 'v4-61' is neither declared nor a TPU type (did you mean 'v4-16'?)
topology "v4-16" { hosts = 2, chips_per_host = 4 }
job "tpu" { run = "pytest", topology = "v4-61" }
