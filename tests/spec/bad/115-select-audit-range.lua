-- expect: 115-select-audit-range.lua:2: job 'u': pytest.select.audit: expected a fraction from 0 to 1 (0.05: one test in 20 of those left out), got 2
job "u" { pytest = { args = { "tests" }, select = { mode = "affected", audit = 2 } } }
