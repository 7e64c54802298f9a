"""The ``glassgrad`` command.

Without a terminal (stdout not a TTY, or CI=true) the commands print text and
write pictures instead of starting the app.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

OUT_DIR = "glassgrad-out"


def interactive() -> bool:
    """True when the app can run: stdout is a terminal and this is not CI."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        return False
    try:
        return sys.stdout.isatty() and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="glassgrad",
        description="A glass-box autograd engine: guided lessons and a terminal app that replays recorded "
                    "traces. With no command: the home screen (lessons and recent traces).",
        epilog="Start with: glassgrad lesson 1")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("lesson", help="a guided lesson in the app (plain text without a terminal)",
                       description="Run lesson N (a number or a name such as first_graph).")
    s.add_argument("name", metavar="N|NAME")
    s.add_argument("--text", action="store_true", help="print the lesson as text instead of starting the app")
    s.add_argument("--out", default=None, help=f"folder for the trace and pictures (default: {OUT_DIR}/lesson_NN_slug)")

    sub.add_parser("lessons", help="list the lessons", description="List the lessons, one a line.")

    s = sub.add_parser("run", help="run a script with recording on and watch its events arrive",
                       description="Run SCRIPT.py with recording on (in a separate process) and show the events "
                                   "as they arrive. --out keeps the trace. Inside the script `import torch` is "
                                   "glassgrad, even where PyTorch is installed (docs/your-own-program.md).")
    s.add_argument("script", metavar="SCRIPT.py")
    s.add_argument("--out", default=None, metavar="TRACE", help="save the trace here (JSON Lines)")
    s.add_argument("--text", action="store_true", help="print a summary instead of starting the app")
    s.add_argument("--full-traceback", action="store_true",
                   help="keep glassgrad's own frames in a failing script's traceback (for debugging glassgrad; "
                        "same as GLASSGRAD_FULL_TRACEBACK=1)")

    s = sub.add_parser("view", help="replay a saved trace", description="Open a saved trace (JSON Lines).")
    s.add_argument("trace", metavar="TRACE")
    s.add_argument("--text", action="store_true", help="print a summary instead of starting the app")

    s = sub.add_parser("diff", help="compare two traces: peaks, categories, graph nodes",
                       description="Compare two traces of (usually) the same model: both peaks, the per-category "
                                   "difference at them, nodes only in one run, saves that differ.")
    s.add_argument("a", metavar="A.jsonl")
    s.add_argument("b", metavar="B.jsonl")
    s.add_argument("--png", default=None, metavar="OUT", help="also draw both runs' memory, one panel each, stacked by category")
    s.add_argument("--text", action="store_true", help="print the comparison instead of starting the app")

    s = sub.add_parser("plan", help="the checkpointing planner's trade-off curve for a script's chain",
                       add_help=False, description="See glassgrad plan --help.")
    s.add_argument("rest", nargs=argparse.REMAINDER)

    s = sub.add_parser("render", help="pictures without the app (graph, memory timeline)", add_help=False,
                       description="Draw pictures of a trace; see glassgrad render --help.")
    s.add_argument("rest", nargs=argparse.REMAINDER)
    return p


def main(argv=None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:   # glassgrad ... | head: the reader left; end quietly
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0


def _main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["render"]:
        return cmd_render(argv[1:])
    if argv[:1] == ["plan"]:
        return cmd_plan(argv[1:])
    a = _parser().parse_args(argv)
    if a.command is None:
        return cmd_home()
    if a.command == "lessons":
        return cmd_lessons()
    if a.command == "lesson":
        return cmd_lesson(a.name, a.text or not interactive(), a.out)
    if a.command == "run":
        if not a.full_traceback:
            return cmd_run(a.script, a.out, a.text or not interactive())
        was = os.environ.get("GLASSGRAD_FULL_TRACEBACK")
        os.environ["GLASSGRAD_FULL_TRACEBACK"] = "1"      # the worker inherits it
        try:
            return cmd_run(a.script, a.out, a.text or not interactive())
        finally:            # a caller's later runs are as it set them (main() is called by tests too)
            if was is None:
                del os.environ["GLASSGRAD_FULL_TRACEBACK"]
            else:
                os.environ["GLASSGRAD_FULL_TRACEBACK"] = was
    if a.command == "view":
        return cmd_view(a.trace, a.text or not interactive())
    if a.command == "diff":
        return cmd_diff(a.a, a.b, a.png, a.text or not interactive())
    return 2


def cmd_diff(path_a: str, path_b: str, png: str | None, text: bool = True) -> int:
    """``glassgrad diff``: NOTE [ Two runs ] in replay/diff.py, in the app (tui/diff_screen.py) or as
    text; ``png`` also draws both runs' memory (``memory_plot.compare_figure``)."""
    from engine.trace import safe_text
    from replay.diff import diff, summary
    ta, tb = _load(path_a, index=True), _load(path_b, index=True)      # through their indexes
    if ta is None or tb is None:
        return 2
    names = (os.path.basename(path_a), os.path.basename(path_b))
    d = diff(ta, tb)
    if png:
        from viz import memory_plot
        memory_plot.save_figure(memory_plot.compare_figure(ta, tb, names), png)
    if not text:
        from .app import GlassgradApp
        from .diff_screen import DiffScreen

        GlassgradApp("screen", first_screen=DiffScreen(d, names)).run()
        return 0
    for line in summary(d, *names):
        print(safe_text(line))
    if png:
        print(f"both runs' memory: {png}")
    return 0


def cmd_plan(argv: list) -> int:
    """``glassgrad plan``: NOTE [ The planner, visible ] in viz/plan.py, in the app (tui/plan_screen.py)
    or as text with a PNG (``--text``, or no terminal)."""
    from viz import plan

    a = plan.parser().parse_args(argv)
    if a.text or not interactive():
        return plan.main(argv)
    pl = plan.prepare(a)
    if pl is None:
        return 2
    if a.png:
        print(plan.write_png(pl, a.png))
    from .app import GlassgradApp
    from .plan_screen import PlanScreen

    GlassgradApp("screen", first_screen=PlanScreen(pl, budget=a.budget)).run()
    return 0


# ---------------------------------------------------------------- commands


def cmd_home() -> int:
    if interactive():
        from .app import GlassgradApp

        GlassgradApp("home", freeze=True).run()
        return 0
    cmd_lessons()
    print("\nNo terminal here, so the app does not start; lesson 1 as text:\n")
    return cmd_lesson("1", True, None)


def cmd_lessons() -> int:
    import lessons

    for L in lessons.all_lessons():
        print(f"{L.number:>2}  {L.slug:<22} {L.title} — {L.summary}")
    for name, err in lessons.broken().items():
        print(f" !  {name}: cannot load ({err})")
    print("\nglassgrad lesson N (or NAME) opens one; as a plain script: python -m lessons.MODULE, with MODULE "
          "lesson_NN_NAME (e.g. python -m lessons.lesson_01_first_graph).")
    return 0


def _get_lesson(name):
    import lessons

    try:
        return lessons.get(name)
    except KeyError as exc:
        print(f"glassgrad: {exc.args[0]}", file=sys.stderr)
        return None


def cmd_lesson(name: str, text: bool, out: str | None) -> int:
    lesson = _get_lesson(name)
    if lesson is None:
        return 2
    if text:
        from lessons._runner import print_lesson

        return print_lesson(lesson, out or os.path.join(OUT_DIR, f"lesson_{lesson.name}"))
    from lessons import _runner

    from .app import GlassgradApp

    GlassgradApp("lesson", lesson_run=_runner.run(lesson)).run()
    return 0


def _load(path: str, index: bool = False):
    """The trace at ``path`` (through its index when ``index``: NOTE [ Trace index ]), or None after
    saying why not."""
    from engine.trace import Trace, safe_text

    if not os.path.isfile(path):
        print(f"glassgrad: no such trace file: {path}", file=sys.stderr)
        return None
    try:
        if not index:
            return Trace.load(path)
        progress = _Progress(path)
        tr = Trace.open(path, progress=progress)
        tr.first_open = progress.started
        for note in tr.notes:
            print(safe_text(f"glassgrad: {note}"), file=sys.stderr)
        return tr
    except Exception as exc:  # a bad file: say what and where, no traceback
        msg = str(exc)
        print(safe_text(f"glassgrad: {msg}" if path in msg else f"glassgrad: cannot read trace {path}: {msg}"),
              file=sys.stderr)
    return None


class _Progress:
    """Feedback on a big trace's first open (its index is built once, then cached): a percentage
    on stderr, rewritten in place, for files of 8 MiB and more."""

    def __init__(self, path: str):
        self.name, self.shown, self.started = os.path.basename(path), -1, False

    def __call__(self, done: int, size: int) -> None:
        if size < 8 << 20:
            return
        pct = 100 * done // max(1, size)
        if pct != self.shown:
            self.shown, self.started = pct, True
            end = "\n" if done >= size else ""
            print(f"\rglassgrad: first open of {self.name} ({size / 2**20:.0f} MiB): indexing it once, "
                  f"later opens read the index: {pct}%", end=end, file=sys.stderr, flush=True)


def _first_open(path: str) -> int:
    from engine.trace import TraceFormatError, safe_text
    from engine.trace_head import read_head

    from . import recent
    from .app import GlassgradApp

    try:
        read_head(path)
    except TraceFormatError as exc:
        print(safe_text(f"glassgrad: {exc}"), file=sys.stderr)
        return 2
    recent.remember(path)
    GlassgradApp("first_open", trace=path, title=os.path.basename(path), freeze=True).run()
    return 0


def summary(trace, name: str) -> str:
    import numpy as np

    from replay.model import TraceModel
    from replay.words import nbytes

    m = TraceModel.from_trace(trace)
    kinds: dict = {}
    idx = getattr(trace, "index", None)
    if idx is not None:             # an opened trace: its kind column (NOTE [ Trace index ])
        for code, count in enumerate(np.bincount(idx.kind, minlength=len(idx.kinds)).tolist()):
            if count:
                kinds[idx.kinds[code]] = count
    else:
        for e in m.events:
            kinds[e.get("kind")] = kinds.get(e.get("kind"), 0) + 1
    lines = [f"{name}: {len(m)} events, {len(m.nodes)} graph nodes",
             f"peak live memory: {nbytes(m.memory.peak_bytes)} after event #{m.memory.peak_index}",
             "events by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]))]
    from replay.segments import pool_at_peak
    pool = pool_at_peak(m)          # a GPU run: CuPy's real pool at the peak (NOTE [ Segments at an event ] 5)
    if pool:
        lines.insert(2, pool)
    if len(m):
        live = m.memory.live_at(len(m) - 1)
        lines.append("live at the end: " + (", ".join(f"{c} {nbytes(b)}" for c, b in live.items() if b)
                                             or "nothing"))
    return "\n".join(lines)


def cmd_view(path: str, text: bool) -> int:
    from .gcpause import paused_gc

    if not text and os.path.isfile(path):
        from . import first_open

        if first_open.wanted(path):       # a big trace's first open: the app reads it (NOTE [ A first open ])
            return _first_open(path)

    with paused_gc(freeze=not text):   # NOTE [ GC while loading ]
        tr = _load(path, index=True)       # through its index: a big trace's text summary too
        if tr is not None and not text:
            from engine.trace import safe_text
            from replay.model import TraceModel

            told = len(tr.notes)
            if getattr(tr, "first_open", False):
                print(f"glassgrad: replaying its {len(tr):,} events once...", file=sys.stderr, flush=True)
            TraceModel.from_trace(tr)      # its model too, so the frozen heap holds it (rule 2)
            for note in tr.notes[told:]:
                print(safe_text(f"glassgrad: {note}"), file=sys.stderr)
    if tr is None:
        return 2
    from . import recent

    recent.remember(path)
    if text:
        from engine.trace import safe_text
        print(safe_text(summary(tr, os.path.basename(path))))   # NOTE [ Text from a trace ] rule 4
        return 0
    from .app import GlassgradApp

    GlassgradApp("trace", trace=tr, title=os.path.basename(path), freeze=True).run()
    return 0


def cmd_run(script: str, out: str | None, text: bool) -> int:
    if not os.path.isfile(script):
        print(f"glassgrad: no such script: {script}", file=sys.stderr)
        return 2
    if not text:
        from .app import GlassgradApp

        app = GlassgradApp("run", script=script, out=out, freeze=True)
        app.run()
        if out:
            print(f"trace saved to {out}")
        return 0
    path = out or os.path.join(tempfile.mkdtemp(prefix="glassgrad-"), "run.jsonl")
    from .record_worker import command
    argv, env = command(script, path)
    proc = subprocess.run(argv, env=env)
    for extra in (".part", ".error.json"):
        try:
            os.remove(path + extra)
        except OSError:
            pass
    tr = _load(path) if os.path.exists(path) else None
    if tr is not None:
        print(summary(tr, os.path.basename(script)))
        if out:
            print(f"trace saved to {out} (open it with: glassgrad view {out})")
    if proc.returncode != 0:
        never = "" if tr is not None else " before it started; no trace was written"
        print(f"glassgrad: {script} exited with status {proc.returncode}{never}", file=sys.stderr)
    return proc.returncode


def cmd_render(argv: list) -> int:
    from viz.cli import render_main

    return render_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
