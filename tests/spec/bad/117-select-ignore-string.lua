-- expect: 117-select-ignore-string.lua:2: job 'u': pytest.select_ignore: expected a list of globs like { "docs/**" }, got string
job "u" { pytest = { args = { "tests" }, select = "affected", select_ignore = "docs" } }
