-- expect: 38-run-not-string.lua:2: job 'x': run: expected a string or a function, got number
job "x" { run = 42 }
