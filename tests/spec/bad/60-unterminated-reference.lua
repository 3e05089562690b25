-- expect: 60-unterminated-reference.lua:2: job 'x': run: unterminated '${' in 'echo ${matrix.n'
job "x" { run = "echo ${matrix.n", matrix = { n = { 1 } } }
