"""``python -m bench._mlp_ratio REPS``: the MLP step, glassgrad and NumPy, as JSON (for a rerun
under other process settings, e.g. the host allocator tuning turned off)."""
from __future__ import annotations

import json
import sys

from ._timing import interleaved
from .mlp import build

if __name__ == "__main__":
    step, npstep, _ = build()
    t = interleaved({"glassgrad": step, "numpy": npstep}, reps=int(sys.argv[1]), warmup=2)
    print(json.dumps(t))
