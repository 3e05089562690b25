-- tests/pytest/flaky_history.sh: the history across runs.
job "f" { pytest = { python = "/usr/bin/python3", args = { "tests/test_f.py" } },
          workdir = tpuci.spec_dir, env = { RUN_FILE = tpuci.env("RUN_FILE", "/nonexistent") } }
