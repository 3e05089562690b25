-- expect: 43-image-no-ref.lua:2: image 'py': ref: missing
image "py" { pull = "never" }
