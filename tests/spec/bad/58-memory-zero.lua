-- expect: 58-memory-zero.lua:3: job 'x': memory: must be more than 0
image "py" { ref = "python:3.11" }
job "x" { image = "py", run = "true", memory = 0 }
