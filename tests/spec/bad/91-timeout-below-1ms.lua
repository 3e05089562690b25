-- expect: 91-timeout-below-1ms.lua:2: job 'unit': timeout: less than 1ms, got 0.0004 (write 0 for none)
job "unit" { run = "pytest", timeout = 0.0004 }
