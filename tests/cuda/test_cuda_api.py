"""engine.cuda's device, event, stream and generator API, and out-of-memory errors in PyTorch's words."""
from __future__ import annotations

import numpy as np
import pytest

import engine
from tests.checks import NO_GPU

GPU = engine.cuda.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason=NO_GPU)


# ---- without a GPU -------------------------------------------------------------------------------
@pytest.mark.skipif(GPU, reason="a CUDA GPU is visible: the no-GPU errors cannot happen here")
@pytest.mark.parametrize("call", [engine.cuda.get_device_name, engine.cuda.get_device_capability,
                                  engine.cuda.get_device_properties, engine.cuda.synchronize, engine.cuda.init,
                                  engine.cuda.mem_get_info, lambda: engine.cuda.Event(enable_timing=True),
                                  engine.cuda.Stream, engine.cuda.current_stream, lambda: engine.cuda.set_device(0)])
def test_device_functions_without_a_gpu_raise_the_clear_error(call):
    with pytest.raises(RuntimeError, match="^(Torch not compiled with CUDA enabled|Found no NVIDIA driver)"):
        call()
    assert engine.cuda.is_initialized() is False


def test_generator_functions_work_without_a_gpu():
    engine.manual_seed(21)
    assert engine.cuda.initial_seed() == 21 and engine.cuda.is_bf16_supported() is False
    states = engine.cuda.get_rng_state_all()
    assert len(states) == max(engine.cuda.device_count(), 1) and states[0].dtype is engine.int64
    from engine.random import generator_for
    a = generator_for("cuda:0").normal((3,), np.float64)
    engine.cuda.set_rng_state_all(states)
    np.testing.assert_array_equal(generator_for("cuda:0").normal((3,), np.float64), a)


# ---- out of memory (NOTE [ Out of memory ]) -------------------------------------------------------
CPU_OOM = ("^DefaultCPUAllocator: can't allocate memory: you tried to allocate {} bytes. "
           r"Error code 12 \(Cannot allocate memory\)$")


# Every size is beyond a 47-bit address space (1.4e14 bytes), so no machine hands it out, overcommit or not.
@pytest.mark.parametrize("make, nbytes", [
    (lambda: engine.zeros(10**7, 10**7), 4 * 10**14),                        # a factory
    (lambda: engine.randn(10**7, 10**7, dtype=engine.float64), 8 * 10**14),
    (lambda: engine.ones(10**7, 1) @ engine.ones(1, 10**7), 4 * 10**14),      # an op's forward
])
def test_host_out_of_memory_is_pytorchs_runtime_error(make, nbytes):
    with pytest.raises(RuntimeError, match=CPU_OOM.format(nbytes)) as info:
        make()
    assert type(info.value) is RuntimeError and info.value.__cause__ is None


def test_out_of_memory_in_backward_is_translated_too():
    class Huge(engine.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            np.zeros((10**7, 10**7))           # a backward that asks the host for too much
            return g

    x = engine.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=CPU_OOM.format(8 * 10**14)):
        Huge.apply(x).sum().backward()


def test_out_of_memory_error_is_a_runtime_error_at_both_names():
    from engine.memory.oom import _gib
    assert engine.OutOfMemoryError is engine.cuda.OutOfMemoryError
    assert issubclass(engine.OutOfMemoryError, RuntimeError)
    assert [_gib(n) for n in (0, 1023, 2048, 3 * 2**19, 13 * 2**28)] == \
        ["0 bytes", "1023 bytes", "2.00 KiB", "1.50 MiB", "3.25 GiB"]


# ---- with a GPU ----------------------------------------------------------------------------------
@needs_gpu
def test_device_queries():
    name = engine.cuda.get_device_name()
    props = engine.cuda.get_device_properties(0)
    assert isinstance(name, str) and name == props.name and name
    assert engine.cuda.get_device_capability() == (props.major, props.minor) and props.major >= 3
    assert props.total_memory > 2**30 and props.multi_processor_count > 0
    assert repr(props).startswith(f"_CudaDeviceProperties(name='{name}', major={props.major}")
    free, total = engine.cuda.mem_get_info()
    assert 0 < free <= total == props.total_memory
    engine.cuda.set_device(0)
    assert engine.cuda.current_device() == 0
    with engine.cuda.device("cuda:0"):
        assert engine.cuda.current_device() == 0
    engine.ones(1, device="cuda")
    assert engine.cuda.is_initialized()


@needs_gpu
def test_events_time_gpu_work():
    a = engine.randn(512, 512, device="cuda")
    start, end = engine.cuda.Event(enable_timing=True), engine.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        a = a @ a / 512.0
    end.record()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) > 0.0
    plain = engine.cuda.Event()
    plain.record()
    with pytest.raises(ValueError, match="^Both events must be created with argument 'enable_timing=True'.$"):
        start.elapsed_time(plain)
    with pytest.raises(ValueError, match="recorded before"):
        engine.cuda.Event(enable_timing=True).elapsed_time(end)


@needs_gpu
def test_streams_run_kernels_and_synchronize():
    s = engine.cuda.Stream()
    x = engine.arange(6.0, device="cuda")
    assert engine.cuda.current_stream() == engine.cuda.default_stream()
    with engine.cuda.stream(s):
        assert engine.cuda.current_stream() == s
        y = x * 2
        ev = s.record_event()
    engine.cuda.current_stream().wait_event(ev)
    s.synchronize()
    assert s.query() and y.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    with engine.cuda.stream(None):
        assert (x + 1).tolist()[0] == 1.0


@needs_gpu
def test_gpu_out_of_memory_is_pytorchs_error():
    with pytest.raises(engine.cuda.OutOfMemoryError) as info:
        engine.empty(10**13, device="cuda")                     # 40 TB
    msg = str(info.value)
    assert msg.startswith("CUDA out of memory. Tried to allocate 37252.90 GiB. GPU 0 has a total capacity of ")
    assert "is allocated by glassgrad" in msg and info.value.__cause__ is None
    small = engine.ones(1, device="cuda")
    with pytest.raises(engine.OutOfMemoryError, match="^CUDA out of memory. Tried to allocate 37252.90 GiB"):
        small.expand(10**6, 10**7) * 2.0                        # an op's forward
