-- expect: 61-reference-without-matrix.lua:2: job 'x': env.PY: '${matrix.python}' is used but the job has no matrix
job "x" { run = "true", env = { PY = "${matrix.python}" } }
