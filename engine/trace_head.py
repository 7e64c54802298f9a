"""What a trace file's header line and its saved index say, read without reading the trace.

A big trace's first open (NOTE [ A first open ] in tui/first_open.py) needs both before it
starts: the header's ``meta`` for its model, and whether an index already names the file
(NOTE [ Trace index ] rule 3 in engine/trace_index.py).
"""
from __future__ import annotations

import json
import os

import numpy as np

from . import trace_lines as _trace
from .trace_index import fingerprint, looks_like_npz, read_header, sidecar_paths
from .trace_text import safe_text


def read_head(path) -> tuple:
    """(meta, created) of the trace at ``path``, its header line checked as a build checks it;
    TraceFormatError when it is not a trace this glassgrad reads."""
    where = safe_text(str(path))

    def fail(line, msg):
        raise _trace.TraceFormatError(f"{where}: line {line}: {msg}")

    try:
        with _trace.open_regular(path) as f:
            first = f.readline()
    except OSError as e:
        raise _trace.TraceFormatError(f"{where}: cannot read trace: {e.strerror or e}") from None
    return read_header(first, where, fail)[1:]


def has_index(path) -> bool:
    """Whether a saved index names the trace at ``path`` as it is now (NOTE [ Trace index ] rule 3),
    judged by the index's header alone: opening still checks its arrays (rule 4)."""
    try:
        with _trace.open_regular(path) as f:
            st = os.fstat(f.fileno())
            mark = fingerprint(f, st.st_size, st.st_mtime_ns)
    except (OSError, _trace.TraceFormatError):
        return False
    for p in sidecar_paths(path):
        if looks_like_npz(p):
            try:
                with np.load(p, allow_pickle=False) as z:
                    if json.loads(z["header"].tobytes().decode("utf-8")).get("mark") == mark:
                        return True
            except Exception:  # noqa: BLE001, S112 - unreadable: no index (opening rebuilds it, rule 4)
                continue
    return False
