-- expect: 22-bad-emulate.lua:2: topology 't': emulate: unknown value 'tpu' (use 'pjrt', 'xrt', 'jax', 'none' or 'real')
topology "t" { hosts = 1, emulate = "tpu" }
