-- tests/pytest/failnow.sh, with /usr/bin/python3 (python3-pytest): two
-- shards, one file each (shard_by = "file").
job "failnow" {
  pytest = { python = "/usr/bin/python3", args = { "t" }, shards = 2 },
  workdir = tpuci.spec_dir,
}
