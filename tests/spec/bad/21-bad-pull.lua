-- expect: 21-bad-pull.lua:2: image 'py': pull: unknown value 'alway', did you mean 'always'?
image "py" { ref = "python:3.11", pull = "alway" }
