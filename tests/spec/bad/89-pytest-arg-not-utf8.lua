-- expect: 89-pytest-arg-not-utf8.lua:2: job 'j': pytest.args[1]: not valid UTF-8
job "j" { pytest = { args = { "tests/caf\xe9.py" } } }
