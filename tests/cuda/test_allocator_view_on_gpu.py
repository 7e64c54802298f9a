"""A model trained on the GPU, recorded, then seen in the allocator view: CuPy's real pool line
beside the allocator model's figures (NOTE [ Segments at an event ] rule 5), from the live trace,
from the file loaded back, from the file opened with its index, and from `glassgrad run` following
a GPU script. Byte counts are compared in the app's wording (``nbytes``). Skips where CuPy sees no GPU.
"""
import pytest

import engine
from engine import nn
from engine.trace import Trace, record
from replay.model import TraceModel
from replay.segments import SegmentsAt, pool_at_peak
from replay.words import nbytes, short_bytes
from tests.checks import NO_GPU
from tests.tui.conftest import allocator_view, host_screen
from tui.cli import summary

pytestmark = pytest.mark.skipif(not engine.cuda.is_available(), reason=NO_GPU)


@pytest.fixture(scope="module")
def gpu_trace_file(tmp_path_factory):
    """Three SGD steps of a 784-1024-1024-10 MLP on cuda:0 (tens of MiB live), saved as JSON Lines."""
    engine.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 10)).cuda()
    opt = engine.optim.SGD(model.parameters(), lr=0.1)
    with record() as tr:
        for _ in range(3):
            opt.zero_grad()
            x = engine.randn(256, 784, device="cuda")
            model(x).square().mean().backward()
            opt.step()
    p = tmp_path_factory.mktemp("gpu") / "mlp_cuda.jsonl"
    tr.save(p)
    return tr, p


def _last_pool(events, i: int, dev: str):
    """The pool figures of the last alloc/free on ``dev`` at or before event ``i``: worked out here
    from the events alone, not through the replay."""
    for e in reversed(events[:i + 1]):
        if e["kind"] in ("alloc", "free") and e.get("device") == dev and "pool_used" in e:
            return e["pool_used"], e["pool_total"]
    return None


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
@pytest.mark.parametrize("how", ["live", "load", "open"])
async def test_the_allocator_view_shows_cupys_pool_on_a_recorded_gpu_run(gpu_trace_file, how, size):
    tr, p = gpu_trace_file
    trace = {"live": lambda: tr, "load": lambda: Trace.load(p), "open": lambda: Trace.open(p)}[how]()
    model = TraceModel.from_trace(trace)
    events = list(tr)
    cuda = [e for e in events if e["kind"] in ("alloc", "free") and e.get("device", "").startswith("cuda")]
    dev = cuda[0]["device"]
    assert dev == "cuda:0" and len(cuda) > 30 and all("pool_used" in e and "pool_total" in e for e in cuda)
    peak = model.memory.peak_index
    want = _last_pool(events, peak, "cuda:0")
    assert want is not None and want[0] <= want[1]
    async with host_screen(model, "gpu").run_test(size=size) as pilot:
        s, al = pilot.app.screen, await allocator_view(pilot)
        for i in (peak, len(model) - 1, peak // 2):
            s.index = i
            await pilot.pause()
            lines = al.render().plain.splitlines()
            assert lines[0].startswith(f"cuda:0 at #{i}: ")
            w, h = al.content_size.width, al.content_size.height
            assert all(len(line) <= w for line in lines) and len(lines) <= h     # NOTE [ Fitting the screen ] 8
            at = [k for k, line in enumerate(lines) if line.startswith("CuPy")]
            got = _last_pool(events, i, "cuda:0")
            if got is None:
                assert at == []
                continue
            m, k = SegmentsAt(model, "cuda:0").at(i), at[0]
            if size == (120, 36):
                assert lines[k] == f"CuPy pool (real): used {nbytes(got[0])} · held {nbytes(got[1])}"
                assert lines[k + 1] == f"model: allocated {nbytes(m.active)} · reserved {nbytes(m.reserved)}"
            else:                                   # tens of MiB: the short units fit a 42-column panel
                assert lines[k] == f"CuPy (real): used {short_bytes(got[0])} · held {short_bytes(got[1])}"
                assert lines[k + 1] == f"model: used {short_bytes(m.active)} · reserved {short_bytes(m.reserved)}"
    line = pool_at_peak(trace)
    assert line == (f"cuda:0 at the peak (#{peak}): CuPy pool (real): used {nbytes(want[0])} · held "
                    f"{nbytes(want[1])}   model: allocated {nbytes(SegmentsAt(model, 'cuda:0').at(peak).active)} · "
                    f"reserved {nbytes(SegmentsAt(model, 'cuda:0').at(peak).reserved)}")
    assert line in summary(trace, "mlp_cuda").splitlines()


GPU_SCRIPT = """import engine
from engine import nn
engine.manual_seed(0)
model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 10)).cuda()
opt = engine.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    model(engine.randn(256, 784, device="cuda")).square().mean().backward()
    opt.step()
"""


async def test_glassgrad_run_of_a_gpu_script_shows_the_pool_once_it_ends(tmp_path, monkeypatch):
    """`glassgrad run` follows the worker's GPU trace, settles on the saved one, and the allocator
    view shows the pool figures its last alloc or free carried (NOTE [ A followed run ])."""
    from tui.app import GlassgradApp

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    script = tmp_path / "gpu_train.py"
    script.write_text(GPU_SCRIPT)
    out = tmp_path / "gpu_run.jsonl"
    app = GlassgradApp("run", script=str(script), out=str(out))
    async with app.run_test(size=(120, 36)) as pilot:
        for _ in range(600):
            await pilot.pause(0.1)
            if pilot.app.screen.finished:
                break
        s = pilot.app.screen
        assert s.finished and s.title_text == "run gpu_train.py (finished)", s.title_text
        events = list(Trace.load(str(out)))
        assert len(s.model) == len(events)
        al = await allocator_view(pilot)
        i = len(s.model) - 1
        s.index = i
        await pilot.pause()
        lines = al.render().plain.splitlines()
        got = _last_pool(events, i, "cuda:0")
        assert got is not None and f"CuPy pool (real): used {nbytes(got[0])} · held {nbytes(got[1])}" in lines
