-- expect: 66-readonly-not-boolean.lua:3: job 'x': mounts.data.readonly: expected true or false, got string
image "py" { ref = "python:3.11" }
job "x" { image = "py", run = "true", mounts = { data = { target = "/data", readonly = "yes" } } }
