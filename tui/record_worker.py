"""Run a script with recording on, streaming its events to ``OUT.part`` as they happen.

``python -m tui.record_worker SCRIPT OUT``: used by ``glassgrad run``. When the
script ends the whole trace is saved to OUT in the trace format. Inside the script
``import torch`` is glassgrad (NOTE [ import torch inside glassgrad run ] in tui/torch_alias.py).

NOTE [ The learner's traceback ]
A script that raises gets a traceback of its own frames only: frames in glassgrad's
packages (engine/, replay/, tui/, viz/, lessons/) and the runner's (runpy) are left
out, so nothing of glassgrad's sits between the learner's lines. The exception's type
and message are kept as raised. ``GLASSGRAD_FULL_TRACEBACK=1`` (or ``glassgrad run
--full-traceback``) keeps every frame, for debugging glassgrad itself. The error
(file, line, source line, type, message) is also written to ``OUT.error.json`` for the
app. A script that does not compile never starts: its syntax error is reported the same
way and no trace (not even an empty one) is written.
"""
from __future__ import annotations

import json
import os
import runpy
import sys
import time
import traceback


def command(script: str, out: str) -> tuple[list, dict]:
    """The worker's argv and environment: this checkout first on ``PYTHONPATH``, so the worker and the
    script's ``import engine`` resolve as in the parent, installed or not."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    return [sys.executable, "-m", "tui.record_worker", script, out], dict(os.environ, PYTHONPATH=path)


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_OURS = tuple(os.path.join(ROOT, d) + os.sep for d in ("engine", "replay", "tui", "viz", "lessons"))


def full_traceback() -> bool:
    return os.environ.get("GLASSGRAD_FULL_TRACEBACK", "").lower() in ("1", "true", "yes")


def _ours(filename: str) -> bool:
    """A frame of glassgrad's or of the runner's (NOTE [ The learner's traceback ])."""
    f = os.path.abspath(filename) if not filename.startswith("<") else filename
    return f.startswith(_OURS) or "runpy" in os.path.basename(filename)


def learner_traceback(exc: BaseException, full: bool = False) -> traceback.TracebackException:
    te = traceback.TracebackException.from_exception(exc)
    if not full:
        seen, todo = set(), [te]
        while todo:
            t = todo.pop()
            if t is None or id(t) in seen:
                continue
            seen.add(id(t))
            t.stack = traceback.StackSummary.from_list([f for f in t.stack if not _ours(f.filename)])
            todo += [t.__cause__, t.__context__]
    return te


def error_info(exc: BaseException, script: str) -> dict:
    """Where the learner's code failed: the innermost frame in the script's folder (else any of the
    learner's frames, else the script), with the source line; a SyntaxError's own file and line."""
    import traceback

    info = {"type": type(exc).__name__, "message": str(exc), "file": script, "line": None, "source": ""}
    if isinstance(exc, SyntaxError):
        info.update(message=exc.msg, file=exc.filename or script, line=exc.lineno,
                    source=(exc.text or "").rstrip("\n"), offset=exc.offset)
        return info
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not _ours(f.filename)]
    home = os.path.dirname(os.path.abspath(script)) + os.sep
    mine = [f for f in frames if os.path.abspath(f.filename).startswith(home)] or frames
    if mine:
        f = mine[-1]
        info.update(file=f.filename, line=f.lineno, source=(f.line or "").strip())
    return info


def _report(exc: BaseException, script: str, out: str) -> None:
    te = learner_traceback(exc, full_traceback())
    sys.stderr.write("".join(te.format()))
    sys.stderr.flush()
    try:
        with open(out + ".error.json", "w", encoding="utf-8") as f:
            json.dump(error_info(exc, script), f)
    except OSError:
        pass


def main(argv=None) -> int:
    script, out = (argv if argv is not None else sys.argv[1:])[:2]
    try:
        os.remove(out + ".error.json")
    except OSError:
        pass
    try:
        with open(script, "rb") as f:
            compile(f.read(), script, "exec")
    except SyntaxError as exc:    # never started: no trace at all
        _report(exc, script, out)
        return 1
    import engine
    from engine import trace as trace_mod

    from .torch_alias import torch_alias

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
            with torch_alias(), engine.record(tr):
                runpy.run_path(script, run_name="__main__")
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BrokenPipeError:   # glassgrad run x.py | head: the reader left; end quietly
            _quiet_stdout()
        except BaseException as exc:   # noqa: BLE001 - whatever the script raises is reported, the trace kept
            _report(exc, script, out)
            rc = 1
        finally:
            f.flush()
    tr.save(out)
    return rc


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush raises no BrokenPipeError."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    raise SystemExit(main())
