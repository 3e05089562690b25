-- expect: 80-pytest-and-cmd.lua:2: job 'tpu': 'pytest' and 'cmd' are exclusive
job "tpu" { pytest = { markers = "tpu" }, cmd = { "pytest" } }
