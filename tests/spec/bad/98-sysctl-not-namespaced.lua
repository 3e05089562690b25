-- expect: 98-sysctl-not-namespaced.lua:2: job 'tpu': sysctls["vm.max_map_count"]: a container may set only the sysctls of its own namespaces
job "tpu" { image = "tpuci-test/busybox:1", run = "true", sysctls = { ["vm.max_map_count"] = 262144 } }
