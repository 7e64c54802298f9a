"""A trace in a notebook: an HTML summary, pictures when ``viz`` is imported, and a table of events.

NOTE [ Traces in notebooks ]
1. ``Trace._repr_html_`` is the engine's own: a table of what the run did (events, ops,
   nodes, backward passes, the live-bytes peak per device and where it was). It needs
   nothing beyond the engine.
2. The engine never imports ``viz``; ``viz`` registers its drawing here when it is
   imported (``DISPLAY["svg"] = fn``). Then ``Trace._repr_svg_`` returns the memory
   timeline as SVG; before that it returns None, and a notebook shows the HTML table.
3. ``to_records`` gives one flat dict per event (always available); ``to_dataframe``
   gives the same as a pandas DataFrame and says how to install pandas when it is missing.
"""
from __future__ import annotations

import html

DISPLAY: dict = {}          # rule 2: "svg" -> fn(trace) -> str

COLUMNS = ("seq", "t", "phase", "kind", "op", "name", "node", "storage", "bytes", "category", "device",
           "module", "file", "line", "region")


def _bytes(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def repr_html(trace) -> str:
    """Rule 1."""
    s = trace.summary()
    rows = [("events", f"{s['events']:,}"), ("ops", f"{s['ops']:,}"), ("graph nodes", f"{s['nodes']:,}"),
            ("backward passes", f"{s['backward_passes']:,}"), ("duration", f"{s['duration_s']:.3f} s")]
    for dev, b in s["peak_bytes"].items():
        rows.append((f"live-bytes peak ({dev})", f"{_bytes(b)} at event #{s['peak_seq'][dev]}"))
    for dev, b in s["final_bytes"].items():
        rows.append((f"live at the end ({dev})", _bytes(b)))
    body = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in rows)
    hint = ("" if "svg" in DISPLAY else
            "<p><small>import viz to draw it; trace.to_dataframe() gives one row per event</small></p>")
    return f"<table><caption>glassgrad trace</caption>{body}</table>{hint}"


def repr_svg(trace):
    """Rule 2."""
    fn = DISPLAY.get("svg")
    return None if fn is None or not trace.events else fn(trace)


def to_records(trace) -> list:
    """Rule 3: one flat dict per event, the columns of COLUMNS (None where an event has no such field)."""
    out = []
    for e in trace.events:
        row = {c: e.get(c) for c in COLUMNS}
        if row["name"] is None and isinstance(e.get("node"), dict):
            row["name"] = e["node"].get("name")
        if isinstance(row["node"], dict):
            row["node"] = row["node"].get("id")
        if e.get("kind") == "op" and isinstance(e.get("output"), dict):
            row["storage"] = row["storage"] if row["storage"] is not None else e["output"].get("storage")
            row["bytes"] = row["bytes"] if row["bytes"] is not None else e["output"].get("bytes")
        out.append(row)
    return out


def to_dataframe(trace):
    """Rule 3."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("trace.to_dataframe() needs pandas, which is not installed: pip install pandas "
                          "(trace.to_records() gives the same rows as a list of dicts)") from None
    return pd.DataFrame.from_records(to_records(trace), columns=list(COLUMNS))
