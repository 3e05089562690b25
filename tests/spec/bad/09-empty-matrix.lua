-- expect: 09-empty-matrix.lua:2: job 'unit': matrix: empty
job "unit" { run = "pytest", matrix = {} }
