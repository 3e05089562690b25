-- expect: 88-mount-target-not-utf8.lua:2: job 'j': mounts["."].target: not valid UTF-8
job "j" {
  image = "python:3.11", run = "true",
  mounts = { ["."] = { target = "/caf\xc3", readonly = true } },
}
