-- expect: 48-mount-duplicate-target.lua:3: job 'x': mounts.b: '/src' is already mounted from mounts.a
image "py" { ref = "python:3.11" }
job "x" { image = "py", run = "true", mounts = { a = "/src", b = "/src" } }
