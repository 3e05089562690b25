-- Jobs that pass and fail, with a matrix.
job "ok" { run = "echo hello from ok" }
job "bad" { run = "echo about to fail; echo broken >&2; exit 3" }
job "unit" {
  matrix = { python = { "3.10", "3.11" } },
  cmd = { "sh", "-c", "echo python=$PY matrix=$TPUCI_MATRIX_PYTHON" },
  env = { PY = "${matrix.python}" },
}
