"""The records panel: a trace about files shows the file's records and storages in place of graph and memory."""
import re

import pytest

import engine as torch
from replay.records import Files
from tui.app import GlassgradApp
from tui.records_view import RecordsView, file_text


def _panel_lines(pilot, widget):
    """The rows of the screen inside ``widget``'s border, as the terminal shows them."""
    strips = pilot.app.screen._compositor.render_strips()
    r = widget.region
    return [strips[y].text[r.x + 1:r.right - 1] for y in range(r.y + 1, r.bottom - 1)]


def _row(lines, name, size):
    """The panel row for record ``name`` of ``size`` bytes (digits, with or without separators)."""
    digits = r"\s+" + r",?".join(re.escape(d) for d in str(size)) + r"(\s|$)"
    hits = [ln for ln in lines if re.search(r"(^|\s)" + re.escape(name) + digits, ln)]
    assert len(hits) == 1, (name, size, lines)
    return hits[0]


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_lesson_6_shows_the_files_records(lesson_run, size):
    lr = lesson_run(6)
    listing = lr.steps[0].values["listing"]          # zipfile's own (name, size) of tiny.pt, read in the lesson
    async with GlassgradApp("lesson", lesson_run=lr).run_test(size=size) as pilot:
        await pilot.pause()
        s = pilot.app.screen
        rv = s.query_one("#records", RecordsView)
        assert rv.display and pilot.app.focused is rv
        assert not s.query_one("#graph").display and not s.query_one("#memory").display
        lines = _panel_lines(pilot, rv)
        assert lines[0].strip() == f"saved tiny.pt: {lr.steps[0].values['file_bytes']:,} bytes"
        wide = size[0] >= 120
        for name, nbytes in listing:                  # every record, in the zip's order, with its size
            _row(lines, name if wide else name.split("/", 1)[1], nbytes)
        rows = [next(k for k, ln in enumerate(lines) if re.search(r"\s" + re.escape(n if wide else n[5:]) + r"\s", ln))
                for n, _ in listing]
        assert rows == sorted(rows)
        if wide:                                      # the storages and the tensors that view them
            text = "\n".join(lines)
            assert "4 storages for 4 tensors" in text
            assert "tiny/data/0 float32 ×12 = 48 B" in text and "0.weight [4, 3]" in text
            assert "tiny/data/3 float32 ×2 = 8 B" in text and "2.bias [2]" in text
        else:
            assert any("10 records in tiny/" in ln for ln in lines)

        # step 3: the load of both.pt, one storage rebuilt for two views
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert s.index == lr.steps[2].focus_index() and s.model.events[s.index]["kind"] == "load"
        lines = _panel_lines(pilot, rv)
        text = "\n".join(lines)
        load = s.model.events[s.index]
        save = [e for e in s.model.events[:s.index] if e["kind"] == "save"][-1]
        (alloc,) = [e for e in s.model.events if e["kind"] == "alloc" and save["seq"] < e["seq"] < load["seq"]]
        assert lines[0].strip() == f"loaded both.pt: {load['bytes']:,} bytes"
        assert _row(lines, "both/data/0" if wide else "data/0", 100000 * 4).lstrip().startswith("✓")
        assert _row(lines, "both/.format_version" if wide else ".format_version", 1).lstrip().startswith("·")
        assert "rebuilt 1 storage for 2 tensors" in text
        assert f"→ storage {alloc['storage']} on cpu" in text
        assert "base [100000]" in text and "window [10] at 10" in text


async def test_a_trace_with_a_graph_keeps_the_graph(mlp_trace):
    async with GlassgradApp("trace", trace=mlp_trace, title="t").run_test(size=(120, 36)) as pilot:
        s = pilot.app.screen
        assert not s.query_one("#records").display and s.query_one("#graph").display


async def test_a_trace_of_a_save_opens_on_the_records(tmp_path):
    with torch.record() as tr:
        torch.save({"w": torch.ones(2, 3)}, tmp_path / "w.pt")
    async with GlassgradApp("trace", trace=tr, title="t").run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        rv = s.query_one("#records")
        assert rv.display and not s.query_one("#graph").display
        assert "No checkpoint file yet." in "\n".join(_panel_lines(pilot, rv))   # event #0: before the save
        await pilot.press("end")
        lines = _panel_lines(pilot, rv)
        assert lines[0].strip() == f"saved w.pt: {(tmp_path / 'w.pt').stat().st_size:,} bytes"
        assert any(re.fullmatch(r"\s*w \[2, 3\]\s*", ln) for ln in lines)


def test_every_line_fits_the_width():
    """NOTE [ Fitting the records table ]: no line is wider than the panel, at any width."""
    ev = {"kind": "load", "path": "/tmp/a_long_file_name.pt", "bytes": 123456789, "tensors": 1, "storages": 1,
          "records": [{"name": "a_long_file_name/.data/serialization_id", "bytes": 40, "data_offset": 123456000,
                       "read": False},
                      {"name": "a_long_file_name/data/0", "bytes": 123450000, "data_offset": 64, "read": True}],
          "storage_records": [{"key": "0", "record": "a_long_file_name/data/0", "storage_type": "FloatStorage",
                               "dtype": "float32", "numel": 30862500, "bytes": 123450000, "location": "cuda:0",
                               "storage": 7, "device": "cpu",
                               "views": [{"name": "encoder.layers.0.self_attn.in_proj_weight", "tensor": 8,
                                          "shape": [3072, 1024], "offset": 0, "stride": [1024, 1]}]}]}
    files = Files([ev])
    for width in range(8, 90):
        lines = file_text(files.at(0), width, files).plain.splitlines()
        assert max(len(ln) for ln in lines) <= width, width
    wide = file_text(files.at(0), 80, files).plain
    assert "· a_long_file_name/.data/serialization_id" in wide and "123,456,000" in wide
    assert "→ storage 7 on cpu (tag cuda:0)" in wide
    narrow = file_text(files.at(0), 40, files).plain
    assert "read 1 of 2 records in a_long_file_name/" in narrow and "✓ data/0" in narrow
