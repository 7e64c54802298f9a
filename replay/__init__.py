"""replay: the one model of a recorded trace. Traces are data; this package turns their
events into "the state at step i" once, and viz, tui and lessons only draw it.

- ``replay.model``: ``TraceModel``, per-event indices -> the graph shown at step i, node
  and saved-slot states, checkpoint regions and recomputes (NOTE [ One trace model ]).
- ``replay.graph``: ``graph_at(model, i)``, that graph as plain data, ready to draw.
- ``replay.memory``: live, peak and reserved bytes per category and device at step i
  (NOTE [ Memory replay ]).
- ``replay.words``: bytes, shapes and one line per event, one format everywhere.
- ``replay.records``: the checkpoint files a trace saved and loaded, their records and
  storages (NOTE [ Files in a trace ]).

It imports nothing from the engine but the trace format (``engine.trace``).
"""
from .graph import Graph, graph_at  # noqa: F401
from .model import TraceModel  # noqa: F401
