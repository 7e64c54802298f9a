"""Pictures inline in a notebook: ``import viz`` makes a Trace display its memory timeline as SVG
(NOTE [ Traces in notebooks ] in engine/trace_notebook.py); ``viz.graph_at(trace, step)`` is a
graph picture that displays itself."""
from __future__ import annotations

import io

from engine import trace_notebook


def memory_svg(trace) -> str:
    """The memory timeline of ``trace`` as an SVG document (matplotlib, Agg)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .memory_plot import memory_figure
    fig = memory_figure(trace)
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    return buf.getvalue()


def register() -> None:
    """Rule 2: Trace._repr_svg_ draws with viz from now on."""
    trace_notebook.DISPLAY["svg"] = memory_svg


def graph_at(trace, step: int | None = None, **kw):
    """The autograd graph at ``step`` (an event index; None: the end); displays itself as SVG."""
    from .graph_dot import graph_picture
    return graph_picture(trace, step, **kw)
