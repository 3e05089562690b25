import os


def xla_device(n=None):
    return "xla:0"


def xla_device_hw(device):
    return os.environ.get("PJRT_DEVICE", "TPU")
