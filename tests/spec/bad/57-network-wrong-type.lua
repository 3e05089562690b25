-- expect: 57-network-wrong-type.lua:3: job 'x': network: expected a string, got boolean
image "py" { ref = "python:3.11" }
job "x" { image = "py", run = "true", network = false }
