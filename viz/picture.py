"""A rendered-or-renderable picture: DOT text, and Graphviz's ``dot`` to turn it into svg/png/pdf.

Only rendering needs the ``dot`` binary (and the ``graphviz`` Python package, imported
when rendering); the DOT text is plain Python.
"""
from __future__ import annotations

import os

INSTALL_HINT = ("Graphviz's `dot` program was not found on PATH; it is needed to render the graph to an image. "
                "Install it with `sudo apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS) "
                "or from https://graphviz.org/download/. The DOT text is still available (`.source`, or save "
                "it with a .dot/.gv file name).")

FORMATS = ("svg", "png", "pdf")


class GraphvizNotFound(RuntimeError):
    """Raised by rendering when the Graphviz ``dot`` binary is missing."""


class GraphvizTimeout(RuntimeError):
    """Graphviz's ``dot`` ran past its time budget (and was stopped)."""


def default_budget(n_nodes: int) -> float:
    """Seconds Graphviz gets by default: 10 for small graphs, less as they grow (4,000 / nodes, at
    least 2), since its crossing minimisation grows much faster than the graph (NOTE [ Pictures that
    always finish ] rule 1)."""
    return max(2.0, min(10.0, 4000.0 / max(1, n_nodes)))


def _check_folder(path: str) -> None:
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise FileNotFoundError(f"the folder {d!r} for {path!r} does not exist")


def _dot_with_timeout(source: str, fmt: str, timeout: float) -> bytes:
    """Run ``dot -T<fmt>`` on ``source``; stop it after ``timeout`` seconds."""
    import shutil
    import subprocess
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizNotFound(INSTALL_HINT)
    try:
        done = subprocess.run([exe, f"-T{fmt}"], input=source.encode("utf-8"), capture_output=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired:
        raise GraphvizTimeout(f"Graphviz took longer than {timeout:g} s") from None
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip()
        raise RuntimeError(f"Graphviz failed to render the graph: {err}")
    return done.stdout


class GraphPicture:
    """DOT source for one picture; ``render`` needs Graphviz's ``dot``, ``source`` does not."""

    def __init__(self, source: str, state=None):
        self.source = source
        self.state = state

    def __str__(self):
        return self.source

    def pipe(self, format: str = "svg", timeout: float | None = None) -> bytes:
        """The picture in ``format`` from Graphviz's ``dot``; past ``timeout`` seconds, ``GraphvizTimeout``."""
        import graphviz
        if format not in FORMATS:
            raise ValueError(f"unsupported image format {format!r}: choose one of {', '.join(FORMATS)}")
        if timeout is not None:
            return _dot_with_timeout(self.source, format, timeout)
        try:
            return graphviz.pipe("dot", format, self.source.encode("utf-8"), quiet=True)
        except graphviz.ExecutableNotFound:
            raise GraphvizNotFound(INSTALL_HINT) from None
        except graphviz.CalledProcessError as e:
            err = (e.stderr or b"").decode("utf-8", "replace").strip()
            raise RuntimeError(f"Graphviz failed to render the graph: {err}") from None

    def render(self, path, format: str | None = None, time_budget: float | None = None) -> str:
        """Write the picture to ``path``; the format comes from its suffix (.svg/.png/.pdf, or .dot/.gv for DOT).

        ``time_budget``: seconds Graphviz may take before the picture is drawn with glassgrad's own
        layout instead (NOTE [ Pictures that always finish ] in viz/quick_layout.py); ``self.fallback``
        then says so.
        """
        path = os.fspath(path)
        fmt = format or os.path.splitext(path)[1].lstrip(".").lower()
        self.fallback = None
        if time_budget is None and self.state is not None:
            time_budget = default_budget(len(self.state.nodes))
        if fmt in ("dot", "gv"):
            data = self.source.encode("utf-8")
        elif fmt in FORMATS:
            try:
                data = self.pipe(fmt, timeout=time_budget)
            except GraphvizTimeout:
                if self.state is None:
                    raise
                from . import quick_layout
                self.fallback = (f"Graphviz did not finish in {time_budget:g} s; drawn with glassgrad's quick "
                                 "layered layout (give Graphviz longer with --time-budget)")
                if fmt == "svg":
                    data = quick_layout.svg(self.state, self.fallback).encode("utf-8")
                else:
                    _check_folder(path)
                    quick_layout.draw(self.state, self.fallback, path, fmt)
                    return path
        else:
            raise ValueError(f"cannot tell the image format of {path!r}: use a .svg, .png or .pdf "
                             "(or .dot/.gv for the DOT text) file name")
        _check_folder(path)
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return path

    def _repr_svg_(self):
        return self.pipe("svg").decode("utf-8")
