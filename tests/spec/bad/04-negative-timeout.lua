-- expect: 04-negative-timeout.lua:2: job 'unit': timeout: must not be negative, got -5
job "unit" { run = "pytest", timeout = -5 }
