"""Run a script with recording on, streaming its events to ``OUT.part`` as they happen.

``python -m tui.record_worker SCRIPT OUT``: used by ``glassgrad run``. When the
script ends the whole trace is saved to OUT in the trace format.
"""
from __future__ import annotations

import json
import os
import runpy
import sys
import time


def command(script: str, out: str) -> tuple[list, dict]:
    """The worker's argv and environment: this checkout first on ``PYTHONPATH``, so the worker and the
    script's ``import engine`` resolve as in the parent, installed or not."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    return [sys.executable, "-m", "tui.record_worker", script, out], dict(os.environ, PYTHONPATH=path)


def main(argv=None) -> int:
    script, out = (argv if argv is not None else sys.argv[1:])[:2]
    import engine
    from engine import trace as trace_mod

    class StreamingTrace(trace_mod.Trace):
        def __init__(self, f, **meta):
            super().__init__(meta=meta)
            self._f = f
            self._last = time.monotonic()

        def _append(self, kind, fields):
            super()._append(kind, fields)
            self._f.write(json.dumps(self.events[-1]) + "\n")
            now = time.monotonic()
            if now - self._last > 0.05:
                self._f.flush()
                self._last = now

    part = out + ".part"
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    rc = 0
    with open(part, "w", encoding="utf-8") as f:
        f.write(json.dumps({"format": trace_mod.FORMAT, "version": trace_mod.VERSION}) + "\n")
        f.flush()
        tr = StreamingTrace(f, script=os.path.basename(script))
        sys.argv = [script]
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        try:
            with engine.record(tr):
                runpy.run_path(script, run_name="__main__")
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            import traceback

            traceback.print_exc()
            rc = 1
        finally:
            f.flush()
    tr.save(out)
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
