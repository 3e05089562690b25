-- expect: 34-env-key-not-string.lua:2: job 'x': env[1]: unexpected value without a name (write NAME = value)
job "x" { run = "true", env = { "A=1" } }
