"""A stand-in for JAX (the real package is not in Debian), for tpuci's
device check tests: what the check calls, nothing more. It sees what the
environment tpuci gives a host says (JAX_NUM_CPU_DEVICES, JAX_PLATFORMS),
unless STANDIN_JAX_DEVICES / STANDIN_JAX_PLATFORM say otherwise (a
framework that does not see what the topology has). STANDIN_JAX_FAILS
makes listing the devices raise, STANDIN_JAX_CRASH kill the process."""
import os
import signal


class Device(object):
    def __init__(self, i, platform):
        self.id, self.platform = i, platform


def default_backend():
    plat = os.environ.get("STANDIN_JAX_PLATFORM")
    if plat:
        return plat
    return "cpu" if os.environ.get("JAX_PLATFORMS") == "cpu" else "tpu"


def local_devices():
    if os.environ.get("STANDIN_JAX_CRASH"):
        os.kill(os.getpid(), signal.SIGSEGV)
    if os.environ.get("STANDIN_JAX_FAILS"):
        raise RuntimeError("Unable to initialize backend 'tpu': TPU is already in use")
    n = int(os.environ.get("STANDIN_JAX_DEVICES") or os.environ.get("JAX_NUM_CPU_DEVICES") or 1)
    return [Device(i, default_backend()) for i in range(n)]


def devices():
    return local_devices()
