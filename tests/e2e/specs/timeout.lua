-- A job that starts a process tree and ignores SIGTERM, past its timeout.
job "tree" {
  run = [[
    sleep 300 & echo $! > "$OUT/child.pid"
    sh -c 'trap "" TERM; sleep 300 & echo $! > "$OUT/grandchild.pid"; wait' &
    trap '' TERM
    wait
  ]],
  env = { OUT = tpuci.env("OUT", "/tmp") },
  timeout = "1s",
  grace = "500ms",
}
