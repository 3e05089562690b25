-- ci.lua: the first spec. No image, so every job runs on this machine.
job "hello" { run = "echo hello from $(uname -s)" }

job "unit" {
  run     = "python3 -m pytest -q -m 'not slow' tests/test_core.py",
  timeout = "2m",
}

-- Fails on its first attempt (no .tried file yet), passes on the second.
job "flaky" {
  run = "if [ -e .tried ]; then echo passes now; else touch .tried; echo fails once; exit 1; fi",
  retries = { attempts = 3, on = { "failed" }, backoff = "500ms" },
}

-- Never finishes in time: stopped after 1s (SIGTERM, then SIGKILL after grace).
job "stuck" { run = "sleep 30", timeout = "1s", grace = "1s" }
