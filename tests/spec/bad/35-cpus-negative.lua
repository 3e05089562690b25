-- expect: 35-cpus-negative.lua:3: job 'x': cpus: must be a positive number of CPUs, got -2
image "py" { ref = "python:3.11" }
job "x" { image = "py", run = "true", cpus = -2 }
