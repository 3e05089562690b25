-- expect: 36-env-value-table.lua:2: job 'x': env.A: expected a string, number or boolean, got table
job "x" { run = "true", env = { A = { 1 } } }
