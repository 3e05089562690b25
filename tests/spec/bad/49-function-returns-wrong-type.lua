-- expect: 49-function-returns-wrong-type.lua:2: job 'x', instance 'x[n=1]': env: the function returned string, expected a table
job "x" {
  run = "true",
  matrix = { n = { 1, 2 } },
  env = function(inst) return "N=" .. inst.matrix.n end,
}
