-- One of each outcome the local runtime gives, for the HTML report test:
-- passes, a failure, a flaky job (fails once: a marker file in $OUT), a
-- timeout, and a job whose log and matrix value carry markup that must
-- come out as text.
job "ok" {
  matrix = { python = { "3.10", "3.11" } },
  run = "echo python ${matrix.python}; sleep 0.3",
}
job "bad" { run = "echo about to fail; sleep 0.2; echo broken >&2; exit 3" }
job "flaky" {
  run = [[ if [ -e "$OUT/marker" ]; then echo second try passes; else touch "$OUT/marker"; echo first try fails; exit 1; fi ]],
  env = { OUT = tpuci.env("OUT", "/tmp") },
  retries = { attempts = 3, on = { "failed" }, backoff = "100ms" },
}
job "slow" { run = "echo sleeping; sleep 30", timeout = "700ms", grace = "100ms" }
job "hostile" {
  matrix = { label = { "<i>x</i>&amp;" } },
  run = [[
    printf '%s\n' '<script>document.title="pwned"</script>' '<img src=x onerror="document.title=1">' '<b id="pwned">bold</b>' '</pre></details><h1 id="pwned-h1">escaped?</h1>'
    printf '\033[31mred text\033[0m and a bell \007 done\n'
    exit 4
  ]],
}
