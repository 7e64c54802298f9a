"""``glassgrad plan script.py``: the checkpointing planner's trade-off curve, as text and a PNG.

NOTE [ The planner, visible ]
1. The script is run as ``__main__`` would run it (it is the user's own program); it must
   leave a chain in a variable (``--model``, default ``model``: an ``nn.Sequential`` or a
   list of layers) and a sample input (``--input``, default ``example_input``).
2. The planner measures the chain once (NOTE [ Checkpoint plan cost model ] in
   engine/utils/planner.py) and gives the Pareto curve of peak bytes against recompute cost.
3. Marked beside the curve, each evaluated by the same cost model: "none" (nothing
   checkpointed: the plain run), "every layer" (each layer its own segment), and
   "sqrt(n) segments" (``checkpoint_sequential`` with round(sqrt(n)) segments, Chen et al.).
4. ``--budget BYTES`` prints the cheapest plan within the budget: which layers it checkpoints,
   its predicted peak and its extra forward cost, beside the sqrt(n) plan's figures.
5. The PNG puts peak bytes on x and extra forward (percent of one forward) on y.
6. "this run": the plan the script's own step follows, when it says so (``--segments``: a
   number of ``checkpoint_sequential`` segments, or half-open layer ranges ``0:3,5:8``);
   without it the script runs the chain plainly and "this run" is the "none" point.
7. ``Planned.choose(budget)``: the cheapest plan on the curve whose peak fits the budget,
   ``plan_from_stats``'s choice without solving again. The app's budget cursor steps over the
   curve's peaks; at the k-th the plan chosen is the k-th point itself (each curve point is
   Pareto-optimal). The app's chart and its marks are drawn by tui/plan_chart.py.
"""
from __future__ import annotations

import argparse
import math
import os
import runpy
import sys
from dataclasses import dataclass, field

from replay.words import nbytes


@dataclass
class Planned:
    """A script's chain, measured: its layers' figures, the curve and the marked plans."""
    script: str
    stats: list
    forward: float                          # one forward's cost (FLOPs)
    curve: list                             # [(peak bytes, extra cost, segments)], highest peak first
    marks: dict                             # {name: (peak, cost, segments)} (rules 3 and 6)
    names: list = field(default_factory=list)   # one label per layer

    def pct(self, cost) -> float:
        return 100 * cost / self.forward if self.forward else 0.0

    def choose(self, budget: int) -> tuple:
        """Rule 7: (peak, extra cost, segments) of the cheapest plan on the curve within ``budget``
        (``plan_from_stats``'s choice, without solving again); None when none fits."""
        fits = [pt for pt in self.curve if pt[0] <= budget]
        return min(fits, key=lambda pt: (pt[1], pt[0])) if fits else None

    def label(self, name: str) -> str:
        """Rule 6: without --segments the plain run is this run."""
        return "none (this run)" if name == "none" and "this run" not in self.marks else name


def checkpointed(segments) -> set:
    """The layers a plan checkpoints."""
    return {t for a, b in segments for t in range(a, b)}


def parse_segments(text: str, n: int) -> list:
    """Rule 6: "3" -> checkpoint_sequential's 3 segments; "0:3,5:8" -> [(0, 3), (5, 8)]."""
    from engine.utils.planner import sequential_plan
    text = text.strip()
    if text.isdigit():
        return sequential_plan(n, max(1, int(text)))
    out = []
    for part in filter(None, text.split(",")):
        a, _, b = part.partition(":")
        out.append((int(a), int(b)))
    return out


def layer_names(layers, stats) -> list:
    """Short labels: the layer's repr when it is one short line ("Tanh()"), else its class with the
    numbers of its ``extra_repr`` ("Linear(16, 16)"), else its class."""
    import re
    out = []
    for layer, s in zip(layers, stats):
        r = repr(layer)
        if "\n" in r or len(r) > 20:
            extra = layer.extra_repr() if hasattr(layer, "extra_repr") else ""
            nums = re.findall(r"(?<![\w.])(\d+)(?![\w.])", extra)[:3]
            r = f"{s.name}({', '.join(nums)})" if nums else s.name
        out.append(r)
    return out


def load(script: str, model: str = "model", sample: str = "example_input", segments: str | None = None) -> Planned:
    """Run ``script``, measure its chain, and build the curve and the marks (rules 1-3, 6).
    Raises LookupError naming the variables it lacks."""
    from engine.utils.planner import evaluate, layers_of, measure, tradeoff
    g = runpy.run_path(script, run_name="__glassgrad_plan__")
    missing = [v for v in (model, sample) if v not in g]
    if missing:
        raise LookupError(f"{script} defines no {' and no '.join(missing)} (name them with --model/--input)")
    stats = measure(g[model], g[sample])
    mk = marks(stats)
    if segments:
        segs = parse_segments(segments, len(stats))
        mk["this run"] = (*evaluate(stats, segs), segs)
    return Planned(script, stats, sum(s.cost for s in stats), tradeoff(stats), mk,
                   layer_names(layers_of(g[model]), stats))


def marks(stats) -> dict:
    """Rule 3: {name: (peak bytes, extra cost, segments)}."""
    from engine.utils.planner import evaluate, sequential_plan
    n = len(stats)
    out = {"none": [], "every layer": [(i, i + 1) for i in range(n)]}
    k = max(1, round(math.sqrt(n)))
    if n >= 2 and k >= 2:
        out[f"sqrt(n): {k} segments"] = sequential_plan(n, k)
    return {name: (*evaluate(stats, segs), segs) for name, segs in out.items()}


def curve_lines(curve, forward_cost, mk) -> list:
    lines = [f"{'peak':>12}  {'extra forward':>13}  checkpointed segments (layers [start:end))"]
    for peak, cost, segs in curve:
        pct = 100 * cost / forward_cost if forward_cost else 0.0
        lines.append(f"{nbytes(peak):>12}  {pct:12.1f}%  {', '.join(f'[{a}:{b}]' for a, b in segs) or 'none'}")
    lines.append("")
    for name, (peak, cost, _) in mk.items():
        name = "none (this run)" if name == "none" and "this run" not in mk else name
        pct = 100 * cost / forward_cost if forward_cost else 0.0
        lines.append(f"{name:<22} peak {nbytes(peak):>10}, extra forward {pct:.1f}%")
    return lines


def draw(curve, forward_cost, mk, path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    pts = sorted(curve, key=lambda pt: pt[0])            # by peak: the cheapest plan within a budget holds
    xs = [p / 1024 for p, _, _ in pts]                   # from its peak up to the next point's
    ys = [100 * c / forward_cost if forward_cost else 0 for _, c, _ in pts]
    ax.step(xs, ys, where="post", color="#4c72b0", label="optimal plans (Pareto front)")
    ax.plot(xs, ys, "o", color="#4c72b0", ms=3)
    styles = {"none": ("s", "#55a868"), "every layer": ("^", "#c44e52"), "this run": ("*", "#dd8452")}
    for name, (peak, cost, _) in mk.items():
        m, c = styles.get(name, ("D", "#8172b2"))
        ax.plot([peak / 1024], [100 * cost / forward_cost if forward_cost else 0], m, color=c, ms=8, label=name)
    ax.set_xlabel("predicted peak (KiB above the step's start)")
    ax.set_ylabel("extra forward (% of one forward)")
    ax.set_title("Checkpointing: memory against recompute")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="glassgrad plan", description="The checkpointing planner's trade-off "
                                "curve for a chain of layers defined by a script (NOTE [ The planner, visible ]). "
                                "In a terminal it opens in the app; --text prints it.")
    p.add_argument("script", help="a Python file that leaves the chain and a sample input in variables")
    p.add_argument("--model", default="model", help="the chain's variable (default: %(default)s)")
    p.add_argument("--input", default="example_input", help="the sample input's variable (default: %(default)s)")
    p.add_argument("--budget", type=int, default=None, help="bytes: print the cheapest plan within this budget "
                   "(in the app: start the cursor there)")
    p.add_argument("--segments", default=None, metavar="N|A:B,...",
                   help="the plan the script's own run follows, marked 'this run': a number of "
                        "checkpoint_sequential segments or layer ranges such as 0:3,5:8")
    p.add_argument("--png", default=None, help="where to write the curve (default: <script>-plan.png; "
                   "in the app only when given)")
    p.add_argument("--text", action="store_true", help="print the curve instead of starting the app")
    return p


def prepare(a) -> Planned | None:
    """The measured chain for parsed arguments ``a``, or None after saying why not."""
    if not os.path.isfile(a.script):
        print(f"glassgrad plan: no such file: {a.script}", file=sys.stderr)
        return None
    print(f"measuring {a.script}: {a.model} on {a.input} ...", file=sys.stderr, flush=True)
    try:
        return load(a.script, a.model, a.input, a.segments)
    except LookupError as err:
        print(f"glassgrad plan: {err.args[0]}", file=sys.stderr)
    except ValueError as err:
        print(f"glassgrad plan: {err}", file=sys.stderr)
    return None


def write_png(pl: Planned, path: str) -> str:
    try:
        draw(pl.curve, pl.forward, pl.marks, path)
        return f"curve: {path}"
    except ImportError:
        return "curve: not drawn (matplotlib is not installed)"


def main(argv=None, pl: Planned | None = None) -> int:
    """``glassgrad plan --text``: the curve, the marks, a budget's plan, and the PNG."""
    a = parser().parse_args(argv)
    pl = pl or prepare(a)
    if pl is None:
        return 2
    from engine.utils.planner import plan_from_stats
    print(f"{len(pl.stats)} layers; one forward costs {pl.forward:,.0f} FLOPs")
    print("\n".join(curve_lines(pl.curve, pl.forward, pl.marks)))
    if a.budget is not None:
        try:
            best = plan_from_stats(pl.stats, a.budget)
        except ValueError as err:
            print(f"\n{err}")
            return 1
        print(f"\nwithin {nbytes(a.budget)}: {best.describe()}")
    print("\n" + write_png(pl, a.png or os.path.splitext(a.script)[0] + "-plan.png"))
    return 0
