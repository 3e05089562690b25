-- expect: 02-unknown-key-no-suggestion.lua:3: job 'unit': frobnicate: unknown key (valid keys: name, run, cmd,
-- A key nothing resembles lists the valid ones.
job "unit" {
  run = "pytest",
  frobnicate = true,
}
