---@meta tpuci
-- LuaLS (lua-language-server) annotations for tpuci specs: completion,
-- hover docs and type checks for `image`, `topology`, `job`, `hosts` and `tpuci`.
-- This file is for editors only; tpuci never loads it (the DSL itself is
-- lua/prelude.lua, compiled into the binary). Point the language server at
-- this folder, e.g. in a .luarc.json beside your spec:
--
--   { "runtime.version": "Lua 5.4",
--     "workspace.library": ["/path/to/tpuci/lua"] }
--
-- docs/spec.md is the reference; tests/docs/luals.sh checks that every
-- key the prelude accepts (JOB_KEYS, PYTEST_KEYS, RETRY_KEYS, MOUNT_KEYS,
-- ULIMIT_KEYS, GPUS_KEYS, IMAGE_KEYS, TOPOLOGY_KEYS, the enums and the
-- `tpuci` table) is here.

------------------------------------------------------------------------
-- Scalar types

---A duration: a string of numbers with units, largest first, each unit at
---most once (`"500ms"`, `"90s"`, `"1.5s"`, `"20m"`, `"1h30m"`, `"2d"`;
---units `ms`, `s`, `m`, `h`, `d`), or a number of seconds (`90`, `0.5`).
---@alias tpuci.Duration string|number

---A size: a number with an optional unit, case-insensitive (`"512m"`,
---`"2g"`, `"1.5GiB"`, `"10k"`; k/kb/kib are all 1024), or a number of bytes.
---@alias tpuci.Size string|integer

---A value that becomes a string: numbers print as integers when whole
---(`2.0` → `"2"`), booleans as `"true"`/`"false"`.
---@alias tpuci.Scalar string|number|boolean

---When to pull an image.
---@alias tpuci.Pull
---| "missing" # pull only if the image is not present (the default)
---| "always" # pull before every run (a failed pull falls back to the local copy, with a warning)
---| "never" # never pull: a missing image is an error

---Which CPU emulation switches each emulated host gets (docs/topology.md).
---@alias tpuci.Emulate
---| "pjrt" # torch_xla >= 2.0: PJRT_DEVICE=CPU, CPU_NUM_DEVICES (the default)
---| "xrt" # torch_xla <= 2.0: XRT_DEVICE_MAP, XRT_WORKERS, CPU_NUM_DEVICES
---| "jax" # JAX_PLATFORMS=cpu, XLA_FLAGS device count, JAX coordinator variables
---| "none" # only the TPU VM variables and the torch.distributed rendezvous
---| "real" # real TPU hardware: the host's own TPU environment, only the rendezvous from tpuci (as `tpuci run --real`)

---Where an attempt runs.
---@alias tpuci.Runtime
---| "docker" # in a container of the job's image (the default when the job has an image)
---| "local" # a process on this machine, in its own process group (the default otherwise)
---| "swarm" # a Docker Swarm service per host, placed where its cpus and memory fit (docs/swarm.md)
---| "ssh" # each host on a worker of the job's `hosts`, over the system's ssh, in a container there with an `image` (implied by `hosts = ...`; docs/ssh.md)

---An outcome that can be retried.
---@alias tpuci.RetryOutcome
---| "failed" # a non-zero exit status
---| "timeout" # stopped after the job's timeout
---| "oom" # killed for memory
---| "infra" # the engine failed (create, start, wait refused, socket gone)

------------------------------------------------------------------------
-- image

---`image "NAME" { ref = ..., pull = ... }`. Image names use letters,
---digits and `_ . - + @` (no `:` or `/`, which mark a literal reference).
---@class (exact) tpuci.ImageSpec
---The engine's image reference, e.g. `"gcr.io/tpu-pytorch/xla:r2.1"` (required
---without `build`; no spaces). A built image is tagged with it (default
---`"tpuci-build/<name>"`).
---@field ref? string
---When to pull: `"missing"` (default), `"always"` or `"never"`; not with `build`.
---@field pull? tpuci.Pull
---Built by the engine at the run's start, as compose's `build:`: a folder
---(relative to the spec's), or its parts.
---@field build? string|tpuci.ImageBuild

---`build = { context = ".", dockerfile = "Dockerfile.test", args = { PY = "3.11" } }`.
---@class (exact) tpuci.ImageBuild
---The build context, relative to the spec's folder (default `"."`).
---@field context? string
---The Dockerfile, relative to the context (default `"Dockerfile"`).
---@field dockerfile? string
---Build arguments (`ARG NAME` in the Dockerfile).
---@field args? table<string, string|number|boolean>
---The stage of a multi-stage Dockerfile to build.
---@field target? string

---`image { name = "NAME", ref = ..., pull = ... }`.
---@class (exact) tpuci.NamedImageSpec: tpuci.ImageSpec
---The image's name (only in this form).
---@field name string

------------------------------------------------------------------------
-- topology

---`topology "NAME" { ... }`: an emulated TPU slice. A catalogue type name
---(`"v4-16"`, `"v5litepod-8"`) takes its numbers from the catalogue (any
---number given must match); a name with `base` starts from the base's;
---any other name is a custom slice. Names use letters, digits and `_ . -`.
---@class (exact) tpuci.TopologySpec
---Which CPU emulation switches each host gets (default `"pjrt"`).
---@field emulate? tpuci.Emulate
---A catalogue type: a slice of that type's generation, with any of the numbers below changed.
---@field base? string
---`"HOSTSxCHIPS"`: picks one layout of a catalogue type that has two (`v5litepod-8`, `v6e-8`).
---@field layout? string
---Emulated hosts, 1..256 (one container each, started as a gang). Default: from the type, else 1.
---@field hosts? integer
---Chips per host: 1, 2, 4 or 8. Default: from the type, else 1.
---@field chips_per_host? 1|2|4|8
---TensorCores per chip: 1 or 2. Default: from the type, else 1.
---@field cores_per_chip? 1|2

---`topology { name = "NAME", ... }`.
---@class (exact) tpuci.NamedTopologySpec: tpuci.TopologySpec
---The topology's name (only in this form).
---@field name string

------------------------------------------------------------------------
-- hosts

---`hosts "NAME" { "root@10.0.0.2", "10.0.0.3:2222", ssh_config = ... }` or
---`hosts "NAME" { gcloud = "tpu.json", user = "me" }`: the workers of a
---slice, in worker order, reached with the system's `ssh` (docs/ssh.md).
---List entries are `"[user@]host[:port]"` (`"[v6addr]:port"` for IPv6).
---@class (exact) tpuci.HostsSpec
---An ssh config file for `ssh -F` (relative to the spec's folder, or absolute); default: ssh's own (`~/.ssh/config` of the user's password-database home).
---@field ssh_config? string
---A `gcloud compute tpus tpu-vm describe NAME --zone ZONE --format=json` file (relative to the spec's folder, or absolute): the workers are its `networkEndpoints[].ipAddress`, in order. Instead of a list.
---@field gcloud? string
---With `gcloud` an instances list (`gcloud compute instances list --format=json`, TPU7x and later): the instances whose names match this glob (`"ironwood-*"`).
---@field instances? string
---With `gcloud` an instances list: the instances with this label, `"key=value"`.
---@field label? string
---A command (`sh -c`, in the spec's folder) that prints a fresh describe or instances list, run after a failed attempt: a worker PREEMPTED, TERMINATED, STOPPING or gone makes the attempt `preempted` (default: the `gcloud` file read again).
---@field describe? string
---How long `describe` may take (default "1m", at least "1s"); past it it is killed with what it started.
---@field describe_timeout? string|number
---The login user on every worker read from `gcloud` (only with `gcloud`; default: ssh's).
---@field user? string
---@field [integer] string

---`hosts { name = "NAME", ... }`.
---@class (exact) tpuci.NamedHostsSpec: tpuci.HostsSpec
---The declaration's name (only in this form).
---@field name string

------------------------------------------------------------------------
-- job

---What a job's function fields (`run`, `cmd`, `env`, `workdir`) are
---called with, once per instance while the spec loads.
---@class tpuci.Instance
---The instance's name, e.g. `"unit[python=3.11,torch=2.1]"`.
---@field name string
---The job's name, e.g. `"unit"`.
---@field job string
---The instance's matrix values, as strings: `{ python = "3.11", torch = "2.1" }`.
---@field matrix table<string, string>

---The table form of `retries`.
---`select = { mode = "affected", audit = 0.05 }`: the selection, and the fraction of the tests it leaves out that still run, to measure its misses (docs/pytest.md, "The audit").
---@class (exact) tpuci.Select
---@field mode "all"|"affected"
---@field audit? number

---@class (exact) tpuci.RetrySpec
---Attempts in total, the first included: 1..100 (required, unless only `capacity` is given).
---@field attempts? integer
---Which outcomes are retried (default: all four); `{}` retries nothing.
---@field on? tpuci.RetryOutcome[]
---The wait before the second attempt (default `"1s"`).
---@field backoff? tpuci.Duration
---Each later wait is the previous one times this, 1..100 (default 2).
---@field factor? number
---The longest wait, more than 0 (default `"1m"`).
---@field max_backoff? tpuci.Duration
---pytest jobs: what a retry runs. `"failed"` (the default): the failed tests, the one an attempt was cut short in, and those never run; `"unfinished"`: only the last two (a timeout or crash is retried without running tests that simply failed).
---@field rerun? "failed"|"unfinished"
---The machines' failures (ssh workers preempted or not there, docs/ssh.md "Capacity"): retried under this budget, never `attempts`'.
---@field capacity? tpuci.CapacityRetrySpec

---`retries.capacity`.
---@class (exact) tpuci.CapacityRetrySpec
---Attempts after a preempted or no-capacity one, 0..100 (default 3).
---@field attempts? integer
---The wait before each (default `"1m"`).
---@field wait? tpuci.Duration

---A mount's table form: `["data"] = { target = "/data", readonly = true }`.
---@class (exact) tpuci.MountSpec
---The container path (absolute; required).
---@field target string
---Mount read-only (default false).
---@field readonly? boolean

---`pytest = { ... }`: a pytest job. tpuci builds the command
---`python -m pytest -p no:cacheprovider [-m M] [-k K] [options...] [args...]`,
---writes each attempt's JUnit XML, re-runs only what failed on retries and
---can split the suite into shards (docs/pytest.md).
---@class (exact) tpuci.PytestSpec
---The `-m` expression: `"tpu"`, `"not distributed and not tpu"`. Takes `${matrix.KEY}`.
---@field markers? string
---The `-k` expression. Takes `${matrix.KEY}`.
---@field k? string
---Paths or node ids to run: `{ "tests/" }`. Takes `${matrix.KEY}`.
---@field args? tpuci.Scalar[]
---More pytest options, placed before `args` (`{ "-x", "-vv" }`); `--junitxml` is tpuci's.
---@field options? tpuci.Scalar[]
---Split the selected tests into this many instances, 1..256 (default 1): adds the matrix key `shard` (`"1/N"`..`"N/N"`).
---@field shards? integer
---How the shards split the suite (default `"file"`): a file's tests stay together in their order (`"file"`), a class's (`"class"`, other tests one by one), or test by test (`"test"`: the finest balance, but tests that depend on their file's order may fail).
---@field shard_by? "file"|"class"|"test"
---Whether pytest's exit 5 (nothing collected) passes (default false).
---@field allow_empty? boolean
---One pytest process per chip of the job's one-host topology, each pinned to its chip (`TPU_VISIBLE_CHIPS`, `TPU_PROCESS_*`, `ALLOW_MULTIPLE_LIBTPU_LOAD`; emulated: its share of the CPU devices), splitting the tests as `shards` do (the matrix key `shard`, one per chip); one merged report (default false; not with `shards`).
---@field per_chip? boolean
---The tests that ran and failed in the last run (`.tpuci/history.jsonl`) run first, in a process of their own started before the attempts, a shard's its own (default `true`); every attempt keeps pytest's order. Not after a run in which most tests failed, and not the tests that failed in each of their last 5 runs unless `"always"`.
---@field failed_first? boolean|"always"
---Whether a retry runs when every test it would run failed in each of its last 5 runs before this one (default false: such a retry tells nothing new, and the instance fails without it; tpuci says so).
---@field retry_steady? boolean
---The longest one test may take (setup, call and teardown), at least `"1s"`: a test over it fails with the stack of every thread, and pytest goes on with the next test (default: none; the job's `timeout` still bounds the attempt).
---@field test_timeout? tpuci.Duration
---`"affected"`: a test is left out only when the record proves a change cannot affect it; the others are `unaffected` (default `"all"`): what each test ran, read, listed and tested is recorded as it runs (docs/pytest.md, "Only what a change can affect").
---@field select? "all"|"affected"|tpuci.Select
---Globs of test files (relative to pytest's rootdir) that always run with `select = "affected"` (what tracing cannot see: a C extension rebuilt, data a library reads itself).
---@field select_always? string[]
---Globs of files (relative to pytest's rootdir) whose changes never matter to `select = "affected"` (`"docs/**"`, `"*.md"`).
---@field select_ignore? string[]
---Shell commands (`sh -c`, one line each) the attempt runs in its container before it imports pytest, their output in its log; one that fails ends the attempt `infra` with its own cause, not retried (docs/pytest.md, "The tree under test"). `{ "pip install --no-deps -e ." }` tests the tree, not a copy the image holds.
---@field setup? string[]
---The interpreter (default `"python3"`): `python -m pytest ...`.
---@field python? string
---`{ runs = N }` (2..50): a test the history (`.tpuci/history.jsonl`) has never seen for this job runs N times in all (its attempt, then N-1 more in processes of their own) before its pass counts; failing any of them fails the job (docs/pytest.md, "New tests").
---@field new_tests? tpuci.NewTests

---@class tpuci.NewTests
---How many runs a new test gets in all, 2..50.
---@field runs integer

---`matrix = { key = { values... }, exclude = {...}, include = {...} }`: one
---instance per combination. Keys are sorted by name; the last varies
---fastest. Values become strings: write versions as strings (`3.10` is the
---number 3.1).
---@class tpuci.Matrix
---Partial combinations to drop: `{ { python = "3.12", torch = "2.1" } }`.
---@field exclude? table<string, tpuci.Scalar>[]
---Extra combinations, each giving every matrix key a value.
---@field include? table<string, tpuci.Scalar>[]
---@field [string] tpuci.Scalar[]

---A container's IPC namespace (`ipc`).
---@alias tpuci.Ipc
---| "host" # the host's: its /dev/shm and System V IPC objects (real TPU VMs' `--ipc=host`)
---| "private" # its own, which no other container can join
---| "shareable" # its own, which other containers may join (Docker's default)

---A resource limit: a number (soft = hard; `-1` for unlimited) or this table.
---@class (exact) tpuci.UlimitSpec
---The soft limit (`-1`: unlimited), at most the hard one.
---@field soft integer
---The hard limit (`-1`: unlimited).
---@field hard integer

---`gpus = { ... }`, Compose's device reservation: one Docker DeviceRequest.
---@class (exact) tpuci.GpusSpec
---How many GPUs: a number, or `"all"` (the default). Not with `device_ids`.
---@field count? integer|"all"
---Which GPUs, by index or UUID: `{ "0", "GPU-3c0e..." }`. Not with `count`.
---@field device_ids? (string|integer)[]
---The device driver (`"nvidia"`); default: the engine picks one by capabilities.
---@field driver? string
---Capabilities every device must have (default `{ "gpu" }`): `{ "gpu", "utility", "compute" }`.
---@field capabilities? string[]

---`job "NAME" { ... }`. Exactly one of `run`, `cmd` and `pytest`. Job names
---use letters, digits and `_ . - / : + @` (`"lint/ruff"`).
---@class (exact) tpuci.JobSpec
---A shell command: the instance runs `/bin/sh -c RUN`. Takes `${matrix.KEY}`.
---@field run? string|fun(inst: tpuci.Instance): string
---The argument vector itself, no shell: `{ "python3", "-m", "pytest" }`. Takes `${matrix.KEY}`.
---@field cmd? tpuci.Scalar[]|fun(inst: tpuci.Instance): tpuci.Scalar[]
---A pytest job (instead of `run`/`cmd`).
---@field pytest? tpuci.PytestSpec
---Added to the inherited environment: `{ XLA_USE_BF16 = 0 }`. Values take `${matrix.KEY}`.
---@field env? table<string, tpuci.Scalar>|fun(inst: tpuci.Instance): table<string, tpuci.Scalar>
---Local: relative to the spec's folder (default: the spec's folder). Docker: a container path (default: the image's).
---@field workdir? string|fun(inst: tpuci.Instance): string
---Stop an attempt that runs longer (SIGTERM, then SIGKILL after `grace`); `0`: none (the default).
---@field timeout? tpuci.Duration
---Stop an attempt that prints nothing (on any of its hosts) for this long, as for `timeout`: the outcome is `timeout`, the cause "no output for 10m" (default: none).
---@field idle_timeout? tpuci.Duration
---A gang's start deadline: every host up and every host's name resolving on each (each host waits for that before its command), else the attempt is `infra`, naming the hosts that were not; it holds without a `timeout` too. `0`: no start barrier (for an image without `/bin/sh`); default `"3m"`.
---@field start_timeout? tpuci.Duration
---Before the command (a pytest job: before its first test) the framework must see the topology's devices (the emulated CPU devices, or with `--real` its TPU chips), else the attempt is `infra` with the numbers and the command does not run: `"jax"`, `"torch_xla"`, or `"auto"` (every one that imports; a pytest job's default; a command job checks only when it says); `false`: no check. Needs a topology.
---@field expect_devices? "auto"|"jax"|"torch_xla"|false
---The delay between SIGTERM and SIGKILL, more than 0 (default `"5s"`).
---@field grace? tpuci.Duration
---`N` retries after the first attempt (0..99), or the policy as a table.
---@field retries? integer|tpuci.RetrySpec
---One instance per combination of the lists' values.
---@field matrix? tpuci.Matrix
---`"docker"` (the default with an image), `"local"` (the default without), `"swarm"` (a Docker Swarm service per host, docs/swarm.md) or `"ssh"` (implied by `hosts`, docs/ssh.md).
---@field runtime? tpuci.Runtime
---A declared image's name or a literal reference (`"python:3.11"`).
---@field image? string
---A declared topology's name, or a TPU type (`"v4-8"`, default emulation): the job runs as a gang of one container per emulated host.
---@field topology? string
---A `hosts` declaration's name: host i of the job's topology runs on its entry i, over SSH (implies `runtime = "ssh"`; the counts must match; with an `image`, in a container of the worker's own engine, with the accelerator options and the worker's network; docs/ssh.md).
---@field hosts? string
---Host path (relative to the spec's folder, or absolute) = container path, or `{ target = ..., readonly = ... }`.
---@field mounts? table<string, string|tpuci.MountSpec>
---The container's CPU quota, more than 0 (`1.5`).
---@field cpus? number
---The container's memory limit, more than 0 (`"2g"`); an attempt killed for memory is `oom`.
---@field memory? tpuci.Size
---The container's network mode: `"none"`, `"bridge"`, `"host"` or a network name.
---@field network? string
---The size of the container's /dev/shm, more than 0 (`"16g"`; Docker's default is 64 MiB, too small for PyTorch DataLoader workers). Swarm: a tmpfs mount of that size.
---@field shm_size? tpuci.Size
---The container's IPC namespace. Not with `runtime = "swarm"`.
---@field ipc? tpuci.Ipc
---Every device and capability of the host (`docker run --privileged`). Not with `runtime = "swarm"`.
---@field privileged? boolean
---Host devices, `"HOST[:CONTAINER][:PERMISSIONS]"` (permissions: letters of `rwm`): `{ "/dev/accel0", "/dev/null:/dev/accel1:rwm", "/dev/vfio/*" }`. A host path with `*`, `?` or `[` is a glob, expanded when an attempt starts (an error when it matches nothing). Not with `runtime = "swarm"`.
---@field devices? string[]
---Capabilities to add: `{ "SYS_ADMIN", "IPC_LOCK" }` (any case, with or without `CAP_`, or `"ALL"`).
---@field cap_add? string[]
---Capabilities to drop: `{ "NET_RAW" }` or `{ "ALL" }`.
---@field cap_drop? string[]
---Resource limits by name (`nofile`, `memlock`, `nproc`, `stack`, ...): `{ memlock = -1, nofile = { soft = 4096, hard = 8192 } }`.
---@field ulimits? table<string, integer|tpuci.UlimitSpec>
---GPUs (a Docker DeviceRequest): `"all"`, a count, a list of device ids, or the table form. Not with `runtime = "swarm"`.
---@field gpus? "all"|integer|(string|integer)[]|tpuci.GpusSpec
---Namespaced kernel parameters: `{ ["net.core.somaxconn"] = 1024 }` (net.*, fs.mqueue.*, kernel.shm*, kernel.msg*, kernel.sem).
---@field sysctls? table<string, tpuci.Scalar>
---`false`: never take a stored pass for this job, nor store one (the results cache, docs/cache.md; default `true`).
---@field cache? boolean
---Globs relative to the spec's folder (`{ "src/**", "tests/**" }`): only these files of the job's mounts (of its folder, without an image) count in its results' key, so other changes (docs) rerun nothing (docs/cache.md).
---@field inputs? string[]

---`job { name = "NAME", ... }`.
---@class (exact) tpuci.NamedJobSpec: tpuci.JobSpec
---The job's name (only in this form).
---@field name string

------------------------------------------------------------------------
-- The declarations

---Declares an image: `image "py" { ref = "python:3.11", pull = "never" }`
---or `image { name = "py", ref = ... }`.
---@param name string
---@return fun(spec: tpuci.ImageSpec)
---@overload fun(spec: tpuci.NamedImageSpec)
function image(name) end

---Declares an emulated TPU slice: `topology "v4-16" { emulate = "jax" }`
---or `topology { name = "v4-16", ... }`. See `tpuci topologies`.
---@param name string
---@return fun(spec: tpuci.TopologySpec)
---@overload fun(spec: tpuci.NamedTopologySpec)
function topology(name) end

---Declares a job: `job "unit" { run = "pytest -q", ... }` or
---`job { name = "unit", ... }`.
---@param name string
---@return fun(spec: tpuci.JobSpec)
---@overload fun(spec: tpuci.NamedJobSpec)
function job(name) end

---Declares the workers of a slice reached over SSH:
---`hosts "slice" { "root@10.0.0.2", "root@10.0.0.3" }` or
---`hosts "slice" { gcloud = "tpu.json", user = "me" }`; a job uses it with
---`hosts = "slice"`.
---@param name string
---@return fun(spec: tpuci.HostsSpec)
---@overload fun(spec: tpuci.NamedHostsSpec)
function hosts(name) end

------------------------------------------------------------------------
-- tpuci

---Helpers a spec may call (a spec has no `io`, `os` or `require`).
---@class tpuci.Helpers
---The spec's folder, absolute.
---@field spec_dir string
---tpuci's version, e.g. `"0.2.0"`.
---@field version string
tpuci = {}

---The caller's environment variable `name`, or `default` (or nil) when it is not set.
---@generic T
---@param name string
---@param default? T
---@return string|T
function tpuci.env(name, default) end

---The contents of a file beside the spec. `path` is relative to the
---spec's folder; absolute paths, `..` and symbolic links that leave the
---folder are refused.
---@param path string
---@return string
function tpuci.read_file(path) end

---A YAML file beside the spec as a Lua value (one document; YAML 1.2 core
---schema: `true`/`false` are booleans, numbers are numbers, `null`/`~` are
---nil, quoted scalars stay strings; anchors, aliases and `<<` merge keys
---work). `path` as for `read_file`. Errors give the file's line and
---column: `tpuci.yaml: versions.yaml:4:7: mapping values are not allowed in this context`.
---@param path string
---@return any
function tpuci.yaml(path) end
