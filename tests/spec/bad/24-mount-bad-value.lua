-- expect: 24-mount-bad-value.lua:3: job 'x': mounts.data: expected a container path or a table { target = ..., readonly = ... }, got number
image "py" { ref = "python:3.11" }
job "x" { image = "py", run = "true", mounts = { data = 1 } }
