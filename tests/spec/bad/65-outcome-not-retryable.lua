-- expect: 65-outcome-not-retryable.lua:2: job 'x': retries.on[1]: 'passed' cannot be retried (use 'failed', 'timeout', 'oom' or 'infra')
job "x" { run = "true", retries = { attempts = 2, on = { "passed" } } }
