-- expect: 71-image-name-with-colon.lua:2: image 'py:3': the name may only contain letters, digits and
image "py:3" { ref = "python:3" }
