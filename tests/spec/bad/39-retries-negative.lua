-- expect: 39-retries-negative.lua:2: job 'x': retries: must be between 0 and 99 (retries after the first attempt), got -1
job "x" { run = "true", retries = -1 }
