-- expect: 74-retries-wrong-type.lua:2: job 'x': retries: expected a number or a table, got string
job "x" { run = "true", retries = "3" }
