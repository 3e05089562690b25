-- expect: 12-run-and-cmd.lua:2: job 'x': 'run' and 'cmd' are exclusive
job "x" { run = "make", cmd = { "make" } }
