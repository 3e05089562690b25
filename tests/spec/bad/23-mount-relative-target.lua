-- expect: 23-mount-relative-target.lua:3: job 'x': mounts["."]: the container path must be absolute, got 'src'
image "py" { ref = "python:3.11" }
job "x" { image = "py", run = "true", mounts = { ["."] = "src" } }
