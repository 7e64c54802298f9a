"""CuPy's pool figures on a CUDA trace's alloc/free events (NOTE [ CuPy pool figures in events ]).

Without a GPU the pool is a fake (``cupy_pool.set_source``) and the storages are stand-ins on
"cuda:7" (a device no other test uses) that go through the same recording hook (``memory.state.on_alloc``/``on_free``) as a
real storage; the last test records a real model on a GPU and skips where CuPy sees none.
"""
import gc
import json

import pytest

import engine
from engine import events as _events
from engine import nn
from engine.memory import allocator as _allocator
from engine.memory import cupy_pool
from engine.memory import state as _memstate
from engine.trace import Trace, TraceFormatError, record
from tests.checks import NO_GPU

KiB, MiB = 1 << 10, 1 << 20


class FakePool:
    """A pool whose figures are known: ``used`` counts the live fake arrays' bytes, ``total`` only grows."""

    def __init__(self):
        self.used, self.total, self.asked = 0, 0, []

    def __call__(self, device):
        self.asked.append(device)
        return self.used, self.total


class FakeArray:
    """Takes its bytes from ``pool`` when made and gives them back when it dies, as a CuPy array does."""

    def __init__(self, pool, n):
        self.pool, self.n = pool, n
        pool.used += n
        pool.total = max(pool.total, pool.used + 4 * KiB)

    def __del__(self):
        self.pool.used -= self.n


class CudaStorage:
    """A stand-in for ``core.storage.Storage`` on "cuda:7": the fields the recording hook reads."""

    def __init__(self, pool, n, base="input"):
        self.id = _events.new_id()
        self.array = FakeArray(pool, n)
        self.nbytes, self.device, self.base, self.saved = n, "cuda:7", base, 0
        _memstate.on_alloc(self)

    def die(self):
        _memstate.on_free(self)


@pytest.fixture
def fake_pool(monkeypatch):
    gc.collect()
    gc.disable()
    monkeypatch.setattr(_allocator.hook, "models", {})
    pool = FakePool()
    monkeypatch.setattr(cupy_pool, "source", pool)
    yield pool
    _memstate._flush_both()         # the fresh models take this test's log, not the ones restored after it
    gc.enable()


def _pool_events(tr):
    return [(e["kind"], e["bytes"], e["pool_used"], e["pool_total"]) for e in tr if e["kind"] in ("alloc", "free")]


def test_alloc_and_free_events_carry_exactly_the_pools_figures(fake_pool):
    with record() as tr:
        a = CudaStorage(fake_pool, 3 * KiB)     # the pool counts it before the event is made
        b = CudaStorage(fake_pool, MiB)
        a.die()                                 # the array is dropped before the figures are read
        c = CudaStorage(fake_pool, 512)
        b.die()
        c.die()
    assert _pool_events(tr) == [
        ("alloc", 3 * KiB, 3 * KiB, 7 * KiB),
        ("alloc", MiB, MiB + 3 * KiB, MiB + 7 * KiB),
        ("free", 3 * KiB, MiB, MiB + 7 * KiB),
        ("alloc", 512, MiB + 512, MiB + 7 * KiB),
        ("free", MiB, 512, MiB + 7 * KiB),
        ("free", 512, 0, MiB + 7 * KiB),
    ]
    assert fake_pool.asked == ["cuda:7"] * 6
    assert a.array is None and b.array is None and c.array is None


def test_the_fields_survive_a_saved_trace_and_are_validated(fake_pool, tmp_path):
    with record() as tr:
        CudaStorage(fake_pool, 2 * KiB).die()
    p = tmp_path / "gpu.jsonl"
    tr.save(p)
    back = Trace.load(p)
    assert _pool_events(back) == _pool_events(tr) == [("alloc", 2 * KiB, 2 * KiB, 6 * KiB),
                                                       ("free", 2 * KiB, 0, 6 * KiB)]
    lines = p.read_text().splitlines()
    bad = json.loads(lines[1])
    bad["pool_used"] = -1
    p.write_text("\n".join([lines[0], json.dumps(bad)] + lines[2:]) + "\n")
    with pytest.raises(TraceFormatError, match="line 2: alloc event: field 'pool_used' must be"):
        Trace.load(p)


def test_a_source_with_no_figures_adds_no_fields(fake_pool):
    assert cupy_pool.set_source(lambda device: None) is fake_pool
    with record() as tr:
        CudaStorage(fake_pool, KiB).die()
    assert [sorted(set(e) & {"pool_used", "pool_total"}) for e in tr if e["kind"] in ("alloc", "free")] == [[], []]


def test_cpu_events_carry_no_pool_figures_and_never_ask_the_pool(fake_pool):
    with record() as tr:
        x = engine.randn(4, 3, requires_grad=True)
        (nn.Linear(3, 2)(x).relu().sum()).backward()
        del x
    mem = [e for e in tr if e["kind"] in ("alloc", "free", "empty_cache")]
    assert mem and all("pool_used" not in e and "pool_total" not in e for e in mem)
    assert fake_pool.asked == []


def test_nothing_is_read_outside_a_trace(fake_pool):
    st = CudaStorage(fake_pool, KiB)
    st.die()
    assert fake_pool.asked == [] and st.array is not None      # the untraced path is untouched
    assert cupy_pool.fields("cpu") == {} and cupy_pool.fields("meta") == {} and fake_pool.asked == []


def test_the_default_source_reads_cupys_default_pool_or_nothing(monkeypatch):
    monkeypatch.setattr(cupy_pool, "_pool", [])
    if not engine.cuda.is_available():
        assert cupy_pool.cupy_figures("cuda:0") is None
        return
    import cupy
    pool = cupy.get_default_memory_pool()
    keep = cupy.empty(1000, dtype=cupy.float32)     # noqa: F841 - holds 4000 B (a 4096 B block)
    assert cupy_pool.cupy_figures("cuda:0") == (pool.used_bytes(), pool.total_bytes())


@pytest.mark.skipif(not engine.cuda.is_available(), reason=NO_GPU)
def test_a_cuda_run_records_cupys_used_bytes_at_each_alloc_and_free():
    import cupy

    pool = cupy.get_default_memory_pool()
    seen = []

    class Witness:
        """A second recorder: CuPy's own figure at the moment each memory event is made."""

        def _append(self, kind, fields):
            if kind in ("alloc", "free") and fields.get("device", "").startswith("cuda"):
                seen.append((fields["storage"], pool.used_bytes(), pool.total_bytes()))

    engine.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8)).cuda()
    opt = engine.optim.SGD(model.parameters(), lr=0.1)
    with record() as tr:
        w = Witness()
        _events.add_recorder(w)
        try:
            for _ in range(2):
                opt.zero_grad()
                model(engine.randn(16, 32, device="cuda")).square().mean().backward()
                opt.step()
        finally:
            _events.remove_recorder(w)
    got = [(e["storage"], e["pool_used"], e["pool_total"]) for e in tr
           if e["kind"] in ("alloc", "free") and e["device"].startswith("cuda")]
    assert len(got) > 20 and got == seen
