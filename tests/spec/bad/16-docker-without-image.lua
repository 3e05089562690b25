-- expect: 16-docker-without-image.lua:2: job 'x': runtime: 'docker' needs an image
job "x" { run = "true", runtime = "docker" }
