-- compat.lua: a matrix read from a YAML file other tools share.
job "compat" {
  run    = "echo would test numpy $NUMPY on python $PYTHON",
  matrix = tpuci.yaml("versions.yaml").compat,
  env    = { NUMPY = "${matrix.numpy}", PYTHON = "${matrix.python}" },
}
