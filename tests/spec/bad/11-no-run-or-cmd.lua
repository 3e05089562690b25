-- expect: 11-no-run-or-cmd.lua:2: job 'x': needs 'run', 'cmd' or 'pytest'
job "x" { timeout = "1m" }
