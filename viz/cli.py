"""``glassgrad render``: pictures of a saved trace without the app."""
from __future__ import annotations

import argparse
import os
import sys
import time

EXAMPLES = """\
examples:
  glassgrad render run.jsonl --graph graph.svg
      the autograd graph just before backward starts (every saved tensor still held)
  glassgrad render run.jsonl --graph mid.png --step 120
      the graph at event 120: executed nodes green, the running node amber, released tensors dashed
  glassgrad render run.jsonl --graph end.pdf --phase backward
      the graph at the end of the first backward pass
  glassgrad render run.jsonl --memory memory.png
      live memory over the trace, stacked by category, with the peak marked
  glassgrad render plain.jsonl --memory cmp.png --compare checkpointed.jsonl
      two traces' memory on one axis (for example without and with checkpointing)
  glassgrad render big.jsonl --graph all.svg --expand-modules
      draw every node, even inside repeated modules (collapsed into one box by default)
"""

GRAPH_FORMATS = ("svg", "png", "pdf", "dot", "gv")
MEMORY_FORMATS = ("png", "svg", "pdf")


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(2, f"glassgrad render: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="glassgrad render", formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Draw a recorded trace: the autograd graph (Graphviz) and the memory timeline "
                            "(matplotlib).", epilog=EXAMPLES)
    p.add_argument("trace", metavar="TRACE", help="a trace file written by trace.save() or `glassgrad run --out`")
    p.add_argument("--graph", metavar="OUT", help="write the autograd graph to OUT (.svg, .png, .pdf; .dot for text)")
    p.add_argument("--memory", metavar="OUT", help="write the memory timeline to OUT (.png, .svg, .pdf)")
    when = p.add_mutually_exclusive_group()
    when.add_argument("--step", type=int, metavar="N",
                      help="show the state after event N (default: just before the first backward); a negative N "
                           "counts from the end, as in Python: -1 is the last event, -5 the fifth from last")
    when.add_argument("--phase", choices=("forward", "backward", "recompute", "optimizer"),
                      help="show the state at the end of the first span of this phase")
    p.add_argument("--compare", metavar="OTHER_TRACE",
                   help="memory of TRACE and OTHER_TRACE: one panel each, on their aligned steps")
    p.add_argument("--expand-modules", action="store_true",
                   help="draw every node of repeated modules instead of one box per module instance")
    p.add_argument("--device", help="the device whose memory to draw (default: the one with the highest peak)")
    p.add_argument("--reserved", choices=("auto", "same", "panel", "off"), default="auto",
                   help="memory_reserved of the caching allocator model: a line on the memory chart (same), "
                        "a panel above it on its own scale (panel), or none (off); auto picks the panel when "
                        "reserved is over 4 times the live peak")
    p.add_argument("--time-budget", type=float, default=None, metavar="S",
                   help="seconds Graphviz may lay out the graph before glassgrad's quick layout draws it instead "
                        "(default: 10 s for small graphs, 4000/nodes s for large ones, at least 2)")
    p.add_argument("--perfetto", metavar="OUT", help="write the trace as Chrome trace-event JSON for ui.perfetto.dev")
    p.add_argument("--snapshot", metavar="OUT",
                   help="write PyTorch's memory snapshot pickle for pytorch.org/memory_viz (.pickle)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    return p


def _check_out(path: str, formats: tuple, what: str) -> str:
    fmt = os.path.splitext(path)[1].lstrip(".").lower()
    if fmt not in formats:
        raise ValueError(f"{what} {path!r}: unsupported file type {('.' + fmt) if fmt else '(no suffix)'}; "
                         f"use one of {', '.join('.' + f for f in formats)}")
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise ValueError(f"{what} {path!r}: the folder {d!r} does not exist")
    return fmt


def _load(path: str):
    from engine.trace import Trace
    if not os.path.exists(path):
        raise ValueError(f"trace file {path!r} does not exist")
    if os.path.isdir(path):
        raise ValueError(f"{path!r} is a folder, not a trace file")
    try:
        tr = Trace.load(path)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read trace {path!r}: {e}") from None
    return tr


def safe_text(s: str) -> str:
    """``s`` safe for a terminal (NOTE [ Text from a trace ] in engine/trace_text.py)."""
    from engine.trace_text import safe_text as safe
    return safe(s)


class _Progress:
    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.t0 = time.perf_counter()

    def __call__(self, msg: str):
        if not self.quiet:
            print(safe_text(f"[{time.perf_counter() - self.t0:5.1f}s] {msg}"), file=sys.stderr, flush=True)


def render_main(argv: list[str]) -> int:
    """Entry point of ``glassgrad render`` (and ``python -m viz``); returns the exit status."""
    p = build_parser()
    try:
        args = p.parse_args(argv)
        if not (args.graph or args.memory or args.perfetto or args.snapshot):
            p.error("nothing to draw: give --graph OUT, --memory OUT, --perfetto OUT and/or --snapshot OUT")
        if args.time_budget is not None and args.time_budget <= 0:
            p.error("--time-budget must be a positive number of seconds")
        if args.compare and not args.memory:
            p.error("--compare draws memory: give --memory OUT too")
    except SystemExit as e:  # --help, or a usage error argparse already printed
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    say = _Progress(args.quiet)
    try:
        if args.graph:
            gfmt = _check_out(args.graph, GRAPH_FORMATS, "--graph")
        if args.memory:
            _check_out(args.memory, MEMORY_FORMATS, "--memory")
        say(f"reading {args.trace}")
        tr = _load(args.trace)
        other = _load(args.compare) if args.compare else None
        n = len(tr.events)
        if n == 0:
            raise ValueError(f"the trace {args.trace!r} has no events: nothing to draw")
        say(f"{n} events")
        from replay.graph import default_step, phase_step
        if args.phase:
            step = phase_step(tr, args.phase)
        elif args.step is not None:
            if not -n <= args.step < n:
                raise ValueError(f"--step {args.step} is out of range: the trace has {n} events (0..{n - 1}, "
                                 f"or -{n}..-1 counting from the end)")
            step = args.step % n
        else:
            step = default_step(tr)
        if args.graph:
            from .graph_dot import graph_picture
            say(f"building the graph at step {step}")
            pic = graph_picture(tr, step, expand_modules=args.expand_modules)
            c = pic.state.counts()
            if gfmt not in ("dot", "gv"):
                say(f"laying out {c['nodes']} nodes with Graphviz (large graphs take a while)")
            pic.render(args.graph, time_budget=args.time_budget)
            if getattr(pic, "fallback", None):
                say(pic.fallback)
            say(f"wrote {args.graph}")
        if args.perfetto:
            from .perfetto import write_perfetto
            say(f"wrote {args.perfetto} ({write_perfetto(tr, args.perfetto):,} trace events; open it at ui.perfetto.dev)")
        if args.snapshot:
            from .snapshot_export import write_snapshot
            say(f"wrote {args.snapshot} ({write_snapshot(tr, args.snapshot):,} allocator entries; "
                "open it at pytorch.org/memory_viz)")
        if args.memory:
            say("replaying memory")
            from . import memory_plot
            if other is not None:
                labels = (os.path.basename(args.trace), os.path.basename(args.compare))
                fig = memory_plot.compare_figure(tr, other, labels, device=args.device, reserved=args.reserved)
            else:
                fig = memory_plot.memory_figure(tr, step=step if (args.step is not None or args.phase) else None,
                                                device=args.device, reserved=args.reserved)
            memory_plot.save_figure(fig, args.memory)
            say(f"wrote {args.memory}")
    except (ValueError, FileNotFoundError, IndexError) as e:
        print(safe_text(f"glassgrad render: error: {e}"), file=sys.stderr)
        return 2
    except RuntimeError as e:  # Graphviz missing or failing
        print(safe_text(f"glassgrad render: error: {e}"), file=sys.stderr)
        return 1
    return 0


def main() -> None:
    sys.exit(render_main(sys.argv[1:]))
