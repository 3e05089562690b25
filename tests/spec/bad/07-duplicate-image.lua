-- expect: 07-duplicate-image.lua:3: image 'py' already declared at 07-duplicate-image.lua:2
image "py" { ref = "python:3.11" }
image "py" { ref = "python:3.12" }
