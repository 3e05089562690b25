-- tests/pytest/quarantine.sh: a quarantined test, an expired entry.
job "q" { pytest = { python = "/usr/bin/python3", args = { "tests/test_q.py" } },
          workdir = tpuci.spec_dir, env = { MODE = tpuci.env("MODE", "") } }
