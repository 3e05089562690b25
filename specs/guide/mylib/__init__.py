"""A tiny library to test: sharding a batch over TPU devices."""


def shard_sizes(batch, devices):
    """How many examples each device gets when `batch` is split over `devices`."""
    if devices < 1:
        raise ValueError("need at least one device")
    base, extra = divmod(batch, devices)
    return [base + (1 if i < extra else 0) for i in range(devices)]


def global_batch(per_device, hosts, devices_per_host):
    return per_device * hosts * devices_per_host
