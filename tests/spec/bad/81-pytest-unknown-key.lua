-- expect: 81-pytest-unknown-key.lua:3: job 'tpu': pytest.shard: unknown key, did you mean 'shards'?
image "py" { ref = "tpuci-test/python:1" }
job "tpu" { image = "py", pytest = { markers = "tpu", shard = 2 } }
