-- expect: 114-expect-devices-no-topology.lua:3: job 'c': expect_devices: needs a topology (the devices it checks are the topology's)
-- A command job's device check, as a pytest job's, checks the topology's devices.
job "c" { run = "python3 train.py", expect_devices = "jax" }
