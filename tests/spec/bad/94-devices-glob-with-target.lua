-- expect: 94-devices-glob-with-target.lua:2: job 'tpu': devices[2]: a glob takes no container path
job "tpu" { image = "tpuci-test/busybox:1", run = "true",
  devices = { "/dev/null:/dev/accel0", "/dev/accel*:/dev/accel" } }
