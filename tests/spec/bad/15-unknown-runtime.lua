-- expect: 15-unknown-runtime.lua:2: job 'x': runtime: unknown runtime 'dokcer', did you mean 'docker'?
job "x" { run = "true", runtime = "dokcer", image = "busybox:1" }
