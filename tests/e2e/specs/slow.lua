-- Long jobs for cancellation tests; each records its pid.
job "slow" {
  matrix = { n = { 1, 2, 3, 4 } },
  run = [[ sleep 300 & echo $! > "$OUT/bg-${matrix.n}.pid"; wait ]],
  env = { OUT = tpuci.env("OUT", "/tmp") },
}
