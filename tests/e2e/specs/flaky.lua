-- Fails on its first attempt only (a marker file), so it turns flaky.
job "flaky" {
  run = [[ if [ -e "$OUT/marker" ]; then echo second try passes; else touch "$OUT/marker"; echo first try fails; exit 1; fi ]],
  env = { OUT = tpuci.env("OUT", "/tmp") },
  retries = { attempts = 3, on = { "failed" }, backoff = "100ms" },
}
