-- expect: 75-positional-value.lua:2: job 'x': [1]: unexpected value without a key (write key = value)
job "x" { "make test" }
