image "xla" { ref = "tpuci-test/busybox:1" }
job "tpu" { image = "xla", run = "true", matrix = { n = { 1, 2 } },
  shm_size = "16g", ipc = "shareable", privileged = true,
  devices = { "/dev/accel*", "/dev/null:/dev/accel1:rwm", "/dev/zero:r" },
  cap_add = { "sys_admin" }, cap_drop = { "CAP_NET_RAW" },
  ulimits = { memlock = -1, nofile = { soft = 4096, hard = 8192 } },
  gpus = { count = 2, driver = "nvidia", capabilities = { "gpu", "utility" } },
  sysctls = { ["net.core.somaxconn"] = 1024 } }
job "ids" { image = "xla", run = "true", gpus = { "0", 1 }, runtime = "swarm" }
