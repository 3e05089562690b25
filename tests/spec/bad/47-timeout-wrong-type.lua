-- expect: 47-timeout-wrong-type.lua:2: job 'x': timeout: expected a duration (a string like "20m" or a number of seconds), got table
job "x" { run = "true", timeout = { 20 } }
