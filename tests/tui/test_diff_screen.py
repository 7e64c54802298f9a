"""glassgrad diff in the app: one cursor over both runs, the tables' numbers, the known differences."""
import pytest

import engine as torch
from engine.utils.checkpoint import checkpoint
from replay.diff import diff
from replay.words import nbytes
from tui.app import GlassgradApp
from tui.diff_chart import DiffChart
from tui.diff_screen import DiffScreen
from tui.help_screen import HelpScreen

BATCH = 3


def _mlp(ckpt: bool):
    """A tiny MLP's step; with ``ckpt`` its first Linear+Tanh runs under non-reentrant checkpoint."""
    torch.manual_seed(0)
    first = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh())
    last = torch.nn.Linear(4, 2)
    x = torch.randn(BATCH, 4)
    with torch.record() as tr:
        h = checkpoint(first, x, use_reentrant=False) if ckpt else first(x)
        last(h).sum().backward()
    return tr


@pytest.fixture(scope="module")
def runs():
    return _mlp(False), _mlp(True)


def live_by_hand(trace, i):
    """{category: bytes} alive after event i, from the trace's alloc/free/category events alone."""
    live = {}
    for dev in (trace.meta.get("memory_at_start") or {}).values():
        for c, b in (dev.get("by_category") or {}).items():
            live[c] = live.get(c, 0) + b
    for e in trace.events[:i + 1]:
        if e["kind"] == "alloc":
            live[e["category"]] = live.get(e["category"], 0) + e["bytes"]
        elif e["kind"] == "free":
            live[e["category"]] = live.get(e["category"], 0) - e["bytes"]
        elif e["kind"] == "category":
            live[e["old"]] = live.get(e["old"], 0) - e["bytes"]
            live[e["new"]] = live.get(e["new"], 0) + e["bytes"]
    return {c: b for c, b in live.items() if b}


def table_rows(table):
    """{first cell: [A, B, B−A]} of a rich Table drawn by the screen."""
    cols = [[str(c) for c in col._cells] for col in table.columns]
    return {row[0]: list(row[1:]) for row in zip(*cols)}


def app(a, b, names=("plain.jsonl", "ckpt.jsonl")):
    return GlassgradApp("screen", first_screen=DiffScreen(diff(a, b), names))


def check_cursor(s, a, b):
    """Both charts follow the one cursor; the table at the cursor gives each trace's live bytes there."""
    i, j = s.d.alignment.at(s.pos)
    assert [ch.pos for ch in s.query(DiffChart)] == [s.pos, s.pos]
    la, lb = live_by_hand(a, i), live_by_hand(b, j)
    rows = table_rows(s.cursor_table())
    short = {"parameter": "param", "gradient": "grad", "activation": "act", "optimizer": "optim"}
    for c in set(la) | set(lb):
        x, y = la.get(c, 0), lb.get(c, 0)
        assert rows[short.get(c, c)][:2] == [nbytes(x), nbytes(y)]
    ta, tb = sum(la.values()), sum(lb.values())
    assert rows["total"][:2] == [nbytes(ta), nbytes(tb)]
    assert rows["total"][2] == ("0" if ta == tb else f"{'+' if tb > ta else '-'}{nbytes(abs(tb - ta))}")
    status = str(s.query_one("#status").render())
    assert f"A #{i}" in status and f"B #{j}" in status and status.rstrip().endswith("? help")
    return i, j


async def test_one_cursor_moves_both_runs_to_aligned_steps(runs):
    a, b = runs
    async with app(a, b).run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        al = s.d.alignment
        assert check_cursor(s, a, b) == (0, 0)
        for k, (ra, rb, key) in enumerate(al.segments[1:], 1):   # n: each step starts on both at once
            await pilot.press("n")
            assert s.pos == al.starts[k] and check_cursor(s, a, b) == (ra[0], rb[0])
        await pilot.press("p")
        assert s.pos == al.starts[-2]
        await pilot.press("right", "right", "l")
        assert s.pos == al.starts[-2] + 3
        check_cursor(s, a, b)
        await pilot.press("left")
        assert s.pos == al.starts[-2] + 2
        await pilot.press("end")
        assert check_cursor(s, a, b) == (len(a.events) - 1, len(b.events) - 1)
        await pilot.press("home")
        assert s.pos == 0
        for side, key in ((0, "a"), (1, "b")):                  # a / b: each run's live-bytes peak
            await pilot.press(key)
            assert check_cursor(s, a, b)[side] == s.d.peaks["AB"[side]]["live"][0]
        await pilot.press("right_square_bracket")
        check_cursor(s, a, b)


async def test_a_click_on_either_chart_moves_the_one_cursor(runs):
    a, b = runs
    async with app(a, b).run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        for sel, x in (("#diff-b", 20), ("#diff-a", 5)):
            chart = s.query_one(sel, DiffChart)
            await pilot.click(sel, offset=(1 + x, 2))
            assert s.pos == chart.position_of(x) and s.pos > 0
            check_cursor(s, a, b)


async def test_checkpointing_shows_its_dropped_and_recomputed_nodes_and_the_peaks(runs):
    a, b = runs
    async with app(a, b).run_test(size=(120, 36)) as pilot:
        s = pilot.app.screen
        assert not s.query_one("#diff-note").display          # the same program: everything aligns
        text = "\n".join(s.graph_lines())
        # checkpoint(first) keeps only its input: Tanh's output is dropped, and backward runs first's
        # forward again (t, addmm, tanh: TBackward0, AddmmBackward0, TanhBackward0)
        assert s.d.dropped == {"A": [], "B": [("TanhBackward0", "result", BATCH * 4 * 4)]}
        assert s.d.recomputed == {"A": [], "B": ["TBackward0", "AddmmBackward0", "TanhBackward0"]}
        assert f"B: checkpointing dropped 1 ({nbytes(BATCH * 4 * 4)}):\n  TanhBackward0.result 48 B" in text
        assert "B: recomputed 3: TBackward0, AddmmBackward0, TanhBackward0" in text
        assert "the same forward nodes" in text
        peaks = table_rows(s.peaks_text().renderables[0])
        for who, col in (("A", 0), ("B", 1)):
            tr = (a, b)[col]
            totals = [sum(live_by_hand(tr, i).values()) for i in range(len(tr.events))]
            acts = [live_by_hand(tr, i).get("activation", 0) for i in range(len(tr.events))]
            assert peaks["live ▲"][col] == nbytes(max(totals)) and peaks["act △"][col] == nbytes(max(acts))


async def test_two_different_programs_say_they_do_not_align_and_still_draw_both(runs):
    a, _ = runs
    with torch.record() as other:
        (torch.ones(3, requires_grad=True) * 2).exp().sum().backward()
    async with app(a, other, ("mlp.jsonl", "other.jsonl")).run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        note = s.query_one("#diff-note")
        assert note.display and "the runs do not align" in str(note.render())
        assert "different programs" in str(note.render())
        for sel in ("#diff-a", "#diff-b"):
            drawn = s.query_one(sel, DiffChart).render().plain
            assert any(ch in drawn for ch in "▁▂▃▄▅▆▇█") and "┃" in drawn
        await pilot.press("end")
        check_cursor(s, a, other)
        await pilot.press("question_mark")
        assert isinstance(pilot.app.screen, HelpScreen)
        await pilot.press("escape", "q")
    assert pilot.app.return_code == 0


def test_glassgrad_diff_opens_the_screen_in_a_terminal_and_prints_without_one(runs, tmp_path, monkeypatch, capsys):
    from tui import cli

    a, b = runs
    a.save(tmp_path / "a.jsonl")
    b.save(tmp_path / "b.jsonl")
    opened = []
    monkeypatch.setattr(GlassgradApp, "run", lambda self: opened.append(self.first_screen))
    monkeypatch.setattr(cli, "interactive", lambda: True)
    assert cli.main(["diff", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == 0
    assert isinstance(opened[0], DiffScreen) and opened[0].names == ("a.jsonl", "b.jsonl")
    assert capsys.readouterr().out == ""
    assert cli.main(["diff", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--text"]) == 0
    out = capsys.readouterr().out
    assert len(opened) == 1 and out.startswith("A = a.jsonl") and "B: recomputed 3 nodes" in out


async def test_each_chart_column_is_stacked_by_category_in_the_memory_panels_colours(runs):
    """At the cursor, each chart's column holds that run's categories, bottom up, each its live bytes
    tall (less the shared floor), in the colour the table names it in."""
    a, b = runs
    async with app(a, b).run_test(size=(120, 36)) as pilot:
        s = pilot.app.screen
        for side, key in ((0, "a"), (1, "b")):
            await pilot.press(key)
            ch = s.query(DiffChart)[side]
            i = s.indices()[side]
            live = live_by_hand((a, b)[side], i)
            scale = (ch.size.height - 1) * 8 / ch.top
            stack = ch.stack(i, scale)
            cats = ch.replay.categories
            want, acc = [], 0
            for k, c in enumerate(cats):              # bottom up in the replay's category order
                if live.get(c, 0) > 0:
                    acc += live[c]
                    if acc > ch.floor:
                        want.append(((acc - ch.floor) * scale, k))
            assert acc == sum(live.values()) and len(stack) == len(want) > 1
            assert [k for _, k in stack] == [k for _, k in want]
            assert [e for e, _ in stack] == pytest.approx([e for e, _ in want])
            colours = {span.style.color for span in ch.render().spans if hasattr(span.style, "color")}
            assert {ch.category_style(cats[k]).color for _, k in stack} <= colours
            named = {c.plain: c.style for c in s.cursor_table().columns[0]._cells if hasattr(c, "plain")}
            assert named["param"] == ch.category_style("parameter") != ch.category_style("activation")
