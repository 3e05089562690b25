-- expect: 67-matrix-scalar.lua:2: job 'x': matrix.python: expected a list of values, got string (write python = { ... })
job "x" { run = "true", matrix = { python = "3.10" } }
