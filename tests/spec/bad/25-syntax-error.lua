-- expect: 25-syntax-error.lua:4: '}' expected (to close '{' at line 2) near 'timeout'
job "x" {
  run = "true"
  timeout = "1m",
}
