"""Pictures of a recorded trace: the autograd graph (Graphviz) and memory timelines (matplotlib).

Both draw what ``replay`` says a trace holds at a step; viz keeps no model of its own.
"""
from .graph_dot import GraphPicture, GraphvizNotFound, graph_picture, graph_source  # noqa: F401
from .live_graph import make_dot  # noqa: F401
from .notebook import graph_at  # noqa: F401
from .notebook import register as _register_notebook

_register_notebook()     # a Trace now displays its memory timeline inline (NOTE [ Traces in notebooks ])
