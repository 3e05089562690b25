"""tpuci's device check: whether the frameworks of this process see the
devices of the job's topology (docs/pytest.md, "The device check").

It runs in two places, both through python -c, so nothing is written
into the image or the sources:

  - before tpuci_plugin.py in the same -c for every pytest attempt
    (core/kind/pytest/pytest_run.c): the plugin checks before the first test,
    in pytest's own process;
  - before tpuci_command.py for an attempt of a command job with
    expect_devices (core/kind/devices.c): the check, then the command.

Both also send a swarm task's results folder back through its log with
send_results() (below).

Both import it as `tpuci_devices`: under -c this file registers its own
namespace under that name (the code that follows it in the -c runs in
the same namespace); its tests (tests/pytest/plugin/) import the file.
Like the plugin it keeps to Python 3.5's syntax and the standard
library, and does nothing more when imported.
"""
import binascii
import json
import os
import sys

if __name__ == "__main__":
    sys.modules.setdefault("tpuci_devices", sys.modules[__name__])

# The exit of a process whose device check failed: not pytest's 1 or 5,
# so a gang's peers are stopped (runtime.h, peer_exits).
DEVICES_EXIT = 75

# Where the verdict goes, in the attempt's results folder (read by
# core/kind/devices.c).
DEVICES_FILE = "devices.json"


def tpu_nodes():
    """Whether this machine (or container) has a TPU device node: /dev/accel*
    (TPU v2 to v4) or a numbered /dev/vfio/<group> (v5e and later)."""
    for folder, numbered in (("/dev", False), ("/dev/vfio", True)):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for n in names:
            if (n.isdigit() if numbered else n.startswith("accel")):
                return True
    return False


def importable(name):
    """Whether the module `name` can be imported here, without importing it."""
    import importlib.util
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def jax_sees():
    """What JAX sees in this process: the number of its devices
    (jax.local_devices(): this process's; jax.devices() would count every
    host's of a multi-host slice) and its platform (jax.default_backend():
    "tpu", "cpu", "gpu")."""
    import jax
    return len(jax.local_devices()), jax.default_backend()


def torch_xla_sees():
    """What torch_xla sees in this process: the number of its devices
    (torch_xla.runtime.addressable_runtime_device_count(): this process's;
    global_runtime_device_count() counts every host's) and the hardware of
    its device (torch_xla.core.xla_model.xla_device_hw(xla_device()):
    "TPU", "CPU", "GPU")."""
    import torch_xla.core.xla_model as xm
    import torch_xla.runtime as xr
    return xr.addressable_runtime_device_count(), xm.xla_device_hw(xm.xla_device())


SEES = (("jax", jax_sees), ("torch_xla", torch_xla_sees))


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def check_devices(spec, env=None):
    """The device check of DEVICES `spec` ("jax?,torch_xla? tpu 4 4":
    FRAMEWORKS to ask, each with a "?" asked only if it imports; the
    PLATFORM, the DEVICES one process must see and the CHIPS they are;
    tpuci__devices_arg(), core/plan/host_env.h): asks each framework what
    it sees. Returns (lines for the log, what each saw {name: [count,
    platform]}, the mismatch or None): "jax sees 8 cpu devices, expected 4
    TPU chips on worker-0". A framework named alone that does not import
    is a mismatch; so is one whose devices cannot be listed (a TPU that
    another process holds)."""
    env = os.environ if env is None else env
    fws, platform, n, chips = spec.split(" ")
    n, chips = int(n), int(chips)
    where = "worker-" + env.get("TPUCI_HOST", "0")
    if env.get("TPUCI_CHIP") is not None:
        where += " (chip %s)" % env["TPUCI_CHIP"]
    if platform == "tpu":
        want = (plural(n, "TPU chip") if n == chips
                else "%s (%s)" % (plural(n, "TPU device"), plural(chips, "chip")))
    else:
        want = "%s (emulated)" % plural(n, platform + " device")
    if platform == "tpu" and not tpu_nodes():
        # Real hardware: the TPU's device nodes come first (`tpuci doctor
        # --real`'s check); without them no framework can see a chip.
        return [], {}, ("no TPU device node (/dev/accel*, /dev/vfio/<group>) on %s, "
                        "expected %s: this is not a TPU VM, or its TPU is not passed "
                        "to the container (tpuci doctor --real)" % (where, want))
    asked = fws.split(",")
    for name in asked:
        if not name.endswith("?") and not importable(name):
            return [], {}, "%s does not import, expected %s on %s" % (name, want, where)
    found = [name.rstrip("?") for name in asked if importable(name.rstrip("?"))]
    if not found:
        names = [n.rstrip("?") for n in asked]
        what = ("neither %s imports" % " nor ".join(names) if len(names) > 1
                else "%s does not import" % names[0])
        return ["tpuci: device check: %s here: nothing to check" % what], {}, None
    lines, seen = [], {}
    for name, sees in SEES:
        if name not in found:
            continue
        try:
            count, plat = sees()
        except Exception as e:  # noqa: BLE001: any failure of the framework's
            return (lines, seen, "%s cannot list its devices on %s: %s: %s (expected %s)"
                    % (name, where, type(e).__name__, str(e).splitlines()[0] if str(e) else "",
                       want))
        plat = str(plat).lower()
        seen[name] = [count, plat]
        said = "%s sees %s" % (name, plural(count, plat + " device"))
        if count != n or plat != platform:
            return lines, seen, "%s, expected %s on %s" % (said, want, where)
        lines.append("tpuci: device check: %s on %s, as expected" % (said, where))
    return lines, seen, None


def record(folder, spec, seen, bad):
    """Writes the verdict of DEVICES `spec` to DEVICES_FILE in `folder`:
    {"expected": spec, "seen": {name: [count, platform]}, "mismatch": the
    mismatch, or null}."""
    with open(os.path.join(folder, DEVICES_FILE), "w") as f:
        json.dump({"expected": spec, "seen": seen, "mismatch": bad}, f)


def check_and_record(spec, folder):
    """check_devices(spec), its lines printed and its verdict recorded in
    `folder` (record()); returns the mismatch, or None."""
    lines, seen, bad = check_devices(spec)
    for line in lines:
        print(line)
    record(folder, spec, seen, bad)
    return bad


# A swarm task's results folder (TPUCI_RESULTS_LOG) comes back through
# its log, as core/runtime/engine/logres.h reads it: the plugin's relay
# sends pytest's, tpuci_command.py the verdict of a check that failed.

# The results folder travels through the log in pieces of this many
# bytes: each base64 line (3000 characters and the key) is one write of
# at most 3 KB, which a pipe keeps whole.
RESULTS_PIECE = 2250


def write_all(b):
    """Writes all of the bytes `b` to stdout, however many writes it takes."""
    while b:
        b = b[os.write(1, b):]


def send_results(key, folder, how):
    """Prints every file of `folder` to stdout between lines that start
    with `key`, as core/runtime/engine/logres.h reads them: a block `how`
    is "begin" (the last one) or "snapshot" (one a later block replaces)."""
    names = sorted(n for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n)))
    write_all(("%s results %s %d\n" % (key, how, len(names))).encode())
    for n in names:
        with open(os.path.join(folder, n), "rb") as f:
            b = f.read()
        write_all(("%s file %s %d %d\n" % (key, n, len(b), binascii.crc32(b))).encode())
        for i in range(0, len(b), RESULTS_PIECE):
            write_all(key.encode() + b" d " + binascii.b2a_base64(b[i:i + RESULTS_PIECE]))
        write_all(("%s end %s\n" % (key, n)).encode())
    write_all(("%s results end %d\n" % (key, len(names))).encode())
