"""CuPy's real pool figures beside the allocator model on a GPU trace (rule 5 of NOTE [ Segments at an
event ]), nothing about CuPy on a CPU trace, and the figures at the peak in ``glassgrad view --text``.

The GPU trace is written out by hand: its ``reserved`` figures follow the allocator model's rules
(a 3 MiB request opens a 20 MiB large-pool segment, a 1000 B one a 2 MiB small-pool segment, each
block rounded up to 512 B), its pool figures are what CuPy's pool would say (blocks taken from the
driver at their rounded size and kept after a free).
"""
import pytest
from textual.app import App

from engine.trace import Trace
from replay.model import TraceModel
from replay.segments import POOL_DIFFERS, SegmentsAt, pool_at_peak, pool_line
from tests.tui.conftest import allocator_view, host_screen
from tui.allocator_view import AllocatorView
from tui.cli import summary

KiB, MiB = 1 << 10, 1 << 20


def _ev(seq, kind, **f):
    return {"seq": seq, "t": seq / 1000, "phase": "forward", "kind": kind, **f}


def _mem(seq, kind, sid, n, dev, reserved, pool=None):
    pf = {} if pool is None else {"pool_used": pool[0], "pool_total": pool[1]}
    pf.update({} if reserved is None else {"reserved": reserved})
    return _ev(seq, kind, storage=sid, bytes=n, device=dev, category="input", **pf)


GPU_EVENTS = [
    _ev(0, "mark", text="start"),
    _mem(1, "alloc", 1, 4 * KiB, "cpu", 2 * MiB),                                  # a batch on the host
    _mem(2, "alloc", 2, 3 * MiB, "cuda:0", 20 * MiB, (3 * MiB, 3 * MiB)),
    _mem(3, "alloc", 3, 1000, "cuda:0", 22 * MiB, (3 * MiB + KiB, 3 * MiB + KiB)),
    _ev(4, "mark", text="between"),
    _mem(5, "free", 2, 3 * MiB, "cuda:0", 22 * MiB, (KiB, 3 * MiB + KiB)),
    _mem(6, "alloc", 4, 5 * MiB, "cuda:0", 22 * MiB, (5 * MiB + KiB, 8 * MiB + KiB)),
    _mem(7, "free", 1, 4 * KiB, "cpu", 2 * MiB),
]
#: (used, total) of CuPy's pool after each event, and the model's (allocated, reserved) on cuda:0
POOL_AT = [None, None, (3 * MiB, 3 * MiB), (3 * MiB + KiB, 3 * MiB + KiB), (3 * MiB + KiB, 3 * MiB + KiB),
           (KiB, 3 * MiB + KiB), (5 * MiB + KiB, 8 * MiB + KiB), (5 * MiB + KiB, 8 * MiB + KiB)]
MODEL_AT = [(0, 0), (0, 0), (3 * MiB, 20 * MiB), (3 * MiB + KiB, 22 * MiB), (3 * MiB + KiB, 22 * MiB),
            (KiB, 22 * MiB), (5 * MiB + KiB, 22 * MiB), (5 * MiB + KiB, 22 * MiB)]

SEGMENTS_AT = {2: ["large"], 3: ["large", "small"], 6: ["large", "small"]}   # the 20 MiB one, then the 2 MiB one


@pytest.fixture
def gpu_model():
    return TraceModel(GPU_EVENTS)


def test_the_replay_reads_the_pool_figures_at_the_cursor_forward_and_back(gpu_model):
    seg = SegmentsAt(gpu_model, "cuda:0", every=2)
    assert [seg.pool(i) for i in range(len(GPU_EVENTS))] == POOL_AT
    assert [seg.pool(i) for i in reversed(range(len(GPU_EVENTS)))] == POOL_AT[::-1]   # from the saved copies
    assert [(seg.at(i).active, seg.at(i).reserved) for i in (3, 6, 2)] == [MODEL_AT[3], MODEL_AT[6], MODEL_AT[2]]
    assert [e["reserved"] for e in GPU_EVENTS if e.get("device") == "cuda:0"] == [20 * MiB, 22 * MiB, 22 * MiB, 22 * MiB]
    cpu = SegmentsAt(gpu_model, "cpu")
    assert [cpu.pool(i) for i in range(len(GPU_EVENTS))] == [None] * len(GPU_EVENTS)


def test_the_pool_line_puts_cupys_figures_beside_the_models(gpu_model):
    seg = SegmentsAt(gpu_model, "cuda:0")
    assert pool_line(seg.pool(6), seg.at(6)) == (
        "CuPy pool (real): used 5.00 MiB · held 8.00 MiB   model: allocated 5.00 MiB · reserved 22.00 MiB")


def _pool_lines(text: str) -> list:
    lines = text.splitlines()
    at = next(k for k, line in enumerate(lines) if line.startswith("CuPy pool (real):"))
    return lines[at:at + 3]


def _words(i: int, form: int) -> list:
    """The pool lines at event ``i`` in the view's three wordings (0: one line, 1: two, 2: two short)."""
    used, held = (f"{b / MiB:.2f} MiB" for b in POOL_AT[i])
    allocated, reserved = (f"{b / MiB:.2f} MiB" for b in MODEL_AT[i])
    cupy, model = f"CuPy pool (real): used {used} · held {held}", f"model: allocated {allocated} · reserved {reserved}"
    return [[f"{cupy}   {model}", POOL_DIFFERS[0]], [cupy, model, POOL_DIFFERS[1]],
            [f"CuPy (real): used {used} · held {held}", f"model: used {allocated} · reserved {reserved}",
             POOL_DIFFERS[2]]][form]


def _header_then(lines: list, i: int, width: int) -> list:
    """The header's lines (rule 8 of NOTE [ Fitting the screen ]: wrapped at words, each within
    ``width``) checked against the one-line header; the lines after it."""
    k = next(j for j, line in enumerate(lines) if line.startswith("CuPy"))
    assert " ".join(lines[:k]).startswith(f"cuda:0 at #{i}: reserved ") and all(len(x) <= width for x in lines[:k])
    return lines[k:]


async def _check_view(pilot, al, screen, form: int) -> None:
    for i in (3, 6, 2):
        screen.index = i
        await pilot.pause()
        assert al.index == i
        lines = al.render().plain.splitlines()
        rest = _header_then(lines, i, al.content_size.width)
        want = _words(i, form)
        assert rest[:len(want)] == want
        assert len(lines) <= al.content_size.height                          # nothing pushed off the panel
        assert [line[:5] for line in rest[len(want):]] == SEGMENTS_AT[i]      # and both segments below them


@pytest.mark.parametrize(("size", "form"), [((80, 24), 2), ((120, 36), 1)])
async def test_the_allocator_view_shows_the_pool_beside_the_model_on_a_gpu_trace(gpu_model, size, form):
    async with host_screen(gpu_model, "gpu").run_test(size=size) as pilot:
        al = await allocator_view(pilot)
        await _check_view(pilot, al, pilot.app.screen, form)


async def test_a_wide_allocator_view_gives_the_pool_and_the_model_one_line(gpu_model):
    class Wide(App):
        def compose(self):
            yield AllocatorView(gpu_model)

    async with Wide().run_test(size=(140, 12)) as pilot:
        al = pilot.app.query_one(AllocatorView)
        assert al.content_size.width == 140
        await _check_view(pilot, al, al, 0)


async def test_a_cpu_trace_shows_nothing_about_cupy(mlp_trace):
    model = TraceModel.from_trace(mlp_trace)
    async with host_screen(model, "mlp").run_test(size=(120, 36)) as pilot:
        al = await allocator_view(pilot)
        pilot.app.screen.index = len(model) // 2
        await pilot.pause()
        text = al.render().plain
        assert text.startswith("cpu at #") and "CuPy" not in text and "pool" not in text
    assert pool_at_peak(mlp_trace) is None and "CuPy" not in summary(mlp_trace, "mlp")


def test_view_text_prints_the_pool_at_the_peak_of_a_gpu_trace(gpu_model):
    tr = Trace(GPU_EVENTS)
    assert gpu_model.memory.peak_index == 6               # 4 KiB on the host + 1000 B + 5 MiB on the GPU
    want = ("cuda:0 at the peak (#6): CuPy pool (real): used 5.00 MiB · held 8.00 MiB   "
            "model: allocated 5.00 MiB · reserved 22.00 MiB")
    assert pool_at_peak(tr) == want
    assert summary(tr, "gpu").splitlines()[2] == want


#: A GPU run's figures as an H100 gave them for a 784-1024-1024-10 MLP (tens of MiB): the pool
#: wordings with full units do not fit a narrow panel. Each 1 MiB request opens or fills a small
#: 2 MiB segment (two to a segment), each 12 MiB one a large 20 MiB segment: eight segments in all.
BIG_EVENTS = [_ev(0, "mark", text="start")] + [
    _mem(1 + k, "alloc", 10 + k, n, "cuda:0", None, (31673344 + k, 57409536))
    for k, n in enumerate([MiB] * 9 + [12 * MiB] * 3)]


async def test_a_narrow_panel_takes_short_units_and_says_how_many_segments_it_leaves_out():
    model = TraceModel(BIG_EVENTS)
    i = len(BIG_EVENTS) - 1
    snap = SegmentsAt(model, "cuda:0").at(i).snapshot()
    assert len(snap) == 8
    async with host_screen(model, "gpu").run_test(size=(80, 24)) as pilot:
        s, al = pilot.app.screen, await allocator_view(pilot)
        s.index = i
        await pilot.pause()
        w, h = al.content_size.width, al.content_size.height
        lines = al.render().plain.splitlines()
        assert all(len(line) <= w for line in lines) and len(lines) <= h       # rule 8: nothing wraps or falls off
        rest = _header_then(lines, i, w)
        m = SegmentsAt(model, "cuda:0").at(i)
        assert rest[:2] == ["CuPy (real): used 30.2M · held 54.8M",
                            f"model: used {m.active / MiB:.1f}M · reserved {m.reserved / MiB:.1f}M"]
        assert len(f"CuPy (real): used {30.21:.2f} MiB · held {54.75:.2f} MiB") > w     # the longer wording would not fit
        shown = [line for line in rest if line.startswith(("small", "large"))]
        assert rest[-1] == f"… {len(snap) - len(shown)} more segments" and 0 < len(shown) < len(snap)
        assert len(lines) == h                                                   # the rows are all used


def test_the_inspector_gives_the_pool_figures_of_an_event_in_units(gpu_model):
    from tui.inspector import describe_event
    text = describe_event(gpu_model, 6).plain
    assert f"pool_used {5 * MiB + KiB} (5.00 MiB)\n" in text and f"pool_total {8 * MiB + KiB} (8.00 MiB)\n" in text
    assert f"reserved  {22 * MiB} (22.00 MiB)\n" in text
