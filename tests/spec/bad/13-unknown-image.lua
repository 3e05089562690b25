-- expect: 13-unknown-image.lua:4: job 'lint': image 'pyhton' is not declared (did you mean 'py'?)
image "py" { ref = "tpuci-test/python:1" }

job "lint" { image = "pyhton", run = "ruff check ." }
