-- expect: 84-env-value-nul.lua:2: job 'j': env.TOKEN: contains a NUL byte (at position 4)
job "j" {
  run = "true",
  env = { TOKEN = "abc\0def" },
}
