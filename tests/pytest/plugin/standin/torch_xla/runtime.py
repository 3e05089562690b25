import os


def addressable_runtime_device_count():
    return int(os.environ.get("STANDIN_XLA_DEVICES") or os.environ.get("CPU_NUM_DEVICES") or 1)


def global_runtime_device_count():
    return addressable_runtime_device_count()
