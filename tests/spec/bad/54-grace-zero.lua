-- expect: 54-grace-zero.lua:2: job 'x': grace: must be more than 0
job "x" { run = "true", grace = "0s" }
