-- expect: 116-select-mode-missing.lua:2: job 'u': pytest.select.mode: missing: "affected" or "all"
job "u" { pytest = { args = { "tests" }, select = { audit = 0.5 } } }
