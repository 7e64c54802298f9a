"""The lifetimes, holders and allocator views draw what replay computes from the trace, and
their keys and clicks change what they show."""
import pytest
from textual.app import App

import engine as torch
from replay.holders import holders
from replay.lifetimes import alive_at, describe
from replay.model import TraceModel
from replay.segments import SegmentsAt, gap
from replay.words import nbytes
from tests.tui.conftest import host_screen
from tui.allocator_view import AllocatorView
from tui.holders_view import HoldersView
from tui.lifetimes_view import LifetimesView
from tui.story_screen import StoryScreen


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    with torch.record() as tr:
        m(torch.randn(32, 64)).sum().backward()
    return TraceModel.from_trace(tr)


class Host(App):
    def __init__(self, model, size=(100, 20)):
        super().__init__()
        self.model = model

    def compose(self):
        lv = LifetimesView(self.model, id="lt")
        yield lv
        yield HoldersView(self.model, lv.lifetimes, id="ho")
        yield AllocatorView(self.model, id="al")


async def test_lifetimes_draws_the_largest_bands_and_tells_the_selected_story(model):
    app = Host(model)
    async with app.run_test(size=(100, 40)) as pilot:
        lv = app.query_one(LifetimesView)
        lv.styles.height = 16
        lv.index = 40
        await pilot.pause()
        lines = lv.render().plain.splitlines()
        peak_i, peak_b = model.memory.peak_in(0, len(model))
        assert lines[0].startswith(f"#0–#{len(model) - 1} · peak {nbytes(peak_b)} at #{peak_i}")
        shown = lv.current_bands(16 - 2).top
        biggest = max(lv.lifetimes(), key=lambda lt: lt.bytes)
        assert biggest in shown
        lv.focus()
        await pilot.press("down", "down")
        assert lv.selected == 2
        await pilot.press("enter")                           # NOTE [ A storage's story ] rule 1
        story = app.screen
        assert isinstance(story, StoryScreen)
        text = str(story.query_one("#story-text").render())
        assert text.splitlines() == describe(shown[2])
        await pilot.press("up")                              # rule 2: the band above, the view's selection too
        assert lv.selected == 1
        assert str(story.query_one("#story-text").render()).splitlines() == describe(shown[1])
        await pilot.press("escape")
        assert app.screen is not story
        await pilot.hover(LifetimesView, offset=(5, 1))      # hovering a band says where it came from
        top = shown[0]
        life = f"#{top.start}–#{top.end}" if top.end is not None else f"#{top.start} to the end"
        assert lv.tooltip.startswith(f"{nbytes(top.bytes)} {top.category_at(40)} · {top.made_by or 'made before recording'}")
        assert f"events {life} ·" in lv.tooltip
        await pilot.click(LifetimesView, offset=(5, 1))      # the first band's row
        assert lv.selected == 0 and not isinstance(app.screen, StoryScreen)
        await pilot.click(LifetimesView, offset=(5, 1))      # again, on the band selected: its story
        assert isinstance(app.screen, StoryScreen)


async def test_holders_rows_are_replays_and_keys_change_grouping_sort_and_filter(model):
    app = Host(model)
    async with app.run_test(size=(100, 40)) as pilot:
        ho = app.query_one(HoldersView)
        ho.index = 40
        await pilot.pause()
        expect = holders(app.query_one(LifetimesView).lifetimes(), 40, by="op")
        assert [r.name for r in ho.holder_rows] == [r.name for r in expect]
        assert sum(r.own for r in ho.holder_rows) == sum(lt.bytes for lt in alive_at(app.query_one(LifetimesView).lifetimes(), 40))
        ho.focus()
        await pilot.press("b")
        assert ho.by == "line" and "by line" in str(ho.border_subtitle)
        await pilot.press("s")
        assert ho.sort_by == "own"
        await pilot.press("c")
        assert ho.category == "parameter"
        assert sum(r.own for r in ho.holder_rows) == model.memory.live_of("parameter", 40)
        ho.window = (0, len(model))
        await pilot.pause()
        assert ho.at == model.memory.peak_in(0, len(model))[0]
        await pilot.press("b")                             # line -> module phases
        assert ho.by == "module phases" and ho.row_count == len(ho.phase_rows) > 0
        assert [str(c.label) for c in ho.columns.values()][:4] == ["module", "pre-fwd", "post-fwd", "peak-fwd"]


async def test_allocator_view_explains_the_gap_the_replayed_model_has(model):
    app = Host(model)
    async with app.run_test(size=(100, 40)) as pilot:
        al = app.query_one(AllocatorView)
        al.index = 40
        await pilot.pause()
        text = al.render().plain
        g = gap(SegmentsAt(model, "cpu").at(40))
        assert text.startswith(f"cpu at #40: reserved {nbytes(g['reserved'])} = tensors {nbytes(g['requested'])}")
        assert sum(1 for line in text.splitlines() if line.startswith(("small", "large"))) == g["segments"]


async def test_the_trace_screen_cycles_the_memory_views_and_shares_a_window(mlp_trace):

    from replay.windows import presets
    from tui.memory_view import MemoryView

    model = TraceModel.from_trace(mlp_trace)


    async with host_screen(model, "mlp").run_test(size=(120, 40)) as pilot:
        s = pilot.app.screen
        def shown():
            return [sel for sel in ("#memory", "#lifetimes", "#holders", "#allocator") if s.query_one(sel).display]

        assert shown() == ["#memory"]
        for expect in ("#lifetimes", "#holders", "#allocator", "#memory"):
            await pilot.press("m")
            assert shown() == [expect]
            if expect != "#memory":                          # its own keys work at once
                assert s.focused is s.query_one(expect)
        await pilot.press("W")                               # the first preset
        first = presets(model.events)[0]
        assert s.window == (first.lo, first.hi) == s.query_one(LifetimesView).window == s.query_one(MemoryView).window
        await pilot.press("x")
        assert s.window is None
        s.index = 5
        await pilot.press("a")
        s.index = 30
        await pilot.press("e")
        assert s.window == (5, 31) and s.query_one(HoldersView).window == (5, 31)
        await pilot.press("x")
        await pilot.mouse_down(MemoryView, offset=(10, 2))
        await pilot.mouse_up(MemoryView, offset=(40, 2))
        assert s.window is not None and s.window[0] < s.window[1]
        await pilot.press("x", "m")                          # the lifetimes view: a drag across its bands too
        lv = s.query_one(LifetimesView)
        from tui.memory_view import column_starts
        lw = lv.label_width()
        starts = column_starts(0, len(model), lv.size.width - lw)
        await pilot.mouse_down(LifetimesView, offset=(lw + 3, 2))
        await pilot.mouse_up(LifetimesView, offset=(lw + 12, 2))
        await pilot.pause()
        assert s.window == (starts[3], starts[13]) and lv.window == s.window


def test_the_inspector_says_why_a_slot_is_kept_and_what_values_the_output_held():
    from tui.inspector import describe_node
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh())
    with torch.record(values=True) as tr:
        y = m(torch.randn(2, 4))
    model = TraceModel.from_trace(tr)
    tanh = next(n for n, r in model.nodes.items() if r.name == "TanhBackward0")
    text = describe_node(model, tanh, len(model) - 1).plain
    assert "TanhBackward0 keeps 'result' (its own output) because any input's gradient reads it in backward" in text
    a = y.detach().numpy()
    assert f"values    min {a.min():.3g} max {a.max():.3g}" in text


async def test_enter_on_a_holders_row_marks_its_bands_and_selects_the_node_that_made_them(mlp_trace):



    model = TraceModel.from_trace(mlp_trace)


    async with host_screen(model, "mlp").run_test(size=(120, 40)) as pilot:
        s = pilot.app.screen
        s.index = model.memory.peak_index
        await pilot.press("m", "m")                        # the holders view
        ho = s.query_one(HoldersView)
        ho.focus()
        await pilot.pause()
        row = next(k for k, r in enumerate(ho.holder_rows) if r.name not in ("before recording",))
        ho.move_cursor(row=row)
        await pilot.press("enter")
        await pilot.pause()
        chosen = set(ho.holder_rows[row].storages)
        lv = s.query_one(LifetimesView)
        assert lv.highlight == frozenset(chosen)
        assert s.selected is not None and s.selected in model.nodes


async def test_a_trace_without_memory_events_says_so_in_every_memory_view(mlp_trace):
    """Bad input (issue 17): the op and backward events alone; each memory view says what it cannot show."""
    from tui.memory_view import MemoryView

    events = [e for e in mlp_trace.events if e["kind"] not in ("alloc", "free", "category")]
    model = TraceModel(events, dict(mlp_trace.meta))
    async with host_screen(model, "no memory").run_test(size=(120, 40)) as pilot:
        s = pilot.app.screen
        s.index = len(model) - 1
        await pilot.pause()
        assert "No memory in this trace" in str(s.query_one(MemoryView).render())
        for view in (LifetimesView, HoldersView, AllocatorView):
            await pilot.press("m")
            await pilot.pause()
            w = s.query_one(view)
            text = w.get_row_at(0)[0] if view is HoldersView else str(w.render())
            assert "No memory in this trace" in text, view.__name__


async def test_w_starts_from_the_windows_that_hold_the_cursor(mlp_trace):
    from replay.windows import presets

    model = TraceModel.from_trace(mlp_trace)
    ps = presets(model.events)
    i = len(model) * 2 // 3
    holding = [(p.lo, p.hi) for p in ps if p.lo <= i < p.hi]
    assert holding                                     # the fixture's cursor lies in some phase or step
    async with host_screen(model, "mlp").run_test(size=(120, 40)) as pilot:
        s = pilot.app.screen
        s.index = i
        await pilot.press("W")
        assert s.window == holding[0]                 # the outermost window around the cursor
        await pilot.press("W")
        keys = [(p.lo, p.hi) for p in ps]
        assert s.window == keys[(keys.index(holding[0]) + 1) % len(keys)]    # then on in order
        s.index = len(model) - 1
        await pilot.press("x", "W")
        assert s.window == next(((p.lo, p.hi) for p in ps if p.lo <= len(model) - 1 < p.hi), keys[0])


def test_a_long_name_keeps_what_tells_it_apart():
    """NOTE [ Fitting the screen ] rule 4: a module path keeps its end, a placeholder its first word,
    one word its start, other names both ends."""
    from tui.fit import MIN_NAME, fit_name

    assert fit_name("transformer.h.0.mlp.c_fc", 13) == "…h.0.mlp.c_fc"
    assert fit_name("layer_norm (kept for backward: result1)", 13) == "layer_no…lt1)"
    assert fit_name("addmm", 13) == "addmm"
    assert fit_name("transformer", 10) == "transform…" and fit_name("transformer", 11) == "transformer"
    assert fit_name("embedding_bag2", 10) == "embedd…ag2"                  # not one word of letters: both ends
    assert fit_name("(top level)", 10) == "(top)" and fit_name("(top level)", 11) == "(top level)"
    assert len(fit_name("nll_loss (kept for backward: total_weight)", 3)) == MIN_NAME


@pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_holders_numbers_stay_on_screen(size):
    """At 80×24 every row's own and total bytes and count are in the panel, beside a shortened name."""
    torch.manual_seed(0)
    lin, ln = torch.nn.Linear(16, 16), torch.nn.LayerNorm(16)
    with torch.record() as tr:
        torch.nn.functional.cross_entropy(ln(lin(torch.randn(4, 16))), torch.tensor([1, 2, 3, 4])).backward()
    model = TraceModel.from_trace(tr)
    async with host_screen(model, "long names").run_test(size=size) as pilot:
        s = pilot.app.screen
        s.index = model.memory.peak_index
        await pilot.press("m", "m")
        await pilot.pause()
        ho = s.query_one(HoldersView)
        assert any(len(r.name) > 30 for r in ho.holder_rows)     # "layer_norm (kept for backward: ...)"
        from textual.geometry import Region
        lines = [strip.text for strip in ho.render_lines(Region(0, 0, ho.size.width, ho.size.height))]
        rows = [line.strip("│ ▂▁▃▄▅▆▇█") for line in lines if "KiB" in line or " B " in line]
        assert len(rows) == min(len(ho.holder_rows), ho.size.height - 1) > 3, lines
        for r, line in zip(ho.holder_rows, rows):
            cells = [c.strip() for c in line.split("  ") if c.strip()]
            assert cells[1:4] == [nbytes(r.own), nbytes(r.total), str(r.count)], (line, r)
            assert r.name.startswith(cells[0].split("…")[0]), (line, r.name)


async def test_module_phases_on_a_narrow_panel_show_forward_then_backward_three(model):
    """NOTE [ Fitting the screen ] rule 5: at 80×24 the six figures do not fit beside a name; b shows
    the forward three, then the backward three, then the next rows; each cell is the replayed figure."""
    from replay.module_memory import module_memory
    from replay.words import short_bytes

    rows = module_memory(model.events, 0, len(model), model.memory)
    assert len(rows) == 4                      # the Sequential and its three modules
    async with host_screen(model, "mlp").run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        await pilot.press("m", "m")
        ho = s.query_one(HoldersView)
        assert s.focused is ho
        while ho.by != "module phases":
            await pilot.press("b")
        await pilot.pause()
        seen = {}
        for half, fields in (("forward", ("pre_fwd", "post_fwd", "peak_fwd")),
                             ("backward", ("pre_bwd", "peak_bwd", "post_bwd"))):
            assert ho.phase_half == half and str(ho.border_subtitle).strip().startswith(f"{half} phases")
            assert [str(c.label) for c in ho.columns.values()] == ["module", *(f.split("_")[0] for f in fields)]
            for k, r in enumerate(rows):
                cells = [str(c) for c in ho.get_row_at(k)][1:]
                want = ["–" if getattr(r, f) is None else short_bytes(getattr(r, f)) for f in fields]
                if cells != want:         # the full form when it fits
                    want = ["–" if getattr(r, f) is None else nbytes(getattr(r, f)) for f in fields]
                assert cells == want, (half, r.module)
            seen[half] = [str(c) for c in ho.get_row_at(0)]
            assert all(len(str(c.label)) + 2 <= ho.size.width for c in ho.columns.values())
            last = list(ho.columns.values())[-1]
            assert sum(c.get_render_width(ho) for c in ho.columns.values()) <= ho.size.width - 2, last.label
            await pilot.press("b")
        assert seen["forward"] != seen["backward"] and ho.by != "module phases"


async def test_a_memory_view_names_its_keys_in_the_footer_and_a_window_says_one_notice(mlp_trace):
    """NOTE [ Memory views ] rules 1 and 6: m gives the lifetimes view the keyboard and the footer names
    its keys and the window's; W then leaves one notice, naming the preset and the peak inside it."""
    from replay.windows import presets

    model = TraceModel.from_trace(mlp_trace)
    async with host_screen(model, "mlp").run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        await pilot.press("p", "m")
        shown = {b.binding.description for b in s.active_bindings.values() if b.binding.show}
        assert {"Band", "Story", "Window", "Next view"} <= shown
        await pilot.press("W")
        await pilot.pause()
        lo, hi = s.window
        label = next(p.label for p in presets(model.events) if (p.lo, p.hi) == (lo, hi))
        peak_i, peak_b = model.memory.peak_in(lo, hi)
        texts = [n.message for n in pilot.app._notifications]
        assert texts == [f"Window: {label} (#{lo}–#{hi - 1}): peak {nbytes(peak_b)} at event #{peak_i}"]


async def test_a_story_goes_to_the_event_that_made_its_storage_and_the_one_that_freed_it(mlp_trace):
    """NOTE [ A storage's story ] rule 2: g closes the story with the cursor on the making op, f on the free."""
    model = TraceModel.from_trace(mlp_trace)
    async with host_screen(model, "mlp").run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        await pilot.press("p", "m")
        lv = s.query_one(LifetimesView)
        await pilot.pause()
        top = lv.current_bands(max(1, lv.size.height - 2)).top
        lv.selected = next(k for k, b in enumerate(top) if b.made_at is not None and b.end is not None)
        await pilot.pause()
        lt = lv.selected_lifetime()
        for key, want, kinds in (("g", lt.made_at, ("op",)), ("f", lt.end, ("free",))):
            await pilot.press("enter")
            assert isinstance(pilot.app.screen, StoryScreen)
            await pilot.press(key)
            await pilot.pause()
            assert pilot.app.screen is s and s.index == want and model.events[want]["kind"] in kinds
            if key == "g":
                assert model.events[want]["op"] == lt.made_by
            else:
                assert model.events[want]["storage"] == lt.storage


async def test_the_split_off_a_narrow_holders_table_is_the_highlighted_rows_in_the_subtitle(mlp_trace):
    """NOTE [ Fitting the screen ] rule 6: at 80×24 the split column is off screen; the subtitle gives the
    highlighted row's split (its categories and bytes, largest first) and follows the cursor."""
    from replay.words import short_bytes

    model = TraceModel.from_trace(mlp_trace)
    async with host_screen(model, "mlp").run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        s.index = model.memory.peak_index
        await pilot.press("m", "m")
        ho = s.query_one(HoldersView)
        await pilot.pause()
        assert ho._split_hidden and len(ho.holder_rows) >= 2
        seen = set()
        for k in range(len(ho.holder_rows)):
            ho.move_cursor(row=k)
            await pilot.pause()
            split = sorted(ho.holder_rows[k].split.items(), key=lambda kv: -kv[1])
            want = " ".join(f"{c[:5]} {short_bytes(b)}" for c, b in split)
            assert str(ho.border_subtitle) == f" {ho.by}, {ho.sort_by} · {want} "
            seen.add(want)
        assert len(seen) >= 2                   # rows of different splits: the subtitle did follow


async def test_band_labels_give_columns_up_to_the_timeline_on_a_narrow_panel(mlp_trace):
    """NOTE [ Fitting the screen ] rule 7: at 80×24 the labels take 15 columns in short bytes and the
    timeline the rest; on a wide panel 24 columns in full bytes."""
    from replay.words import short_bytes
    from tui.lifetimes_view import LABEL, NARROW_LABEL

    model = TraceModel.from_trace(mlp_trace)
    for size, lw, fmt in (((80, 24), NARROW_LABEL, lambda b: f"{short_bytes(b):>5}"),
                          ((160, 40), LABEL, lambda b: f"{nbytes(b):>8}")):
        async with host_screen(model, "mlp").run_test(size=size) as pilot:
            s = pilot.app.screen
            await pilot.press("p", "m")
            await pilot.pause()
            lv = s.query_one(LifetimesView)
            assert lv.label_width() == lw
            first = lv.render().plain.splitlines()[1]
            top = lv.current_bands(max(1, lv.size.height - 2)).top[0]
            assert first[:lw].startswith(" " + fmt(top.bytes) + " ")
            assert len(first) == lv.size.width                 # label and timeline fill the panel


async def test_the_chart_draws_the_events_of_its_last_catch_up_until_the_next(mlp_trace):
    """A step while a first open or a run folds events in works out no new columns: the chart draws
    the events it had at its last reload (NOTE [ A first open ] rule 3), then all of them."""
    from tui.memory_view import MemoryView, columns

    half = len(mlp_trace.events) // 2
    model = TraceModel(list(mlp_trace.events[:half]), dict(mlp_trace.meta))
    async with host_screen(model, "mlp").run_test(size=(100, 30)) as pilot:
        s = pilot.app.screen
        mv = s.query_one(MemoryView)
        await pilot.pause()
        w = mv.size.width
        assert mv._columns(w, 0, half) == columns(model, w, 0, half)
        model.extend(list(mlp_trace.events[half:]))
        s.index = half - 2
        await pilot.pause()
        assert mv._range() == (0, half) and mv._cols_key == (w, 0, half, half)
        assert mv.peak_in(0, half) == model.memory.peak_in(0, half)
        s.reload_panels()
        await pilot.pause()
        n = len(mlp_trace.events)
        assert mv._range() == (0, n) and mv._cols == columns(model, w, 0, n)


async def test_keys_pressed_together_leave_one_notice(mlp_trace):
    """``notice``: m three times in one burst shows one toast, the last view's."""
    from textual.widgets._toast import Toast

    model = TraceModel.from_trace(mlp_trace)
    async with host_screen(model, "mlp").run_test(size=(120, 36), notifications=True) as pilot:
        await pilot.pause()
        for _ in range(3):                      # handled one after the other before any refresh
            pilot.app.screen.action_memory_mode()
        await pilot.pause(0.2)
        assert [n.message for n in pilot.app._notifications] == ["Memory panel: allocator (m: next view)"]
        toasts = list(pilot.app.screen.query(Toast))
        assert len(toasts) == 1 and "allocator" in str(toasts[0]._notification.message)
