-- expect: 40-matrix-duplicate-value.lua:2: job 'x': matrix.python[3]: duplicate value '3.10' (also at [1])
job "x" { run = "true", matrix = { python = { "3.10", "3.11", "3.10" } } }
