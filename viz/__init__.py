"""Pictures of a recorded trace: the autograd graph (Graphviz) and memory timelines (matplotlib)."""
from .graph_state import GraphState, default_step, phase_step  # noqa: F401
from .graph_dot import GraphPicture, GraphvizNotFound, graph_picture, graph_source  # noqa: F401
from .live_graph import make_dot  # noqa: F401
