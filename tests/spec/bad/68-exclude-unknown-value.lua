-- expect: 68-exclude-unknown-value.lua:2: job 'x': matrix.exclude[1].python: '3.9' is not a value of matrix.python ('3.10' or '3.11')
job "x" { run = "true", matrix = { python = { "3.10", "3.11" }, exclude = { { python = "3.9" } } } }
