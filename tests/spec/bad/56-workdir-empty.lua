-- expect: 56-workdir-empty.lua:2: job 'x': workdir: must not be empty
job "x" { run = "true", workdir = "" }
