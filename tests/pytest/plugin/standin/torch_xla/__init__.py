"""A stand-in for torch_xla (not in Debian), for tpuci's device check
tests: torch_xla.runtime.addressable_runtime_device_count() and
torch_xla.core.xla_model.xla_device_hw(). It sees CPU_NUM_DEVICES and
PJRT_DEVICE, unless STANDIN_XLA_DEVICES says otherwise."""
