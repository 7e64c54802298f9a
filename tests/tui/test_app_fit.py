"""The app at 80×24 and 120×36: the header keeps ``? help``, the memory legend keeps every number,
titles fit their borders, and a recompute is drawn on (and centred on) the boxes the learner knows."""
import pytest
from rich.text import Text

from replay.words import nbytes
from tests.tui.conftest import right_answer_keys
from tui.app import GlassgradApp
from tui.fit import fit_status, fit_title
from tui.graph_legend import GraphLegend, pack
from tui.graph_marks import MARKS
from tui.graph_view import GraphView
from tui.help_screen import help_text
from tui.memory_view import SHORT, MemoryView, wrap_items
from tui.narrative import narrow_tables

SIZES = [(80, 24), (120, 36)]


# ---------------------------------------------------------------- pure functions


def test_status_line_gives_up_words_in_order_and_keeps_help():
    args = ("Lesson 5 · Activation checkpointing", "Lesson 5", (212, 2238), "backward", "7.75 MiB live", "paused")
    assert fit_status(*args, 120, True) == (" Lesson 5 · Activation checkpointing │ event #212 of 2238 │ backward │ "
                                            "7.75 MiB live │ paused │ ? help")
    assert fit_status(*args, 80, True) == " Lesson 5 │ #212/2238 │ backward │ 7.75 MiB live │ ? help"
    assert fit_status(*args, 41, True) == " Lesson 5 │ #212/2238 │ backward │ ? help"
    assert fit_status(*args, 40, True) == " Lesson 5 │ #212/2238 │ ? help"
    assert fit_status(*args, 20, True) == " #212/2238 │ ? help"
    assert fit_status(*args, 10, True) == " ? help"


def test_titles_take_the_longest_wording_that_fits():
    w = ["Memory · live bytes, step 1 (z: all)", "Memory · step 1 (z: all)", "Memory · step 1"]
    assert fit_title(w, 60) == w[0]
    assert fit_title(w, 40) == w[1]            # 40 less the border's 6: the second wording's 24 fit
    assert fit_title(w, 21) == w[2]
    assert fit_title(w, 12) == "Memor…"          # 6 wide: the last wording, cut


def test_legend_items_are_never_split():
    assert pack(["ab", "cd", "ef"], 5, 3) == [[0, 1], [2]]
    assert wrap_items([2, 2, 2], 5) == [[0, 1], [2]]
    assert pack(["aaaa", "bbbb", "cccc", "dddd"], 20, 1) == [[0, 1, 2, 3]]
    # one line of 14: "aaaa" and the note "+3 ? all marks" would take 19, so the note alone
    assert pack(["aaaa", "bbbb", "cccc", "dddd"], 14, 1) == [[-1]]
    assert pack(["aaaa"] * 6, 20, 1) == [[0, -1]]               # "aaaa +5 ? all marks"


def test_a_table_too_wide_for_the_panel_becomes_a_list():
    md = "Before.\n\n| node | saves | bytes |\n| --- | --- | --- |\n| AddmmBackward0 | mat1 [32, 64] | 8,192 |\n"
    assert narrow_tables(md, 80) == md                        # wide enough: the table stays
    assert narrow_tables(md, 20) == ("Before.\n\n**node · saves · bytes**\n\n"
                                     "- AddmmBackward0 · mat1 [32, 64] · 8,192\n")


def test_help_explains_every_mark_of_the_graph():
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(help_text())
    text = console.export_text()
    for m in MARKS:
        assert m.short in text and m.sample.strip() in text
    for word in ("double border", "↻", "✗ dropped", "✝ freed", "yellow", "green", "red", "purple", "grey", "blue"):
        assert word in text


# ---------------------------------------------------------------- the app


def _legend_text(mv: MemoryView) -> str:
    lines = mv.render().plain.splitlines()
    k = next(k for k, line in enumerate(lines) if set(line) <= set("─▲△┃"))
    return "\n".join(lines[k + 1:])


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lesson", [1, 2, 5, 7, 8])
async def test_header_legend_and_titles_fit(recorded_lesson, lesson, size):
    """The lessons whose legend was cut: every category's bytes at the cursor, both peaks, ``? help``."""
    lr = recorded_lesson(lesson)
    async with GlassgradApp("lesson", lesson_run=lr).run_test(size=size) as pilot:
        await pilot.pause()
        s = pilot.app.screen
        status = str(s.query_one("#status").render())
        assert status.rstrip().endswith("│ ? help") and len(status.rstrip()) <= size[0]
        mv = s.query_one(MemoryView)
        legend = _legend_text(mv)
        mem, i = s.model.memory, s.index
        r = lr.steps[s.step]
        for cat, b in mem.live_at(i).items():
            if b:
                assert f"{SHORT.get(cat, cat)} {nbytes(b)}" in legend, (cat, legend)
        assert f"now {nbytes(mem.total[i])}" in legend
        assert nbytes(mem.peak_in(r.start, r.end)[1]) in legend
        for w in s.query("#graph, #memory, #narrative"):
            title = w.border_title.plain if isinstance(w.border_title, Text) else w.border_title
            assert "…" not in title and len(title) <= w.size.width - 6, title


async def test_recompute_is_drawn_on_the_forward_boxes_and_the_view_goes_there(recorded_lesson):
    """Lesson 5 step 3 starts at a region's recompute: at 80×24 the region is taller than the view,
    so each event keeps whole the forward box it is about (the k-th recompute op rebuilds the k-th
    forward node of the region, same name), else the one rebuilt last (else the region's first);
    the rebuilt box is lit, double-bordered and marked ↻, and no box of its own appears."""
    lr = recorded_lesson(5)
    async with GlassgradApp("lesson", lesson_run=lr).run_test(size=(80, 24)) as pilot:
        await pilot.press("right_square_bracket", "right_square_bracket", *right_answer_keys(lr, 2))
        await pilot.pause()                     # the step plays once its question is answered
        s = pilot.app.screen
        m, g = s.model, s.query_one(GraphView)
        begin = s.index
        assert m.events[begin]["kind"] == "recompute_begin"
        reg = m.regions()[m.events[begin]["region"]]
        end = next(j for j in range(begin, len(m)) if m.events[j]["kind"] == "recompute_end")
        ops = [j for j in range(begin, end) if m.events[j]["kind"] == "op"]
        assert [m.events[j]["node"]["name"] for j in ops] == [m.nodes[n].name for n in reg.nodes]
        forward_of = {m.events[j]["node"]["id"]: fwd for j, fwd in zip(ops, reg.nodes)}
        assert not set(forward_of) & set(forward_of.values())       # the recompute's nodes are new ones

        def in_view(nid):
            x, y, w, h = g._lay.rects[nid]
            sx, sy = g.scroll_offset
            vw, vh = g.scrollable_content_region.size
            return sx <= x and x + w <= sx + vw and sy <= y and y + h <= sy + vh

        last = reg.nodes[0]
        for i in range(begin, end + 1):
            assert s.index == i
            e = m.events[i]
            named = e.get("node")
            named = named.get("id") if isinstance(named, dict) else named
            about = forward_of.get(named)
            assert in_view(about or last), (i, e)
            if e["kind"] == "op":
                assert g.current == about and about not in forward_of
                assert not set(forward_of) & set(g._lay.rects)        # no box of its own
                x, y, w, _ = g._lay.rects[about]
                sx, sy = g.scroll_offset
                top = g.render_line(y - sy).text[x - sx: x - sx + w]
                assert top.startswith("╔") and top.endswith("╗")
                assert "↻" in g.render_line(y - sy + 2).text[x - sx: x - sx + w]
                assert "↻ recomputed" in s.query_one(GraphLegend).render().plain
                last = about
            await pilot.press("right")


async def test_a_recompute_region_that_fits_is_centred_whole(recorded_lesson):
    lr = recorded_lesson(5)
    async with GlassgradApp("lesson", lesson_run=lr).run_test(size=(160, 50)) as pilot:
        await pilot.press("right_square_bracket", "right_square_bracket", *right_answer_keys(lr, 2))
        await pilot.pause()                     # the step plays once its question is answered
        s = pilot.app.screen
        g = s.query_one(GraphView)
        reg = s.model.regions()[s.model.events[s.index]["region"]]
        sx, sy = g.scroll_offset
        vw, vh = g.scrollable_content_region.size
        assert reg.nodes
        for nid in reg.nodes:
            x, y, w, h = g._lay.rects[nid]
            assert sx <= x and x + w <= sx + vw and sy <= y and y + h <= sy + vh
