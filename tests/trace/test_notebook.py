"""A trace in a notebook: the engine's HTML table, viz's SVG once viz is imported, rows per event."""
import importlib

import pytest

import engine as torch
from engine import trace_notebook


@pytest.fixture(scope="module")
def trace():
    torch.manual_seed(0)
    m = torch.nn.Linear(4, 3)
    with torch.record() as tr:
        m(torch.randn(2, 4)).sum().backward()
    return tr


def test_the_html_table_says_what_the_run_did(trace):
    s = trace.summary()
    html = trace._repr_html_()
    assert html.startswith("<table><caption>glassgrad trace</caption>")
    assert f"<td>events</td><td>{s['events']:,}</td>" in html
    assert "<td>backward passes</td><td>1</td>" in html
    assert f"at event #{s['peak_seq']['cpu']}" in html


def test_svg_comes_from_viz_once_it_is_imported(trace, monkeypatch):
    monkeypatch.setattr(trace_notebook, "DISPLAY", {})
    assert trace._repr_svg_() is None
    assert "import viz to draw it" in trace._repr_html_()
    viz = importlib.import_module("viz")
    viz.notebook.register()
    svg = trace._repr_svg_()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "import viz" not in trace._repr_html_()
    pic = viz.graph_at(trace)
    assert "AddmmBackward0" in pic.source


def test_records_have_one_row_per_event_with_flat_fields(trace):
    rows = trace.to_records()
    assert len(rows) == len(trace.events)
    assert [r["kind"] for r in rows] == [e["kind"] for e in trace.events]
    op = next(r for r, e in zip(rows, trace.events) if e["kind"] == "op" and e["op"] == "addmm")
    assert op["name"] == "AddmmBackward0" and isinstance(op["node"], int) and op["bytes"] == 2 * 3 * 4
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="needs pandas, which is not installed: pip install pandas"):
            trace.to_dataframe()
    else:
        df = trace.to_dataframe()
        assert list(df.columns) == list(trace_notebook.COLUMNS) and len(df) == len(trace.events)
