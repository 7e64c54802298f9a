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


class GraphPicture:
    """DOT source for one picture; ``render`` needs Graphviz's ``dot``, ``source`` does not."""

    def __init__(self, source: str, state=None):
        self.source = source
        self.state = state

    def __str__(self):
        return self.source

    def pipe(self, format: str = "svg") -> bytes:
        import graphviz
        if format not in FORMATS:
            raise ValueError(f"unsupported image format {format!r}: choose one of {', '.join(FORMATS)}")
        try:
            return graphviz.pipe("dot", format, self.source.encode("utf-8"), quiet=True)
        except graphviz.ExecutableNotFound:
            raise GraphvizNotFound(INSTALL_HINT) from None
        except graphviz.CalledProcessError as e:
            err = (e.stderr or b"").decode("utf-8", "replace").strip()
            raise RuntimeError(f"Graphviz failed to render the graph: {err}") from None

    def render(self, path, format: str | None = None) -> str:
        """Write the picture to ``path``; the format comes from its suffix (.svg/.png/.pdf, or .dot/.gv for DOT)."""
        path = os.fspath(path)
        fmt = format or os.path.splitext(path)[1].lstrip(".").lower()
        if fmt in ("dot", "gv"):
            data = self.source.encode("utf-8")
        elif fmt in FORMATS:
            data = self.pipe(fmt)
        else:
            raise ValueError(f"cannot tell the image format of {path!r}: use a .svg, .png or .pdf "
                             "(or .dot/.gv for the DOT text) file name")
        d = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(d):
            raise FileNotFoundError(f"the folder {d!r} for {path!r} does not exist")
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return path

    def _repr_svg_(self):
        return self.pipe("svg").decode("utf-8")
