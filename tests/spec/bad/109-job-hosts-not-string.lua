-- expect: job 'x': hosts: expected a string, got number
job "x" { hosts = 3, run = "true" }
