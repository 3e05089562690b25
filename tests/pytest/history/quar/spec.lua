-- tests/pytest/history.sh: a quarantine beside the spec.
job "quar" { pytest = { python = "/usr/bin/python3", args = { "t" } }, workdir = tpuci.spec_dir }
