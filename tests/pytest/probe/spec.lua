-- tests/pytest/probe.sh: the flake probe (--repeat, --test). Sharded and
-- with retries, which a probe leaves out.
job "p" { pytest = { python = "/usr/bin/python3", args = { "tests/test_p.py" }, shards = 2 },
          workdir = tpuci.spec_dir, retries = { attempts = 3, on = { "failed" } } }
