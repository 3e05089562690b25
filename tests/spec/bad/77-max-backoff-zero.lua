-- expect: 77-max-backoff-zero.lua:2: job 'x': retries.max_backoff: must be more than 0
job "x" { run = "true", retries = { attempts = 100, factor = 2, max_backoff = 0 } }
