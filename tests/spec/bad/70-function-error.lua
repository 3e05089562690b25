-- expect: 70-function-error.lua:5: attempt to concatenate a nil value (field 'pyhton')
job "x" {
  matrix = { python = { "3.10" } },
  run = function(inst)
    return "pytest --python " .. inst.matrix.pyhton
  end,
}
