job "a" { run = "true" }
job "b" { run = "echo b" }
